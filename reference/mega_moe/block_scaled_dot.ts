/**
 * The row dot products of Mega MoE's GEMMs, from the tensor-core model: FP8 (e4m3) activations × FP4 (e2m1) weights,
 * one UE8M0 scale per 32 K-elements on each side (recipe (1, 1, 32)), one `kind::mxf8f6f4.block_scale` step per
 * 32-block chained through the fp32 accumulator from zero (`tcgen05_mxf8f6f4`: the two scale exponents are added to
 * every product's exponent); and the BF16 variant's `kind::f16` chain (`tcgen05`).
 * @module
 */
import { fusedDotAdd, fusedStep, STEP_ROUNDINGS } from "../tensor_core/fused_dot_add.ts";
import type { DecodedOperand } from "../tensor_core/decoded_operand.ts";
import { tensorCoreProfile } from "../tensor_core/profiles.ts";

/**
 * `Σ_k a[k]·2^(sa[k/32]−127) · b[k]·2^(sb[k/32]−127)` over K as the block-scaled tensor-core chain computes it.
 * @param profileName a tensor-core profile (default `tcgen05_mxf8f6f4`; `exact` rounds the exact sum once)
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { decodeOperand } from "../tensor_core/decoded_operand.ts";
 * import { blockScaledDot } from "./block_scaled_dot.ts";
 * const a = decodeOperand("e4m3", new Uint8Array(32).fill(0x38)); // 1.0
 * const b = decodeOperand("e2m1", new Uint8Array(32).fill(0x2)); // 1.0
 * assert.equal(blockScaledDot(a, 0, new Uint8Array([128]), 0, b, 0, new Uint8Array([126]), 0, 32), 32);
 * ```
 */
export function blockScaledDot(
  a: DecodedOperand,
  aOff: number,
  sa: ArrayLike<number>,
  saOff: number,
  b: DecodedOperand,
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
 * import { decodeOperand } from "../tensor_core/decoded_operand.ts";
 * import { bf16Dot } from "./block_scaled_dot.ts";
 * const a = decodeOperand("bf16", new Uint16Array(16).fill(0x3f80));
 * assert.equal(bf16Dot(a, 0, a, 0, 16), 16);
 * ```
 */
export function bf16Dot(
  a: DecodedOperand,
  aOff: number,
  b: DecodedOperand,
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
