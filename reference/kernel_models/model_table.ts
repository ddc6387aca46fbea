/**
 * The one table of model names: every name `--model` accepts, the reference's and the C ABI's (`go_model` in
 * `kernels/gemm_oracle.h`, `GO_MODEL_<NAME>`), one row each. The GEMM kernel models (`KERNEL_MODELS`), the MQA models
 * (`MQA_MODELS`), the ABI's codes (`ffi/models.ts`) and the ABI's spellings of reference models are views of it;
 * `tests/kernels/model_table_test.ts` checks it against the C header and both backends' name switches.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { abiModels, modelRow, referenceModelName } from "./model_table.ts";
 * assert.equal(modelRow("sm90_1d2d")?.abi, 1);
 * assert.equal(abiModels().find((r) => r.abi === 7)?.name, "sm90_mqa");
 * assert.equal(referenceModelName("indexer", "sm90_mqa"), "sm90");
 * assert.equal(referenceModelName("gemm", "sm90_mqa"), "sm90_mqa");
 * ```
 * @module
 */
import type { Epilogue, OutDtype, ScaleApplication } from "./kernel_models.ts";
import type { MqaArch } from "../indexer/mqa_models.ts";
import type { HeadReductionOrder } from "../indexer/head_reduction.ts";
import type { Semantics } from "../quant/scalar_division.ts";

/**
 * The groups of operations, by what computes their reference: `gemm` (the GEMM engine, `reference/gemm/`), `indexer`
 * (MQA logits and their schedule), `hyperconnection`, `mega_moe` and `quantizer` (`reference/quant/`).
 */
export type OpGroup = "gemm" | "indexer" | "hyperconnection" | "mega_moe" | "quantizer";

/** The parameters of a GEMM kernel model (a `KERNEL_MODELS` entry without its name). */
export interface KernelParameters {
  /** What it models. */
  readonly description: string;
  /** Default tensor-core profile (`reference/tensor_core/profiles.ts`). */
  readonly tensorCore: string;
  /** K elements per tensor-core partial sum before promotion to fp32 (`"none"`: the whole K part stays in the unit). */
  readonly promotion: 128 | "none";
  /** Where scales are applied. */
  readonly scales: ScaleApplication;
  /** Default number of contiguous K parts (1 = no split-K). */
  readonly splitK: number;
  /** Default output type. */
  readonly outDtype: OutDtype;
  /** Epilogue rule. */
  readonly epilogue: Epilogue;
  /** Where the rule comes from. */
  readonly source: string;
}

/** The parameters of an MQA model (an `MQA_MODELS` entry without its name). */
export interface MqaParameters {
  /** Architecture whose host checks apply. */
  readonly arch: MqaArch;
  /** Tensor-core profile of the score `s_h` (FP8 Q and KV). */
  readonly tensorCore: string;
  /** Tensor-core profile of the FP4 score (SM100 only); absent where the architecture has no FP4 path. */
  readonly tensorCoreFp4?: string;
  /** Head-reduction order. */
  readonly reduction: HeadReductionOrder;
  /** Evidence. */
  readonly status: string;
}

/** One model name. */
export interface ModelRow {
  /** The name, as `--model`, the op registry and `go_backend_info` spell it. */
  readonly name: string;
  /** Its `go_model` value (`GO_MODEL_<NAME>`), absent for a model only the reference computes. */
  readonly abi?: number;
  /** The op groups whose references compute a model of this name. */
  readonly groups: readonly OpGroup[];
  /** For an ABI name of a reference model that the reference spells differently: that model, in these groups. */
  readonly aliasOf?: { readonly model: string; readonly groups: readonly OpGroup[] };
  /** Its GEMM kernel parameters (a `KERNEL_MODELS` entry). */
  readonly gemm?: KernelParameters;
  /** Its MQA parameters (an `MQA_MODELS` entry). */
  readonly mqa?: MqaParameters;
  /** What a name without parameters of its own stands for. */
  readonly note?: string;
}

