/**
 * Output elements as comparable codes: a tensor's stored bit patterns in row-major order as numbers (f32 as its
 * 32-bit pattern, integers as values), the NaN test of its dtype, and the count of positions where a candidate's codes
 * differ from the actual output's (any NaN equals any NaN: NaN payloads differ between libraries).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Tensor } from "../tensor/tensor.ts";
 * import { countMismatches, tensorCodes } from "./codes.ts";
 * const actual = tensorCodes(Tensor.from("bf16", [3], new Uint16Array([0x3f80, 0x7fc0, 0])));
 * const got = { index: new Int32Array([0, 1, 2]), codes: new Float64Array([0x3f80, 0x7fff, 0x8000]) };
 * assert.equal(countMismatches(got, actual), 1); // the NaNs agree, +0 and −0 do not
 * ```
 * @module
 */
import { isNanCode } from "../formats/codec.ts";
import { formatSpec } from "../formats/format_table.ts";
import { FORMAT_OF_DTYPE } from "../compare/compared_dtype.ts";
import type { DType } from "../tensor/dtype.ts";
import { Tensor } from "../tensor/tensor.ts";
import { rowMajorData } from "../tensor/values.ts";

/** Some elements of an output: row-major element indices and their codes. */
export interface ElementCodes {
  /** Row-major element indices. */
  index: Int32Array;
  /** The codes at those indices. */
  codes: Float64Array;
}

/** A whole output as codes, with its dtype's NaN test. */
export interface TensorCodes {
  dtype: DType;
  shape: number[];
  /** One code per element, row-major. */
  codes: Float64Array;
  /** Whether a code is a NaN of the dtype. */
  isNan: (code: number) => boolean;
}

/**
 * The NaN test of a dtype's codes (never true for integer dtypes).
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { nanTest } from "./codes.ts";
 * assert.equal(nanTest("bf16")(0x7fff), true);
 * assert.equal(nanTest("bf16")(0x7f80), false); // +Inf
 * assert.equal(nanTest("i32")(0x7fff), false);
 * ```
 */
export function nanTest(dtype: DType): (code: number) => boolean {
  if (dtype === "f32") return (c) => (c & 0x7fffffff) > 0x7f800000;
  if (dtype === "bf16") return (c) => (c & 0x7fff) > 0x7f80;
  const format = FORMAT_OF_DTYPE[dtype];
  if (format === undefined) return () => false;
  const table = new Uint8Array(2 ** formatSpec(format).bits);
  for (let c = 0; c < table.length; c++) table[c] = isNanCode(format, c) ? 1 : 0;
  return (c) => table[c] === 1;
}

/**
 * A tensor's elements as codes, row-major.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Tensor } from "../tensor/tensor.ts";
 * import { tensorCodes } from "./codes.ts";
 * assert.deepEqual([...tensorCodes(Tensor.from("f32", [1], new Float32Array([1]))).codes], [0x3f800000]);
 * ```
 */
export function tensorCodes(t: Tensor): TensorCodes {
  const flat = rowMajorData(t);
  const n = t.numel;
  const codes = new Float64Array(n);
  if (t.dtype === "f32") {
    const u = new Uint32Array(flat.buffer, flat.byteOffset, n);
    for (let i = 0; i < n; i++) codes[i] = u[i];
  } else {
    for (let i = 0; i < n; i++) codes[i] = Number(flat[i]);
  }
  return { dtype: t.dtype, shape: [...t.shape], codes, isNan: nanTest(t.dtype) };
}

/**
 * The positions of `got` whose code differs from the actual output's (NaN equals NaN).
 * @param got a candidate's elements
 * @param actual the actual output
 * @returns the number of differing elements
 */
export function countMismatches(got: ElementCodes, actual: TensorCodes): number {
  const { index, codes } = got;
  const a = actual.codes, isNan = actual.isNan;
  let k = 0;
  for (let i = 0; i < index.length; i++) {
    const x = codes[i], y = a[index[i]];
    if (x !== y && !(isNan(x) && isNan(y))) k++;
  }
  return k;
}

/**
 * A tensor holding a candidate's codes where it defines elements and the actual output's elsewhere, plus the
 * row-major mask of the defined ones (for a mismatch map).
 * @param got the candidate's elements
 * @param actual the actual output
 * @returns the tensor and its mask
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Tensor } from "../tensor/tensor.ts";
 * import { codesTensor, tensorCodes } from "./codes.ts";
 * const actual = tensorCodes(Tensor.from("bf16", [2], new Uint16Array([1, 2])));
 * const { tensor, defined } = codesTensor({ index: new Int32Array([1]), codes: new Float64Array([7]) }, actual);
 * assert.deepEqual([...tensor.data], [1, 7]);
 * assert.deepEqual([...defined], [0, 1]);
 * ```
 */
export function codesTensor(got: ElementCodes, actual: TensorCodes): { tensor: Tensor; defined: Uint8Array } {
  const n = actual.codes.length;
  const defined = new Uint8Array(n);
  const merged = Float64Array.from(actual.codes);
  for (let i = 0; i < got.index.length; i++) {
    merged[got.index[i]] = got.codes[i];
    defined[got.index[i]] = 1;
  }
  const t = Tensor.zeros(actual.dtype, actual.shape);
  if (actual.dtype === "f32") {
    const u = new Uint32Array((t.data as Float32Array).buffer, (t.data as Float32Array).byteOffset, n);
    for (let i = 0; i < n; i++) u[i] = merged[i];
  } else if (actual.dtype === "i64") {
    const d = t.data as BigInt64Array;
    for (let i = 0; i < n; i++) d[i] = BigInt(merged[i]);
  } else {
    const d = t.data as Uint16Array;
    for (let i = 0; i < n; i++) d[i] = merged[i];
  }
  return { tensor: t, defined };
}
