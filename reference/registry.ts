/**
 * Every operation the reference can run, by DeepGEMM function name: the GEMM family (`gemm/registry.ts`) and the
 * indexer / HyperConnection / Mega MoE operations (`ops_extra/registry.ts`). The command line (`oracle run`), the
 * fixtures and `verify` all look operations up here.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { referenceOp, referenceOpNames } from "./registry.ts";
 * assert.equal(referenceOp("fp8_gemm_nt")?.defaultModel, "sm90_1d2d");
 * assert.ok(referenceOpNames().includes("fp8_mqa_logits"));
 * assert.equal(referenceOp("no_such_op"), undefined);
 * ```
 * @module
 */
import type { OpSpec } from "./gemm/op_spec.ts";
import { GEMM_OPS } from "./gemm/registry.ts";
import { EXTRA_OPS } from "./ops_extra/registry.ts";

const REGISTRIES: readonly Readonly<Record<string, OpSpec>>[] = [GEMM_OPS, EXTRA_OPS];

/**
 * The reference of an operation, or undefined.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { referenceOp } from "./registry.ts";
 * assert.equal(referenceOp("fp8_gemm_nt")?.name, "fp8_gemm_nt");
 * assert.equal(referenceOp("no_such_op"), undefined);
 * ```
 */
export function referenceOp(name: string): OpSpec | undefined {
  for (const r of REGISTRIES) if (Object.hasOwn(r, name)) return r[name];
  return undefined;
}

/**
 * Every operation name, sorted.
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
  return REGISTRIES.flatMap((r) => Object.keys(r)).sort();
}
