/**
 * The kernel models of the lightning-indexer operations: which tensor-core profile produces the scores and which
 * head-reduction order reduces them, per architecture. Data, reviewable line by line.
 * @module
 */
import { checkHeadReductionOrder, type HeadReductionOrder } from "./head_reduction.ts";
import { tensorCoreProfile } from "../tensor_core/profiles.ts";

/** Target architecture of a model (sets the host checks: allowed H, block_kv, next_n, weight dtypes). */
export type MqaArch = "sm90" | "sm100";

/** One MQA model. */
export interface MqaModel {
  /** Key in {@link MQA_MODELS}. */
  readonly name: string;
  /** Architecture whose host checks apply. */
  readonly arch: MqaArch;
  /** Tensor-core profile of the score `s_h` (FP8 Q and KV). */
  readonly tensorCore: string;
  /**
   * Tensor-core profile of the FP4 score (`kind::mxf4.block_scale.block32`, SM100 only); absent where the
   * architecture has no FP4 path.
   */
  readonly tensorCoreFp4?: string;
  /** Head-reduction order. */
  readonly reduction: HeadReductionOrder;
  /** Evidence. */
  readonly status: string;
}

/** The MQA models by name. `sm90` is the default (DeepGEMM's only FP8 path on Hopper). */
export const MQA_MODELS: Readonly<Record<string, MqaModel>> = Object.freeze({
  sm90: Object.freeze({
    name: "sm90",
    arch: "sm90",
    tensorCore: "hopper_wgmma_fp8",
    reduction: "sm90",
    status: "verified on H200: 100 % of 38,118 logits of DeepGEMM's sm90_fp8_mqa_logits kernel bit for bit",
  }),
  sm90_spec81: Object.freeze({
    name: "sm90_spec81",
    arch: "sm90",
    tensorCore: "hopper_wgmma_fp8",
    reduction: "sm90_spec81",
    status: "deepgemm-ops.md §8.1 as written; 85.8–89.3 % of the kernel's logits on an H200",
  }),
  sm100: Object.freeze({
    name: "sm100",
    arch: "sm100",
    tensorCore: "tcgen05_f8f6f4",
    // MMA-Sim's mxf4nvf4 row (groups of 16 summed exactly, × their two ue8m0 scales, 4 groups + c fused with 35
    // fraction bits, RZ); kind::mxf4 with block32 scales is taken to behave as mxf4nvf4 with ue8m0/32 scales
    // (numerics.md §8.1). [published, not verified here]
    tensorCoreFp4: "tcgen05_mxf4nvf4",
    reduction: "sm100_fp32",
    status: "deepgemm-ops.md §8.1 [from source]; not checked on a GPU (bf16 weights select sm100_bf16)",
  }),
  exact: Object.freeze({
    name: "exact",
    arch: "sm90",
    tensorCore: "exact",
    reduction: "sm90",
    status: "definition: error-free scores rounded once to fp32, SM90 reduction order",
  }),
  sm100_exact: Object.freeze({
    name: "sm100_exact",
    arch: "sm100",
    tensorCore: "exact",
    tensorCoreFp4: "exact",
    reduction: "sm100_fp32",
    status: "definition: error-free (block-scaled) scores rounded once to fp32, SM100 reduction order",
  }),
});

/** Options that pick and override an MQA model (CLI: `--model`, `--tensor-core`, `--reduction`). */
export interface MqaModelOptions {
  /** Model name (default `sm90`; `sm100` for FP4 inputs or bf16 weights, see {@link defaultMqaModel}). */
  model?: string;
  /** Tensor-core profile overriding the model's. */
  tensorCore?: string;
  /** Head-reduction order overriding the model's. */
  reduction?: string;
}

/**
 * Resolves a model with its overrides.
 * @throws RangeError for unknown names
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { resolveMqaModel } from "./mqa_models.ts";
 * assert.equal(resolveMqaModel({}).reduction, "sm90");
 * assert.equal(resolveMqaModel({ model: "sm90", reduction: "sm90_spec81" }).reduction, "sm90_spec81");
 * assert.throws(() => resolveMqaModel({ model: "sm80" }), RangeError);
 * assert.equal(resolveMqaModel({ model: "auto" }, "sm100").tensorCoreFp4, "tcgen05_mxf4nvf4");
 * ```
 */
export function resolveMqaModel(options: MqaModelOptions, fallback = "sm90"): MqaModel {
  // "auto" (the registry default of the fp8_fp4_* ops) = the fallback picked from the input kinds.
  const name = options.model === undefined || options.model === "auto" ? fallback : options.model;
  if (!Object.hasOwn(MQA_MODELS, name)) {
    throw new RangeError(`Unknown MQA model "${name}"; known: ${Object.keys(MQA_MODELS).join(", ")}`);
  }
  const m = MQA_MODELS[name];
  const tensorCore = options.tensorCore ?? m.tensorCore;
  tensorCoreProfile(tensorCore); // throws for unknown profiles
  const tensorCoreFp4 = m.tensorCoreFp4 === undefined ? undefined : options.tensorCore ?? m.tensorCoreFp4;
  const reduction = checkHeadReductionOrder(options.reduction ?? m.reduction);
  return { ...m, tensorCore, tensorCoreFp4, reduction };
}

/**
 * The model used when none is named: `sm100` when the inputs exist only on SM100 (FP4 Q/KV, bf16 weights), else
 * `sm90` (DeepGEMM's FP8 path on Hopper, the verified model).
 * @param fp4 whether Q and KV are packed FP4
 * @param bf16Weights whether the weights are bf16
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { defaultMqaModel } from "./mqa_models.ts";
 * assert.equal(defaultMqaModel(false, false), "sm90");
 * assert.equal(defaultMqaModel(true, false), "sm100");
 * ```
 */
export function defaultMqaModel(fp4: boolean, bf16Weights: boolean): string {
  return fp4 || bf16Weights ? "sm100" : "sm90";
}
