/**
 * The row dot products of Mega MoE's GEMMs, from the tensor-core model: FP8 (e4m3) activations × FP4 (e2m1) weights,
 * one UE8M0 scale per 32 K-elements on each side (recipe (1, 1, 32)), one `kind::mxf8f6f4.block_scale` step per
 * 32-block chained through the fp32 accumulator from zero (`tcgen05_mxf8f6f4`: the two scale exponents are added to
 * every product's exponent); and the BF16 variant's `kind::f16` chain (`tcgen05`).
 * @module
 */
import { fusedDotAdd, fusedStep, STEP_ROUNDINGS } from "../tensor_core/fused_dot_add.ts";
import { operandTable } from "../tensor_core/operand_tables.ts";
import { tensorCoreProfile } from "../tensor_core/profiles.ts";

/** A decoded operand: values and MMA-Sim exponents per element. */
export interface MoeOperand {
  /** Element values. */
  v: Float64Array;
  /** MMA-Sim exponents. */
  e: Int32Array;
}

/**
 * Decodes codes of a format (`e4m3`, `e2m1` unpacked codes, or `bf16` bits).
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { decodeMoeOperand } from "./block_scaled_dot.ts";
 * const a = decodeMoeOperand("e4m3", [0x38, 0x40]);
 * assert.deepEqual([...a.v], [1, 2]);
 * assert.deepEqual([...a.e], [0, 1]);
 * assert.equal(decodeMoeOperand("e2m1", [0x7]).v[0], 6);
 * ```
 */
export function decodeMoeOperand(format: "e4m3" | "e2m1" | "bf16", codes: ArrayLike<number>): MoeOperand {
  const t = operandTable(format);
  const v = new Float64Array(codes.length), e = new Int32Array(codes.length);
  for (let i = 0; i < codes.length; i++) {
    v[i] = t.values[codes[i]];
    e[i] = t.exps[codes[i]];
  }
  return { v, e };
}

/**
 * `Σ_k a[k]·2^(sa[k/32]−127) · b[k]·2^(sb[k/32]−127)` over K as the block-scaled tensor-core chain computes it.
 * @param profileName a tensor-core profile (default `tcgen05_mxf8f6f4`; `exact` rounds the exact sum once)
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { blockScaledDot, decodeMoeOperand } from "./block_scaled_dot.ts";
 * const a = decodeMoeOperand("e4m3", new Uint8Array(32).fill(0x38)); // 1.0
 * const b = decodeMoeOperand("e2m1", new Uint8Array(32).fill(0x2)); // 1.0
 * assert.equal(blockScaledDot(a, 0, new Uint8Array([128]), 0, b, 0, new Uint8Array([126]), 0, 32), 32);
 * ```
 */
export function blockScaledDot(
  a: MoeOperand,
  aOff: number,
  sa: ArrayLike<number>,
  saOff: number,
  b: MoeOperand,
  bOff: number,
  sb: ArrayLike<number>,
  sbOff: number,
  K: number,
  profileName = "tcgen05_mxf8f6f4",
): number {
  const p = tensorCoreProfile(profileName);
  let acc = 0;
  for (let k = 0, g = 0; k < K; k += 32, g++) {
    const xs = (sa[saOff + g] - 127) + (sb[sbOff + g] - 127);
    if (p.output === "rz_f32" || p.output === "rz_e8m13") {
      acc = fusedStep(a.v, a.e, aOff + k, b.v, b.e, bOff + k, 32, acc, xs, p.fractionBits, STEP_ROUNDINGS[p.output]);
    } else {
      acc = fusedDotAdd(
        p,
        Array.from(a.v.subarray(aOff + k, aOff + k + 32)),
        Array.from(b.v.subarray(bOff + k, bOff + k + 32)),
        acc,
        {
          aFormat: "e4m3",
          bFormat: "e2m1",
          scaleExponent: xs,
        },
      );
    }
  }
  return acc;
}

/**
 * A BF16 × BF16 dot product over K as a `kind::f16` chain (default profile `tcgen05`).
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { bf16Dot, decodeMoeOperand } from "./block_scaled_dot.ts";
 * const a = decodeMoeOperand("bf16", new Uint16Array(16).fill(0x3f80));
 * assert.equal(bf16Dot(a, 0, a, 0, 16), 16);
 * ```
 */
export function bf16Dot(
  a: MoeOperand,
  aOff: number,
  b: MoeOperand,
  bOff: number,
  K: number,
  profileName = "tcgen05",
): number {
  const p = tensorCoreProfile(profileName);
  if (p.output === "rz_f32" || p.output === "rz_e8m13") {
    let acc = 0;
    for (let k = 0; k < K; k += p.termsPerStep) {
      acc = fusedStep(
        a.v,
        a.e,
        aOff + k,
        b.v,
        b.e,
        bOff + k,
        Math.min(p.termsPerStep, K - k),
        acc,
        0,
        p.fractionBits,
        STEP_ROUNDINGS[p.output],
      );
    }
    return acc;
  }
  return fusedDotAdd(p, Array.from(a.v.subarray(aOff, aOff + K)), Array.from(b.v.subarray(bOff, bOff + K)), 0, {
    aFormat: "bf16",
    bFormat: "bf16",
  });
}
