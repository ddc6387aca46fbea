/**
 * Stochastic rounding driven by caller-supplied random bits, so results are deterministic and reproducible.
 *
 * - {@link stochasticRoundFp4Te}: TransformerEngine's software emulation of `cvt.rs.satfinite.e2m1x4.f32`
 *   (`stochastic_round_fp4_e2m1`, numerics.md §6): `u = (rbits & 0xFF) / 256`, step 0.5/1/2 by binade,
 *   `t = fma(u, step, |x|)`, then `min(floor(t / step_t) · step_t, 6)` with the sign of x; NaN gives +6.
 * - {@link stochasticRound}: the generic rule for any format: with `N` random bits `r`, round |x| up from the
 *   representable value below it iff `floor(frac · 2^N) + r ≥ 2^N` (frac = position of |x| between its two neighbours),
 *   i.e. probability `floor(frac · 2^N) / 2^N`; saturating to ±max; NaN → the format's NaN (E2M1: +6, as CUDA).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { stochasticRoundFp4Te } from "./stochastic_rounding.ts";
 * // 1.25 lies halfway between 1 and 1.5: u < 0.5 rounds down, u ≥ 0.5 up
 * assert.equal(stochasticRoundFp4Te(0x3fa00000, 127), 0x2);
 * assert.equal(stochasticRoundFp4Te(0x3fa00000, 128), 0x3);
 * ```
 * @module
 */
import { type Encoder, encoderFor } from "../formats/codec.ts";
import { decodeTable } from "../formats/batch.ts";
import { f32FromBits, fma32 } from "../fp32.ts";

const E2M1_VALUES = [0, 0.5, 1, 1.5, 2, 3, 4, 6];

function e2m1CodeOf(magnitude: number): number {
  return E2M1_VALUES.indexOf(magnitude);
}

/**
 * TransformerEngine's stochastic FP4 rounding (software emulation) of one fp32 value.
 *
 * @param xBits fp32 bits of the (already scaled) value
 * @param rbits random bits; the low 8 are used
 * @returns the E2M1 code
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { stochasticRoundFp4Te } from "./stochastic_rounding.ts";
 * assert.equal(stochasticRoundFp4Te(0x7fc00000, 0), 0x7); // NaN → +6
 * assert.equal(stochasticRoundFp4Te(0xc1200000, 255), 0xf); // −10 → −6
 * ```
 */
export function stochasticRoundFp4Te(xBits: number, rbits: number): number {
  const x = f32FromBits(xBits);
  if (x !== x) return 0x7;
  const sign = (xBits >>> 31) << 3;
  const a = Math.abs(x);
  const u = (rbits & 0xff) / 256;
  const step = a >= 4 ? 2 : a >= 2 ? 1 : 0.5;
  const t = fma32(u, step, a);
  const stepT = t >= 4 ? 2 : t >= 2 ? 1 : 0.5;
  const q = Math.min(Math.floor(t / stepT) * stepT, 6);
  return sign | e2m1CodeOf(q);
}

const RZ_CACHE = new Map<string, Encoder>();
const NAN_CODE: Record<string, number> = { e4m3: 0x7f, e5m2: 0x7f, e2m1: 0x7 };

/**
 * Generic stochastic rounding of one fp32 value to `format` with `randomBits` random bits.
 *
 * @param format `e4m3`, `e5m2` or `e2m1`
 * @param xBits fp32 bits
 * @param rbits random bits (the low `randomBits` are used)
 * @param randomBits how many random bits (1–24, default 8)
 * @returns the code
 * @throws {RangeError} for another format or a bad bit count
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { stochasticRound } from "./stochastic_rounding.ts";
 * // 1.03125 is a quarter of the way from 1 (0x38) to 1.125 (0x39): with 2 random bits only r = 3 rounds up
 * assert.deepEqual([0, 1, 2, 3].map((r) => stochasticRound("e4m3", 0x3f840000, r, 2)), [0x38, 0x38, 0x38, 0x39]);
 * ```
 */
export function stochasticRound(
  format: "e4m3" | "e5m2" | "e2m1",
  xBits: number,
  rbits: number,
  randomBits = 8,
): number {
  if (!(format in NAN_CODE)) throw new RangeError(`stochasticRound: format "${format}" is not e4m3, e5m2 or e2m1`);
  if (!Number.isInteger(randomBits) || randomBits < 1 || randomBits > 24) {
    throw new RangeError(`stochasticRound: randomBits ${randomBits} must be 1–24`);
  }
  xBits >>>= 0;
  const abs = xBits & 0x7fffffff;
  if (abs > 0x7f800000) return NAN_CODE[format];
  let rz = RZ_CACHE.get(format);
  if (rz === undefined) {
    rz = encoderFor(format, { rounding: "rz", overflow: "saturate" });
    RZ_CACHE.set(format, rz);
  }
  const signBit = format === "e2m1" ? 0x8 : 0x80;
  const lo = rz(abs); // largest representable magnitude ≤ |x| (saturated)
  const table = decodeTable(format);
  const maxCode = format === "e4m3" ? 0x7e : format === "e5m2" ? 0x7b : 0x7;
  let code = lo;
  if (lo < maxCode) {
    const ax = f32FromBits(abs), vlo = table[lo], vhi = table[lo + 1];
    const frac = (ax - vlo) / (vhi - vlo); // exact: the spacing is a power of two
    const scaled = Math.floor(frac * 2 ** randomBits);
    if (scaled + (rbits & (2 ** randomBits - 1)) >= 2 ** randomBits) code = lo + 1;
  }
  return (xBits >>> 31) !== 0 ? code | signBit : code;
}
