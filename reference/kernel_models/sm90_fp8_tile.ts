/**
 * The SM90 FP8 promotion model (`sm90_1d2d`, `sm90_1d1d`, `cublaslt`: per 128-K block four chained
 * `hopper_wgmma_fp8` k32 steps from zero, then promotion to the fp32 accumulator F) specialised for e4m3 × e4m3
 * and evaluated a whole output tile at a time. It computes exactly what the generic path (`element.ts` over
 * `fused_dot_add.ts`) computes — the GEMM tests check the bits against both — only faster:
 *
 * - operands are decoded once per tile into typed arrays (value as float32, MMA-Sim exponent as int8);
 * - the loops run K-block outer, elements inner, so a 128-K block of A and B stays in cache while every element
 *   of the tile takes its four k32 steps and its promotion;
 * - one k32 step (numerics.md §8.1–8.2): E = max(exponent of the carried c, max_k e_a + e_b); each product
 *   v_a·v_b·2^(13−E) is exact in binary64 (≤ 8 significant bits) and `Math.trunc` truncates it toward zero exactly;
 *   the integer sum (< 2^21) is RZ'd to 14 significant bits with integer ops; c is carried as an integer mantissa
 *   and a power-of-two weight, so no step allocates or leaves int32/binary64-exact arithmetic.
 *
 * e4m3 NaN codes (0x7F, 0xFF) are not handled here: the function reports them and the caller uses the generic path.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { sm90Fp8Tile, TileScratch } from "./sm90_fp8_tile.ts";
 * // One row, one column, K = 64: A = 256 (0x78) then 63 × 2^-6 (0x08); B = 1.0 (0x38). Chained k32 steps keep 256.
 * const a = new Uint8Array(64).fill(0x08); a[0] = 0x78;
 * const b = new Uint8Array(64).fill(0x38);
 * const F = new Float64Array(1);
 * const ok = sm90Fp8Tile(a, new Int32Array([0]), b, new Int32Array([0]), 64, null, null, null, null, F,
 *   new TileScratch());
 * assert.equal(ok, true);
 * assert.equal(F[0], 256);
 * ```
 * @module
 */
import { pow2 } from "../formats/_pow2.ts";
import { fma32 } from "../fp32.ts";
import { operandTable } from "../tensor_core/operand_tables.ts";
import { tensorCoreProfile } from "../tensor_core/profiles.ts";
import type { ResolvedModel } from "./kernel_models.ts";

/** K elements per promotion (DeepGEMM BLOCK_K, `deepgemm-ops.md` §6.1). */
const BLOCK_K = 128;
/** Products per fused step and fraction bits kept (`hopper_wgmma_fp8` row of `profiles.ts`, numerics.md §8.2). */
const STEP = 32;
const FRAC = 13;

/** Exact powers of two 2^(i − POW_OFF) for the exponent range used here. */
const POW_OFF = 400;
const POW = Float64Array.from({ length: 2 * POW_OFF + 1 }, (_, i) => pow2(i - POW_OFF));

/**
 * Zero codes get exponent −40 instead of MMA-Sim's −126 so that exponent sums fit int8 arithmetic. This never
 * changes a step: a product with a zero factor has exponent ≤ −40 + 8, below every nonzero product (≥ −12) and
 * every nonzero carried c (≥ 2^−25 after a step, since E ≥ −12); and a step whose terms are all zero sums to 0
 * whatever E is.
 */
const ZERO_EXP = -40;

const E4M3 = operandTable("e4m3");
const VAL = Float64Array.from(E4M3.values); // NaN codes stay NaN (checked separately)
const EXP = Int8Array.from(E4M3.values, (v, c) => (v === 0 ? ZERO_EXP : E4M3.exps[c])); // subnormals → −6 (MMA-Sim clamp)
const IS_NAN = Uint8Array.from(E4M3.values, (v) => (v !== v ? 1 : 0));

/**
 * Reusable decode buffers (one per thread; grown on demand, never shrunk).
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { TileScratch } from "./sm90_fp8_tile.ts";
 * const s = new TileScratch();
 * s.reserve(4, 8);
 * assert.equal(s.av.length, 4);
 * assert.equal(s.be.length, 8);
 * s.reserve(2, 2); // never shrinks
 * assert.equal(s.av.length, 4);
 * ```
 */
export class TileScratch {
  /** A values, row-major [rows, K]. */
  av: Float64Array = new Float64Array(0);
  /** A exponents. */
  ae: Int8Array = new Int8Array(0);
  /** B values. */
  bv: Float64Array = new Float64Array(0);
  /** B exponents. */
  be: Int8Array = new Int8Array(0);

