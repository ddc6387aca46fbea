/**
 * A value in an error message, safely: JSON where it has a JSON form, else its tag. `String(v)` and template
 * interpolation throw "Cannot convert object to primitive value" for an object whose `toString` is not a function
 * (a scalar given as `{"toString": 1}`), which hid the real complaint.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { describeValue } from "./describe.ts";
 * assert.equal(describeValue({ toString: 1 }), '{"toString":1}');
 * assert.equal(describeValue("sm80"), '"sm80"');
 * assert.equal(describeValue(undefined), "undefined");
 * assert.equal(describeValue(10n), "10n");
 * ```
 * @module
 */

/** The value as text for a message; never throws. */
export function describeValue(v: unknown): string {
  if (typeof v === "bigint") return `${v}n`;
  if (v === undefined) return "undefined";
  try {
    const s = JSON.stringify(v);
    if (s !== undefined) return s;
  } catch { /* cyclic, or a throwing toJSON */ }
  return Object.prototype.toString.call(v);
}
