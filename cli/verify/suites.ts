/**
 * `verify`'s generated suites: the edge cases of `deepgemm-ops.md` §14 (shapes and index rules that broke DeepGEMM
 * before) and the DeepSeek-V3 shape table of §12 at reduced M, checked on a sample of output tiles. Fixtures come
 * from `fixtures/`. Every case is seeded: the same id gives the same bits on every machine.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { edgeSuite, deepseekV3Suite } from "./suites.ts";
 * assert.ok(edgeSuite().some((c) => c.id.includes("k1152")));
 * assert.ok(deepseekV3Suite(0.01).every((c) => c.sample === 0.01));
 * ```
 * @module
 */
import { Prng } from "../../reference/random/prng.ts";
import { encodeArray } from "../../reference/formats/batch.ts";
import { perTokenCastToFp8 } from "../../reference/quant/fp8_casts.ts";
import { Tensor } from "../../reference/tensor/mod.ts";
import { toFloat32 } from "../../reference/tensor/values.ts";
import { concatRows, fp8Operand, i32, randnTensor, stack, zeroRows } from "./inputs.ts";
import type { VerifyCase } from "./runner.ts";

type Built = { inputs: Record<string, Tensor>; scalars: Record<string, unknown> };

function seedOf(id: string): number {
  let h = 0x811c9dc5; // FNV-1a of the id: a stable seed per case
  for (let i = 0; i < id.length; i++) h = Math.imul(h ^ id.charCodeAt(i), 0x01000193) >>> 0;
  return h;
}

function gen(
  suite: VerifyCase["suite"],
  id: string,
  op: string,
  layout: string,
  build: (p: Prng) => Built,
  sample?: number,
  seed = 0,
): VerifyCase {
  // seed 0 gives the recorded inputs; another seed draws new ones and says so in the id
  const full = seed === 0 ? id : `${id}#seed${seed}`;
  return { id: full, op, layout, suite, sample, build: () => build(new Prng(seedOf(full))) };
}

/** A dense FP8 GEMM `D = A·Bᵀ (+ C)` with the layout letters applied to the stored operands. */
function fp8Dense(m: number, n: number, k: number, letters = "nt", withC = false): (p: Prng) => Built {
  return (p) => {
    const A = fp8Operand(p, m, k, "token");
    const B = fp8Operand(p, n, k, withC ? "token" : "block");
    const at = letters[0] === "t", bn = letters[1] === "n";
    const inputs: Record<string, Tensor> = {
      // SM90 FP8 needs K-major operands: nn/tn/tt take transposed *views* of K-major storage, as DeepGEMM's
      // callers pass them (deepgemm-ops.md §5.1, §15).
      a: at ? A.q.transpose() : A.q,
      sfa: at ? A.sf.transpose() : A.sf,
      b: bn ? B.q.transpose() : B.q,
      sfb: bn ? B.sf.transpose() : B.sf,
    };
    const scalars: Record<string, unknown> = {};
    if (withC) {
      inputs.c = randnTensor(p, [m, n], "f32", 32);
      inputs.d = randnTensor(p, [m, n], "f32", 0);
      scalars.recipe = [1, 1, 128];
    }
    return { inputs, scalars };
  };
}

function bf16Dense(m: number, n: number, k: number, letters = "nt", withC = false): (p: Prng) => Built {
  return (p) => {
    const at = letters[0] === "t", bn = letters[1] === "n";
    const inputs: Record<string, Tensor> = {
      a: randnTensor(p, at ? [k, m] : [m, k], "bf16"),
      b: randnTensor(p, bn ? [k, n] : [n, k], "bf16"),
    };
    if (withC) {
      inputs.c = randnTensor(p, [m, n], "f32", 32);
      inputs.d = randnTensor(p, [m, n], "f32", 0);
    }
    return { inputs, scalars: {} };
  };
}

/** M-grouped contiguous: `sizes[g]` rows per group, each segment padded with −1 rows to a multiple of 128. */
function mGroupedContiguous(sizes: readonly number[], n: number, k: number, psum: boolean): (p: Prng) => Built {
  return (p) => {
    const layout: number[] = [], ends: number[] = [], padRows: number[] = [];
    let rows = 0;
    sizes.forEach((s, g) => {
      const start = rows;
      for (let r = 0; r < s; r++) layout.push(g);
      rows += s;
      ends.push(rows);
      const padded = Math.ceil(s / 128) * 128;
      for (let r = s; r < padded; r++) {
        layout.push(-1);
        padRows.push(start + r);
      }
      rows = start + padded;
    });
    const A = fp8Operand(p, rows, k, "token");
    zeroRows(A.q, padRows); // DeepGEMM's tests zero A's padding rows (deepgemm-ops.md §5.3)
    const Bs = sizes.map(() => fp8Operand(p, n, k, "block"));
    return {
      inputs: {
        a: A.q,
        sfa: A.sf,
        b: stack(Bs.map((b) => b.q)),
        sfb: stack(Bs.map((b) => b.sf)),
        grouped_layout: i32(psum ? ends : layout),
      },
      scalars: psum ? { use_psum_layout: true } : {},
    };
  };
}

