/**
 * Mega MoE as mathematics in one process (`deep_gemm/mega`, `impls/sm100_fp8_fp4_mega_moe.cuh`, `…bf16_mega_moe.cuh`;
 * `deepgemm-ops.md` §10): dispatch by `topk_idx` (−1 = unused slot), L1 GEMM, SwiGLU (+ per-32 FP8 requantization in
 * the FP8×FP4 variant), L2 GEMM, combine. One rank holds every expert (E_loc = E); multi-rank runs differ only in
 * which rank computes what, not in the arithmetic.
 *
 * Per token t and slot j (ascending) with expert `e = topk_idx[t, j] ≥ 0`:
 * `h = x_t·W1[e]ᵀ` (fp32) → `a = swiglu(h, w[t,j])` → FP8: `q, sf = requantPer32(a)`, `o = bf16(q·W2[e]ᵀ)`;
 * BF16: `o = bf16(bf16(a)·W2[e]ᵀ)`. Combine: `y_t = bf16(Σ_j o_j)` with the fp32 sum starting at 0 and adding each
 * bf16 `o_j` (`add.rn.f32.bf16`) in ascending slot order; a token whose slots are all −1 gets +0.
 * Receive statistics: `stats[e] += number of (token, slot) pairs routed to e` (int32, wrapping); a token listing an
 * expert twice is received twice [inferred: DeepGEMM's test never routes duplicates, torch.topk gives distinct ids].
 * @module
 */
import { bf16Rne, bf16ToF32, f32 } from "../fp32.ts";
import { Tensor } from "../tensor/tensor.ts";
import { bf16Dot, blockScaledDot } from "./block_scaled_dot.ts";
import { type DecodedOperand, decodeOperand } from "../tensor_core/decoded_operand.ts";
import { requantPer32, swiglu, type SwigluOptions } from "./swiglu_quant.ts";

/** Inputs of the Mega MoE reference (weights in DeepGEMM's original, untransformed row order). */
export interface MegaMoeInputs {
  /** Tokens: e4m3 `[T, hidden]` (FP8×FP4) or bf16 `[T, hidden]` (BF16). */
  x: Tensor;
  /** Token scales (FP8×FP4): UE8M0 bytes `[T, hidden/32]` (u8/ue8m0) or packed i32 `[T, hidden/128]`. */
  x_sf?: Tensor;
  /** Expert ids, i64 or i32 `[T, topk]`, −1 = unused. */
  topk_idx: Tensor;
  /** Top-k weights, f32 `[T, topk]`. */
  topk_weights: Tensor;
  /** L1 weights: packed FP4 (u8/i8) `[E, 2I, hidden/2]` (gate rows, then up rows) or bf16 `[E, 2I, hidden]`. */
  l1: Tensor;
  /** L1 scales (FP8×FP4): `[E, 2I, hidden/32]` bytes or packed i32 `[E, 2I, hidden/128]`. */
  l1_sf?: Tensor;
  /** L2 weights: packed FP4 `[E, hidden, I/2]` or bf16 `[E, hidden, I]`. */
  l2: Tensor;
  /** L2 scales (FP8×FP4): `[E, hidden, I/32]` bytes or packed i32 `[E, hidden, I/128]`. */
  l2_sf?: Tensor;
  /** Cumulative receive counts, i32 `[E]` (optional; not modified, the result is returned). */
  cumulative_local_expert_recv_stats?: Tensor;
}

/** Options: SwiGLU (`clamp`, `fastMath`, `siluSource`) and the tensor-core profile of both GEMMs. */
export interface MegaMoeOptions extends SwigluOptions {
  /** Tensor-core profile (default `tcgen05_mxf8f6f4` for FP8×FP4, `tcgen05` for BF16). */
  tensorCore?: string;
}

/** Outputs: `y` bf16 `[T, hidden]` and the updated receive statistics i32 `[E]`. */
export interface MegaMoeResult {
  /** Combined output. */
  y: Tensor;
  /** `cumulative_local_expert_recv_stats` after the call. */
  recv_stats: Tensor;
}

