/**
 * Evaluation of a {@link GemmJob} over 128×128 output tiles: per tile the A rows and B columns are decoded once
 * into values and MMA-Sim exponents (typed arrays, decode tables precomputed per format), then every element goes
 * through the kernel model's element function. Each element is computed independently of every other, so the bits
 * never depend on which tiles are evaluated, in which order, or by which Worker.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { selectTiles } from "./engine.ts";
 * const p = { K: 1, aOff: new Int32Array(300), bOff: new Int32Array(200), sfaOff: null, sfbOff: null,
 *   dRow: new Int32Array(300), dCol: new Int32Array(200), group: 0 };
 * assert.equal(selectTiles([p]).length, 3 * 2);
 * assert.equal(selectTiles([p], { fraction: 0.01 }).length, 3); // the covering diagonal
 * ```
 * @module
 */
import { makeElement, makeEpilogue } from "../kernel_models/element.ts";
import { exactTile, exactTileApplies } from "../kernel_models/exact_tile.ts";
import { sm90Fp8Tile, sm90Fp8TileApplies, TileScratch } from "../kernel_models/sm90_fp8_tile.ts";
import type { SampleOptions } from "../kernel_models/kernel_models.ts";
import { Prng } from "../random/prng.ts";
import { mmaExponent, type OperandFormat, operandTable } from "../tensor_core/operand_tables.ts";
import type { GemmJob, GemmProblem } from "./job.ts";

/** Decode buffers of the specialised kernel, kept for the life of the thread (grown to the largest tile seen). */
const SCRATCH = new TileScratch();

/** Output tile edge used for evaluation and sampling (DeepGEMM's BLOCK_M = BLOCK_N = 128 granularity). */
export const TILE = 128;

/** One output tile: problem index, tile row, tile column. */
export type Tile = readonly [number, number, number];

/**
 * The tiles to evaluate: all of them, or a deterministic sample. A sample takes, per problem, the diagonal
 * `(t mod TM, t mod TN)` for `t < max(TM, TN)` (so every M block and N block of every group is touched) plus
 * seeded extra tiles up to `ceil(fraction · TM · TN)`.
 * @param problems the job's problems
 * @param sample sampling options (none: every tile)
 * @returns tiles in ascending (problem, row, column) order
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import type { GemmProblem } from "./job.ts";
 * import { selectTiles } from "./engine.ts";
 * const p: GemmProblem = {
 *   K: 128, aOff: new Int32Array(300), bOff: new Int32Array(130), sfaOff: null, sfbOff: null,
 *   dRow: new Int32Array(300), dCol: new Int32Array(130), group: 0,
 * };
 * assert.equal(selectTiles([p]).length, 6); // 3 tile rows × 2 tile columns
 * assert.deepEqual(selectTiles([p], { fraction: 0.01 }), [[0, 0, 0], [0, 1, 1], [0, 2, 0]]); // the diagonal
 * ```
 */
export function selectTiles(problems: readonly GemmProblem[], sample?: SampleOptions): Tile[] {
  const tiles: Tile[] = [];
  if (sample !== undefined) {
    if (!(sample.fraction > 0 && sample.fraction <= 1)) {
      throw new RangeError(`Sample fraction must be in (0, 1], got ${sample.fraction}`);
    }
  }
  problems.forEach((p, pi) => {
    const TM = Math.ceil(p.aOff.length / TILE), TN = Math.ceil(p.bOff.length / TILE);
    if (TM === 0 || TN === 0) return;
    if (sample === undefined) {
      for (let i = 0; i < TM; i++) for (let j = 0; j < TN; j++) tiles.push([pi, i, j]);
      return;
    }
    const want = Math.min(TM * TN, Math.max(Math.ceil(sample.fraction * TM * TN), Math.max(TM, TN)));
    const chosen = new Set<number>();
    for (let t = 0; t < Math.max(TM, TN); t++) chosen.add((t % TM) * TN + (t % TN));
    const rng = new Prng(((sample.seed ?? 0) * 1000003 + pi) >>> 0);
    while (chosen.size < want) chosen.add(rng.int(TM * TN));
    for (const id of [...chosen].sort((x, y) => x - y)) tiles.push([pi, Math.floor(id / TN), id % TN]);
  });
  return tiles;
}

/** Results of evaluating tiles: D storage indices and the output values (numbers exact in the output type). */
export interface TileResults {
  /** D storage index of each value. */
  index: Int32Array;
  /** The values. */
  value: Float64Array;
}

function decodeRows(
  codes: ArrayLike<number>,
  offs: Int32Array,
  r0: number,
  r1: number,
  K: number,
  format: string,
): { v: Float64Array; e: Int32Array; off: Int32Array } {
  const t = operandTable(format as OperandFormat);
  const n = r1 - r0;
  const v = new Float64Array(n * K), e = new Int32Array(n * K), off = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    const src = offs[r0 + i];
    off[i] = i * K;
    if (src < 0) continue;
    const o = i * K;
    for (let k = 0; k < K; k++) {
      const c = codes[src + k];
      v[o + k] = t.values[c];
      e[o + k] = t.exps[c];
    }
  }
  return { v, e, off };
}

function scaleExps(s: Float64Array | null): Int32Array | null {
  if (s === null) return null;
  const e = new Int32Array(s.length);
  for (let i = 0; i < s.length; i++) e[i] = Number.isFinite(s[i]) ? mmaExponent(s[i], -127) : 0;
  return e;
}

