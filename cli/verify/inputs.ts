/**
 * Deterministic operands for `verify`'s generated suites, built the way DeepGEMM's tests build them
 * (`deepgemm-ops.md` §9): `torch.randn` BF16 inputs, A quantized per token (1×128), B per block (128×128),
 * SM90-style exact fp32 scales.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Prng } from "../../reference/random/prng.ts";
 * import { fp8Operand } from "./inputs.ts";
 * const { q, sf } = fp8Operand(new Prng(1), 7, 256, "token");
 * assert.deepEqual(q.shape, [7, 256]);
 * assert.deepEqual(sf.shape, [7, 2]);
 * ```
 * @module
 */
import { randnBf16 } from "../../fixtures/case_specs.ts";
import { perBlockCastToFp8, perChannelCastToFp8, perTokenCastToFp8 } from "../../reference/quant/fp8_casts.ts";
import type { Prng } from "../../reference/random/prng.ts";
import { type DType, Tensor } from "../../reference/tensor/mod.ts";

/** Quantization granularity of an FP8 operand: per token (1×128), per block (128×128), or per channel (128×1, K rows). */
export type Granularity = "token" | "block" | "channel";

/** An FP8 operand `[rows, k]` (e4m3 codes) and its fp32 scales. */
export function fp8Operand(prng: Prng, rows: number, k: number, gran: Granularity): { q: Tensor; sf: Tensor } {
  const x = randnBf16(prng, [rows, k]);
  const opts = { useUe8m0: false };
  return gran === "token"
    ? perTokenCastToFp8(x, opts)
    : gran === "block"
    ? perBlockCastToFp8(x, opts)
    : perChannelCastToFp8(x, opts);
}

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

/** A BF16 or f32 tensor of randn values (C operands: DeepGEMM's tests use randn·32 for C, §9). */
export function randnTensor(prng: Prng, shape: readonly number[], dtype: DType, scale = 1): Tensor {
  const b = randnBf16(prng, shape, scale);
  if (dtype === "bf16") return b;
  const out = Tensor.zeros("f32", shape);
  const src = b.data as Uint16Array, dst = out.data as Float32Array;
  const u = new Uint32Array(dst.buffer);
  for (let i = 0; i < src.length; i++) u[i] = src[i] << 16;
  return out;
}

/** Zeroes rows of a 2-D tensor (padding rows of grouped layouts are zero in DeepGEMM's tests). */
export function zeroRows(t: Tensor, rows: Iterable<number>): void {
  const cols = t.shape[1];
  // deno-lint-ignore no-explicit-any
  const d = t.data as any;
  for (const r of rows) d.fill(0, r * cols, (r + 1) * cols);
}
