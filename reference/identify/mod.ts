/**
 * Identifying a kernel's rounding behaviour from its output: the model space, its evaluation on samples and in
 * full, the search, and the real kernels each variant is known to describe.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { variantLabel } from "./mod.ts";
 * assert.equal(variantLabel({ model: "cublaslt", promotion: "none" }), "cublaslt --promote none");
 * ```
 * @module
 */
export * from "./variants.ts";
export * from "./codes.ts";
export * from "./evaluate.ts";
export * from "./behaviours.ts";
export * from "./identify.ts";
export * from "./map_context.ts";
