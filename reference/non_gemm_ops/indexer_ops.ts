/**
 * The lightning indexer's operations as op specs (`OpSpec`): MQA logits, paged MQA logits (FP8 and the SM100
 * FP8 × FP4 forms) and the paged schedule metadata. Outputs are contiguous copies of the reference's tensors; the MQA
 * ops add `logits_defined` (u8, 1 where the contract specifies the value) so comparisons can skip the entries
 * DeepGEMM leaves as garbage.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { fp8Fp4MqaLogitsOp, fp8MqaLogitsOp } from "./indexer_ops.ts";
 * assert.equal(fp8MqaLogitsOp.defaultModel, "sm90");
 * assert.equal(fp8Fp4MqaLogitsOp.defaultModel, "auto");
 * ```
 * @module
 */
import type { ModelOptions, OpSpec } from "../gemm/op_spec.ts";
import type { Tensor } from "../tensor/tensor.ts";
import { fp8MqaLogits, type MqaLogitsOptions } from "../indexer/mqa_logits.ts";
import { fp8MqaLogitsParallel } from "../indexer/mqa_logits_parallel.ts";
import { fp8PagedMqaLogits } from "../indexer/paged_mqa_logits.ts";
import { getPagedMqaLogitsMetadata } from "../indexer/paged_mqa_logits_metadata.ts";
import { MQA_MODELS } from "../indexer/mqa_models.ts";
import { logitsDtype, need, scalar, sync } from "./_arguments.ts";

const MQA_INPUTS = ["q", "q_sf", "kv", "kv_sf", "weights", "cu_seq_len_k_start", "cu_seq_len_k_end"] as const;
const REDUCTION_DOC = "head-reduction order overriding the model's (sm90, sm90_spec81, sm100_fp32, sm100_bf16)";
// The fp8_fp4_* ops default to "auto": sm100 for FP4 Q/KV or bf16 weights (SM100-only inputs), else sm90.
const modelDefault = (name: string) => name.startsWith("fp8_fp4_") ? "auto" : "sm90";
const modelNames = (name: string) =>
  name.startsWith("fp8_fp4_") ? ["auto", ...Object.keys(MQA_MODELS)] : Object.keys(MQA_MODELS);

function mqaArgs(inputs: Record<string, Tensor>, scalars: Record<string, unknown>, model: ModelOptions, op: string) {
  const options: MqaLogitsOptions = {
    model: model.model,
    tensorCore: model.tensorCore,
    reduction: scalar<string | undefined>(scalars, "reduction", op, "string", undefined),
    cleanLogits: scalar(scalars, "clean_logits", op, "boolean", true),
    maxSeqlenK: scalar(scalars, "max_seqlen_k", op, "number", 0),
    logitsDtype: logitsDtype(scalars, op),
  };
  const t = {
    q: need(inputs, "q", op),
    q_sf: inputs.q_sf,
    kv: need(inputs, "kv", op),
    kv_sf: need(inputs, "kv_sf", op),
    weights: need(inputs, "weights", op),
    ks: need(inputs, "cu_seq_len_k_start", op),
    ke: need(inputs, "cu_seq_len_k_end", op),
  };
  return { t, options };
}

function mqaOp(name: string): OpSpec {
  return {
    name,
    family: "mqa_logits",
    inputs: MQA_INPUTS,
    outputs: ["logits", "logits_defined"],
    scalars: {
      clean_logits: "write −inf outside [ks, ke) (default true)",
      max_seqlen_k: "compressed output width (0 = not compressed)",
      logits_dtype: "f32 | bf16 (bf16 required with bf16 weights)",
      reduction: REDUCTION_DOC,
    },
    defaultModel: modelDefault(name),
    models: modelNames(name),
    run(inputs, scalars, model) {
      const { t, options } = mqaArgs(inputs, scalars, model, name);
      const r = fp8MqaLogits(t, options);
      return { logits: r.logits.contiguous(), logits_defined: r.defined };
    },
    async runAsync(inputs, scalars, model) {
      const { t, options } = mqaArgs(inputs, scalars, model, name);
      const r = await fp8MqaLogitsParallel(t, options, model.workers);
      return { logits: r.logits.contiguous(), logits_defined: r.defined };
    },
  };
}

