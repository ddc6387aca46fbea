/**
 * References of DeepGEMM's lightning-indexer operations: `fp8_mqa_logits` (FP8 path of `fp8_fp4_mqa_logits`),
 * `fp8_paged_mqa_logits`, `get_paged_mqa_logits_metadata` (SM90) and the clean-logits rule, with the head-reduction
 * order as a named part of the model (`sm90` = DeepGEMM's SM90 kernel, probe-verified on an H200).
 * SM100 paths of `fp8_fp4_*mqa_logits` (from source, not checked on a GPU): packed FP4 Q/KV with per-32 UE8M0 scales
 * scored by the block-scaled `tcgen05_mxf4nvf4` profile, the FP4 page format, and bf16 weights (`sm100_bf16`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { reduceHeads } from "./mod.ts";
 * const s = new Float64Array(64).fill(2), w = new Float64Array(64).fill(0.125);
 * assert.equal(reduceHeads("sm90", s, 0, w, 0, 64, 1), 16);
 * ```
 * @module
 */
export * from "./head_reduction.ts";
export * from "./bf16_fma.ts";
export * from "./fp4_operands.ts";
export * from "./mqa_models.ts";
export * from "./clean_logits.ts";
export * from "./mqa_logits.ts";
export * from "./paged_mqa_logits.ts";
export * from "./paged_mqa_logits_metadata.ts";
export * from "./mqa_logits_parallel.ts";
