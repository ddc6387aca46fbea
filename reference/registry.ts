/**
 * The operation registry: one row per DeepGEMM operation, by DeepGEMM function name, carrying everything its
 * consumers read: the op group, the reference (an {@link OpSpec}: tensor and scalar arguments, models, `run`), or for a
 * quantizer its recipe and models, how a native backend calls it through the C ABI ({@link NativeCall}: the
 * `go_backend_info` family, hence the entry, and the layout letters), and the architecture it exists for when
 * DeepGEMM ships it for one only ({@link ArchRequirement}). `oracle run`, `identify`, `serve`, the fixtures, `verify`'s
 * native calls (`cli/verify/backend_ops.ts`) and the FFI's entry table (`ffi/symbols.ts`) all read this table; the
 * functions below are its views.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { operation, referenceOp, referenceOpNames } from "./registry.ts";
 * assert.equal(referenceOp("fp8_gemm_nt")?.defaultModel, "sm90_1d2d");
 * assert.deepEqual(operation("fp8_gemm_tn")?.native, { family: "fp8_gemm", layout: "tn" });
 * assert.ok(referenceOpNames().includes("fp8_mqa_logits"));
 * assert.equal(referenceOp("per_token_cast_to_fp8"), undefined); // a quantizer: no OpSpec
 * assert.equal(referenceOp("no_such_op"), undefined);
 * ```
 * @module
 */
import type { OpSpec } from "./gemm/op_spec.ts";
import * as normal from "./gemm/normal_gemm.ts";
import { GROUPED_OPS } from "./gemm/grouped_gemm.ts";
import { einsum, fp8Einsum } from "./gemm/einsum.ts";
import {
  bf16MegaMoeOp,
  fp8Fp4MegaMoeOp,
  fp8Fp4MqaLogitsOp,
  fp8Fp4PagedMqaLogitsOp,
  fp8MqaLogitsOp,
  fp8PagedMqaLogitsOp,
  getPagedMqaLogitsMetadataOp,
  tf32HcPrenormGemmOp,
} from "./non_gemm_ops/mod.ts";
import { QUANT_RECIPES, type QuantRecipe } from "./quant/recipes.ts";
import type { Semantics } from "./quant/scalar_division.ts";
import type { OpGroup } from "./kernel_models/model_table.ts";

export type { OpSpec } from "./gemm/op_spec.ts";

/** GEMM layout letters: A then B, `n` = K-major (DeepGEMM's names; `t` = the other major). */
export type GemmLayout = "nt" | "nn" | "tn" | "tt";

/**
 * The operation families of the C ABI (`kernels/gemm_oracle.h`, `go_backend_info` "models" keys): each has one entry
 * (`ffi/symbols.ts`), and a backend declares one model per family.
 */
export type AbiFamily =
  | "fp8_gemm"
  | "m_grouped_fp8_gemm_contiguous"
  | "m_grouped_fp8_gemm_masked"
  | "k_grouped_fp8_gemm"
  | "bf16_gemm"
  | "m_grouped_bf16_gemm_contiguous"
  | "m_grouped_bf16_gemm_masked"
  | "k_grouped_bf16_gemm"
  | "fp8_gemm_skip_head_mid"
  | "tf32_hc_prenorm_gemm"
  | "fp8_mqa_logits"
  | "fp8_paged_mqa_logits"
  | "quantize"
  | "paged_mqa_logits_metadata"
  | "cublaslt_gemm";

/** How a native backend runs an operation through the C ABI. */
export interface NativeCall {
  /** The ABI family whose entry it calls. */
  readonly family: AbiFamily;
  /** Layout letters, expressed as strided views of the operands (default `nt`, the ABI's own). */
  readonly layout?: GemmLayout;
  /** DeepGEMM's batched einsum form: one ABI call per batch entry (head) on views of the operands. */
  readonly einsum?: true;
}

/** An operation that DeepGEMM provides for one GPU architecture only, and what needs it. */
export interface ArchRequirement {
  /** The architecture, in DeepGEMM's words. */
  readonly arch: "SM100 (Blackwell)";
  /** What of the operation needs it. */
  readonly why: string;
}

