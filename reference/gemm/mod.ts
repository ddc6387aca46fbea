/**
 * One reference per DeepGEMM GEMM operation, by DeepGEMM function name ({@link GEMM_OPS}).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { GEMM_OPS } from "./mod.ts";
 * assert.ok("k_grouped_fp8_gemm_tn_contiguous" in GEMM_OPS);
 * ```
 * @module
 */
export * from "./registry.ts";
export * from "./op_spec.ts";
export * from "./job.ts";
export * from "./engine.ts";
