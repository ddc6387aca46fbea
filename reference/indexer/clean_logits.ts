/**
 * DeepGEMM's clean-logits rule (`impls/smxx_clean_logits.cuh`, `deepgemm-ops.md` §8.4): which logits a clean pass
 * overwrites with −inf. Row i with next_n = n uses `ks = start ? start[i div n] : 0` and
 * `ke = end[i div n] − n + (i mod n) + 1` (unsigned arithmetic in the kernel: a negative ke wraps to a huge value, so
 * nothing at or beyond it is cleaned); every column j < S_kv with `j < ks` or `j ≥ ke` becomes −inf, the columns in
 * `[ks, ke)` are untouched, and a row with ks ≥ ke becomes −inf entirely. (The kernel also cleans the row padding up
 * to the end of the last 256-wide block; the oracle's logical view stops at S_kv.)
 * @module
 */

/**
 * The half-open range `[ks, ke)` that the clean pass leaves untouched in row `i`.
 * @param i row index (query, or `b·next_n + j` for paged logits)
 * @param nextN next_n (1 for non-paged logits)
 * @param start per-request start offsets, or `undefined` (paged: starts at 0)
 * @param end per-request end offsets (non-paged: `ke`; paged: `context_lens`)
 * @returns `[ks, ke]`, with ke = +Infinity where the unsigned kernel arithmetic wraps
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { cleanRange } from "./clean_logits.ts";
 * assert.deepEqual(cleanRange(5, 2, undefined, [7, 9, 12]), [0, 12]); // row 5 = request 2, token 1 of 2
 * assert.deepEqual(cleanRange(4, 2, undefined, [7, 9, 12]), [0, 11]);
 * assert.deepEqual(cleanRange(0, 1, [3], [8]), [3, 8]);
 * ```
 */
export function cleanRange(
  i: number,
  nextN: number,
  start: ArrayLike<number> | undefined,
  end: ArrayLike<number>,
): [number, number] {
  const r = Math.floor(i / nextN);
  const ks = start === undefined ? 0 : start[r] >>> 0;
  const keSigned = end[r] - nextN + (i % nextN) + 1;
  const ke = keSigned < 0 ? Infinity : keSigned;
  return [ks, ke];
}

/**
 * Whether the clean pass writes −inf at column j of a row with untouched range `[ks, ke)`.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { isCleaned } from "./clean_logits.ts";
 * assert.equal(isCleaned(2, 3, 8), true);
 * assert.equal(isCleaned(3, 3, 8), false);
 * assert.equal(isCleaned(5, 9, 4), true); // ks ≥ ke: the whole row
 * ```
 */
export function isCleaned(j: number, ks: number, ke: number): boolean {
  return j < ks || j >= ke;
}