/** What every row has. */
export interface OperationRow {
  /** DeepGEMM function name. */
  readonly name: string;
  /** What computes its reference (the group of its models, `model_table.ts`). */
  readonly group: OpGroup;
  /** How a native backend runs it; absent where the kernel ABI has no entry for it. */
  readonly native?: NativeCall;
  /** The only architecture DeepGEMM ships it for, when an SM90 backend cannot run it. */
  readonly arch?: ArchRequirement;
}

/** An operation with an {@link OpSpec} reference (`oracle run`, `identify`, `serve`). */
export interface ReferenceOperation extends OperationRow {
  /** Its op group (any but `quantizer`). */
  readonly group: Exclude<OpGroup, "quantizer">;
  /** Its reference. */
  readonly reference: OpSpec;
}

/** A quantizer (`reference/quant/recipes.ts`): fixtures and backends run it, `oracle quantize` rather than `run`. */
export interface QuantizerOperation extends OperationRow {
  /** Its op group. */
  readonly group: "quantizer";
  /** Its reference. */
  readonly recipe: QuantRecipe;
  /** Its models: the division semantics it can be computed under. */
  readonly models: readonly Semantics[];
}

/** One row of the registry. */
export type Operation = ReferenceOperation | QuantizerOperation;

const FP4_GEMM: ArchRequirement = {
  arch: "SM100 (Blackwell)",
  why:
    "FP4 (E2M1) operands run on tcgen05 block-scaled MMA (kind::mxf8f6f4; the kernel ABI has no FP4 operand type); " +
    "the FP8 × FP8 form is the SM90 kernel under its fp8_* name",
};
const FP4_MQA: ArchRequirement = {
  arch: "SM100 (Blackwell)",
  why: "FP4 Q and KV with packed UE8M0 scales run on tcgen05 block-scaled MMA; the FP8 form is the SM90 kernel " +
    "under its fp8_* name",
};
const K_GROUPED_MN_MAJOR: ArchRequirement = {
  arch: "SM100 (Blackwell)",
  why: "the MN-major K-grouped FP8 GEMM with in-unit UE8M0 scales is an SM100 kernel (sm100_1d1d); the SM90 form " +
    "is k_grouped_fp8_gemm_nt_contiguous",
};
const FP4_MEGA_MOE: ArchRequirement = {
  arch: "SM100 (Blackwell)",
  why: "Mega MoE fuses FP8 × FP4 expert GEMMs on tcgen05 block-scaled MMA with TMEM accumulators (tcgen05_mxf8f6f4)",
};
const BF16_MEGA_MOE: ArchRequirement = {
  arch: "SM100 (Blackwell)",
  why: "Mega MoE fuses its BF16 expert GEMMs on tcgen05 MMA with TMEM accumulators (tcgen05)",
};

/** A row of an op with an OpSpec reference. */
function op(
  group: ReferenceOperation["group"],
  reference: OpSpec,
  how: { native?: NativeCall; arch?: ArchRequirement } = {},
): ReferenceOperation {
  return Object.freeze({ name: reference.name, group, reference, ...how });
}

/** The grouped GEMM of a name, DeepGEMM's aliases included (`reference/gemm/grouped_gemm.ts`). */
function grouped(name: string): OpSpec {
  const spec = GROUPED_OPS.find((s) => s.name === name);
  if (!spec) throw new RangeError(`reference/gemm/grouped_gemm.ts has no "${name}"`);
  return spec;
}

/** A quantizer's row: every recipe runs through `go_quantize`; NVFP4 as Transformer Engine has GPU semantics only. */
function quantizer(name: string): QuantizerOperation {
  const row: QuantizerOperation = {
    name,
    group: "quantizer",
    recipe: QUANT_RECIPES[name],
    models: name === "nvfp4_te" ? ["gpu"] : ["gpu", "cpu"],
    native: { family: "quantize" },
  };
  return Object.freeze(row);
}

