/**
 * The one parametrised tensor-core algorithm: MMA-Sim's fused dot-add (`numerics.md` §8.1, microsoft/MMA-Sim
 * `arithmetic.py`), written on integers held exactly in binary64.
 *
 * One step fuses `len` products and the accumulator c:
 * 1. special values first: the binary64 sum of the products and c decides NaN / ±Inf (NaN codes, Inf·0, Inf − Inf);
 * 2. every operand is `s·2^e` with its MMA-Sim exponent (operand_tables.ts); a product's exponent is `e_a + e_b`
 *    (plus the block-scale exponents), c is one more term with its exponent in the accumulator's own type
 *    (clamped at −126 for fp32, −14 for f16);
 * 3. `E` = the largest exponent of all terms (products and c, zeros included with exponent −126);
 * 4. each term becomes `trunc(value · 2^(n − E))`: truncation **toward zero**, term by term (§8.2: 256 − 2^-6 → 256);
 * 5. the integers are summed exactly; the sum times `2^(E − n)` is normalised and rounded as the profile says
 *    (RZ to 23 or 13 fraction bits, or RNE to fp16), overflow giving ±Inf as MMA-Sim's final cast does.
 *
 * Why binary64 is exact here: an operand value times a power of two is exact; a product of two operands has at most
 * 22 significant bits (tf32 × tf32), so `v_a·v_b·2^(n−E)` is exact and `Math.trunc` of it is the exact truncation.
 * Each truncated term is an integer below `4·2^n` (significands `s_a·s_b < 4`, exponent ≤ E), so a step of at most
 * 64 products plus c with n ≤ 35 sums to less than 2^45 (mxf4nvf4 group terms: 576·4·2^35 < 2^47, five terms < 2^50):
 * every partial sum is an integer below 2^53, so no addition rounds. No BigInt is needed.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { fusedDotAdd } from "./fused_dot_add.ts";
 * // numerics.md §8.2: 256 + 2^-6 + 2^-6 on Hopper FP8 wgmma gives 256 (each 2^-6 is truncated on its own).
 * const a = [256, 2 ** -6, 2 ** -6], b = [1, 1, 1];
 * assert.equal(fusedDotAdd("hopper_wgmma_fp8", a, b, 0, { aFormat: "e4m3", bFormat: "e4m3" }), 256);
 * ```
 * @module
 */
import { MIN_NORMAL_EXPONENT, mmaExponent, type OperandFormat } from "./operand_tables.ts";
import { type TensorCoreProfile, tensorCoreProfile } from "./profiles.ts";
import { ExactSum, pow2 } from "./exact_sum.ts";
import { fma32 } from "../fp32.ts";

/** Output rounding of a fused step: fraction bits, exponent range and mode. */
export interface StepRounding {
  /** Fraction bits kept. */
  readonly frac: number;
  /** Minimum normal exponent (sets the subnormal quantum). */
  readonly minExp: number;
  /** Maximum exponent; results at or above 2^(maxExp+1) become ±Infinity. */
  readonly maxExp: number;
  /** Round to nearest even instead of toward zero. */
  readonly rne: boolean;
}

/** The output roundings of the fused profiles (MMA-Sim `nv_fused_dot_add`, output types f32, f32_e8m13, f16). */
export const STEP_ROUNDINGS: Readonly<Record<"rz_f32" | "rz_e8m13" | "rne_f16", StepRounding>> = Object.freeze({
  rz_f32: Object.freeze({ frac: 23, minExp: -126, maxExp: 127, rne: false }),
  rz_e8m13: Object.freeze({ frac: 13, minExp: -126, maxExp: 127, rne: false }),
  rne_f16: Object.freeze({ frac: 10, minExp: -14, maxExp: 15, rne: true }),
});

const TWO32 = 4294967296;

/**
 * Rounds `sum·2^w` (sum an integer below 2^53 in magnitude, or non-finite) as a fused step's output.
 * @param sum the exact integer sum of truncated terms
 * @param w the weight exponent of one unit of `sum` (E − n)
 * @param r the output rounding
 * @returns the rounded value (an exact zero is +0, as in MMA-Sim)
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { roundSum, STEP_ROUNDINGS } from "./fused_dot_add.ts";
 * // 512 + 2^-5 re-truncated to 13 fraction bits (numerics.md §8.2): 512.
 * assert.equal(roundSum(512 * 2 ** 5 + 1, -5, STEP_ROUNDINGS.rz_e8m13), 512);
 * ```
 */
