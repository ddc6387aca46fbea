// A deliberately slow, element-by-element model of the GEMM numerics, written inside the tests (independently of
// both reference/ and the C++ backend) so that the CPU backend has a third opinion to agree with:
// MMA-Sim's fused dot-add (numerics.md §8.1), the DeepGEMM epilogues (deepgemm-ops.md §6) and an exact BigInt sum.
import { bf16Rne, bf16ToF32, f32FromBits, fma32 } from "../../reference/fp32.ts";
import type { Prng } from "../../reference/random/prng.ts";

const F64 = new Float64Array(1);
const U32 = new Uint32Array(F64.buffer);

/** Value of an E4M3 code (NaN for 0x7F/0xFF), from the bit fields (numerics.md §1). */
export function e4m3Value(code: number): number {
  const s = code & 0x80 ? -1 : 1, e = (code >> 3) & 0xf, m = code & 7;
  if (e === 15 && m === 7) return NaN;
  return e === 0 ? s * m * 2 ** -9 : s * (8 + m) * 2 ** (e - 10);
}

/** Value of a bf16 bit pattern. */
export function bf16Value(bits: number): number {
  return bf16ToF32(bits);
}

/** floor(log2|x|) of a finite non-zero double from its bits, clamped at minExp; 0 -> -126 (MMA-Sim). */
export function mmaExp(x: number, minExp: number): number {
  if (x === 0) return -126;
  F64[0] = x;
  let e = ((U32[1] >>> 20) & 0x7ff) - 1023;
  if (e === -1023) e = -1074; // double subnormal: far below every clamp used here
  return e < minExp ? minExp : e;
}

/** Truncates |v| · 2^k toward zero, v·2^k exact in binary64. */
function truncScaled(v: number, k: number): number {
  return Math.trunc(v * 2 ** k);
}

/** RZ of sum·2^w to `keep` fraction bits (fp32 exponent range, subnormals at 2^-126, overflow -> ±Inf). */
function normalizeRz(sum: number, w: number, keep: number): number {
  if (sum === 0) return 0;
  const mag = Math.abs(sum);
  const x = mmaExp(mag, -2000) + w;
  if (x > 127) return sum < 0 ? -Infinity : Infinity;
  const lsb = Math.max(x, -126) - keep;
  const v = lsb > w ? Math.trunc(mag * 2 ** (w - lsb)) * 2 ** lsb : mag * 2 ** w;
  return sum < 0 ? -v : v;
}

/** One fused dot-add step: c + Σ a·b (+ scale exponent xs), n kept fraction bits per term, RZ to `keep` bits. */
export function fusedStep(
  a: readonly number[],
  b: readonly number[],
  c: number,
  n: number,
  keep: number,
  xs: number,
  minA: number,
  minB: number,
): number {
  let f64 = c;
  for (let i = 0; i < a.length; i++) f64 += a[i] * b[i] * 2 ** xs;
  if (!Number.isFinite(f64)) return f64;
  let E = mmaExp(c, -126);
  for (let i = 0; i < a.length; i++) E = Math.max(E, mmaExp(a[i], minA) + mmaExp(b[i], minB) + xs);
  let sum = truncScaled(c, n - E);
  for (let i = 0; i < a.length; i++) sum += truncScaled(a[i] * b[i], n - E + xs);
  return normalizeRz(sum, E - n, keep);
}

/** Rounds to the output type (bf16 RNE or fp32 RNE). */
export function roundOut(x: number, out: "bf16" | "f32"): number {
  return out === "bf16" ? bf16ToF32(bf16Rne(x)) : Math.fround(x);
}

/** DeepGEMM reduce-add epilogue: o = out(acc); D = C ? out(C + o) : o. */
export function epilogue(acc: number, c: number | null, out: "bf16" | "f32"): number {
  const o = roundOut(acc, out);
  return c === null ? o : roundOut(c + o, out);
}

/** SM90 1D2D/1D1D: per 128-K block, 4 chained k32 steps (e8m13) from zero; F = fma32(fl32(sa·sb), P, F). */
export function sm90Acc(a: number[], b: number[], sa: (kb: number) => number, sb: (kb: number) => number): number {
  let F = 0;
  for (let k0 = 0, kb = 0; k0 < a.length; k0 += 128, kb++) {
    let P = 0;
    for (let s = k0; s < Math.min(k0 + 128, a.length); s += 32) {
      const e = Math.min(s + 32, a.length);
      P = fusedStep(a.slice(s, e), b.slice(s, e), P, 13, 13, 0, -6, -6);
    }
    F = fma32(Math.fround(sa(kb) * sb(kb)), P, F);
  }
  return F;
}

