/**
 * fp32 → TF32 (1 sign, 8 exponent, 10 fraction bits, stored in an fp32 container). `deepgemm-ops.md` §7 left the TMA
 * unit's rounding for tensor maps of data type `TFLOAT32` open; it is pinned here: DeepGEMM's own
 * `sm90_tf32_hc_prenorm_gemm` kernel on an H200 (tests/hyperconnection/gpu_probe/deepgemm_hc_run.cu, 2,049 exact ties
 * among 8,192 B values) matched RNE in 2,048 of 2,048 outputs, truncation in 0 and round-half-away in 0
 * [verified on H200]. Truncation (MMA-Sim's `truncate_to_tf32`, what the MMA does with raw fp32 bits) stays a named
 * variant.
 * @module
 */
import { f32Bits, f32FromBits } from "../fp32.ts";

/** The fp32 → TF32 rounding of an operand: drop the low 13 bits, or round to nearest even on them. */
export type Tf32Rounding = "truncate" | "rne";

/** Every TF32 rounding, for validation. */
export const TF32_ROUNDINGS: readonly Tf32Rounding[] = Object.freeze(["truncate", "rne"]);

/**
 * Rounds an fp32 value to TF32 on its bits. NaN and ±Inf pass unchanged; RNE may carry into the exponent (and to Inf).
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { toTf32 } from "./tf32_rounding.ts";
 * const x = 1 + 2 ** -10 + 2 ** -11; // exactly half-way above an odd TF32 value
 * assert.equal(toTf32(x, "truncate"), 1 + 2 ** -10);
 * assert.equal(toTf32(x, "rne"), 1 + 2 ** -9);
 * assert.equal(toTf32(1 + 2 ** -11, "rne"), 1); // tie to even
 * ```
 */
export function toTf32(x: number, rounding: Tf32Rounding): number {
  const u = f32Bits(x);
  if ((u & 0x7f800000) === 0x7f800000) return f32FromBits(u);
  if (rounding === "truncate") return f32FromBits((u & 0xffffe000) >>> 0);
  if (rounding !== "rne") throw new RangeError(`Unknown TF32 rounding "${rounding}"; known: truncate, rne`);
  const r = (u + 0xfff + ((u >>> 13) & 1)) >>> 0;
  return f32FromBits((r & 0xffffe000) >>> 0);
}
