/**
 * What the typed operation wrappers (`gemm_ops.ts`, `attention_ops.ts`) share: looking up an optional symbol, the
 * stage → call → check → copy-back sequence, scalar checks, and the operand/scale/layout shape rules of the GEMM
 * families (deepgemm-ops.md §5). Every check throws before any native call: TypeError for a wrong dtype, rank or
 * shape, RangeError for a scalar out of range.
 * @module
 */
import type { DType } from "../reference/tensor/dtype.ts";
import type { NativeLibrary, NativeSymbols } from "./library.ts";
import { expectShape, expectTensor, Staging, type TensorArg } from "./tensor_args.ts";

/** FP8 operand dtypes. */
export const FP8: readonly DType[] = ["e4m3", "e5m2"];
/** Scale-factor dtypes. */
export const SCALE: readonly DType[] = ["f32", "ue8m0"];
/** Output (and C) dtypes. */
export const OUT: readonly DType[] = ["f32", "bf16"];

/** `ceil(a / b)` for positive integers. */
export function ceilDiv(a: number, b: number): number {
  return Math.ceil(a / b);
}

/** `v` when it is an integer in `[min, 2^31)`, else a RangeError naming `name`. */
export function int32(name: string, v: number, min: number): number {
  if (!Number.isSafeInteger(v) || v < min || v > 0x7fffffff) {
    throw new RangeError(`${name} must be an integer in [${min}, 2^31), got ${v}`);
  }
  return v;
}

/**
 * The native function `name` of an open library.
 * @throws {TypeError} when the backend does not implement it (the optional symbol is absent)
 */
export function nativeOp<K extends keyof NativeSymbols>(lib: NativeLibrary, name: K): NonNullable<NativeSymbols[K]> {
  lib.assertOpen();
  const f = lib.symbols[name];
  if (f === null || f === undefined) {
    throw new TypeError(`Backend "${lib.info.name}" (${lib.path}) does not implement ${String(name)}`);
  }
  return f as NonNullable<NativeSymbols[K]>;
}

/**
 * Stages the tensors `call` asks descriptors for, runs it, turns a non-zero status into a NativeError naming `name`,
 * copies the outputs back into their host tensors and frees the staged buffers.
 */
export function callStaged(lib: NativeLibrary, name: string, call: (s: Staging) => number): void {
  using s = new Staging(lib);
  lib.check(call(s), name);
  s.finish();
}

/** {@link expectTensor} with the rank of `shape`, then {@link expectShape}. */
export function expectTensorOf(name: string, t: TensorArg, dtypes: readonly DType[], shape: readonly number[]): void {
  expectTensor(name, t, dtypes, shape.length);
  expectShape(name, t, shape);
}

/** Checks an optional addend: same rank, shape and dtype as `d`. */
export function checkC(c: TensorArg | null | undefined, d: TensorArg, shape: readonly number[]): void {
  if (c === null || c === undefined) return;
  expectTensorOf("c", c, OUT, shape);
  if (c.dtype !== d.dtype) throw new TypeError(`c: dtype "${c.dtype}" differs from d's "${d.dtype}"`);
}

/**
 * Operand layouts of the M-side GEMM families: normal A `[M, K]`, B `[N, K]`, D `[M, N]`; m-grouped contiguous
 * B `[G, N, K]`; m-grouped masked A `[G, M, K]`, B `[G, N, K]`, D `[G, M, N]` (M = the padded Mmax).
 */
export type GemmLayout = "normal" | "contiguous" | "masked";

/** Problem sizes read from the operands (G = 1 for the normal layout). */
export interface GemmDims {
  /** Groups. */
  G: number;
  /** Rows of A and D (per group for masked). */
  M: number;
  /** Columns of D (rows of B). */
  N: number;
  /** Reduction length. */
  K: number;
}

/** Checks A, B and D of a GEMM family (dtype and rank first, then shapes) and returns the sizes. */
export function gemmOperands(
  layout: GemmLayout,
  dtypes: readonly DType[],
  a: TensorArg,
  b: TensorArg,
  d: TensorArg,
): GemmDims {
  const groupedA = layout === "masked", groupedB = layout !== "normal";
  expectTensor("a", a, dtypes, groupedA ? 3 : 2);
  expectTensor("b", b, dtypes, groupedB ? 3 : 2);
  expectTensor("d", d, OUT, groupedA ? 3 : 2);
  const [G, M, K] = groupedA ? a.shape : [groupedB ? b.shape[0] : 1, ...a.shape];
  const N = b.shape[groupedB ? 1 : 0];
  expectShape("b", b, groupedB ? [G, N, K] : [N, K]);
  expectShape("d", d, groupedA ? [G, M, N] : [M, N]);
  return { G, M, N, K };
}

/** A scale recipe `[gran_mn, gran_k]` (the type behind `Recipe` of gemm_ops.ts). */
type RecipeArg = readonly [number, number];

