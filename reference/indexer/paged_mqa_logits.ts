/**
 * `fp8_paged_mqa_logits` / the FP8 path of `fp8_fp4_paged_mqa_logits` (`csrc/apis/attention.hpp`,
 * `impls/sm90_fp8_paged_mqa_logits.cuh`, `deepgemm-ops.md` §8.2): the indexer's logits against a paged, fused KV cache.
 *
 * Fused KV-cache page (uint8 `[num_blocks, block_kv, 1, D + 4]`): the first `block_kv·D` bytes are the e4m3 values,
 * token-major; then `block_kv` little-endian fp32 scales. Token p of request b lives in page
 * `block_table[b, p div block_kv]`, slot `p mod block_kv`. Row `b·next_n + j` uses `Q[b, j]`, `weights[b·next_n + j]`
 * and the same numerics as the non-paged kernel (same epilogue, so the same head-reduction order). Positions
 * `p < context_lens[b, j]` are specified; the kernel computes every page up to `ceil(context_lens[b, next_n−1] /
 * block_kv)` for all j, which is why the last entry of each row must be the row maximum (checked here as an error).
 * Checked against DeepGEMM's own metadata + paged kernels on an H200 (next_n = 2, H = 64, D = 128, shuffled pages,
 * lengths varying within requests): 1,043 of 1,043 specified logits bit for bit. [verified on H200]
 *
 * FP4 page format (SM100, `fp8_fp4_paged_mqa_logits`): u8 `[num_blocks, block_kv, 1, D/2 + 4]`; per page the first
 * `block_kv·D/2` bytes are packed E2M1 values (token-major), then `block_kv` packed UE8M0 int32 scale words; Q is
 * `(i8 [B, next_n, H, D/2], q_sf i32 [B, next_n, H])`. Scores as in the non-paged FP4 path (no sfkv multiply); bf16
 * weights select `sm100_bf16` and need bf16 logits. [from source, not checked on a GPU]
 *
 * Varlen (`indices` i32 `[B]`, SM100, next_n = 1; B = total tokens): a request is a maximal run of equal indices; every
 * token of a run reads the block-table row of the run's first token and is computed up to the run's last token's
 * context length; token t's specified positions are `p < context_lens[t]` (so the last token must be the run's
 * longest). From DeepGEMM `54e2261` `scheduler/sm100_paged_mqa_logits.cuh` (see the comment at the rule).
 * [from source, not checked on a GPU]
 * @module
 */
import { Tensor } from "../tensor/tensor.ts";
import { f32FromBits } from "../fp32.ts";
import { align, checkShape, checkTensor, intValues } from "./_checks.ts";
import { decodeOperand } from "../tensor_core/decoded_operand.ts";
import { scorerFor } from "./_score.ts";
import { reduceHeads } from "./head_reduction.ts";
import { allocLogits, checkHeadsAndDim, resolveMqaCall, weightValues } from "./mqa_logits.ts";
import type { MqaModelOptions } from "./mqa_models.ts";
import { decodeFp4Rows, type Fp4Rows, fp4ScorerFor } from "./fp4_operands.ts";

/** Inputs of `fp8_paged_mqa_logits`. */
export interface PagedMqaLogitsInputs {
  /** Q, e4m3 `[B, next_n, H, D]`; FP4 (SM100): packed i8 `[B, next_n, H, D/2]`. */
  q: Tensor;
  /** FP4 only: packed UE8M0 Q scales, i32 `[B, next_n, H]`. */
  q_sf?: Tensor;
  /** Fused KV cache, u8 `[num_blocks, block_kv, 1, D + 4]` (FP4: `D/2 + 4`; page stride a multiple of 4). */
  kv_cache: Tensor;
  /** Head weights, f32 `[B·next_n, H]` (bf16 on SM100: then the logits must be bf16). */
  weights: Tensor;
  /** i32 `[B, next_n]` (only 2-D is accepted, as in DeepGEMM). */
  context_lens: Tensor;
  /** i32 `[B, max_blocks]`. */
  block_table: Tensor;
  /** i32 `[num_sms + 1, 2]` from `get_paged_mqa_logits_metadata` (checked for shape; the values only partition work). */
  schedule_meta?: Tensor;
  /**
   * Varlen (SM100, next_n = 1): i32 `[B]` request ids of the tokens; a maximal run of equal ids is one request, read
   * through the block-table row of its first token (the other rows of the run are not read).
   */
  indices?: Tensor;
}

