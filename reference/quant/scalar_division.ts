/**
 * How PyTorch divides an fp32 tensor by a Python scalar, which decides the low bits of every fp32 scale.
 *
 * On a CUDA tensor ATen's `div_true` kernel rewrites `t / c` as `t * fl32(1/c)` (the reciprocal is rounded to fp32
 * once, on the host; ATen's comment says it "may lose one bit of precision"); on a CPU tensor it is a true
 * division (deepgemm-ops.md §2). DeepGEMM's quantizers compute `amax / 448.0` and `amax / 6.0` this way.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { divideByScalar } from "./scalar_division.ts";
 * // amax = 1 + 2^-9: the two semantics differ in the last bit of the scale
 * assert.equal(divideByScalar(1 + 2 ** -9, 448, "gpu"), 0.0022365027107298374);
 * assert.equal(divideByScalar(1 + 2 ** -9, 448, "cpu"), 0.0022365024778991938);
 * ```
 * @module
 */
import { describeValue } from "../describe.ts";

/** Where the PyTorch code runs: `gpu` (multiply by the fp32 reciprocal) or `cpu` (true division). */
export type Semantics = "gpu" | "cpu";

/** The valid {@link Semantics} names. */
export const SEMANTICS: readonly Semantics[] = Object.freeze(["gpu", "cpu"]);

/**
 * `t / c` for an fp32 value `t` and a Python scalar `c`, as PyTorch computes it on the given device.
 *
 * @param t an fp32 value
 * @param c the scalar divisor
 * @param semantics `gpu` → `fl32(t · fl32(1/c))`; `cpu` → `fl32(t / c)`
 * @returns the fp32 quotient
 * @throws {RangeError} for an unknown semantics name
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { divideByScalar } from "./scalar_division.ts";
 * assert.equal(divideByScalar(448, 448, "gpu"), Math.fround(448 * Math.fround(1 / 448)));
 * assert.equal(divideByScalar(448, 448, "cpu"), 1);
 * ```
 */
export function divideByScalar(t: number, c: number, semantics: Semantics): number {
  if (semantics === "gpu") return Math.fround(t * Math.fround(1 / c));
  if (semantics === "cpu") return Math.fround(t / c);
  throw new RangeError(`Unknown semantics ${describeValue(semantics)}: expected "gpu" or "cpu"`);
}

/**
 * Checks a semantics option and returns it (default `gpu`).
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { checkSemantics } from "./scalar_division.ts";
 * assert.equal(checkSemantics(undefined, "demo"), "gpu");
 * assert.equal(checkSemantics("cpu", "demo"), "cpu");
 * assert.throws(() => checkSemantics("tpu", "demo"), RangeError);
 * ```
 */
export function checkSemantics(s: unknown, what: string): Semantics {
  if (s === undefined) return "gpu";
  if (s !== "gpu" && s !== "cpu") throw new RangeError(`${what}: semantics ${describeValue(s)} is not "gpu" or "cpu"`);
  return s;
}
