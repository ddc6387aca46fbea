/**
 * Typed wrappers of the ABI's GEMM families. Each checks dtypes, ranks and shapes (TypeError) and scalar options
 * (RangeError) before any native call, stages host tensors, calls the backend and writes the result into `d`.
 * The argument names follow DeepGEMM's Python API (`a`, `sfa`, `b`, `sfb`, `c`, `d`, `grouped_layout`, ...).
 *
 * @example
 * ```ts ignore
 * fp8Gemm(lib, { a, sfa, b, sfb, d, model: "sm90_1d2d" }); // d = bf16(A·Bᵀ) as DeepGEMM's SM90 1D2D kernel
 * ```
 * @module
 */
import type { NativeLibrary } from "./library.ts";
import { modelCode, type ModelName } from "./models.ts";
import {
  callStaged,
  checkC,
  contiguousLayout,
  expectTensorOf,
  FP8,
  fp8Descriptors,
  fp8Scales,
  gemmOperands,
  groupKs,
  int32,
  nativeOp,
  OUT,
  SCALE,
} from "./_op_checks.ts";
import { expectShape, expectTensor, type TensorArg } from "./tensor_args.ts";

/** A scale recipe per operand: `[gran_mn, gran_k]`. */
export type Recipe = readonly [number, number];

/** Arguments of {@link fp8Gemm}: `D = C + A·Bᵀ` with A `[M, K]` and B `[N, K]` views (any strides). */
export interface Fp8GemmArgs {
  /** FP8 `[M, K]`. */
  a: TensorArg;
  /** A scales `[ceil(M/gran_mn), ceil(K/gran_k)]`, f32 or ue8m0. */
  sfa: TensorArg;
  /** FP8 `[N, K]`. */
  b: TensorArg;
  /** B scales. */
  sfb: TensorArg;
  /** Output `[M, N]`, bf16 or f32 (written). */
  d: TensorArg;
  /** Optional addend, same dtype/shape as d. */
  c?: TensorArg | null;
  /** A recipe, default `[1, 128]`. */
  recipeA?: Recipe;
  /** B recipe, default `[128, 128]`. */
  recipeB?: Recipe;
  /** Kernel model (default: the backend's). */
  model?: ModelName;
}

/** FP8 GEMM (`fp8_gemm_{nt,nn,tn,tt}`): writes `d`. */
export function fp8Gemm(lib: NativeLibrary, args: Fp8GemmArgs): void {
  const f = nativeOp(lib, "go_fp8_gemm");
  const { a, b, d, c } = args;
  const dims = gemmOperands("normal", FP8, a, b, d);
  checkC(c, d, [dims.M, dims.N]);
  const recipe = fp8Scales(args, "normal", dims);
  const model = modelCode(args.model);
  callStaged(lib, "go_fp8_gemm", (s) =>
    f(
      ...fp8Descriptors(s, args),
      s.descriptor("c", c),
      s.descriptor("d", d, true),
      ...recipe,
      model,
    ));
}

/** Arguments of {@link fp8GemmSkipHeadMid}. */
export interface Fp8GemmSkipHeadMidArgs extends Omit<Fp8GemmArgs, "c"> {
  /** `(left, mid, right)` of DeepGEMM's `head_splits`. */
  headSplits: readonly [number, number, number];
}

