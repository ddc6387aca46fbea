/**
 * The SiLU of Mega MoE's SwiGLU epilogue (`impls/sm100_fp8_fp4_mega_moe.cuh`, `deepgemm-ops.md` §10 step 3), with every
 * operation specified: `denom = fl32(1 + e)`, then
 * - `fast` (`fast_math = true`, DeepGEMM's default): `e = __expf(−g)`, which CUDA 13.0 compiles (SASS read on an H200)
 *   to `y = fl32(−g · log2e)`, then `MUFU.EX2(y)`, or `fl32(MUFU.EX2(y/2)²)` when `y < −126` (the non-FTZ
 *   `ex2.approx.f32`); `silu = fl32(g · rcp.approx.ftz(denom))`;
 * - `ieee`: `e = expf(−g)`, `silu = fl32(g / denom)`.
 * The transcendental parts are pluggable {@link SiluMath} functions. The default ones are exactly specified and
 * correctly rounded ({@link expF32}, {@link exp2F32}, a correctly rounded reciprocal with FTZ); the GPU's `expf` (2 ulp),
 * MUFU `ex2.approx` and `rcp.approx` are not correctly rounded and their tables are [unknown], so bit-exactness with a
 * GPU is guaranteed only where those agree (docs/reference.md, Mega MoE, gives the measured agreement on an H200).
 * @module
 */
import { f32, f32Bits, f32FromBits } from "../fp32.ts";
import { SILU_H200_FAST_EXCEPTIONS, SILU_H200_IEEE_EXCEPTIONS } from "./silu_h200_table.ts";
import { exp2F32, expF32 } from "./exp32.ts";

/** SiLU variant: DeepGEMM's `fast_math` flag. */
export type SiluVariant = "fast" | "ieee";

/** The transcendental building blocks of the SiLU (each maps an fp32 value to an fp32 value). */
export interface SiluMath {
  /** `expf` (IEEE variant). */
  exp: (x: number) => number;
  /** The MUFU.EX2 unit, `2^y` for y ≥ −126 (fast variant; the squaring for y < −126 is applied by {@link silu}). */
  ex2Approx: (y: number) => number;
  /** `rcp.approx.ftz.f32` (fast variant). */
  rcpApprox: (x: number) => number;
}

/** `log2(e)` as the fp32 constant CUDA's `__expf` multiplies by (0x3FB8AA3B). */
export const LOG2E_F32: number = f32(1.4426950408889634);

function ftz(x: number): number { // flush an fp32 subnormal to a zero of the same sign
  return (f32Bits(x) & 0x7f800000) === 0 ? (x < 0 || Object.is(x, -0) ? -0 : 0) : x;
}

/** The exactly specified defaults: correctly rounded exp, 2^y and reciprocal, with FTZ where the PTX says `.ftz`. */
export const CORRECTLY_ROUNDED_SILU_MATH: SiluMath = Object.freeze({
  exp: expF32,
  ex2Approx: (y: number) => exp2F32(y),
  rcpApprox: (x: number) => ftz(f32(1 / ftz(x))),
});

/**
 * SiLU of an fp32 gate value (a bf16 value widened) in the kernel's operation order.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { silu } from "./silu.ts";
 * assert.equal(silu(0, "ieee"), 0);
 * assert.equal(silu(0, "fast"), 0);
 * assert.equal(silu(-200, "ieee"), -0); // e^200 overflows: −200/Inf
 * assert.equal(silu(20, "ieee"), Math.fround(20 / Math.fround(1 + 2.061153622438558e-9)));
 * ```
 */
export function silu(g: number, variant: SiluVariant, math: SiluMath = CORRECTLY_ROUNDED_SILU_MATH): number {
  if (variant === "fast") {
    const y = f32(-g * LOG2E_F32);
    const h = y < -126 ? math.ex2Approx(y * 0.5) : 0;
    const e = y < -126 ? f32(h * h) : math.ex2Approx(y);
    return f32(g * math.rcpApprox(f32(1 + e)));
  }
  if (variant !== "ieee") throw new RangeError(`Unknown SiLU variant "${variant}"; known: fast, ieee`);
  return f32(g / f32(1 + math.exp(-g)));
}

/** Where the SiLU's transcendental parts come from: the exactly specified model, or the H200 measurement table. */
export type SiluSource = "correctly_rounded" | "h200_measured";

let measured: Record<SiluVariant, Map<number, number>> | undefined;

function measuredTables(): Record<SiluVariant, Map<number, number>> {
  if (!measured) {
    const parse = (s: string) => {
      const m = new Map<number, number>();
      for (let i = 0; i < s.length; i += 12) {
        m.set(parseInt(s.slice(i, i + 4), 16), parseInt(s.slice(i + 4, i + 12), 16));
      }
      return m;
    };
    measured = { fast: parse(SILU_H200_FAST_EXCEPTIONS), ieee: parse(SILU_H200_IEEE_EXCEPTIONS) };
  }
  return measured;
}

/**
 * SiLU of a bf16 gate value (given widened to fp32) from a named source. `h200_measured` returns the H200's result bit
 * for bit (table of `silu_h200_table.ts`), `correctly_rounded` the exactly specified model.
 * @throws RangeError when `g` is not a bf16 value or the source is unknown
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { siluOfBf16 } from "./silu.ts";
 * assert.equal(siluOfBf16(1, "fast", "correctly_rounded"), siluOfBf16(1, "fast", "h200_measured"));
 * assert.throws(() => siluOfBf16(1 + 2 ** -20, "fast", "h200_measured"), RangeError);
 * ```
 */
export function siluOfBf16(g: number, variant: SiluVariant, source: SiluSource): number {
  if (source === "correctly_rounded") return silu(g, variant);
  if (source !== "h200_measured") {
    throw new RangeError(`Unknown SiLU source "${source}"; known: correctly_rounded, h200_measured`);
  }
  const bits = f32Bits(g);
  if ((bits & 0xffff) !== 0) throw new RangeError(`siluOfBf16: ${g} is not a bf16 value`);
  const hit = measuredTables()[variant]?.get(bits >>> 16);
  return hit === undefined ? silu(g, variant) : f32FromBits(hit);
}
