/**
 * Typed wrappers of the ABI's non-GEMM families: `tf32_hc_prenorm_gemm` (HyperConnection pre-norm) and
 * `fp8_mqa_logits` (the lightning indexer). Same discipline as the GEMM wrappers: every check before the native call.
 *
 * @example
 * ```ts ignore
 * tf32HcPrenormGemm(lib, { a, b, d, sqrSum }); // d = A·Bᵀ (TF32 wgmma model), sqr_sum = Σ a² (SM90 lane order)
 * ```
 * @module
 */
import type { NativeLibrary } from "./library.ts";
import { modelCode, type ModelName } from "./models.ts";
import { expectShape, expectTensor, type TensorArg } from "./tensor_args.ts";
import { callStaged, expectTensorOf, int32, nativeOp } from "./_op_checks.ts";

/** Arguments of {@link tf32HcPrenormGemm}. */
export interface Tf32HcPrenormGemmArgs {
  /** bf16 `[M, K]`, K a multiple of 64. */
  a: TensorArg;
  /** f32 `[N, K]`. */
  b: TensorArg;
  /** f32 `[M, N]`, or `[S, M, N]` with splits (written). */
  d: TensorArg;
  /** f32 `[M]`, or `[S, M]` (written). */
  sqrSum: TensorArg;
  /** Split count S (default 1; > 1 needs the split dimension). */
  numSplits?: number;
  /** fp32 → TF32 rounding of B (default `"truncate"`). */
  tf32Rounding?: "truncate" | "rne";
  /** Model (default `tf32`). */
  model?: ModelName;
}

/** `tf32_hc_prenorm_gemm(a, b, d, sqr_sum, num_splits)`. */
export function tf32HcPrenormGemm(lib: NativeLibrary, args: Tf32HcPrenormGemmArgs): void {
  const f = nativeOp(lib, "go_tf32_hc_prenorm_gemm");
  const { a, b, d, sqrSum } = args;
  expectTensor("a", a, ["bf16"], 2);
  expectTensor("b", b, ["f32"], 2);
  const [M, K] = a.shape, N = b.shape[0];
  expectShape("b", b, [N, K]);
  if (K % 64 !== 0) throw new RangeError(`a: K = ${K} is not a multiple of 64`);
  const S = args.numSplits ?? 1;
  if (!Number.isSafeInteger(S) || S < 1) throw new RangeError(`numSplits must be a positive integer, got ${S}`);
  const split = d.shape.length === 3;
  expectTensor("d", d, ["f32"], split ? 3 : 2);
  expectTensor("sqr_sum", sqrSum, ["f32"], split ? 2 : 1);
  if (split) {
    expectShape("d", d, [S, M, N]);
    expectShape("sqr_sum", sqrSum, [S, M]);
  } else {
    if (S !== 1) throw new TypeError("numSplits > 1 needs d [S, M, N] and sqr_sum [S, M]");
    expectShape("d", d, [M, N]);
    expectShape("sqr_sum", sqrSum, [M]);
  }
  const rounding = args.tf32Rounding ?? "truncate";
  if (rounding !== "truncate" && rounding !== "rne") throw new RangeError(`Unknown TF32 rounding "${rounding}"`);
  const model = modelCode(args.model);
  callStaged(lib, "go_tf32_hc_prenorm_gemm", (s) =>
    f(
      s.descriptor("a", a),
      s.descriptor("b", b),
      s.descriptor("d", d, true),
      s.descriptor("sqr_sum", sqrSum, true),
      S,
      rounding === "rne" ? 1 : 0,
      model,
    ));
}

/** Arguments of {@link fp8MqaLogits}. */
export interface Fp8MqaLogitsArgs {
  /** e4m3 `[S, H, D]`. */
  q: TensorArg;
  /** e4m3 `[S_kv, D]`. */
  kv: TensorArg;
  /** f32 `[S_kv]`. */
  kvSf: TensorArg;
  /** f32 `[S, H]`. */
  weights: TensorArg;
  /** i32 `[S]` (`cu_seq_len_k_start`). */
  ks: TensorArg;
  /** i32 `[S]` (`cu_seq_len_k_end`). */
  ke: TensorArg;
  /** f32 `[S, S_kv]`, or `[S, maxSeqlenK]` compressed (written). */
  logits: TensorArg;
  /** −inf outside `[ks, ke)` (default true). */
  cleanLogits?: boolean;
  /** Compressed width (default 0 = not compressed). */
  maxSeqlenK?: number;
  /** Model (default `sm90_mqa`). */
  model?: ModelName;
}

