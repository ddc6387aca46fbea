/**
 * FP8 dequantization as DeepGEMM's tests write it inline (`q.float() * sf` broadcast over the group;
 * deepgemm-ops.md §2.10: there is no FP8 cast-back function in DeepGEMM): `decode(q) · sf[i / granMn, j / granK]`,
 * one fp32 multiply per element.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Tensor } from "../tensor/tensor.ts";
 * import { castBackFromFp8 } from "./fp8_dequant.ts";
 * const q = Tensor.from("e4m3", [1, 2], new Uint8Array([0x7e, 0xb8])); // 448, -1
 * const sf = Tensor.from("f32", [1, 1], new Float32Array([0.25]));
 * assert.deepEqual([...(castBackFromFp8(q, sf, 1, 128).data as Float32Array)], [112, -0.25]);
 * ```
 * @module
 */
import { Tensor } from "../tensor/tensor.ts";
import { toFloat32 } from "../tensor/values.ts";
import { unpackUe8m0FromInt } from "./pack_ue8m0.ts";

/**
 * Dequantizes 2-D FP8 codes with 2-D block scales: per-token `(1, granK)`, per-channel `(granK, 1)`, per-block
 * `(granK, granK)`.
 *
 * @param q `e4m3` or `e5m2` `[m, n]`
 * @param sf f32 `[ceil(m/granMn), ceil(n/granK)]` (or packed UE8M0 i32 with `usePackedUe8m0`, 4 scales per word along K)
 * @param granMn rows per scale
 * @param granK columns per scale
 * @param usePackedUe8m0 whether `sf` is packed (default false)
 * @returns f32 `[m, n]`
 * @throws {TypeError} for wrong dtypes or ranks
 * @throws {RangeError} for bad granularities or a scale tensor that does not cover `q`
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Tensor } from "../tensor/tensor.ts";
 * import { castBackFromFp8 } from "./fp8_dequant.ts";
 * const q = Tensor.from("e4m3", [2, 1], new Uint8Array([0x38, 0x40])); // 1, 2
 * const sf = Tensor.from("f32", [1, 1], new Float32Array([3]));
 * assert.deepEqual([...(castBackFromFp8(q, sf, 2, 1).data as Float32Array)], [3, 6]);
 * ```
 */
export function castBackFromFp8(q: Tensor, sf: Tensor, granMn: number, granK: number, usePackedUe8m0 = false): Tensor {
  const fn = "castBackFromFp8";
  if (!(q instanceof Tensor) || (q.dtype !== "e4m3" && q.dtype !== "e5m2") || q.ndim !== 2) {
    throw new TypeError(`${fn}: q must be an e4m3 or e5m2 tensor of rank 2`);
  }
  if (!(sf instanceof Tensor) || sf.ndim !== 2) throw new TypeError(`${fn}: sf must be a tensor of rank 2`);
  for (const [name, g] of [["granMn", granMn], ["granK", granK]] as const) {
    if (!Number.isSafeInteger(g) || g <= 0) throw new RangeError(`${fn}: ${name} ${g} must be a positive integer`);
  }
  if (usePackedUe8m0) {
    if (sf.dtype !== "i32") throw new TypeError(`${fn}: packed scales must be i32, got ${sf.dtype}`);
    sf = unpackUe8m0FromInt(sf);
  } else if (sf.dtype !== "f32") throw new TypeError(`${fn}: scales must be f32, got ${sf.dtype}`);
  const [m, n] = q.shape;
  const needR = Math.ceil(m / granMn), needC = Math.ceil(n / granK);
  if (sf.shape[0] < needR || sf.shape[1] < needC) {
    throw new RangeError(`${fn}: sf of shape [${sf.shape.join(", ")}] does not cover [${needR}, ${needC}] scales`);
  }
  const v = toFloat32(q), s = toFloat32(sf), sc = sf.shape[1];
  const out = new Float32Array(m * n);
  for (let i = 0; i < m; i++) {
    const srow = Math.floor(i / granMn) * sc;
    for (let j = 0; j < n; j++) out[i * n + j] = v[i * n + j] * s[srow + Math.floor(j / granK)];
  }
  return Tensor.from("f32", [m, n], out);
}
