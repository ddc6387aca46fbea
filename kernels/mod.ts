/**
 * Native kernels: the C ABI header (`gemm_oracle.h`), the C++ CPU backend (`cpu/`), the CUDA backend (`cuda/`) and
 * the build step that compiles them on demand into `.cache/kernels/`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { BUILD_FLAGS } from "./mod.ts";
 * assert.ok(BUILD_FLAGS.cpu.includes("-O2"));
 * ```
 * @module
 */
export * from "./build.ts";
