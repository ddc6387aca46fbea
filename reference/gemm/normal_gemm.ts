/**
 * The plain GEMMs `D = C + A·Bᵀ`: `fp8_gemm_{nt,nn,tn,tt}` (alias `fp8_fp4_gemm_*`), `bf16_gemm_*`, `cublaslt_gemm_*`
 * and `fp8_gemm_nt_skip_head_mid`, with DeepGEMM's argument rules (`deepgemm-ops.md` §5.1–5.2, §5.7, §15).
 * The `nn/tn/tt` forms transpose the views (and the SFs) and call `nt`, as DeepGEMM does.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Tensor } from "../tensor/tensor.ts";
 * import { fp8GemmNt } from "./normal_gemm.ts";
 * // 1 × 8 × 32 with A = 1.0 (0x38), B = 0.5 (0x30): D = 16 in BF16 (0x4180).
 * const a = Tensor.from("e4m3", [1, 32], new Uint8Array(32).fill(0x38));
 * const b = Tensor.from("e4m3", [8, 32], new Uint8Array(256).fill(0x30));
 * const sfa = Tensor.from("f32", [1, 1], new Float32Array([1]));
 * const sfb = Tensor.from("f32", [1, 1], new Float32Array([1]));
 * const { d } = fp8GemmNt.run({ a, sfa, b, sfb }, {}, {});
 * assert.equal(d.at(0, 7), 0x4180);
 * ```
 * @module
 */
import { type ModelOptions, type ResolvedModel, resolveModel } from "../kernel_models/kernel_models.ts";
import type { DType } from "../tensor/dtype.ts";
import type { Tensor } from "../tensor/tensor.ts";
import type { GemmJob, GemmProblem } from "./job.ts";
import { packKRows } from "./job.ts";
import { ceilDiv } from "../layout/tma_aligned.ts";
import type { OpSpec, Plan } from "./op_spec.ts";
import { cByDIndex, checkC, copyInto, initialOutput } from "./output.ts";
import { archScalar } from "./scalar_arguments.ts";
import { decodeScales, requirePowerOfTwoScales, requireScaledModel } from "./scale_factors.ts";
import { maybe, need, requireKMajor, requireRowMajor } from "./tensor_arguments.ts";
import { makeOp } from "./run.ts";

/**
 * Reads a recipe scalar: `[gran_m, gran_n, gran_k]` (or null).
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { recipeScalar } from "./normal_gemm.ts";
 * assert.deepEqual(recipeScalar({ recipe: [1, 128, 128] }, "recipe", 3, "demo"), [1, 128, 128]);
 * assert.equal(recipeScalar({}, "recipe", 3, "demo"), null);
 * assert.throws(() => recipeScalar({ recipe: [1, 128] }, "recipe", 3, "demo"), TypeError);
 * ```
 */
export function recipeScalar(scalars: Record<string, unknown>, name: string, n: number, op: string): number[] | null {
  const v = scalars[name];
  if (v === undefined || v === null) return null;
  if (!Array.isArray(v) || v.length !== n || !v.every((x) => Number.isSafeInteger(x) && x > 0)) {
    throw new TypeError(`${op}: "${name}" must be ${n} positive integers`);
  }
  return v as number[];
}

/** The scale recipe of an FP8 GEMM: granularities of A rows, B rows and K. */
export interface Recipe {
  /** Rows of A per SFA row. */
  granA: number;
  /** Rows of B per SFB row. */
  granB: number;
  /** K elements per scale. */
  granK: number;
}

/**
 * Resolves `recipe` / `recipe_a` + `recipe_b` with DeepGEMM's defaults (`deepgemm-ops.md` §3).
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Tensor } from "../tensor/tensor.ts";
 * import { resolveRecipe } from "./normal_gemm.ts";
 * const sfb = Tensor.zeros("f32", [1, 1]);
 * assert.deepEqual(resolveRecipe({}, "demo", "sm90", sfb, false), { granA: 1, granB: 128, granK: 128 });
 * assert.deepEqual(resolveRecipe({}, "demo", "sm100", Tensor.zeros("i32", [1, 1]), true), {
 *   granA: 1, granB: 1, granK: 32,
 * });
 * assert.throws(() => resolveRecipe({ recipe: [1, 128, 32] }, "demo", "sm90", sfb, false), TypeError);
 * ```
 */
