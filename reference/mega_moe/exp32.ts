/**
 * Correctly rounded fp32 `exp(x)` and `2^y`, evaluated exactly enough to prove the rounding, with no `Math.exp`.
 *
 * Algorithm (double-double arithmetic on binary64, error-free transforms only):
 * 1. Reduce: `x = k·ln2 + r`, `k = round(x/ln2)`, |k| ≤ 216 for fp32 inputs that do not saturate. ln2 is split into
 *    three binary64 parts of at most 40 significant bits each (`LN2_1 + LN2_2 + LN2_3`, |error| < 2^-125), so every
 *    `k·LN2_i` is exact; `x − k·LN2_1` is exact (Sterbenz: both lie within a factor 2 when k ≠ 0), the two other parts
 *    are subtracted with TwoSum, giving r as a double-double with |r| ≤ 0.3466 and absolute error < 2^-116.
 *    For `2^y`: `y = k + f` with k = round(y) (exact), `r = f·ln2` as a double-double product (error < 2^-104·|r|).
 * 2. Evaluate `e^r = Σ_{n≤27} r^n/n!` in double-double (each term `t_n = t_{n−1}·r/n`); the truncated tail is below
 *    0.35^28/28! < 2^-140, and each of the ~60 double-double operations adds a relative error below 2^-104, so the
 *    total relative error is below 2^-96.
 * 3. Scale by 2^k (exact in binary64 for every fp32-relevant result, subnormal fp32 results included).
 * 4. Round the double-double `hi + lo` to fp32: find the two fp32 neighbours a < hi < b and their midpoint m (all exact
 *    in binary64), and decide by the sign of `(hi − m) + lo`; it is decided whenever its magnitude exceeds the error
 *    bound 2^-90·hi. The function throws instead of guessing when the bound does not separate the value from the
 *    midpoint (exp of a non-zero fp32 is transcendental, so this would need an input within 2^-90 of a midpoint;
 *    the exhaustive bf16 sweep in the tests never reaches it).
 * @module
 */
import { pow2 } from "../formats/_pow2.ts";
import { f32Bits, f32FromBits } from "../fp32.ts";

// ln2 = LN2_1 + LN2_2 + LN2_3 + O(2^-125); each part has ≤ 40 significant bits (k·part exact for |k| < 2^13).
const LN2_1 = 0.6931471805598903;
const LN2_2 = 5.497923018708371e-14;
const LN2_3 = -1.6408922477413735e-27;
const INV_LN2 = 1.4426950408889634;

function twoSum(a: number, b: number): [number, number] {
  const s = a + b, bb = s - a;
  return [s, (a - (s - bb)) + (b - bb)];
}

function split(a: number): [number, number] {
  const c = 134217729 * a; // 2^27 + 1 (Dekker)
  const h = c - (c - a);
  return [h, a - h];
}

function twoProd(a: number, b: number): [number, number] {
  const p = a * b;
  const [ah, al] = split(a), [bh, bl] = split(b);
  return [p, ((ah * bh - p) + ah * bl + al * bh) + al * bl];
}

/** double-double + double-double */
function ddAdd(ah: number, al: number, bh: number, bl: number): [number, number] {
  const [s, e] = twoSum(ah, bh);
  const [t, f] = twoSum(al, bl);
  const [s2, e2] = twoSum(s, e + t);
  return twoSum(s2, e2 + f);
}

/** double-double × double-double */
function ddMul(ah: number, al: number, bh: number, bl: number): [number, number] {
  const [p, e] = twoProd(ah, bh);
  return twoSum(p, e + (ah * bl + al * bh));
}

/** double-double ÷ small integer */
function ddDivInt(ah: number, al: number, n: number): [number, number] {
  const q1 = ah / n;
  const [p, e] = twoProd(q1, n);
  const q2 = ((ah - p) - e + al) / n;
  return twoSum(q1, q2);
}

