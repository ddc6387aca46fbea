/**
 * DeepGEMM's `pack_ue8m0_to_int` / `unpack_ue8m0_from_int` (deep_gemm/utils/math.py; deepgemm-ops.md §2.3):
 * four UE8M0 exponent bytes per little-endian int32, byte j of word p = scale 4p + j.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Tensor } from "../tensor/tensor.ts";
 * import { packUe8m0ToInt, unpackUe8m0FromInt } from "./pack_ue8m0.ts";
 * const sf = Tensor.from("f32", [1, 4], new Float32Array([1, 2, 0.5, 2 ** -22]));
 * const p = packUe8m0ToInt(sf);
 * assert.equal(p.at(0, 0), 0x697e807f | 0);
 * assert.deepEqual([...(unpackUe8m0FromInt(p).data as Float32Array)], [1, 2, 0.5, 2 ** -22]);
 * ```
 * @module
 */
import { Tensor } from "../tensor/tensor.ts";
import { toFloat32Bits } from "../tensor/values.ts";
import { rowMajorData } from "../tensor/values.ts";

function hex(b: number): string {
  return "0x" + (b >>> 0).toString(16).padStart(8, "0");
}

/**
 * `pack_ue8m0_to_int(x)`: fp32 `[..., S]` powers of two (S % 4 == 0) → int32 `[..., S/4]`.
 *
 * @param x f32 tensor whose values all have sign 0 and mantissa 0 (DeepGEMM asserts this)
 * @returns the packed int32 tensor (contiguous)
 * @throws {TypeError} when `x` is not an f32 tensor of rank ≥ 1
 * @throws {RangeError} when the last dimension is not a multiple of 4, or a value has a sign or mantissa bit set
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Tensor } from "../tensor/tensor.ts";
 * import { packUe8m0ToInt } from "./pack_ue8m0.ts";
 * assert.throws(() => packUe8m0ToInt(Tensor.from("f32", [4], new Float32Array([1, 3, 1, 1]))), RangeError);
 * ```
 */
export function packUe8m0ToInt(x: Tensor): Tensor {
  if (!(x instanceof Tensor) || x.dtype !== "f32" || x.ndim < 1) {
    throw new TypeError(`packUe8m0ToInt: expected an f32 tensor of rank ≥ 1`);
  }
  const s = x.shape[x.ndim - 1];
  if (s % 4 !== 0) {
    throw new RangeError(`packUe8m0ToInt: last dimension ${s} is not a multiple of 4 (pad the scales first)`);
  }
  const bits = toFloat32Bits(x);
  for (let i = 0; i < bits.length; i++) {
    const b = bits[i];
    // assert (x_int >= 0).all() and (x_int & 0x7fffff == 0).all()
    if ((b & 0x807fffff) !== 0) {
      throw new RangeError(
        `packUe8m0ToInt: scale ${i} has bits ${
          hex(b)
        }; UE8M0 packing needs non-negative powers of two (sign and mantissa 0)`,
      );
    }
  }
  const out = new Int32Array(bits.length / 4);
  for (let p = 0; p < out.length; p++) {
    const q = 4 * p;
    out[p] = (bits[q] >>> 23) | ((bits[q + 1] >>> 23) << 8) | ((bits[q + 2] >>> 23) << 16) |
      ((bits[q + 3] >>> 23) << 24);
  }
  return Tensor.from("i32", [...x.shape.slice(0, -1), s / 4], out);
}

/**
 * `unpack_ue8m0_from_int(p)`: int32 `[..., P]` → fp32 `[..., 4P]` with bits `byte << 23`. As in DeepGEMM, byte 0
 * unpacks to +0.0 (not 2^-127) and byte 255 to +Inf (not NaN).
 *
 * @param packed i32 tensor
 * @returns f32 tensor, last dimension × 4
 * @throws {TypeError} when `packed` is not an i32 tensor of rank ≥ 1
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Tensor } from "../tensor/tensor.ts";
 * import { unpackUe8m0FromInt } from "./pack_ue8m0.ts";
 * const f = unpackUe8m0FromInt(Tensor.from("i32", [1], new Int32Array([0xff00007f | 0])));
 * assert.deepEqual([...(f.data as Float32Array)], [1, 0, 0, Infinity]);
 * ```
 */
export function unpackUe8m0FromInt(packed: Tensor): Tensor {
  if (!(packed instanceof Tensor) || packed.dtype !== "i32" || packed.ndim < 1) {
    throw new TypeError(`unpackUe8m0FromInt: expected an i32 tensor of rank ≥ 1`);
  }
  const words = rowMajorData(packed) as Int32Array;
  const out = new Uint32Array(words.length * 4);
  for (let p = 0; p < words.length; p++) {
    const w = words[p];
    out[4 * p] = (w & 0xff) << 23;
    out[4 * p + 1] = ((w >>> 8) & 0xff) << 23;
    out[4 * p + 2] = ((w >>> 16) & 0xff) << 23;
    out[4 * p + 3] = (w >>> 24) << 23 >>> 0;
  }
  const shape = [...packed.shape.slice(0, -1), packed.shape[packed.ndim - 1] * 4];
  return Tensor.from("f32", shape, new Float32Array(out.buffer));
}