/** Scalars and model of the paged reference. */
export interface PagedMqaLogitsOptions extends MqaModelOptions {
  /** Output width. */
  maxContextLen: number;
  /** DeepGEMM raises for true; so does the oracle. */
  cleanLogits?: boolean;
  /** Logits dtype (default f32). */
  logitsDtype?: "f32" | "bf16";
}

/**
 * The reference of `fp8_paged_mqa_logits`.
 * @returns `logits` (view `[B·next_n, maxContextLen]` of a buffer with row stride
 *   `align(align(maxContextLen, 256), 1024/elem)`) and `defined` (1 for `p < context_lens[b, j]`)
 * @throws TypeError for wrong dtypes/shapes (including a KV-cache page width other than D + 4); RangeError for rules
 *   of the host (H, D, block_kv, next_n, clean_logits, varlen outside SM100/next_n = 1), for a context_lens row whose
 *   last entry is not its maximum, and for a varlen run whose last token is not its longest
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Tensor } from "../tensor/tensor.ts";
 * import { fp8PagedMqaLogits } from "./paged_mqa_logits.ts";
 * const H = 32, D = 32, blk = 64;
 * const q = Tensor.from("e4m3", [1, 1, H, D], new Uint8Array(H * D).fill(0x38)); // 1.0
 * const page = new Uint8Array(blk * (D + 4));
 * page.fill(0x38, 0, blk * D); // every value 1.0
 * new DataView(page.buffer).setFloat32(blk * D + 4 * 3, 0.5, true); // scale of slot 3
 * const kv_cache = Tensor.from("u8", [1, blk, 1, D + 4], page);
 * const weights = Tensor.from("f32", [1, H], new Float32Array(H).fill(1));
 * const context_lens = Tensor.from("i32", [1, 1], new Int32Array([4]));
 * const block_table = Tensor.from("i32", [1, 1], new Int32Array([0]));
 * const r = fp8PagedMqaLogits({ q, kv_cache, weights, context_lens, block_table }, { maxContextLen: 8 });
 * assert.equal(r.logits.at(0, 3), 32 * 32 * 0.5);
 * assert.equal(r.logits.at(0, 0), 0); // scale 0 in slots 0..2
 * assert.equal(r.defined.at(0, 5), 0);
 * ```
 */
