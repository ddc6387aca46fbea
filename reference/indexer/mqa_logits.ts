/**
 * `fp8_mqa_logits` / `fp8_fp4_mqa_logits` (FP8 path) of DeepGEMM (`csrc/apis/attention.hpp`, `deepgemm-ops.md` §8.1):
 * the lightning indexer's logits `logit[i, j] = Σ_h w[i,h]·relu(s_h)·sfkv[j]` for `ks[i] ≤ j < min(ke[i], S_kv)`.
 *
 * Output layout, as DeepGEMM allocates it: a buffer `[align(S, 128/H), stride]` with `stride = align(S_kv + 256,
 * 1024/elem)` viewed as `[S, S_kv]` (non-contiguous), or, compressed (`maxSeqlenK > 0`), `stride =
 * align(align(maxSeqlenK, 256), 1024/elem)` viewed as `[S, maxSeqlenK]` with `out[i, r] = logit[i, ks[i] + r]`.
 * Entries the contract leaves unspecified (the kernel writes garbage or nothing there) are NaN (bf16: 0x7FFF) and
 * `defined` is 0 for them: in-range logits and, with `cleanLogits`, the −inf entries are the specified ones.
 * @module
 */
import { bf16Rne } from "../fp32.ts";
import { Tensor } from "../tensor/tensor.ts";
import { decodeOperand, scorerFor } from "./_score.ts";
import { align, checkShape, checkTensor, intValues } from "./_checks.ts";
import { cleanRange, isCleaned } from "./clean_logits.ts";
import { reduceHeads } from "./head_reduction.ts";
import { type MqaArch, type MqaModelOptions, resolveMqaModel } from "./mqa_models.ts";

/** Inputs of `fp8_mqa_logits` (names as DeepGEMM's Python arguments). */
export interface MqaLogitsInputs {
  /** Q, e4m3 `[S, H, D]`, contiguous (no Q scale). */
  q: Tensor;
  /** KV, e4m3 `[S_kv, D]`. */
  kv: Tensor;
  /** Per-token KV scales, f32 `[S_kv]`. */
  kv_sf: Tensor;
  /** Head weights, f32 `[S, H]`. */
  weights: Tensor;
  /** `cu_seq_len_k_start`, i32 `[S]`. */
  ks: Tensor;
  /** `cu_seq_len_k_end`, i32 `[S]`. */
  ke: Tensor;
}

/** Scalars and model of `fp8_mqa_logits`. */
export interface MqaLogitsOptions extends MqaModelOptions {
  /** Write −inf outside `[ks, ke)` (default true, DeepGEMM's default). */
  cleanLogits?: boolean;
  /** Compressed output width (0 = not compressed; needs `cleanLogits = false`). */
  maxSeqlenK?: number;
  /** Logits dtype (default f32; the cast is RNE). */
  logitsDtype?: "f32" | "bf16";
  /** Evaluate only query rows `[rows[0], rows[1])` (others stay unspecified); for sampling and workers. */
  rows?: [number, number];
}

/** Result of an MQA-logits reference. */
export interface MqaLogitsResult {
  /** The logits view (non-contiguous, over the padded buffer). */
  logits: Tensor;
  /** u8, same logical shape, contiguous: 1 where the value is specified by the contract. */
  defined: Tensor;
}

const HEADS: Record<MqaArch, readonly number[]> = { sm90: [32, 64], sm100: [8, 16, 32, 64] };
const HEAD_DIMS = [32, 64, 128];

/** Host checks of H and D per architecture (`attention.hpp`), with errors naming the rule. */
export function checkHeadsAndDim(fn: string, arch: MqaArch, H: number, D: number): void {
  if (!HEADS[arch].includes(H)) {
    throw new RangeError(`${fn}: ${arch} supports H ∈ {${HEADS[arch].join(", ")}} heads, got H = ${H}`);
  }
  if (!HEAD_DIMS.includes(D)) throw new RangeError(`${fn}: head dim D must be 32, 64 or 128, got D = ${D}`);
}

