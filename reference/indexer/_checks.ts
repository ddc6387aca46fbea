/** Argument checks shared by the indexer references: clear errors naming the rule that failed. @module */
import type { Tensor } from "../tensor/tensor.ts";
import type { DType } from "../tensor/dtype.ts";

/** Throws a TypeError unless `t` is a Tensor of one of `dtypes` with `rank` dimensions. */
export function checkTensor(fn: string, name: string, t: unknown, dtypes: readonly DType[], rank: number): Tensor {
  const x = t as Tensor;
  if (x === null || typeof x !== "object" || !Array.isArray(x.shape) && !Object.isFrozen(x.shape)) {
    throw new TypeError(`${fn}: ${name} must be a Tensor`);
  }
  if (!dtypes.includes(x.dtype)) {
    throw new TypeError(`${fn}: ${name} must have dtype ${dtypes.join(" or ")}, got ${x.dtype}`);
  }
  if (x.shape.length !== rank) {
    throw new TypeError(`${fn}: ${name} must have ${rank} dimensions, got shape [${x.shape.join(", ")}]`);
  }
  return x;
}

/** Throws a TypeError unless `t.shape` equals `shape`. */
export function checkShape(fn: string, name: string, t: Tensor, shape: readonly number[]): void {
  if (t.shape.length !== shape.length || t.shape.some((d, i) => d !== shape[i])) {
    throw new TypeError(`${fn}: ${name} must have shape [${shape.join(", ")}], got [${t.shape.join(", ")}]`);
  }
}

/** Integers of an i32/i64 tensor as a plain number array (row-major order). */
export function intValues(t: Tensor): number[] {
  const out: number[] = [];
  const c = t.contiguous();
  for (let i = 0; i < c.numel; i++) out.push(Number(c.data[c.offset + i]));
  return out;
}

/** `align(x, a)` of DeepGEMM: the next multiple of a. */
export function align(x: number, a: number): number {
  return Math.ceil(x / a) * a;
}
