/**
 * Turns a planner into an {@link OpSpec}: `run` evaluates on this thread, `runAsync` on Workers; both write the
 * same bits (each output element is computed on its own).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Tensor } from "../tensor/tensor.ts";
 * import { makeOp } from "./run.ts";
 * const op = makeOp({ name: "zeros", family: "demo", inputs: [], outputs: ["d"], scalars: {}, defaultModel: "exact",
 *   models: ["exact"], plan: () => ({ job: null, d: Tensor.zeros("f32", [1]) }) });
 * assert.equal(op.run({}, {}, {}).d.at(0), 0);
 * ```
 * @module
 */
import type { ModelOptions } from "../kernel_models/kernel_models.ts";
import { evaluateParallel } from "./evaluate_parallel.ts";
import type { Tensor } from "../tensor/tensor.ts";
import { evaluateTiles, selectTiles } from "./engine.ts";
import type { OpSpec, Plan } from "./op_spec.ts";
import { writeResults } from "./output.ts";

/** An op description plus its planner. */
export interface OpDefinition extends Omit<OpSpec, "run" | "runAsync"> {
  /** Validates arguments and lowers the op to a job (or an early return). */
  plan(inputs: Record<string, Tensor>, scalars: Record<string, unknown>, model: ModelOptions): Plan;
}

function finish(
  plan: Plan,
  model: ModelOptions,
  res: Parameters<typeof writeResults>[1] | null,
): Record<string, Tensor> {
  const out: Record<string, Tensor> = { d: plan.d };
  if (res) {
    const mask = writeResults(plan.d, res, model.sample !== undefined);
    if (mask) out.sample_mask = mask;
  }
  return out;
}

/**
 * Builds an OpSpec from a definition.
 * @param def the description and planner
 * @returns the op
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Tensor } from "../tensor/tensor.ts";
 * import { makeOp } from "./run.ts";
 * // An op whose planner returns early: D = zeros of A's shape, nothing evaluated.
 * const op = makeOp({
 *   name: "zeros_like", family: "demo", inputs: ["a"], outputs: ["d"], scalars: {},
 *   defaultModel: "exact", models: ["exact"],
 *   plan: (inputs) => ({ job: null, d: Tensor.zeros("f32", inputs.a.shape) }),
 * });
 * assert.deepEqual(op.run({ a: Tensor.zeros("bf16", [2, 3]) }, {}, {}).d.shape, [2, 3]);
 * assert.ok(Object.isFrozen(op));
 * ```
 */
export function makeOp(def: OpDefinition): OpSpec {
  const { plan, ...desc } = def;
  return Object.freeze({
    ...desc,
    run(inputs: Record<string, Tensor>, scalars: Record<string, unknown>, model: ModelOptions) {
      const p = plan(inputs, scalars ?? {}, model ?? {});
      if (p.job === null) return finish(p, model ?? {}, null);
      const tiles = selectTiles(p.job.problems, model?.sample);
      return finish(p, model ?? {}, evaluateTiles(p.job, tiles));
    },
    async runAsync(inputs: Record<string, Tensor>, scalars: Record<string, unknown>, model: ModelOptions) {
      const p = plan(inputs, scalars ?? {}, model ?? {});
      if (p.job === null) return finish(p, model ?? {}, null);
      const tiles = selectTiles(p.job.problems, model?.sample);
      return finish(p, model ?? {}, await evaluateParallel(p.job, tiles, model?.workers));
    },
  });
}
