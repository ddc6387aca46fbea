/**
 * Putting case operands together: stacking groups, concatenating rows, int32 index tensors, zeroed padding rows.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Tensor } from "../tensor/tensor.ts";
 * import { i32, stack } from "./tensor_assembly.ts";
 * assert.deepEqual(stack([Tensor.zeros("f32", [2]), Tensor.zeros("f32", [2])]).shape, [2, 2]);
 * assert.deepEqual([...i32([3, -1]).data], [3, -1]);
 * ```
 * @module
 */
import { Tensor } from "../tensor/tensor.ts";

/** Stacks same-shaped tensors along a new leading dimension (a copy). */
export function stack(ts: readonly Tensor[]): Tensor {
  if (ts.length === 0) throw new RangeError("stack() of nothing");
  const first = ts[0];
  const per = first.numel;
  const out = Tensor.zeros(first.dtype, [ts.length, ...first.shape]);
  ts.forEach((t, i) => {
    if (t.dtype !== first.dtype || t.shape.join() !== first.shape.join()) {
      throw new TypeError("stack() of unlike tensors");
    }
    // deno-lint-ignore no-explicit-any
    (out.data as any).set(t.contiguous().data, i * per);
  });
  return out;
}

/** Concatenates 2-D tensors along dim 0 (a copy). */
export function concatRows(ts: readonly Tensor[]): Tensor {
  const first = ts[0];
  const cols = first.shape[1];
  const rows = ts.reduce((s, t) => s + t.shape[0], 0);
  const out = Tensor.zeros(first.dtype, [rows, cols]);
  let off = 0;
  for (const t of ts) {
    // deno-lint-ignore no-explicit-any
    (out.data as any).set(t.contiguous().data, off);
    off += t.numel;
  }
  return out;
}

/** A 1-D int32 tensor. */
export function i32(values: readonly number[]): Tensor {
  return Tensor.from("i32", [values.length], Int32Array.from(values));
}

/** Zeroes rows of a 2-D tensor (padding rows of grouped layouts are zero in DeepGEMM's tests). */
export function zeroRows(t: Tensor, rows: Iterable<number>): void {
  const cols = t.shape[1];
  // deno-lint-ignore no-explicit-any
  const d = t.data as any;
  for (const r of rows) d.fill(0, r * cols, (r + 1) * cols);
}
