/**
 * Evaluating one {@link Variant} of an op on its inputs, at three scopes: a small sample of output elements
 * (`sample`), a larger one (`wide`) and every element (`full`). Two strategies:
 *
 * - **elements** (the normal GEMMs `fp8_gemm_*`, `fp8_fp4_gemm_*`, `bf16_gemm_*`, `cublaslt_gemm_*`): the op is
 *   lowered to its GEMM job (`planNormal`, the same planner `op.run` uses) and the job is cut to sampled rows ×
 *   sampled columns, so a sample costs only its own elements. The job is evaluated with an FP32 output and no C,
 *   which yields the fp32 accumulator F itself; the variant's epilogue (and an RZ output rounding) is applied to F
 *   here, so RNE and RZ cost one evaluation.
 * - **tiles** (every other op): `op.run` with the reference's tile sampling (the covering diagonal of 128×128 tiles,
 *   then a quarter of the tiles) for GEMM ops, the whole op otherwise; only the elements the reference defines
 *   (`sample_mask`, `logits_defined`) are compared.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Tensor } from "../tensor/tensor.ts";
 * import { makeEvaluator } from "./evaluate.ts";
 * const a = Tensor.from("bf16", [1, 2], new Uint16Array([0x3f80, 0x4000]));
 * const b = Tensor.from("bf16", [1, 2], new Uint16Array([0x4040, 0x3f80]));
 * const ev = makeEvaluator("bf16_gemm_nt", { a, b }, {}, ["d"]);
 * assert.equal(ev.strategy, "elements");
 * assert.deepEqual([...ev.evaluate({ model: "bf16" }, "full").d.codes], [0x40a0]); // 5.0
 * ```
 * @module
 */
import { makeEpilogue } from "../kernel_models/element.ts";
import { f32Bits } from "../fp32.ts";
import { bf16Rne } from "../fp32.ts";
import { evaluateTiles, selectTiles } from "../gemm/engine.ts";
import type { GemmJob, GemmProblem } from "../gemm/job.ts";
import { planNormal } from "../gemm/normal_gemm.ts";
import type { OpSpec, Plan } from "../gemm/op_spec.ts";
import { GEMM_OPS } from "../registry.ts";
import { referenceOp } from "../registry.ts";
import { Prng } from "../random/prng.ts";
import type { Tensor } from "../tensor/tensor.ts";
import { type ElementCodes, tensorCodes } from "./codes.ts";
import { type Variant, variantOptions } from "./variants.ts";

/** How much of the output an evaluation covers. */
export type Scope = "sample" | "wide" | "full";

/** Evaluates variants of one op on one input. */
export interface Evaluator {
  /** `elements` (sampled rows × columns of a normal GEMM) or `tiles` (the op, tile-sampled where it is a GEMM). */
  readonly strategy: "elements" | "tiles";
  /** Whether RZ output variants can be evaluated (the accumulator is reachable: normal GEMMs, BF16 out, no C). */
  readonly rz: boolean;
  /** Operand formats and the reduction length (GEMM ops), for the variant space. */
  readonly operands: { aFormat: string; bFormat: string; K: number } | null;
  /** Elements a `sample` / `wide` evaluation covers (an estimate for `tiles`). */
  readonly sampleSize: Readonly<Record<Scope, number>>;
  /**
   * The variant's outputs at the scope, by output name.
   * @throws whatever the reference throws for a variant that does not apply (RangeError, TypeError)
   */
  evaluate(v: Variant, scope: Scope): Record<string, ElementCodes>;
}

const NORMAL = /^(fp8|fp8_fp4|bf16|cublaslt)_gemm_(nt|nn|tn|tt)$/;
const MASKS = new Set(["sample_mask", "logits_defined"]);

/** Sample sizes of the elements strategy: rows × columns per scope. */
const SAMPLE_ROWS = { sample: 4, wide: 8 } as const;
const SAMPLE_COLS = { sample: 32, wide: 128 } as const;

/**
 * Up to `count` distinct indices in [0, n): 0, n − 1, the first of the last `block`, one per block, then seeded
 * random ones; sorted.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Prng } from "../random/prng.ts";
 * import { spreadIndices } from "./evaluate.ts";
 * const ix = spreadIndices(300, 6, 128, new Prng(1));
 * assert.equal(ix.length, 6);
 * assert.ok(ix.includes(0) && ix.includes(299) && ix.includes(256));
 * assert.deepEqual(spreadIndices(3, 8, 128, new Prng(1)), [0, 1, 2]);
 * ```
 */
export function spreadIndices(n: number, count: number, block: number, rng: Prng): number[] {
  if (count >= n) return Array.from({ length: n }, (_, i) => i);
  const chosen = new Set<number>([0, n - 1, Math.floor((n - 1) / block) * block]);
  for (let b = 0; b * block < n && chosen.size < count; b++) {
    chosen.add(b * block + rng.int(Math.min(block, n - b * block)));
  }
  while (chosen.size < count) chosen.add(rng.int(n));
  return [...chosen].slice(0, Math.max(count, 1)).sort((x, y) => x - y);
}