/**
 * Evaluates the given tiles of a job.
 * @param job the job
 * @param tiles tiles from {@link selectTiles}
 * @returns D storage indices and values, in tile order
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Tensor } from "../tensor/tensor.ts";
 * import { planNormal } from "./normal_gemm.ts";
 * import { evaluateTiles, selectTiles } from "./engine.ts";
 * // [1, 2]·[3, 1]ᵀ in bf16: one element, 1·3 + 2·1 = 5.
 * const A = Tensor.from("bf16", [1, 2], new Uint16Array([0x3f80, 0x4000]));
 * const B = Tensor.from("bf16", [1, 2], new Uint16Array([0x4040, 0x3f80]));
 * const { job } = planNormal({
 *   op: "demo", A, B, sfa: null, sfb: null, c: null, d: null, scalars: {}, options: {}, kind: "bf16",
 * });
 * const res = evaluateTiles(job!, selectTiles(job!.problems));
 * assert.deepEqual([...res.value], [5]);
 * ```
 */
export function evaluateTiles(job: GemmJob, tiles: readonly Tile[]): TileResults {
  const el = makeElement(job.model, job.aFormat, job.bFormat);
  const fast = sm90Fp8TileApplies(job);
  const finish = fast ? makeEpilogue(job.model) : null;
  const scratch = fast ? SCRATCH : null;
  const F = fast ? new Float64Array(TILE * TILE) : null;
  const fastScales = job.model.scales === "promotion" && job.sfa !== null && job.sfb !== null;
  const exact = job.model.epilogue === "exact";
  const exactScaled = job.sfa !== null && job.sfb !== null;
  const tileOut = new Float64Array(TILE * TILE);
  const tileC = job.c === null ? null : new Float64Array(TILE * TILE);
  const inUnit = job.model.scales === "in_unit";
  const sfaExp = inUnit ? scaleExps(job.sfa) : null, sfbExp = inUnit ? scaleExps(job.sfb) : null;
  let count = 0;
  for (const [pi, ti, tj] of tiles) {
    const p = job.problems[pi];
    count += (Math.min(p.aOff.length, (ti + 1) * TILE) - ti * TILE) *
      (Math.min(p.bOff.length, (tj + 1) * TILE) - tj * TILE);
  }
  const index = new Int32Array(count), value = new Float64Array(count);
  let w = 0;
  for (const [pi, ti, tj] of tiles) {
    const p = job.problems[pi];
    const r0 = ti * TILE, r1 = Math.min(p.aOff.length, r0 + TILE);
    const c0 = tj * TILE, c1 = Math.min(p.bOff.length, c0 + TILE);
    if (
      fast && sm90Fp8Tile(
        job.a as Uint8Array,
        p.aOff.subarray(r0, r1),
        job.b as Uint8Array,
        p.bOff.subarray(c0, c1),
        p.K,
        fastScales ? job.sfa : null,
        fastScales && p.sfaOff ? p.sfaOff.subarray(r0, r1) : null,
        fastScales ? job.sfb : null,
        fastScales && p.sfbOff ? p.sfbOff.subarray(c0, c1) : null,
        F!,
        scratch!,
      )
    ) {
      const C = c1 - c0;
      for (let i = r0; i < r1; i++) {
        const zeroRow = p.aOff[i] < 0, dr = p.dRow[i], fo = (i - r0) * C;
        for (let j = c0; j < c1; j++) {
          const di = dr + p.dCol[j];
          index[w] = di;
          value[w++] = zeroRow ? 0 : finish!(F![fo + j - c0], job.c === null ? null : job.c[di]);
        }
      }
      continue;
    }
    if (exact && exactTileApplies(job.aFormat, job.bFormat, exactScaled, p.K)) {
      const C = c1 - c0;
      if (tileC !== null) {
        for (let i = r0; i < r1; i++) {
          for (let j = c0; j < c1; j++) tileC[(i - r0) * C + j - c0] = job.c![p.dRow[i] + p.dCol[j]];
        }
      }
      exactTile(
        job.aFormat,
        job.bFormat,
        job.a,
        p.aOff.subarray(r0, r1),
        job.b,
        p.bOff.subarray(c0, c1),
        p.K,
        exactScaled ? job.sfa : null,
        exactScaled && p.sfaOff ? p.sfaOff.subarray(r0, r1) : null,
        exactScaled ? job.sfb : null,
        exactScaled && p.sfbOff ? p.sfbOff.subarray(c0, c1) : null,
        job.granK,
        tileC,
        job.model.outDtype,
        tileOut,
        SCRATCH,
      );
      for (let i = r0; i < r1; i++) {
        const zeroRow = p.aOff[i] < 0, dr = p.dRow[i], fo = (i - r0) * C;
        for (let j = c0; j < c1; j++) {
          index[w] = dr + p.dCol[j];
          value[w++] = zeroRow ? 0 : tileOut[fo + j - c0];
        }
      }
      continue;
    }
    const A = decodeRows(job.a, p.aOff, r0, r1, p.K, job.aFormat);
    const B = decodeRows(job.b, p.bOff, c0, c1, p.K, job.bFormat);
    const inp = {
      av: A.v,
      ae: A.e,
      bv: B.v,
      be: B.e,
      sfa: job.sfa,
      sfaExp,
      sfb: job.sfb,
      sfbExp,
      granK: job.granK,
    };
    for (let i = r0; i < r1; i++) {
      const aOff = A.off[i - r0];
      const zeroRow = p.aOff[i] < 0;
      const sao = p.sfaOff ? p.sfaOff[i] : 0;
      for (let j = c0; j < c1; j++) {
        const di = p.dRow[i] + p.dCol[j];
        index[w] = di;
        if (zeroRow) {
          value[w++] = 0;
          continue;
        }
        const c = job.c === null ? null : job.c[di];
        value[w++] = el(inp, aOff, B.off[j - c0], p.K, sao, p.sfbOff ? p.sfbOff[j] : 0, c);
      }
    }
  }
  return { index, value };
}
