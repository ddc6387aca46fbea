/**
 * The HyperConnection pre-norm GEMM as an op spec (`OpSpec`): `tf32_hc_prenorm_gemm(a, b, d, sqr_sum, num_splits)`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { tf32HcPrenormGemmOp } from "./hyperconnection_op.ts";
 * assert.ok(tf32HcPrenormGemmOp.outputs.includes("sqr_sum"));
 * ```
 * @module
 */
import type { OpSpec } from "../gemm/op_spec.ts";
import { tf32HcPrenormGemm } from "../hyperconnection/tf32_hc_prenorm_gemm.ts";
import type { Tf32Rounding } from "../hyperconnection/tf32_rounding.ts";
import { need, scalar, sync } from "./_arguments.ts";

/** `tf32_hc_prenorm_gemm`: D = A·Bᵀ in TF32 and the row sums of squares of A, optionally split along K. */
export const tf32HcPrenormGemmOp: OpSpec = sync({
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
});
