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
  /** Tensor-core profile of the score `s_h`. */
  readonly tensorCore: string;
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
    reduction: "sm100_fp32",
    status: "deepgemm-ops.md §8.1 [from source]; not checked on a GPU",
  }),
  exact: Object.freeze({
    name: "exact",
    arch: "sm90",
    tensorCore: "exact",
    reduction: "sm90",
    status: "definition: error-free scores rounded once to fp32, SM90 reduction order",
  }),
});

/** Options that pick and override an MQA model (CLI: `--model`, `--tensor-core`, `--reduction`). */
export interface MqaModelOptions {
  /** Model name (default `sm90`). */
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
 * ```
 */
export function resolveMqaModel(options: MqaModelOptions): MqaModel {
  const name = options.model ?? "sm90";
  if (!Object.hasOwn(MQA_MODELS, name)) {
    throw new RangeError(`Unknown MQA model "${name}"; known: ${Object.keys(MQA_MODELS).join(", ")}`);
  }
  const m = MQA_MODELS[name];
  const tensorCore = options.tensorCore ?? m.tensorCore;
  tensorCoreProfile(tensorCore); // throws for unknown profiles
  const reduction = checkHeadReductionOrder(options.reduction ?? m.reduction);
  return { ...m, tensorCore, reduction };
}