export function resolveRecipe(
  scalars: Record<string, unknown>,
  op: string,
  arch: "sm90" | "sm100",
  sfb: Tensor,
  fp4: boolean,
): Recipe {
  const r = recipeScalar(scalars, "recipe", 3, op);
  const ra = recipeScalar(scalars, "recipe_a", 2, op), rb = recipeScalar(scalars, "recipe_b", 2, op);
  if (r && (ra || rb)) throw new TypeError(`${op}: "recipe" and "recipe_a"/"recipe_b" are mutually exclusive`);
  if ((ra === null) !== (rb === null)) throw new TypeError(`${op}: "recipe_a" and "recipe_b" go together`);
  let rec: Recipe;
  if (r) rec = { granA: r[0], granB: r[1], granK: r[2] };
  else if (ra && rb) {
    if (ra[1] !== rb[1]) throw new TypeError(`${op}: recipe_a and recipe_b must share gran_k`);
    rec = { granA: ra[0], granB: rb[0], granK: ra[1] };
  } else if (arch === "sm90") rec = { granA: 1, granB: 128, granK: 128 };
  else {rec = sfb.dtype === "i32"
      ? { granA: 1, granB: 1, granK: fp4 ? 32 : 128 }
      : { granA: 1, granB: 128, granK: fp4 ? 32 : 128 };}
  if (rec.granA !== 1) throw new TypeError(`${op}: SFA granularity along M must be 1 (per token), got ${rec.granA}`);
  if (arch === "sm90" && rec.granK !== 128) {
    throw new TypeError(`${op}: SM90 FP8 GEMMs need gran_k = 128, got ${rec.granK}`);
  }
  if (arch === "sm100" && rec.granK !== 32 && rec.granK !== 128) {
    throw new TypeError(`${op}: SM100 scale gran_k must be 32 or 128, got ${rec.granK}`);
  }
  if (rec.granB !== 1 && rec.granB !== 128) {
    throw new TypeError(`${op}: SFB granularity must be 1 or 128, got ${rec.granB}`);
  }
  return rec;
}

/** What a normal-GEMM planner needs after the layout letters are applied. */
export interface NormalArgs {
  /** Function name (for messages). */
  op: string;
  /** Logical A [M, K]. */
  A: Tensor;
  /** Logical B [N, K]. */
  B: Tensor;
  /** Logical SFA [ceil(M/granA), sfk] (or packed), or null. */
  sfa: Tensor | null;
  /** Logical SFB. */
  sfb: Tensor | null;
  /** C or null. */
  c: Tensor | null;
  /** Caller's D or null. */
  d: Tensor | null;
  /** Scalars. */
  scalars: Record<string, unknown>;
  /** Model options. */
  options: ModelOptions;
  /** Op family: which rules apply. */
  kind: "fp8" | "bf16" | "cublaslt";
  /** Physical D column of logical column j (skip-head-mid), and D's column count. */
  columns?: { map: (j: number) => number; width: number };
}

function formatOf(t: Tensor): string {
  return t.dtype;
}

/**
 * Plans a normal GEMM (all rule checks, early returns, C copy).
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Tensor } from "../tensor/tensor.ts";
 * import { planNormal } from "./normal_gemm.ts";
 * const A = Tensor.zeros("bf16", [4, 64]), B = Tensor.zeros("bf16", [8, 64]);
 * const plan = planNormal({
 *   op: "demo", A, B, sfa: null, sfb: null, c: null, d: null, scalars: {}, options: {}, kind: "bf16",
 * });
 * assert.deepEqual(plan.d.shape, [4, 8]);
 * assert.equal(plan.job!.problems[0].K, 64);
 * ```
 */
