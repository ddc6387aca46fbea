/**
 * The references of DeepGEMM's non-GEMM operations in the registry shape of `reference/gemm` ({@link OpSpec}): the
 * lightning indexer (MQA logits, paged MQA logits, paged metadata), the HyperConnection pre-norm GEMM and Mega MoE.
 * The CLI (`oracle run <op>`) and `verify` can run them by DeepGEMM function name.
 *
 * Outputs are contiguous copies of the reference's tensors; MQA ops add `logits_defined` (u8, 1 where the contract
 * specifies the value) so comparisons can skip the entries DeepGEMM leaves as garbage.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { EXTRA_OPS } from "./registry.ts";
 * assert.equal(EXTRA_OPS.fp8_mqa_logits.defaultModel, "sm90");
 * assert.ok(EXTRA_OPS.tf32_hc_prenorm_gemm.outputs.includes("sqr_sum"));
 * ```
 * @module
 */
import type { ModelOptions, OpSpec } from "../gemm/op_spec.ts";
import { Tensor } from "../tensor/tensor.ts";
import { fp8MqaLogits, type MqaLogitsOptions } from "../indexer/mqa_logits.ts";
import { fp8MqaLogitsParallel } from "../indexer/mqa_logits_parallel.ts";
import { fp8PagedMqaLogits } from "../indexer/paged_mqa_logits.ts";
import { getPagedMqaLogitsMetadata } from "../indexer/paged_mqa_logits_metadata.ts";
import { MQA_MODELS } from "../indexer/mqa_models.ts";
import { tf32HcPrenormGemm } from "../hyperconnection/tf32_hc_prenorm_gemm.ts";
import type { Tf32Rounding } from "../hyperconnection/tf32_rounding.ts";
import { megaMoe } from "../mega_moe/mega_moe.ts";
import type { SiluSource } from "../mega_moe/silu.ts";
import { describeValue } from "../describe.ts";

function need(inputs: Record<string, Tensor>, name: string, op: string): Tensor {
  const t = inputs[name];
  if (!(t instanceof Tensor)) throw new TypeError(`${op}: missing tensor argument "${name}"`);
  return t;
}

function scalar<T>(scalars: Record<string, unknown>, name: string, op: string, type: string, dflt: T): T {
  const v = scalars[name] ?? dflt;
  if (v !== undefined && typeof v !== type) throw new TypeError(`${op}: scalar "${name}" must be a ${type}`);
  return v as T;
}

function logitsDtype(scalars: Record<string, unknown>, op: string): "f32" | "bf16" {
  const v = scalars.logits_dtype ?? "f32";
  if (v !== "f32" && v !== "bf16") {
    throw new RangeError(`${op}: logits_dtype must be "f32" or "bf16", got ${describeValue(v)}`);
  }
  return v;
}

function sync(spec: Omit<OpSpec, "runAsync">): OpSpec {
  return { ...spec, runAsync: (i, s, m) => Promise.resolve(spec.run(i, s, m)) };
}

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

function megaMoeOp(name: string): OpSpec {
  return sync({
    name,
    family: "mega_moe",
    inputs: [
      "x",
      "x_sf",
      "topk_idx",
      "topk_weights",
      "l1",
      "l1_sf",
      "l2",
      "l2_sf",
      "cumulative_local_expert_recv_stats",
    ],
    outputs: ["y", "cumulative_local_expert_recv_stats"],
    scalars: {
      activation_clamp: "SwiGLU clamp (converted to bf16), absent = none",
      fast_math: "SiLU with __expf + rcp.approx (default true) or expf + IEEE division",
      silu_source: "correctly_rounded (default) | h200_measured",
    },
    defaultModel: name === "bf16_mega_moe" ? "tcgen05" : "tcgen05_mxf8f6f4",
    models: name === "bf16_mega_moe" ? ["tcgen05", "exact"] : ["tcgen05_mxf8f6f4", "exact"],
    run(inputs, scalars, model) {
      const x = need(inputs, "x", name);
      if ((name === "bf16_mega_moe") !== (x.dtype === "bf16")) {
        throw new TypeError(`${name}: x must be ${name === "bf16_mega_moe" ? "bf16" : "e4m3"}, got ${x.dtype}`);
      }
      const r = megaMoe({
        x,
        x_sf: inputs.x_sf,
        topk_idx: need(inputs, "topk_idx", name),
        topk_weights: need(inputs, "topk_weights", name),
        l1: need(inputs, "l1", name),
        l1_sf: inputs.l1_sf,
        l2: need(inputs, "l2", name),
        l2_sf: inputs.l2_sf,
        cumulative_local_expert_recv_stats: inputs.cumulative_local_expert_recv_stats,
      }, {
        clamp: scalar<number | undefined>(scalars, "activation_clamp", name, "number", undefined),
        fastMath: scalar(scalars, "fast_math", name, "boolean", true),
        siluSource: scalar<SiluSource>(scalars, "silu_source", name, "string", "correctly_rounded"),
        tensorCore: model.tensorCore ?? model.model,
      });
      return { y: r.y, cumulative_local_expert_recv_stats: r.recv_stats };
    },
  });
}

const ALL: OpSpec[] = [
  mqaOp("fp8_mqa_logits"),
  mqaOp("fp8_fp4_mqa_logits"),
  pagedOp("fp8_paged_mqa_logits"),
  pagedOp("fp8_fp4_paged_mqa_logits"),
  sync({
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
  }),
  sync({
    name: "tf32_hc_prenorm_gemm",
    family: "hyperconnection",
    inputs: ["a", "b"],
    outputs: ["d", "sqr_sum"],
    scalars: {
      num_splits: "split-K parts (absent: no split dimension)",
      tf32_rounding: "rne (default, the TMA conversion verified on an H200) | truncate",
    },
    defaultModel: "sm90",
    models: ["sm90"],
    run(inputs, scalars, model) {
      const op = "tf32_hc_prenorm_gemm";
      return tf32HcPrenormGemm(need(inputs, "a", op), need(inputs, "b", op), {
        numSplits: scalar<number | undefined>(scalars, "num_splits", op, "number", undefined),
        tf32Rounding: scalar<Tf32Rounding>(scalars, "tf32_rounding", op, "string", "rne"),
        tensorCore: model.tensorCore,
      });
    },
  }),
  megaMoeOp("fp8_fp4_mega_moe"),
  megaMoeOp("bf16_mega_moe"),
];

/** The non-GEMM references, keyed by DeepGEMM function name. */
export const EXTRA_OPS: Readonly<Record<string, OpSpec>> = Object.freeze(
  Object.fromEntries(ALL.map((op) => [op.name, op])),
);

/**
 * Looks a non-GEMM op up by DeepGEMM name.
 * @throws RangeError naming the unknown op
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { extraOp } from "./registry.ts";
 * assert.equal(extraOp("bf16_mega_moe").family, "mega_moe");
 * assert.throws(() => extraOp("fp8_mqa_logit"), RangeError);
 * ```
 */
export function extraOp(name: string): OpSpec {
  if (!Object.hasOwn(EXTRA_OPS, name)) {
    throw new RangeError(`Unknown operation "${name}"; known: ${Object.keys(EXTRA_OPS).join(", ")}`);
  }
  return EXTRA_OPS[name];
}
