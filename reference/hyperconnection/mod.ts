/**
 * The HyperConnection pre-norm GEMM of DeepGEMM (`tf32_hc_prenorm_gemm`): TF32 `A·Bᵀ`, the SM90 square-sum order,
 * the split-K partition and the fp32 → TF32 rounding as a named model parameter.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { hcSplitBlocks } from "./mod.ts";
 * assert.deepEqual(hcSplitBlocks(7, 3, 0), [0, 3]); // 7 blocks over 3 splits: 3, 2, 2
 * assert.deepEqual(hcSplitBlocks(7, 3, 2), [5, 2]);
 * ```
 * @module
 */
export * from "./tf32_rounding.ts";
export * from "./tf32_hc_prenorm_gemm.ts";
