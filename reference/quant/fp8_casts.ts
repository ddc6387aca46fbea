/**
 * DeepGEMM's FP8 utility quantizers (deep_gemm/utils/math.py; deepgemm-ops.md §2.4–§2.7), bit for bit:
 * `per_token_cast_to_fp8`, `per_channel_cast_to_fp8`, `per_block_cast_to_fp8`, `per_custom_dims_cast_to_fp8`.
 *
 * Each group: `amax = max(max|x|, 1e-4)` in fp32; `sf = amax / 448` (on a GPU `fl32(amax · fl32(1/448))`, see
 * {@link ./scalar_division.ts}); with `useUe8m0`, `sf = ceil_to_ue8m0(sf)`; then `q = E4M3(fl32(x · fl32(1/sf)))`
 * with PyTorch's cast (profile `torch_2_11` by default: (464, 480) and beyond → NaN, 464 → 448).
 *
 * NaN inputs (documented behaviour, as PyTorch computes it): a NaN makes its group's amax NaN, so `sf` is NaN and
 * every code of the group is NaN (0x7F on a GPU); with `useUe8m0`, `ceil_to_ue8m0(NaN) = 2^127`, the NaN element
 * stays NaN and the group's other elements become `x · 2^-127`, i.e. ±0 or tiny codes.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Tensor } from "../tensor/tensor.ts";
 * import { perTokenCastToFp8 } from "./fp8_casts.ts";
 * const x = Tensor.from("f32", [1, 4], new Float32Array([448, -224, 1, 0]));
 * const { q, sf } = perTokenCastToFp8(x, { useUe8m0: false, semantics: "cpu" });
 * assert.deepEqual([...(q.data as Uint8Array)], [0x7e, 0xf6, 0x38, 0x00]); // 448, -224, 1, 0
 * assert.equal(sf.at(0, 0), 1);
 * ```
 * @module
 */
import { isIntegerDType } from "../tensor/dtype.ts";
import { Tensor } from "../tensor/tensor.ts";
import { toFloat32 } from "../tensor/values.ts";
import { fastEncoder } from "./_fast_encode.ts";
import { groupQuant2d, groupQuantIndexed } from "./_group_quant.ts";
import { packUe8m0ToInt } from "./pack_ue8m0.ts";
import { checkSemantics, type Semantics } from "./scalar_division.ts";

/** Options shared by DeepGEMM's quantizers. */
export interface CastOptions {
  /** Round scales up to powers of two (`ceil_to_ue8m0`). Required, as in DeepGEMM. */
  readonly useUe8m0: boolean;
  /** Elements per group along K (default 128). */
  readonly granK?: number;
  /** Return the scales packed 4 per int32 (`pack_ue8m0_to_int`; per-token casts only). Default false. */
  readonly usePackedUe8m0?: boolean;
  /** `gpu` (default): `amax / 448` is `amax · fl32(1/448)`; `cpu`: a true division. */
  readonly semantics?: Semantics;
  /** Conversion profile of the fp32 → E4M3 cast (default `torch_2_11`, PyTorch's `.to(float8_e4m3fn)`). */
  readonly e4m3Profile?: string;
}

/** Codes and scales. */
export interface CastResult {
  /** The quantized tensor (`e4m3` codes, or packed FP4 `i8`). */
  readonly q: Tensor;
  /** Scales: `f32`, or packed UE8M0 `i32`. */
  readonly sf: Tensor;
}

/**
 * Validates the common options; returns granK, semantics, profile.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { checkCastOptions } from "./fp8_casts.ts";
 * assert.deepEqual(checkCastOptions("demo", { useUe8m0: true }), {
 *   granK: 128, semantics: "gpu", useUe8m0: true, usePacked: false, profile: "torch_2_11",
 * });
 * assert.throws(() => checkCastOptions("demo", undefined), TypeError);
 * assert.throws(() => checkCastOptions("demo", { useUe8m0: false, granK: 0 }), RangeError);
 * ```
 */
export function checkCastOptions(fn: string, opts: CastOptions | undefined): {
  granK: number;
  semantics: Semantics;
  useUe8m0: boolean;
  usePacked: boolean;
  profile: string;
} {
  if (opts === null || typeof opts !== "object") throw new TypeError(`${fn}: options { useUe8m0, ... } are required`);
  if (typeof opts.useUe8m0 !== "boolean") throw new TypeError(`${fn}: useUe8m0 must be a boolean`);
  const granK = opts.granK ?? 128;
  if (!Number.isSafeInteger(granK) || granK <= 0) {
    throw new RangeError(`${fn}: granK ${granK} must be a positive integer`);
  }
  return {
    granK,
    semantics: checkSemantics(opts.semantics, fn),
    useUe8m0: opts.useUe8m0,
    usePacked: opts.usePackedUe8m0 ?? false,
    profile: opts.e4m3Profile ?? "torch_2_11",
  };
}

