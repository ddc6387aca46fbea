/**
 * DeepGEMM's non-GEMM operations as op specs (`OpSpec`, the shape of `reference/gemm`'s): the lightning indexer
 * (MQA logits, paged MQA logits, paged metadata), the HyperConnection pre-norm GEMM and Mega MoE. The operation
 * registry (`reference/registry.ts`) lists them beside the GEMMs.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { fp8PagedMqaLogitsOp } from "./mod.ts";
 * assert.equal(fp8PagedMqaLogitsOp.name, "fp8_paged_mqa_logits");
 * ```
 * @module
 */
export * from "./indexer_ops.ts";
export * from "./hyperconnection_op.ts";
export * from "./mega_moe_ops.ts";
