/**
 * File formats: the safetensors reader and writer used by the CLI, the fixtures and users' PyTorch scripts.
 * Kept out of `reference/` because the reference does no I/O. Tensors come back as the reference's {@link Tensor}
 * (re-exported here with its {@link DType}).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseSafetensors, serializeSafetensors, Tensor } from "./mod.ts";
 * const q = Tensor.from("e2m1", [4], new Uint8Array([1, 2, 0xf, 7]));
 * const back = parseSafetensors(serializeSafetensors({ q }));
 * assert.deepEqual([...back.tensors.get("q")!.data], [1, 2, 0xf, 7]);
 * assert.equal(back.metadata.f4_nibble_order, "low_first");
 * ```
 * @module
 */
export * from "./safetensors_dtype.ts";
export * from "./safetensors_error.ts";
export * from "./read_safetensors.ts";
export * from "./write_safetensors.ts";
export { type DType, type Storage, Tensor } from "../reference/tensor/mod.ts";
