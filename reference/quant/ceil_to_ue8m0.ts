/**
 * DeepGEMM's `ceil_to_ue8m0` (deep_gemm/utils/math.py; deepgemm-ops.md §2.2): round |x| up to a power of two,
 * on the bits: exponent field + (mantissa ≠ 0), clamped to [1, 254]. Exact powers of two stay; 0 and fp32
 * subnormals give 2^-126; Inf and NaN (|NaN| has field 255, +1 when the payload is non-zero) give 2^127; the sign is
 * dropped.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ceilToUe8m0Value } from "./ceil_to_ue8m0.ts";
 * assert.equal(ceilToUe8m0Value(3), 4);
 * assert.equal(ceilToUe8m0Value(-0.25), 0.25);
 * assert.equal(ceilToUe8m0Value(0), 2 ** -126);
 * ```
 * @module
 */
import { f32Bits, f32FromBits } from "../fp32.ts";
import { Tensor } from "../tensor/tensor.ts";
import { toFloat32Bits } from "../tensor/values.ts";

/**
 * `ceil_to_ue8m0` on one fp32 bit pattern.
 *
 * @param bits fp32 pattern (read as unsigned)
 * @returns the fp32 pattern of the power of two (sign 0, mantissa 0)
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ceilToUe8m0Bits } from "./ceil_to_ue8m0.ts";
 * assert.equal(ceilToUe8m0Bits(0x3f800001), 0x40000000); // just above 1 → 2
 * assert.equal(ceilToUe8m0Bits(0x7fc00000), 0x7f000000); // NaN → 2^127
 * ```
 */
export function ceilToUe8m0Bits(bits: number): number {
  const a = bits & 0x7fffffff; // x.abs()
  let e = (a >>> 23) + ((a & 0x7fffff) !== 0 ? 1 : 0);
  if (e < 1) e = 1;
  else if (e > 254) e = 254; // exp.clamp(1, 254)
  return (e << 23) >>> 0;
}

/**
 * `ceil_to_ue8m0` on one number (rounded to fp32 first).
 *
 * @param x a number
 * @returns the power of two DeepGEMM gives
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ceilToUe8m0Value } from "./ceil_to_ue8m0.ts";
 * assert.equal(ceilToUe8m0Value(Infinity), 2 ** 127);
 * ```
 */
export function ceilToUe8m0Value(x: number): number {
  return f32FromBits(ceilToUe8m0Bits(f32Bits(x)));
}

/**
 * `ceil_to_ue8m0(x)` on a tensor: an f32 tensor of the same shape (any input dtype is widened with `.float()`).
 *
 * @param x any float tensor
 * @returns a new contiguous f32 tensor of powers of two
 * @throws {TypeError} when `x` is not a Tensor
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Tensor } from "../tensor/tensor.ts";
 * import { ceilToUe8m0 } from "./ceil_to_ue8m0.ts";
 * const y = ceilToUe8m0(Tensor.from("f32", [3], new Float32Array([1, 1.5, 1e-4 / 448])));
 * assert.deepEqual([...(y.data as Float32Array)], [1, 2, 2 ** -22]);
 * ```
 */
export function ceilToUe8m0(x: Tensor): Tensor {
  if (!(x instanceof Tensor)) throw new TypeError(`ceilToUe8m0: expected a Tensor`);
  const bits = toFloat32Bits(x);
  for (let i = 0; i < bits.length; i++) bits[i] = ceilToUe8m0Bits(bits[i]);
  return Tensor.from("f32", x.shape, new Float32Array(bits.buffer));
}