export function planNormal(x: NormalArgs): Plan {
  const { op, A, B, sfa, sfb, c, d, scalars, options, kind } = x;
  const [M, K] = A.shape;
  const [N, KB] = B.shape;
  if (KB !== K) throw new TypeError(`${op}: A has K = ${K} but B has K = ${KB}`);
  const width = x.columns?.width ?? N;
  let model: ResolvedModel;
  let granK = 128;
  let sfaV: Float64Array | null = null, sfbV: Float64Array | null = null;
  let outDtype: "bf16" | "f32";
  const dOrC = d ?? c;
  if (kind === "fp8") {
    const fp4 = A.dtype === "e2m1" || B.dtype === "e2m1";
    const arch = archScalar(scalars, op, options.model === "sm100_1d1d" || fp4 ? "sm100" : "sm90");
    outDtype = options.outDtype ?? (dOrC?.dtype as "bf16" | "f32" | undefined) ?? "bf16";
    if (dOrC && dOrC.dtype !== outDtype) {
      throw new TypeError(`${op}: output dtype ${outDtype} differs from d/c dtype ${dOrC.dtype}`);
    }
    if (sfa === null || sfb === null) throw new TypeError(`${op}: FP8 GEMMs take a = (A, SFA) and b = (B, SFB)`);
    const rec = resolveRecipe(scalars, op, arch, sfb, fp4);
    granK = rec.granK;
    if (arch === "sm90") {
      if (fp4) throw new TypeError(`${op}: FP4 operands need SM100`);
      requireKMajor(A, "a", op, "SM90 FP8");
      requireKMajor(B, "b", op, "SM90 FP8");
      if (sfa.dtype !== "f32" || sfb.dtype !== "f32") throw new TypeError(`${op}: SM90 scale factors must be f32`);
      if (outDtype === "bf16") {
        if (c !== null) throw new TypeError(`${op}: SM90 FP8 GEMM with BF16 output (1D2D) takes no C`);
        if (rec.granB !== 128) throw new TypeError(`${op}: SM90 BF16-output FP8 GEMM needs recipe (1, 128, 128)`);
        if (N % 8 !== 0) throw new RangeError(`${op}: SM90 1D2D needs n % 8 == 0, got n = ${N}`);
      } else {
        if (c === null) throw new TypeError(`${op}: SM90 FP8 GEMM with FP32 output (1D1D) needs C`);
        if (rec.granB !== 1) throw new TypeError(`${op}: SM90 FP32-output FP8 GEMM needs recipe (1, 1, 128)`);
      }
      model = resolveModel(options, outDtype === "bf16" ? "sm90_1d2d" : "sm90_1d1d");
    } else {
      if (fp4) {
        for (const [t, nm] of [[A, "a"], [B, "b"]] as const) {
          if (t.dtype === "e2m1" && K % 128 !== 0 && t.strides[1] === 1) {
            throw new RangeError(`${op}: FP4 "${nm}" needs K % 128 == 0 (TMA inner dimension), got K = ${K}`);
          }
          if (t.dtype === "e2m1" && t.strides[1] !== 1 && t.shape[0] % 128 !== 0) {
            throw new RangeError(`${op}: MN-major FP4 "${nm}" needs its MN extent % 128 == 0`);
          }
        }
      }
      model = resolveModel(options, "sm100_1d1d");
    }
    model = { ...model, outDtype };
    requireScaledModel(model, op);
    const sfk = ceilDiv(K, granK);
    sfaV = decodeScales(sfa, M, sfk, rec.granA, "sfa", op);
    sfbV = decodeScales(sfb, N, sfk, rec.granB, "sfb", op);
    if (arch === "sm100") {
      requirePowerOfTwoScales(sfaV, "sfa", op);
      requirePowerOfTwoScales(sfbV, "sfb", op);
    }
  } else {
    if (kind === "bf16" && (A.dtype !== "bf16" || B.dtype !== "bf16")) {
      throw new TypeError(`${op}: BF16 GEMMs take bf16 A and B`);
    }
    outDtype = options.outDtype ?? (dOrC?.dtype as "bf16" | "f32" | undefined) ?? "bf16";
    if (dOrC && dOrC.dtype !== outDtype) {
      throw new TypeError(`${op}: output dtype ${outDtype} differs from d/c dtype ${dOrC.dtype}`);
    }
    model = { ...resolveModel(options, kind === "bf16" ? "bf16" : "cublaslt"), outDtype };
  }
  const shape = [M, width];
  if (d) requireRowMajor(d, "d", op);
  checkC(c, d, shape, outDtype, op);
  const out = initialOutput(d, shape, outDtype, op);
  // Early return (deepgemm-ops.md §5.1): m = 0 or n = 0 → nothing; k = 0 → D = C or 0; otherwise C is copied into D.
  if (M === 0 || N === 0) return { job: null, d: out };
  if (c !== null) copyInto(out, c);
  if (K === 0) {
    if (c === null) {
      const map = x.columns?.map ?? ((j: number) => j);
      for (let i = 0; i < M; i++) for (let j = 0; j < N; j++) out.data[out.index(i, map(j))] = 0;
    }
    return { job: null, d: out };
  }
  const pa = packKRows([A]), pb = packKRows([B]);
  const sfk = ceilDiv(K, granK);
  const colMap = x.columns?.map ?? ((j: number) => j);
  const problem: GemmProblem = {
    K,
    aOff: pa.offsets[0],
    bOff: pb.offsets[0],
    sfaOff: sfaV ? Int32Array.from({ length: M }, (_, i) => i * sfk) : null,
    sfbOff: sfbV ? Int32Array.from({ length: N }, (_, j) => j * sfk) : null,
    dRow: Int32Array.from({ length: M }, (_, i) => out.offset + i * out.strides[0]),
    dCol: Int32Array.from({ length: N }, (_, j) => colMap(j) * out.strides[1]),
    group: 0,
  };
  const job: GemmJob = {
    model,
    aFormat: formatOf(A),
    bFormat: formatOf(B),
    a: pa.codes,
    b: pb.codes,
    sfa: sfaV,
    sfb: sfbV,
    granK,
    c: c === null ? null : cByDIndex(c, out),
    problems: [problem],
  };
  return { job, d: out };
}

