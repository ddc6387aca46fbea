/**
 * Kernel models: how a kernel family drives the tensor core (promotion, scales, split-K, epilogue).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { KERNEL_MODELS } from "./mod.ts";
 * assert.equal(KERNEL_MODELS.sm100_1d1d.promotion, "none");
 * ```
 * @module
 */
export * from "./model_table.ts";
export * from "./kernel_models.ts";
export * from "./element.ts";
export * from "./sm90_fp8_tile.ts";
export * from "./exact_tile.ts";
