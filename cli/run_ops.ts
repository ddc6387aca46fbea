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
import { GEMM_OPS } from "../reference/gemm/registry.ts";

export type { OpSpec } from "../reference/gemm/op_spec.ts";

/** The subset of {@link OpSpec} that `oracle run` and the fixtures use. */
export type RunnableOp = Pick<OpSpec, "name" | "inputs" | "outputs" | "scalars" | "defaultModel" | "models" | "run">;

// TODO(H3): add the indexer / HC / MoE registry (H7) beside GEMM_OPS once it is published.
const REGISTRIES: Readonly<Record<string, RunnableOp>>[] = [GEMM_OPS];

/**
 * The op of a name.
 * @param name DeepGEMM's function name
 * @returns the op, or undefined
 */
export function runOp(name: string): RunnableOp | undefined {
  for (const r of REGISTRIES) if (Object.hasOwn(r, name)) return r[name];
  return undefined;
}

/** Every op name, sorted. */
export function runOpNames(): string[] {
  return REGISTRIES.flatMap((r) => Object.keys(r)).sort();
}
