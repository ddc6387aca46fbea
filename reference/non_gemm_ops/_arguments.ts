/**
 * How the non-GEMM op specs read their arguments: a required tensor, a typed scalar with a default, the logits dtype.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { scalar } from "./_arguments.ts";
 * assert.equal(scalar({}, "num_sms", "demo", "number", 132), 132);
 * assert.throws(() => scalar({ num_sms: "x" }, "num_sms", "demo", "number", 132), TypeError);
 * ```
 * @module
 */
import { Tensor } from "../tensor/tensor.ts";
import { describeValue } from "../describe.ts";
import type { OpSpec } from "../gemm/op_spec.ts";

/** A required tensor argument. */
export function need(inputs: Record<string, Tensor>, name: string, op: string): Tensor {
  const t = inputs[name];
  if (!(t instanceof Tensor)) throw new TypeError(`${op}: missing tensor argument "${name}"`);
  return t;
}

/** A scalar argument of a JavaScript type (`typeof`), or its default. */
export function scalar<T>(scalars: Record<string, unknown>, name: string, op: string, type: string, dflt: T): T {
  const v = scalars[name] ?? dflt;
  if (v !== undefined && typeof v !== type) throw new TypeError(`${op}: scalar "${name}" must be a ${type}`);
  return v as T;
}

/** The `logits_dtype` scalar (default f32). */
export function logitsDtype(scalars: Record<string, unknown>, op: string): "f32" | "bf16" {
  const v = scalars.logits_dtype ?? "f32";
  if (v !== "f32" && v !== "bf16") {
    throw new RangeError(`${op}: logits_dtype must be "f32" or "bf16", got ${describeValue(v)}`);
  }
  return v;
}

/** An op spec whose `runAsync` is its `run` (the reference has no parallel form). */
export function sync(spec: Omit<OpSpec, "runAsync">): OpSpec {
  return { ...spec, runAsync: (i, s, m) => Promise.resolve(spec.run(i, s, m)) };
}
