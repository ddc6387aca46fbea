/**
 * DeepGEMM's hard-coded Einstein sums (`deepgemm-ops.md` §5.6; DeepGEMM `csrc/apis/einsum.hpp` at `54e2261`):
 *
 * `einsum(expr, a, b, d, c=None, use_cublaslt=False)`, BF16 operands:
 * - `"bmk,bnk->mn"`: `D[m,n] = C + Σ_b Σ_k A[b,m,k]·B[b,n,k]`. DeepGEMM splits the (b,k) reduction across CTAs and adds
 *   the fp32 partials with atomics in a **nondeterministic order**, so no reference can be bit-exact against the GPU.
 *   The reference is the `bf16` model over the concatenated reduction (b outer, k inner, one tensor-core chain); compare
 *   it with DeepGEMM's own tolerance, `calc_diff < 1e-5` (`tests/test_einsum.py`, §9). FP32 D is accumulated into:
 *   `c` must be `d` itself and `D = fl32(C + F)`; BF16 D takes no `c` (`D = bf16(F)`, via a zeroed fp32 workspace).
 *   Contiguous operands, `k % 64 == 0`, `m % 64 == 0`, `n % 64 == 0`, `s·max(m, n) ≤ 2³¹ − 1`.
 * - `"bhr,hdr->bhd"`: `D[b,h,:] = A[b,h,:]·B[h]ᵀ` (one BF16 GEMM per head h over K = r), BF16 D, no C.
 * - `"bhd,hdr->bhr"`: `D[b,h,:] = A[b,h,:]·B[h]` (K = d), BF16 D, no C.
 *   Both need stride(2) == 1 for A, B and D (B may be a strided slice); DeepGEMM's test bound is `calc_diff < 1e-10`.
 *
 * `fp8_einsum(expr, a=(x, sfx), b=(y, sfy), d, c=None, recipe=(1, 128, 128))`, a batched FP8 GEMM over h:
 * - `"bhr,hdr->bhd"` (SM90 and SM100): x `[b,h,r]` with per-token SF `[b,h,⌈r/128⌉]`, y `[h,d,r]` with block SF
 *   `[h,⌈d/128⌉,⌈r/128⌉]`; SM90 is the 1D2D kernel (BF16 D, no C), SM100 the 1D1D one (BF16 or FP32 D, optional C);
 * - `"bhd,hdr->bhr"` (SM100 only): y is used transposed per head (`y.permute(0,2,1)`, SF likewise);
 * - `"bhd,bhr->hdr"` (SM100 only): `D[h] = C[h] + Σ_b x[b,h,:]ᵀ·y[b,h,:]`, per-channel SFs over b
 *   (`[⌈b/128⌉,h,·]`), recipe `(1, 1, 128)`; DeepGEMM's test runs FP32 D with C = D.
 * FP8 scale factors are fp32 here (SM100: exact powers of two, as DeepGEMM's UE8M0 packer demands).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Tensor } from "../tensor/tensor.ts";
 * import { einsum } from "./einsum.ts";
 * // "bhr,hdr->bhd" with b = 1, h = 2, r = 2, d = 1: A = [[1, 1], [2, 2]], B = [[[1, 1]], [[3, 0]]] (bf16 bits).
 * const one = 0x3f80, two = 0x4000, three = 0x4040;
 * const a = Tensor.from("bf16", [1, 2, 2], new Uint16Array([one, one, two, two]));
 * const b = Tensor.from("bf16", [2, 1, 2], new Uint16Array([one, one, three, 0]));
 * const { d } = einsum.run({ a, b }, { expr: "bhr,hdr->bhd" }, {});
 * assert.deepEqual([...d.data], [two, 0x40c0]); // 2 and 6
 * ```
 * @module
 */
import { type ModelOptions, type ResolvedModel, resolveModel } from "../kernel_models/kernel_models.ts";
import type { DType } from "../tensor/dtype.ts";
import { Tensor } from "../tensor/tensor.ts";
import type { GemmJob, GemmProblem } from "./job.ts";
import { packKRows } from "./job.ts";
import { recipeScalar } from "./normal_gemm.ts";
import { ceilDiv } from "../layout/tma_aligned.ts";
import type { OpSpec, Plan } from "./op_spec.ts";
import { cByDIndex, checkC, copyInto, initialOutput } from "./output.ts";
import { archScalar } from "./scalar_arguments.ts";
import { decodeScales, requirePowerOfTwoScales } from "./scale_factors.ts";
import { expectShape, maybe, need, requireKMajor, requireRowMajor } from "./tensor_arguments.ts";
import { makeOp } from "./run.ts";

