/**
 * Model names and their `go_model` values (`kernels/gemm_oracle.h`): the rows of the model table
 * (`reference/kernel_models/model_table.ts`) that have one. The quantizers' models are their division semantics,
 * `gpu` and `cpu` (`deepgemm-ops.md` §2, `quantizerModel`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { abiModelName, modelCode } from "./models.ts";
 * assert.equal(modelCode("sm90_1d2d"), 1);
 * assert.equal(modelCode(undefined), -1);
 * assert.equal(abiModelName("sm90_mqa"), "sm90_mqa");
 * assert.throws(() => abiModelName("sm90"), RangeError);
 * ```
 * @module
 */
import { type AbiModelName, abiModels } from "../reference/kernel_models/model_table.ts";

/** A model name the ABI knows. */
export type ModelName = AbiModelName;

/** `go_model` values by name, by value. */
export const MODEL_CODES: Readonly<Record<string, number>> = Object.freeze(
  Object.fromEntries(abiModels().map((r) => [r.name, r.abi])),
);

function isModelName(name: string): name is ModelName {
  return Object.hasOwn(MODEL_CODES, name);
}

/**
 * A name as the ABI's model name, checked.
 * @throws {RangeError} for a name without a `go_model` value
 */
export function abiModelName(name: string): ModelName {
  if (!isModelName(name)) {
    throw new RangeError(`Unknown model "${name}": expected one of ${Object.keys(MODEL_CODES).join(", ")}`);
  }
  return name;
}

/**
 * The `go_model` value of a name (`undefined` = the backend's default).
 * @throws {RangeError} for an unknown name
 */
export function modelCode(name: ModelName | undefined): number {
  return name === undefined ? MODEL_CODES.default : MODEL_CODES[abiModelName(name)];
}
