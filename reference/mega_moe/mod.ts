/**
 * Mega MoE as mathematics in one process: exactly specified exp / SiLU (correctly rounded, or the H200-measured
 * table), SwiGLU with the optional bf16 clamp, per-32 FP8 requantization with UE8M0 ceil scales, block-scaled
 * FP8×FP4 (or BF16) GEMMs from the tensor-core model, the slot-ordered fp32 combine, the receive statistics and
 * `transform_weights_for_mega_moe`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { requantPer32 } from "./mod.ts";
 * assert.deepEqual(Array.from(requantPer32(new Float32Array(32).fill(1)).sf), [119]); // 2^ceil(log2(1/448)) = 2^-8: byte 127 − 8
 * ```
 * @module
 */
export * from "./exp32.ts";
export * from "./silu.ts";
export * from "./swiglu_quant.ts";
export * from "./block_scaled_dot.ts";
export * from "./mega_moe.ts";
export * from "./mega_moe_unfused.ts";
export * from "./transform_weights.ts";