function pick(a: Int32Array | null, ix: readonly number[]): Int32Array | null {
  return a === null ? null : Int32Array.from(ix, (i) => a[i]);
}

/** The elements strategy: a normal GEMM lowered to its job. */
class NormalEvaluator implements Evaluator {
  readonly strategy = "elements" as const;
  readonly rz: boolean;
  readonly operands: { aFormat: string; bFormat: string; K: number };
  readonly sampleSize: Record<Scope, number>;
  readonly #plan: (v: Variant) => Plan;
  readonly #rows: Record<"sample" | "wide", number[]>;
  readonly #cols: Record<"sample" | "wide", number[]>;
  readonly #outDtype: "bf16" | "f32";
  #memo: { key: string; F: Float64Array | null; index: Int32Array; values: Float64Array | null; job: GemmJob } | null =
    null;

  constructor(plan: (v: Variant) => Plan, first: Plan, seed: number) {
    this.#plan = plan;
    const job = first.job!;
    const p = job.problems[0];
    const M = p.aOff.length, N = p.bOff.length;
    this.#outDtype = first.d.dtype as "bf16" | "f32";
    this.rz = this.#outDtype === "bf16" && job.c === null;
    this.operands = { aFormat: job.aFormat, bFormat: job.bFormat, K: p.K };
    const rng = new Prng(seed >>> 0);
    this.#rows = {
      sample: spreadIndices(M, SAMPLE_ROWS.sample, 128, rng),
      wide: spreadIndices(M, SAMPLE_ROWS.wide, 128, rng),
    };
    this.#cols = {
      sample: spreadIndices(N, SAMPLE_COLS.sample, 128, rng),
      wide: spreadIndices(N, SAMPLE_COLS.wide, 128, rng),
    };
    this.sampleSize = {
      sample: this.#rows.sample.length * this.#cols.sample.length,
      wide: this.#rows.wide.length * this.#cols.wide.length,
      full: M * N,
    };
  }

  /** F (or, for the exact epilogue, the output values) of the variant's arithmetic at the scope; memoised once. */
  #run(v: Variant, scope: Scope) {
    const core = { ...v, rounding: undefined };
    const key = JSON.stringify([core, scope]);
    if (this.#memo?.key === key) return this.#memo;
    const plan = this.#plan(core);
    if (plan.job === null) throw new RangeError("the op returns early: nothing to evaluate");
    const job = plan.job;
    const p = job.problems[0];
    let problem: GemmProblem = p;
    if (scope !== "full") {
      const rows = this.#rows[scope], cols = this.#cols[scope];
      problem = {
        K: p.K,
        aOff: pick(p.aOff, rows)!,
        bOff: pick(p.bOff, cols)!,
        sfaOff: pick(p.sfaOff, rows),
        sfbOff: pick(p.sfbOff, cols),
        dRow: pick(p.dRow, rows)!,
        dCol: pick(p.dCol, cols)!,
        group: p.group,
      };
    }
    const exact = job.model.epilogue === "exact";
    const run: GemmJob = exact
      ? { ...job, problems: [problem] }
      : { ...job, model: { ...job.model, outDtype: "f32" }, c: null, problems: [problem] };
    const res = evaluateTiles(run, selectTiles(run.problems));
    this.#memo = {
      key,
      F: exact ? null : res.value,
      values: exact ? res.value : null,
      index: res.index,
      job,
    };
    return this.#memo;
  }

  evaluate(v: Variant, scope: Scope): Record<string, ElementCodes> {
    const r = this.#run(v, scope);
    const n = r.index.length;
    const codes = new Float64Array(n);
    const bf16 = this.#outDtype === "bf16";
    const encode = (x: number) => (bf16 ? bf16Rne(x) : x !== x ? 0x7fffffff : f32Bits(x));
    if (r.values !== null) {
      for (let i = 0; i < n; i++) codes[i] = encode(r.values[i]);
    } else if (v.rounding === "rz") {
      if (!this.rz) throw new RangeError("RZ output is searched for BF16 output without C only");
      for (let i = 0; i < n; i++) {
        const u = f32Bits(r.F![i]);
        codes[i] = (u & 0x7fffffff) > 0x7f800000 ? 0x7fff : u >>> 16;
      }
    } else {
      const epilogue = makeEpilogue(r.job.model);
      const c = r.job.c;
      for (let i = 0; i < n; i++) codes[i] = encode(epilogue(r.F![i], c === null ? null : c[r.index[i]]));
    }
    return { d: { index: r.index, codes } };
  }
}