function masked(G: number, mMax: number, n: number, k: number, maskedM: readonly number[]): (p: Prng) => Built {
  return (p) => {
    const As = Array.from({ length: G }, () => fp8Operand(p, mMax, k, "token"));
    const Bs = Array.from({ length: G }, () => fp8Operand(p, n, k, "block"));
    return {
      inputs: {
        a: stack(As.map((a) => a.q)),
        sfa: stack(As.map((a) => a.sf)),
        b: stack(Bs.map((b) => b.q)),
        sfb: stack(Bs.map((b) => b.sf)),
        masked_m: i32(maskedM),
      },
      scalars: { expected_m: Math.max(1, Math.round(maskedM.reduce((s, v) => s + v, 0) / G)) },
    };
  };
}

/** SM90 K-grouped (flat per-group K-major blocks, per-channel scales over K). */
function kGrouped(m: number, n: number, ks: readonly number[]): (p: Prng) => Built {
  return (p) => {
    const aBlocks: Tensor[] = [], bBlocks: Tensor[] = [], sfa: Tensor[] = [], sfb: Tensor[] = [];
    for (const kg of ks) {
      if (kg === 0) continue;
      const A = fp8Operand(p, kg, m, "channel"); // [k_g, M] quantized per 128 K-rows, then stored K-major
      const B = fp8Operand(p, kg, n, "channel");
      aBlocks.push(A.q.transpose().contiguous());
      bBlocks.push(B.q.transpose().contiguous());
      sfa.push(A.sf);
      sfb.push(B.sf);
    }
    const flat = (ts: Tensor[]) =>
      concatRows(ts.map((t) => t.reshape([t.numel, 1]))).reshape([ts.reduce((s, t) => s + t.numel, 0)]);
    const G = ks.length;
    return {
      inputs: {
        a: flat(aBlocks),
        b: flat(bBlocks),
        sfa: concatRows(sfa).transpose(),
        sfb: concatRows(sfb).transpose(),
        c: randnTensor(p, [G, m, n], "f32", 32),
        d: randnTensor(p, [G, m, n], "f32", 0),
        grouped_layout: i32(ks), // DeepGEMM passes the k_g as grouped_layout (device) and ks_cpu (host list)
      },
      scalars: { ks: [...ks], recipe: [1, 1, 128] },
    };
  };
}

/** `tf32_hc_prenorm_gemm`: A bf16 [m, k], B f32 [n, k] (deepgemm-ops.md §7), optionally split. */
function hcPrenorm(m: number, n: number, k: number, splits?: number): (p: Prng) => Built {
  return (p) => ({
    inputs: { a: randnTensor(p, [m, k], "bf16"), b: randnTensor(p, [n, k], "f32") },
    scalars: splits ? { num_splits: splits } : {},
  });
}

