/**
 * Builders of the lightning indexer's cases: MQA queries cast straight to E4M3 and keys per token, per-query
 * `[ks, ke)` ranges with an empty row, the fused paged KV cache with a shuffled block table, and SM100's FP4 Q and
 * KV (`deepgemm-ops.md` §8).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Prng } from "../random/prng.ts";
 * import { mqa } from "./mqa_builders.ts";
 * const built = mqa(4, 32, 64, 16, false)(new Prng(3));
 * assert.deepEqual(built.inputs.q.shape, [4, 32, 64]);
 * ```
 * @module
 */
import { encodeArray } from "../formats/batch.ts";
import { perTokenCastToFp4 } from "../quant/fp4_casts.ts";
import { perTokenCastToFp8 } from "../quant/fp8_casts.ts";
import type { Prng } from "../random/prng.ts";
import { Tensor } from "../tensor/tensor.ts";
import { toFloat32 } from "../tensor/values.ts";
import type { Built } from "./case_spec.ts";
import { randnTensor } from "./seeded_operands.ts";
import { i32 } from "./tensor_assembly.ts";

/** Q cast straight to E4M3 (PyTorch `.to(float8_e4m3fn)`), KV per token (`per_custom_dims_cast_to_fp8(kv, (0,))`). */
export function mqaOperands(
  p: Prng,
  s: number,
  h: number,
  d: number,
  skv: number,
): { q: Tensor; kv: Tensor; kv_sf: Tensor; weights: Tensor } {
  const q = Tensor.from(
    "e4m3",
    [s, h, d],
    encodeArray("torch_2_11", "e4m3", toFloat32(randnTensor(p, [s, h, d], "bf16"))) as Uint8Array,
  );
  const kv = perTokenCastToFp8(randnTensor(p, [skv, d], "bf16"), { useUe8m0: false, granK: d });
  const weights = randnTensor(p, [s, h], "f32");
  return { q, kv: kv.q, kv_sf: kv.sf.reshape([skv]), weights };
}

/** `fp8_mqa_logits` with per-query [ks, ke) ranges, one empty (ks ≥ ke) row, clean or compressed output. */
export function mqa(s: number, h: number, d: number, skv: number, compressed: boolean): (p: Prng) => Built {
  return (p) => {
    const ks: number[] = [], ke: number[] = [];
    for (let i = 0; i < s; i++) {
      const start = p.int(skv >> 1);
      ks.push(start);
      ke.push(i === 1 ? start : Math.min(skv, start + 1 + p.int(skv >> 1))); // row 1: ks = ke, an empty range
    }
    const width = Math.max(...ke.map((e, i) => e - ks[i]));
    return {
      inputs: { ...mqaOperands(p, s, h, d, skv), cu_seq_len_k_start: i32(ks), cu_seq_len_k_end: i32(ke) },
      scalars: compressed ? { clean_logits: false, max_seqlen_k: width } : { clean_logits: true },
    };
  };
}

/** Context lengths, page counts and the shuffled block table of a paged MQA case ({@link pagedSchedule}). */
export interface PagedSchedule {
  /** Context length per (request, next-n) entry, row-major `[b, next_n]`. */
  lens: number[];
  /** The largest context length. */
  maxLen: number;
  /** Pages per request (`ceil(maxLen / block_kv)`). */
  maxBlocks: number;
  /** Pages in the cache (`b · maxBlocks + 1`: one page no request uses). */
  numBlocks: number;
  /** The block table, row-major `[b, maxBlocks]`: a shuffle of the pages. */
  table: number[];
}

/**
 * The schedule of a paged MQA case (§8.2): context lengths varying within a request with the last entry the row
 * maximum, and a block table drawn from a shuffle of the cache's pages.
 * @param p the case's PRNG (the lengths are drawn first, then the shuffle)
 * @param b requests
 * @param nextN query tokens per request
 * @param blockKv tokens per page
 * @returns lengths, page counts and the block table
 */
