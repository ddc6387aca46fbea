/**
 * bf16 arithmetic with ONE rounding, as the SM100 bf16 head reduction uses it (`deepgemm-ops.md` §8.1:
 * `S_r = bf16_fma(a, w, S_r)`, `bf16(S_0+S_2) ⊕bf16 bf16(S_1+S_3)`, `bf16(reduced · bf16(sfkv))`).
 *
 * Why the result is the single correctly rounded bf16 value of the exact `a·b + c`:
 * 1. the product of two bf16 values has at most 8 + 8 = 16 significant bits and an exponent in
 *    [2^-266, 2^256]: it is exact in binary64;
 * 2. TwoSum (Knuth) gives `s = fl64(p + c)` and the exact error `err` with `s + err = p + c` (no overflow: |p + c| <
 *    2^257);
 * 3. rounding to odd: if `err ≠ 0` and `s` has an even last bit, step `s` one binary64 ulp towards the exact value;
 *    this is RO53(p + c) (Boldo & Melquiond 2008);
 * 4. RO24 of that binary64 (`Math.fround`, then the same odd step if inexact) equals RO24(p + c): round-to-odd at a
 *    finer precision keeps the value inside the same open interval of the coarser grid, and is never on that grid
 *    when inexact;
 * 5. RNE to bf16 (8 significant bits) of RO24(x) equals RNE8(x) because 24 ≥ 8 + 2 (Boldo & Melquiond, Thm. 4);
 *    fp32's subnormal quantum 2^-149 is finer than bf16's 2^-133 by far more than 2 bits, so the grids nest there too.
 * Overflow: values beyond fp32's range become ±Inf at step 4, which is bf16's RNE result as well (bf16's overflow
 * threshold (2 − 2^-8)·2^127 lies below fp32's largest finite value).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { bf16Fma } from "./bf16_fma.ts";
 * // 1 + 2^-8 + 2^-30: a tie in bf16 without the 2^-30 (even → 1), just above it with (→ 1 + 2^-7).
 * assert.equal(bf16Fma(1 + 2 ** -8, 1, 2 ** -30), 0x3f81);
 * // Rounding to fp32 first would lose the 2^-30 and then tie to even:
 * assert.equal(bf16Fma(1 + 2 ** -8, 1, 0), 0x3f80);
 * ```
 * @module
 */
import { bf16Rne, bf16ToF32 } from "../fp32.ts";

const F64 = new Float64Array(1);
const U64 = new Uint32Array(F64.buffer); // [low, high] on little-endian hosts
const F32 = new Float32Array(1);
const U32 = new Uint32Array(F32.buffer);

/** Steps a finite nonzero binary64 one ulp away from (up = true) or towards zero. */
function stepF64(x: number, up: boolean): number {
  F64[0] = x;
  if (up) {
    U64[0] = (U64[0] + 1) >>> 0;
    if (U64[0] === 0) U64[1] = (U64[1] + 1) >>> 0;
  } else {
    if (U64[0] === 0) U64[1] = (U64[1] - 1) >>> 0;
    U64[0] = (U64[0] - 1) >>> 0;
  }
  return F64[0];
}

/**
 * `bf16(a·b + c)` with a single RNE rounding (GPU NaN rule: 0x7FFF), as bf16 bits.
 * @param a a bf16 value (as a number)
 * @param b a bf16 value
 * @param c a bf16 value
 * @returns the bf16 bit pattern
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { bf16Fma } from "./bf16_fma.ts";
 * assert.equal(bf16Fma(3, 5, 1), 0x4180); // 16
 * assert.equal(bf16Fma(2 ** 100, 2 ** 100, 0), 0x7f80); // overflow → +Inf
 * ```
 */
export function bf16Fma(a: number, b: number, c: number): number {
  const p = a * b; // exact (module doc, 1)
  const s = p + c;
  if (!Number.isFinite(s) || !Number.isFinite(p)) return bf16Rne(s);
  const bb = s - p;
  const err = (p - (s - bb)) + (c - bb); // TwoSum: s + err = p + c exactly
  let x = s;
  if (err !== 0) {
    F64[0] = s;
    if ((U64[0] & 1) === 0) x = stepF64(s, (err > 0) === (s > 0)); // RO53
  }
  const f = Math.fround(x);
  if (f !== x && Number.isFinite(f)) {
    F32[0] = f;
    if ((U32[0] & 1) === 0) {
      // RO24: the odd fp32 neighbour on x's side (for |x| < 2^-150, f = ±0 and that neighbour is ±2^-149).
      const away = Math.abs(x) > Math.abs(f);
      if (f === 0) U32[0] = (x < 0 ? 0x80000000 : 0) | 1;
      else U32[0] = away ? U32[0] + 1 : U32[0] - 1;
      return bf16Rne(F32[0]);
    }
  }
  return bf16Rne(f);
}

/**
 * `a ⊕bf16 b`: the bf16 sum of two bf16 values, rounded once (RNE), as a number.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { bf16Add } from "./bf16_fma.ts";
 * assert.equal(bf16Add(256, 1), 256); // 257 ties to even (256) in bf16
 * assert.equal(bf16Add(256, 3), 260);
 * ```
 */
export function bf16Add(a: number, b: number): number {
  return bf16ToF32(bf16Fma(a, 1, b));
}

/**
 * `bf16(a·b)` of two bf16 values, rounded once (RNE), as a number.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { bf16Mul } from "./bf16_fma.ts";
 * assert.equal(bf16Mul(1 + 2 ** -7, 1 + 2 ** -7), 1 + 2 ** -6); // 1 + 2^-6 + 2^-14 rounds down
 * ```
 */
export function bf16Mul(a: number, b: number): number {
  return bf16ToF32(bf16Fma(a, b, 0));
}
