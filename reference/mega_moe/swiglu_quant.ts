/**
 * The SwiGLU + per-32 FP8 requantization step between Mega MoE's two GEMMs (`impls/sm100_fp8_fp4_mega_moe.cuh`,
 * `common/math.cuh`, DeepGEMM `54e2261`; `deepgemm-ops.md` §10 steps 1–4), every operation specified:
 * 1. `g = bf16(h[c])`, `u = bf16(h[I + c])` (RNE, `__float22bfloat162_rn`) from the fp32 L1 accumulators;
 * 2. optional clamp, in bf16 against the bf16 (RNE) constant c: `g = min(g, c)`, `u = min(max(u, −c), c)`
 *    (`__hmin2` / `__hmax2`: a NaN operand yields the other operand);
 * 3. `a = fl32(fl32(silu(g) · u) · w)` with the SiLU of `silu.ts`;
 * 4. per 32 channels: `amax = max |a|`, `scaled = fl32(amax · fl32(1/448))`, `e = exponent(scaled) − 127 +
 *    (mantissa ≠ 0)` (an integer ceil(log2)), `sf = 2^e` and `sf_inv = 2^−e` built from exponent bits (`fast_pow2`, so
 *    amax = 0 gives e = −127, sf = 0 and scale byte 0, with `sf_inv = 2^127`), `q = e4m3_satfinite(fl32(a · sf_inv))`
 *    (`cvt.rn.satfinite.e4m3x2.f32`); the scale byte is `bits(sf) >> 23`. There is no 1e-4 amax floor.
 * @module
 */
import { bf16Rne, bf16ToF32, f32, f32Bits, f32FromBits } from "../fp32.ts";
import { getConverter } from "../formats/profiles.ts";
import { siluOfBf16, type SiluSource, type SiluVariant } from "./silu.ts";

/** Options of the SwiGLU step. */
export interface SwigluOptions {
  /** `activation_clamp` (undefined: none); converted to bf16 with RNE as the kernel's template constant is. */
  clamp?: number;
  /** `fast_math` (default true). */
  fastMath?: boolean;
  /** Source of the SiLU's transcendental parts (default `correctly_rounded`). */
  siluSource?: SiluSource;
}

function bf16Min(a: number, b: number): number {
  if (Number.isNaN(a)) return b;
  if (Number.isNaN(b)) return a;
  return a < b || (a === b && Object.is(a, -0)) ? a : b;
}

function bf16Max(a: number, b: number): number {
  if (Number.isNaN(a)) return b;
  if (Number.isNaN(b)) return a;
  return a > b || (a === b && Object.is(b, -0)) ? a : b;
}

/**
 * SwiGLU of one row: `I` fp32 activations from the `2I` fp32 L1 accumulators (gate first, then up, original order).
 * @param h the L1 output row (fp32 values), length 2I
 * @param weight the token's top-k weight (fp32)
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { swiglu } from "./swiglu_quant.ts";
 * const a = swiglu(new Float32Array([0, 30, 3, 30]), 0.5, { clamp: 10 });
 * assert.equal(a[0], 0); // silu(0) = 0
 * assert.ok(a[1] > 49.9 && a[1] <= 50); // silu(min(30, 10))·min(30, 10)·0.5
 * ```
 */
export function swiglu(h: ArrayLike<number>, weight: number, options: SwigluOptions = {}): Float32Array {
  const I = h.length / 2;
  const variant: SiluVariant = options.fastMath ?? true ? "fast" : "ieee";
  const source = options.siluSource ?? "correctly_rounded";
  const c = options.clamp === undefined ? undefined : bf16ToF32(bf16Rne(options.clamp));
  const out = new Float32Array(I);
  for (let i = 0; i < I; i++) {
    let g = bf16ToF32(bf16Rne(h[i])), u = bf16ToF32(bf16Rne(h[I + i]));
    if (c !== undefined) {
      g = bf16Min(g, c);
      u = bf16Min(bf16Max(u, -c), c);
    }
    out[i] = f32(f32(siluOfBf16(g, variant, source) * u) * weight);
  }
  return out;
}

/** fl32(1/448), the constant `finfo_factor` of `get_e4m3_sf_and_sf_inv`. */
export const INV_448_F32: number = f32(1 / 448);

const toE4m3Sat = getConverter("cuda_satfinite", "e4m3");

/**
 * Per-32 requantization to FP8 with UE8M0 ceil scales (no amax floor).
 * @param a activations (length a multiple of 32)
 * @returns e4m3 codes and one scale byte per 32 values
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { requantPer32 } from "./swiglu_quant.ts";
 * const a = new Float32Array(64);
 * a[0] = 448; a[1] = -1; // group 0: amax/448 = 1 → sf = 1 (byte 127)
 * const { codes, sf } = requantPer32(a);
 * assert.deepEqual(Array.from(sf), [127, 0]); // the all-zero group 1 gets sf = 0 (byte 0)
 * assert.equal(codes[0], 0x7e);
 * assert.equal(codes[1], 0xb8);
 * assert.equal(codes[40], 0);
 * ```
 */
export function requantPer32(a: ArrayLike<number>): { codes: Uint8Array; sf: Uint8Array } {
  if (a.length % 32 !== 0) throw new RangeError(`requantPer32: length ${a.length} is not a multiple of 32`);
  const codes = new Uint8Array(a.length), sf = new Uint8Array(a.length / 32);
  for (let g = 0; g < a.length / 32; g++) {
    let amax = 0;
    for (let k = 0; k < 32; k++) {
      const v = Math.abs(a[32 * g + k]);
      amax = v > amax ? v : amax; // ReduceMax: `a > b ? a : b`
    }
    const bits = f32Bits(f32(amax * INV_448_F32));
    const e = (bits >>> 23) - 127 + ((bits & 0x7fffff) !== 0 ? 1 : 0);
    const sfBits = ((e + 127) << 23) >>> 0, invBits = ((-e + 127) << 23) >>> 0;
    sf[g] = sfBits >>> 23;
    const inv = f32FromBits(invBits);
    for (let k = 0; k < 32; k++) codes[32 * g + k] = toE4m3Sat(f32Bits(f32(a[32 * g + k] * inv)));
  }
  return { codes, sf };
}
