/**
 * Distance in units in the last place between two codes of one format: the number of representable values
 * between them, counting +0 and −0 as one value. Infinity, where present, is one step beyond the largest finite.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ulpDistance } from "./ulp.ts";
 * assert.equal(ulpDistance("e4m3", 0x01, 0x81), 2); // 2^-9 and −2^-9
 * ```
 * @module
 */

import { isNanCode } from "../formats/codec.ts";
import { type FormatName, formatSpec } from "../formats/format_table.ts";

/**
 * The ordinal of a code on the number line: sign-magnitude → a signed integer, +0 and −0 both 0.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { codeOrdinal } from "./ulp.ts";
 * assert.equal(codeOrdinal("e2m1", 0x9), -1);
 * ```
 */
export function codeOrdinal(format: FormatName, code: number): number {
  const spec = formatSpec(format);
  if (!Number.isInteger(code) || code < 0 || code >= 2 ** spec.bits) {
    throw new RangeError(
      `Cannot order code ${code}: format "${format}" codes are integers in [0, ${2 ** spec.bits - 1}]`,
    );
  }
  if (!spec.hasSign) return code;
  const half = 2 ** (spec.bits - 1);
  return code >= half ? -(code - half) : code;
}

/**
 * ULP distance between two codes of `format`: |ordinal(a) − ordinal(b)|; 0 when both are NaN codes, Infinity when
 * only one is.
 *
 * @param format the format of both codes
 * @param a a code
 * @param b a code
 * @returns the number of representable steps between them
 * @throws {RangeError} for an unknown format or a code out of range
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ulpDistance } from "./ulp.ts";
 * assert.equal(ulpDistance("bf16", 0x3f80, 0x3f81), 1);
 * assert.equal(ulpDistance("e5m2", 0x7b, 0x7c), 1); // max finite → +Inf
 * assert.equal(ulpDistance("e4m3", 0x7f, 0x00), Infinity); // NaN vs 0
 * ```
 */
export function ulpDistance(format: FormatName, a: number, b: number): number {
  const na = isNanCode(format, a), nb = isNanCode(format, b);
  if (na || nb) return na && nb ? 0 : Infinity;
  return Math.abs(codeOrdinal(format, a) - codeOrdinal(format, b));
}
