/**
 * `fp8_mqa_logits` / `fp8_fp4_mqa_logits` (FP8 path) of DeepGEMM (`csrc/apis/attention.hpp`, `deepgemm-ops.md` §8.1):
 * the lightning indexer's logits `logit[i, j] = Σ_h w[i,h]·relu(s_h)·sfkv[j]` for `ks[i] ≤ j < min(ke[i], S_kv)`.
 *
 * Output layout, as DeepGEMM allocates it: a buffer `[align(S, 128/H), stride]` with `stride = align(S_kv + 256,
 * 1024/elem)` viewed as `[S, S_kv]` (non-contiguous), or, compressed (`maxSeqlenK > 0`), `stride =
 * align(align(maxSeqlenK, 256), 1024/elem)` viewed as `[S, maxSeqlenK]` with `out[i, r] = logit[i, ks[i] + r]`.
 * Entries the contract leaves unspecified (the kernel writes garbage or nothing there) are NaN (bf16: 0x7FFF) and
 * `defined` is 0 for them: in-range logits and, with `cleanLogits`, the −inf entries are the specified ones.
 *
 * SM100 paths (§8.1): packed FP4 Q/KV (`q` i8 `[S, H, D/2]` + `q_sf` i32 `[S, H]`, `kv` i8 `[S_kv, D/2]` + `kv_sf` i32
 * `[S_kv]`, D ∈ {64, 128}) score with the model's FP4 tensor-core profile and skip the sfkv multiply; bf16 weights
 * select the `sm100_bf16` reduction and require bf16 logits.
 * @module
 */
import { bf16Rne, bf16ToF32 } from "../fp32.ts";
import { decodeFp4Rows, fp4ScorerFor } from "./fp4_operands.ts";
import { Tensor } from "../tensor/tensor.ts";
import { decodeOperand } from "../tensor_core/decoded_operand.ts";
import { scorerFor } from "./_score.ts";
import { align, checkShape, checkTensor, intValues } from "./_checks.ts";
import { cleanRange, isCleaned } from "./clean_logits.ts";
import { reduceHeads } from "./head_reduction.ts";
import { defaultMqaModel, type MqaArch, type MqaModel, type MqaModelOptions, resolveMqaModel } from "./mqa_models.ts";
import type { HeadReductionOrder } from "./head_reduction.ts";
import { describeValue } from "../describe.ts";

