/**
 * Packed FP4 operands of the SM100 indexer (`deepgemm-ops.md` §8.1, §2.8) and their block-scaled dot product.
 *
 * Storage, as `per_token_cast_to_fp4(x, use_ue8m0=True, gran_k=32, use_packed_ue8m0=True)` writes it: a row of D
 * E2M1 codes is D/2 bytes, byte j = `code[2j] | code[2j+1] << 4` (low nibble = even element); its D/32 UE8M0 scales
 * are the bytes of one little-endian int32, byte k = scale of elements `[32k, 32k+32)` (D = 64 uses bytes 0 and 1;
 * bytes 2 and 3 are the 127 pads and are not read).
 *
 * In the tensor core (`tcgen05.mma kind::mxf4.block_scale.block32`) a scale byte b means 2^(b−127) (byte 0 is
 * 2^-127, not 0 — the SM100 SF packer relies on it, §5.3; byte 255 is the UE8M0 NaN). Note that DeepGEMM's Python
 * `unpack_ue8m0_from_int` decodes byte 0 as +0 instead; it is not used by the kernel.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { decodeFp4Rows, fp4ScorerFor } from "./fp4_operands.ts";
 * // One row of D = 64: every code 2 (1.0); scales 2^1 (byte 128) and 2^-1 (byte 126).
 * const bytes = new Uint8Array(32).fill(0x22), words = new Int32Array([0x7f7f7e80]);
 * const a = decodeFp4Rows(bytes, 0, 1, 64, words, 0);
 * assert.deepEqual([a.sv[0], a.sv[1]], [2, 0.5]);
 * // s = Σ (1·2)(1·2) over 32 + Σ (1·0.5)(1·0.5) over 32 = 128 + 8
 * assert.equal(fp4ScorerFor("tcgen05_mxf4nvf4")(a, 0, a, 0, 64), 136);
 * ```
 * @module
 */
import { fusedStep, groupScaledStep, STEP_ROUNDINGS } from "../tensor_core/fused_dot_add.ts";
import { operandTable } from "../tensor_core/operand_tables.ts";
import { tensorCoreProfile } from "../tensor_core/profiles.ts";
import { ExactSum } from "../tensor_core/exact_sum.ts";

/** K elements per UE8M0 scale in the FP4 indexer (`gran_k = 32`). */
export const FP4_SCALE_GRAN = 32;

/** Decoded FP4 rows: E2M1 values and MMA-Sim exponents per element; scale values and exponents per (row, group). */
export interface Fp4Rows {
  /** Values, `rows · D`. */
  readonly v: Float64Array;
  /** MMA-Sim exponents of the values. */
  readonly e: Int32Array;
  /** Scale values 2^(b−127) (NaN for byte 255), `rows · D/32`. */
  readonly sv: Float64Array;
  /** Scale exponents b − 127. */
  readonly se: Int32Array;
}

/**
 * Decodes `rows` packed FP4 rows of D elements starting at byte `byteOff`, with one packed int32 scale word per row
 * starting at `words[wordOff]`.
 * @param bytes packed codes (Int8Array or Uint8Array: only the low 8 bits are read)
 * @param byteOff first byte
 * @param rows number of rows
 * @param D elements per row (64 or 128)
 * @param words packed UE8M0 scale words
 * @param wordOff first word
 */
export function decodeFp4Rows(
  bytes: ArrayLike<number>,
  byteOff: number,
  rows: number,
  D: number,
  words: ArrayLike<number>,
  wordOff: number,
): Fp4Rows {
  const t = operandTable("e2m1");
  const n = rows * D, G = D / FP4_SCALE_GRAN;
  const v = new Float64Array(n), e = new Int32Array(n), sv = new Float64Array(rows * G), se = new Int32Array(rows * G);
  for (let i = 0; i < n; i += 2) {
    const b = bytes[byteOff + (i >> 1)] & 0xff;
    v[i] = t.values[b & 0xf];
    e[i] = t.exps[b & 0xf];
    v[i + 1] = t.values[b >>> 4];
    e[i + 1] = t.exps[b >>> 4];
  }
  for (let r = 0; r < rows; r++) {
    const w = words[wordOff + r];
    for (let k = 0; k < G; k++) {
      const b = (w >>> (8 * k)) & 0xff;
      sv[r * G + k] = b === 255 ? NaN : 2 ** (b - 127); // integer power of two: exact
      se[r * G + k] = b - 127;
    }
  }
  return { v, e, sv, se };
}