  /** Makes room for `na` A and `nb` B elements. */
  reserve(na: number, nb: number): void {
    if (this.av.length < na) (this.av = new Float64Array(na), this.ae = new Int8Array(na));
    if (this.bv.length < nb) (this.bv = new Float64Array(nb), this.be = new Int8Array(nb));
  }
}

function decode(codes: Uint8Array, offs: Int32Array, K: number, v: Float64Array, e: Int8Array): boolean {
  let bad = 0;
  for (let i = 0; i < offs.length; i++) {
    const src = offs[i], o = i * K;
    if (src < 0) {
      v.fill(0, o, o + K);
      e.fill(ZERO_EXP, o, o + K);
    } else {
      bad |= decodeRow(codes, src, K, v, e, o);
    }
  }
  return bad === 0;
}

/** Decodes one row (a function of its own for V8, see {@link rowBlock}); returns 1 if it met a NaN code. */
function decodeRow(codes: Uint8Array, src: number, K: number, v: Float64Array, e: Int8Array, o: number): number {
  const val = VAL, exp = EXP, nan = IS_NAN;
  let bad = 0;
  for (let k = 0; k < K; k++) {
    const c = codes[src + k];
    v[o + k] = val[c];
    e[o + k] = exp[c];
    bad |= nan[c];
  }
  return bad;
}

/** One promotion: `fma32(s, P, F)` with the scale product s, or `fl32(F + P)` without scales. */
function promote(F: number, P: number, scaled: boolean, s: number): number {
  return scaled ? fma32(s, P, F) : Math.fround(F + P);
}

/**
 * The promoted fp32 accumulator F of every element of a tile (before the epilogue), row-major `[rows, cols]`.
 * With scales, each 128-K block promotes as `F = fma32(fl32(sa·sb), P, F)` (`deepgemm-ops.md` §6.1); without,
 * as `F = fl32(F + P)` (cuBLASLt, `numerics.md` §8.2b). Columns are processed four at a time, sharing A's loads.
 * @param a A codes (e4m3)
 * @param aOff offset in `a` of each tile row's K codes (−1: a zero row)
 * @param b B codes (e4m3)
 * @param bOff offset in `b` of each tile column's K codes
 * @param K the reduction length
 * @param sfa A scales per (row, 128-K group), or null without scales
 * @param sfaOff offset in `sfa` of each tile row's groups
 * @param sfb B scales per (column, group)
 * @param sfbOff offset in `sfb` of each tile column's groups
 * @param F output, `rows·cols` values
 * @param scratch reusable buffers
 * @returns false when an operand holds a NaN code (nothing useful was written; use the generic path)
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { sm90Fp8Tile, TileScratch } from "./sm90_fp8_tile.ts";
 * // 1 × 2 tile, K = 32 of 1.0 (0x38) against 1.0 and 2.0 (0x40): one k32 step each.
 * const a = new Uint8Array(32).fill(0x38);
 * const b = new Uint8Array(64).fill(0x38).fill(0x40, 32);
 * const F = new Float64Array(2);
 * const s = new TileScratch();
 * assert.equal(sm90Fp8Tile(a, new Int32Array([0]), b, new Int32Array([0, 32]), 32, null, null, null, null, F, s), true);
 * assert.deepEqual([...F], [32, 64]);
 * ```
 */
export function sm90Fp8Tile(
  a: Uint8Array,
  aOff: Int32Array,
  b: Uint8Array,
  bOff: Int32Array,
  K: number,
  sfa: Float64Array | null,
  sfaOff: Int32Array | null,
  sfb: Float64Array | null,
  sfbOff: Int32Array | null,
  F: Float64Array,
  scratch: TileScratch,
): boolean {
  const R = aOff.length, C = bOff.length;
  scratch.reserve(R * K, C * K);
  const av = scratch.av, ae = scratch.ae, bv = scratch.bv, be = scratch.be;
  if (!decode(a, aOff, K, av, ae) || !decode(b, bOff, K, bv, be)) return false;
  F.fill(0, 0, R * C);
  const scaled = sfa !== null && sfb !== null && sfaOff !== null && sfbOff !== null;
  for (let k0 = 0, g = 0; k0 < K; k0 += BLOCK_K, g++) {
    const k1 = K - k0 < BLOCK_K ? K : k0 + BLOCK_K;
    for (let i = 0; i < R; i++) {
      rowBlock(av, ae, bv, be, K, C, i * K, i * C, k0, k1, g, scaled, scaled ? sfa[sfaOff[i] + g] : 0, sfb, sfbOff, F);
    }
  }
  return true;
}

