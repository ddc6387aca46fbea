/**
 * The score `s_h = Σ_d Q[h,d]·KV[d]` of the indexer, from the tensor-core model (`reference/tensor_core`): one chain of
 * instructions over D starting from zero (DeepGEMM's MQA kernels issue `D / 32` wgmmas with `scale_d = (k != 0)`
 * and never promote; `impls/sm90_fp8_mqa_logits.cuh`).
 * @module
 */
import { fusedDotAdd, fusedStep, STEP_ROUNDINGS } from "../tensor_core/fused_dot_add.ts";
import type { OperandFormat } from "../tensor_core/operand_tables.ts";
import type { DecodedOperand } from "../tensor_core/decoded_operand.ts";
import { type TensorCoreProfile, tensorCoreProfile } from "../tensor_core/profiles.ts";

/** A dot product of two decoded rows of length D, as the tensor-core profile computes it from c = 0. */
export type Scorer = (a: DecodedOperand, aOff: number, b: DecodedOperand, bOff: number, D: number) => number;

/**
 * The scorer of a tensor-core profile (fused profiles step through `termsPerStep`-wide chunks; the others go through
 * the readable {@link fusedDotAdd}).
 * @param profileName a profile of `reference/tensor_core/profiles.ts`
 * @param format the operand format of both sides
 */
export function scorerFor(profileName: string, format: OperandFormat = "e4m3"): Scorer {
  const p: TensorCoreProfile = tensorCoreProfile(profileName);
  if (p.blockScale !== "group16" && (p.output === "rz_f32" || p.output === "rz_e8m13" || p.output === "rne_f16")) {
    const r = STEP_ROUNDINGS[p.output], n = p.fractionBits, step = p.termsPerStep;
    return (a, aOff, b, bOff, D) => {
      let acc = 0;
      for (let k = 0; k < D; k += step) {
        acc = fusedStep(a.v, a.e, aOff + k, b.v, b.e, bOff + k, Math.min(step, D - k), acc, 0, n, r);
      }
      return acc;
    };
  }
  return (a, aOff, b, bOff, D) =>
    fusedDotAdd(p, Array.from(a.v.subarray(aOff, aOff + D)), Array.from(b.v.subarray(bOff, bOff + D)), 0, {
      aFormat: format,
      bFormat: format,
    });
}