/** Allocates DeepGEMM's padded logits buffer and returns the view, the storage and the row stride. */
export function allocLogits(
  dtype: "f32" | "bf16",
  rows: number,
  bufferRows: number,
  width: number,
  stride: number,
): { view: Tensor; store: (row: number, col: number, v: number) => void; negInf: number } {
  const base = Tensor.zeros(dtype, [bufferRows, stride]);
  if (dtype === "f32") (base.data as Float32Array).fill(NaN);
  else (base.data as Uint16Array).fill(0x7fff);
  const view = base.narrow(0, 0, rows).narrow(1, 0, width);
  const data = base.data;
  const store = dtype === "f32"
    ? (r: number, c: number, v: number) => {
      (data as Float32Array)[r * stride + c] = v;
    }
    : (r: number, c: number, v: number) => {
      (data as Uint16Array)[r * stride + c] = bf16Rne(v);
    };
  return { view, store, negInf: -Infinity };
}

/**
 * The reference of `fp8_mqa_logits` (and the FP8 path of `fp8_fp4_mqa_logits`).
 * @param inputs tensors named as DeepGEMM's arguments
 * @param options scalars (`cleanLogits`, `maxSeqlenK`, `logitsDtype`) and model (`model`, `tensorCore`, `reduction`)
 * @returns the logits view and the mask of specified entries
 * @throws TypeError for wrong dtypes/shapes; RangeError for H/D the architecture rejects or bad ranges
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Tensor } from "../tensor/tensor.ts";
 * import { fp8MqaLogits } from "./mqa_logits.ts";
 * const S = 1, H = 32, D = 32, Skv = 3;
 * const q = Tensor.from("e4m3", [S, H, D], new Uint8Array(S * H * D).fill(0x38)); // 1.0
 * const kv = Tensor.from("e4m3", [Skv, D], new Uint8Array(Skv * D).fill(0x30)); // 0.5
 * const kv_sf = Tensor.from("f32", [Skv], new Float32Array([1, 2, 4]));
 * const weights = Tensor.from("f32", [S, H], new Float32Array(H).fill(0.25));
 * const ks = Tensor.from("i32", [S], new Int32Array([1])), ke = Tensor.from("i32", [S], new Int32Array([3]));
 * const { logits } = fp8MqaLogits({ q, kv, kv_sf, weights, ks, ke });
 * assert.equal(logits.at(0, 0), -Infinity); // cleaned
 * assert.equal(logits.at(0, 1), 32 * 0.25 * 16 * 2); // Σ_h w·relu(s)·sf with s = 32·0.5 = 16
 * assert.equal(logits.at(0, 2), 32 * 0.25 * 16 * 4);
 * ```
 */