/**
 * One tile row over one 128-K block: four k32 steps and the promotion for every column. A function of its own so
 * that V8 optimises it as a whole after a few calls (a single long call would run its hot loops in on-stack-replaced
 * code that deoptimises at every inner-loop exit).
 */
function rowBlock(
  av: Float64Array,
  ae: Int8Array,
  bv: Float64Array,
  be: Int8Array,
  K: number,
  C: number,
  ao: number,
  fo: number,
  k0: number,
  k1: number,
  g: number,
  scaled: boolean,
  sa: number,
  sfb: Float64Array | null,
  sfbOff: Int32Array | null,
  F: Float64Array,
): void {
  const pow = POW;
  const C4 = C - (C % 4);
  for (let j = 0; j < C4; j += 4) {
    const o0 = j * K, o1 = o0 + K, o2 = o1 + K, o3 = o2 + K;
    // Carried c per column: mantissa m, weight w (c = m·2^w), MMA-Sim exponent x (−126 for zero).
    let m0 = 0, w0 = 0, x0 = -126, m1 = 0, w1 = 0, x1 = -126;
    let m2 = 0, w2 = 0, x2 = -126, m3 = 0, w3 = 0, x3 = -126;
    for (let s = k0; s < k1; s += STEP) {
      const e1 = k1 - s < STEP ? k1 : s + STEP;
      // Pass 1: E per column = max(exponent of c, e_a + e_b over the step).
      let E0 = x0, E1 = x1, E2 = x2, E3 = x3;
      for (let k = s; k < e1; k++) {
        const x = ae[ao + k];
        const y0 = x + be[o0 + k], y1 = x + be[o1 + k], y2 = x + be[o2 + k], y3 = x + be[o3 + k];
        if (y0 > E0) E0 = y0;
        if (y1 > E1) E1 = y1;
        if (y2 > E2) E2 = y2;
        if (y3 > E3) E3 = y3;
      }
      // Pass 2: every term (and c) truncated toward zero at 2^(E − FRAC), summed exactly.
      const s0 = pow[POW_OFF + FRAC - E0], s1 = pow[POW_OFF + FRAC - E1];
      const s2 = pow[POW_OFF + FRAC - E2], s3 = pow[POW_OFF + FRAC - E3];
      let u0 = m0 === 0 ? 0 : Math.trunc(m0 * pow[POW_OFF + w0 + FRAC - E0]);
      let u1 = m1 === 0 ? 0 : Math.trunc(m1 * pow[POW_OFF + w1 + FRAC - E1]);
      let u2 = m2 === 0 ? 0 : Math.trunc(m2 * pow[POW_OFF + w2 + FRAC - E2]);
      let u3 = m3 === 0 ? 0 : Math.trunc(m3 * pow[POW_OFF + w3 + FRAC - E3]);
      for (let k = s; k < e1; k++) {
        const v = av[ao + k];
        u0 += Math.trunc(v * bv[o0 + k] * s0);
        u1 += Math.trunc(v * bv[o1 + k] * s1);
        u2 += Math.trunc(v * bv[o2 + k] * s2);
        u3 += Math.trunc(v * bv[o3 + k] * s3);
      }
      // RZ of each sum to FRAC + 1 significant bits (rz_e8m13; |u| < 2^21, so int32 ops are exact).
      {
        const mg = u0 < 0 ? -u0 : u0, bl = 32 - Math.clz32(mg), sh = bl > FRAC + 1 ? bl - FRAC - 1 : 0;
        const t = (mg >>> sh) << sh;
        m0 = u0 < 0 ? -t : t;
        w0 = E0 - FRAC;
        x0 = t === 0 ? -126 : bl - 1 + w0;
      }
      {
        const mg = u1 < 0 ? -u1 : u1, bl = 32 - Math.clz32(mg), sh = bl > FRAC + 1 ? bl - FRAC - 1 : 0;
        const t = (mg >>> sh) << sh;
        m1 = u1 < 0 ? -t : t;
        w1 = E1 - FRAC;
        x1 = t === 0 ? -126 : bl - 1 + w1;
      }
      {
        const mg = u2 < 0 ? -u2 : u2, bl = 32 - Math.clz32(mg), sh = bl > FRAC + 1 ? bl - FRAC - 1 : 0;
        const t = (mg >>> sh) << sh;
        m2 = u2 < 0 ? -t : t;
        w2 = E2 - FRAC;
        x2 = t === 0 ? -126 : bl - 1 + w2;
      }
      {
        const mg = u3 < 0 ? -u3 : u3, bl = 32 - Math.clz32(mg), sh = bl > FRAC + 1 ? bl - FRAC - 1 : 0;
        const t = (mg >>> sh) << sh;
        m3 = u3 < 0 ? -t : t;
        w3 = E3 - FRAC;
        x3 = t === 0 ? -126 : bl - 1 + w3;
      }
    }
    const f = fo + j;
    const sb = scaled ? sfbOff : null;
    F[f] = promote(F[f], m0 * pow[POW_OFF + w0], scaled, sb ? Math.fround(sa * sfb![sb[j] + g]) : 0);
    F[f + 1] = promote(F[f + 1], m1 * pow[POW_OFF + w1], scaled, sb ? Math.fround(sa * sfb![sb[j + 1] + g]) : 0);
    F[f + 2] = promote(F[f + 2], m2 * pow[POW_OFF + w2], scaled, sb ? Math.fround(sa * sfb![sb[j + 2] + g]) : 0);
    F[f + 3] = promote(F[f + 3], m3 * pow[POW_OFF + w3], scaled, sb ? Math.fround(sa * sfb![sb[j + 3] + g]) : 0);
  }
  for (let j = C4; j < C; j++) {
    const o0 = j * K;
    let m0 = 0, w0 = 0, x0 = -126;
    for (let s = k0; s < k1; s += STEP) {
      const e1 = k1 - s < STEP ? k1 : s + STEP;
      let E0 = x0;
      for (let k = s; k < e1; k++) {
        const y0 = ae[ao + k] + be[o0 + k];
        if (y0 > E0) E0 = y0;
      }
      const s0 = pow[POW_OFF + FRAC - E0];
      let u0 = m0 === 0 ? 0 : Math.trunc(m0 * pow[POW_OFF + w0 + FRAC - E0]);
      for (let k = s; k < e1; k++) u0 += Math.trunc(av[ao + k] * bv[o0 + k] * s0);
      {
        const mg = u0 < 0 ? -u0 : u0, bl = 32 - Math.clz32(mg), sh = bl > FRAC + 1 ? bl - FRAC - 1 : 0;
        const t = (mg >>> sh) << sh;
        m0 = u0 < 0 ? -t : t;
        w0 = E0 - FRAC;
        x0 = t === 0 ? -126 : bl - 1 + w0;
      }
    }
    F[fo + j] = promote(
      F[fo + j],
      m0 * pow[POW_OFF + w0],
      scaled,
      scaled ? Math.fround(sa * sfb![sfbOff![j] + g]) : 0,
    );
  }
}