/** The checked, decoded problem shared by the fused and the composed paths. */
export interface MegaMoeProblem {
  /** Variant. */
  kind: "fp8_fp4" | "bf16";
  /** Tokens, experts, top-k, hidden, intermediate. */
  T: number;
  E: number;
  topk: number;
  hidden: number;
  I: number;
  /** Expert id per (t, j). */
  idx: Int32Array;
  /** Weight per (t, j). */
  w: Float32Array;
  /** Decoded operands and scale bytes. */
  x: DecodedOperand;
  xSf: Uint8Array;
  l1: DecodedOperand;
  l1Sf: Uint8Array;
  l2: DecodedOperand;
  l2Sf: Uint8Array;
  /** Incoming statistics. */
  stats: Int32Array;
}

function unpackFp4Codes(t: Tensor): Uint8Array {
  const c = t.contiguous();
  const src = c.data as Uint8Array | Int8Array;
  const out = new Uint8Array(c.numel * 2);
  for (let i = 0; i < c.numel; i++) {
    const b = src[c.offset + i] & 0xff;
    out[2 * i] = b & 0xf;
    out[2 * i + 1] = b >> 4;
  }
  return out;
}

function scaleBytes(fn: string, name: string, t: Tensor | undefined, lead: readonly number[], k: number): Uint8Array {
  if (t === undefined) throw new TypeError(`${fn}: ${name} is required for FP8×FP4 Mega MoE`);
  const c = t.contiguous();
  const same = (want: number) =>
    c.ndim === lead.length + 1 && lead.every((d, i) => c.shape[i] === d) && c.shape[lead.length] === want;
  if ((c.dtype === "u8" || c.dtype === "ue8m0") && same(k / 32)) {
    return (c.data as Uint8Array).slice(c.offset, c.offset + c.numel);
  }
  if (c.dtype === "i32" && same(k / 128)) {
    const words = (c.data as Int32Array).slice(c.offset, c.offset + c.numel);
    return new Uint8Array(words.buffer); // little-endian: byte j of word p = scale of K-group 4p + j
  }
  throw new TypeError(
    `${fn}: ${name} must be UE8M0 bytes [${[...lead, k / 32].join(", ")}] or packed i32 [${
      [...lead, k / 128].join(", ")
    }], got ${c.dtype} [${c.shape.join(", ")}]`,
  );
}

/**
 * Checks the inputs against the host rules and decodes them.
 * @throws TypeError for dtype/shape mismatches (weights dtype not matching x's variant, wrong scale shapes);
 *   RangeError for `hidden % 128`, `I % 128`, `topk > 32`, expert ids outside [−1, E)
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Tensor } from "../tensor/tensor.ts";
 * import { prepareMegaMoe } from "./mega_moe.ts";
 * const inputs = {
 *   x: Tensor.zeros("bf16", [1, 128]),
 *   topk_idx: Tensor.from("i32", [1, 1], new Int32Array([0])),
 *   topk_weights: Tensor.from("f32", [1, 1], new Float32Array([1])),
 *   l1: Tensor.zeros("bf16", [2, 256, 128]),
 *   l2: Tensor.zeros("bf16", [2, 128, 128]),
 * };
 * const p = prepareMegaMoe(inputs);
 * assert.deepEqual([p.kind, p.T, p.E, p.hidden, p.I], ["bf16", 1, 2, 128, 128]);
 * assert.throws(() => prepareMegaMoe({ ...inputs, x: Tensor.zeros("bf16", [1, 64]) }), RangeError);
 * ```
 */
