/**
 * An exact (Kulisch-style) accumulator for sums of binary64 values, with one correct rounding at the end.
 * It is the "no rounding until the end" arithmetic of the `exact` profile and kernel model, and of the tests.
 *
 * Why it is exact: the accumulator is a fixed-point integer in base 2^32 whose lowest limb weighs 2^-1152
 * (below binary64's smallest subnormal 2^-1074) and whose 72 limbs reach 2^1152 (above binary64's largest value).
 * A binary64 `x = m·2^e` (`m < 2^53`) is added as three limb contributions `< 2^32` each, obtained by exact
 * divisions by powers of two; limbs are stored in doubles, so up to 2^20 additions (each adding < 2^32 per limb)
 * stay below 2^53 before carries are propagated. Products are added exactly by Veltkamp splitting (each half
 * product has at most 53 bits).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ExactSum } from "./exact_sum.ts";
 * const s = new ExactSum();
 * s.add(2 ** 60); s.add(1); s.add(-(2 ** 60)); // a double sum would give 0
 * assert.equal(s.round(23, -126, 127), 1);
 * ```
 * @module
 */

import { pow2 } from "../formats/_pow2.ts";

const NLIMBS = 72;
const MINE = -1152;
const TWO32 = 4294967296;
const TWO64 = TWO32 * TWO32;
const SPLIT = 134217729; // 2^27 + 1 (Veltkamp)
const F64 = new Float64Array(1);
const U32 = new Uint32Array(F64.buffer);
const POW2_SMALL = Float64Array.from({ length: 64 }, (_, i) => pow2(i));

/** Exact power of two 2^k (shared table, `formats/_pow2.ts`; re-exported here for existing callers). */
export { pow2 };

/**
 * An exact sum of binary64 values (see the module doc).
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ExactSum } from "./exact_sum.ts";
 * const s = new ExactSum();
 * s.addProduct(1 + 2 ** -30, 1 - 2 ** -30); // exactly 1 − 2^-60: no double holds it
 * assert.equal(s.round(23, -126, 127), 1); // RNE to fp32
 * assert.equal(s.round(23, -126, 127, "rz"), 1 - 2 ** -24); // RZ keeps it below 1
 * ```
 */
export class ExactSum {
  #limbs = new Float64Array(NLIMBS);
  #scratch = new Float64Array(NLIMBS);
  #adds = 0;
  // Watermarks: every limb outside [#lo, #hi] is zero, so reset and round touch only the limbs in use.
  #lo = NLIMBS;
  #hi = -1;
  #nan = false;
  #posInf = false;
  #negInf = false;

