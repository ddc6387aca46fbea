/**
 * What a mismatch map should know about an op's output besides the two tensors: what its leading dimension is
 * (a group of a grouped GEMM, a K-split of the HC GEMM, a batch of an einsum) and which rows the kernel must not
 * compute (rows past `masked_m` of a masked grouped GEMM, rows labelled −1 in a contiguous grouped layout), so a map
 * can say "every mismatch is in masked rows".
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Tensor } from "../tensor/tensor.ts";
 * import { mapContext } from "./map_context.ts";
 * const ctx = mapContext("m_grouped_fp8_gemm_nt_masked", { masked_m: Tensor.from("i32", [2], new Int32Array([3, 0])) },
 *   {}, "d", [2, 4, 8]);
 * assert.deepEqual(Array.from(ctx.maskedRows!), [0, 0, 0, 1, 1, 1, 1, 1]);
 * assert.equal(ctx.maskedRowsWhy, "past masked_m");
 * ```
 * @module
 */
import type { MismatchMapOptions } from "../compare/mismatch_map.ts";
import type { Tensor } from "../tensor/tensor.ts";

/**
 * The map options of one output of an op.
 * @param op DeepGEMM's op name
 * @param inputs the op's tensors
 * @param scalars its scalars
 * @param output the output's name
 * @param shape the output's shape
 * @returns group label and masked rows (where the op has them)
 */
export function mapContext(
  op: string,
  inputs: Record<string, Tensor>,
  scalars: Record<string, unknown>,
  output: string,
  shape: readonly number[],
): MismatchMapOptions {
  const ctx: MismatchMapOptions = {};
  if (op === "tf32_hc_prenorm_gemm" && scalars.num_splits !== undefined) ctx.groupLabel = "split";
  else if (/einsum/.test(op)) ctx.groupLabel = "batch";
  else ctx.groupLabel = "group";
  if (output !== "d") return ctx;
  const mm = inputs.masked_m;
  if (/_masked$/.test(op) && mm !== undefined && shape.length === 3 && mm.numel === shape[0]) {
    const [G, M] = shape;
    const rows = new Uint8Array(G * M);
    for (let g = 0; g < G; g++) {
      const valid = Number(mm.at(g));
      for (let r = Math.max(0, valid); r < M; r++) rows[g * M + r] = 1;
    }
    return { ...ctx, maskedRows: rows, maskedRowsWhy: "past masked_m" };
  }
  const gl = inputs.grouped_layout;
  if (
    /^m_grouped_.*_contiguous$/.test(op) && gl !== undefined && scalars.use_psum_layout !== true &&
    shape.length === 2 && gl.numel === shape[0]
  ) {
    const rows = new Uint8Array(shape[0]);
    for (let r = 0; r < shape[0]; r++) rows[r] = Number(gl.at(r)) < 0 ? 1 : 0;
    return { ...ctx, maskedRows: rows, maskedRowsWhy: "labelled −1 in grouped_layout" };
  }
  return ctx;
}
