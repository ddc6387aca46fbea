/**
 * The unfused Mega MoE pipeline that DeepGEMM's test compares against bit for bit (`tests/test_mega_moe.py`: DeepEP
 * dispatch, grouped L1 GEMM, SwiGLU + quantization, grouped L2 GEMM, DeepEP combine), written as separate stages over
 * whole per-expert matrices. `megaMoe` (fused, token by token) must equal it exactly.
 * @module
 */
import { Tensor } from "../tensor/tensor.ts";
import {
  megaMoeCombine,
  megaMoeExpertOutput,
  type MegaMoeInputs,
  megaMoeL1,
  type MegaMoeOptions,
  type MegaMoeProblem,
  type MegaMoeResult,
  prepareMegaMoe,
} from "./mega_moe.ts";

/**
 * Dispatch: per expert, the (token, slot) pairs it receives, in token order (DeepEP's receive order).
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Tensor } from "../tensor/tensor.ts";
 * import { prepareMegaMoe } from "./mega_moe.ts";
 * import { megaMoeDispatch } from "./mega_moe_unfused.ts";
 * const p = prepareMegaMoe({
 *   x: Tensor.zeros("bf16", [2, 128]),
 *   topk_idx: Tensor.from("i32", [2, 2], new Int32Array([1, -1, 1, 0])),
 *   topk_weights: Tensor.from("f32", [2, 2], new Float32Array(4)),
 *   l1: Tensor.zeros("bf16", [2, 256, 128]),
 *   l2: Tensor.zeros("bf16", [2, 128, 128]),
 * });
 * assert.deepEqual(megaMoeDispatch(p), [[[1, 1]], [[0, 0], [1, 0]]]);
 * ```
 */
export function megaMoeDispatch(p: MegaMoeProblem): [number, number][][] {
  const lists: [number, number][][] = Array.from({ length: p.E }, () => []);
  for (let t = 0; t < p.T; t++) {
    for (let j = 0; j < p.topk; j++) {
      const e = p.idx[t * p.topk + j];
      if (e >= 0) lists[e].push([t, j]);
    }
  }
  return lists;
}

/**
 * The composed reference: dispatch → grouped L1 → SwiGLU/quant → grouped L2 → combine, with the receive counts taken
 * from the dispatch lists.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Tensor } from "../tensor/tensor.ts";
 * import { megaMoeUnfused } from "./mega_moe_unfused.ts";
 * const r = megaMoeUnfused({
 *   x: Tensor.zeros("bf16", [2, 128]),
 *   topk_idx: Tensor.from("i32", [2, 1], new Int32Array([1, 1])),
 *   topk_weights: Tensor.from("f32", [2, 1], new Float32Array([1, 1])),
 *   l1: Tensor.zeros("bf16", [2, 256, 128]),
 *   l2: Tensor.zeros("bf16", [2, 128, 128]),
 * });
 * assert.deepEqual(Array.from(r.recv_stats.data as Int32Array), [0, 2]);
 * ```
 */
export function megaMoeUnfused(inputs: MegaMoeInputs, options: MegaMoeOptions = {}): MegaMoeResult {
  const p = prepareMegaMoe(inputs);
  const lists = megaMoeDispatch(p);
  // Expert outputs, scattered back to (token, slot).
  const perSlot: (Uint16Array | undefined)[] = new Array(p.T * p.topk).fill(undefined);
  const stats = Int32Array.from(p.stats);
  for (let e = 0; e < p.E; e++) {
    const rows = lists[e];
    stats[e] = (stats[e] + rows.length) | 0;
    const l1 = rows.map(([t]) => megaMoeL1(p, t, e, options.tensorCore)); // grouped GEMM over the gathered rows
    rows.forEach(([t, j], r) => {
      perSlot[t * p.topk + j] = megaMoeExpertOutput(p, l1[r], e, p.w[t * p.topk + j], options);
    });
  }
  const y = Tensor.zeros("bf16", [p.T, p.hidden]);
  for (let t = 0; t < p.T; t++) {
    (y.data as Uint16Array).set(megaMoeCombine(perSlot.slice(t * p.topk, (t + 1) * p.topk), p.hidden), t * p.hidden);
  }
  return { y, recv_stats: Tensor.from("i32", [p.E], stats) };
}
