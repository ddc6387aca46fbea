/**
 * The comparison of two tensors of the same shape, as `oracle compare` and `verify` report it: the element count,
 * the mismatch count, the first mismatch (coordinate, both values, both bit patterns), the largest ULP distance,
 * DeepGEMM's `calc_diff` (deepgemm-ops.md §9), whether a tolerance holds, and on request the mismatch map. Float
 * dtypes compare by code in their format (NaN spellings optionally as one class); integer dtypes, and 16-bit storage
 * read as `i16` / `u16`, compare by value with |difference| as the distance.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Tensor } from "../tensor/tensor.ts";
 * import { compareTensors } from "./compare_tensors.ts";
 * const want = Tensor.from("bf16", [2], new Uint16Array([0x3f80, 0x4000]));
 * const got = Tensor.from("bf16", [2], new Uint16Array([0x3f80, 0x4001]));
 * const r = compareTensors("d", want, got, { kind: "ulp", limit: 1 });
 * assert.deepEqual([r.mismatches, r.maxUlp, r.pass], [1, 1, true]);
 * assert.deepEqual(r.first?.actual, { value: 2.015625, bits: "0x4001" });
 * ```
 * @module
 */
import type { DType } from "../tensor/dtype.ts";
import type { Tensor } from "../tensor/tensor.ts";
import { rowMajorData, toFloat32 } from "../tensor/values.ts";
import { compareBitwise, unravelIndex } from "./bitwise.ts";
import { calcDiff } from "./calc_diff.ts";
import { FORMAT_OF_DTYPE, hexBits, type Int16Dtype, int16Values } from "./compared_dtype.ts";
import { type MismatchMap, mismatchMap, type MismatchMapOptions } from "./mismatch_map.ts";

/** A tolerance: bit-exact, DeepGEMM's `calc_diff ≤ limit`, or every element within `limit` ULPs. */
export type CompareMode = { kind: "bitwise" } | { kind: "calc-diff"; limit: number } | { kind: "ulp"; limit: number };

/** One side of the first mismatch. */
export interface ReportedValue {
  /** The element's value (decoded; integers as numbers, 64-bit integers as decimal strings). */
  value: number | string;
  /** Its bit pattern, hexadecimal (`0x3f80`). */
  bits: string;
}

/** The comparison of one tensor. */
export interface TensorComparison {
  /** Tensor name. */
  name: string;
  /** Its dtype (the integer reading for 16-bit storage compared as `i16` / `u16`). */
  dtype: DType;
  /** Its shape. */
  shape: number[];
  /** Number of elements. */
  elements: number;
  /** Elements whose bits differ (NaN spellings count unless `nan` is `class`). */
  mismatches: number;
  /** The first mismatch in row-major order, or null. */
  first: { coordinate: number[]; expected: ReportedValue; actual: ReportedValue } | null;
  /** Largest ULP distance (Infinity when a NaN meets a number; |difference| for integers). */
  maxUlp: number;
  /** DeepGEMM's calc_diff of the decoded values (NaN when either side holds NaN or ∞). */
  calcDiff: number;
  /** Inside the tolerance? */
  pass: boolean;
  /** Where the mismatches are (per 128×128 tile), when there are any and `withMap` was asked. */
  map?: MismatchMap;
}

/** The integer path: values, |difference| as the distance. */
function compareIntegers(
  dtype: DType,
  shape: readonly number[],
  e: ArrayLike<number> | BigInt64Array,
  a: ArrayLike<number> | BigInt64Array,
): Pick<TensorComparison, "mismatches" | "maxUlp" | "first" | "calcDiff"> {
  let mismatches = 0, maxUlp = 0;
  let first: TensorComparison["first"] = null;
  const ev = new Float64Array(e.length), av = new Float64Array(a.length);
  for (let i = 0; i < e.length; i++) {
    const x = e[i], y = a[i];
    ev[i] = Number(x);
    av[i] = Number(y);
    if (x === y) continue;
    mismatches++;
    const d = typeof x === "bigint"
      ? Number(x > (y as bigint) ? x - (y as bigint) : (y as bigint) - x)
      : Math.abs(x - (y as number));
    if (d > maxUlp) maxUlp = d;
    if (first === null) {
      first = {
        coordinate: unravelIndex(i, shape),
        expected: { value: typeof x === "bigint" ? x.toString() : x, bits: hexBits(dtype, x) },
        actual: { value: typeof y === "bigint" ? y.toString() : y, bits: hexBits(dtype, y) },
      };
    }
  }
  return { mismatches, maxUlp, first, calcDiff: calcDiff(ev, av) };
}

