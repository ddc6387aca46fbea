/**
 * NVFP4 (numerics.md §6): E2M1 elements, one E4M3 block scale per 16 elements along the last dimension, one fp32
 * scale per tensor; `x ≈ e2m1(code) · e4m3(block_scale) · global`. Two operation orders exist and differ in the low
 * bits, in the smallest block scale and on all-zero blocks:
 *
 * TransformerEngine (`core_nvfp4.cuh`; {@link nvfp4QuantizeTe}):
 * ```
 * S_enc = fl32(2688 / global_amax); S_enc = fminf(S_enc, FLT_MAX); if (global_amax == 0 || S_enc == 0) S_enc = 1
 * S_dec = (float)(1.0 / S_enc)                                  // double division, rounded once
 * block: s = fl32(block_amax · fl32(S_enc · fl32(1/6)))  →  E4M3 RNE satfinite (cuda_satfinite)
 *        inv = fminf(fl32(1 / fl32(e4m3(s) · S_dec)), FLT_MAX)   // all-zero block: scale 0x00, inv = FLT_MAX
 *        q = e2m1 RN satfinite of fl32(x · inv)  (cuda_fp4_rn; NaN → +6), or stochastic rounding with caller bits
 * ```
 * torchao (`nvfp4_quantize`; {@link nvfp4QuantizeTorchao}):
 * ```
 * pts = amax / 2688; block_scale = block_amax / 6           // scalar divisions: GPU multiplies by fl32(1/c)
 * scaled = E4M3(clamp(fl32(block_scale / pts), 2^-6, 448))  // all-zero block: 0x08
 * q = torchao_f4(clamp(fl32(x · fl32(fl32(1/pts) / e4m3(scaled))), -6, 6))
 * single level (no per-tensor scale): scaled = E4M3(clamp(block_amax/6, 2^-6, 448)); q = f4(x · fl32(1/scale))
 * ```
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Tensor } from "../tensor/tensor.ts";
 * import { nvfp4QuantizeTe, nvfp4QuantizeTorchao } from "./nvfp4.ts";
 * // numerics.md §6: global amax 10, an all-zero block → TE scale 0x00, torchao scale 0x08
 * const v = new Float32Array(32);
 * v[0] = 10;
 * const x = Tensor.from("f32", [1, 32], v);
 * assert.equal(nvfp4QuantizeTe(x).sf.at(0, 1), 0x00);
 * assert.equal(nvfp4QuantizeTorchao(x).sf.at(0, 1), 0x08);
 * ```
 * @module
 */
import { f32FromBits } from "../fp32.ts";
import { Tensor } from "../tensor/tensor.ts";
import { toFloat32 } from "../tensor/values.ts";
import { decodeTable } from "../formats/batch.ts";
import { encodeBits, fastEncoder } from "./_fast_encode.ts";
import { checkSemantics, divideByScalar, type Semantics } from "./scalar_division.ts";
import { stochasticRoundFp4Te } from "./stochastic_rounding.ts";
import { productNanBits } from "./_group_quant.ts";

/** NVFP4 block size. */
export const NVFP4_BLOCK = 16;
const FLT_MAX = f32FromBits(0x7f7fffff);
const E4M3_TINY = 2 ** -6;

/** Result of an NVFP4 quantizer. */
export interface Nvfp4Result {
  /** Unpacked E2M1 codes, the input's shape. */
  readonly codes: Tensor;
  /** E4M3 block scales `[..., n/16]`. */
  readonly sf: Tensor;
  /** The per-tensor fp32 scale `[1]`: TE's `S_dec`, torchao's `per_tensor_scale` (1 for single-level torchao). */
  readonly globalSf: Tensor;
}

/** `fminf`: the non-NaN operand when one is NaN. */
function fminf(a: number, b: number): number {
  if (a !== a) return b;
  if (b !== b) return a;
  return a < b ? a : b;
}

const F = new Float32Array(1);
const U = new Uint32Array(F.buffer);

function prepare(fn: string, x: Tensor): { vals: Float32Array; n: number } {
  if (!(x instanceof Tensor) || x.ndim < 1) throw new TypeError(`${fn}: x must be a tensor of rank ≥ 1`);
  const n = x.shape[x.ndim - 1];
  if (n % NVFP4_BLOCK !== 0) throw new RangeError(`${fn}: the last dimension ${n} is not a multiple of 16`);
  return { vals: toFloat32(x), n };
}

