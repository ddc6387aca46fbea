/**
 * Element values of a tensor as fp32: decode any dtype to a `Float32Array` in logical (row-major) order, and widen
 * BF16 exactly (a BF16 pattern is the top half of its fp32 pattern, deepgemm-ops.md §1, so widening is a shift).
 *
 * Everything goes through bit patterns (`Uint32Array` views), so f32 and bf16 NaN payloads and signed zeros survive;
 * the narrow float formats are decoded through the format table of `reference/formats` (NaN codes give a NaN whose
 * payload is not specified: compare NaN-ness, numerics.md §1).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Tensor } from "./tensor.ts";
 * import { toFloat32 } from "./values.ts";
 * const t = Tensor.from("bf16", [2], new Uint16Array([0x3f80, 0xc040])); // 1, -3
 * assert.deepEqual(toFloat32(t), new Float32Array([1, -3]));
 * ```
 * @module
 */
import { decodeTable } from "../formats/batch.ts";
import type { FormatName } from "../formats/format_table.ts";
import { type DType, DTYPES } from "./dtype.ts";
import { Tensor } from "./tensor.ts";

/** The format-table name of each narrow float dtype (the table spells f16 `fp16`). */
const CODE_FORMAT: Partial<Record<DType, FormatName>> = {
  f16: "fp16",
  e4m3: "e4m3",
  e5m2: "e5m2",
  ue8m0: "ue8m0",
  e2m1: "e2m1",
};

/**
 * Widens BF16 bit patterns to fp32 exactly (`bits << 16`), payloads and signs included.
 *
 * @param bits BF16 patterns
 * @returns the fp32 values (their patterns are `bits[i] << 16`)
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { widenBf16 } from "./values.ts";
 * const f = widenBf16(new Uint16Array([0x3f81, 0x8000]));
 * assert.equal(f[0], 1 + 2 ** -7);
 * assert.ok(Object.is(f[1], -0));
 * ```
 */
export function widenBf16(bits: Uint16Array): Float32Array {
  if (!(bits instanceof Uint16Array)) throw new TypeError(`widenBf16: expected a Uint16Array, got ${typeOf(bits)}`);
  const out = new Float32Array(bits.length);
  const u = new Uint32Array(out.buffer);
  for (let i = 0; i < bits.length; i++) u[i] = bits[i] << 16;
  return out;
}

function typeOf(x: unknown): string {
  return x === null ? "null" : typeof x === "object" ? (x as object).constructor.name : typeof x;
}

/**
 * The stored elements of any view in logical row-major order. The result may alias `t.data` (when `t` is contiguous
 * from offset 0 and fills its storage): read it, never write it.
 *
 * @param t any tensor
 * @returns `t.numel` stored elements, row-major
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Tensor } from "./tensor.ts";
 * import { rowMajorData } from "./values.ts";
 * const t = Tensor.from("i32", [2, 2], new Int32Array([1, 2, 3, 4]));
 * assert.deepEqual([...rowMajorData(t.transpose())], [1, 3, 2, 4]);
 * ```
 */
export function rowMajorData(t: Tensor): Tensor["data"] {
  const c = t.contiguous();
  if (c.offset === 0 && c.data.length === c.numel) return c.data;
  return c.data.subarray(c.offset, c.offset + c.numel);
}

/**
 * Decodes every element of a tensor to fp32, in logical row-major order (views are gathered, never aliased).
 * f32 bits are copied unchanged; bf16 is widened exactly; f16/e4m3/e5m2/ue8m0/e2m1 codes are decoded with the format
 * table; integer dtypes are converted with `Math.fround(Number(v))`.
 *
 * @param t any tensor
 * @returns a new `Float32Array` of `t.numel` values
 * @throws {TypeError} when `t` is not a Tensor
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Tensor } from "./tensor.ts";
 * import { toFloat32 } from "./values.ts";
 * const e4m3 = Tensor.from("e4m3", [2, 2], new Uint8Array([0x38, 0x7e, 0x80, 0x01]));
 * assert.deepEqual([...toFloat32(e4m3.transpose())], [1, -0, 448, 2 ** -9]);
 * ```
 */
export function toFloat32(t: Tensor): Float32Array {
  if (!(t instanceof Tensor)) throw new TypeError(`toFloat32: expected a Tensor, got ${typeOf(t)}`);
  const flat = rowMajorData(t);
  const n = t.numel;
  switch (t.dtype) {
    case "f32": {
      const out = new Float32Array(n);
      new Uint32Array(out.buffer).set(
        new Uint32Array((flat as Float32Array).buffer, (flat as Float32Array).byteOffset, n),
      );
      return out;
    }
    case "bf16":
      return widenBf16(flat as Uint16Array);
    case "i64": {
      const out = new Float32Array(n);
      const src = flat as BigInt64Array;
      for (let i = 0; i < n; i++) out[i] = Number(src[i]);
      return out;
    }
    default: {
      const format = CODE_FORMAT[t.dtype];
      if (format !== undefined) {
        const table = decodeTable(format);
        const tu = new Uint32Array(table.buffer);
        const out = new Float32Array(n);
        const ou = new Uint32Array(out.buffer);
        const src = flat as Uint8Array | Uint16Array;
        const mask = t.dtype === "e2m1" ? 0xf : 0xffff;
        for (let i = 0; i < n; i++) ou[i] = tu[src[i] & mask];
        return out;
      }
      if (DTYPES[t.dtype].codes) throw new TypeError(`toFloat32: no decoder for dtype "${t.dtype}"`);
      return Float32Array.from(flat as ArrayLike<number>);
    }
  }
}

/**
 * The fp32 bit patterns of every element (a `Uint32Array` view of {@link toFloat32}'s result).
 *
 * @param t any tensor
 * @returns fp32 bit patterns in logical row-major order
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Tensor } from "./tensor.ts";
 * import { toFloat32Bits } from "./values.ts";
 * assert.deepEqual([...toFloat32Bits(Tensor.from("bf16", [1], new Uint16Array([0xff81])))], [0xff810000]);
 * ```
 */
export function toFloat32Bits(t: Tensor): Uint32Array {
  return new Uint32Array(toFloat32(t).buffer);
}

/**
 * An fp32 tensor from numbers (each rounded to fp32), a convenience for tests and examples.
 *
 * @param shape extents
 * @param values row-major values (`numel(shape)` of them)
 * @returns a contiguous f32 tensor
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { f32Tensor } from "./values.ts";
 * assert.equal(f32Tensor([1, 2], [0.1, 2]).at(0, 0), Math.fround(0.1));
 * ```
 */
export function f32Tensor(shape: readonly number[], values: ArrayLike<number>): Tensor {
  return Tensor.from("f32", shape, Float32Array.from(values));
}
