/**
 * gemm-oracle: what a low-precision GEMM kernel should have produced, bit for bit.
 *
 * The reference (pure TypeScript, deterministic) is re-exported from `reference/mod.ts`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { fma32 } from "./mod.ts";
 * assert.equal(fma32(2, 3, 1), 7);
 * ```
 * @module
 */
export * from "./reference/mod.ts";
