/**
 * Exact IEEE binary32 arithmetic on JavaScript numbers.
 *
 * Why `Math.fround(a op b)` is exact for +, −, ×, ÷ and √ of fp32 operands: the double result is the
 * correctly rounded binary64 value, and binary64 has 53 ≥ 2·24 + 2 significand bits, so rounding it
 * once more to binary32 gives the correctly rounded binary32 result (Figueroa, "When is double rounding
 * innocuous?", SIGNUM 1995). Products of two fp32 values are even exact in binary64 (24 + 24 bits, and
 * the exponent range 2^-298 … 2^256 stays inside binary64's normal range).
 *
 * FMA is different: a·b + c needs one rounding of the exact sum, so {@link fma32} computes the exact
 * product, an error-free sum (TwoSum) and rounds to odd before the final `Math.fround`
 * (Boldo & Melquiond, "Emulation of FMA and correctly rounded sums: proved algorithms using rounding to odd", 2008).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { fma32 } from "./fp32.ts";
 * const a = 1 + 2 ** -12; // (1 + 2^-12)² = 1 + 2^-11 + 2^-24: the last term is lost if the product is rounded first
 * assert.equal(fma32(a, a, -1), 2 ** -11 + 2 ** -24);
 * assert.equal(Math.fround(Math.fround(a * a) - 1), 2 ** -11);
 * ```
 * @module
 */

const F32 = new Float32Array(1);
const U32 = new Uint32Array(F32.buffer);
const F64 = new Float64Array(1);
const U64 = new Uint32Array(F64.buffer); // [low word, high word] on little-endian hosts (every Deno target)

/** Rounds a number to the nearest fp32 value (RNE), as every fp32 operation's last step. */
export const f32: (x: number) => number = Math.fround;

/**
 * The IEEE binary32 bit pattern of `x` (after rounding it to fp32), as an unsigned 32-bit integer.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { f32Bits } from "./fp32.ts";
 * assert.equal(f32Bits(1), 0x3f800000);
 * assert.equal(f32Bits(-0), 0x80000000);
 * ```
 */
export function f32Bits(x: number): number {
  F32[0] = x;
  return U32[0];
}

/**
 * The fp32 value of a bit pattern. NaN payloads are not preserved by JavaScript numbers: keep bits
 * (Uint32Array) wherever NaN spelling matters.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { f32FromBits } from "./fp32.ts";
 * assert.equal(f32FromBits(0x00400000), 2 ** -127);
 * ```
 */
export function f32FromBits(bits: number): number {
  U32[0] = bits >>> 0;
  return F32[0];
}

/**
 * fp32 addition, correctly rounded (RNE).
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { add32 } from "./fp32.ts";
 * assert.equal(add32(1, 2 ** -24), 1); // the tie rounds to even
 * assert.equal(add32(1, 2 ** -23), 1 + 2 ** -23);
 * ```
 */
export function add32(a: number, b: number): number {
  return Math.fround(a + b);
}

/**
 * fp32 subtraction, correctly rounded (RNE).
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { sub32 } from "./fp32.ts";
 * assert.equal(sub32(1, 2 ** -25), 1); // below half an ulp of 1 − 2^-24
 * assert.equal(sub32(3, 1), 2);
 * ```
 */
export function sub32(a: number, b: number): number {
  return Math.fround(a - b);
}

/**
 * fp32 multiplication, correctly rounded (RNE).
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { mul32 } from "./fp32.ts";
 * assert.equal(mul32(1 + 2 ** -12, 1 + 2 ** -12), 1 + 2 ** -11); // the 2^-24 term is rounded away
 * ```
 */
export function mul32(a: number, b: number): number {
  return Math.fround(a * b);
}

/**
 * fp32 division, correctly rounded (RNE).
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { div32 } from "./fp32.ts";
 * assert.equal(div32(1, 3), Math.fround(1 / 3));
 * assert.equal(div32(1, 0), Infinity);
 * ```
 */
export function div32(a: number, b: number): number {
  return Math.fround(a / b);
}

