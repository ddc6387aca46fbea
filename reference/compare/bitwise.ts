/**
 * Bitwise comparison of two code arrays of one format: mismatch count, the first mismatch (coordinate, both values,
 * both bit patterns) and the largest ULP distance. A NaN-class mode treats any NaN code as equal to any other, for
 * formats whose NaN spelling differs across libraries (numerics.md §3.5, §4.3).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { compareBitwise } from "./bitwise.ts";
 * const r = compareBitwise("bf16", new Uint16Array([0x3f80, 0x7fc0]), new Uint16Array([0x3f80, 0x7fff]));
 * assert.equal(r.mismatches, 1);
 * assert.equal(compareBitwise("bf16", new Uint16Array([0x7fc0]), new Uint16Array([0x7fff]), { nan: "class" }).mismatches, 0);
 * ```
 * @module
 */

import { decode, isNanCode } from "../formats/codec.ts";
import { type FormatName, formatSpec } from "../formats/format_table.ts";
import { ulpDistance } from "./ulp.ts";
import { describeValue } from "../describe.ts";

/** One side of a mismatch. */
export interface MismatchSide {
  /** The decoded value (NaN for NaN codes). */
  readonly value: number;
  /** The code (bit pattern) as an unsigned integer. */
  readonly bits: number;
}

/** The first element that differs. */
export interface Mismatch {
  /** Flat (row-major) index. */
  readonly index: number;
  /** Coordinate in `shape` (the flat index when no shape was given). */
  readonly coordinate: readonly number[];
  /** The reference's element. */
  readonly expected: MismatchSide;
  /** The element under test. */
  readonly actual: MismatchSide;
}

/** The result of {@link compareBitwise}. */
export interface BitwiseReport {
  /** Elements compared. */
  readonly elements: number;
  /** Elements whose codes differ (NaN spellings count unless `nan` is `class`). */
  readonly mismatches: number;
  /** The first mismatch in row-major order, or null when none. */
  readonly first: Mismatch | null;
  /** Largest ULP distance over all elements (Infinity when NaN meets a number); 0 when identical. */
  readonly maxUlp: number;
}

/** Options of {@link compareBitwise}. */
export interface BitwiseOptions {
  /** Row-major shape used to report coordinates; its product must equal the element count. */
  readonly shape?: readonly number[];
  /** `bits` (default): NaN codes must match exactly; `class`: any NaN equals any NaN. */
  readonly nan?: "bits" | "class";
}

function asCodes(format: FormatName, x: unknown, name: string): Uint8Array | Uint16Array | Uint32Array {
  const spec = formatSpec(format);
  const want = spec.bits <= 8 ? Uint8Array : spec.bits <= 16 ? Uint16Array : Uint32Array;
  if (spec.bits === 32 && x instanceof Float32Array) return new Uint32Array(x.buffer, x.byteOffset, x.length);
  if (!(x instanceof want)) {
    const got = x === null ? "null" : (x as object)?.constructor?.name ?? typeof x;
    throw new TypeError(`Cannot compare "${format}" codes: ${name} must be a ${want.name}, got ${got}`);
  }
  return x;
}

/**
 * Converts a flat row-major index to a coordinate.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { unravelIndex } from "./bitwise.ts";
 * assert.deepEqual(unravelIndex(5, [2, 3]), [1, 2]);
 * ```
 */
export function unravelIndex(index: number, shape: readonly number[]): number[] {
  const c = new Array<number>(shape.length);
  let r = index;
  for (let d = shape.length - 1; d >= 0; d--) {
    c[d] = r % shape[d];
    r = Math.floor(r / shape[d]);
  }
  return c;
}

/**
 * Compares two arrays of `format` codes element by element.
 *
 * @param format the format of both arrays (f32 also accepts Float32Array, compared by bits)
 * @param expected the reference codes
 * @param actual the codes under test
 * @param options shape for coordinates; NaN comparison mode
 * @returns counts, the first mismatch and the largest ULP distance
 * @throws {TypeError} for arrays of the wrong type
 * @throws {RangeError} for different lengths, a bad shape or an unknown format
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { compareBitwise } from "./bitwise.ts";
 * const r = compareBitwise("e4m3", new Uint8Array([1, 2, 3, 4]), new Uint8Array([1, 2, 3, 6]), { shape: [2, 2] });
 * assert.equal(r.mismatches, 1);
 * assert.deepEqual(r.first?.coordinate, [1, 1]);
 * assert.equal(r.first?.actual.value, 6 * 2 ** -9);
 * assert.equal(r.maxUlp, 2);
 * ```
 */
export function compareBitwise(
  format: FormatName,
  expected: Uint8Array | Uint16Array | Uint32Array | Float32Array,
  actual: Uint8Array | Uint16Array | Uint32Array | Float32Array,
  options: BitwiseOptions = {},
): BitwiseReport {
  const e = asCodes(format, expected, "expected");
  const a = asCodes(format, actual, "actual");
  if (e.length !== a.length) {
    throw new RangeError(`Cannot compare "${format}" codes: lengths differ (${e.length} vs ${a.length})`);
  }
  const nanMode = options.nan ?? "bits";
  if (nanMode !== "bits" && nanMode !== "class") {
    throw new RangeError(`Cannot compare: nan mode ${describeValue(nanMode)} is not one of bits, class`);
  }
  const shape = options.shape;
  if (shape !== undefined) {
    if (!Array.isArray(shape) || shape.some((d) => !Number.isInteger(d) || d < 0)) {
      throw new TypeError("Cannot compare: shape must be an array of non-negative integers");
    }
    const n = shape.reduce((p, d) => p * d, 1);
    if (n !== e.length) {
      throw new RangeError(`Cannot compare: shape [${shape.join(", ")}] holds ${n} elements, not ${e.length}`);
    }
  }
  const spec = formatSpec(format);
  const small = spec.bits <= 16;
  // NaN lookup for small formats; f32 checks the bits directly.
  const nanOf = small
    ? (() => {
      const t = new Uint8Array(2 ** spec.bits);
      for (let c = 0; c < t.length; c++) t[c] = isNanCode(format, c) ? 1 : 0;
      return (c: number) => t[c] === 1;
    })()
    : (c: number) => (c & 0x7fffffff) > 0x7f800000;
  let mismatches = 0;
  let first: Mismatch | null = null;
  let maxUlp = 0;
  for (let i = 0; i < e.length; i++) {
    const x = e[i], y = a[i];
    if (x === y) continue;
    const xn = nanOf(x), yn = nanOf(y);
    if (nanMode === "class" && xn && yn) continue;
    mismatches++;
    const d = ulpDistance(format, x, y);
    if (d > maxUlp) maxUlp = d;
    if (first === null) {
      first = {
        index: i,
        coordinate: shape ? unravelIndex(i, shape) : [i],
        expected: { value: decode(format, x), bits: x },
        actual: { value: decode(format, y), bits: y },
      };
    }
  }
  return { elements: e.length, mismatches, first, maxUlp };
}
