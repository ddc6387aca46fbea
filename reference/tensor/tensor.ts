/**
 * A small strided tensor: dtype, shape, strides (in elements), an offset and typed-array storage.
 * Views (transpose, select, narrow, reshape of contiguous data) share storage and never copy, so K-major and
 * MN-major operands, `nt/nn/tn/tt` and DeepGEMM's MN-major TMA-aligned scale layouts are all representable.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Tensor } from "./tensor.ts";
 * const a = Tensor.from("f32", [2, 3], new Float32Array([1, 2, 3, 4, 5, 6]));
 * const t = a.transpose(); // [3, 2], strides [1, 3], same storage
 * assert.deepEqual(t.shape, [3, 2]);
 * assert.equal(t.at(2, 1), 6);
 * assert.equal(t.data, a.data);
 * ```
 * @module
 */
import { allocStorage, checkStorage, type DType, DTYPES, type Storage } from "./dtype.ts";

/**
 * Row-major (C-order) strides of a shape.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { contiguousStrides } from "./tensor.ts";
 * assert.deepEqual(contiguousStrides([2, 3, 4]), [12, 4, 1]);
 * ```
 */
export function contiguousStrides(shape: readonly number[]): number[] {
  const strides = new Array<number>(shape.length);
  let s = 1;
  for (let i = shape.length - 1; i >= 0; i--) {
    strides[i] = s;
    s *= shape[i];
  }
  return strides;
}

/**
 * Number of elements of a shape (1 for a scalar shape `[]`).
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { numel } from "./tensor.ts";
 * assert.equal(numel([2, 3, 4]), 24);
 * assert.equal(numel([]), 1);
 * ```
 */
export function numel(shape: readonly number[]): number {
  let n = 1;
  for (const d of shape) n *= d;
  return n;
}

function checkShape(shape: readonly number[]): void {
  for (const d of shape) {
    if (!Number.isSafeInteger(d) || d < 0) throw new RangeError(`Invalid tensor shape [${shape.join(", ")}]`);
  }
}

/**
 * A strided view over typed-array storage. Element values of code dtypes are bit patterns.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Tensor } from "./tensor.ts";
 * const t = Tensor.from("f32", [2, 3], new Float32Array([1, 2, 3, 4, 5, 6]));
 * assert.equal(t.at(1, 0), 4);
 * assert.equal(t.transpose().at(0, 1), 4); // a view: no copy
 * assert.deepEqual([...t.transpose().contiguous().data], [1, 4, 2, 5, 3, 6]);
 * ```
 */
export class Tensor {
  /** Element type. */
  readonly dtype: DType;
  /** Extent of each dimension. */
  readonly shape: readonly number[];
  /** Distance between neighbours along each dimension, in elements (may be 0 for broadcasts). */
  readonly strides: readonly number[];
  /** Index of element (0, …, 0) in `data`. */
  readonly offset: number;
  /** The storage, shared by all views of it. */
  readonly data: Storage;

  /**
   * Wraps storage; checks that every reachable element lies inside `data`.
   * @param dtype element type
   * @param shape extents
   * @param strides element strides (default: row-major)
   * @param data storage of the dtype's typed-array type
   * @param offset element offset of index (0, …, 0)
   */
  constructor(dtype: DType, shape: readonly number[], data: Storage, strides?: readonly number[], offset = 0) {
    if (!Object.hasOwn(DTYPES, dtype)) throw new TypeError(`Unknown dtype "${dtype}"`);
    checkShape(shape);
    checkStorage(dtype, data);
    const st = strides ?? contiguousStrides(shape);
    if (st.length !== shape.length) {
      throw new RangeError(`Tensor strides [${st.join(", ")}] do not match shape [${shape.join(", ")}]`);
    }
    if (numel(shape) > 0) {
      let lo = offset, hi = offset;
      for (let i = 0; i < shape.length; i++) {
        const span = (shape[i] - 1) * st[i];
        if (span < 0) lo += span;
        else hi += span;
      }
      if (lo < 0 || hi >= data.length) {
        throw new RangeError(
          `Tensor view shape [${shape.join(", ")}] strides [${
            st.join(", ")
          }] offset ${offset} reaches outside storage of ${data.length} elements`,
        );
      }
    }
    this.dtype = dtype;
    this.shape = Object.freeze([...shape]);
    this.strides = Object.freeze([...st]);
    this.offset = offset;
    this.data = data;
  }

  /** A contiguous tensor over `data` (which must hold exactly `numel(shape)` elements). */
  static from(dtype: DType, shape: readonly number[], data: Storage): Tensor {
    if (data.length !== numel(shape)) {
      throw new RangeError(`Tensor of shape [${shape.join(", ")}] needs ${numel(shape)} elements, got ${data.length}`);
    }
    return new Tensor(dtype, shape, data);
  }

