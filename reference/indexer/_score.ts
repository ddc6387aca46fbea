/**
 * The score `s_h = Σ_d Q[h,d]·KV[d]` of the indexer, from the tensor-core model (`reference/tensor_core`): one chain of
 * instructions over D starting from zero (DeepGEMM's MQA kernels issue `D / 32` wgmmas with `scale_d = (k != 0)`
 * and never promote; `impls/sm90_fp8_mqa_logits.cuh`).
 * @module
 */
import { fusedDotAdd, fusedStep, STEP_ROUNDINGS } from "../tensor_core/fused_dot_add.ts";
import { type OperandFormat, operandTable } from "../tensor_core/operand_tables.ts";
import { type TensorCoreProfile, tensorCoreProfile } from "../tensor_core/profiles.ts";

/** Decoded operand rows: values and MMA exponents of every code, flattened. */
export interface DecodedOperand {
  /** Values. */
  readonly v: Float64Array;
  /** MMA-Sim exponents. */
  readonly e: Int32Array;
}

/** Decodes a code array of an operand format once, so the inner loops only index. */
export function decodeOperand(format: OperandFormat, codes: ArrayLike<number>): DecodedOperand {
  const t = operandTable(format);
  const v = new Float64Array(codes.length), e = new Int32Array(codes.length);
  for (let i = 0; i < codes.length; i++) {
    v[i] = t.values[codes[i]];
    e[i] = t.exps[codes[i]];
  }
  return { v, e };
}

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
