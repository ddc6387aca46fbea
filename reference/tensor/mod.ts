/**
 * Tensors: dtypes with their storage, strided views that never copy, and decoding of element values to fp32.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Tensor } from "./mod.ts";
 * assert.equal(Tensor.zeros("bf16", [4, 8]).data.constructor, Uint16Array);
 * ```
 * @module
 */
export * from "./dtype.ts";
export * from "./tensor.ts";
export * from "./values.ts";