/** `fp8_gemm_nt_skip_head_mid`: logical column j is stored at `j + floor((j + R)/(L + R))·Mid`; mid columns untouched. */
export function fp8GemmSkipHeadMid(lib: NativeLibrary, args: Fp8GemmSkipHeadMidArgs): void {
  const f = nativeOp(lib, "go_fp8_gemm_skip_head_mid");
  const { a, b, d } = args;
  expectTensor("a", a, FP8, 2);
  expectTensor("b", b, FP8, 2);
  expectTensor("d", d, OUT, 2);
  const [L, Mid, R] = args.headSplits.map((v, i) => int32(`headSplits[${i}]`, v, 0));
  if (L + R === 0) throw new RangeError("headSplits: left + right must be positive");
  const [M, K] = a.shape, N = b.shape[0];
  expectShape("b", b, [N, K]);
  if (N % (L + R) !== 0) throw new RangeError(`b: ${N} rows is not a multiple of left + right = ${L + R}`);
  expectShape("d", d, [M, N + (N / (L + R)) * Mid]);
  const recipe = fp8Scales(args, "normal", { G: 1, M, N, K });
  const model = modelCode(args.model);
  callStaged(lib, "go_fp8_gemm_skip_head_mid", (s) =>
    f(
      ...fp8Descriptors(s, args),
      s.descriptor("d", d, true),
      ...recipe,
      L,
      Mid,
      R,
      model,
    ));
}

/** Arguments of {@link mGroupedFp8GemmContiguous}. */
export interface MGroupedFp8GemmContiguousArgs extends Omit<Fp8GemmArgs, "c"> {
  /** i32 `[M]` group per row (−1 = padding), or with `usePsumLayout` `[G]` cumulative end rows. */
  groupedLayout: TensorArg;
  /** psum layout (default false). */
  usePsumLayout?: boolean;
  /** psum: also compute each group's last tile up to the mk_alignment boundary (default true, as DeepGEMM). */
  ensureZeroPadding?: boolean;
  /** Segment alignment = BLOCK_M (default 128). */
  mkAlignment?: number;
}

/** `m_grouped_fp8_gemm_nt_contiguous`: A `[M, K]`, B `[G, N, K]`, D `[M, N]`. */
export function mGroupedFp8GemmContiguous(lib: NativeLibrary, args: MGroupedFp8GemmContiguousArgs): void {
  const f = nativeOp(lib, "go_m_grouped_fp8_gemm_contiguous");
  const { a, b, d, groupedLayout } = args;
  const dims = gemmOperands("contiguous", FP8, a, b, d);
  const { usePsumLayout, mkAlignment } = contiguousLayout(args, dims);
  const recipe = fp8Scales(args, "contiguous", dims);
  const model = modelCode(args.model);
  callStaged(lib, "go_m_grouped_fp8_gemm_contiguous", (s) =>
    f(
      ...fp8Descriptors(s, args),
      s.descriptor("d", d, true),
      s.descriptor("grouped_layout", groupedLayout),
      ...recipe,
      usePsumLayout,
      mkAlignment,
      model,
    ));
}

/** Arguments of {@link mGroupedFp8GemmMasked}. */
export interface MGroupedFp8GemmMaskedArgs extends Omit<Fp8GemmArgs, "c"> {
  /** i32 `[G]`: valid rows per group. */
  maskedM: TensorArg;
}

/**
 * `m_grouped_fp8_gemm_nt_masked`: A `[G, Mmax, K]`, B `[G, N, K]`, D `[G, Mmax, N]`. Rows below masked_m hold A·Bᵀ;
 * as BLOCK_M 128 tiles do, the rest of a group's last tile is computed from A's padding, except that the SM90 models
 * write zeros in 64-row chunks starting at or after masked_m; rows from align(masked_m, 128) on are untouched
 * (kernels/gemm_oracle.h).
 */
export function mGroupedFp8GemmMasked(lib: NativeLibrary, args: MGroupedFp8GemmMaskedArgs): void {
  const f = nativeOp(lib, "go_m_grouped_fp8_gemm_masked");
  const { a, b, d, maskedM } = args;
  const dims = gemmOperands("masked", FP8, a, b, d);
  expectTensorOf("masked_m", maskedM, ["i32"], [dims.G]);
  const recipe = fp8Scales(args, "masked", dims);
  const model = modelCode(args.model);
  callStaged(lib, "go_m_grouped_fp8_gemm_masked", (s) =>
    f(
      ...fp8Descriptors(s, args),
      s.descriptor("d", d, true),
      s.descriptor("masked_m", maskedM),
      ...recipe,
      model,
    ));
}