export function roundSum(sum: number, w: number, r: StepRounding): number {
  if (sum === 0) return 0;
  if (sum !== sum || sum === Infinity || sum === -Infinity) return sum;
  const mag = sum < 0 ? -sum : sum;
  const bl = mag < TWO32 ? 32 - Math.clz32(mag) : 64 - Math.clz32(Math.floor(mag / TWO32));
  const msb = bl - 1 + w;
  const qe = (msb > r.minExp ? msb : r.minExp) - r.frac;
  const sh = qe - w;
  let out: number;
  if (sh <= 0) {
    out = mag * pow2(w);
  } else {
    const q = mag * pow2(-sh); // exact: a 53-bit integer scaled by a power of two
    let t = Math.trunc(q);
    if (r.rne) {
      const rem = q - t;
      if (rem > 0.5 || (rem === 0.5 && t % 2 === 1)) t += 1;
    }
    out = t * pow2(qe);
  }
  if (out >= pow2(r.maxExp + 1)) out = Infinity;
  return sum < 0 ? -out : out;
}

/**
 * One fused step over typed arrays: `len` products `av[aOff+k]·bv[bOff+k]` with exponents `ae + be`, plus c.
 * `xs` is a block-scale exponent added to every product (0 without block scales).
 * @returns the step's rounded result (an fp32 value)
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { fusedStep, STEP_ROUNDINGS } from "./fused_dot_add.ts";
 * // 1·1 + 2^-20·1 from c = 0: 13 kept fraction bits (rz_e8m13) truncate the small term, 23 keep it.
 * const av = new Float64Array([1, 2 ** -20]), ae = new Int32Array([0, -20]);
 * const bv = new Float64Array([1, 1]), be = new Int32Array([0, 0]);
 * assert.equal(fusedStep(av, ae, 0, bv, be, 0, 2, 0, 0, 13, STEP_ROUNDINGS.rz_e8m13), 1);
 * assert.equal(fusedStep(av, ae, 0, bv, be, 0, 2, 0, 0, 23, STEP_ROUNDINGS.rz_f32), 1 + 2 ** -20);
 * ```
 */
export function fusedStep(
  av: Float64Array,
  ae: Int32Array,
  aOff: number,
  bv: Float64Array,
  be: Int32Array,
  bOff: number,
  len: number,
  c: number,
  xs: number,
  n: number,
  r: StepRounding,
): number {
  // c is decomposed in its own dtype (MMA-Sim extract_significand_exponent(c)): the output's minimum exponent
  // (−126 for fp32 accumulators, −14 for f16 ones); a zero c gets −126 whatever the dtype.
  let E = c === 0 || !Number.isFinite(c) ? -126 : mmaExponent(c, r.minExp);
  let mp = -100000;
  for (let k = 0; k < len; k++) {
    const e = ae[aOff + k] + be[bOff + k];
    if (e > mp) mp = e;
  }
  if (mp + xs > E) E = mp + xs;
  const sc = pow2(n - E + xs);
  let sum = Math.trunc(c * pow2(n - E));
  for (let k = 0; k < len; k++) sum += Math.trunc(av[aOff + k] * bv[bOff + k] * sc);
  return roundSum(sum, E - n, r);
}

/**
 * One `mxf4nvf4` step (MMA-Sim `nv_fused_dot_add_with_block_scale`): each group of 16 products is summed exactly,
 * multiplied by its two scales (values `sa[g]`, `sb[g]`, exponents `sea[g]`, `seb[g]`), the group exponent is
 * `sea + seb`, and the groups plus c are fused with `n` fraction bits and RZ to fp32.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { groupScaledStep } from "./fused_dot_add.ts";
 * // 16 products 1·1 in one group with scales 1 (exponent 0) and 2 (exponent 1): 16 · 1 · 2 = 32.
 * const ones = new Float64Array(16).fill(1);
 * assert.equal(groupScaledStep(ones, 0, ones, 0, 16, 0, [1], [0], [2], [1], 25), 32);
 * assert.ok(Number.isNaN(groupScaledStep(ones, 0, ones, 0, 16, 0, [NaN], [0], [2], [1], 25)));
 * ```
 */