/** The expressions `einsum` accepts (DeepGEMM's hard-coded list). */
export const EINSUM_EXPRESSIONS: readonly string[] = Object.freeze(["bmk,bnk->mn", "bhr,hdr->bhd", "bhd,hdr->bhr"]);

/** The expressions `fp8_einsum` accepts (the last two on SM100 only). */
export const FP8_EINSUM_EXPRESSIONS: readonly string[] = Object.freeze([
  "bhr,hdr->bhd",
  "bhd,hdr->bhr",
  "bhd,bhr->hdr",
]);

function exprScalar(scalars: Record<string, unknown>, op: string, known: readonly string[]): string {
  const e = scalars.expr;
  if (e === undefined || e === null) {
    throw new TypeError(`${op}: scalar "expr" is required (one of ${known.join(", ")})`);
  }
  if (typeof e !== "string") throw new TypeError(`${op}: scalar "expr" must be a string`);
  const norm = e.replace(/\s+/g, "");
  if (!known.includes(norm)) {
    throw new RangeError(`${op}: unsupported einsum expression "${e}"; supported: ${known.join(", ")}`);
  }
  return norm;
}

function requireInnerStride1(t: Tensor, name: string, op: string, expr: string): void {
  if (t.shape[2] > 1 && t.strides[2] !== 1) {
    throw new TypeError(`${op} "${expr}": "${name}" needs stride(2) == 1, got strides [${t.strides.join(", ")}]`);
  }
}

function requireContiguous(t: Tensor, name: string, op: string): void {
  if (!t.isContiguous()) throw new TypeError(`${op} "bmk,bnk->mn": "${name}" must be contiguous`);
}

/** One batch entry of a batched GEMM: logical [M, K] / [N, K] operand views, scales and the D (and C) view. */
interface BatchEntry {
  A: Tensor;
  B: Tensor;
  sfa: Tensor | null;
  sfb: Tensor | null;
  D: Tensor;
}

/** Lowers batch entries that share M, N, K to one job (one problem per entry, group = entry index). */
function batchedJob(
  entries: readonly BatchEntry[],
  K: number,
  model: ResolvedModel,
  granK: number,
  granB: number,
  c: Float64Array | null,
  op: string,
): GemmJob {
  const pa = packKRows(entries.map((e) => e.A)), pb = packKRows(entries.map((e) => e.B));
  const M = entries[0].A.shape[0], N = entries[0].B.shape[0];
  const sfk = ceilDiv(K, granK);
  const scaled = entries[0].sfa !== null;
  const sfaV = scaled ? new Float64Array(entries.length * M * sfk) : null;
  const sfbV = scaled ? new Float64Array(entries.length * N * sfk) : null;
  const problems: GemmProblem[] = entries.map((e, h) => {
    if (sfaV && sfbV) {
      sfaV.set(decodeScales(e.sfa!, M, sfk, 1, "sfa", op), h * M * sfk);
      sfbV.set(decodeScales(e.sfb!, N, sfk, granB, "sfb", op), h * N * sfk);
    }
    return {
      K,
      aOff: pa.offsets[h],
      bOff: pb.offsets[h],
      sfaOff: sfaV ? Int32Array.from({ length: M }, (_, i) => (h * M + i) * sfk) : null,
      sfbOff: sfbV ? Int32Array.from({ length: N }, (_, j) => (h * N + j) * sfk) : null,
      dRow: Int32Array.from({ length: M }, (_, i) => e.D.offset + i * e.D.strides[0]),
      dCol: Int32Array.from({ length: N }, (_, j) => j * e.D.strides[1]),
      group: h,
    };
  });
  return {
    model,
    aFormat: entries[0].A.dtype,
    bFormat: entries[0].B.dtype,
    a: pa.codes,
    b: pb.codes,
    sfa: sfaV,
    sfb: sfbV,
    granK,
    c,
    problems,
  };
}