function recipeOf(name: string, r: RecipeArg | undefined, fallback: RecipeArg): RecipeArg {
  const v = r ?? fallback;
  if (!Array.isArray(v) || v.length !== 2) throw new TypeError(`${name} must be [gran_mn, gran_k]`);
  return [int32(`${name}[0]`, v[0], 1), int32(`${name}[1]`, v[1], 1)];
}

/** The scale arguments of the FP8 families. */
export interface Fp8ScaleArgs {
  /** A scales. */
  sfa: TensorArg;
  /** B scales. */
  sfb: TensorArg;
  /** A recipe, default `[1, 128]`. */
  recipeA?: RecipeArg;
  /** B recipe, default `[128, 128]`. */
  recipeB?: RecipeArg;
}

/**
 * Checks the recipes and the scale tensors of an FP8 family: sfa `[ceil(M/gran_a_mn), ceil(K/gran_a_k)]`, sfb
 * `[ceil(N/gran_b_mn), ceil(K/gran_b_k)]`, each with a leading G where its operand is grouped.
 * @returns `[gran_a_mn, gran_a_k, gran_b_mn, gran_b_k]` in the ABI's argument order
 */
export function fp8Scales(
  args: Fp8ScaleArgs,
  layout: GemmLayout,
  { G, M, N, K }: GemmDims,
): [number, number, number, number] {
  const ra = recipeOf("recipeA", args.recipeA, [1, 128]), rb = recipeOf("recipeB", args.recipeB, [128, 128]);
  const leadA = layout === "masked" ? [G] : [], leadB = layout === "normal" ? [] : [G];
  expectTensor("sfa", args.sfa, SCALE, leadA.length + 2);
  expectTensor("sfb", args.sfb, SCALE, leadB.length + 2);
  expectShape("sfa", args.sfa, [...leadA, ceilDiv(M, ra[0]), ceilDiv(K, ra[1])]);
  expectShape("sfb", args.sfb, [...leadB, ceilDiv(N, rb[0]), ceilDiv(K, rb[1])]);
  return [ra[0], ra[1], rb[0], rb[1]];
}

/** Descriptor of a staged argument (null for an absent optional tensor). */
type Descriptor = Uint8Array<ArrayBuffer> | null;

/** The descriptors of `(a, sfa, b, sfb)`, the leading arguments of every FP8 family (`FP8_OPERANDS` of symbols.ts). */
export function fp8Descriptors(
  s: Staging,
  { a, sfa, b, sfb }: { a: TensorArg; sfa: TensorArg; b: TensorArg; sfb: TensorArg },
): [Descriptor, Descriptor, Descriptor, Descriptor] {
  return [s.descriptor("a", a), s.descriptor("sfa", sfa), s.descriptor("b", b), s.descriptor("sfb", sfb)];
}

/** The grouped-layout options of the m-grouped contiguous families. */
export interface ContiguousLayoutArgs {
  /** i32 `[M]` group per row, or with `usePsumLayout` `[G]` cumulative end rows. */
  groupedLayout: TensorArg;
  /** psum layout (default false). */
  usePsumLayout?: boolean;
  /** psum: also compute each group's last tile up to the mk_alignment boundary (default true). */
  ensureZeroPadding?: boolean;
  /** Segment alignment (default 128). */
  mkAlignment?: number;
}

/**
 * Checks `grouped_layout` and the alignment of an m-grouped contiguous call.
 * @returns the ABI's `use_psum_layout` flags (0; 1 = psum; 3 = psum with ensure_zero_padding) and `mk_alignment`
 */
export function contiguousLayout(
  args: ContiguousLayoutArgs,
  { G, M }: GemmDims,
): { usePsumLayout: number; mkAlignment: number } {
  const psum = args.usePsumLayout ?? false;
  expectTensorOf("grouped_layout", args.groupedLayout, ["i32"], [psum ? G : M]);
  const mkAlignment = int32("mkAlignment", args.mkAlignment ?? 128, 1);
  return { usePsumLayout: psum ? (args.ensureZeroPadding ?? true ? 3 : 1) : 0, mkAlignment };
}

/**
 * Checks the K values of a k-grouped call: `ks` i32 `[G]`, and `ksHost` G integers ≥ 0.
 * @returns ΣK and Σ ceil(k_g / granK) (the scale columns of the FP8 form)
 */
export function groupKs(
  ks: TensorArg,
  ksHost: readonly number[],
  G: number,
  granK = 1,
): { sumK: number; sumKb: number } {
  expectTensorOf("ks", ks, ["i32"], [G]);
  if (ksHost.length !== G) throw new TypeError(`ksHost: ${ksHost.length} values for ${G} groups`);
  let sumK = 0, sumKb = 0;
  for (const [i, k] of ksHost.entries()) {
    int32(`ksHost[${i}]`, k, 0);
    sumK += k;
    sumKb += ceilDiv(k, granK);
  }
  return { sumK, sumKb };
}
