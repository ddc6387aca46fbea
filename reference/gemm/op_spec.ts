/**
 * The contract every GEMM reference implements (the registry's value type) and the shared helpers the references
 * use to validate arguments the way DeepGEMM's host code does, decode scale factors and write outputs.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ceilDiv } from "./op_spec.ts";
 * assert.equal(ceilDiv(1152, 128), 9);
 * ```
 * @module
 */
import { pow2 } from "../formats/_pow2.ts";
import { bf16Rne, bf16ToF32, f32Bits } from "../fp32.ts";
import { ceilDiv } from "../layout/tma_aligned.ts";
import { KERNEL_MODELS, type ModelOptions, type ResolvedModel } from "../kernel_models/kernel_models.ts";
import type { DType } from "../tensor/dtype.ts";
import { Tensor } from "../tensor/tensor.ts";
import type { TileResults } from "./engine.ts";
import type { GemmJob } from "./job.ts";
import { describeValue } from "../describe.ts";

export type { ModelOptions } from "../kernel_models/kernel_models.ts";
// ceil_div / align of deepgemm-ops.md "Notation": the layout module's, one definition in the package.
export { align, ceilDiv } from "../layout/tma_aligned.ts";

/** One DeepGEMM operation's reference. */
export interface OpSpec {
  /** DeepGEMM function name. */
  readonly name: string;
  /** Operation family (`fp8_gemm`, `m_grouped`, `masked`, `k_grouped`, `bf16_gemm`, `einsum`, `cublaslt`, ...). */
  readonly family: string;
  /** Tensor arguments, DeepGEMM's Python names (`a`, `sfa`, `b`, `sfb`, `c`, `d`, `grouped_layout`, ...). */
  readonly inputs: readonly string[];
  /** Output tensors (`d`; `sample_mask` is added when sampling). */
  readonly outputs: readonly string[];
  /** Scalar arguments and what they mean. */
  readonly scalars: Readonly<Record<string, string>>;
  /** The model used when none is asked for (DeepGEMM's dispatch may refine it, e.g. sm90_1d2d vs sm90_1d1d). */
  readonly defaultModel: string;
  /** Models that make sense for the op. */
  readonly models: readonly string[];
  /** Runs the reference on one thread (`model.workers` is ignored). */
  run(inputs: Record<string, Tensor>, scalars: Record<string, unknown>, model: ModelOptions): Record<string, Tensor>;
  /** Runs the reference with `model.workers` Workers (default: all cores); bits equal {@link OpSpec.run}'s. */
  runAsync(
    inputs: Record<string, Tensor>,
    scalars: Record<string, unknown>,
    model: ModelOptions,
  ): Promise<Record<string, Tensor>>;
}

/** What an op's planner produces: the job (or null for an early return) and the output tensor to fill. */
export interface Plan {
  /** The job, or null when the op returns early (m = 0, n = 0, k = 0 handled by the planner). */
  job: GemmJob | null;
  /** The output tensor, already holding C / the caller's d / zeros as DeepGEMM would before the kernel runs. */
  d: Tensor;
}

/**
 * Fetches a required tensor argument, checking its dtype(s) and rank.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Tensor } from "../tensor/tensor.ts";
 * import { need } from "./op_spec.ts";
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
 * import { maybe } from "./op_spec.ts";
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
 * import { expectShape } from "./op_spec.ts";
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
 * Reads a scalar argument: a number with a default, checked to be an integer in range.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { intScalar } from "./op_spec.ts";
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
 * import { boolScalar } from "./op_spec.ts";
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
 * import { archScalar } from "./op_spec.ts";
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

/**
 * Checks a K-major operand (DeepGEMM: `stride(-1) == 1`).
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Tensor } from "../tensor/tensor.ts";
 * import { requireKMajor } from "./op_spec.ts";
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
 * import { requireRowMajor } from "./op_spec.ts";
 * requireRowMajor(Tensor.zeros("f32", [2, 3]), "d", "demo");
 * assert.throws(() => requireRowMajor(Tensor.zeros("f32", [3, 2]).transpose(), "d", "demo"), TypeError);
 * ```
 */
export function requireRowMajor(t: Tensor, name: string, op: string): void {
  if (t.shape[t.ndim - 1] > 1 && t.strides[t.ndim - 1] !== 1) {
    throw new TypeError(`${op}: "${name}" must be row-major (stride(-1) == 1)`);
  }
}