export function prepareMegaMoe(inputs: MegaMoeInputs): MegaMoeProblem {
  const fn = "mega_moe";
  const x = inputs.x;
  if (!(x instanceof Tensor) || x.ndim !== 2) throw new TypeError(`${fn}: x must be a 2-D tensor`);
  const kind = x.dtype === "e4m3" ? "fp8_fp4" : x.dtype === "bf16" ? "bf16" : undefined;
  if (!kind) throw new TypeError(`${fn}: x must be e4m3 (fp8_fp4_mega_moe) or bf16 (bf16_mega_moe), got ${x.dtype}`);
  const [T, hidden] = x.shape;
  if (hidden % 128 !== 0) throw new RangeError(`${fn}: hidden must be a multiple of 128, got ${hidden}`);
  const { l1, l2 } = inputs;
  const wantW = kind === "fp8_fp4" ? ["u8", "i8"] : ["bf16"];
  for (const [n, t] of [["l1", l1], ["l2", l2]] as const) {
    if (!(t instanceof Tensor) || t.ndim !== 3 || !wantW.includes(t.dtype)) {
      throw new TypeError(
        `${fn}: ${n} weights must be 3-D ${
          kind === "fp8_fp4" ? "packed FP4 (u8/i8)" : "bf16"
        } to match x's dtype ${x.dtype}, got ${t?.dtype}`,
      );
    }
  }
  const packed = kind === "fp8_fp4" ? 2 : 1;
  const [E, twoI, h1] = l1.shape;
  const I = twoI / 2;
  if (h1 * packed !== hidden) {
    throw new TypeError(`${fn}: l1 must be [E, 2I, ${hidden / packed}], got [${l1.shape.join(", ")}]`);
  }
  if (!Number.isInteger(I) || I % 128 !== 0) {
    throw new RangeError(`${fn}: intermediate hidden I must be a multiple of 128, got 2I = ${twoI}`);
  }
  if (l2.shape[0] !== E || l2.shape[1] !== hidden || l2.shape[2] * packed !== I) {
    throw new TypeError(`${fn}: l2 must be [${E}, ${hidden}, ${I / packed}], got [${l2.shape.join(", ")}]`);
  }
  const ti = inputs.topk_idx, tw = inputs.topk_weights;
  if (!(ti instanceof Tensor) || ti.ndim !== 2 || (ti.dtype !== "i64" && ti.dtype !== "i32") || ti.shape[0] !== T) {
    throw new TypeError(`${fn}: topk_idx must be i64 or i32 [${T}, topk]`);
  }
  const topk = ti.shape[1];
  if (topk > 32) throw new RangeError(`${fn}: topk must be ≤ 32, got ${topk}`);
  if (!(tw instanceof Tensor) || tw.dtype !== "f32" || tw.ndim !== 2 || tw.shape[0] !== T || tw.shape[1] !== topk) {
    throw new TypeError(`${fn}: topk_weights must be f32 [${T}, ${topk}]`);
  }
  const idx = new Int32Array(T * topk);
  const tic = ti.contiguous();
  for (let i = 0; i < T * topk; i++) {
    const v = Number(tic.data[tic.offset + i]);
    if (!(v >= -1 && v < E)) throw new RangeError(`${fn}: topk_idx value ${v} outside [-1, ${E})`);
    idx[i] = v;
  }
  const w = Float32Array.from(tw.contiguous().data as Float32Array).slice(0, T * topk);
  let stats = new Int32Array(E);
  if (inputs.cumulative_local_expert_recv_stats !== undefined) {
    const s = inputs.cumulative_local_expert_recv_stats;
    if (!(s instanceof Tensor) || s.dtype !== "i32" || s.ndim !== 1 || s.shape[0] !== E) {
      throw new TypeError(`${fn}: cumulative_local_expert_recv_stats must be i32 [${E}]`);
    }
    stats = Int32Array.from(s.contiguous().data as Int32Array).slice(0, E);
  }
  if (kind === "bf16") {
    const dec = (t: Tensor) => decodeOperand("bf16", t.contiguous().data as Uint16Array);
    const none = new Uint8Array(0);
    return {
      kind,
      T,
      E,
      topk,
      hidden,
      I,
      idx,
      w,
      x: dec(x),
      xSf: none,
      l1: dec(l1),
      l1Sf: none,
      l2: dec(l2),
      l2Sf: none,
      stats,
    };
  }
  return {
    kind,
    T,
    E,
    topk,
    hidden,
    I,
    idx,
    w,
    stats,
    x: decodeOperand("e4m3", x.contiguous().data as Uint8Array),
    xSf: scaleBytes(fn, "x_sf", inputs.x_sf, [T], hidden),
    l1: decodeOperand("e2m1", unpackFp4Codes(l1)),
    l1Sf: scaleBytes(fn, "l1_sf", inputs.l1_sf, [E, twoI], hidden),
    l2: decodeOperand("e2m1", unpackFp4Codes(l2)),
    l2Sf: scaleBytes(fn, "l2_sf", inputs.l2_sf, [E, hidden], I),
  };
}