  /** A zero-filled contiguous tensor. */
  static zeros(dtype: DType, shape: readonly number[]): Tensor {
    checkShape(shape);
    return new Tensor(dtype, shape, allocStorage(dtype, numel(shape)));
  }

  /** Number of dimensions. */
  get ndim(): number {
    return this.shape.length;
  }

  /** Number of elements. */
  get numel(): number {
    return numel(this.shape);
  }

  /** True when the view is row-major with no gaps (offset may be non-zero). */
  isContiguous(): boolean {
    const c = contiguousStrides(this.shape);
    for (let i = 0; i < c.length; i++) if (this.shape[i] > 1 && this.strides[i] !== c[i]) return false;
    return true;
  }

  /** Storage index of an element. */
  index(...idx: number[]): number {
    if (idx.length !== this.shape.length) {
      throw new RangeError(`Index of rank ${idx.length} for a tensor of rank ${this.shape.length}`);
    }
    let p = this.offset;
    for (let i = 0; i < idx.length; i++) {
      const v = idx[i];
      if (!(v >= 0 && v < this.shape[i])) {
        throw new RangeError(`Index ${v} out of range for dimension ${i} of size ${this.shape[i]}`);
      }
      p += v * this.strides[i];
    }
    return p;
  }

  /** The stored element (a number; bit pattern for code dtypes; bigint dtypes converted with `Number`). */
  at(...idx: number[]): number {
    return Number(this.data[this.index(...idx)]);
  }

  /** Swaps two dimensions (default: the last two) without copying. */
  transpose(d0 = -2, d1 = -1): Tensor {
    const n = this.ndim;
    const a = d0 < 0 ? d0 + n : d0, b = d1 < 0 ? d1 + n : d1;
    if (a < 0 || a >= n || b < 0 || b >= n) throw new RangeError(`transpose(${d0}, ${d1}) on a tensor of rank ${n}`);
    const shape = [...this.shape], strides = [...this.strides];
    [shape[a], shape[b]] = [shape[b], shape[a]];
    [strides[a], strides[b]] = [strides[b], strides[a]];
    return new Tensor(this.dtype, shape, this.data, strides, this.offset);
  }

  /** Removes dimension `dim` by fixing it at `index` (no copy). */
  select(dim: number, index: number): Tensor {
    const n = this.ndim, d = dim < 0 ? dim + n : dim;
    if (d < 0 || d >= n) throw new RangeError(`select(${dim}) on a tensor of rank ${n}`);
    if (!(index >= 0 && index < this.shape[d])) {
      throw new RangeError(`select index ${index} out of range for dimension ${d} of size ${this.shape[d]}`);
    }
    const shape = this.shape.filter((_, i) => i !== d), strides = this.strides.filter((_, i) => i !== d);
    return new Tensor(this.dtype, shape, this.data, strides, this.offset + index * this.strides[d]);
  }

  /** Restricts dimension `dim` to `[start, start + length)` (no copy). */
  narrow(dim: number, start: number, length: number): Tensor {
    const n = this.ndim, d = dim < 0 ? dim + n : dim;
    if (d < 0 || d >= n) throw new RangeError(`narrow(${dim}) on a tensor of rank ${n}`);
    if (!(start >= 0 && length >= 0 && start + length <= this.shape[d])) {
      throw new RangeError(`narrow(${dim}, ${start}, ${length}) outside dimension of size ${this.shape[d]}`);
    }
    const shape = [...this.shape];
    shape[d] = length;
    return new Tensor(
      this.dtype,
      shape,
      this.data,
      this.strides,
      this.offset + (length > 0 ? start * this.strides[d] : 0),
    );
  }

  /** The same elements under a new shape; only for contiguous views (no copy). */
  reshape(shape: readonly number[]): Tensor {
    if (numel(shape) !== this.numel) {
      throw new RangeError(`Cannot reshape [${this.shape.join(", ")}] to [${shape.join(", ")}]`);
    }
    if (!this.isContiguous()) throw new RangeError("reshape() needs a contiguous view; call contiguous() first");
    return new Tensor(this.dtype, shape, this.data, undefined, this.offset);
  }

  /** A row-major copy (or this tensor when it already is row-major with offset 0 and no extra storage). */
  contiguous(): Tensor {
    if (this.isContiguous() && this.offset === 0 && this.data.length === this.numel) return this;
    const out = Tensor.zeros(this.dtype, this.shape);
    const n = this.numel, rank = this.ndim;
    const idx = new Array<number>(rank).fill(0);
    // deno-lint-ignore no-explicit-any
    const src = this.data as any, dst = out.data as any;
    let p = this.offset;
    for (let i = 0; i < n; i++) {
      dst[i] = src[p];
      for (let d = rank - 1; d >= 0; d--) {
        idx[d]++;
        p += this.strides[d];
        if (idx[d] < this.shape[d]) break;
        p -= idx[d] * this.strides[d];
        idx[d] = 0;
      }
    }
    return out;
  }
}