type Layout = "nt" | "nn" | "tn" | "tt";
const FP8_DTYPES: DType[] = ["e4m3", "e2m1"];
const SF_DTYPES: DType[] = ["f32", "i32"];

function orient(layout: Layout, a: Tensor, b: Tensor, sfa: Tensor | null, sfb: Tensor | null) {
  const ta = layout[0] === "t", tb = layout[1] === "n";
  return {
    A: ta ? a.transpose() : a,
    B: tb ? b.transpose() : b,
    sfa: sfa && ta ? sfa.transpose() : sfa,
    sfb: sfb && tb ? sfb.transpose() : sfb,
  };
}

/** The optional C and D of a normal GEMM: bf16 or f32, rank 2. */
function optionalCd(inputs: Record<string, Tensor>, name: string): { c: Tensor | null; d: Tensor | null } {
  return { c: maybe(inputs, "c", name, ["bf16", "f32"], 2), d: maybe(inputs, "d", name, ["bf16", "f32"], 2) };
}

const FP8_SCALARS = {
  arch: '"sm90" (default) or "sm100": whose argument rules and default model apply',
  recipe: "[gran_m, gran_n, gran_k]; default (1, 128, 128) (SM100 with int32 SFB: (1, 1, 128); FP4: gran_k 32)",
  recipe_a: "[gran_mn, gran_k] for A (with recipe_b; excludes recipe)",
  recipe_b: "[gran_mn, gran_k] for B",
};

function fp8Normal(layout: Layout, name: string): OpSpec {
  return makeOp({
    name,
    family: "fp8_gemm",
    inputs: ["a", "sfa", "b", "sfb", "c", "d"],
    outputs: ["d"],
    scalars: FP8_SCALARS,
    defaultModel: "sm90_1d2d",
    models: ["sm90_1d2d", "sm90_1d1d", "sm100_1d1d", "exact"],
    plan(inputs, scalars, options) {
      const a = need(inputs, "a", name, FP8_DTYPES, 2), b = need(inputs, "b", name, FP8_DTYPES, 2);
      const o = orient(layout, a, b, need(inputs, "sfa", name, SF_DTYPES, 2), need(inputs, "sfb", name, SF_DTYPES, 2));
      return planNormal({
        op: name,
        ...o,
        ...optionalCd(inputs, name),
        scalars,
        options,
        kind: "fp8",
      });
    },
  });
}

/**
 * `fp8_gemm_nt(a=(A[M,K], SFA), b=(B[N,K], SFB), d, c=None)`: `D = C + A·Bᵀ`.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Tensor } from "../tensor/tensor.ts";
 * import { fp8GemmNt } from "./normal_gemm.ts";
 * // D[0, j] = SFA · SFB · Σ 128 × (1.0 · 1.0), written as bf16 (SM90 1D2D needs n % 8 == 0).
 * const a = Tensor.from("e4m3", [1, 128], new Uint8Array(128).fill(0x38));
 * const b = Tensor.from("e4m3", [8, 128], new Uint8Array(8 * 128).fill(0x38));
 * const sfa = Tensor.from("f32", [1, 1], new Float32Array([1]));
 * const sfb = Tensor.from("f32", [1, 1], new Float32Array([0.5]));
 * const { d } = fp8GemmNt.run({ a, sfa, b, sfb }, {}, {});
 * assert.equal(d.at(0, 7), 0x4280); // 64.0
 * ```
 */