/** Every operation, one row each. */
export const OPERATIONS: readonly Operation[] = Object.freeze([
  op("gemm", normal.fp8GemmNt, { native: { family: "fp8_gemm", layout: "nt" } }),
  op("gemm", normal.fp8GemmNn, { native: { family: "fp8_gemm", layout: "nn" } }),
  op("gemm", normal.fp8GemmTn, { native: { family: "fp8_gemm", layout: "tn" } }),
  op("gemm", normal.fp8GemmTt, { native: { family: "fp8_gemm", layout: "tt" } }),
  op("gemm", normal.fp8Fp4GemmNt, { arch: FP4_GEMM }),
  op("gemm", normal.fp8Fp4GemmNn, { arch: FP4_GEMM }),
  op("gemm", normal.fp8Fp4GemmTn, { arch: FP4_GEMM }),
  op("gemm", normal.fp8Fp4GemmTt, { arch: FP4_GEMM }),
  op("gemm", normal.fp8GemmNtSkipHeadMid, { native: { family: "fp8_gemm_skip_head_mid" } }),
  op("gemm", normal.bf16GemmNt, { native: { family: "bf16_gemm", layout: "nt" } }),
  op("gemm", normal.bf16GemmNn, { native: { family: "bf16_gemm", layout: "nn" } }),
  op("gemm", normal.bf16GemmTn, { native: { family: "bf16_gemm", layout: "tn" } }),
  op("gemm", normal.bf16GemmTt, { native: { family: "bf16_gemm", layout: "tt" } }),
  op("gemm", normal.cublasltGemmNt, { native: { family: "cublaslt_gemm", layout: "nt" } }),
  op("gemm", normal.cublasltGemmNn, { native: { family: "cublaslt_gemm", layout: "nn" } }),
  op("gemm", normal.cublasltGemmTn, { native: { family: "cublaslt_gemm", layout: "tn" } }),
  op("gemm", normal.cublasltGemmTt, { native: { family: "cublaslt_gemm", layout: "tt" } }),
  op("gemm", grouped("m_grouped_fp8_gemm_nt_contiguous"), {
    native: { family: "m_grouped_fp8_gemm_contiguous", layout: "nt" },
  }),
  op("gemm", grouped("m_grouped_fp8_gemm_nn_contiguous"), {
    native: { family: "m_grouped_fp8_gemm_contiguous", layout: "nn" },
  }),
  op("gemm", grouped("m_grouped_fp8_fp4_gemm_nt_contiguous"), { arch: FP4_GEMM }),
  op("gemm", grouped("m_grouped_fp8_fp4_gemm_nn_contiguous"), { arch: FP4_GEMM }),
  op("gemm", grouped("m_grouped_bf16_gemm_nt_contiguous"), {
    native: { family: "m_grouped_bf16_gemm_contiguous", layout: "nt" },
  }),
  op("gemm", grouped("m_grouped_bf16_gemm_nn_contiguous"), {
    native: { family: "m_grouped_bf16_gemm_contiguous", layout: "nn" },
  }),
  op("gemm", grouped("m_grouped_fp8_gemm_nt_masked"), { native: { family: "m_grouped_fp8_gemm_masked" } }),
  op("gemm", grouped("m_grouped_fp8_fp4_gemm_nt_masked"), { arch: FP4_GEMM }),
  op("gemm", grouped("fp8_m_grouped_gemm_nt_masked"), { native: { family: "m_grouped_fp8_gemm_masked" } }),
  op("gemm", grouped("m_grouped_bf16_gemm_nt_masked"), { native: { family: "m_grouped_bf16_gemm_masked" } }),
  op("gemm", grouped("bf16_m_grouped_gemm_nt_masked"), { native: { family: "m_grouped_bf16_gemm_masked" } }),
  op("gemm", grouped("k_grouped_fp8_gemm_nt_contiguous"), { native: { family: "k_grouped_fp8_gemm" } }),
  op("gemm", grouped("k_grouped_fp8_gemm_tn_contiguous"), { arch: K_GROUPED_MN_MAJOR }),
  op("gemm", grouped("k_grouped_bf16_gemm_tn_contiguous"), { native: { family: "k_grouped_bf16_gemm" } }),
  op("gemm", einsum, { native: { family: "bf16_gemm", einsum: true } }),
  op("gemm", fp8Einsum, { native: { family: "fp8_gemm", einsum: true } }),
  op("indexer", fp8MqaLogitsOp, { native: { family: "fp8_mqa_logits" } }),
  op("indexer", fp8Fp4MqaLogitsOp, { arch: FP4_MQA }),
  op("indexer", fp8PagedMqaLogitsOp, { native: { family: "fp8_paged_mqa_logits" } }),
  op("indexer", fp8Fp4PagedMqaLogitsOp, { arch: FP4_MQA }),
  op("indexer", getPagedMqaLogitsMetadataOp, { native: { family: "paged_mqa_logits_metadata" } }),
  op("hyperconnection", tf32HcPrenormGemmOp, { native: { family: "tf32_hc_prenorm_gemm" } }),
  op("mega_moe", fp8Fp4MegaMoeOp, { arch: FP4_MEGA_MOE }),
  op("mega_moe", bf16MegaMoeOp, { arch: BF16_MEGA_MOE }),
  ...Object.keys(QUANT_RECIPES).map(quantizer),
]);