/** K-grouped operand layouts (`go_k_grouped_layout`). */
export type KGroupedLayout = "sm90_nt_flat" | "sm100_tn";

/** Arguments of {@link kGroupedFp8Gemm}. */
export interface KGroupedFp8GemmArgs {
  /** Flat `[Σ M·k_g]` (sm90_nt_flat) or `[Σk, M]` (sm100_tn). */
  a: TensorArg;
  /** `[M, Σ ceil(k_g/gran_k)]` (flat) or `[Σ ceil(k_g/gran_k), M]` (tn). */
  sfa: TensorArg;
  /** Like a, with N. */
  b: TensorArg;
  /** Like sfa, with N. */
  sfb: TensorArg;
  /** Optional f32 `[G, M, N]`. */
  c?: TensorArg | null;
  /** f32 `[G, M, N]` (written). */
  d: TensorArg;
  /** i32 `[G]` (the values of `ks_cpu`). */
  ks: TensorArg;
  /** K values as numbers (used for the shape checks; must equal ks). */
  ksHost: readonly number[];
  /** Operand layout (default sm90_nt_flat). */
  layout?: KGroupedLayout;
  /** K granularity of the scales (default 128). */
  granK?: number;
  /** Kernel model. */
  model?: ModelName;
}

/** `k_grouped_fp8_gemm_{nt,tn}_contiguous`: `D[g] = C[g] + A_g·B_gᵀ` (fp32). */
export function kGroupedFp8Gemm(lib: NativeLibrary, args: KGroupedFp8GemmArgs): void {
  const f = nativeOp(lib, "go_k_grouped_fp8_gemm");
  const { a, b, sfa, sfb, c, d, ks } = args;
  const layout = args.layout ?? "sm90_nt_flat";
  if (layout !== "sm90_nt_flat" && layout !== "sm100_tn") throw new RangeError(`Unknown k-grouped layout "${layout}"`);
  const flat = layout === "sm90_nt_flat";
  const granK = int32("granK", args.granK ?? 128, 1);
  expectTensor("d", d, ["f32"], 3);
  const [G, M, N] = d.shape;
  checkC(c, d, [G, M, N]);
  const { sumK, sumKb } = groupKs(ks, args.ksHost, G, granK);
  expectTensor("a", a, FP8, flat ? 1 : 2);
  expectTensor("b", b, FP8, flat ? 1 : 2);
  expectTensor("sfa", sfa, SCALE, 2);
  expectTensor("sfb", sfb, SCALE, 2);
  if (flat) {
    expectShape("a", a, [M * sumK]);
    expectShape("b", b, [N * sumK]);
    expectShape("sfa", sfa, [M, sumKb]);
    expectShape("sfb", sfb, [N, sumKb]);
  } else {
    expectShape("a", a, [sumK, M]);
    expectShape("b", b, [sumK, N]);
    expectShape("sfa", sfa, [sumKb, M]);
    expectShape("sfb", sfb, [sumKb, N]);
  }
  const model = modelCode(args.model);
  callStaged(lib, "go_k_grouped_fp8_gemm", (s) =>
    f(
      ...fp8Descriptors(s, args),
      s.descriptor("c", c),
      s.descriptor("d", d, true),
      s.descriptor("ks", ks),
      flat ? 0 : 1,
      granK,
      model,
    ));
}

/** Arguments of {@link bf16Gemm}. */
export interface Bf16GemmArgs {
  /** bf16 `[M, K]`. */
  a: TensorArg;
  /** bf16 `[N, K]`. */
  b: TensorArg;
  /** Output `[M, N]` bf16 or f32. */
  d: TensorArg;
  /** Optional addend. */
  c?: TensorArg | null;
  /** Kernel model (default: the backend's). */
  model?: ModelName;
}

