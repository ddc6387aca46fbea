/**
 * DeepGEMM's MN-major, TMA-aligned scale-factor layout (csrc/jit_kernels/impls/smxx_layout.hpp;
 * deepgemm-ops.md §3): an SF tensor of logical shape `[(G,) mn, sfk]` stored with strides
 * `(tma_mn · sfk, 1, tma_mn)`, `tma_mn = get_tma_aligned_size(mn, element_size)`, so every K column of scales is a
 * contiguous, 16-byte aligned run of MN values. Rows `mn .. tma_mn − 1` are padding: uninitialised on a GPU, zero here,
 * never to be compared.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Tensor } from "../tensor/tensor.ts";
 * import { getMnMajorTmaAlignedTensor } from "./tma_aligned.ts";
 * const sf = Tensor.from("f32", [5, 2], new Float32Array(10).map((_, i) => i));
 * const t = getMnMajorTmaAlignedTensor(sf);
 * assert.deepEqual(t.strides, [1, 8]); // tma_mn = align(5, 4) = 8
 * assert.equal(t.at(4, 1), 9);
 * ```
 * @module
 */
import { Tensor } from "../tensor/tensor.ts";
import { rowMajorData } from "../tensor/values.ts";

/**
 * `ceil_div(a, b)`.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ceilDiv } from "./tma_aligned.ts";
 * assert.equal(ceilDiv(7, 4), 2);
 * assert.equal(ceilDiv(8, 4), 2);
 * ```
 */
export function ceilDiv(a: number, b: number): number {
  return Math.floor((a + b - 1) / b);
}

/**
 * `align(a, b) = ceil_div(a, b) · b`.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { align } from "./tma_aligned.ts";
 * assert.equal(align(130, 128), 256);
 * assert.equal(align(0, 128), 0);
 * ```
 */
export function align(a: number, b: number): number {
  return ceilDiv(a, b) * b;
}

/**
 * `get_tma_aligned_size(x, element_size)` = `align(x, 16 / element_size)`.
 *
 * @param x a count of elements
 * @param elementSize bytes per element; must divide 16
 * @returns `x` rounded up to a multiple of 16 bytes
 * @throws {RangeError} when `elementSize` does not divide 16 or `x` is negative
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { getTmaAlignedSize } from "./tma_aligned.ts";
 * assert.equal(getTmaAlignedSize(4097, 4), 4100);
 * assert.equal(getTmaAlignedSize(4097, 1), 4112);
 * ```
 */
export function getTmaAlignedSize(x: number, elementSize: number): number {
  if (!Number.isSafeInteger(elementSize) || elementSize <= 0 || 16 % elementSize !== 0) {
    throw new RangeError(`getTmaAlignedSize: element size ${elementSize} does not divide 16 (DeepGEMM asserts this)`);
  }
  if (!Number.isSafeInteger(x) || x < 0) {
    throw new RangeError(`getTmaAlignedSize: size ${x} must be a non-negative integer`);
  }
  return align(x, 16 / elementSize);
}

/**
 * Strides of the MN-major TMA-aligned layout for `[mn, sfk]` (2-D) or `[G, mn, sfk]` (3-D).
 *
 * @param shape `[mn, sfk]` or `[G, mn, sfk]`
 * @param elementSize bytes per element (4 for fp32 and packed int32 scales)
 * @returns `[1, tma_mn]` or `[tma_mn · sfk, 1, tma_mn]`
 * @throws {RangeError} for another rank
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { mnMajorTmaAlignedStrides } from "./tma_aligned.ts";
 * assert.deepEqual(mnMajorTmaAlignedStrides([2, 4097, 57], 4), [4100 * 57, 1, 4100]);
 * ```
 */