/**
 * The L1 GEMM row `h = x_t · W1[e]ᵀ` (fp32, 2I values).
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Tensor } from "../tensor/tensor.ts";
 * import { megaMoe, megaMoeCombine, megaMoeExpertOutput, megaMoeL1, prepareMegaMoe } from "./mega_moe.ts";
 * // One token routed to expert 1 with weight 0.5; the fused reference is these steps composed.
 * const ramp = (n: number, s: number) => Uint16Array.from({ length: n }, (_, i) => 0x3c00 + ((i * s) % 97)); // small bf16s
 * const inputs = {
 *   x: Tensor.from("bf16", [1, 128], ramp(128, 5)),
 *   topk_idx: Tensor.from("i32", [1, 1], new Int32Array([1])),
 *   topk_weights: Tensor.from("f32", [1, 1], new Float32Array([0.5])),
 *   l1: Tensor.from("bf16", [2, 256, 128], ramp(2 * 256 * 128, 7)),
 *   l2: Tensor.from("bf16", [2, 128, 128], ramp(2 * 128 * 128, 3)),
 * };
 * const p = prepareMegaMoe(inputs);
 * const h = megaMoeL1(p, 0, 1);
 * assert.equal(h.length, 256);
 * const y = megaMoeCombine([megaMoeExpertOutput(p, h, 1, 0.5, {})], 128);
 * assert.deepEqual([...y], [...megaMoe(inputs).y.data]);
 * ```
 */
export function megaMoeL1(p: MegaMoeProblem, t: number, e: number, tensorCore?: string): Float32Array {
  const h = new Float32Array(2 * p.I), K = p.hidden;
  for (let n = 0; n < 2 * p.I; n++) {
    const row = e * 2 * p.I + n;
    h[n] = p.kind === "fp8_fp4"
      ? blockScaledDot(p.x, t * K, p.xSf, t * K / 32, p.l1, row * K, p.l1Sf, row * K / 32, K, tensorCore)
      : bf16Dot(p.x, t * K, p.l1, row * K, K, tensorCore);
  }
  return h;
}

/**
 * SwiGLU, requantization (FP8×FP4) or bf16 rounding (BF16), and the L2 GEMM: one slot's bf16 output row.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Tensor } from "../tensor/tensor.ts";
 * import { megaMoeExpertOutput, prepareMegaMoe } from "./mega_moe.ts";
 * const p = prepareMegaMoe({
 *   x: Tensor.zeros("bf16", [1, 128]),
 *   topk_idx: Tensor.from("i32", [1, 1], new Int32Array([0])),
 *   topk_weights: Tensor.from("f32", [1, 1], new Float32Array([1])),
 *   l1: Tensor.zeros("bf16", [1, 256, 128]),
 *   l2: Tensor.from("bf16", [1, 128, 128], new Uint16Array(128 * 128).fill(0x3f80)),
 * });
 * // h = 0 gives SwiGLU 0, so the L2 row is +0 whatever the weights.
 * assert.deepEqual([...megaMoeExpertOutput(p, new Float32Array(256), 0, 1, {})], new Array(128).fill(0));
 * ```
 */