/** Q cast straight to E4M3 (PyTorch `.to(float8_e4m3fn)`), KV per token (`per_custom_dims_cast_to_fp8(kv, (0,))`). */
function mqaOperands(p: Prng, s: number, h: number, d: number, skv: number) {
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
function mqa(s: number, h: number, d: number, skv: number, compressed: boolean): (p: Prng) => Built {
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

/**
 * `fp8_paged_mqa_logits`: the fused KV-cache pages (per page block_kv·D value bytes, then block_kv fp32 scales),
 * a shuffled block table, context lengths varying within a request with the last entry the row maximum (§8.2).
 */
function pagedMqa(b: number, nextN: number, h: number, d: number, blockKv: number): (p: Prng) => Built {
  return (p) => {
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
    const table = Array.from({ length: b * maxBlocks }, (_, i) => order[i]);
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

/** deepgemm-ops.md §14: the shapes and index rules that broke kernels before. */
export function edgeSuite(seed = 0): VerifyCase[] {
  const e = (id: string, op: string, layout: string, b: (p: Prng) => Built) =>
    gen("edge", `edge/${id}`, op, layout, b, undefined, seed);
  return [
    e("fp8_nt_m1", "fp8_gemm_nt", "nt, m = 1 (§14.6)", fp8Dense(1, 256, 512)),
    e("fp8_nt_m7", "fp8_gemm_nt", "nt, m = 7 (§14.6)", fp8Dense(7, 384, 256)),
    e("fp8_nt_k1152", "fp8_gemm_nt", "nt, K = 1152: 9 scale blocks (§14.9)", fp8Dense(64, 256, 1152)),
    e("fp8_nt_ktail", "fp8_gemm_nt", "nt, K = 320: a 64-wide K tail", fp8Dense(32, 128, 320)),
    e("fp8_nt_mn_tails", "fp8_gemm_nt", "nt, M and N tails (200×136)", fp8Dense(200, 136, 640)),
    e("fp8_nt_k0", "fp8_gemm_nt", "nt, k = 0: D = 0", fp8Dense(16, 128, 0)),
    e("fp8_nn", "fp8_gemm_nn", "nn", fp8Dense(64, 128, 256, "nn")),
    e("fp8_tn", "fp8_gemm_tn", "tn", fp8Dense(64, 128, 256, "tn")),
    e("fp8_tt", "fp8_gemm_tt", "tt", fp8Dense(64, 128, 256, "tt")),
    e("fp8_nt_1d1d_c", "fp8_gemm_nt", "nt, fp32 out with C (1D1D)", fp8Dense(96, 256, 384, "nt", true)),
    e(
      "mgrouped_n768_g8",
      "m_grouped_fp8_gemm_nt_contiguous",
      "contiguous, N = 768, 8 groups, −1 tiles, an empty group (§14.2-3)",
      mGroupedContiguous([100, 0, 130, 7, 64, 1, 128, 90], 768, 256, false),
    ),
    e(
      "mgrouped_psum",
      "m_grouped_fp8_gemm_nt_contiguous",
      "contiguous psum layout with gaps",
      mGroupedContiguous([70, 200, 1], 256, 256, true),
    ),
    e(
      "masked_0_max",
      "m_grouped_fp8_gemm_nt_masked",
      "masked_m = 0 and = max (§14.5)",
      masked(3, 256, 384, 256, [0, 256, 77]),
    ),
    e(
      "kgrouped_empty",
      "k_grouped_fp8_gemm_nt_contiguous",
      "K-grouped with an empty group (§14.1-2)",
      kGrouped(128, 256, [128, 0, 384, 256]),
    ),
    e("skip_head_mid", "fp8_gemm_nt_skip_head_mid", "head_splits (128, 64, 128)", (p) => {
      const built = fp8Dense(64, 512, 256)(p);
      built.scalars.head_splits = [128, 64, 128];
      return built;
    }),
    e("bf16_nt", "bf16_gemm_nt", "nt", bf16Dense(40, 72, 192)),
    e("bf16_nn", "bf16_gemm_nn", "nn", bf16Dense(40, 72, 192, "nn")),
    e("bf16_tn_c", "bf16_gemm_tn", "tn, fp32 out with C", bf16Dense(40, 72, 192, "tn", true)),
    e("bf16_tt", "bf16_gemm_tt", "tt", bf16Dense(40, 72, 192, "tt")),
    e("hc_prenorm", "tf32_hc_prenorm_gemm", "m = 13, n = 24 (§7)", hcPrenorm(13, 24, 512)),
    e("hc_prenorm_split", "tf32_hc_prenorm_gemm", "split-K 3 over 7 K-blocks (§7)", hcPrenorm(37, 16, 448, 3)),
    e("mqa_h32_d64", "fp8_mqa_logits", "H = 32, D = 64, clean, a ks = ke row (§8.1)", mqa(6, 32, 64, 300, false)),
    e(
      "mqa_h64_d128_compressed",
      "fp8_mqa_logits",
      "H = 64, D = 128, compressed (max_seqlen_k)",
      mqa(4, 64, 128, 260, true),
    ),
    e(
      "paged_mqa_next2",
      "fp8_paged_mqa_logits",
      "next_n = 2, block_kv = 64, lengths varying in a request (§8.2)",
      pagedMqa(3, 2, 32, 64, 64),
    ),
  ];
}

/** DeepSeek-V3 dense `(N, K)` pairs (deepgemm-ops.md §12). */
export const DEEPSEEK_V3_NK: readonly (readonly [number, number])[] = [
  [2112, 7168],
  [576, 7168],
  [24576, 1536],
  [32768, 512],
  [7168, 16384],
  [4096, 7168],
  [7168, 2048],
];

/** DeepSeek-V3 grouped `(N, K)` pairs (deepgemm-ops.md §12). */
export const DEEPSEEK_V3_GROUPED_NK: readonly (readonly [number, number])[] = [
  [6144, 7168],
  [7168, 3072],
  [4096, 4096],
  [4096, 2048],
];

/**
 * The DeepSeek-V3 table at reduced M (dense M = 64; grouped: 4 groups of ~64 tokens; masked: 4 groups, max 128),
 * each checked on a `sample` fraction of its output tiles (every M block, N block and group touched).
 */
export function deepseekV3Suite(sample: number, seed = 0): VerifyCase[] {
  const cases: VerifyCase[] = [];
  for (const [n, k] of DEEPSEEK_V3_NK) {
    const id = `deepseek-v3/dense_m64_n${n}_k${k}`;
    cases.push(gen("deepseek-v3", id, "fp8_gemm_nt", "nt", fp8Dense(64, n, k), sample, seed));
  }
  for (const [n, k] of DEEPSEEK_V3_GROUPED_NK) {
    const id = `deepseek-v3/contiguous_g4_n${n}_k${k}`;
    cases.push(
      gen(
        "deepseek-v3",
        id,
        "m_grouped_fp8_gemm_nt_contiguous",
        "contiguous",
        mGroupedContiguous([60, 77, 50, 70], n, k, false),
        sample,
      ),
    );
    const mid = `deepseek-v3/masked_g4_n${n}_k${k}`;
    cases.push(
      gen("deepseek-v3", mid, "m_grouped_fp8_gemm_nt_masked", "masked", masked(4, 128, n, k, [20, 128, 64, 1]), sample),
    );
  }
  return cases;
}