/** Inputs of `fp8_mqa_logits` (names as DeepGEMM's Python arguments). */
export interface MqaLogitsInputs {
  /** Q, e4m3 `[S, H, D]`, contiguous (no Q scale); FP4 (SM100): packed i8 `[S, H, D/2]`. */
  q: Tensor;
  /** FP4 only: packed UE8M0 Q scales, i32 `[S, H]` (one word per head row, byte k = scale of elements 32k…). */
  q_sf?: Tensor;
  /** KV, e4m3 `[S_kv, D]`; FP4: packed i8 `[S_kv, D/2]`. */
  kv: Tensor;
  /** Per-token KV scales, f32 `[S_kv]`; FP4: packed UE8M0 i32 `[S_kv]`. */
  kv_sf: Tensor;
  /** Head weights, f32 `[S, H]`; bf16 on SM100 (then the logits must be bf16). */
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
const FP4_HEAD_DIMS = [64, 128];

/** Host checks of H and D per architecture (`attention.hpp`), with errors naming the rule. */
export function checkHeadsAndDim(fn: string, arch: MqaArch, H: number, D: number, fp4 = false): void {
  if (!HEADS[arch].includes(H)) {
    throw new RangeError(`${fn}: ${arch} supports H ∈ {${HEADS[arch].join(", ")}} heads, got H = ${H}`);
  }
  if (fp4 && !FP4_HEAD_DIMS.includes(D)) {
    throw new RangeError(`${fn}: FP4 head dim D must be 64 or 128, got D = ${D} (${D / 2} packed bytes)`);
  }
  if (!HEAD_DIMS.includes(D)) throw new RangeError(`${fn}: head dim D must be 32, 64 or 128, got D = ${D}`);
}

/**
 * Resolves the model of an MQA call from its input kinds and checks the SM100-only rules: FP4 Q/KV and bf16 weights
 * need an sm100 model; bf16 weights need bf16 logits and select the `sm100_bf16` reduction unless one is named;
 * `sm100_bf16` needs bf16 weights.
 * @returns the model (with the reduction in effect)
 */
export function resolveMqaCall(
  fn: string,
  options: MqaModelOptions,
  fp4: boolean,
  weightsDtype: unknown,
  logitsDtype: unknown,
): MqaModel {
  const bf16W = weightsDtype === "bf16";
  const model = resolveMqaModel(options, defaultMqaModel(fp4, bf16W));
  if (fp4 && (model.arch !== "sm100" || model.tensorCoreFp4 === undefined)) {
    throw new RangeError(
      `${fn}: FP4 Q/KV needs an SM100 model (DeepGEMM has no FP4 path on SM90); model "${model.name}" is ${model.arch}`,
    );
  }
  if (bf16W) {
    if (model.arch !== "sm100") {
      throw new TypeError(
        `${fn}: weights must be f32 on SM90 (bf16 weights need an SM100 model; model "${model.name}")`,
      );
    }
    if (logitsDtype !== "bf16") {
      throw new TypeError(
        `${fn}: bf16 weights need bf16 logits (logits_dtype = bf16), got ${describeValue(logitsDtype ?? "f32")}`,
      );
    }
    const reduction: HeadReductionOrder = options.reduction === undefined ? "sm100_bf16" : model.reduction;
    return { ...model, reduction };
  }
  if (model.reduction === "sm100_bf16") {
    throw new RangeError(
      `${fn}: the sm100_bf16 reduction takes bf16 weights, got ${describeValue(weightsDtype)} weights`,
    );
  }
  return model;
}

/** Weight values (f32 or bf16 tensor) as numbers. */
export function weightValues(t: Tensor): Float64Array | Float32Array {
  const c = t.contiguous();
  if (c.dtype === "f32") return (c.data as Float32Array).subarray(c.offset, c.offset + c.numel);
  const out = new Float64Array(c.numel), d = c.data as Uint16Array;
  for (let i = 0; i < c.numel; i++) out[i] = bf16ToF32(d[c.offset + i]);
  return out;
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
  const fp4 = inputs.q?.dtype === "i8";
  const fn = fp4 ? "fp8_fp4_mqa_logits" : "fp8_mqa_logits";
  if (inputs.q?.dtype === "u8") {
    throw new TypeError(`${fn}: packed FP4 q must be i8 (as per_token_cast_to_fp4 returns)`);
  }
  const weights = checkTensor(fn, "weights", inputs.weights, ["f32", "bf16"], 2);
  const model = resolveMqaCall(fn, options, fp4, weights.dtype, options.logitsDtype);
  const q = checkTensor(fn, "q", inputs.q, fp4 ? ["i8"] : ["e4m3"], 3);
  const [S, H] = q.shape, D = fp4 ? 2 * q.shape[2] : q.shape[2];
  checkHeadsAndDim(fn, model.arch, H, D, fp4);
  const kv = checkTensor(fn, "kv", inputs.kv, fp4 ? ["i8"] : ["e4m3"], 2);
  const Skv = kv.shape[0];
  if (kv.shape[1] !== q.shape[2]) {
    throw new TypeError(`${fn}: kv row of ${kv.shape[1]} ${fp4 ? "bytes" : "elements"} differs from q's ${q.shape[2]}`);
  }
  const kvSf = checkTensor(fn, "kv_sf", inputs.kv_sf, fp4 ? ["i32"] : ["f32"], 1);
  checkShape(fn, "kv_sf", kvSf, [Skv]);
  let qSf: Tensor | undefined;
  if (fp4) {
    if (inputs.q_sf === undefined) throw new TypeError(`${fn}: FP4 q needs q_sf (packed UE8M0 i32 [S, H])`);
    qSf = checkTensor(fn, "q_sf", inputs.q_sf, ["i32"], 2);
    checkShape(fn, "q_sf", qSf, [S, H]);
  } else if (inputs.q_sf !== undefined) {
    throw new TypeError(`${fn}: q_sf is only taken with FP4 q (FP8 Q has no scale)`);
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
  const qc = q.contiguous(), kc = kv.contiguous();
  const w = weightValues(weights);
  let scores: (i: number, j: number, s: Float64Array) => void;
  let sf: Float32Array | undefined;
  if (fp4) {
    const qs = qSf!.contiguous(), ks4 = kvSf.contiguous();
    const qd = decodeFp4Rows(
      qc.data as Int8Array,
      qc.offset + r0 * H * D / 2,
      (r1 - r0) * H,
      D,
      qs.data as Int32Array,
      qs.offset + r0 * H,
    );
    const kd = decodeFp4Rows(kc.data as Int8Array, kc.offset, Skv, D, ks4.data as Int32Array, ks4.offset);
    const score4 = fp4ScorerFor(model.tensorCoreFp4!);
    scores = (i, j, s) => {
      for (let h = 0; h < H; h++) s[h] = score4(qd, (i - r0) * H + h, kd, j, D);
    };
  } else {
    const qd = decodeOperand("e4m3", (qc.data as Uint8Array).subarray(qc.offset + r0 * H * D, qc.offset + r1 * H * D));
    const kvd = decodeOperand("e4m3", (kc.data as Uint8Array).subarray(kc.offset, kc.offset + Skv * D));
    const score = scorerFor(model.tensorCore);
    scores = (i, j, s) => {
      for (let h = 0; h < H; h++) s[h] = score(qd, ((i - r0) * H + h) * D, kvd, j * D, D);
    };
    const sc = kvSf.contiguous();
    sf = (sc.data as Float32Array).subarray(sc.offset, sc.offset + Skv);
  }
  const s = new Float64Array(H);
  for (let i = r0; i < r1; i++) {
    const lo = Math.min(ks[i], Skv), hi = Math.min(ke[i], Skv);
    if (maxSeqlenK > 0 && hi - lo > maxSeqlenK) {
      throw new RangeError(
        `${fn}: row ${i} has ke − ks = ${hi - lo} > max_seqlen_k = ${maxSeqlenK} (writes past the row)`,
      );
    }
    for (let j = lo; j < hi; j++) {
      scores(i, j, s);
      // FP4 (SM100): result = reduced, no sfkv multiply (§8.1).
      const v = reduceHeads(model.reduction, s, 0, w, i * H, H, sf === undefined ? undefined : sf[j]);
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
