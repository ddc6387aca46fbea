/**
 * `verify`'s generated suites: the edge cases of `deepgemm-ops.md` §14 (shapes and index rules that broke DeepGEMM
 * before), the DeepSeek-V3 shape table of §12 at reduced M, and the same table at its real M (`deepseek-v3-full`:
 * the 45 shapes `tests/gpu/bench.cpp` times, operands from `fast_inputs.ts`), both checked on a sample of output
 * tiles. Fixtures come from `fixtures/`. Every case is seeded: the same id gives the same bits on every machine.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { edgeSuite, deepseekV3Suite } from "./suites.ts";
 * assert.ok(edgeSuite().some((c) => c.id.includes("k1152")));
 * assert.ok(deepseekV3Suite(0.01).every((c) => c.sample === 0.01));
 * import { deepseekV3FullSuite } from "./suites.ts";
 * assert.equal(deepseekV3FullSuite(0.01).length, 45); // built lazily: nothing is allocated here
 * ```
 * @module
 */
import { Prng } from "../../reference/random/prng.ts";
import type { Built } from "../../reference/cases/case_spec.ts";
import {
  bf16Dense,
  fp8Dense,
  hcPrenorm,
  kGrouped,
  masked,
  mGroupedContiguous,
} from "../../reference/cases/gemm_builders.ts";
import { mqa, pagedMqa } from "../../reference/cases/mqa_builders.ts";
import type { VerifyCase } from "./runner.ts";
import { contiguousFast, denseFast, maskedFast } from "./fast_inputs.ts";

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
        seed,
      ),
    );
    const mid = `deepseek-v3/masked_g4_n${n}_k${k}`;
    const build = masked(4, 128, n, k, [20, 128, 64, 1]);
    cases.push(gen("deepseek-v3", mid, "m_grouped_fp8_gemm_nt_masked", "masked", build, sample, seed));
  }
  return cases;
}

/** DeepSeek-V3 dense M values at the real scale (decode batch 64 and 128, prefill 4096; `tests/gpu/bench.cpp`). */
export const DEEPSEEK_V3_DENSE_M: readonly number[] = [64, 128, 4096];
/** M-grouped contiguous `(G, m per group)` at the real scale. */
export const DEEPSEEK_V3_CONTIGUOUS_GM: readonly (readonly [number, number])[] = [[4, 8192], [8, 4096]];
/** Masked `(G, m)`: `masked_m[g] = m`, `expected_m = m`, Mmax = m rounded up to 128. */
export const DEEPSEEK_V3_MASKED_GM: readonly (readonly [number, number])[] = [[32, 192], [6, 1024], [32, 20], [6, 20]];

/**
 * The DeepSeek-V3 table at its real M: the 45 shapes `tests/gpu/bench.cpp` times (dense `fp8_gemm_nt` 1D2D, M ∈ {64,
 * 128, 4096} × 7 (N, K); m-grouped contiguous (G, m) ∈ {(4, 8192), (8, 4096)} × 4 (N, K); masked (G, m) ∈ {(32, 192),
 * (6, 1024), (32, 20), (6, 20)} × 4 (N, K)), each checked on a `sample` fraction of its 128×128 output tiles (every M
 * block, N block and group touched; 1: every element). Inputs are built per case when it runs and dropped after it
 * (up to 1.5 GB for one case); the whole table is ≈ 10 GB of operands. Not part of `--suite all`.
 */
export function deepseekV3FullSuite(sample: number, seed = 0): VerifyCase[] {
  const cases: VerifyCase[] = [];
  const S = "deepseek-v3-full";
  for (const m of DEEPSEEK_V3_DENSE_M) {
    for (const [n, k] of DEEPSEEK_V3_NK) {
      const id = `${S}/dense_m${m}_n${n}_k${k}`;
      cases.push(gen(S, id, "fp8_gemm_nt", "nt, real M", denseFast(m, n, k), sample, seed));
    }
  }
  for (const [g, m] of DEEPSEEK_V3_CONTIGUOUS_GM) {
    for (const [n, k] of DEEPSEEK_V3_GROUPED_NK) {
      const id = `${S}/contiguous_g${g}_m${m}_n${n}_k${k}`;
      const build = contiguousFast(Array(g).fill(m), n, k);
      cases.push(gen(S, id, "m_grouped_fp8_gemm_nt_contiguous", `contiguous, ${g} × ${m} rows`, build, sample, seed));
    }
  }
  for (const [g, m] of DEEPSEEK_V3_MASKED_GM) {
    for (const [n, k] of DEEPSEEK_V3_GROUPED_NK) {
      const id = `${S}/masked_g${g}_m${m}_n${n}_k${k}`;
      const build = maskedFast(g, Math.ceil(m / 128) * 128, n, k, Array(g).fill(m), m);
      cases.push(gen(S, id, "m_grouped_fp8_gemm_nt_masked", `masked, ${g} groups, masked_m ${m}`, build, sample, seed));
    }
  }
  return cases;
}
