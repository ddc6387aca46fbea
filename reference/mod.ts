/**
 * The bit-exact reference: number formats, conversion profiles, exact fp32 arithmetic, quantizers,
 * scale-factor layouts, tensor-core models and one reference per DeepGEMM operation, and the search that identifies
 * which model variant produced an output. No I/O, no native code.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { bf16Rne } from "./mod.ts";
 * assert.equal(bf16Rne(1), 0x3f80);
 * ```
 * @module
 */
export * from "./fp32.ts";
export * from "./random/prng.ts";
export * from "./tensor/mod.ts";
export * from "./formats/mod.ts";
export * from "./compare/mod.ts";
export * from "./quant/mod.ts";
export * from "./layout/mod.ts";
export * from "./indexer/mod.ts";
export * from "./hyperconnection/mod.ts";
export * from "./mega_moe/mod.ts";
export * from "./non_gemm_ops/mod.ts";
export * from "./registry.ts";
export * from "./tensor_core/mod.ts";
export * from "./kernel_models/mod.ts";
export * from "./gemm/mod.ts";
export * from "./parallel/mod.ts";
export * from "./identify/mod.ts";