/** `bf16_gemm_{nt,nn,tn,tt}`: writes `d`. */
export function bf16Gemm(lib: NativeLibrary, args: Bf16GemmArgs): void {
  const f = nativeOp(lib, "go_bf16_gemm");
  const { a, b, c, d } = args;
  const { M, N } = gemmOperands("normal", ["bf16"], a, b, d);
  checkC(c, d, [M, N]);
  const model = modelCode(args.model);
  callStaged(
    lib,
    "go_bf16_gemm",
    (s) => f(s.descriptor("a", a), s.descriptor("b", b), s.descriptor("c", c), s.descriptor("d", d, true), model),
  );
}

/** Arguments of {@link mGroupedBf16GemmContiguous}. */
export interface MGroupedBf16GemmContiguousArgs extends Omit<Bf16GemmArgs, "c"> {
  /** i32 `[M]` (or `[G]` with psum). */
  groupedLayout: TensorArg;
  /** psum layout. */
  usePsumLayout?: boolean;
  /** psum: also compute each group's last tile up to the mk_alignment boundary (default true, as DeepGEMM). */
  ensureZeroPadding?: boolean;
  /** Segment alignment (default 128). */
  mkAlignment?: number;
}

/** `m_grouped_bf16_gemm_nt_contiguous`. */
export function mGroupedBf16GemmContiguous(lib: NativeLibrary, args: MGroupedBf16GemmContiguousArgs): void {
  const f = nativeOp(lib, "go_m_grouped_bf16_gemm_contiguous");
  const { a, b, d, groupedLayout } = args;
  const dims = gemmOperands("contiguous", ["bf16"], a, b, d);
  const { usePsumLayout, mkAlignment } = contiguousLayout(args, dims);
  const model = modelCode(args.model);
  callStaged(lib, "go_m_grouped_bf16_gemm_contiguous", (s) =>
    f(
      s.descriptor("a", a),
      s.descriptor("b", b),
      s.descriptor("d", d, true),
      s.descriptor("grouped_layout", groupedLayout),
      usePsumLayout,
      mkAlignment,
      model,
    ));
}

/** Arguments of {@link mGroupedBf16GemmMasked}. */
export interface MGroupedBf16GemmMaskedArgs extends Omit<Bf16GemmArgs, "c"> {
  /** i32 `[G]`. */
  maskedM: TensorArg;
}

/** `m_grouped_bf16_gemm_nt_masked`. */
export function mGroupedBf16GemmMasked(lib: NativeLibrary, args: MGroupedBf16GemmMaskedArgs): void {
  const f = nativeOp(lib, "go_m_grouped_bf16_gemm_masked");
  const { a, b, d, maskedM } = args;
  const { G } = gemmOperands("masked", ["bf16"], a, b, d);
  expectTensorOf("masked_m", maskedM, ["i32"], [G]);
  const model = modelCode(args.model);
  callStaged(lib, "go_m_grouped_bf16_gemm_masked", (s) =>
    f(
      s.descriptor("a", a),
      s.descriptor("b", b),
      s.descriptor("d", d, true),
      s.descriptor("masked_m", maskedM),
      model,
    ));
}

/** Arguments of {@link kGroupedBf16Gemm}. */
export interface KGroupedBf16GemmArgs {
  /** bf16 `[Σk, M]`. */
  a: TensorArg;
  /** bf16 `[Σk, N]`. */
  b: TensorArg;
  /** Optional f32 `[G, M, N]`. */
  c?: TensorArg | null;
  /** f32 `[G, M, N]`. */
  d: TensorArg;
  /** i32 `[G]`. */
  ks: TensorArg;
  /** The same K values as numbers. */
  ksHost: readonly number[];
  /** Kernel model. */
  model?: ModelName;
}