/**
 * Checks that `x` is a rank-2 float tensor; returns [m, n].
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Tensor } from "../tensor/tensor.ts";
 * import { check2d } from "./fp8_casts.ts";
 * assert.deepEqual(check2d("demo", Tensor.zeros("bf16", [2, 3])), [2, 3]);
 * assert.throws(() => check2d("demo", Tensor.zeros("i32", [2, 3])), TypeError);
 * ```
 */
export function check2d(fn: string, x: Tensor): [number, number] {
  if (!(x instanceof Tensor)) throw new TypeError(`${fn}: x must be a Tensor`);
  if (x.ndim !== 2) throw new TypeError(`${fn}: x must have rank 2, got shape [${x.shape.join(", ")}]`);
  if (isIntegerDType(x.dtype)) {
    throw new TypeError(`${fn}: x must be a float tensor, got dtype ${x.dtype}`);
  }
  return [x.shape[0], x.shape[1]];
}

/**
 * `per_token_cast_to_fp8(x, use_ue8m0, gran_k=128, use_packed_ue8m0=False)`: one scale per row and `granK` columns.
 *
 * @param x `[m, n]` float tensor (BF16 in DeepGEMM's tests; widened exactly)
 * @param opts {@link CastOptions}
 * @returns `q` e4m3 `[m, n]`; `sf` f32 `[m, ceil(n/granK)]`, or i32 `[m, ceil(n/granK)/4]` when packed
 * @throws {TypeError} for a non-tensor, a rank other than 2 or missing options
 * @throws {RangeError} for a bad granK, or packing a scale count not divisible by 4 / scales that are not powers of two
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Tensor } from "../tensor/tensor.ts";
 * import { perTokenCastToFp8 } from "./fp8_casts.ts";
 * // an all-zero group: amax is clamped to 1e-4, and with UE8M0 the scale is 2^-22 (deepgemm-ops.md §2.4)
 * const { sf } = perTokenCastToFp8(Tensor.zeros("bf16", [2, 128]), { useUe8m0: true });
 * assert.equal(sf.at(1, 0), 2 ** -22);
 * ```
 */
export function perTokenCastToFp8(x: Tensor, opts: CastOptions): CastResult {
  const fn = "perTokenCastToFp8";
  const [m, n] = check2d(fn, x);
  const o = checkCastOptions(fn, opts);
  const r = groupQuant2d(toFloat32(x), m, n, 1, o.granK, 448, o.semantics, o.useUe8m0, o.profile, "e4m3");
  const sf = Tensor.from("f32", [r.sfRows, r.sfCols], r.sf);
  return { q: Tensor.from("e4m3", [m, n], r.codes), sf: o.usePacked ? packUe8m0ToInt(sf) : sf };
}

/**
 * `per_channel_cast_to_fp8(x, use_ue8m0, gran_k=128)`: one scale per column and `granK` consecutive rows
 * (DeepGEMM requires `m % granK == 0`).
 *
 * @param x `[m, n]` float tensor
 * @param opts {@link CastOptions} (`usePackedUe8m0` is not accepted)
 * @returns `q` e4m3 `[m, n]`; `sf` f32 `[m/granK, n]`
 * @throws {TypeError} for a non-tensor or a rank other than 2
 * @throws {RangeError} when `m % granK != 0`
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Tensor } from "../tensor/tensor.ts";
 * import { perChannelCastToFp8 } from "./fp8_casts.ts";
 * const x = Tensor.from("f32", [2, 1], new Float32Array([3, -6]));
 * const { q, sf } = perChannelCastToFp8(x, { useUe8m0: true, granK: 2 });
 * assert.equal(sf.at(0, 0), 2 ** -6); // ceil_to_ue8m0(6/448)
 * assert.deepEqual([...(q.data as Uint8Array)], [0x74, 0xfc]); // 192, -384
 * ```
 */
export function perChannelCastToFp8(x: Tensor, opts: CastOptions): CastResult {
  const fn = "perChannelCastToFp8";
  const [m, n] = check2d(fn, x);
  const o = checkCastOptions(fn, opts);
  if (o.usePacked) throw new TypeError(`${fn}: DeepGEMM's per_channel_cast_to_fp8 has no packed-UE8M0 option`);
  if (m % o.granK !== 0) {
    throw new RangeError(`${fn}: m = ${m} is not a multiple of granK = ${o.granK} (DeepGEMM asserts m % gran_k == 0)`);
  }
  const r = groupQuant2d(toFloat32(x), m, n, o.granK, 1, 448, o.semantics, o.useUe8m0, o.profile, "e4m3");
  return { q: Tensor.from("e4m3", [m, n], r.codes), sf: Tensor.from("f32", [r.sfRows, r.sfCols], r.sf) };
}

