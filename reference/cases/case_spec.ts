/**
 * What a case is: the inputs (DeepGEMM argument names) and scalar arguments a seeded PRNG builds, and, for a golden
 * fixture, its id, op, layout, seed and the models whose outputs are stored.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Tensor } from "../tensor/tensor.ts";
 * import type { FixtureSpec } from "./case_spec.ts";
 * const spec: FixtureSpec = {
 *   id: "demo", op: "bf16_gemm_nt", layout: "nt", seed: 1, models: ["exact"],
 *   build: () => ({ inputs: { a: Tensor.zeros("bf16", [1, 1]), b: Tensor.zeros("bf16", [1, 1]) }, scalars: {} }),
 * };
 * assert.equal(spec.id, "demo");
 * ```
 * @module
 */
import type { Prng } from "../random/prng.ts";
import type { Tensor } from "../tensor/tensor.ts";

/** A scalar argument of an operation, as stored in a fixture's `__metadata__.scalars` (JSON). */
export type ScalarValue = number | boolean | string | null | readonly number[];

/** Inputs (DeepGEMM argument names) and scalar arguments of one case. */
export type Built = { inputs: Record<string, Tensor>; scalars: Record<string, unknown> };

/** How to build one golden case. */
export interface FixtureSpec {
  /** Unique id, also the file name (`fixtures/<op>/<id>.safetensors`). */
  readonly id: string;
  /** DeepGEMM's op name. */
  readonly op: string;
  /** The layout / variant in words (`nt`, `contiguous`, `gran_k=32,packed_ue8m0`, ...). */
  readonly layout: string;
  /** The PRNG seed of the inputs. */
  readonly seed: number;
  /** Models whose outputs are stored (every model that applies). */
  readonly models: readonly string[];
  /** Which edge case of deepgemm-ops.md §14 (or other rule) the case pins, if any. */
  readonly edge?: string;
  /** Builds inputs and scalars from a PRNG seeded with `seed`. */
  build(prng: Prng): { inputs: Record<string, Tensor>; scalars: Record<string, ScalarValue> };
}