export function pagedSchedule(p: Prng, b: number, nextN: number, blockKv: number): PagedSchedule {
  const lens: number[] = [];
  for (let r = 0; r < b; r++) {
    const last = 1 + p.int(3 * blockKv);
    for (let j = 0; j < nextN; j++) lens.push(j === nextN - 1 ? last : Math.max(1, last - p.int(8)));
  }
  const maxLen = Math.max(...lens);
  const maxBlocks = Math.ceil(maxLen / blockKv), numBlocks = b * maxBlocks + 1;
  const order = Array.from({ length: numBlocks }, (_, i) => i);
  for (let i = numBlocks - 1; i > 0; i--) {
    const j = p.int(i + 1);
    [order[i], order[j]] = [order[j], order[i]];
  }
  return { lens, maxLen, maxBlocks, numBlocks, table: order.slice(0, b * maxBlocks) };
}

/**
 * `fp8_paged_mqa_logits`: the fused KV-cache pages (per page block_kv·D value bytes, then block_kv fp32 scales),
 * a shuffled block table, context lengths varying within a request with the last entry the row maximum (§8.2).
 */
export function pagedMqa(b: number, nextN: number, h: number, d: number, blockKv: number): (p: Prng) => Built {
  return (p) => {
    const { lens, maxLen, maxBlocks, numBlocks, table } = pagedSchedule(p, b, nextN, blockKv);
    const cache = new Uint8Array(numBlocks * blockKv * (d + 4));
    for (let blk = 0; blk < numBlocks; blk++) {
      const kv = perTokenCastToFp8(randnTensor(p, [blockKv, d], "bf16"), { useUe8m0: false, granK: d });
      const page = blk * blockKv * (d + 4);
      cache.set(kv.q.data as Uint8Array, page);
      cache.set(new Uint8Array((kv.sf.data as Float32Array).slice().buffer), page + blockKv * d);
    }
    const { q, weights } = mqaOperands(p, b * nextN, h, d, 1);
    return {
      inputs: {
        q: q.reshape([b, nextN, h, d]),
        kv_cache: Tensor.from("u8", [numBlocks, blockKv, 1, d + 4], cache),
        weights,
        context_lens: Tensor.from("i32", [b, nextN], Int32Array.from(lens)),
        block_table: Tensor.from("i32", [b, maxBlocks], Int32Array.from(table)),
      },
      scalars: { max_context_len: maxLen },
    };
  };
}

/**
 * SM100 `fp8_fp4_mqa_logits` with FP4 Q and KV: each row quantized by `per_token_cast_to_fp4(gran_k=32,
 * use_ue8m0=True, use_packed_ue8m0=True)` (deepgemm-ops.md §8.1), f32 or bf16 weights, per-query [ks, ke) ranges.
 */
export function fp4Mqa(s: number, h: number, d: number, skv: number, weights: "f32" | "bf16"): (p: Prng) => Built {
  return (p) => {
    const cast = (rows: number) =>
      perTokenCastToFp4(randnTensor(p, [rows, d], "f32"), { useUe8m0: true, granK: 32, usePackedUe8m0: true });
    const q = cast(s * h), kv = cast(skv);
    const ks: number[] = [], ke: number[] = [];
    for (let i = 0; i < s; i++) {
      const start = p.int(skv >> 1);
      ks.push(start);
      ke.push(Math.min(skv, start + 1 + p.int(skv)));
    }
    return {
      inputs: {
        q: q.q.reshape([s, h, d / 2]),
        q_sf: q.sf.reshape([s, h]),
        kv: kv.q,
        kv_sf: kv.sf.reshape([skv]),
        weights: randnTensor(p, [s, h], weights),
        cu_seq_len_k_start: i32(ks),
        cu_seq_len_k_end: i32(ke),
      },
      scalars: { clean_logits: true, logits_dtype: weights === "bf16" ? "bf16" : "f32" },
    };
  };
}
