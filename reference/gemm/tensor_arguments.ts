/**
 * Tensor arguments as DeepGEMM's host code checks them: present or optional, dtype, rank, shape, and the stride rules
 * (K-major operands, row-major C/D).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Tensor } from "../tensor/tensor.ts";
 * import { need } from "./tensor_arguments.ts";
 * assert.throws(() => need({}, "a", "demo", ["bf16"], 2), /missing tensor argument "a"/);
 * assert.equal(need({ a: Tensor.zeros("bf16", [1, 1]) }, "a", "demo", ["bf16"], 2).ndim, 2);
 * ```
 * @module
 */
import type { DType } from "../tensor/dtype.ts";
import { Tensor } from "../tensor/tensor.ts";

/**
 * Fetches a required tensor argument, checking its dtype(s) and rank.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Tensor } from "../tensor/tensor.ts";
 * import { need } from "./tensor_arguments.ts";
 * const a = Tensor.zeros("bf16", [2, 4]);
 * assert.equal(need({ a }, "a", "demo", ["bf16"], 2), a);
 * assert.throws(() => need({ a }, "b", "demo", ["bf16"], 2), /missing tensor argument "b"/);
 * assert.throws(() => need({ a }, "a", "demo", ["f32"], 2), TypeError);
 * ```
 */
export function need(
  inputs: Record<string, Tensor>,
  name: string,
  op: string,
  dtypes: readonly DType[],
  rank: number,
): Tensor {
  const t = inputs[name];
  if (t === undefined || t === null) throw new TypeError(`${op}: missing tensor argument "${name}"`);
  return checkTensor(t, name, op, dtypes, rank);
}

/**
 * Fetches an optional tensor argument (null when absent).
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Tensor } from "../tensor/tensor.ts";
 * import { maybe } from "./tensor_arguments.ts";
 * assert.equal(maybe({}, "c", "demo", ["f32"], 2), null);
 * assert.throws(() => maybe({ c: Tensor.zeros("f32", [4]) }, "c", "demo", ["f32"], 2), /must be 2-D/);
 * ```
 */
export function maybe(
  inputs: Record<string, Tensor>,
  name: string,
  op: string,
  dtypes: readonly DType[],
  rank: number,
): Tensor | null {
  const t = inputs[name];
  if (t === undefined || t === null) return null;
  return checkTensor(t, name, op, dtypes, rank);
}

function checkTensor(t: Tensor, name: string, op: string, dtypes: readonly DType[], rank: number): Tensor {
  if (!(t instanceof Tensor)) throw new TypeError(`${op}: "${name}" must be a Tensor`);
  if (!dtypes.includes(t.dtype)) {
    throw new TypeError(`${op}: "${name}" has dtype ${t.dtype}; expected ${dtypes.join(" or ")}`);
  }
  if (t.ndim !== rank) throw new TypeError(`${op}: "${name}" must be ${rank}-D, got shape [${t.shape.join(", ")}]`);
  return t;
}

/**
 * Throws a TypeError unless `t.shape` equals `shape`.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Tensor } from "../tensor/tensor.ts";
 * import { expectShape } from "./tensor_arguments.ts";
 * expectShape(Tensor.zeros("f32", [2, 3]), [2, 3], "x", "demo");
 * assert.throws(() => expectShape(Tensor.zeros("f32", [3, 2]), [2, 3], "x", "demo"), TypeError);
 * ```
 */
export function expectShape(t: Tensor, shape: readonly number[], name: string, op: string): void {
  if (t.shape.length !== shape.length || t.shape.some((d, i) => d !== shape[i])) {
    throw new TypeError(`${op}: "${name}" has shape [${t.shape.join(", ")}], expected [${shape.join(", ")}]`);
  }
}

/**
 * Checks a K-major operand (DeepGEMM: `stride(-1) == 1`).
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Tensor } from "../tensor/tensor.ts";
 * import { requireKMajor } from "./tensor_arguments.ts";
 * const a = Tensor.zeros("bf16", [4, 8]);
 * requireKMajor(a, "a", "demo", "this GEMM");
 * assert.throws(() => requireKMajor(a.transpose().contiguous().transpose(), "a", "demo", "this GEMM"), TypeError);
 * ```
 */
export function requireKMajor(t: Tensor, name: string, op: string, why: string): void {
  if (t.shape[t.ndim - 1] > 1 && t.strides[t.ndim - 1] !== 1 && t.shape[t.ndim - 2] > 0) {
    throw new TypeError(
      `${op}: ${why} needs "${name}" K-major (stride(-1) == 1), got strides [${t.strides.join(", ")}]`,
    );
  }
}

/**
 * Checks row-major C/D (`stride(-1) == 1`).
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Tensor } from "../tensor/tensor.ts";
 * import { requireRowMajor } from "./tensor_arguments.ts";
 * requireRowMajor(Tensor.zeros("f32", [2, 3]), "d", "demo");
 * assert.throws(() => requireRowMajor(Tensor.zeros("f32", [3, 2]).transpose(), "d", "demo"), TypeError);
 * ```
 */
export function requireRowMajor(t: Tensor, name: string, op: string): void {
  if (t.shape[t.ndim - 1] > 1 && t.strides[t.ndim - 1] !== 1) {
    throw new TypeError(`${op}: "${name}" must be row-major (stride(-1) == 1)`);
  }
}