/** SM100 block-scaled: k32 steps over all K, 25 bits, RZ fp32, scale exponents (gran_k) added to products. */
export function sm100Acc(
  a: number[],
  b: number[],
  ea: (g: number) => number,
  eb: (g: number) => number,
  granK: number,
): number {
  let acc = 0;
  for (let s = 0; s < a.length; s += 32) {
    const e = Math.min(s + 32, a.length), g = Math.floor(s / granK);
    acc = fusedStep(a.slice(s, e), b.slice(s, e), acc, 25, 23, ea(g) + eb(g), -6, -6);
  }
  return acc;
}

/** Hopper BF16 wgmma: k16 steps chained over all K, 25 bits, RZ fp32. */
export function bf16Acc(a: number[], b: number[]): number {
  let acc = 0;
  for (let s = 0; s < a.length; s += 16) {
    const e = Math.min(s + 16, a.length);
    acc = fusedStep(a.slice(s, e), b.slice(s, e), acc, 25, 23, 0, -126, -126);
  }
  return acc;
}

// ---- exact: BigInt fixed point ----------------------------------------------------------------------------------

const SHIFT = 900; // every term here is a multiple of 2^-900

function toBig(x: number): bigint {
  if (x === 0) return 0n;
  const e = mmaExp(x, -1074); // x = m·2^(e-52), m < 2^53
  const m = x * 2 ** (52 - e); // exact integer (|m| < 2^53)
  const sh = e - 52 + SHIFT;
  return sh >= 0 ? BigInt(m) << BigInt(sh) : BigInt(m) >> BigInt(-sh); // (the second never happens here)
}

/** Exact product of doubles as a BigInt in units of 2^-SHIFT·2^-SHIFT·... : use mulBig for products. */
function mulBig(...xs: number[]): bigint {
  // Product of k doubles, in units of 2^(-SHIFT·k); rescaled to 2^-SHIFT.
  let p = 1n;
  for (const x of xs) p *= toBig(x);
  return p >> BigInt(SHIFT * (xs.length - 1)); // exact: every factor is a multiple of 2^-1074·2^SHIFT... (checked below)
}

/** The exact sum c + Σ_k a_k·b_k·s_k rounded once (RNE) to bf16 or fp32. NaN/Inf inputs are not supported. */
export function exactRound(terms: readonly (readonly number[])[], c: number | null, out: "bf16" | "f32"): number {
  let acc = c === null ? 0n : toBig(c);
  for (const t of terms) {
    const p = mulBig(...t);
    acc += p;
  }
  return roundBig(acc, out === "bf16" ? 8 : 24);
}

function roundBig(v: bigint, prec: number): number {
  if (v === 0n) return 0;
  const neg = v < 0n;
  const mag = neg ? -v : v;
  const bits = mag.toString(2).length;
  const x = bits - 1 - SHIFT; // exponent of the leading bit
  const lsbExp = Math.max(x, -126) - (prec - 1);
  const drop = lsbExp + SHIFT;
  let q = mag >> BigInt(drop);
  const rem = mag - (q << BigInt(drop));
  const half = 1n << BigInt(drop - 1);
  if (rem > half || (rem === half && (q & 1n) === 1n)) q += 1n;
  let r = Number(q) * 2 ** lsbExp;
  if (r >= 2 ** 128) r = Infinity;
  return neg ? -r : r;
}

// ---- random operands ----------------------------------------------------------------------------------------------

/** A random finite E4M3 code (every code except the two NaNs). */
export function randomE4m3(rng: Prng): number {
  for (;;) {
    const c = rng.int(256);
    if ((c & 0x7f) !== 0x7f) return c;
  }
}

/** A random bf16 pattern with a moderate exponent (values in about ±2^±8). */
export function randomBf16(rng: Prng): number {
  const sign = rng.int(2) << 15, exp = 119 + rng.int(16), man = rng.int(128);
  return sign | (exp << 7) | man;
}

/** A random positive fp32 scale with a full 23-bit mantissa, around 2^-10..2^5. */
export function randomScale(rng: Prng): number {
  return f32FromBits(((117 + rng.int(16)) << 23) | rng.int(1 << 23));
}
