/**
 * Comparing results: DeepGEMM's `calc_diff`, ULP distance per format, a bitwise compare that reports the mismatch
 * count and the first mismatch, with a NaN-class mode for NaN spellings that differ across libraries, the
 * mismatch map (per 128×128 tile: count, bounding box, worst element, the pattern in one line), and the comparison
 * of two tensors under a tolerance that `oracle compare` and `verify` report ({@link compareTensors}).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { calcDiff, compareBitwise, ulpDistance } from "./mod.ts";
 * assert.equal(calcDiff([1, 2, 3], [1, 2, 3]), 0);
 * assert.equal(ulpDistance("e4m3", 0x38, 0x3a), 2);
 * assert.equal(compareBitwise("e2m1", new Uint8Array([1]), new Uint8Array([1])).mismatches, 0);
 * ```
 * @module
 */
export * from "./calc_diff.ts";
export * from "./ulp.ts";
export * from "./bitwise.ts";
export * from "./mismatch_map.ts";
export * from "./compared_dtype.ts";
export * from "./compare_tensors.ts";