/**
 * Decodes a scale-factor tensor into per-row values: `out[r·sfk + g]` = the scale of row r (row r reads SF row
 * `floor(r / granMN)`) and K group g. fp32 tensors are read as values; int32 tensors as packed UE8M0 (byte j of word p
 * = group 4p + j, `deepgemm-ops.md` §3).
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Tensor } from "../tensor/tensor.ts";
 * import { decodeScales } from "./op_spec.ts";
 * // 256 rows in 128-row blocks, one K group: rows 0–127 read SF row 0, rows 128–255 SF row 1.
 * const sf = Tensor.from("f32", [2, 1], new Float32Array([2, 0.5]));
 * const v = decodeScales(sf, 256, 1, 128, "sfb", "demo");
 * assert.deepEqual([v[0], v[127], v[128]], [2, 2, 0.5]);
 * // packed UE8M0: byte j of word p is K group 4p + j (0x7f = 1.0, 0x80 = 2.0)
 * const p = Tensor.from("i32", [1, 1], new Int32Array([0x807f]));
 * assert.deepEqual([...decodeScales(p, 1, 2, 1, "sfa", "demo")], [1, 2]);
 * ```
 */
export function decodeScales(
  sf: Tensor,
  rows: number,
  sfk: number,
  granMN: number,
  name: string,
  op: string,
): Float64Array {
  const out = new Float64Array(rows * sfk);
  const sfRows = ceilDiv(rows, granMN);
  if (sf.dtype === "f32") {
    expectShape(sf, [sfRows, sfk], name, op);
    for (let r = 0; r < rows; r++) {
      const sr = Math.floor(r / granMN);
      for (let g = 0; g < sfk; g++) out[r * sfk + g] = sf.at(sr, g);
    }
  } else if (sf.dtype === "i32") {
    if (granMN !== 1) throw new TypeError(`${op}: packed UE8M0 "${name}" needs a per-row recipe (gran_mn = 1)`);
    expectShape(sf, [rows, ceilDiv(sfk, 4)], name, op);
    for (let r = 0; r < rows; r++) {
      for (let g = 0; g < sfk; g++) {
        const byte = (sf.at(r, g >> 2) >>> (8 * (g & 3))) & 0xff;
        out[r * sfk + g] = byte === 0xff ? NaN : pow2(byte - 127);
      }
    }
  } else {
    throw new TypeError(`${op}: "${name}" must be f32 or packed UE8M0 i32, got ${sf.dtype}`);
  }
  return out;
}

/**
 * SM100 scales must be UE8M0 powers of two (the pack kernel traps otherwise, `deepgemm-ops.md` §3).
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { requirePowerOfTwoScales } from "./op_spec.ts";
 * requirePowerOfTwoScales(new Float64Array([1, 0.25, 2 ** -127]), "sfa", "demo");
 * assert.throws(() => requirePowerOfTwoScales(new Float64Array([3]), "sfa", "demo"), RangeError);
 * ```
 */
export function requirePowerOfTwoScales(s: Float64Array, name: string, op: string): void {
  for (let i = 0; i < s.length; i++) {
    const v = s[i];
    if (v !== v) continue;
    const b = f32Bits(v);
    if ((b & 0x807fffff) !== 0 && v !== 2 ** -127) {
      throw new RangeError(`${op}: "${name}" value ${v} is not a positive power of two (SM100 needs UE8M0 scales)`);
    }
  }
}

/**
 * The value of element (i, j) of a bf16/f32 tensor.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Tensor } from "../tensor/tensor.ts";
 * import { valueAt } from "./op_spec.ts";
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
 * import { initialOutput } from "./op_spec.ts";
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
 * import { writeValue } from "./op_spec.ts";
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
 * import { writeResults } from "./op_spec.ts";
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
 * import { cByDIndex } from "./op_spec.ts";
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
 * import { copyInto } from "./op_spec.ts";
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
 * import { checkC } from "./op_spec.ts";
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

/**
 * Refuses a model that applies no scale factors (`cublaslt`, `bf16`: `scales: "none"`) for an op given fine-grained
 * scales: it would return unscaled products while the scale tensors are silently ignored.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { resolveModel } from "../kernel_models/kernel_models.ts";
 * import { requireScaledModel } from "./op_spec.ts";
 * requireScaledModel(resolveModel({ model: "sm90_1d2d" }), "fp8_gemm_nt");
 * assert.throws(() => requireScaledModel(resolveModel({ model: "cublaslt" }), "fp8_gemm_nt"), /applies no scale factors/);
 * ```
 */
export function requireScaledModel(model: ResolvedModel, op: string): void {
  if (model.scales === "none") {
    throw new TypeError(
      `${op}: model ${model.name} applies no scale factors, so sfa and sfb would be ignored; use a model with ` +
        `fine-grained scales (${
          Object.values(KERNEL_MODELS).filter((m) => m.scales !== "none").map((m) => m.name).join(", ")
        })`,
    );
  }
}