/** The parts of a job {@link sm90Fp8TileApplies} looks at. */
export interface TileJobShape {
  /** The resolved model. */
  model: ResolvedModel;
  /** A's operand format. */
  aFormat: string;
  /** B's operand format. */
  bFormat: string;
  /** A scales (null without). */
  sfa: Float64Array | null;
  /** K elements per scale group. */
  granK: number;
}

/**
 * Whether {@link sm90Fp8Tile} computes a job's elements bit for bit as the generic path: e4m3 × e4m3 operands, a
 * tensor-core profile with the `hopper_wgmma_fp8` parameters, promotion every 128, no split-K, scales applied at
 * promotion with gran_k 128 (or no scales), and a non-exact epilogue.
 * @param job the job (model, formats, scales)
 * @returns true when the specialised kernel applies
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { resolveModel } from "./kernel_models.ts";
 * import { sm90Fp8TileApplies } from "./sm90_fp8_tile.ts";
 * const job = { model: resolveModel({ model: "sm90_1d2d" }), aFormat: "e4m3", bFormat: "e4m3", sfa: null, granK: 128 };
 * assert.equal(sm90Fp8TileApplies(job), true);
 * assert.equal(sm90Fp8TileApplies({ ...job, model: resolveModel({ model: "sm90_1d2d", splitK: 2 }) }), false);
 * ```
 */
export function sm90Fp8TileApplies(job: TileJobShape): boolean {
  const m = job.model;
  if (job.aFormat !== "e4m3" || job.bFormat !== "e4m3") return false;
  if (m.epilogue === "exact" || m.promotion !== BLOCK_K || m.splitK !== 1 || m.scales === "in_unit") return false;
  if (m.scales === "promotion" && job.sfa !== null && job.granK !== BLOCK_K) return false;
  const p = tensorCoreProfile(m.tensorCore);
  return p.termsPerStep === STEP && p.fractionBits === FRAC && p.output === "rz_e8m13" &&
    p.blockScale === "none" && !p.truncateToTf32;
}