/**
 * `per_block_cast_to_fp8(x, use_ue8m0, gran_k=128)`: one scale per `granK × granK` tile (partial tiles are zero-padded).
 *
 * @param x `[m, n]` float tensor
 * @param opts {@link CastOptions} (`usePackedUe8m0` is not accepted)
 * @returns `q` e4m3 `[m, n]`; `sf` f32 `[ceil(m/granK), ceil(n/granK)]`
 * @throws {TypeError} for a non-tensor or a rank other than 2
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Tensor } from "../tensor/tensor.ts";
 * import { perBlockCastToFp8 } from "./fp8_casts.ts";
 * const { sf } = perBlockCastToFp8(Tensor.zeros("bf16", [129, 3]), { useUe8m0: false });
 * assert.deepEqual(sf.shape, [2, 1]);
 * ```
 */
export function perBlockCastToFp8(x: Tensor, opts: CastOptions): CastResult {
  const fn = "perBlockCastToFp8";
  const [m, n] = check2d(fn, x);
  const o = checkCastOptions(fn, opts);
  if (o.usePacked) throw new TypeError(`${fn}: DeepGEMM's per_block_cast_to_fp8 has no packed-UE8M0 option`);
  const g = o.granK;
  const r = groupQuant2d(toFloat32(x), m, n, g, g, 448, o.semantics, o.useUe8m0, o.profile, "e4m3");
  return { q: Tensor.from("e4m3", [m, n], r.codes), sf: Tensor.from("f32", [r.sfRows, r.sfCols], r.sf) };
}

/**
 * `per_custom_dims_cast_to_fp8(x, dims, use_ue8m0)`: amax over every dimension not in `dims`; the scale tensor has
 * the extents of `dims` with size-1 dimensions squeezed away (`sf.squeeze()`). MQA uses `dims = [0]` on
 * `kv[seq, head_dim]`: one scale per token.
 *
 * @param x float tensor of any rank
 * @param dims the kept dimensions
 * @param opts {@link CastOptions} (`granK` and `usePackedUe8m0` do not apply)
 * @returns `q` e4m3 with `x`'s shape; `sf` f32 (squeezed)
 * @throws {TypeError} for a non-tensor or non-integer dims
 * @throws {RangeError} for a dimension out of range
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Tensor } from "../tensor/tensor.ts";
 * import { perCustomDimsCastToFp8 } from "./fp8_casts.ts";
 * const kv = Tensor.from("f32", [2, 2], new Float32Array([448, 1, 0, 2]));
 * const { sf } = perCustomDimsCastToFp8(kv, [0], { useUe8m0: false, semantics: "cpu" });
 * assert.deepEqual([...(sf.data as Float32Array)], [1, Math.fround(2 / 448)]);
 * ```
 */
export function perCustomDimsCastToFp8(x: Tensor, dims: readonly number[], opts: CastOptions): CastResult {
  const fn = "perCustomDimsCastToFp8";
  if (!(x instanceof Tensor)) throw new TypeError(`${fn}: x must be a Tensor`);
  const o = checkCastOptions(fn, opts);
  if (!Array.isArray(dims)) throw new TypeError(`${fn}: dims must be an array of dimension indices`);
  const kept = new Array<boolean>(x.ndim).fill(false);
  for (const d of dims) {
    if (!Number.isInteger(d)) throw new TypeError(`${fn}: dimension ${d} is not an integer`);
    const dd = d < 0 ? d + x.ndim : d;
    if (dd < 0 || dd >= x.ndim) throw new RangeError(`${fn}: dimension ${d} out of range for rank ${x.ndim}`);
    kept[dd] = true;
  }
  // group index of each element = row-major index over the kept dimensions
  const n = x.numel, rank = x.ndim;
  const groupOf = new Int32Array(n);
  const idx = new Array<number>(rank).fill(0);
  const gStride = new Array<number>(rank).fill(0);
  let numGroups = 1;
  for (let d = rank - 1; d >= 0; d--) {
    if (kept[d]) {
      gStride[d] = numGroups;
      numGroups *= x.shape[d];
    }
  }
  let g = 0;
  for (let k = 0; k < n; k++) {
    groupOf[k] = g;
    for (let d = rank - 1; d >= 0; d--) {
      idx[d]++;
      g += gStride[d];
      if (idx[d] < x.shape[d]) break;
      g -= idx[d] * gStride[d];
      idx[d] = 0;
    }
  }
  const r = groupQuantIndexed(
    toFloat32(x),
    groupOf,
    numGroups,
    448,
    o.semantics,
    o.useUe8m0,
    fastEncoder(o.profile, "e4m3"),
  );
  const sfShape = x.shape.filter((s, d) => kept[d] && s !== 1);
  return { q: Tensor.from("e4m3", x.shape, r.codes), sf: Tensor.from("f32", sfShape, r.sf) };
}