// The rows as literals, so that the ABI names' type derives from them (AbiModelName).
const MODELS = [
  {
    name: "sm90_1d2d",
    abi: 1,
    groups: ["gemm"],
    gemm: {
      description: "DeepGEMM SM90 FP8 1D2D: per 128-K block 4 chained k32 wgmma from zero give P; s = fl32(sa·sb); " +
        "F = fma32(s, P, F); BF16 RNE output, no C",
      tensorCore: "hopper_wgmma_fp8",
      promotion: 128,
      scales: "promotion",
      splitK: 1,
      outDtype: "bf16",
      epilogue: "reduce_add",
      source: "deepgemm-ops.md §6.1; verified bit for bit on H200 (numerics.md §8.2b)",
    },
  },
  {
    name: "sm90_1d1d",
    abi: 2,
    groups: ["gemm"],
    gemm: {
      description: "DeepGEMM SM90 FP8 1D1D: as 1D2D with per-column B scales; FP32 output, D = fl32(C + F)",
      tensorCore: "hopper_wgmma_fp8",
      promotion: 128,
      scales: "promotion",
      splitK: 1,
      outDtype: "f32",
      epilogue: "reduce_add",
      source: "deepgemm-ops.md §6.2; verified on H200 (numerics.md §8.2b)",
    },
  },
  {
    name: "sm100_1d1d",
    abi: 3,
    groups: ["gemm"],
    gemm: {
      description:
        "DeepGEMM SM100 FP8/FP4: the whole K inside block-scaled tcgen05 (k32 steps, UE8M0 scale exponents); " +
        "BF16 output with C rounds twice: bf16(C + bf16(acc))",
      tensorCore: "tcgen05_mxf8f6f4",
      promotion: "none",
      scales: "in_unit",
      splitK: 1,
      outDtype: "bf16",
      epilogue: "reduce_add",
      source: "deepgemm-ops.md §6.3 (tensor-core rounding: MMA-Sim, not verified here)",
    },
  },
  {
    name: "bf16",
    abi: 4,
    groups: ["gemm"],
    gemm: {
      description: "DeepGEMM BF16 GEMMs: the whole K in the unit (k16 wgmma chained through the fp32 accumulator); " +
        "epilogue as sm100_1d1d",
      tensorCore: "hopper_wgmma_bf16",
      promotion: "none",
      scales: "none",
      splitK: 1,
      outDtype: "bf16",
      epilogue: "reduce_add",
      source: "deepgemm-ops.md §6.4; Hopper verified on H200 (numerics.md §8.2b)",
    },
  },
  {
    name: "cublaslt",
    abi: 10,
    groups: ["gemm"],
    gemm: {
      description:
        "cuBLASLt raw FP8 (no scales, fast accumulation off): chained k32 wgmma, partial sums promoted to fp32 " +
        "every 128 K with a plain fp32 add; optional split-K; C added in fp32 to the sum (split-K) or to the product " +
        "already cast to the output type (no split-K), then one cast",
      tensorCore: "hopper_wgmma_fp8",
      promotion: 128,
      scales: "none",
      splitK: 1,
      outDtype: "bf16",
      epilogue: "fp32_then_cast",
      source:
        "numerics.md §8.2 (promotion, inferred interval), §8.2b (split-K in 2 halves at 64×256×7168) and §8.2c (C)",
    },
  },
  {
    name: "sm90",
    groups: ["indexer", "hyperconnection"],
    mqa: {
      arch: "sm90",
      tensorCore: "hopper_wgmma_fp8",
      reduction: "sm90",
      status: "verified on H200: 100 % of 38,118 logits of DeepGEMM's sm90_fp8_mqa_logits kernel bit for bit",
    },
    note: "the SM90 kernel of the indexer ops and of tf32_hc_prenorm_gemm (TF32 wgmma k8, SM90 sqr_sum lane order)",
  },
  {
    name: "sm90_spec81",
    groups: ["indexer"],
    mqa: {
      arch: "sm90",
      tensorCore: "hopper_wgmma_fp8",
      reduction: "sm90_spec81",
      status: "deepgemm-ops.md §8.1 as written; 85.8–89.3 % of the kernel's logits on an H200",
    },
  },
  {
    name: "sm100",
    groups: ["indexer"],
    mqa: {
      arch: "sm100",
      tensorCore: "tcgen05_f8f6f4",
      // MMA-Sim's mxf4nvf4 row (groups of 16 summed exactly, × their two ue8m0 scales, 4 groups + c fused with 35
      // fraction bits, RZ); kind::mxf4 with block32 scales is taken to behave as mxf4nvf4 with ue8m0/32 scales
      // (numerics.md §8.1). [published, not verified here]
      tensorCoreFp4: "tcgen05_mxf4nvf4",
      reduction: "sm100_fp32",
      status: "deepgemm-ops.md §8.1 [from source]; not checked on a GPU (bf16 weights select sm100_bf16)",
    },
  },
  {
    name: "exact",
    abi: 0,
    groups: ["gemm", "indexer", "mega_moe"],
    gemm: {
      description: "the true value C + Σ a·sa·b·sb rounded once to the output type",
      tensorCore: "exact",
      promotion: "none",
      scales: "in_unit",
      splitK: 1,
      outDtype: "bf16",
      epilogue: "exact",
      source: "definition",
    },
    mqa: {
      arch: "sm90",
      tensorCore: "exact",
      reduction: "sm90",
      status: "definition: error-free scores rounded once to fp32, SM90 reduction order",
    },
  },
  {
    name: "sm100_exact",
    groups: ["indexer"],
    mqa: {
      arch: "sm100",
      tensorCore: "exact",
      tensorCoreFp4: "exact",
      reduction: "sm100_fp32",
      status: "definition: error-free (block-scaled) scores rounded once to fp32, SM100 reduction order",
    },
  },
  {
    name: "auto",
    groups: ["indexer"],
    note: "the fp8_fp4_* indexer ops' default: sm100 for FP4 Q/KV or bf16 weights (SM100-only inputs), else sm90",
  },
  { name: "tcgen05", groups: ["mega_moe"], note: "bf16_mega_moe's expert GEMMs: tcgen05 MMA (the profile's name)" },
  {
    name: "tcgen05_mxf8f6f4",
    groups: ["mega_moe"],
    note: "fp8_fp4_mega_moe's expert GEMMs: block-scaled tcgen05 kind::mxf8f6f4 (the profile's name)",
  },
  {
    name: "gpu",
    abi: 8,
    groups: ["quantizer"],
    note: "quantizers as PyTorch on a CUDA tensor: t / c is fl32(t · fl32(1/c)) (deepgemm-ops.md §2)",
  },
  { name: "cpu", abi: 9, groups: ["quantizer"], note: "quantizers as PyTorch on a CPU tensor: true division" },
  {
    name: "fp32_sequential",
    abi: 5,
    groups: [],
    note: "plain fp32 FMAs in K order: the reference's bf16 model with --tensor-core fp32_sequential",
  },
  {
    name: "tf32",
    abi: 6,
    groups: [],
    aliasOf: { model: "sm90", groups: ["hyperconnection"] },
    note: "the ABI's name of tf32_hc_prenorm_gemm's sm90 model (TF32 wgmma k8)",
  },
  {
    name: "sm90_mqa",
    abi: 7,
    groups: [],
    aliasOf: { model: "sm90", groups: ["indexer"] },
    note: "the ABI's name of the indexer's sm90 model",
  },
  { name: "default", abi: -1, groups: [], note: "the ABI's request for the backend's declared model of a family" },
] as const satisfies readonly ModelRow[];

