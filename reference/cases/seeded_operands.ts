/**
 * Seeded operands made the way DeepGEMM's tests make them (`deepgemm-ops.md` §9): `torch.randn` BF16 (or fp32 holding
 * BF16 values) scaled, and FP8 operands quantized per token (1×128), per block (128×128) or per channel with exact
 * fp32 scales. Every value comes from the {@link Prng} passed in, so a seed gives the same bits everywhere.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Prng } from "../random/prng.ts";
 * import { fp8Operand, randnBf16 } from "./seeded_operands.ts";
 * assert.deepEqual(randnBf16(new Prng(1), [2, 3]).shape, [2, 3]);
 * const { q, sf } = fp8Operand(new Prng(1), 7, 256, "token");
 * assert.deepEqual([q.shape, sf.shape], [[7, 256], [7, 2]]);
 * ```
 * @module
 */
import { bf16Rne } from "../fp32.ts";
import { perBlockCastToFp8, perChannelCastToFp8, perTokenCastToFp8 } from "../quant/fp8_casts.ts";
import type { Prng } from "../random/prng.ts";
import type { DType } from "../tensor/dtype.ts";
import { Tensor } from "../tensor/tensor.ts";

/** A bf16 tensor of standard-normal values times `scale` (DeepGEMM's tests use `torch.randn` bf16 inputs, §9). */
export function randnBf16(prng: Prng, shape: readonly number[], scale = 1): Tensor {
  let n = 1;
  for (const d of shape) n *= d;
  const data = new Uint16Array(n);
  for (let i = 0; i < n; i++) data[i] = bf16Rne(Math.fround(prng.normal() * scale));
  return Tensor.from("bf16", shape, data);
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