function pagedOp(name: string): OpSpec {
  return sync({
    name,
    family: "paged_mqa_logits",
    inputs: ["q", "q_sf", "kv_cache", "weights", "context_lens", "block_table", "schedule_meta", "indices"],
    outputs: ["logits", "logits_defined"],
    scalars: {
      max_context_len: "output width",
      clean_logits: "must be false (DeepGEMM raises for true)",
      logits_dtype: "f32 | bf16 (bf16 required with bf16 weights)",
      reduction: REDUCTION_DOC,
    },
    defaultModel: modelDefault(name),
    models: modelNames(name),
    run(inputs, scalars, model) {
      const max = scalars.max_context_len;
      if (typeof max !== "number") throw new TypeError(`${name}: scalar "max_context_len" is required (a number)`);
      const r = fp8PagedMqaLogits({
        q: need(inputs, "q", name),
        q_sf: inputs.q_sf,
        kv_cache: need(inputs, "kv_cache", name),
        weights: need(inputs, "weights", name),
        context_lens: need(inputs, "context_lens", name),
        block_table: need(inputs, "block_table", name),
        schedule_meta: inputs.schedule_meta,
        indices: inputs.indices,
      }, {
        maxContextLen: max,
        cleanLogits: scalar(scalars, "clean_logits", name, "boolean", false),
        logitsDtype: logitsDtype(scalars, name),
        model: model.model,
        tensorCore: model.tensorCore,
        reduction: scalar<string | undefined>(scalars, "reduction", name, "string", undefined),
      });
      return { logits: r.logits.contiguous(), logits_defined: r.defined };
    },
  });
}

/** `fp8_mqa_logits(q, (kv, kv_sf), weights, cu_seq_len_k_start, cu_seq_len_k_end, ...)`. */
export const fp8MqaLogitsOp: OpSpec = mqaOp("fp8_mqa_logits");

/** `fp8_fp4_mqa_logits`: FP8 or packed FP4 Q/KV (SM100), model `auto` by default. */
export const fp8Fp4MqaLogitsOp: OpSpec = mqaOp("fp8_fp4_mqa_logits");

/** `fp8_paged_mqa_logits(q, kv_cache, weights, context_lens, block_table, schedule_meta, max_context_len, ...)`. */
export const fp8PagedMqaLogitsOp: OpSpec = pagedOp("fp8_paged_mqa_logits");

/** `fp8_fp4_paged_mqa_logits`: the paged form with FP4 Q/KV (SM100), model `auto` by default. */
export const fp8Fp4PagedMqaLogitsOp: OpSpec = pagedOp("fp8_fp4_paged_mqa_logits");

/** `get_paged_mqa_logits_metadata(context_lens, block_kv, num_sms)`: the SM90 schedule (the SM100 one is opaque). */
export const getPagedMqaLogitsMetadataOp: OpSpec = sync({
  name: "get_paged_mqa_logits_metadata",
  family: "paged_mqa_logits",
  inputs: ["context_lens"],
  outputs: ["schedule_meta"],
  scalars: { block_kv: "64 (SM90)", num_sms: "number of SMs" },
  defaultModel: "sm90",
  models: ["sm90"],
  run(inputs, scalars) {
    const op = "get_paged_mqa_logits_metadata";
    if (scalars.arch === "sm100") throw new RangeError(`${op}: the SM100 partition is not modelled (opaque)`);
    return {
      schedule_meta: getPagedMqaLogitsMetadata(
        need(inputs, "context_lens", op),
        scalar(scalars, "block_kv", op, "number", 64),
        scalar(scalars, "num_sms", op, "number", 132),
      ),
    };
  },
});