function amaxOf(vals: Float32Array, from: number, to: number): number {
  let a = 0;
  for (let k = from; k < to; k++) {
    const v = Math.abs(vals[k]);
    if (v > a || v !== v) a = v;
    if (a !== a) break;
  }
  return a;
}

/** Options of {@link nvfp4QuantizeTe}. */
export interface Nvfp4TeOptions {
  /** The global amax (default: max |x| over the tensor, NaN if any element is NaN). */
  readonly globalAmax?: number;
  /** Random bits, one per element (low 8 used): stochastic rounding instead of RN. */
  readonly rbits?: Uint8Array | Uint32Array;
}

/**
 * NVFP4 quantization in TransformerEngine's operation order (1×16 row-wise blocks).
 *
 * @param x float tensor, last dimension a multiple of 16
 * @param opts {@link Nvfp4TeOptions}
 * @returns {@link Nvfp4Result} (`globalSf` = S_dec)
 * @throws {TypeError} for a non-tensor
 * @throws {RangeError} for a last dimension not divisible by 16 or an rbits array of the wrong length
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Tensor } from "../tensor/tensor.ts";
 * import { nvfp4QuantizeTe } from "./nvfp4.ts";
 * // numerics.md §6: global amax 10, block [10, 1, −2.5, 0.3, 4.1, −7, 0, 5.5, 0...]: scale 0x7E, codes [7, 1, B, 0, 4, E, 0, 5]
 * const v = new Float32Array(16);
 * v.set([10, 1, -2.5, 0.3, 4.1, -7, 0, 5.5]);
 * const r = nvfp4QuantizeTe(Tensor.from("f32", [1, 16], v));
 * assert.equal(r.sf.at(0, 0), 0x7e);
 * assert.deepEqual([...(r.codes.data as Uint8Array).subarray(0, 8)], [7, 1, 0xb, 0, 4, 0xe, 0, 5]);
 * ```
 */
export function nvfp4QuantizeTe(x: Tensor, opts: Nvfp4TeOptions = {}): Nvfp4Result {
  const fn = "nvfp4QuantizeTe";
  const { vals, n } = prepare(fn, x);
  if (opts.rbits !== undefined && opts.rbits.length !== vals.length) {
    throw new RangeError(`${fn}: rbits has ${opts.rbits.length} entries for ${vals.length} elements`);
  }
  const globalAmax = opts.globalAmax !== undefined ? Math.fround(opts.globalAmax) : amaxOf(vals, 0, vals.length);
  let sEnc = fminf(Math.fround(2688 / globalAmax), FLT_MAX);
  if (globalAmax === 0 || sEnc === 0) sEnc = 1;
  const sDec = Math.fround(1 / sEnc);
  const sEncOver6 = Math.fround(sEnc * Math.fround(1 / 6));
  const e4m3 = fastEncoder("cuda_satfinite", "e4m3"), e2m1 = fastEncoder("cuda_fp4_rn", "e2m1");
  const e4m3Values = decodeTable("e4m3");
  const nb = vals.length / NVFP4_BLOCK;
  const sf = new Uint8Array(nb), codes = new Uint8Array(vals.length);
  for (let b = 0; b < nb; b++) {
    const k0 = b * NVFP4_BLOCK;
    F[0] = amaxOf(vals, k0, k0 + NVFP4_BLOCK) * sEncOver6;
    const sc = encodeBits(e4m3, U[0]);
    sf[b] = sc;
    const inv = fminf(Math.fround(1 / Math.fround(e4m3Values[sc] * sDec)), FLT_MAX);
    for (let k = k0; k < k0 + NVFP4_BLOCK; k++) {
      F[0] = vals[k] * inv;
      codes[k] = opts.rbits !== undefined ? stochasticRoundFp4Te(U[0], opts.rbits[k]) : encodeBits(e2m1, U[0]);
    }
  }
  return {
    codes: Tensor.from("e2m1", x.shape, codes),
    sf: Tensor.from("e4m3", [...x.shape.slice(0, -1), n / NVFP4_BLOCK], sf),
    globalSf: Tensor.from("f32", [1], new Float32Array([sDec])),
  };
}