/** The tiles strategy: `op.run`, tile-sampled for GEMM ops; only defined elements. */
class OpEvaluator implements Evaluator {
  readonly strategy = "tiles" as const;
  readonly rz = false;
  readonly operands: { aFormat: string; bFormat: string; K: number } | null;
  readonly sampleSize: Record<Scope, number>;
  readonly #op: OpSpec;
  readonly #inputs: Record<string, Tensor>;
  readonly #scalars: Record<string, unknown>;
  readonly #names: readonly string[];
  readonly #gemm: boolean;
  readonly #seed: number;
  #memo = new Map<string, Record<string, ElementCodes>>();

  constructor(
    op: OpSpec,
    inputs: Record<string, Tensor>,
    scalars: Record<string, unknown>,
    names: readonly string[],
    seed: number,
  ) {
    this.#op = op;
    this.#inputs = inputs;
    this.#scalars = scalars;
    this.#names = names;
    this.#seed = seed;
    this.#gemm = Object.hasOwn(GEMM_OPS, op.name);
    const a = inputs.a, b = inputs.b;
    this.operands = this.#gemm && a && b
      ? { aFormat: a.dtype, bFormat: b.dtype, K: Math.max(...a.shape.slice(-1), ...b.shape.slice(-1)) }
      : null;
    this.sampleSize = { sample: NaN, wide: NaN, full: NaN };
  }

  evaluate(v: Variant, scope: Scope): Record<string, ElementCodes> {
    // Non-GEMM ops are evaluated whole at every scope (their references do not sample): once per variant.
    const s: Scope = this.#gemm ? scope : "full";
    const key = JSON.stringify([v, s]);
    const hit = this.#memo.get(key);
    if (hit) return hit;
    if (v.rounding === "rz") throw new RangeError("RZ output is searched for the normal GEMMs only");
    const options = {
      ...variantOptions(v),
      ...(s === "full" ? {} : { sample: { fraction: s === "sample" ? 1e-9 : 0.25, seed: this.#seed } }),
    };
    const out = this.#op.run(this.#inputs, { ...this.#scalars, ...(v.scalars ?? {}) }, options);
    const mask = out.sample_mask ?? out.logits_defined ?? null;
    const m = mask === null ? null : tensorCodes(mask).codes;
    const result: Record<string, ElementCodes> = {};
    for (const name of this.#names) {
      const t = out[name];
      if (t === undefined) throw new RangeError(`the reference wrote no "${name}"`);
      const all = tensorCodes(t).codes;
      const keep = m !== null && m.length === all.length;
      let count = 0;
      if (keep) { for (let i = 0; i < m!.length; i++) count += m![i] ? 1 : 0; }
      else count = all.length;
      const index = new Int32Array(count), codes = new Float64Array(count);
      for (let i = 0, w = 0; i < all.length; i++) {
        if (keep && !m![i]) continue;
        index[w] = i;
        codes[w++] = all[i];
      }
      result[name] = { index, codes };
    }
    if (this.#memo.size > 64) this.#memo.clear();
    this.#memo.set(key, result);
    return result;
  }
}

function orient(layout: string, x: Record<string, Tensor>) {
  const ta = layout[0] === "t", tb = layout[1] === "n";
  const t = (v: Tensor | undefined, yes: boolean) => (v === undefined ? null : yes ? v.transpose() : v);
  return { A: t(x.a, ta)!, B: t(x.b, tb)!, sfa: t(x.sfa, ta), sfb: t(x.sfb, tb) };
}

/**
 * The evaluator of an op on its inputs: the elements strategy for the normal GEMMs (when the op plans to a job whose
 * output is a plain row-major tensor), the tiles strategy otherwise.
 * @param opName DeepGEMM's op name
 * @param inputs the op's tensors
 * @param scalars its scalars
 * @param names the outputs compared
 * @param seed sampling seed (default 0)
 * @returns the evaluator
 * @throws RangeError for an unknown op
 */
export function makeEvaluator(
  opName: string,
  inputs: Record<string, Tensor>,
  scalars: Record<string, unknown>,
  names: readonly string[],
  seed = 0,
): Evaluator {
  const op = referenceOp(opName);
  if (op === undefined) throw new RangeError(`unknown op "${opName}"`);
  const m = NORMAL.exec(opName);
  if (m && names.length === 1 && names[0] === "d" && inputs.a && inputs.b) {
    const kind = m[1] === "bf16" ? "bf16" : m[1] === "cublaslt" ? "cublaslt" : "fp8";
    const o = orient(m[2], inputs);
    const plan = (v: Variant): Plan =>
      planNormal({
        op: opName,
        ...o,
        c: inputs.c ?? null,
        d: inputs.d ?? null,
        scalars,
        options: variantOptions(v),
        kind,
      });
    let first: Plan | null = null;
    try {
      first = plan({ model: op.defaultModel });
    } catch {
      first = null; // the default does not apply (an SM100 input): the tiles strategy answers for every variant
    }
    const d = first?.d;
    if (first?.job && d && d.isContiguous() && d.offset === 0 && first.job.problems.length === 1) {
      return new NormalEvaluator(plan, first, seed);
    }
  }
  return new OpEvaluator(op, inputs, scalars, names.filter((n) => !MASKS.has(n)), seed);
}