/**
 * fp32 square root, correctly rounded (RNE); `Math.sqrt` is correctly rounded in binary64 (ECMA-262 §21.3.2.32 / IEEE 754).
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { sqrt32 } from "./fp32.ts";
 * assert.equal(sqrt32(2), 1.4142135381698608);
 * assert.ok(Number.isNaN(sqrt32(-1)));
 * ```
 */
export function sqrt32(a: number): number {
  return Math.fround(Math.sqrt(a));
}

/**
 * The fp32 reciprocal as PyTorch computes `1.0 / t` for an fp32 tensor (`Tensor.reciprocal()`, correctly rounded;
 * `deepgemm-ops.md` §2).
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { reciprocal32 } from "./fp32.ts";
 * assert.equal(reciprocal32(4), 0.25);
 * assert.equal(reciprocal32(3), 0.3333333432674408);
 * ```
 */
export function reciprocal32(a: number): number {
  return Math.fround(1 / a);
}

/**
 * Fused multiply-add in fp32: `a·b + c` with a single RNE rounding, for fp32 operands (values already
 * representable in fp32). Special values follow IEEE 754 (Inf − Inf = NaN, 0·Inf = NaN).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { fma32 } from "./fp32.ts";
 * assert.equal(fma32(3, 5, 1), 16);
 * assert.ok(Number.isNaN(fma32(Infinity, 0, 1)));
 * ```
 */
export function fma32(a: number, b: number, c: number): number {
  const p = a * b; // exact: see the module comment
  const s = p + c;
  if (!Number.isFinite(s) || !Number.isFinite(p)) return Math.fround(s);
  // TwoSum (Knuth): s + err == p + c exactly.
  const bb = s - p;
  const err = (p - (s - bb)) + (c - bb);
  if (err === 0) return Math.fround(s);
  // Round to odd: if s has an even last bit, the odd neighbour towards the exact value is the round-to-odd result.
  F64[0] = s;
  if ((U64[0] & 1) === 0) {
    const up = (err > 0) === (s > 0); // step away from zero when the error has s's sign
    if (up) {
      U64[0] = (U64[0] + 1) >>> 0; // low bit was 0: no carry
    } else {
      if (U64[0] === 0) {
        U64[0] = 0xffffffff;
        U64[1] = (U64[1] - 1) >>> 0;
      } else {
        U64[0] = (U64[0] - 1) >>> 0;
      }
    }
  }
  return Math.fround(F64[0]);
}

/**
 * fp32 → bf16 with round-to-nearest-even, as `__float2bfloat16_rn` / `cvt.rn.bf16.f32` does on a GPU: overflow
 * gives ±Inf, every NaN becomes the canonical 0x7FFF (`numerics.md` §3.5, verified on H200). Other NaN spellings
 * (ml_dtypes 0x7FC0, torch CPU 0xFFFF) are conversion profiles in `formats/`.
 *
 * @returns the bf16 bit pattern (0 … 0xFFFF)
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { bf16Rne } from "./fp32.ts";
 * assert.equal(bf16Rne(1 + 2 ** -8), 0x3f80); // tie to even
 * assert.equal(bf16Rne(NaN), 0x7fff);
 * ```
 */
export function bf16Rne(x: number): number {
  const u = f32Bits(x);
  if ((u & 0x7fffffff) > 0x7f800000) return 0x7fff;
  return ((u + 0x7fff + ((u >>> 16) & 1)) >>> 16) & 0xffff;
}

/**
 * The fp32 value of a bf16 bit pattern (exact: bf16 is the upper half of fp32).
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { bf16ToF32 } from "./fp32.ts";
 * assert.equal(bf16ToF32(0x3f80), 1);
 * assert.equal(bf16ToF32(0xc040), -3);
 * ```
 */
export function bf16ToF32(bits: number): number {
  return f32FromBits((bits & 0xffff) << 16);
}

/**
 * Rounds `x` to bf16 (RNE, GPU NaN rule) and returns the value as a number: `bf16(x)` of the specs.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { bf16 } from "./fp32.ts";
 * assert.equal(bf16(1 + 2 ** -7), 1 + 2 ** -7);
 * assert.equal(bf16(1 + 2 ** -9), 1); // below half a bf16 ulp
 * ```
 */
export function bf16(x: number): number {
  return bf16ToF32(bf16Rne(x));
}
