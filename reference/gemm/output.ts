/**
 * The output D and the accumulator C of the GEMM references: D as DeepGEMM holds it before the kernel runs (C, the
 * caller's d, or zeros), values written in the output dtype with the GPU canonical NaNs, C read by D's storage index,
 * and DeepGEMM's rules for C.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Tensor } from "../tensor/tensor.ts";
 * import { initialOutput, writeValue } from "./output.ts";
 * const d = initialOutput(null, [2], "bf16", "demo");
 * writeValue(d, 1, 2);
 * assert.deepEqual([...d.data], [0, 0x4000]);
 * ```
 * @module
 */
import { bf16Rne, bf16ToF32 } from "../fp32.ts";
import { Tensor } from "../tensor/tensor.ts";
import type { TileResults } from "./engine.ts";
import { expectShape, requireRowMajor } from "./tensor_arguments.ts";

/**
 * The value of element (i, j) of a bf16/f32 tensor.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Tensor } from "../tensor/tensor.ts";
 * import { valueAt } from "./output.ts";
 * assert.equal(valueAt(Tensor.from("bf16", [1], new Uint16Array([0x4040])), 0), 3);
 * ```
 */
export function valueAt(t: Tensor, ...idx: number[]): number {
  const raw = t.at(...idx);
  return t.dtype === "bf16" ? bf16ToF32(raw) : raw;
}

/**
 * A fresh output tensor with d's shape, strides and contents (or zeros of `shape`), in the output dtype.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Tensor } from "../tensor/tensor.ts";
 * import { initialOutput } from "./output.ts";
 * const d = Tensor.from("f32", [2], new Float32Array([1, 2]));
 * const out = initialOutput(d, [2], "f32", "demo");
 * assert.notEqual(out.data, d.data); // a copy
 * assert.deepEqual([...out.data], [1, 2]);
 * assert.throws(() => initialOutput(d, [2], "bf16", "demo"), TypeError);
 * ```
 */
export function initialOutput(d: Tensor | null, shape: readonly number[], dtype: "bf16" | "f32", op: string): Tensor {
  if (d === null) return Tensor.zeros(dtype, shape);
  if (d.dtype !== dtype) throw new TypeError(`${op}: "d" has dtype ${d.dtype} but the output dtype is ${dtype}`);
  expectShape(d, shape, "d", op);
  const data = d.data.slice();
  return new Tensor(d.dtype, d.shape, data, d.strides, d.offset);
}

/**
 * Writes a value (exact in the output dtype) at a storage index, with the GPU canonical NaNs (0x7FFF, 0x7FFFFFFF).
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Tensor } from "../tensor/tensor.ts";
 * import { writeValue } from "./output.ts";
 * const d = Tensor.zeros("bf16", [2]);
 * writeValue(d, 0, 1);
 * writeValue(d, 1, NaN);
 * assert.deepEqual([...d.data], [0x3f80, 0x7fff]);
 * ```
 */
export function writeValue(d: Tensor, index: number, v: number): void {
  if (d.dtype === "bf16") {
    (d.data as Uint16Array)[index] = bf16Rne(v);
  } else if (v !== v) {
    new Uint32Array(d.data.buffer, d.data.byteOffset, d.data.length)[index] = 0x7fffffff;
  } else {
    (d.data as Float32Array)[index] = v;
  }
}

/**
 * Writes evaluation results into d; returns the sample mask when asked.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Tensor } from "../tensor/tensor.ts";
 * import { writeResults } from "./output.ts";
 * const d = Tensor.zeros("f32", [3]);
 * const mask = writeResults(d, { index: new Int32Array([2]), value: new Float64Array([5]) }, true);
 * assert.deepEqual([...d.data], [0, 0, 5]);
 * assert.deepEqual([...mask!.data], [0, 0, 1]);
 * ```
 */
export function writeResults(d: Tensor, res: TileResults, mask: boolean): Tensor | null {
  const m = mask ? new Uint8Array(d.data.length) : null;
  for (let i = 0; i < res.index.length; i++) {
    writeValue(d, res.index[i], res.value[i]);
    if (m) m[res.index[i]] = 1;
  }
  return m ? new Tensor("u8", d.shape, m, d.strides, d.offset) : null;
}

/**
 * C values by D storage index (C may have its own strides), or null.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Tensor } from "../tensor/tensor.ts";
 * import { cByDIndex } from "./output.ts";
 * const c = Tensor.from("f32", [2, 2], new Float32Array([1, 2, 3, 4]));
 * const d = Tensor.zeros("f32", [2, 2]).transpose().contiguous().transpose(); // column-major storage
 * assert.deepEqual([...cByDIndex(c, d)!], [1, 3, 2, 4]);
 * assert.equal(cByDIndex(null, d), null);
 * ```
 */
export function cByDIndex(c: Tensor | null, d: Tensor): Float64Array | null {
  if (c === null) return null;
  const out = new Float64Array(d.data.length);
  const n = d.numel, rank = d.ndim;
  const idx = new Array<number>(rank).fill(0);
  for (let e = 0; e < n; e++) {
    out[d.index(...idx)] = valueAt(c, ...idx);
    for (let r = rank - 1; r >= 0; r--) {
      if (++idx[r] < d.shape[r]) break;
      idx[r] = 0;
    }
  }
  return out;
}

/**
 * Copies C into D (DeepGEMM copies C into D before the kernel when they do not alias); k = 0 leaves exactly this.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Tensor } from "../tensor/tensor.ts";
 * import { copyInto } from "./output.ts";
 * const d = Tensor.zeros("bf16", [2]);
 * copyInto(d, Tensor.from("f32", [2], new Float32Array([1, -2])));
 * assert.deepEqual([...d.data], [0x3f80, 0xc000]);
 * ```
 */
export function copyInto(d: Tensor, c: Tensor): void {
  const n = d.numel, rank = d.ndim;
  const idx = new Array<number>(rank).fill(0);
  for (let e = 0; e < n; e++) {
    writeValue(d, d.index(...idx), valueAt(c, ...idx));
    for (let r = rank - 1; r >= 0; r--) {
      if (++idx[r] < d.shape[r]) break;
      idx[r] = 0;
    }
  }
}

/**
 * DeepGEMM's C/D rules: C dtype equals D dtype, row-major, same shape; aliasing C and D need identical views.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Tensor } from "../tensor/tensor.ts";
 * import { checkC } from "./output.ts";
 * const d = Tensor.zeros("f32", [2, 2]);
 * checkC(d, d, [2, 2], "f32", "demo"); // C may be D itself
 * assert.throws(() => checkC(Tensor.zeros("bf16", [2, 2]), d, [2, 2], "f32", "demo"), TypeError);
 * ```
 */
export function checkC(
  c: Tensor | null,
  d: Tensor | null,
  shape: readonly number[],
  outDtype: string,
  op: string,
): void {
  if (c === null) return;
  if (c.dtype !== outDtype) throw new TypeError(`${op}: "c" has dtype ${c.dtype}; it must equal D's dtype ${outDtype}`);
  expectShape(c, shape, "c", op);
  requireRowMajor(c, "c", op);
  if (d !== null && c.data === d.data) {
    const same = c.offset === d.offset && c.strides.every((s, i) => s === d.strides[i]);
    if (!same) throw new TypeError(`${op}: "c" and "d" alias but have different sizes/strides`);
  }
}
