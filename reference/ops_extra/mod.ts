/**
 * The non-GEMM references (lightning indexer, HyperConnection, Mega MoE) and their registry.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { EXTRA_OPS } from "./mod.ts";
 * assert.ok("fp8_paged_mqa_logits" in EXTRA_OPS);
 * ```
 * @module
 */
export * from "./registry.ts";
