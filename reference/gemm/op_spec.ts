/**
 * The contract every GEMM reference implements (the registry's value type) and what an op's planner produces. The
 * helpers the references share live beside it, one concept a file: `tensor_arguments.ts`, `scalar_arguments.ts`,
 * `scale_factors.ts`, `output.ts`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Tensor } from "../tensor/tensor.ts";
 * import type { Plan } from "./op_spec.ts";
 * const early: Plan = { job: null, d: Tensor.zeros("f32", [1]) }; // an op that returns before any tile is evaluated
 * assert.equal(early.job, null);
 * ```
 * @module
 */
import type { ModelOptions } from "../kernel_models/kernel_models.ts";
import type { Tensor } from "../tensor/tensor.ts";
import type { GemmJob } from "./job.ts";

export type { ModelOptions } from "../kernel_models/kernel_models.ts";

/** One DeepGEMM operation's reference. */
export interface OpSpec {
  /** DeepGEMM function name. */
  readonly name: string;
  /** Operation family (`fp8_gemm`, `m_grouped`, `masked`, `k_grouped`, `bf16_gemm`, `einsum`, `cublaslt`, ...). */
  readonly family: string;
  /** Tensor arguments, DeepGEMM's Python names (`a`, `sfa`, `b`, `sfb`, `c`, `d`, `grouped_layout`, ...). */
  readonly inputs: readonly string[];
  /** Output tensors (`d`; `sample_mask` is added when sampling). */
  readonly outputs: readonly string[];
  /** Scalar arguments and what they mean. */
  readonly scalars: Readonly<Record<string, string>>;
  /** The model used when none is asked for (DeepGEMM's dispatch may refine it, e.g. sm90_1d2d vs sm90_1d1d). */
  readonly defaultModel: string;
  /** Models that make sense for the op. */
  readonly models: readonly string[];
  /** Runs the reference on one thread (`model.workers` is ignored). */
  run(inputs: Record<string, Tensor>, scalars: Record<string, unknown>, model: ModelOptions): Record<string, Tensor>;
  /** Runs the reference with `model.workers` Workers (default: all cores); bits equal {@link OpSpec.run}'s. */
  runAsync(
    inputs: Record<string, Tensor>,
    scalars: Record<string, unknown>,
    model: ModelOptions,
  ): Promise<Record<string, Tensor>>;
}

/** What an op's planner produces: the job (or null for an early return) and the output tensor to fill. */
export interface Plan {
  /** The job, or null when the op returns early (m = 0, n = 0, k = 0 handled by the planner). */
  job: GemmJob | null;
  /** The output tensor, already holding C / the caller's d / zeros as DeepGEMM would before the kernel runs. */
  d: Tensor;
}
