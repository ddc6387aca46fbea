/**
 * DeepGEMM's `calc_diff` (deep_gemm/testing/numeric.py): `1 − 2·Σxy / Σ(x² + y²)` computed in float64, 0 when both
 * inputs are all zero. 0 means identical, and the tests accept e.g. `< 0.001`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { calcDiff } from "./calc_diff.ts";
 * assert.equal(calcDiff(new Float32Array([1, 2]), new Float32Array([1, 2])), 0);
 * ```
 * @module
 */

/** Anything indexable by number with a length: typed arrays of numbers, or plain arrays. */
export type NumericArray = ArrayLike<number>;

function checkArray(x: unknown, name: string): asserts x is NumericArray {
  if (
    x === null || typeof x !== "object" || typeof (x as NumericArray).length !== "number" ||
    x instanceof BigInt64Array || x instanceof BigUint64Array
  ) {
    throw new TypeError(`Cannot compute calc_diff: ${name} must be an array or typed array of numbers`);
  }
}

/**
 * DeepGEMM's `calc_diff(x, y)`: both inputs are widened to float64 (exact for fp32/bf16 values), the two sums are
 * float64 sums (torch's reduction order is not reproduced; the sums here are compensated, so they are at least as
 * accurate), and the result is `1 − 2·Σxy / Σ(x² + y²)`, or 0 when the denominator is 0 (both all zero).
 *
 * @param x the expected values
 * @param y the actual values (same length)
 * @returns the difference measure; NaN if any input is NaN
 * @throws {TypeError} when an input is not an array of numbers
 * @throws {RangeError} when the lengths differ
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { calcDiff } from "./calc_diff.ts";
 * assert.equal(calcDiff([0, 0], [0, 0]), 0);
 * assert.equal(calcDiff([1, 0], [0, 1]), 1); // orthogonal
 * assert.equal(calcDiff([1], [-1]), 2);
 * ```
 */
export function calcDiff(x: NumericArray, y: NumericArray): number {
  checkArray(x, "x");
  checkArray(y, "y");
  if (x.length !== y.length) {
    throw new RangeError(`Cannot compute calc_diff: lengths differ (${x.length} vs ${y.length})`);
  }
  // Neumaier-compensated float64 sums.
  let sxy = 0, cxy = 0, sd = 0, cd = 0;
  for (let i = 0; i < x.length; i++) {
    const a = +x[i], b = +y[i];
    const p = a * b;
    let t = sxy + p;
    cxy += Math.abs(sxy) >= Math.abs(p) ? (sxy - t) + p : (p - t) + sxy;
    sxy = t;
    const d = a * a + b * b;
    t = sd + d;
    cd += Math.abs(sd) >= Math.abs(d) ? (sd - t) + d : (d - t) + sd;
    sd = t;
  }
  const denominator = sd + cd;
  if (denominator === 0) return 0;
  return 1 - (2 * (sxy + cxy)) / denominator;
}
