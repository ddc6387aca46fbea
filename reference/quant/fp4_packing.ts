/**
 * FP4 (E2M1) nibble packing as DeepGEMM stores it (deepgemm-ops.md §2.8–§2.9): two codes per int8 along the row,
 * element 2j in the low nibble, element 2j+1 in the high nibble; `transpose_packed_fp4` re-packs along the other
 * dimension.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Tensor } from "../tensor/tensor.ts";
 * import { packFp4, unpackFp4 } from "./fp4_packing.ts";
 * const codes = Tensor.from("e2m1", [1, 2], new Uint8Array([0x1, 0xf]));
 * const p = packFp4(codes);
 * assert.equal(p.at(0, 0), 0xf1 - 256); // int8
 * assert.deepEqual([...(unpackFp4(p).data as Uint8Array)], [0x1, 0xf]);
 * ```
 * @module
 */
import { Tensor } from "../tensor/tensor.ts";
import { rowMajorData } from "../tensor/values.ts";

/**
 * Packs unpacked E2M1 codes `[..., n]` (n even) into int8 `[..., n/2]`, low nibble first.
 *
 * @param codes `e2m1` (or `u8`) tensor of 4-bit codes
 * @returns contiguous `i8` tensor
 * @throws {TypeError} for another dtype or rank 0
 * @throws {RangeError} for an odd last dimension
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Tensor } from "../tensor/tensor.ts";
 * import { packFp4 } from "./fp4_packing.ts";
 * assert.throws(() => packFp4(Tensor.zeros("e2m1", [3])), RangeError);
 * ```
 */
export function packFp4(codes: Tensor): Tensor {
  if (!(codes instanceof Tensor) || (codes.dtype !== "e2m1" && codes.dtype !== "u8") || codes.ndim < 1) {
    throw new TypeError(`packFp4: expected an e2m1 (or u8) tensor of rank ≥ 1`);
  }
  const n = codes.shape[codes.ndim - 1];
  if (n % 2 !== 0) throw new RangeError(`packFp4: the last dimension ${n} is odd; FP4 packs pairs`);
  const src = rowMajorData(codes) as Uint8Array;
  const out = new Int8Array(src.length / 2);
  for (let p = 0; p < out.length; p++) out[p] = (src[2 * p] & 0xf) | ((src[2 * p + 1] & 0xf) << 4);
  return Tensor.from("i8", [...codes.shape.slice(0, -1), n / 2], out);
}

/**
 * Unpacks int8 `[..., n/2]` into E2M1 codes `[..., n]` (low nibble = even element).
 *
 * @param packed `i8` (or `u8`) tensor
 * @returns contiguous `e2m1` tensor
 * @throws {TypeError} for another dtype or rank 0
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Tensor } from "../tensor/tensor.ts";
 * import { unpackFp4 } from "./fp4_packing.ts";
 * assert.deepEqual(unpackFp4(Tensor.from("i8", [1], new Int8Array([0x2a]))).shape, [2]);
 * ```
 */
export function unpackFp4(packed: Tensor): Tensor {
  if (!(packed instanceof Tensor) || (packed.dtype !== "i8" && packed.dtype !== "u8") || packed.ndim < 1) {
    throw new TypeError(`unpackFp4: expected an i8 (or u8) tensor of rank ≥ 1`);
  }
  const src = rowMajorData(packed);
  const out = new Uint8Array(src.length * 2);
  for (let p = 0; p < src.length; p++) {
    const b = (src[p] as number) & 0xff;
    out[2 * p] = b & 0xf;
    out[2 * p + 1] = b >>> 4;
  }
  return Tensor.from("e2m1", [...packed.shape.slice(0, -1), packed.shape[packed.ndim - 1] * 2], out);
}

/**
 * `transpose_packed_fp4(a)`: int8 `[m, n/2]` (m even) → int8 `[n, m/2]`: unpack, transpose, re-pack along the new rows.
 *
 * @param a packed FP4, `i8` `[m, n/2]`
 * @returns packed FP4 of the transpose, contiguous `i8` `[n, m/2]`
 * @throws {TypeError} for another dtype or rank
 * @throws {RangeError} for an odd m
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Tensor } from "../tensor/tensor.ts";
 * import { transposePackedFp4 } from "./fp4_packing.ts";
 * // codes [[1, 2], [3, 4]] → transpose [[1, 3], [2, 4]]
 * const a = Tensor.from("i8", [2, 1], new Int8Array([0x21, 0x43]));
 * assert.deepEqual([...(transposePackedFp4(a).data as Int8Array)], [0x31, 0x42]);
 * ```
 */
export function transposePackedFp4(a: Tensor): Tensor {
  if (!(a instanceof Tensor) || a.dtype !== "i8" || a.ndim !== 2) {
    throw new TypeError(`transposePackedFp4: expected an i8 tensor of rank 2 (DeepGEMM asserts int8, dim 2)`);
  }
  const m = a.shape[0];
  if (m % 2 !== 0) throw new RangeError(`transposePackedFp4: m = ${m} is odd (DeepGEMM asserts m % 2 == 0)`);
  const codes = unpackFp4(a); // [m, n]
  return packFp4(codes.transpose().contiguous());
}