export function groupScaledStep(
  av: Float64Array,
  aOff: number,
  bv: Float64Array,
  bOff: number,
  len: number,
  c: number,
  sa: ArrayLike<number>,
  sea: ArrayLike<number>,
  sb: ArrayLike<number>,
  seb: ArrayLike<number>,
  n: number,
): number {
  const groups = Math.ceil(len / 16);
  for (let g = 0; g < groups; g++) {
    if (sa[g] !== sa[g] || sb[g] !== sb[g]) return NaN;
  }
  if (c !== c) return NaN;
  let E = c === 0 || !Number.isFinite(c) ? -126 : mmaExponent(c, -126);
  for (let g = 0; g < groups; g++) if (sea[g] + seb[g] > E) E = sea[g] + seb[g];
  let sum = Math.trunc(c * pow2(n - E));
  const sc = pow2(n - E);
  for (let g = 0; g < groups; g++) {
    let s = 0;
    const k1 = Math.min(len, g * 16 + 16);
    for (let k = g * 16; k < k1; k++) s += av[aOff + k] * bv[bOff + k]; // e2m1 products: multiples of 1/4, exact
    sum += Math.trunc(s * sa[g] * sb[g] * sc);
  }
  return roundSum(sum, E - n, STEP_ROUNDINGS.rz_f32);
}

/** Operand formats of a {@link fusedDotAdd} call, for the exponent clamp of each side. */
export interface FusedDotAddOptions {
  /** Format of a's values (sets the subnormal exponent clamp); default e4m3. */
  aFormat?: OperandFormat | "f32";
  /** Format of b's values; default e4m3. */
  bFormat?: OperandFormat | "f32";
  /** Block-scale exponent added to every product (mx_exponent profiles); default 0. */
  scaleExponent?: number;
}

function truncTf32(x: number): number {
  const f = new Float32Array([x]);
  const u = new Uint32Array(f.buffer);
  u[0] = (u[0] >>> 13) << 13;
  return f[0];
}

/**
 * A chain of fused steps over whole vectors, as one instruction sequence of a profile: the vectors are cut into
 * `termsPerStep` pieces, each fused with the running accumulator (the first with `c`). This is the readable API for
 * targeted vectors; kernel models use the typed-array forms.
 * @param profile a profile name of {@link ./profiles.ts}
 * @param a the a values (already decoded numbers)
 * @param b the b values
 * @param c the initial accumulator (an fp32 value)
 * @param options operand formats and block-scale exponent
 * @returns the accumulator after the last step
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { fusedDotAdd } from "./fused_dot_add.ts";
 * assert.equal(fusedDotAdd("hopper_wgmma_fp8", [256, -(2 ** -6)], [1, 1], 0), 256); // toward zero, not floor
 * assert.equal(fusedDotAdd("exact", [256, -(2 ** -6)], [1, 1], 0), 255.984375);
 * ```
 */
export function fusedDotAdd(
  profile: string | TensorCoreProfile,
  a: readonly number[],
  b: readonly number[],
  c: number,
  options: FusedDotAddOptions = {},
): number {
  const p = typeof profile === "string" ? tensorCoreProfile(profile) : profile;
  if (a.length !== b.length) throw new RangeError(`fusedDotAdd: a has ${a.length} values, b has ${b.length}`);
  const minA = MIN_NORMAL_EXPONENT[options.aFormat ?? "e4m3"], minB = MIN_NORMAL_EXPONENT[options.bFormat ?? "e4m3"];
  if (minA === undefined || minB === undefined) throw new RangeError("fusedDotAdd: unknown operand format");
  const xs = options.scaleExponent ?? 0;
  const conv = p.truncateToTf32 ? truncTf32 : (x: number) => x;
  const av = Float64Array.from(a, conv), bv = Float64Array.from(b, conv);
  const ae = Int32Array.from(av, (x) => Number.isFinite(x) ? mmaExponent(x, minA) : 0);
  const be = Int32Array.from(bv, (x) => Number.isFinite(x) ? mmaExponent(x, minB) : 0);
  const K = a.length;
  if (p.output === "fma_rne_f32") {
    let acc = c;
    for (let k = 0; k < K; k++) acc = fma32(av[k], bv[k] * pow2(xs), acc);
    return acc;
  }
  if (p.output === "exact") {
    const s = new ExactSum();
    s.add(c);
    for (let k = 0; k < K; k++) s.addProduct(av[k] * pow2(xs), bv[k]);
    return s.round(23, -126, 127);
  }
  if (p.blockScale === "group16") {
    throw new RangeError("fusedDotAdd: mxf4nvf4 needs per-group scales; use groupScaledStep");
  }
  const r = STEP_ROUNDINGS[p.output];
  let acc = c;
  for (let k0 = 0; k0 < K; k0 += p.termsPerStep) {
    const len = Math.min(p.termsPerStep, K - k0);
    acc = fusedStep(av, ae, k0, bv, be, k0, len, acc, xs, p.fractionBits, r);
  }
  if (K === 0) acc = fusedStep(av, ae, 0, bv, be, 0, 0, acc, xs, p.fractionBits, r);
  return acc;
}
