/**
 * DeepGEMM's FP4 utilities (deep_gemm/utils/math.py; deepgemm-ops.md §2.8, §2.10): `per_token_cast_to_fp4` and
 * `cast_back_from_fp4`.
 *
 * E2M1 encoding uses DeepGEMM's own rule (`_quantize_to_fp4_e2m1`, profile `deepgemm_fp4`): the code counts the
 * midpoints {0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5} strictly below |y|, so the ties 0.75, 1.75 and 3.5 round toward
 * zero (RNE would round them up), |y| > 5 saturates to 6, NaN gives code 0, and −0 is never written.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Tensor } from "../tensor/tensor.ts";
 * import { perTokenCastToFp4 } from "./fp4_casts.ts";
 * // amax 6 → sf = 6 · fl32(1/6) = 1 (GPU); the ties 0.75, 1.75, 3.5 round toward zero
 * const x = Tensor.from("f32", [1, 4], new Float32Array([6, 0.75, 1.75, -3.5]));
 * const { q } = perTokenCastToFp4(x, { useUe8m0: false, granK: 4 });
 * assert.deepEqual([...(q.data as Int8Array)], [0x17, 0xd3 - 256]); // codes [7, 1], [3, 0xd]
 * ```
 * @module
 */
import { decodeTable } from "../formats/batch.ts";
import { Tensor } from "../tensor/tensor.ts";
import { rowMajorData, toFloat32 } from "../tensor/values.ts";
import { groupQuant2d } from "./_group_quant.ts";
import { type CastOptions, type CastResult, check2d, checkCastOptions } from "./fp8_casts.ts";
import { packUe8m0ToInt, unpackUe8m0FromInt } from "./pack_ue8m0.ts";

/**
 * `per_token_cast_to_fp4(x, use_ue8m0, gran_k=128, use_packed_ue8m0=False)`.
 *
 * Scales: `sf = max(amax, 1e-4) / 6` (GPU: `amax · fl32(1/6)`), optionally `ceil_to_ue8m0` (an all-zero group gives
 * 2^-15). Packed scales are right-padded with 1.0 (byte 127) to a multiple of 4 before packing, as DeepGEMM does.
 *
 * @param x `[m, n]` float tensor, n even
 * @param opts {@link CastOptions}; `e4m3Profile` does not apply (the E2M1 rule is DeepGEMM's)
 * @returns `q` packed FP4 `i8` `[m, n/2]`; `sf` f32 `[m, ceil(n/granK)]` or i32 `[m, ceil(ceil(n/granK)/4)]`
 * @throws {TypeError} for a non-tensor, a rank other than 2, or `usePackedUe8m0` without `useUe8m0`
 * @throws {RangeError} for an odd n or a bad granK
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Tensor } from "../tensor/tensor.ts";
 * import { perTokenCastToFp4 } from "./fp4_casts.ts";
 * // head_dim 64, gran 32: two scales, padded with byte 127 (1.0) before packing
 * const { sf } = perTokenCastToFp4(Tensor.zeros("bf16", [1, 64]), { useUe8m0: true, granK: 32, usePackedUe8m0: true });
 * assert.equal(sf.at(0, 0), 0x7f7f7070); // 2^-15 = byte 112 = 0x70
 * ```
 */
export function perTokenCastToFp4(x: Tensor, opts: CastOptions): CastResult {
  const fn = "perTokenCastToFp4";
  const [m, n] = check2d(fn, x);
  const o = checkCastOptions(fn, opts);
  if (n % 2 !== 0) {
    throw new RangeError(`${fn}: n = ${n} is odd; FP4 packs two codes per byte (DeepGEMM asserts n % 2 == 0)`);
  }
  if (o.usePacked && !o.useUe8m0) {
    throw new TypeError(`${fn}: usePackedUe8m0 requires useUe8m0 (DeepGEMM asserts this)`);
  }
  const r = groupQuant2d(toFloat32(x), m, n, 1, o.granK, 6, o.semantics, o.useUe8m0, "deepgemm_fp4", "e2m1");
  const packed = new Int8Array(m * n / 2);
  const c = r.codes;
  for (let p = 0; p < packed.length; p++) packed[p] = c[2 * p] | (c[2 * p + 1] << 4);
  const q = Tensor.from("i8", [m, n / 2], packed);
  if (!o.usePacked) return { q, sf: Tensor.from("f32", [m, r.sfCols], r.sf) };
  const cols = Math.ceil(r.sfCols / 4) * 4;
  const padded = new Float32Array(m * cols).fill(1); // F.pad(sf, (0, pad), value=1.0)
  for (let i = 0; i < m; i++) padded.set(r.sf.subarray(i * r.sfCols, (i + 1) * r.sfCols), i * cols);
  return { q, sf: packUe8m0ToInt(Tensor.from("f32", [m, cols], padded)) };
}

