/**
 * The kernel models of the lightning-indexer operations: which tensor-core profile produces the scores and which
 * head-reduction order reduces them, per architecture: a view of the model table
 * (`reference/kernel_models/model_table.ts`), whose rows are reviewable line by line.
 * @module
 */
import { checkHeadReductionOrder } from "./head_reduction.ts";
import { tensorCoreProfile } from "../tensor_core/profiles.ts";
import { MODEL_TABLE, type MqaParameters } from "../kernel_models/model_table.ts";

/** Target architecture of a model (sets the host checks: allowed H, block_kv, next_n, weight dtypes). */
export type MqaArch = "sm90" | "sm100";

/** One MQA model: a name of the model table and its MQA parameters. */
export interface MqaModel extends MqaParameters {
  /** Key in {@link MQA_MODELS}. */
  readonly name: string;
}

/**
 * The MQA models by name: the rows of the model table (`reference/kernel_models/model_table.ts`) with MQA
 * parameters, in its order. `sm90` is the default (DeepGEMM's only FP8 path on Hopper).
 */
export const MQA_MODELS: Readonly<Record<string, MqaModel>> = Object.freeze(Object.fromEntries(
  MODEL_TABLE.flatMap((r) => r.mqa ? [[r.name, Object.freeze({ name: r.name, ...r.mqa })] as const] : []),
));

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
