/**
 * Scalar arguments of the GEMM references: integers and booleans with defaults, and the target architecture, each
 * checked with an error naming the op and the scalar.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { intScalar } from "./scalar_arguments.ts";
 * assert.equal(intScalar({}, "block_m", "demo", 128), 128);
 * ```
 * @module
 */
import { describeValue } from "../describe.ts";

/**
 * Reads a scalar argument: a number with a default, checked to be an integer in range.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { intScalar } from "./scalar_arguments.ts";
 * assert.equal(intScalar({}, "block_m", "demo", 128), 128);
 * assert.equal(intScalar({ block_m: 64 }, "block_m", "demo", 128), 64);
 * assert.throws(() => intScalar({ block_m: 1.5 }, "block_m", "demo", 128), TypeError);
 * ```
 */
export function intScalar(scalars: Record<string, unknown>, name: string, op: string, dflt: number): number {
  const v = scalars[name] ?? dflt;
  if (typeof v !== "number" || !Number.isSafeInteger(v)) {
    throw new TypeError(`${op}: scalar "${name}" must be an integer`);
  }
  return v;
}

/**
 * Reads a boolean scalar.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { boolScalar } from "./scalar_arguments.ts";
 * assert.equal(boolScalar({ use_psum_layout: true }, "use_psum_layout", "demo", false), true);
 * assert.throws(() => boolScalar({ use_psum_layout: 1 }, "use_psum_layout", "demo", false), TypeError);
 * ```
 */
export function boolScalar(scalars: Record<string, unknown>, name: string, op: string, dflt: boolean): boolean {
  const v = scalars[name] ?? dflt;
  if (typeof v !== "boolean") throw new TypeError(`${op}: scalar "${name}" must be a boolean`);
  return v;
}

/**
 * Reads the target architecture (`sm90` or `sm100`).
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { archScalar } from "./scalar_arguments.ts";
 * assert.equal(archScalar({}, "demo", "sm90"), "sm90");
 * assert.equal(archScalar({ arch: "sm100" }, "demo", "sm90"), "sm100");
 * assert.throws(() => archScalar({ arch: "sm80" }, "demo", "sm90"), RangeError);
 * ```
 */
export function archScalar(scalars: Record<string, unknown>, op: string, dflt: "sm90" | "sm100"): "sm90" | "sm100" {
  const v = scalars.arch ?? dflt;
  if (v !== "sm90" && v !== "sm100") {
    throw new RangeError(`${op}: scalar "arch" must be "sm90" or "sm100", got ${describeValue(v)}`);
  }
  return v;
}