  /** Clears the sum to zero. */
  reset(): void {
    if (this.#hi >= this.#lo) this.#limbs.fill(0, this.#lo, this.#hi + 1);
    this.#lo = NLIMBS;
    this.#hi = -1;
    this.#adds = 0;
    this.#nan = this.#posInf = this.#negInf = false;
  }

  /**
   * Adds a binary64 value exactly (NaN and infinities are remembered and decide the rounded result).
   * @param x the value
   */
  add(x: number): void {
    if (x === 0) return;
    if (x !== x) {
      this.#nan = true;
      return;
    }
    if (x === Infinity) {
      this.#posInf = true;
      return;
    }
    if (x === -Infinity) {
      this.#negInf = true;
      return;
    }
    F64[0] = x;
    const hi = U32[1], lo = U32[0];
    const bexp = (hi >>> 20) & 0x7ff;
    let m: number, e: number;
    if (bexp === 0) {
      m = (hi & 0xfffff) * TWO32 + lo;
      e = -1074;
    } else {
      m = ((hi & 0xfffff) + 0x100000) * TWO32 + lo;
      e = bexp - 1075;
    }
    const o = e - MINE;
    const i = o >>> 5;
    const t = m * POW2_SMALL[o & 31]; // < 2^85 with 53 significant bits: exact
    const h = Math.floor(t / TWO64);
    const rem = t - h * TWO64; // exact: representable, and IEEE subtraction of a representable result is exact
    const mid = Math.floor(rem / TWO32);
    const l = rem - mid * TWO32;
    const L = this.#limbs;
    if (i < this.#lo) this.#lo = i;
    if (i + 2 > this.#hi) this.#hi = i + 2;
    if (x > 0) {
      L[i] += l;
      L[i + 1] += mid;
      L[i + 2] += h;
    } else {
      L[i] -= l;
      L[i + 1] -= mid;
      L[i + 2] -= h;
    }
    if (++this.#adds >= 1 << 20) {
      this.#carry(L, 0, NLIMBS - 1);
      this.#hi = NLIMBS - 1; // a negative sum carries −1 up to the top limb
    }
  }

  /**
   * Adds the exact product `a·b` of two binary64 values (Veltkamp split into four exact half products).
   * @param a first factor (|a| < 2^995)
   * @param b second factor (|b| < 2^995)
   */
  addProduct(a: number, b: number): void {
    const p = a * b;
    if (!Number.isFinite(p) || p === 0) {
      if (a === 0 || b === 0) {
        if (Number.isFinite(a) && Number.isFinite(b)) return;
      }
      this.add(p);
      return;
    }
    let c = SPLIT * a;
    const ah = c - (c - a), al = a - ah;
    c = SPLIT * b;
    const bh = c - (c - b), bl = b - bh;
    this.add(ah * bh);
    this.add(ah * bl);
    this.add(al * bh);
    this.add(al * bl);
  }

  /** Normalises limbs lo … top − 1 to [0, 2^32), pushing carries up to limb `top`. */
  #carry(L: Float64Array, lo: number, top: number): void {
    for (let i = lo; i < top; i++) {
      const v = L[i];
      if (v >= 0 && v < TWO32) continue;
      const q = Math.floor(v / TWO32);
      L[i] = v - q * TWO32;
      L[i + 1] += q;
    }
    this.#adds = 0;
  }

  /**
   * The exact sum rounded once: to `fracBits` fraction bits, with the subnormal quantum 2^(minExp − fracBits) and
   * overflow to ±Infinity above `2^(maxExp+1)`. An exact zero is +0.
   * @param fracBits fraction bits of the target (fp32: 23, bf16: 7)
   * @param minExp minimum normal exponent of the target (fp32/bf16: −126)
   * @param maxExp maximum exponent of the target (fp32/bf16: 127)
   * @param mode `rne` (default) or `rz`
   * @returns the rounded value as a number
   */
  round(fracBits: number, minExp: number, maxExp: number, mode: "rne" | "rz" = "rne"): number {
    if (this.#nan || (this.#posInf && this.#negInf)) return NaN;
    if (this.#posInf) return Infinity;
    if (this.#negInf) return -Infinity;
    const lo = this.#lo, hi = this.#hi;
    if (hi < lo) return 0;
    // Limbs above hi are zero. Each limb is below 2^53 in magnitude, so after normalising lo … hi + 1 the carry into
    // limb hi + 2 is 0 or −1 (the sign); the top limb itself is never normalised, as in the full-width carry.
    const top = hi + 2 < NLIMBS - 1 ? hi + 2 : NLIMBS - 1;
    const S = this.#scratch;
    const L = this.#limbs;
    for (let i = lo; i <= top; i++) S[i] = i <= hi ? L[i] : 0;
    this.#carry(S, lo, top);
    let neg = false;
    if (S[top] < 0) {
      neg = true;
      for (let i = lo; i <= top; i++) S[i] = -S[i];
      this.#carry(S, lo, top);
    }
    let t = top;
    while (t >= lo && S[t] === 0) t--;
    if (t < lo) return 0;
    const msbPos = t * 32 + (31 - Math.clz32(S[t]));
    const msbExp = msbPos + MINE;
    const qe = Math.max(msbExp, minExp) - fracBits;
    const qpos = qe - MINE;
    let q = qpos > msbPos ? 0 : bits(S, qpos, msbPos, lo);
    if (mode === "rne" && qpos > 0 && qpos - 1 >= lo * 32) {
      const half = bitAt(S, qpos - 1);
      if (half && (q % 2 === 1 || anyBelow(S, qpos - 1, lo))) q += 1;
    }
    let r = q * pow2(qe);
    if (r >= pow2(maxExp + 1)) r = Infinity;
    return neg ? -r : r;
  }
}

function bitAt(S: Float64Array, pos: number): boolean {
  return ((S[pos >>> 5] >>> (pos & 31)) & 1) === 1;
}

/** Whether any bit below `pos` is set (limbs below `lo` are zero). */
function anyBelow(S: Float64Array, pos: number, lo: number): boolean {
  const j = pos >>> 5, r = pos & 31;
  if (r > 0 && ((S[j] >>> 0) & ((r === 32 ? 0 : (1 << r) >>> 0) - 1)) !== 0) return true;
  for (let i = j - 1; i >= lo; i--) if (S[i] !== 0) return true;
  return false;
}

// Bits lo..hi (inclusive, hi - lo < 53) of the magnitude as an integer; limbs below `limbLo` are zero.
function bits(S: Float64Array, lo: number, hi: number, limbLo: number): number {
  let v = 0;
  let p = hi;
  while (p >= lo) {
    if (p < limbLo * 32) {
      v *= POW2_SMALL[p - lo + 1];
      break;
    }
    const j = p >>> 5;
    const low = Math.max(lo, j * 32);
    const nb = p - low + 1;
    const shifted = (S[j] >>> (low - j * 32)) >>> 0;
    const chunk = nb === 32 ? shifted : shifted & ((1 << nb) >>> 0) - 1;
    v = v * POW2_SMALL[nb] + (chunk >>> 0);
    p = low - 1;
  }
  return v;
}
