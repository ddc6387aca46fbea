/**
 * Kernel models: how a kernel family drives the tensor core, as data (the second layer above
 * `reference/tensor_core/`). A model says which tensor-core profile computes the partial sums, how many K elements a
 * partial sum covers before it is promoted to an fp32 register on CUDA cores, where the block scales are applied,
 * how K is split across CTAs, and how the epilogue rounds and adds C. The same parameters describe vendor
 * libraries (cuBLASLt's FP8 paths are chained wgmma with optional promotion and split-K, `numerics.md` §8.2b).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { resolveModel } from "./kernel_models.ts";
 * const m = resolveModel({ model: "sm90_1d2d" });
 * assert.equal(m.tensorCore, "hopper_wgmma_fp8");
 * assert.equal(m.promotion, 128);
 * assert.equal(resolveModel({ model: "cublaslt", splitK: 2 }).splitK, 2);
 * ```
 * @module
 */
import { tensorCoreProfile } from "../tensor_core/profiles.ts";
import { describeValue } from "../describe.ts";
import { type KernelParameters, MODEL_TABLE } from "./model_table.ts";

/**
 * Where block scales enter:
 * - `promotion`: on CUDA cores at each promotion, `s = fl32(sa·sb)`, `F = fma32(s, P, F)` (SM90 DeepGEMM, `deepgemm-ops.md` §6.1);
 * - `in_unit`: inside a block-scaled tensor-core instruction, as exponents (SM100 `mxf8f6f4`/`mxf4nvf4`, §6.3);
 * - `none`: the model takes no scales (BF16 GEMMs, raw-FP8 cuBLASLt).
 */
export type ScaleApplication = "promotion" | "in_unit" | "none";

/**
 * How the output is formed from the fp32 accumulator F:
 * - `reduce_add` (DeepGEMM): `o = round_out(F)`; with C, D was pre-filled with C and the store adds: `D = round_out(C + o)`
 *   (BF16 output with C therefore rounds twice, `deepgemm-ops.md` §6.3);
 * - `fp32_then_cast` (cuBLASLt, fp32 compute type, C added in fp32): with split-K, `D = round_out(fl32(F + C))`
 *   (**[inferred]**); without, `D = round_out(fl32(round_out(F) + C))` (`numerics.md` §8.2c, from an H200 mismatch,
 *   confirmed on two more shapes);
 * - `exact`: `D = round_out(C + Σ a·sa·b·sb)` with a single rounding of the true value.
 */
export type Epilogue = "reduce_add" | "fp32_then_cast" | "exact";

/** Output element type of a GEMM (DeepGEMM's D dtypes). */
export type OutDtype = "bf16" | "f32";

/** One kernel family: a name of the model table and its GEMM parameters. */
export interface KernelModel extends KernelParameters {
  /** Key in {@link KERNEL_MODELS}. */
  readonly name: string;
}

/** The kernel models, by name: the rows of the model table (`model_table.ts`) with GEMM parameters, in its order. */
export const KERNEL_MODELS: Readonly<Record<string, KernelModel>> = Object.freeze(Object.fromEntries(
  MODEL_TABLE.flatMap((r) => r.gemm ? [[r.name, Object.freeze({ name: r.name, ...r.gemm })] as const] : []),
));

/** What a caller may ask of a model (the CLI flags `--model --tensor-core --promote --split-k --out-dtype`). */
export interface ModelOptions {
  /** Kernel model name (a key of {@link KERNEL_MODELS}); ops pick DeepGEMM's dispatch when omitted. */
  model?: string;
  /** Tensor-core profile overriding the model's. */
  tensorCore?: string;
  /** Promotion interval overriding the model's. */
  promotion?: 128 | "none";
  /** Number of contiguous K parts, partial fp32 results summed in ascending part order. */
  splitK?: number;
  /** Output type overriding the model's (and the op's default). */
  outDtype?: OutDtype;
  /** Evaluate a deterministic sample of output tiles instead of every tile. */
  sample?: SampleOptions;
  /** Worker count for `runAsync` (default: all cores); results never depend on it. */
  workers?: number;
}

/** Tile sampling: a deterministic subset of 128×128 output tiles touching every M block, N block and group. */
export interface SampleOptions {
  /** Fraction of tiles to evaluate, in (0, 1]. */
  fraction: number;
  /** Seed of the extra tiles beyond the covering diagonal (default 0). */
  seed?: number;
}

/** A model with every parameter fixed. */
export interface ResolvedModel {
  /** Model name. */
  readonly name: string;
  /** Tensor-core profile name. */
  readonly tensorCore: string;
  /** Promotion interval in K elements, or 0 for none. */
  readonly promotion: number;
  /** Scale application. */
  readonly scales: ScaleApplication;
  /** Split-K parts. */
  readonly splitK: number;
  /** Output type. */
  readonly outDtype: OutDtype;
  /** Epilogue rule. */
  readonly epilogue: Epilogue;
}

/**
 * Fixes every parameter of a model from options (flags override the model's defaults).
 * @param options model name and overrides
 * @param fallbackModel the model used when `options.model` is absent
 * @returns a plain, serialisable model description
 * @throws RangeError for unknown names or out-of-range parameters
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { resolveModel } from "./kernel_models.ts";
 * assert.equal(resolveModel({ model: "bf16", outDtype: "f32" }).outDtype, "f32");
 * assert.throws(() => resolveModel({ model: "sm90_1d2d", splitK: 0 }), RangeError);
 * ```
 */
export function resolveModel(options: ModelOptions, fallbackModel = "exact"): ResolvedModel {
  const name = options.model ?? fallbackModel;
  if (!Object.hasOwn(KERNEL_MODELS, name)) {
    throw new RangeError(`Unknown kernel model "${name}"; known: ${Object.keys(KERNEL_MODELS).join(", ")}`);
  }
  const m = KERNEL_MODELS[name];
  const tc = options.tensorCore ?? m.tensorCore;
  tensorCoreProfile(tc);
  const promotion = options.promotion ?? m.promotion;
  if (promotion !== 128 && promotion !== "none") {
    throw new RangeError(`Promotion interval must be 128 or "none", got ${describeValue(promotion)}`);
  }
  const splitK = options.splitK ?? m.splitK;
  if (!Number.isSafeInteger(splitK) || splitK < 1) {
    throw new RangeError(`split-K must be a positive integer, got ${splitK}`);
  }
  const outDtype = options.outDtype ?? m.outDtype;
  if (outDtype !== "bf16" && outDtype !== "f32") {
    throw new RangeError(`Output dtype must be bf16 or f32, got "${outDtype}"`);
  }
  if (m.epilogue === "exact" && (options.splitK !== undefined && splitK !== 1)) {
    throw new RangeError("The exact model has no split-K (it rounds the true value once)");
  }
  return Object.freeze({
    name,
    tensorCore: tc,
    promotion: promotion === "none" ? 0 : 128,
    scales: m.scales,
    splitK,
    outDtype,
    epilogue: m.epilogue,
  });
}