/**
 * The row of an operation, or undefined.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { operation } from "./registry.ts";
 * assert.equal(operation("bf16_mega_moe")?.arch?.arch, "SM100 (Blackwell)");
 * assert.equal(operation("mxfp4")?.group, "quantizer");
 * ```
 */
export function operation(name: string): Operation | undefined {
  return OPERATIONS.find((r) => r.name === name);
}

const referenceRows = (): ReferenceOperation[] =>
  OPERATIONS.filter((r): r is ReferenceOperation => r.group !== "quantizer");

/**
 * The reference of an operation, or undefined (for a quantizer too: see {@link operation}).
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { referenceOp } from "./registry.ts";
 * assert.equal(referenceOp("fp8_gemm_nt")?.name, "fp8_gemm_nt");
 * assert.equal(referenceOp("no_such_op"), undefined);
 * ```
 */
export function referenceOp(name: string): OpSpec | undefined {
  const row = operation(name);
  return row?.group === "quantizer" ? undefined : row?.reference;
}

/**
 * Every operation with an OpSpec reference, by name, sorted.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { referenceOpNames } from "./registry.ts";
 * const names = referenceOpNames();
 * assert.ok(names.includes("bf16_gemm_nt"));
 * assert.deepEqual(names, [...names].sort());
 * ```
 */
export function referenceOpNames(): string[] {
  return referenceRows().map((r) => r.name).sort();
}

/** The references of a set of groups, keyed by name, in table order. */
function referencesOf(groups: readonly OpGroup[]): Readonly<Record<string, OpSpec>> {
  return Object.freeze(
    Object.fromEntries(referenceRows().filter((r) => groups.includes(r.group)).map((r) => [r.name, r.reference])),
  );
}

/**
 * The GEMM references (group `gemm`: the GEMM engine and kernel models), keyed by DeepGEMM function name.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { GEMM_OPS } from "./registry.ts";
 * assert.equal(GEMM_OPS["fp8_gemm_nt"].family, "fp8_gemm");
 * assert.ok(GEMM_OPS.m_grouped_fp8_gemm_nt_contiguous.inputs.includes("grouped_layout"));
 * assert.ok(Object.isFrozen(GEMM_OPS));
 * ```
 */
export const GEMM_OPS: Readonly<Record<string, OpSpec>> = referencesOf(["gemm"]);

/**
 * The non-GEMM references (indexer, HyperConnection, Mega MoE), keyed by DeepGEMM function name.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { EXTRA_OPS } from "./registry.ts";
 * assert.equal(EXTRA_OPS.fp8_mqa_logits.defaultModel, "sm90");
 * assert.ok(EXTRA_OPS.tf32_hc_prenorm_gemm.outputs.includes("sqr_sum"));
 * ```
 */
export const EXTRA_OPS: Readonly<Record<string, OpSpec>> = referencesOf(["indexer", "hyperconnection", "mega_moe"]);

/**
 * Looks a GEMM up by DeepGEMM name.
 * @throws RangeError naming the unknown op
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { gemmOp } from "./registry.ts";
 * assert.equal(gemmOp("bf16_gemm_nt").family, "bf16_gemm");
 * assert.throws(() => gemmOp("fp8_gemm_xx"), RangeError);
 * ```
 */
export function gemmOp(name: string): OpSpec {
  if (!Object.hasOwn(GEMM_OPS, name)) throw new RangeError(`Unknown GEMM op "${name}"`);
  return GEMM_OPS[name];
}

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