/** `k_grouped_bf16_gemm_tn_contiguous`: `D[g] = C[g] + A_gᵀ·B_g`. */
export function kGroupedBf16Gemm(lib: NativeLibrary, args: KGroupedBf16GemmArgs): void {
  const f = nativeOp(lib, "go_k_grouped_bf16_gemm");
  const { a, b, c, d, ks } = args;
  expectTensor("d", d, ["f32"], 3);
  const [G, M, N] = d.shape;
  checkC(c, d, [G, M, N]);
  const { sumK } = groupKs(ks, args.ksHost, G);
  expectTensor("a", a, ["bf16"], 2);
  expectTensor("b", b, ["bf16"], 2);
  expectShape("a", a, [sumK, M]);
  expectShape("b", b, [sumK, N]);
  const model = modelCode(args.model);
  callStaged(lib, "go_k_grouped_bf16_gemm", (s) =>
    f(
      s.descriptor("a", a),
      s.descriptor("b", b),
      s.descriptor("c", c),
      s.descriptor("d", d, true),
      s.descriptor("ks", ks),
      model,
    ));
}

/** Arguments of {@link cublasltGemm}. */
export interface CublasltGemmArgs {
  /** `[M, K]` view: e4m3 / e5m2 (raw, no scales) or bf16. */
  a: TensorArg;
  /** `[N, K]` view, FP8 with FP8 a, bf16 with bf16 a. */
  b: TensorArg;
  /** Output `[M, N]` bf16 or f32 (written). */
  d: TensorArg;
  /** Optional addend (beta = 1), same dtype/shape as d. */
  c?: TensorArg | null;
  /** 0 (default): the algorithm cuBLASLt's heuristic puts first; s ≥ 1: one with s K splits. */
  splitK?: number;
  /** Model (default `cublaslt`: the only one cuBLASLt computes). */
  model?: ModelName;
}

/** What cuBLASLt ran: `cublasLtMatmulAlgoConfigGetAttribute` of the algorithm, as the library reports it. */
export interface CublasltAlgorithm {
  /** The report as written (`algo=… tile=… stages=… splitk=… reduction=… swizzle=… custom=… lt=…`). */
  text: string;
  /** K splits (CUBLASLT_ALGO_CONFIG_SPLITK_NUM); 0 when cuBLASLt was not called (k = 0). */
  splitK: number;
  /** Every `key=value` field with a numeric value. */
  fields: Record<string, number>;
}

/**
 * `cublaslt_gemm_{nt,nn,tn,tt}` through cuBLASLt itself (optional entry `go_cublaslt_gemm`): writes `d` and returns
 * the algorithm cuBLASLt ran, whose split-K the `cublaslt` model takes as `--split-k`.
 */
export function cublasltGemm(lib: NativeLibrary, args: CublasltGemmArgs): CublasltAlgorithm {
  const f = nativeOp(lib, "go_cublaslt_gemm");
  const { a, b, c, d } = args;
  expectTensor("a", a, ["e4m3", "e5m2", "bf16"], 2);
  expectTensor("b", b, ["e4m3", "e5m2", "bf16"], 2);
  if ((a.dtype === "bf16") !== (b.dtype === "bf16")) {
    throw new TypeError(`a (${a.dtype}) and b (${b.dtype}) must both be FP8 or both bf16`);
  }
  expectTensor("d", d, OUT, 2);
  const [M, K] = a.shape, N = b.shape[0];
  expectShape("b", b, [N, K]);
  expectShape("d", d, [M, N]);
  checkC(c, d, [M, N]);
  const splitK = int32("splitK", args.splitK ?? 0, 0);
  if (splitK > 1024) throw new RangeError(`splitK must be at most 1024, got ${splitK}`);
  const model = modelCode(args.model);
  const buf = new Uint8Array(256);
  callStaged(lib, "go_cublaslt_gemm", (s) =>
    f(
      s.descriptor("a", a),
      s.descriptor("b", b),
      s.descriptor("c", c),
      s.descriptor("d", d, true),
      splitK,
      buf,
      BigInt(buf.length),
      model,
    ));
  const text = new TextDecoder().decode(buf.subarray(0, Math.max(0, buf.indexOf(0))));
  const fields: Record<string, number> = {};
  for (const m of text.matchAll(/(\w+)=(\d+)/g)) fields[m[1]] = Number(m[2]);
  return { text, splitK: fields.splitk ?? 0, fields };
}