/** `fp8_mqa_logits(q, (kv, kv_sf), weights, ks, ke, clean_logits, max_seqlen_k)`. */
export function fp8MqaLogits(lib: NativeLibrary, args: Fp8MqaLogitsArgs): void {
  const f = nativeOp(lib, "go_fp8_mqa_logits");
  const { q, kv, kvSf, weights, ks, ke, logits } = args;
  expectTensor("q", q, ["e4m3"], 3);
  expectTensor("kv", kv, ["e4m3"], 2);
  const [S, H, D] = q.shape, Skv = kv.shape[0];
  expectShape("kv", kv, [Skv, D]);
  expectTensorOf("kv_sf", kvSf, ["f32"], [Skv]);
  expectTensorOf("weights", weights, ["f32"], [S, H]);
  expectTensorOf("ks", ks, ["i32"], [S]);
  expectTensorOf("ke", ke, ["i32"], [S]);
  const clean = args.cleanLogits ?? true, msk = args.maxSeqlenK ?? 0;
  if (!Number.isSafeInteger(msk) || msk < 0) throw new RangeError(`maxSeqlenK must be >= 0, got ${msk}`);
  if (msk > 0 && clean) throw new RangeError("compressed logits (maxSeqlenK > 0) need cleanLogits = false");
  expectTensorOf("logits", logits, ["f32"], [S, msk > 0 ? msk : Skv]);
  const model = modelCode(args.model);
  callStaged(lib, "go_fp8_mqa_logits", (s) =>
    f(
      s.descriptor("q", q),
      s.descriptor("kv", kv),
      s.descriptor("kv_sf", kvSf),
      s.descriptor("weights", weights),
      s.descriptor("ks", ks),
      s.descriptor("ke", ke),
      s.descriptor("logits", logits, true),
      clean ? 1 : 0,
      msk,
      model,
    ));
}

/** Arguments of {@link fp8PagedMqaLogits}. */
export interface Fp8PagedMqaLogitsArgs {
  /** e4m3 `[B, next_n, H, D]`. */
  q: TensorArg;
  /** u8 `[num_blocks, block_kv, 1, D + 4]`: per page block_kv·D value bytes then block_kv fp32 scales. */
  kvCache: TensorArg;
  /** f32 `[B·next_n, H]`. */
  weights: TensorArg;
  /** i32 `[B, next_n]` (last entry of a row = its maximum). */
  contextLens: TensorArg;
  /** i32 `[B, max_blocks]`. */
  blockTable: TensorArg;
  /** f32 `[B·next_n, max_context_len]` (written where p < context_lens). */
  logits: TensorArg;
  /** Model (default `sm90_mqa`). */
  model?: ModelName;
}

/** `fp8_paged_mqa_logits(q, kv_cache, weights, context_lens, block_table, schedule_meta, max_context_len)`. */
export function fp8PagedMqaLogits(lib: NativeLibrary, args: Fp8PagedMqaLogitsArgs): void {
  const f = nativeOp(lib, "go_fp8_paged_mqa_logits");
  const { q, kvCache, weights, contextLens, blockTable, logits } = args;
  expectTensor("q", q, ["e4m3"], 4);
  const [B, nextN, H, D] = q.shape;
  expectTensor("kv_cache", kvCache, ["u8"], 4);
  const [numBlocks, blockKv] = kvCache.shape;
  expectShape("kv_cache", kvCache, [numBlocks, blockKv, 1, D + 4]);
  expectTensorOf("weights", weights, ["f32"], [B * nextN, H]);
  expectTensorOf("context_lens", contextLens, ["i32"], [B, nextN]);
  expectTensor("block_table", blockTable, ["i32"], 2);
  if (blockTable.shape[0] !== B) throw new TypeError(`block_table: ${blockTable.shape[0]} rows for B = ${B}`);
  expectTensor("logits", logits, ["f32"], 2);
  if (logits.shape[0] !== B * nextN) throw new TypeError(`logits: ${logits.shape[0]} rows for B·next_n = ${B * nextN}`);
  const model = modelCode(args.model);
  callStaged(lib, "go_fp8_paged_mqa_logits", (s) =>
    f(
      s.descriptor("q", q),
      s.descriptor("kv_cache", kvCache),
      s.descriptor("weights", weights),
      s.descriptor("context_lens", contextLens),
      s.descriptor("block_table", blockTable),
      s.descriptor("logits", logits, true),
      blockKv,
      model,
    ));
}

/** Arguments of {@link getPagedMqaLogitsMetadata}. */
export interface PagedMqaLogitsMetadataArgs {
  /** i32 `[B, next_n]`, entries ≥ 0. */
  contextLens: TensorArg;
  /** KV tokens per page (SM90: 64). */
  blockKv?: number;
  /** SMs the paged kernel runs on (≥ 1). */
  numSms: number;
  /** i32 `[num_sms + 1, 2]` (written). */
  scheduleMeta: TensorArg;
  /** Model (default `sm90_mqa`: the SM90 partition). */
  model?: ModelName;
}

/** `get_paged_mqa_logits_metadata(context_lens, block_kv, num_sms)` (deepgemm-ops.md §8.3): writes `scheduleMeta`. */
export function getPagedMqaLogitsMetadata(lib: NativeLibrary, args: PagedMqaLogitsMetadataArgs): void {
  const f = nativeOp(lib, "go_get_paged_mqa_logits_metadata");
  const { contextLens, scheduleMeta } = args;
  expectTensor("context_lens", contextLens, ["i32"], 2);
  if (contextLens.shape[1] < 1) throw new RangeError("context_lens: next_n must be ≥ 1");
  const numSms = int32("numSms", args.numSms, 1);
  if (numSms > 0x7ffffffe) throw new RangeError(`numSms ${numSms} is too large`);
  const blockKv = int32("blockKv", args.blockKv ?? 64, 1);
  expectTensorOf("schedule_meta", scheduleMeta, ["i32"], [numSms + 1, 2]);
  const model = modelCode(args.model);
  callStaged(
    lib,
    "go_get_paged_mqa_logits_metadata",
    (s) =>
      f(
        s.descriptor("context_lens", contextLens),
        blockKv,
        numSms,
        s.descriptor("schedule_meta", scheduleMeta, true),
        model,
      ),
  );
}
