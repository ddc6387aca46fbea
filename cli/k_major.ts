/**
 * Operands a file stores MN-major, laid out K-major: a safetensors file carries no strides, so where a model needs
 * K-major operands (SM90 FP8) and the op's layout letters store one MN-major, the operand is re-laid K-major, as
 * DeepGEMM's callers pass it: same values, same bits out. Used by `serve`'s `run` and by `identify`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { K_MAJOR_FAULT } from "./k_major.ts";
 * assert.ok(K_MAJOR_FAULT.test('fp8_gemm_tn: SM90 FP8 needs "a" K-major (stride(-1) == 1), got strides [1, 256]'));
 * ```
 * @module
 */
import type { Tensor } from "../reference/tensor/mod.ts";

/** The reference's complaint about an operand that is not K-major (gemm/tensor_arguments.ts `requireKMajor`). */
export const K_MAJOR_FAULT: RegExp = /needs "[ab]" K-major \(stride\(-1\) == 1\)/;

/**
 * The inputs with every operand that the op's layout letters store MN-major (`a` of `t?`, `b` of `?n`) laid out
 * K-major in memory (the same logical tensor: a transposed view of its transposed copy); null when there is none.
 * @param op the op's name (`fp8_gemm_tn`, `m_grouped_fp8_gemm_nn_contiguous`)
 * @param inputs the tensors as read from a file (contiguous)
 * @returns the re-laid inputs, or null
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Tensor } from "../reference/tensor/mod.ts";
 * import { kMajorLayout } from "./k_major.ts";
 * const a = Tensor.zeros("e4m3", [256, 64]); // fp8_gemm_tt stores A as [K, M]
 * const laid = kMajorLayout("fp8_gemm_tt", { a, b: Tensor.zeros("e4m3", [128, 256]) })!;
 * assert.deepEqual(laid.a.shape, [256, 64]);
 * assert.deepEqual(laid.a.strides, [1, 256]); // K innermost once the op transposes it back to [M, K]
 * assert.equal(kMajorLayout("fp8_gemm_nt", { a }), null);
 * ```
 */
export function kMajorLayout(op: string, inputs: Record<string, Tensor>): Record<string, Tensor> | null {
  const letters = /_(nn|nt|tn|tt)(_|$)/.exec(op)?.[1];
  if (letters === undefined) return null;
  const out = { ...inputs };
  let changed = false;
  for (const [name, mnMajor] of [["a", letters[0] === "t"], ["b", letters[1] === "n"]] as const) {
    const t = inputs[name];
    if (!mnMajor || t === undefined || t.ndim !== 2) continue;
    out[name] = t.transpose().contiguous().transpose();
    changed = true;
  }
  return changed ? out : null;
}