export const fp8GemmNt: OpSpec = fp8Normal("nt", "fp8_gemm_nt");
/** `fp8_gemm_nn`: B stored [K, N]. */
export const fp8GemmNn: OpSpec = fp8Normal("nn", "fp8_gemm_nn");
/** `fp8_gemm_tn`: A stored [K, M], B stored [K, N]. */
export const fp8GemmTn: OpSpec = fp8Normal("tn", "fp8_gemm_tn");
/** `fp8_gemm_tt`: A stored [K, M]. */
export const fp8GemmTt: OpSpec = fp8Normal("tt", "fp8_gemm_tt");
/** `fp8_fp4_gemm_*`: the same functions under their SM100 names. */
export const fp8Fp4GemmNt: OpSpec = fp8Normal("nt", "fp8_fp4_gemm_nt");
/** `fp8_fp4_gemm_nn`. */
export const fp8Fp4GemmNn: OpSpec = fp8Normal("nn", "fp8_fp4_gemm_nn");
/** `fp8_fp4_gemm_tn`. */
export const fp8Fp4GemmTn: OpSpec = fp8Normal("tn", "fp8_fp4_gemm_tn");
/** `fp8_fp4_gemm_tt`. */
export const fp8Fp4GemmTt: OpSpec = fp8Normal("tt", "fp8_fp4_gemm_tt");

function bf16Normal(layout: Layout, name: string, kind: "bf16" | "cublaslt"): OpSpec {
  const dtypes: DType[] = kind === "bf16" ? ["bf16"] : ["bf16", "e4m3", "e5m2"];
  return makeOp({
    name,
    family: kind === "bf16" ? "bf16_gemm" : "cublaslt",
    inputs: ["a", "b", "c", "d"],
    outputs: ["d"],
    scalars: {},
    defaultModel: kind === "bf16" ? "bf16" : "cublaslt",
    models: kind === "bf16" ? ["bf16", "exact"] : ["cublaslt", "exact"],
    plan(inputs, scalars, options) {
      const a = need(inputs, "a", name, dtypes, 2), b = need(inputs, "b", name, dtypes, 2);
      if (a.dtype !== b.dtype && kind === "bf16") throw new TypeError(`${name}: a and b must share a dtype`);
      const o = orient(layout, a, b, null, null);
      return planNormal({
        op: name,
        ...o,
        ...optionalCd(inputs, name),
        scalars,
        options: a.dtype === "bf16" && kind === "cublaslt" && options.tensorCore === undefined
          ? { model: "bf16", ...options }
          : options,
        kind,
      });
    },
  });
}

/**
 * `bf16_gemm_nt(a[M,K], b[N,K], d, c=None)`.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Tensor } from "../tensor/tensor.ts";
 * import { bf16GemmNt } from "./normal_gemm.ts";
 * // [1, 2]·[3, 1]ᵀ = 5 (bf16 0x40a0).
 * const a = Tensor.from("bf16", [1, 2], new Uint16Array([0x3f80, 0x4000]));
 * const b = Tensor.from("bf16", [1, 2], new Uint16Array([0x4040, 0x3f80]));
 * assert.equal(bf16GemmNt.run({ a, b }, {}, {}).d.at(0, 0), 0x40a0);
 * ```
 */
