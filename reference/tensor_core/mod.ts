/**
 * Tensor-core accumulation models: one parametrised fused dot-add (MMA-Sim) and a table of profiles.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { fusedDotAdd } from "./mod.ts";
 * assert.equal(fusedDotAdd("hopper_wgmma_fp8", [256, 256, 2 ** -5], [1, 1, 1], 0), 512);
 * ```
 * @module
 */
export * from "./profiles.ts";
export * from "./operand_tables.ts";
export * from "./decoded_operand.ts";
export * from "./exact_sum.ts";
export * from "./fused_dot_add.ts";