/**
 * Every model name. Row order is the order of the views: `KERNEL_MODELS` and `MQA_MODELS` list their rows in it;
 * the ABI's codes are listed by value ({@link abiModels}).
 */
export const MODEL_TABLE: readonly ModelRow[] = MODELS;

// deno-doc-ignore private-type-ref -- derived from the literal rows behind MODEL_TABLE
/** A name the C ABI has a `go_model` value for: a {@link MODEL_TABLE} row's name where the row has `abi`. */
export type AbiModelName = Extract<(typeof MODELS)[number], { readonly abi: number }>["name"];

/**
 * The row of a model name, or undefined.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { modelRow } from "./model_table.ts";
 * assert.deepEqual(modelRow("tcgen05")?.groups, ["mega_moe"]);
 * assert.equal(modelRow("sm75"), undefined);
 * ```
 */
export function modelRow(name: string): ModelRow | undefined {
  return MODEL_TABLE.find((r) => r.name === name);
}

/**
 * The rows with a `go_model` value, by value.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { abiModels } from "./model_table.ts";
 * assert.deepEqual(abiModels().slice(0, 3).map((r) => r.name), ["default", "exact", "sm90_1d2d"]);
 * ```
 */
export function abiModels(): (ModelRow & { readonly abi: number })[] {
  return MODEL_TABLE.filter((r): r is ModelRow & { readonly abi: number } => r.abi !== undefined)
    .sort((a, b) => a.abi - b.abi);
}

/**
 * The reference's name of a model the ABI names for an op group (`sm90_mqa` is the indexer's `sm90`, `tf32` the
 * HyperConnection's `sm90`); any other name is its own.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { referenceModelName } from "./model_table.ts";
 * assert.equal(referenceModelName("hyperconnection", "tf32"), "sm90");
 * assert.equal(referenceModelName("gemm", "sm90_1d2d"), "sm90_1d2d");
 * ```
 */
export function referenceModelName(group: OpGroup, name: string): string {
  const alias = modelRow(name)?.aliasOf;
  return alias && alias.groups.includes(group) ? alias.model : name;
}

/**
 * Whether the ABI spells some of an op group's reference models differently (so a backend's model name needs
 * {@link referenceModelName}).
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { hasAbiAliases } from "./model_table.ts";
 * assert.equal(hasAbiAliases("indexer"), true);
 * assert.equal(hasAbiAliases("gemm"), false);
 * ```
 */
export function hasAbiAliases(group: OpGroup): boolean {
  return MODEL_TABLE.some((r) => r.aliasOf?.groups.includes(group));
}

const QUANTIZER_MODELS: readonly string[] = MODEL_TABLE.filter((r) => r.groups.includes("quantizer")).map((r) =>
  r.name
);

function isQuantizerModel(name: string): name is Semantics {
  return QUANTIZER_MODELS.includes(name);
}

/**
 * A name as a quantizer's model (its division semantics), checked.
 * @throws {RangeError} for another name
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { quantizerModel } from "./model_table.ts";
 * assert.equal(quantizerModel("cpu"), "cpu");
 * assert.throws(() => quantizerModel("exact"), /Unknown quantizer model "exact" \(gpu, cpu\)/);
 * ```
 */
export function quantizerModel(name: string): Semantics {
  if (!isQuantizerModel(name)) {
    throw new RangeError(`Unknown quantizer model "${name}" (${QUANTIZER_MODELS.join(", ")})`);
  }
  return name;
}