/** Options of {@link nvfp4QuantizeTorchao}. */
export interface Nvfp4TorchaoOptions {
  /** `auto` (default): `amax(x) / 2688`; `none`: single-level scaling; or a given per-tensor scale. */
  readonly perTensorScale?: "auto" | "none" | number;
  /** Scalar-division semantics (`gpu` default). */
  readonly semantics?: Semantics;
}

/**
 * NVFP4 quantization in torchao's operation order.
 *
 * @param x float tensor, last dimension a multiple of 16
 * @param opts {@link Nvfp4TorchaoOptions}
 * @returns {@link Nvfp4Result} (`globalSf` = per_tensor_scale)
 * @throws {TypeError} for a non-tensor
 * @throws {RangeError} for a last dimension not divisible by 16 or a bad option
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Tensor } from "../tensor/tensor.ts";
 * import { nvfp4QuantizeTorchao } from "./nvfp4.ts";
 * // numerics.md §6: global amax 10, block [0.01, −0.02, 0.004, 0, ...]: scale 0x36, codes [5, F, 2, 0, ...]
 * const v = new Float32Array(32);
 * v[0] = 10;
 * v.set([0.01, -0.02, 0.004], 16);
 * const r = nvfp4QuantizeTorchao(Tensor.from("f32", [1, 32], v));
 * assert.equal(r.sf.at(0, 1), 0x36);
 * assert.deepEqual([...(r.codes.data as Uint8Array).subarray(16, 20)], [5, 0xf, 2, 0]);
 * ```
 */
export function nvfp4QuantizeTorchao(x: Tensor, opts: Nvfp4TorchaoOptions = {}): Nvfp4Result {
  const fn = "nvfp4QuantizeTorchao";
  const { vals, n } = prepare(fn, x);
  const semantics = checkSemantics(opts.semantics, fn);
  const mode = opts.perTensorScale ?? "auto";
  let pts: number | null;
  if (mode === "auto") pts = divideByScalar(amaxOf(vals, 0, vals.length), 2688, semantics);
  else if (mode === "none") pts = null;
  else if (typeof mode === "number") pts = Math.fround(mode);
  else throw new RangeError(`${fn}: perTensorScale must be "auto", "none" or a number`);
  const e4m3 = fastEncoder("torch_2_11", "e4m3"), f4 = fastEncoder("torchao_f4", "e2m1");
  const e4m3Values = decodeTable("e4m3");
  const invPts = pts === null ? 1 : Math.fround(1 / pts);
  const valsU = new Uint32Array(vals.buffer, vals.byteOffset, vals.length);
  const nb = vals.length / NVFP4_BLOCK;
  const sf = new Uint8Array(nb), codes = new Uint8Array(vals.length);
  const clamp = (v: number, lo: number, hi: number) => (v < lo ? lo : v > hi ? hi : v); // torch.clamp keeps NaN
  for (let b = 0; b < nb; b++) {
    const k0 = b * NVFP4_BLOCK;
    const blockScale = divideByScalar(amaxOf(vals, k0, k0 + NVFP4_BLOCK), 6, semantics);
    F[0] = clamp(pts === null ? blockScale : Math.fround(blockScale / pts), E4M3_TINY, 448);
    if (F[0] !== F[0]) U[0] = productNanBits(semantics, 0, false); // 0/0: GPU canonical NaN, x86 default NaN
    const sc = encodeBits(e4m3, U[0]);
    sf[b] = sc;
    const mult = pts === null ? Math.fround(1 / e4m3Values[sc]) : Math.fround(invPts / e4m3Values[sc]);
    for (let k = k0; k < k0 + NVFP4_BLOCK; k++) {
      F[0] = clamp(Math.fround(vals[k] * mult), -6, 6);
      if (F[0] !== F[0]) U[0] = productNanBits(semantics, valsU[k], mult !== mult);
      codes[k] = encodeBits(f4, U[0]);
    }
  }
  return {
    codes: Tensor.from("e2m1", x.shape, codes),
    sf: Tensor.from("e4m3", [...x.shape.slice(0, -1), n / NVFP4_BLOCK], sf),
    globalSf: Tensor.from("f32", [1], new Float32Array([pts === null ? 1 : pts])),
  };
}