function zeroFill(out: Tensor): void {
  out.data.fill(0 as never);
}

function bf16Model(options: ModelOptions, op: string, out: "bf16" | "f32"): ResolvedModel {
  if (options.outDtype !== undefined && options.outDtype !== out) {
    throw new TypeError(`${op}: the output dtype is ${out} (D's dtype), not ${options.outDtype}`);
  }
  return { ...resolveModel(options, "bf16"), outDtype: out };
}

function planBmkBnkMn(inputs: Record<string, Tensor>, options: ModelOptions, op: string): Plan {
  const a = need(inputs, "a", op, ["bf16"], 3), b = need(inputs, "b", op, ["bf16"], 3);
  const c = maybe(inputs, "c", op, ["bf16", "f32"], 2);
  const d = maybe(inputs, "d", op, ["bf16", "f32"], 2) ?? c;
  const [s, m, k] = a.shape, [s2, n, k2] = b.shape;
  if (s !== s2 || k !== k2) {
    throw new TypeError(`${op} "bmk,bnk->mn": a [${a.shape}] and b [${b.shape}] disagree on b or k`);
  }
  const outDtype: "bf16" | "f32" = (d?.dtype as "bf16" | "f32" | undefined) ?? options.outDtype ?? "bf16";
  if (outDtype === "f32") {
    // "Currently FP32 only support the accumulated expression": c must be d itself.
    if (
      c === null || d === null || c.data !== d.data || c.offset !== d.offset ||
      c.strides.some((x, i) => x !== d.strides[i])
    ) {
      throw new TypeError(`${op} "bmk,bnk->mn": FP32 D is accumulated into, so "c" must be the same tensor as "d"`);
    }
  } else if (c !== null) {
    throw new TypeError(`${op} "bmk,bnk->mn": BF16 D takes no "c"`);
  }
  requireContiguous(a, "a", op);
  requireContiguous(b, "b", op);
  if (d) requireContiguous(d, "d", op);
  if (k % 64 !== 0) throw new RangeError(`${op} "bmk,bnk->mn": k must be a multiple of 64 (BLOCK_K), got ${k}`);
  if (m % 64 !== 0 || n % 64 !== 0) {
    throw new RangeError(`${op} "bmk,bnk->mn": m and n must be multiples of 64, got m = ${m}, n = ${n}`);
  }
  if (s * Math.max(m, n) > 2 ** 31 - 1) {
    throw new RangeError(`${op} "bmk,bnk->mn": s·max(m, n) = ${s * Math.max(m, n)} exceeds 2^31 − 1`);
  }
  const model = bf16Model(options, op, outDtype);
  checkC(c, d, [m, n], outDtype, op);
  const out = initialOutput(d, [m, n], outDtype, op);
  if (m === 0 || n === 0) return { job: null, d: out };
  if (outDtype === "bf16") zeroFill(out); // computed into a zeroed fp32 workspace, then d.copy_(workspace)
  const K = s * k;
  if (K === 0) return { job: null, d: out };
  // The concatenated (b, k) reduction: row i holds A[0,i,:], A[1,i,:], … (b outer, k inner).
  const cat = (t: Tensor, rows: number) => {
    const src = t.data as Uint16Array, dst = new Uint16Array(rows * K);
    for (let i = 0; i < rows; i++) {
      for (let bb = 0; bb < s; bb++) {
        const from = t.offset + bb * t.strides[0] + i * t.strides[1];
        dst.set(src.subarray(from, from + k), i * K + bb * k);
      }
    }
    return Tensor.from("bf16", [rows, K], dst);
  };
  const job = batchedJob(
    [{ A: cat(a, m), B: cat(b, n), sfa: null, sfb: null, D: out }],
    K,
    model,
    128,
    1,
    outDtype === "f32" ? cByDIndex(c!, out) : null,
    op,
  );
  return { job, d: out };
}