export function fp8PagedMqaLogits(inputs: PagedMqaLogitsInputs, options: PagedMqaLogitsOptions): {
  logits: Tensor;
  defined: Tensor;
} {
  const fp4 = inputs.q?.dtype === "i8";
  const fn = fp4 ? "fp8_fp4_paged_mqa_logits" : "fp8_paged_mqa_logits";
  if (inputs.q?.dtype === "u8") {
    throw new TypeError(`${fn}: packed FP4 q must be i8 (as per_token_cast_to_fp4 returns)`);
  }
  const weights = checkTensor(fn, "weights", inputs.weights, ["f32", "bf16"], 2);
  const model = resolveMqaCall(fn, options, fp4, weights.dtype, options.logitsDtype);
  const q = checkTensor(fn, "q", inputs.q, fp4 ? ["i8"] : ["e4m3"], 4);
  const [B, nextN, H] = q.shape, D = fp4 ? 2 * q.shape[3] : q.shape[3];
  if (nextN < 1) throw new RangeError(`${fn}: next_n must be ≥ 1`);
  checkHeadsAndDim(fn, model.arch, H, D, fp4);
  let qSf: Tensor | undefined;
  if (fp4) {
    if (inputs.q_sf === undefined) throw new TypeError(`${fn}: FP4 q needs q_sf (packed UE8M0 i32 [B, next_n, H])`);
    qSf = checkTensor(fn, "q_sf", inputs.q_sf, ["i32"], 3);
    checkShape(fn, "q_sf", qSf, [B, nextN, H]);
  } else if (inputs.q_sf !== undefined) {
    throw new TypeError(`${fn}: q_sf is only taken with FP4 q (FP8 Q has no scale)`);
  }
  const valueBytes = fp4 ? D / 2 : D;
  if (model.arch === "sm90" && nextN !== 1 && nextN !== 2) {
    throw new RangeError(`${fn}: SM90 supports next_n ∈ {1, 2}, got ${nextN}`);
  }
  const cache = checkTensor(fn, "kv_cache", inputs.kv_cache, ["u8"], 4);
  const [numBlocks, blockKv, headsKv, width] = cache.shape;
  if (model.arch === "sm90" ? blockKv !== 64 : blockKv !== 32 && blockKv !== 64) {
    throw new RangeError(
      `${fn}: ${model.arch} supports block_kv ${model.arch === "sm90" ? "= 64" : "∈ {32, 64}"}, got ${blockKv}`,
    );
  }
  if (headsKv !== 1) throw new TypeError(`${fn}: kv_cache must have 1 KV head, got ${headsKv}`);
  if (width !== valueBytes + 4) {
    throw new TypeError(
      `${fn}: kv_cache page width must be ${fp4 ? "D/2" : "D"} + 4 = ${valueBytes + 4} bytes per token (${
        fp4 ? "packed FP4 values + packed UE8M0 int32 scale" : "FP8 values + fp32 scale"
      }), got ${width}`,
    );
  }
  if (cache.strides[1] !== width || cache.strides[3] !== 1) {
    throw new TypeError(`${fn}: kv_cache must have stride(1) = ${width} and stride(3) = 1`);
  }
  const pageStride = cache.strides[0];
  if (pageStride % 4 !== 0) {
    throw new TypeError(`${fn}: kv_cache page stride ${pageStride} must be a multiple of 4 bytes`);
  }
  checkShape(fn, "weights", weights, [B * nextN, H]);
  const ctxT = checkTensor(fn, "context_lens", inputs.context_lens, ["i32"], 2);
  checkShape(fn, "context_lens", ctxT, [B, nextN]);
  const btT = checkTensor(fn, "block_table", inputs.block_table, ["i32"], 2);
  if (btT.shape[0] !== B) throw new TypeError(`${fn}: block_table must have ${B} rows, got ${btT.shape[0]}`);
  if (inputs.schedule_meta !== undefined) {
    const m = checkTensor(fn, "schedule_meta", inputs.schedule_meta, ["i32"], 2);
    if (m.shape[1] !== 2) throw new TypeError(`${fn}: schedule_meta must be [num_sms + 1, 2]`);
  }
  if (options.cleanLogits) {
    throw new RangeError(
      `${fn}: clean_logits = true is rejected by DeepGEMM (its host asserts "not 2-D context lens", and only 2-D is accepted)`,
    );
  }
  const maxLen = options.maxContextLen;
  if (!Number.isSafeInteger(maxLen) || maxLen < 0) throw new RangeError(`${fn}: max_context_len must be ≥ 0`);
  const ctx = intValues(ctxT), bt = intValues(btT), maxBlocks = btT.shape[1];
  let indices: number[] | undefined;
  if (inputs.indices !== undefined) {
    if (model.arch !== "sm100" || nextN !== 1) throw new RangeError(`${fn}: varlen indices need SM100 and next_n = 1`);
    const it = checkTensor(fn, "indices", inputs.indices, ["i32"], 1);
    checkShape(fn, "indices", it, [B]);
    indices = intValues(it);
  }
  for (let b = 0; b < B; b++) {
    const row = ctx.slice(b * nextN, b * nextN + nextN);
    const last = row[nextN - 1];
    if (row.some((x) => x > last)) {
      throw new RangeError(
        `${fn}: context_lens[${b}] = [${
          row.join(", ")
        }]: the last entry must be the row maximum (the kernel computes pages up to the last entry only)`,
      );
    }
    if (row.some((x) => x < 0)) throw new RangeError(`${fn}: context_lens must be ≥ 0`);
    if (last > maxLen) throw new RangeError(`${fn}: context_lens[${b}] = ${last} exceeds max_context_len = ${maxLen}`);
    if (Math.ceil(last / blockKv) > maxBlocks) {
      throw new RangeError(`${fn}: block_table row ${b} is too short for ${last} tokens`);
    }
  }

  // Block-table row of each request row. Varlen (DeepGEMM `54e2261`, `scheduler/sm100_paged_mqa_logits.cuh`, read
  // not copied): a request is a maximal run of equal `indices` (`RequestInfo::from_q_token`, lines 30–37; the metadata
  // kernel splits the tokens into the same runs, lines 91–105); every token of the run reads the block-table row of the
  // run's FIRST token (`get_block_table_row` returns `q_token_start`, lines 58–64) and all of them compute the splits
  // `0 … ceil(context_lens[last] / 256) − 1` of the run's LAST token (line 37, 46); pages at or past
  // `ceil(context_lens[last] / block_kv)` read physical block 0 (lines 306–311). The logits row is the token's own
  // (`get_logits_row`, line 313). DeepGEMM's test (`tests/test_attention.py`, lines 350–421) repeats each sequence's
  // block-table row and raises the lengths by one per token, so the last token is the run's longest, and it checks
  // `p < context_lens[t]` per token. Hence the precondition below, as for the last entry of a next_n row.
  // (Spec §8.2 says the same. DeepGEMM `88965b0` instead paired tokens two at a time, `scheduler/paged_mqa_logits.cuh`
  // lines 31–38: that rule is superseded and no longer modelled.)
  const btRowOf = Array.from({ length: B }, (_, b) => b);
  if (indices !== undefined) {
    for (let first = 0; first < B;) {
      let last = first;
      while (last + 1 < B && indices[last + 1] === indices[first]) last++;
      for (let t = first; t <= last; t++) {
        if (ctx[t] > ctx[last]) {
          throw new RangeError(
            `${fn}: varlen run of indices = ${indices[first]} (tokens ${first}…${last}): context_lens[${t}] = ${
              ctx[t]
            } exceeds the run's last token (${last}: ${
              ctx[last]
            }); the kernel computes every token of the run up to the last token's length only`,
          );
        }
        btRowOf[t] = first;
      }
      first = last + 1;
    }
  }

  const dtype = options.logitsDtype ?? "f32";
  const elem = dtype === "f32" ? 4 : 2;
  const stride = align(align(maxLen, 256), 1024 / elem);
  const out = allocLogits(dtype, B * nextN, B * nextN, maxLen, stride);
  const defined = Tensor.zeros("u8", [B * nextN, maxLen]);
  const def = defined.data as Uint8Array;
  const qc = q.contiguous();
  const w = weightValues(weights);
  const bytes = cache.data as Uint8Array, base = cache.offset;
  const checkBlock = (blk: number) => {
    if (!(blk >= 0 && blk < numBlocks)) {
      throw new RangeError(`${fn}: block_table entry ${blk} outside [0, ${numBlocks})`);
    }
  };
  const word = (o: number) => bytes[o] | bytes[o + 1] << 8 | bytes[o + 2] << 16 | bytes[o + 3] << 24;
  // scoreSlot(row, blk, slot, s) fills the H scores of query row `row` against token `slot` of page `blk`;
  // sfOf(blk, slot) is the fp32 KV scale (FP8) or undefined (FP4: no sfkv multiply, §8.1).
  let scoreSlot: (row: number, blk: number, slot: number, s: Float64Array) => void;
  let sfOf: (blk: number, slot: number) => number | undefined;
  if (fp4) {
    const qs = qSf!.contiguous();
    const qd = decodeFp4Rows(qc.data as Int8Array, qc.offset, B * nextN * H, D, qs.data as Int32Array, qs.offset);
    const score4 = fp4ScorerFor(model.tensorCoreFp4!);
    const pages = new Map<number, Fp4Rows>();
    scoreSlot = (row, blk, slot, s) => {
      checkBlock(blk);
      let kd = pages.get(blk);
      if (!kd) {
        const o = base + blk * pageStride, words = new Int32Array(blockKv);
        for (let t = 0; t < blockKv; t++) words[t] = word(o + blockKv * valueBytes + 4 * t);
        kd = decodeFp4Rows(bytes, o, blockKv, D, words, 0);
        pages.set(blk, kd);
      }
      for (let h = 0; h < H; h++) s[h] = score4(qd, row * H + h, kd, slot, D);
    };
    sfOf = () => undefined;
  } else {
    const qd = decodeOperand("e4m3", (qc.data as Uint8Array).subarray(qc.offset, qc.offset + qc.numel));
    const score = scorerFor(model.tensorCore);
    const pages = new Map<number, ReturnType<typeof decodeOperand>>();
    scoreSlot = (row, blk, slot, s) => {
      checkBlock(blk);
      let kd = pages.get(blk);
      if (!kd) {
        const o = base + blk * pageStride;
        kd = decodeOperand("e4m3", bytes.subarray(o, o + blockKv * D));
        pages.set(blk, kd);
      }
      for (let h = 0; h < H; h++) s[h] = score(qd, (row * H + h) * D, kd, slot * D, D);
    };
    sfOf = (blk, slot) => f32FromBits(word(base + blk * pageStride + blockKv * D + 4 * slot) >>> 0);
  }
  const s = new Float64Array(H);
  for (let b = 0; b < B; b++) {
    const btRow = btRowOf[b];
    for (let j = 0; j < nextN; j++) {
      const row = b * nextN + j;
      for (let p = 0; p < ctx[row]; p++) {
        const blk = bt[btRow * maxBlocks + Math.floor(p / blockKv)], slot = p % blockKv;
        scoreSlot(row, blk, slot, s);
        out.store(row, p, reduceHeads(model.reduction, s, 0, w, row * H, H, sfOf(blk, slot)));
        def[row * maxLen + p] = 1;
      }
    }
  }
  return { logits: out.view, defined };
}