export function fp8MqaLogits(inputs: MqaLogitsInputs, options: MqaLogitsOptions = {}): MqaLogitsResult {
  const fn = "fp8_mqa_logits";
  const model = resolveMqaModel(options);
  if (inputs.q?.dtype === "i8" || inputs.q?.dtype === "u8") {
    throw new RangeError(`${fn}: FP4 Q/KV (the SM100 path of fp8_fp4_*mqa_logits) is not modelled; pass e4m3 Q and KV`);
  }
  const q = checkTensor(fn, "q", inputs.q, ["e4m3"], 3);
  const [S, H, D] = q.shape;
  checkHeadsAndDim(fn, model.arch, H, D);
  const kv = checkTensor(fn, "kv", inputs.kv, ["e4m3"], 2);
  const Skv = kv.shape[0];
  if (kv.shape[1] !== D) throw new TypeError(`${fn}: kv head dim ${kv.shape[1]} differs from q's D = ${D}`);
  const kvSf = checkTensor(fn, "kv_sf", inputs.kv_sf, ["f32"], 1);
  checkShape(fn, "kv_sf", kvSf, [Skv]);
  const weights = checkTensor(fn, "weights", inputs.weights, ["f32", "bf16"], 2);
  if (weights.dtype !== "f32") {
    throw new TypeError(
      `${fn}: weights must be f32 (${
        model.arch === "sm90" ? "SM90 takes only fp32 weights" : "the SM100 bf16 reduction is not modelled"
      })`,
    );
  }
  checkShape(fn, "weights", weights, [S, H]);
  const ksT = checkTensor(fn, "ks", inputs.ks, ["i32"], 1), keT = checkTensor(fn, "ke", inputs.ke, ["i32"], 1);
  checkShape(fn, "ks", ksT, [S]);
  checkShape(fn, "ke", keT, [S]);
  const ks = intValues(ksT), ke = intValues(keT);
  if (ks.some((x) => x < 0) || ke.some((x) => x < 0)) throw new RangeError(`${fn}: ks and ke must be ≥ 0`);
  const clean = options.cleanLogits ?? true;
  const maxSeqlenK = options.maxSeqlenK ?? 0;
  if (!Number.isSafeInteger(maxSeqlenK) || maxSeqlenK < 0) throw new RangeError(`${fn}: max_seqlen_k must be ≥ 0`);
  if (maxSeqlenK > 0 && clean) {
    throw new RangeError(`${fn}: compressed logits (max_seqlen_k > 0) need clean_logits = false`);
  }
  const dtype = options.logitsDtype ?? "f32";
  if (dtype !== "f32" && dtype !== "bf16") throw new RangeError(`${fn}: logits dtype must be f32 or bf16`);
  const [r0, r1] = options.rows ?? [0, S];
  if (!(Number.isSafeInteger(r0) && Number.isSafeInteger(r1) && 0 <= r0 && r0 <= r1 && r1 <= S)) {
    throw new RangeError(`${fn}: rows [${r0}, ${r1}) outside [0, ${S}]`);
  }

  const elem = dtype === "f32" ? 4 : 2, blockQ = 128 / H;
  const width = maxSeqlenK > 0 ? maxSeqlenK : Skv;
  const stride = maxSeqlenK > 0 ? align(align(maxSeqlenK, 256), 1024 / elem) : align(Skv + 256, 1024 / elem);
  const out = allocLogits(dtype, S, align(S, blockQ), width, stride);
  const defined = Tensor.zeros("u8", [S, width]);
  const def = defined.data as Uint8Array;

  // Only the evaluated query rows are decoded (workers and samples touch a slice of Q).
  const qc = q.contiguous();
  const qd = decodeOperand("e4m3", (qc.data as Uint8Array).subarray(qc.offset + r0 * H * D, qc.offset + r1 * H * D));
  const kvd = decodeOperand("e4m3", kv.contiguous().data as Uint8Array);
  const sf = kvSf.contiguous().data as Float32Array, w = weights.contiguous().data as Float32Array;
  const score = scorerFor(model.tensorCore);
  const s = new Float64Array(H);
  for (let i = r0; i < r1; i++) {
    const lo = Math.min(ks[i], Skv), hi = Math.min(ke[i], Skv);
    if (maxSeqlenK > 0 && hi - lo > maxSeqlenK) {
      throw new RangeError(
        `${fn}: row ${i} has ke − ks = ${hi - lo} > max_seqlen_k = ${maxSeqlenK} (writes past the row)`,
      );
    }
    for (let j = lo; j < hi; j++) {
      for (let h = 0; h < H; h++) s[h] = score(qd, ((i - r0) * H + h) * D, kvd, j * D, D);
      const v = reduceHeads(model.reduction, s, 0, w, i * H, H, sf[j]);
      const c = maxSeqlenK > 0 ? j - ks[i] : j;
      out.store(i, c, v);
      def[i * width + c] = 1;
    }
    if (clean) {
      const [cks, cke] = cleanRange(i, 1, ks, ke);
      for (let j = 0; j < Skv; j++) {
        if (isCleaned(j, cks, cke)) {
          out.store(i, j, -Infinity);
          def[i * width + j] = 1;
        }
      }
    }
  }
  return { logits: out.view, defined };
}