function planBhGemm(
  inputs: Record<string, Tensor>,
  scalars: Record<string, unknown>,
  options: ModelOptions,
  op: string,
  expr: "bhr,hdr->bhd" | "bhd,hdr->bhr",
): Plan {
  const a = need(inputs, "a", op, ["bf16"], 3), b = need(inputs, "b", op, ["bf16"], 3);
  if (maybe(inputs, "c", op, ["bf16", "f32"], 3) !== null) throw new TypeError(`${op} "${expr}": takes no "c"`);
  const d = maybe(inputs, "d", op, ["bf16", "f32"], 3);
  if (d !== null && d.dtype !== "bf16") throw new TypeError(`${op} "${expr}": "d" must be bf16, got ${d.dtype}`);
  const cub = scalars.use_cublaslt ?? false;
  if (typeof cub !== "boolean") throw new TypeError(`${op}: scalar "use_cublaslt" must be a boolean`);
  const [bs, h, x] = a.shape, [h2, dd, r] = b.shape;
  // bhr,hdr->bhd: x = r, K = r, output width d. bhd,hdr->bhr: x = d, K = d, output width r.
  const K = expr === "bhr,hdr->bhd" ? x : dd;
  if (h !== h2 || (expr === "bhr,hdr->bhd" ? r !== x : dd !== x)) {
    throw new TypeError(`${op} "${expr}": a [${a.shape}] and b [${b.shape}] disagree`);
  }
  const width = expr === "bhr,hdr->bhd" ? dd : r;
  requireInnerStride1(a, "a", op, expr);
  requireInnerStride1(b, "b", op, expr);
  if (d) requireInnerStride1(d, "d", op, expr);
  const model = bf16Model(options, op, "bf16");
  const out = initialOutput(d, [bs, h, width], "bf16", op);
  if (bs === 0 || h === 0 || width === 0) return { job: null, d: out };
  if (K === 0) {
    zeroFill(out); // [inferred] an empty reduction writes A·Bᵀ = 0
    return { job: null, d: out };
  }
  const entries: BatchEntry[] = Array.from({ length: h }, (_, hh) => ({
    A: a.select(1, hh),
    B: expr === "bhr,hdr->bhd" ? b.select(0, hh) : b.select(0, hh).transpose(),
    sfa: null,
    sfb: null,
    D: out.select(1, hh),
  }));
  return { job: batchedJob(entries, K, model, 128, 1, null, op), d: out };
}

/**
 * `einsum(expr, a, b, d, c=None, use_cublaslt=False)`: DeepGEMM's BF16 Einstein sums (module doc).
 * `use_cublaslt` is accepted for the two `bh…` expressions and evaluated with the same `bf16` model.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Tensor } from "../tensor/tensor.ts";
 * import { einsum } from "./einsum.ts";
 * const a = Tensor.from("bf16", [1, 1, 2], new Uint16Array([0x3f80, 0x4000])); // [1, 2]
 * const b = Tensor.from("bf16", [1, 1, 2], new Uint16Array([0x4040, 0x3f80])); // [3, 1]
 * assert.equal(einsum.run({ a, b }, { expr: "bhr,hdr->bhd" }, {}).d.at(0, 0, 0), 0x40a0); // 5
 * assert.throws(() => einsum.run({ a, b }, { expr: "ij,jk->ik" }, {}), RangeError);
 * ```
 */
export const einsum: OpSpec = makeOp({
  name: "einsum",
  family: "einsum",
  inputs: ["a", "b", "c", "d"],
  outputs: ["d"],
  scalars: {
    expr: `required: ${EINSUM_EXPRESSIONS.join(" | ")}`,
    use_cublaslt: "run the bh… expressions through cuBLASLt (same bf16 model here); rejected for bmk,bnk->mn",
  },
  defaultModel: "bf16",
  models: ["bf16", "exact"],
  plan(inputs, scalars, options) {
    const op = "einsum";
    const expr = exprScalar(scalars, op, EINSUM_EXPRESSIONS);
    if (expr === "bmk,bnk->mn") {
      if (scalars.use_cublaslt === true) throw new TypeError(`${op} "bmk,bnk->mn": use_cublaslt is not supported`);
      return planBmkBnkMn(inputs, options, op);
    }
    return planBhGemm(inputs, scalars, options, op, expr as "bhr,hdr->bhd" | "bhd,hdr->bhr");
  },
});

const FP8_DTYPES: DType[] = ["e4m3"];

