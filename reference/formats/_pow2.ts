/**
 * Exact powers of two without `Math.pow` (style rule: no transcendental `Math.*` in anything that produces reference
 * bits). The one table every module uses: `formats/codec.ts`, `tensor_core/exact_sum.ts` (which re-exports
 * {@link pow2}), `tensor_core/fused_dot_add.ts`, `kernel_models/sm90_fp8_tile.ts` and `mega_moe/exp32.ts`.
 * @module
 */

/** 2^k at index k + 1074, k in [-1074, 1023]: built by exact doubling and halving (powers of two down to the
 * smallest subnormal are exact binary64 values). */
const POW2_TABLE = (() => {
  const t = new Float64Array(1074 + 1024);
  let p = 1;
  for (let k = 0; k <= 1023; k++, p *= 2) t[k + 1074] = p;
  p = 1;
  for (let k = 0; k >= -1074; k--, p /= 2) t[k + 1074] = p;
  return t;
})();

/**
 * Exact power of two.
 * @param k an integer exponent
 * @returns 2^k (0 below 2^-1074, Infinity above 2^1023)
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { pow2 } from "./_pow2.ts";
 * assert.equal(pow2(-3), 0.125);
 * assert.equal(pow2(-1074), Number.MIN_VALUE);
 * assert.equal(pow2(-1075), 0);
 * assert.equal(pow2(1024), Infinity);
 * ```
 */
export function pow2(k: number): number {
  if (k > 1023) return Infinity;
  if (k < -1074) return 0;
  return POW2_TABLE[k + 1074];
}