function expDd(rh: number, rl: number): [number, number] {
  let sh = 1, sl = 0, th = 1, tl = 0;
  for (let n = 1; n <= 27; n++) {
    [th, tl] = ddMul(th, tl, rh, rl);
    [th, tl] = ddDivInt(th, tl, n);
    [sh, sl] = ddAdd(sh, sl, th, tl);
  }
  return [sh, sl];
}

/** Rounds hi + lo (|lo| ≤ ulp(hi)/2, relative error of the pair below 2^-90) to fp32, or throws if undecidable. */
function roundDdToF32(hi: number, lo: number, what: string): number {
  const r = Math.fround(hi);
  if (r === hi) return r;
  let a: number, b: number;
  if (r === Infinity) {
    a = f32FromBits(0x7f7fffff), b = 2 ** 128;
  } else if (r < hi) {
    a = r, b = f32FromBits(f32Bits(r) + 1);
  } else {
    b = r, a = f32FromBits(f32Bits(r) - 1);
  }
  const m = (a + b) / 2; // exact: a, b are fp32, the midpoint has one more bit
  const t = hi - m; // exact: hi and m are within one fp32 ulp
  const d = t + lo;
  if (Math.abs(d) <= hi * 2 ** -90) throw new RangeError(`${what}: rounding undecidable at the proven error bound`);
  const up = d > 0;
  return up ? (b === 2 ** 128 ? Infinity : b) : a;
}

/**
 * Correctly rounded (RNE) fp32 `e^x` for an fp32 `x`: overflow gives +Inf, underflow rounds through fp32 subnormals
 * to 0; NaN gives NaN. This is the exactly specified stand-in for CUDA's `expf` (which is accurate to 2 ulp, not
 * correctly rounded: where they differ the GPU result is [unknown] to this oracle).
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { expF32 } from "./exp32.ts";
 * import { f32Bits } from "../fp32.ts";
 * assert.equal(f32Bits(expF32(1)), 0x402df854);
 * assert.equal(f32Bits(expF32(-1)), 0x3ebc5ab2);
 * assert.equal(expF32(0), 1);
 * assert.equal(expF32(89), Infinity);
 * assert.equal(expF32(-104), 0);
 * ```
 */
export function expF32(x: number): number {
  x = Math.fround(x);
  if (Number.isNaN(x)) return NaN;
  if (x > 89) return Infinity; // e^89 > 2^128
  if (x < -104) return 0; // e^-104 < 2^-150: rounds to 0
  if (x === 0) return 1;
  const k = Math.round(x * INV_LN2);
  const r1 = x - k * LN2_1; // exact (see the module doc)
  let [rh, rl] = twoSum(r1, -k * LN2_2);
  [rh, rl] = ddAdd(rh, rl, -k * LN2_3, 0);
  const [eh, el] = expDd(rh, rl);
  const s = pow2(k);
  return roundDdToF32(eh * s, el * s, "expF32");
}

/**
 * Correctly rounded (RNE) fp32 `2^y` for an fp32 `y`: the exactly specified stand-in for the MUFU `ex2.approx.f32`
 * instruction, whose hardware table is [unknown] (it is accurate to about 2 ulp, so real results can differ).
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { exp2F32 } from "./exp32.ts";
 * import { f32Bits } from "../fp32.ts";
 * assert.equal(exp2F32(3), 8);
 * assert.equal(exp2F32(-149), 2 ** -149);
 * assert.equal(f32Bits(exp2F32(0.5)), 0x3fb504f3); // √2 rounded to fp32
 * ```
 */
export function exp2F32(y: number): number {
  y = Math.fround(y);
  if (Number.isNaN(y)) return NaN;
  if (y >= 128) return Infinity;
  if (y < -151) return 0;
  const k = Math.round(y);
  const f = y - k; // exact
  if (f === 0) return k < -149 ? 0 : pow2(k); // 2^-150 ties to 0 (even)
  // r = f·ln2 in double-double.
  const [p1, e1] = twoProd(f, LN2_1);
  const [rh, rl] = twoSum(p1, e1 + f * LN2_2);
  const [eh, el] = expDd(rh, rl);
  const s = pow2(k);
  return roundDdToF32(eh * s, el * s, "exp2F32");
}