/**
 * `fp8_einsum(expr, a=(x, sfx), b=(y, sfy), d, c=None, recipe=(1, 128, 128))`: DeepGEMM's batched FP8 Einstein sums
 * (module doc). Tensors: `a`, `sfa` (= sfx), `b`, `sfb` (= sfy), `c`, `d`; scalars `expr`, `recipe`, `arch`.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Tensor } from "../tensor/tensor.ts";
 * import { fp8Einsum } from "./einsum.ts";
 * // "bhr,hdr->bhd" (SM90, recipe (1, 128, 128)): b = h = d = 1, r = 128 of 1.0, unit scales → 128.
 * const a = Tensor.from("e4m3", [1, 1, 128], new Uint8Array(128).fill(0x38));
 * const sfa = Tensor.from("f32", [1, 1, 1], new Float32Array([1]));
 * const b = Tensor.from("e4m3", [1, 1, 128], new Uint8Array(128).fill(0x38));
 * const sfb = Tensor.from("f32", [1, 1, 1], new Float32Array([1]));
 * const { d } = fp8Einsum.run({ a, sfa, b, sfb }, { expr: "bhr,hdr->bhd" }, {});
 * assert.equal(d.at(0, 0, 0), 0x4300);
 * ```
 */
export const fp8Einsum: OpSpec = makeOp({
  name: "fp8_einsum",
  family: "einsum",
  inputs: ["a", "sfa", "b", "sfb", "c", "d"],
  outputs: ["d"],
  scalars: {
    expr: `required: ${FP8_EINSUM_EXPRESSIONS.join(" | ")} (the last two SM100 only)`,
    recipe: "[gran_m, gran_n, gran_k], default (1, 128, 128); bhd,bhr->hdr uses (1, 1, 128)",
    arch: '"sm90" (default) or "sm100": whose rules and default model apply',
  },
  defaultModel: "sm90_1d2d",
  models: ["sm90_1d2d", "sm100_1d1d", "exact"],
  plan(inputs, scalars, options) {
    const op = "fp8_einsum";
    const expr = exprScalar(scalars, op, FP8_EINSUM_EXPRESSIONS);
    const arch = archScalar(scalars, op, options.model === "sm100_1d1d" ? "sm100" : "sm90");
    if (arch === "sm90" && expr !== "bhr,hdr->bhd") {
      throw new TypeError(`${op}: "${expr}" exists on SM100 only (SM90 supports "bhr,hdr->bhd")`);
    }
    const x = need(inputs, "a", op, FP8_DTYPES, 3), y = need(inputs, "b", op, FP8_DTYPES, 3);
    const sfx = need(inputs, "sfa", op, ["f32"], 3), sfy = need(inputs, "sfb", op, ["f32"], 3);
    const c = maybe(inputs, "c", op, ["bf16", "f32"], 3);
    const d = maybe(inputs, "d", op, ["bf16", "f32"], 3);
    const rec = recipeScalar(scalars, "recipe", 3, op) ?? [1, 128, 128];
    const [granA, granB, granK] = rec;
    if (granA !== 1) throw new TypeError(`${op}: SFA granularity along M must be 1, got ${granA}`);
    if (granB !== 1 && granB !== 128) throw new TypeError(`${op}: SFB granularity must be 1 or 128, got ${granB}`);
    if (arch === "sm90" && (granK !== 128 || granB !== 128)) {
      throw new TypeError(`${op}: SM90 (1D2D) needs recipe (1, 128, 128), got (${rec.join(", ")})`);
    }
    if (arch === "sm100" && granK !== 32 && granK !== 128) {
      throw new TypeError(`${op}: SM100 scale gran_k must be 32 or 128, got ${granK}`);
    }
    const outDtype: "bf16" | "f32" = (d ?? c)?.dtype as "bf16" | "f32" | undefined ?? options.outDtype ?? "bf16";
    if (options.outDtype !== undefined && options.outDtype !== outDtype) {
      throw new TypeError(`${op}: output dtype ${options.outDtype} differs from d/c dtype ${outDtype}`);
    }
    if (arch === "sm90") {
      if (outDtype !== "bf16") throw new TypeError(`${op}: SM90 batched FP8 GEMM (1D2D) writes BF16 D only`);
      if (c !== null) throw new TypeError(`${op}: SM90 batched FP8 GEMM (1D2D) takes no C`);
    }
    const [xb, xh, xk] = x.shape;
    let M: number, N: number, K: number, H: number, outShape: number[];
    const entry: (h: number, out: Tensor) => BatchEntry = (() => {
      if (expr === "bhr,hdr->bhd") {
        const [h, dd, r] = y.shape;
        if (h !== xh || r !== xk) throw new TypeError(`${op} "${expr}": a [${x.shape}] and b [${y.shape}] disagree`);
        [H, M, N, K, outShape] = [h, xb, dd, r, [xb, h, dd]];
        expectShape(sfx, [xb, h, ceilDiv(r, granK)], "sfa", op);
        expectShape(sfy, [h, ceilDiv(dd, granB), ceilDiv(r, granK)], "sfb", op);
        return (hh, out) => ({
          A: x.select(1, hh),
          B: y.select(0, hh),
          sfa: sfx.select(1, hh),
          sfb: sfy.select(0, hh),
          D: out.select(1, hh),
        });
      }
      if (expr === "bhd,hdr->bhr") {
        const [h, dd, r] = y.shape;
        if (h !== xh || dd !== xk) throw new TypeError(`${op} "${expr}": a [${x.shape}] and b [${y.shape}] disagree`);
        [H, M, N, K, outShape] = [h, xb, r, dd, [xb, h, r]];
        expectShape(sfx, [xb, h, ceilDiv(dd, granK)], "sfa", op);
        expectShape(sfy, [h, ceilDiv(dd, granK), ceilDiv(r, granB)], "sfb", op);
        return (hh, out) => ({
          A: x.select(1, hh),
          B: y.select(0, hh).transpose(),
          sfa: sfx.select(1, hh),
          sfb: sfy.select(0, hh).transpose(),
          D: out.select(1, hh),
        });
      }
      // bhd,bhr->hdr: (batch, m, n, k) = (h, d, r, b)
      const [yb, h, r] = y.shape;
      if (yb !== xb || h !== xh) throw new TypeError(`${op} "${expr}": a [${x.shape}] and b [${y.shape}] disagree`);
      [H, M, N, K, outShape] = [h, xk, r, xb, [h, xk, r]];
      expectShape(sfx, [ceilDiv(xb, granK), h, xk], "sfa", op);
      expectShape(sfy, [ceilDiv(xb, granK), h, ceilDiv(r, granB)], "sfb", op);
      return (hh, out) => ({
        A: x.select(1, hh).transpose(),
        B: y.select(1, hh).transpose(),
        sfa: sfx.select(1, hh).transpose(),
        sfb: sfy.select(1, hh).transpose(),
        D: out.select(0, hh),
      });
    })();
    if (d) requireRowMajor(d, "d", op);
    checkC(c, d, outShape!, outDtype, op);
    const out = initialOutput(d, outShape!, outDtype, op);
    const fallback = arch === "sm90" ? "sm90_1d2d" : "sm100_1d1d";
    const model: ResolvedModel = { ...resolveModel(options, fallback), outDtype };
    // Early return (deepgemm-ops.md §5.1): an empty batch or m/n = 0 → nothing; k = 0 → D = C or 0.
    if (H! === 0 || M! === 0 || N! === 0) return { job: null, d: out };
    if (c !== null) copyInto(out, c);
    if (K! === 0) {
      if (c === null) zeroFill(out);
      return { job: null, d: out };
    }
    const entries = Array.from({ length: H! }, (_, hh) => entry(hh, out));
    if (arch === "sm90") {
      requireKMajor(entries[0].A, "a", op, "SM90 FP8");
      requireKMajor(entries[0].B, "b", op, "SM90 FP8");
    }
    const job = batchedJob(entries, K!, model, granK, granB, c === null ? null : cByDIndex(c, out), op);
    if (arch === "sm100") {
      requirePowerOfTwoScales(job.sfa!, "sfa", op);
      requirePowerOfTwoScales(job.sfb!, "sfb", op);
    }
    return { job, d: out };
  },
});

/** The einsum ops of the registry. */
export const EINSUM_OPS: OpSpec[] = [einsum, fp8Einsum];