/** A block-scaled dot product of row `aRow` of `a` and row `bRow` of `b` (D elements) from c = 0. */
export type Fp4Scorer = (a: Fp4Rows, aRow: number, b: Fp4Rows, bRow: number, D: number) => number;

/**
 * The FP4 scorer of a tensor-core profile:
 * - `group16` (`tcgen05_mxf4nvf4`, the SM100 default): steps of 64 (D = 128 chains two), each group of 16 products
 *   summed exactly, times its two scales, the groups and the accumulator fused (MMA-Sim, 35 fraction bits, RZ);
 * - `mx_exponent` (`tcgen05_mxf8f6f4`): steps of 32 with the scale exponents added to every product exponent;
 * - `exact`: the exact scaled sum rounded once to fp32 (RNE).
 * A NaN scale (byte 255) makes the score NaN.
 * @param profileName a profile of `reference/tensor_core/profiles.ts`
 * @throws RangeError for a profile that cannot take block-scaled E2M1 operands
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { fp4ScorerFor } from "./fp4_operands.ts";
 * assert.throws(() => fp4ScorerFor("hopper_wgmma_fp8"), RangeError);
 * ```
 */
export function fp4ScorerFor(profileName: string): Fp4Scorer {
  const p = tensorCoreProfile(profileName);
  const n = p.fractionBits, G = FP4_SCALE_GRAN;
  const nanScale = (a: Fp4Rows, ao: number, b: Fp4Rows, bo: number, groups: number) => {
    for (let g = 0; g < groups; g++) if (a.sv[ao + g] !== a.sv[ao + g] || b.sv[bo + g] !== b.sv[bo + g]) return true;
    return false;
  };
  if (p.output === "exact") {
    const acc = new ExactSum();
    return (a, aRow, b, bRow, D) => {
      const ao = aRow * (D / G), bo = bRow * (D / G);
      if (nanScale(a, ao, b, bo, D / G)) return NaN;
      acc.reset();
      for (let k = 0; k < D; k++) {
        const g = k >> 5;
        acc.addProduct(a.v[aRow * D + k] * a.sv[ao + g], b.v[bRow * D + k] * b.sv[bo + g]);
      }
      return acc.round(23, -126, 127);
    };
  }
  if (p.blockScale === "group16") {
    const sa = new Float64Array(4), sea = new Int32Array(4), sb = new Float64Array(4), seb = new Int32Array(4);
    return (a, aRow, b, bRow, D) => {
      const ao = aRow * (D / G), bo = bRow * (D / G);
      let acc = 0;
      for (let k = 0; k < D; k += p.termsPerStep) {
        const len = Math.min(p.termsPerStep, D - k);
        for (let g = 0; g * 16 < len; g++) {
          const sg = (k + 16 * g) >> 5;
          sa[g] = a.sv[ao + sg];
          sea[g] = a.se[ao + sg];
          sb[g] = b.sv[bo + sg];
          seb[g] = b.se[bo + sg];
        }
        acc = groupScaledStep(a.v, aRow * D + k, b.v, bRow * D + k, len, acc, sa, sea, sb, seb, n);
      }
      return acc;
    };
  }
  if (p.blockScale === "mx_exponent" && (p.output === "rz_f32" || p.output === "rz_e8m13" || p.output === "rne_f16")) {
    const r = STEP_ROUNDINGS[p.output], T = Math.min(p.termsPerStep, G);
    return (a, aRow, b, bRow, D) => {
      const ao = aRow * (D / G), bo = bRow * (D / G);
      if (nanScale(a, ao, b, bo, D / G)) return NaN;
      let acc = 0;
      for (let k = 0; k < D; k += T) {
        const g = k >> 5;
        const xs = a.se[ao + g] + b.se[bo + g];
        acc = fusedStep(a.v, a.e, aRow * D + k, b.v, b.e, bRow * D + k, Math.min(T, D - k), acc, xs, n, r);
      }
      return acc;
    };
  }
  throw new RangeError(
    `Tensor-core profile "${p.name}" cannot take block-scaled E2M1 operands (use tcgen05_mxf4nvf4, tcgen05_mxf8f6f4 or exact)`,
  );
}