/**
 * Compares two tensors of the same dtype and shape.
 * @param name the tensor name (for the report)
 * @param expected the reference tensor
 * @param actual the tensor under test
 * @param mode the tolerance
 * @param nan `bits`: NaN spellings must match; `class`: any NaN equals any NaN
 * @param withMap also map the mismatches per tile (`true`, or the map's options: masked rows, group label)
 * @param asInt16 compare both tensors' 16-bit storage as this integer type (`int16Reading` says when); their
 *   dtypes may then differ (a bf16 tensor against an f16 one holding the same bits)
 * @returns the comparison
 * @throws {RangeError} for different dtypes (without `asInt16`) or shapes
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Tensor } from "../tensor/tensor.ts";
 * import { compareTensors } from "./compare_tensors.ts";
 * // A BF16 output against its torch.int16 view: compared as 16-bit integers.
 * const want = Tensor.from("bf16", [2], new Uint16Array([0x3f80, 0xbf80]));
 * const got = Tensor.from("bf16", [2], new Uint16Array([0x3f80, 0xbf81]));
 * const r = compareTensors("d", want, got, { kind: "bitwise" }, "bits", false, "i16");
 * assert.equal(r.dtype, "i16");
 * assert.deepEqual(r.first?.expected, { value: -16512, bits: "0xbf80" });
 * ```
 */
export function compareTensors(
  name: string,
  expected: Tensor,
  actual: Tensor,
  mode: CompareMode,
  nan: "bits" | "class" = "bits",
  withMap: boolean | MismatchMapOptions = false,
  asInt16?: Int16Dtype,
): TensorComparison {
  if (asInt16 === undefined && expected.dtype !== actual.dtype) {
    throw new RangeError(`tensor "${name}": dtypes differ (expected ${expected.dtype}, actual ${actual.dtype})`);
  }
  if (expected.shape.length !== actual.shape.length || expected.shape.some((d, i) => d !== actual.shape[i])) {
    throw new RangeError(
      `tensor "${name}": shapes differ (expected [${expected.shape.join(", ")}], actual [${actual.shape.join(", ")}])`,
    );
  }
  const dtype: DType = asInt16 ?? expected.dtype;
  const shape = [...expected.shape];
  const format = asInt16 === undefined ? FORMAT_OF_DTYPE[expected.dtype] : undefined;
  let r: Pick<TensorComparison, "mismatches" | "maxUlp" | "first" | "calcDiff">;
  if (asInt16 !== undefined) {
    r = compareIntegers(dtype, shape, int16Values(expected, asInt16), int16Values(actual, asInt16));
  } else if (format !== undefined) {
    const e = rowMajorData(expected) as Uint8Array | Uint16Array | Float32Array;
    const a = rowMajorData(actual) as Uint8Array | Uint16Array | Float32Array;
    const b = compareBitwise(format, e, a, { shape, nan });
    r = {
      mismatches: b.mismatches,
      maxUlp: b.maxUlp,
      first: b.first && {
        coordinate: [...b.first.coordinate],
        expected: { value: b.first.expected.value, bits: hexBits(dtype, b.first.expected.bits) },
        actual: { value: b.first.actual.value, bits: hexBits(dtype, b.first.actual.bits) },
      },
      calcDiff: calcDiff(toFloat32(expected), toFloat32(actual)),
    };
  } else {
    const e = rowMajorData(expected) as Int32Array | Uint8Array | Int8Array | BigInt64Array;
    const a = rowMajorData(actual) as Int32Array | Uint8Array | Int8Array | BigInt64Array;
    r = compareIntegers(dtype, shape, e, a);
  }
  const pass = mode.kind === "bitwise"
    ? r.mismatches === 0
    : mode.kind === "ulp"
    ? r.maxUlp <= mode.limit
    : r.mismatches === 0 || r.calcDiff <= mode.limit;
  const out: TensorComparison = {
    name,
    dtype,
    shape,
    elements: expected.numel,
    mismatches: r.mismatches,
    first: r.first,
    maxUlp: r.maxUlp,
    calcDiff: r.calcDiff,
    pass,
  };
  if (withMap !== false && r.mismatches > 0) {
    out.map = mismatchMap(expected, actual, { ...(typeof withMap === "object" ? withMap : {}), nan, asInt16 });
  }
  return out;
}