export function mnMajorTmaAlignedStrides(shape: readonly number[], elementSize: number): number[] {
  if (shape.length !== 2 && shape.length !== 3) {
    throw new RangeError(`mnMajorTmaAlignedStrides: expected [mn, sfk] or [G, mn, sfk], got [${shape.join(", ")}]`);
  }
  const mn = shape[shape.length - 2], sfk = shape[shape.length - 1];
  const tma = getTmaAlignedSize(mn, elementSize);
  return shape.length === 2 ? [1, tma] : [tma * sfk, 1, tma];
}

/**
 * DeepGEMM's `preprocess_sf`: rank 2 or 3, fp32; returns [G, mn, sfk] and the batched strides.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Tensor } from "../tensor/tensor.ts";
 * import { preprocessSf } from "./tma_aligned.ts";
 * const sf = Tensor.zeros("f32", [256, 4]);
 * assert.deepEqual(preprocessSf("demo", sf), { g: 1, mn: 256, sfk: 4, strides: [1024, 4, 1] });
 * assert.throws(() => preprocessSf("demo", Tensor.zeros("f32", [4])), TypeError);
 * ```
 */
export function preprocessSf(fn: string, sf: Tensor, dtype: "f32" | "i32" = "f32"): {
  g: number;
  mn: number;
  sfk: number;
  strides: number[];
} {
  if (!(sf instanceof Tensor)) throw new TypeError(`${fn}: sf must be a Tensor`);
  if (sf.ndim !== 2 && sf.ndim !== 3) {
    throw new TypeError(
      `${fn}: sf must have rank 2 or 3, got shape [${sf.shape.join(", ")}] (DeepGEMM asserts dim == 2 or 3)`,
    );
  }
  if (sf.dtype !== dtype) throw new TypeError(`${fn}: sf must be ${dtype}, got ${sf.dtype}`);
  const three = sf.ndim === 3;
  const g = three ? sf.shape[0] : 1;
  const mn = sf.shape[sf.ndim - 2], sfk = sf.shape[sf.ndim - 1];
  // unsqueeze(0) of a 2-D tensor: torch gives the new leading dim the stride size(0)·stride(0)
  const strides = three ? [...sf.strides] : [sf.shape[0] * sf.strides[0], sf.strides[0], sf.strides[1]];
  return { g, mn, sfk, strides };
}

/**
 * `get_mn_major_tma_aligned_tensor(sf)`: the same fp32 values in the MN-major TMA-aligned layout. A tensor that already
 * has exactly those strides is returned unchanged (the same object, no copy), as DeepGEMM does.
 *
 * @param sf f32 `[mn, sfk]` or `[G, mn, sfk]`, any strides
 * @returns f32 view with strides {@link mnMajorTmaAlignedStrides} (padding rows zero)
 * @throws {TypeError} for another rank or dtype
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Tensor } from "../tensor/tensor.ts";
 * import { getMnMajorTmaAlignedTensor } from "./tma_aligned.ts";
 * const once = getMnMajorTmaAlignedTensor(Tensor.zeros("f32", [8, 3]));
 * assert.equal(getMnMajorTmaAlignedTensor(once), once);
 * ```
 */
export function getMnMajorTmaAlignedTensor(sf: Tensor): Tensor {
  const fn = "getMnMajorTmaAlignedTensor";
  const { g, mn, sfk, strides } = preprocessSf(fn, sf);
  const tma = getTmaAlignedSize(mn, 4);
  if ((strides[0] === tma * sfk || sf.ndim === 2) && strides[1] === 1 && strides[2] === tma) return sf;
  const src = rowMajorData(sf) as Float32Array;
  const out = new Float32Array(g * tma * sfk);
  for (let b = 0; b < g; b++) {
    for (let i = 0; i < mn; i++) {
      const s0 = (b * mn + i) * sfk, d0 = b * tma * sfk + i;
      for (let j = 0; j < sfk; j++) out[d0 + j * tma] = src[s0 + j];
    }
  }
  const shape = sf.ndim === 2 ? [mn, sfk] : [g, mn, sfk];
  return new Tensor("f32", shape, out, mnMajorTmaAlignedStrides(shape, 4));
}
