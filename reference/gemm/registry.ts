/**
 * Every GEMM reference by DeepGEMM function name. The CLI (`oracle run <op>`), the fixtures generator and `verify`
 * go through this table. Each entry is an {@link OpSpec}: argument names, scalars, default model, `run` (one thread)
 * and `runAsync` (Workers, same bits).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { GEMM_OPS } from "./registry.ts";
 * assert.equal(GEMM_OPS.fp8_gemm_nt.defaultModel, "sm90_1d2d");
 * assert.ok(GEMM_OPS.m_grouped_fp8_gemm_nt_contiguous.inputs.includes("grouped_layout"));
 * ```
 * @module
 */
import type { OpSpec } from "./op_spec.ts";
import * as normal from "./normal_gemm.ts";
import * as grouped from "./grouped_gemm.ts";
import * as einsum from "./einsum.ts";

export type { ModelOptions, OpSpec } from "./op_spec.ts";

const ALL: OpSpec[] = [
  normal.fp8GemmNt,
  normal.fp8GemmNn,
  normal.fp8GemmTn,
  normal.fp8GemmTt,
  normal.fp8Fp4GemmNt,
  normal.fp8Fp4GemmNn,
  normal.fp8Fp4GemmTn,
  normal.fp8Fp4GemmTt,
  normal.fp8GemmNtSkipHeadMid,
  normal.bf16GemmNt,
  normal.bf16GemmNn,
  normal.bf16GemmTn,
  normal.bf16GemmTt,
  normal.cublasltGemmNt,
  normal.cublasltGemmNn,
  normal.cublasltGemmTn,
  normal.cublasltGemmTt,
  ...grouped.GROUPED_OPS,
  ...einsum.EINSUM_OPS,
];

/**
 * The GEMM references, keyed by DeepGEMM function name.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { GEMM_OPS } from "./registry.ts";
 * assert.equal(GEMM_OPS["fp8_gemm_nt"].family, "fp8_gemm");
 * assert.ok(Object.isFrozen(GEMM_OPS));
 * ```
 */
export const GEMM_OPS: Readonly<Record<string, OpSpec>> = Object.freeze(
  Object.fromEntries(ALL.map((op) => [op.name, op])),
);

/**
 * Looks an op up by DeepGEMM name.
 * @param name the function name
 * @returns its spec
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
