/**
 * The cases the oracle is checked on, as pure, deterministic builders: every golden fixture's spec
 * ({@link FIXTURE_SPECS}: quantizers, plain and grouped GEMMs, indexer, HyperConnection and Mega MoE cases, with the
 * edge cases of deepgemm-ops.md §14) and the operand builders `verify`'s generated suites share with them. A seeded
 * {@link Prng} is the only source of values, so a case id gives the same bits on every machine. The stored files
 * are in `fixtures/`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Prng } from "../random/prng.ts";
 * import { FIXTURE_SPECS, fp8Dense } from "./mod.ts";
 * assert.equal(new Set(FIXTURE_SPECS.map((s) => s.id)).size, FIXTURE_SPECS.length);
 * assert.deepEqual(fp8Dense(8, 128, 128)(new Prng(1)).inputs.a.shape, [8, 128]);
 * ```
 * @module
 */
export * from "./case_spec.ts";
export * from "./seeded_operands.ts";
export * from "./tensor_assembly.ts";
export * from "./gemm_builders.ts";
export * from "./mqa_builders.ts";
export * from "./moe_builders.ts";
export * from "./quant_specs.ts";
export * from "./gemm_specs.ts";
export * from "./grouped_specs.ts";
export * from "./extra_specs.ts";
export * from "./all_specs.ts";
