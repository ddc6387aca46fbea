/**
 * The operations `oracle run` can execute: the GEMM registry (`reference/gemm/registry.ts`, DeepGEMM op names) and
 * its sibling registries, merged into one table.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { runOpNames } from "./run_ops.ts";
 * assert.ok(Array.isArray(runOpNames()));
 * ```
 * @module
 */
import type { OpSpec } from "../reference/gemm/op_spec.ts";
import { referenceOp, referenceOpNames } from "../reference/registry.ts";

export type { OpSpec } from "../reference/gemm/op_spec.ts";

/** The subset of {@link OpSpec} that `oracle run` and the fixtures use. */
export type RunnableOp = Pick<OpSpec, "name" | "inputs" | "outputs" | "scalars" | "defaultModel" | "models" | "run">;

/**
 * The op of a name (`reference/registry.ts`: the GEMM family and the indexer / HC / MoE operations).
 * @param name DeepGEMM's function name
 * @returns the op, or undefined
 */
export function runOp(name: string): RunnableOp | undefined {
  return referenceOp(name);
}

/** Every op name, sorted. */
export function runOpNames(): string[] {
  return referenceOpNames();
}