export const bf16GemmNt: OpSpec = bf16Normal("nt", "bf16_gemm_nt", "bf16");
/** `bf16_gemm_nn`. */
export const bf16GemmNn: OpSpec = bf16Normal("nn", "bf16_gemm_nn", "bf16");
/** `bf16_gemm_tn`. */
export const bf16GemmTn: OpSpec = bf16Normal("tn", "bf16_gemm_tn", "bf16");
/** `bf16_gemm_tt`. */
export const bf16GemmTt: OpSpec = bf16Normal("tt", "bf16_gemm_tt", "bf16");
/** `cublaslt_gemm_nt(a, b, d, c=None)`: raw FP8 (or BF16) through the cuBLASLt model; `D = A·Bᵀ + (C?1:0)·C`. */
export const cublasltGemmNt: OpSpec = bf16Normal("nt", "cublaslt_gemm_nt", "cublaslt");
/** `cublaslt_gemm_nn`. */
export const cublasltGemmNn: OpSpec = bf16Normal("nn", "cublaslt_gemm_nn", "cublaslt");
/** `cublaslt_gemm_tn`. */
export const cublasltGemmTn: OpSpec = bf16Normal("tn", "cublaslt_gemm_tn", "cublaslt");
/** `cublaslt_gemm_tt`. */
export const cublasltGemmTt: OpSpec = bf16Normal("tt", "cublaslt_gemm_tt", "cublaslt");

/**
 * `fp8_gemm_nt_skip_head_mid(a, b, d, head_splits=(L, Mid, R))`: logical column j is stored at physical column
 * `j + floor((j + R)/(L + R))·Mid` (`deepgemm-ops.md` §5.7), so each head of L+R logical columns is written as
 * `[L][Mid never written][R]`; D has `n + (n/(L+R))·Mid` columns; gran_k must be 128.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Tensor } from "../tensor/tensor.ts";
 * import { fp8GemmNtSkipHeadMid } from "./normal_gemm.ts";
 * // n = 8 logical columns, head_splits (L, Mid, R) = (1, 2, 1): stored at columns 0, 3, 4, 7, ... of 16.
 * const a = Tensor.from("e4m3", [1, 128], new Uint8Array(128).fill(0x38));
 * const b = Tensor.from("e4m3", [8, 128], new Uint8Array(8 * 128).fill(0x38));
 * const sfa = Tensor.from("f32", [1, 1], new Float32Array([1]));
 * const sfb = Tensor.from("f32", [1, 1], new Float32Array([1]));
 * const { d } = fp8GemmNtSkipHeadMid.run({ a, sfa, b, sfb }, { head_splits: [1, 2, 1] }, {});
 * const head = [0x4300, 0, 0, 0x4300]; // 128.0 where written, Mid columns never written
 * assert.deepEqual([...d.data], [...head, ...head, ...head, ...head]);
 * ```
 */
export const fp8GemmNtSkipHeadMid: OpSpec = makeOp({
  name: "fp8_gemm_nt_skip_head_mid",
  family: "fp8_gemm",
  inputs: ["a", "sfa", "b", "sfb", "d"],
  outputs: ["d"],
  scalars: { ...FP8_SCALARS, head_splits: "[L, Mid, R]: column split of each head (required)" },
  defaultModel: "sm90_1d2d",
  models: ["sm90_1d2d", "sm100_1d1d", "exact"],
  plan(inputs, scalars, options) {
    const op = "fp8_gemm_nt_skip_head_mid";
    const hs = recipeScalar(scalars, "head_splits", 3, op) ??
      (() => {
        throw new TypeError(`${op}: scalar "head_splits" = [L, Mid, R] is required`);
      })();
    const [L, Mid, R] = hs;
    const a = need(inputs, "a", op, FP8_DTYPES, 2), b = need(inputs, "b", op, FP8_DTYPES, 2);
    if (a.dtype !== "e4m3" || b.dtype !== "e4m3") throw new TypeError(`${op}: FP8 operands only`);
    const n = b.shape[0];
    if (n % (L + R) !== 0) throw new RangeError(`${op}: n = ${n} must be a multiple of L + R = ${L + R}`);
    const width = n + (n / (L + R)) * Mid;
    const rec = recipeScalar(scalars, "recipe", 3, op);
    if (rec && rec[2] !== 128) throw new TypeError(`${op}: gran_k must be 128`);
    return planNormal({
      op,
      A: a,
      B: b,
      sfa: need(inputs, "sfa", op, SF_DTYPES, 2),
      sfb: need(inputs, "sfb", op, SF_DTYPES, 2),
      c: null,
      d: maybe(inputs, "d", op, ["bf16", "f32"], 2),
      scalars,
      options,
      kind: "fp8",
      columns: { map: (j) => j + Math.floor((j + R) / (L + R)) * Mid, width },
    });
  },
});