/**
 * `cast_back_from_fp4(packed, sf, gran_k=128, use_packed_ue8m0=False)`: `value(code) · sf[row, col // granK]` in fp32.
 * As in DeepGEMM's `_dequantize_from_fp4_e2m1`, code 8 (−0) decodes to +0.
 *
 * @param packed packed FP4 `i8` `[m, n/2]`
 * @param sf f32 `[m, ≥ ceil(n/granK)]`, or packed UE8M0 i32 when `usePackedUe8m0`
 * @param granK elements per scale (default 128)
 * @param usePackedUe8m0 whether `sf` is packed (default false)
 * @returns f32 `[m, n]`
 * @throws {TypeError} for wrong dtypes or ranks
 * @throws {RangeError} when `sf` has too few rows or columns
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Tensor } from "../tensor/tensor.ts";
 * import { castBackFromFp4 } from "./fp4_casts.ts";
 * const packed = Tensor.from("i8", [1, 1], new Int8Array([0xf8 - 256])); // codes 8 (−0), 0xf (−6)
 * const sf = Tensor.from("f32", [1, 1], new Float32Array([0.5]));
 * const y = castBackFromFp4(packed, sf);
 * assert.ok(Object.is(y.at(0, 0), 0));
 * assert.equal(y.at(0, 1), -3);
 * ```
 */
export function castBackFromFp4(packed: Tensor, sf: Tensor, granK = 128, usePackedUe8m0 = false): Tensor {
  const fn = "castBackFromFp4";
  if (!(packed instanceof Tensor) || packed.dtype !== "i8" || packed.ndim !== 2) {
    throw new TypeError(`${fn}: packed must be an i8 tensor of rank 2`);
  }
  if (!(sf instanceof Tensor) || sf.ndim !== 2) throw new TypeError(`${fn}: sf must be a tensor of rank 2`);
  if (!Number.isSafeInteger(granK) || granK <= 0) {
    throw new RangeError(`${fn}: granK ${granK} must be a positive integer`);
  }
  if (usePackedUe8m0) {
    if (sf.dtype !== "i32") throw new TypeError(`${fn}: packed scales must be i32, got ${sf.dtype}`);
    sf = unpackUe8m0FromInt(sf);
  } else if (sf.dtype !== "f32") throw new TypeError(`${fn}: scales must be f32, got ${sf.dtype}`);
  const m = packed.shape[0], n = packed.shape[1] * 2;
  const needCols = Math.ceil(n / granK);
  if (sf.shape[0] !== m || sf.shape[1] < needCols) {
    throw new RangeError(`${fn}: sf of shape [${sf.shape.join(", ")}] does not cover [${m}, ${needCols}] scales`);
  }
  const table = decodeTable("e2m1");
  table[8] = 0; // torch.where(sign & (value_idx != 0), -value, value): code 8 is +0
  const bytes = rowMajorData(packed) as Int8Array;
  const s = toFloat32(sf), sc = sf.shape[1];
  const out = new Float32Array(m * n);
  for (let i = 0; i < m; i++) {
    for (let j = 0; j < n; j++) {
      const b = bytes[i * (n / 2) + (j >> 1)] & 0xff;
      const code = (j & 1) === 0 ? b & 0xf : b >>> 4;
      out[i * n + j] = table[code] * s[i * sc + Math.floor(j / granK)];
    }
  }
  return Tensor.from("f32", [m, n], out);
}
