/**
 * Number formats and conversions: the format table, the generic minifloat codec, the named conversion profiles
 * of real libraries (ml_dtypes, torch, CUDA, JAX, torchao, DeepGEMM, microxcaling) and batch forms over typed arrays.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { decodeArray, encodeArray, getConverter } from "./mod.ts";
 * assert.equal(getConverter("ml_dtypes", "e4m3")(0x43e80001), 0x7f); // 464.00003 → NaN in ml_dtypes
 * const codes = encodeArray("ml_dtypes", "bf16", new Float32Array([1, 1 + 2 ** -8]));
 * assert.deepEqual(codes, new Uint16Array([0x3f80, 0x3f80]));
 * assert.deepEqual(decodeArray("bf16", codes), new Float32Array([1, 1]));
 * ```
 * @module
 */
export * from "./format_table.ts";
export * from "./codec.ts";
export * from "./profiles.ts";
export * from "./batch.ts";
