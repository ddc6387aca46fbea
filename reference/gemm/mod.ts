/**
 * One reference per DeepGEMM GEMM operation, by DeepGEMM function name (`GEMM_OPS`, a view of `../registry.ts`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { GEMM_OPS } from "../registry.ts";
 * assert.ok("k_grouped_fp8_gemm_tn_contiguous" in GEMM_OPS);
 * ```
 * @module
 */
export * from "./op_spec.ts";
export * from "./tensor_arguments.ts";
export * from "./scalar_arguments.ts";
export * from "./scale_factors.ts";
export * from "./output.ts";
export * from "./job.ts";
export * from "./engine.ts";
export * from "./evaluate_parallel.ts";
