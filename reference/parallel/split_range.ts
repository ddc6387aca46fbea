/**
 * Splitting `n` items into contiguous, nearly equal parts: how a pool's work is cut into chunks (GEMM tiles, MQA
 * query rows) whose results are put back together in order.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { splitRange } from "./split_range.ts";
 * assert.deepEqual(splitRange(5, 2), [[0, 2], [2, 5]]);
 * assert.deepEqual(splitRange(2, 4), [[0, 1], [1, 2]]); // never an empty part
 * ```
 * @module
 */

/**
 * Cuts `[0, n)` into at most `parts` contiguous, non-empty ranges of nearly equal length, in order.
 * @param n number of items
 * @param parts number of parts wanted
 * @returns `[lo, hi)` ranges covering `[0, n)`
 */
export function splitRange(n: number, parts: number): [number, number][] {
  const out: [number, number][] = [];
  for (let i = 0; i < parts; i++) {
    const lo = Math.floor((n * i) / parts), hi = Math.floor((n * (i + 1)) / parts);
    if (hi > lo) out.push([lo, hi]);
  }
  return out;
}
