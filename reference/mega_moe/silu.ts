/**
 * The SiLU of Mega MoE's SwiGLU epilogue (`impls/sm100_fp8_fp4_mega_moe.cuh`, `deepgemm-ops.md` §10 step 3), with every
 * operation specified: `denom = fl32(1 + e)`, then
 * - `fast` (`fast_math = true`, DeepGEMM's default): `e = __expf(−g) = ex2.approx.ftz(fl32(−g · log2e))`,
 *   `silu = fl32(g · rcp.approx.ftz(denom))`;
 * - `ieee`: `e = expf(−g)`, `silu = fl32(g / denom)`.
 * The transcendental parts are pluggable {@link SiluMath} functions. The default ones are exactly specified and
 * correctly rounded ({@link expF32}, {@link exp2F32}, a correctly rounded reciprocal with FTZ); the GPU's `expf` (2 ulp),
 * MUFU `ex2.approx` and `rcp.approx` are not correctly rounded and their tables are [unknown], so bit-exactness with a
 * GPU is guaranteed only where those agree (see the README for the measured agreement on an H200).
 * @module
 */
import { f32, f32Bits } from "../fp32.ts";
import { exp2F32, expF32 } from "./exp32.ts";

/** SiLU variant: DeepGEMM's `fast_math` flag. */
export type SiluVariant = "fast" | "ieee";

/** The transcendental building blocks of the SiLU (each maps an fp32 value to an fp32 value). */
export interface SiluMath {
  /** `expf` (IEEE variant). */
  exp: (x: number) => number;
  /** `ex2.approx.ftz.f32` (fast variant). */
  ex2Approx: (y: number) => number;
  /** `rcp.approx.ftz.f32` (fast variant). */
  rcpApprox: (x: number) => number;
}

/** `log2(e)` as the fp32 constant CUDA's `__expf` multiplies by (0x3FB8AA3B). */
export const LOG2E_F32: number = f32(1.4426950408889634);

function ftz(x: number): number {
  return (f32Bits(x) & 0x7f800000) === 0 ? (x < 0 || Object.is(x, -0) ? -0 : 0) : x;
}

/** The exactly specified defaults: correctly rounded exp, 2^y and reciprocal, with FTZ where the PTX says `.ftz`. */
export const CORRECTLY_ROUNDED_SILU_MATH: SiluMath = Object.freeze({
  exp: expF32,
  ex2Approx: (y: number) => ftz(exp2F32(ftz(y))),
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
    const e = math.ex2Approx(f32(-g * LOG2E_F32));
    return f32(g * math.rcpApprox(f32(1 + e)));
  }
  if (variant !== "ieee") throw new RangeError(`Unknown SiLU variant "${variant}"; known: fast, ieee`);
  return f32(g / f32(1 + math.exp(-g)));
}
