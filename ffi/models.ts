/**
 * Kernel model names and their `go_model` values (`kernels/gemm_oracle.h`); the quantizers' models are their
 * division semantics, `gpu` and `cpu` (`deepgemm-ops.md` §2).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { modelCode } from "./models.ts";
 * assert.equal(modelCode("sm90_1d2d"), 1);
 * assert.equal(modelCode(undefined), -1);
 * ```
 * @module
 */

/** `go_model` values by name. */
export const MODEL_CODES = {
  default: -1,
  exact: 0,
  sm90_1d2d: 1,
  sm90_1d1d: 2,
  sm100_1d1d: 3,
  bf16: 4,
  fp32_sequential: 5,
  tf32: 6,
  sm90_mqa: 7,
  gpu: 8,
  cpu: 9,
  cublaslt: 10,
} as const;

/** A model name the ABI knows. */
export type ModelName = keyof typeof MODEL_CODES;

/**
 * The `go_model` value of a name (`undefined` = the backend's default).
 * @throws {RangeError} for an unknown name
 */
export function modelCode(name: ModelName | undefined): number {
  if (name === undefined) return MODEL_CODES.default;
  if (!Object.hasOwn(MODEL_CODES, name)) {
    throw new RangeError(`Unknown model "${name}": expected one of ${Object.keys(MODEL_CODES).join(", ")}`);
  }
  return MODEL_CODES[name];
}
