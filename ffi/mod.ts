/**
 * The `Deno.dlopen` layer: one symbol table, library loading with an ABI check, device buffers, typed operation
 * wrappers that validate every argument before native code runs, and backend discovery (`cpu`, `cuda`, or a path).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ABI_VERSION, MODEL_CODES } from "./mod.ts";
 * assert.equal(ABI_VERSION, 1);
 * assert.equal(MODEL_CODES.exact, 0);
 * ```
 * @module
 */
export * from "./attention_ops.ts";
export * from "./backend.ts";
export * from "./device_buffer.ts";
export * from "./errors.ts";
export * from "./gemm_ops.ts";
export * from "./library.ts";
export * from "./models.ts";
export * from "./quant_ops.ts";
export * from "./symbols.ts";
export * from "./tensor_args.ts";