export function megaMoeExpertOutput(
  p: MegaMoeProblem,
  h: Float32Array,
  e: number,
  weight: number,
  options: MegaMoeOptions,
): Uint16Array {
  const a = swiglu(h, weight, options);
  const o = new Uint16Array(p.hidden), K = p.I;
  if (p.kind === "fp8_fp4") {
    const { codes, sf } = requantPer32(a);
    const q = decodeOperand("e4m3", codes);
    for (let n = 0; n < p.hidden; n++) {
      const row = e * p.hidden + n;
      o[n] = bf16Rne(blockScaledDot(q, 0, sf, 0, p.l2, row * K, p.l2Sf, row * K / 32, K, options.tensorCore));
    }
  } else {
    const ab = decodeOperand("bf16", Uint16Array.from(a, (v) => bf16Rne(v)));
    for (let n = 0; n < p.hidden; n++) {
      o[n] = bf16Rne(bf16Dot(ab, 0, p.l2, (e * p.hidden + n) * K, K, options.tensorCore));
    }
  }
  return o;
}

/**
 * Combine of one token: fp32 sum from 0 over the used slots in ascending order, then bf16 (RNE).
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { megaMoeCombine } from "./mega_moe.ts";
 * // bf16 1.0 + 2.0 summed in fp32, rounded to bf16 3.0; an unused slot (undefined) is skipped.
 * const y = megaMoeCombine([new Uint16Array([0x3f80]), undefined, new Uint16Array([0x4000])], 1);
 * assert.deepEqual([...y], [0x4040]);
 * ```
 */
export function megaMoeCombine(outputs: (Uint16Array | undefined)[], hidden: number): Uint16Array {
  const y = new Uint16Array(hidden);
  for (let n = 0; n < hidden; n++) {
    let acc = 0;
    for (const o of outputs) if (o !== undefined) acc = f32(acc + bf16ToF32(o[n]));
    y[n] = bf16Rne(acc);
  }
  return y;
}

/**
 * The fused Mega MoE reference (`fp8_fp4_mega_moe` for e4m3 x, `bf16_mega_moe` for bf16 x), token by token.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Tensor } from "../tensor/tensor.ts";
 * import { megaMoe } from "./mega_moe.ts";
 * const T = 1, H = 128, I = 128, E = 2;
 * const one = 0x3f80; // bf16 1.0
 * const r = megaMoe({
 *   x: Tensor.from("bf16", [T, H], new Uint16Array(H).fill(one)),
 *   topk_idx: Tensor.from("i32", [T, 2], new Int32Array([-1, -1])),
 *   topk_weights: Tensor.from("f32", [T, 2], new Float32Array(2)),
 *   l1: Tensor.zeros("bf16", [E, 2 * I, H]),
 *   l2: Tensor.zeros("bf16", [E, H, I]),
 * });
 * assert.equal(r.y.at(0, 5), 0); // every slot unused: +0
 * assert.deepEqual(Array.from(r.recv_stats.data as Int32Array), [0, 0]);
 * ```
 */
export function megaMoe(inputs: MegaMoeInputs, options: MegaMoeOptions = {}): MegaMoeResult {
  const p = prepareMegaMoe(inputs);
  const y = Tensor.zeros("bf16", [p.T, p.hidden]);
  const stats = Int32Array.from(p.stats);
  for (let t = 0; t < p.T; t++) {
    const outs: (Uint16Array | undefined)[] = [];
    for (let j = 0; j < p.topk; j++) {
      const e = p.idx[t * p.topk + j];
      if (e < 0) {
        outs.push(undefined);
        continue;
      }
      stats[e] = (stats[e] + 1) | 0;
      outs.push(megaMoeExpertOutput(p, megaMoeL1(p, t, e, options.tensorCore), e, p.w[t * p.topk + j], options));
    }
    (y.data as Uint16Array).set(megaMoeCombine(outs, p.hidden), t * p.hidden);
  }
  return { y, recv_stats: Tensor.from("i32", [p.E], stats) };
}
