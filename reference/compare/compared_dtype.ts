/**
 * What the compared elements are: each float dtype's format-table name (integer dtypes have none: they compare by
 * value), the 16-bit integer readings of 16-bit storage (`i16`, `u16`: a safetensors I16 / U16 tensor, or a BF16
 * output viewed as `torch.int16` the way DeepGEMM's tests compare bits), and how an element's bits are spelled.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { hexBits, int16Reading } from "./compared_dtype.ts";
 * assert.equal(hexBits("i16", -1), "0xffff");
 * assert.equal(int16Reading("bf16", "i16"), "i16"); // a BF16 tensor against its int16 view: compared as int16
 * assert.equal(int16Reading("bf16", "bf16"), undefined);
 * ```
 * @module
 */
import type { FormatName } from "../formats/format_table.ts";
import { type DType, DTYPES } from "../tensor/dtype.ts";
import type { Tensor } from "../tensor/tensor.ts";
import { rowMajorData } from "../tensor/values.ts";

/** A 16-bit integer reading of 16-bit storage: signed (`i16`, torch.int16) or unsigned (`u16`). */
export type Int16Dtype = Extract<DType, "i16" | "u16">;

/** The format-table name of each float dtype (integer dtypes have none: they compare by value). */
export const FORMAT_OF_DTYPE: Readonly<Partial<Record<DType, FormatName>>> = Object.freeze({
  f32: "f32",
  bf16: "bf16",
  f16: "fp16",
  e4m3: "e4m3",
  e5m2: "e5m2",
  ue8m0: "ue8m0",
  e2m1: "e2m1",
});

/** Hexadecimal digits of one element's bits: two per storage byte, one for the 4-bit e2m1 codes. */
function hexDigits(dtype: DType): number {
  return dtype === "e2m1" ? 1 : 2 * DTYPES[dtype].bytes;
}

/**
 * An element's bits in hexadecimal, zero-padded to the dtype's width (negative integers in two's complement).
 * @param dtype the element type
 * @param bits the code, or the integer value
 * @returns `0x3f80`, `0xffff`, ...
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { hexBits } from "./compared_dtype.ts";
 * assert.equal(hexBits("bf16", 0x3f80), "0x3f80");
 * assert.equal(hexBits("i64", -2n), "0xfffffffffffffffe");
 * ```
 */
export function hexBits(dtype: DType, bits: number | bigint): string {
  const width = hexDigits(dtype);
  const u = typeof bits === "bigint" ? BigInt.asUintN(64, bits) : BigInt(bits >>> 0) & ((1n << BigInt(4 * width)) - 1n);
  return "0x" + u.toString(16).padStart(width, "0");
}

/** Whether a dtype is one of 16 bits (bf16, f16, i16, u16) that an int16 reading may stand for. */
function isSixteenBit(d: DType): boolean {
  return DTYPES[d].bytes === 2;
}

/**
 * The integer reading two tensors are compared as when one of them is a 16-bit integer tensor: `i16` against `i16`,
 * `bf16` or `f16` (a float tensor's bits viewed as torch.int16), the same for `u16`; `undefined` when neither is.
 * @param expected the expected tensor's element type
 * @param actual the actual tensor's element type
 * @returns the integer reading, or undefined
 * @throws {RangeError} for an integer reading against a dtype of another width or against the other reading
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { int16Reading } from "./compared_dtype.ts";
 * assert.equal(int16Reading("u16", "f16"), "u16");
 * assert.throws(() => int16Reading("i16", "f32"), /dtypes differ \(expected i16, actual f32\)/);
 * ```
 */
export function int16Reading(expected: DType, actual: DType): Int16Dtype | undefined {
  const e = expected === "i16" || expected === "u16" ? expected : undefined;
  const a = actual === "i16" || actual === "u16" ? actual : undefined;
  if (e === undefined && a === undefined) return undefined;
  if ((e !== undefined && a !== undefined && e !== a) || !isSixteenBit(expected) || !isSixteenBit(actual)) {
    throw new RangeError(`dtypes differ (expected ${expected}, actual ${actual})`);
  }
  return e ?? a;
}

/**
 * A tensor's 16-bit storage, in row-major order, read as 16-bit integers.
 * @param t a tensor stored in 16 bits (bf16, f16, i16, u16)
 * @param reading `i16` (signed) or `u16`
 * @returns the elements as integers (a view of the row-major data)
 * @throws {RangeError} when the tensor is not stored in 16 bits
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Tensor } from "../tensor/tensor.ts";
 * import { int16Values } from "./compared_dtype.ts";
 * const t = Tensor.from("bf16", [2], new Uint16Array([0x3f80, 0xbf80]));
 * assert.deepEqual([...int16Values(t, "i16")], [0x3f80, 0xbf80 - 0x10000]);
 * ```
 */
export function int16Values(t: Tensor, reading: Int16Dtype): Int16Array | Uint16Array {
  const d = rowMajorData(t);
  if (!(d instanceof Uint16Array || d instanceof Int16Array)) {
    throw new RangeError(`a ${t.dtype} tensor is not stored in 16 bits; it cannot be read as ${reading}`);
  }
  return reading === "u16"
    ? new Uint16Array(d.buffer, d.byteOffset, d.length)
    : new Int16Array(d.buffer, d.byteOffset, d.length);
}
