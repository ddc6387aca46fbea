// An independent slow path for the GEMM tests: BigInt fixed-point rationals (value = N / 2^SC), written from the
// specs (numerics.md §8.1, deepgemm-ops.md §6), sharing no code with reference/.
export const SC = 700n;
const ONE = 1n << SC;

/** e4m3 code → scaled BigInt value and MMA-Sim exponent (zero: −126). */
export function e4m3(code: number): { v: bigint; e: number } {
  const s = code & 0x80 ? -1n : 1n, ef = (code >> 3) & 15, m = code & 7;
  if ((code & 0x7f) === 0) return { v: 0n, e: -126 };
  if (ef === 0) return { v: s * (BigInt(m) << (SC - 9n)), e: -6 };
  return { v: s * (BigInt(8 + m) << (SC + BigInt(ef - 7 - 3))), e: ef - 7 };
}

/** bf16 bits → scaled value and exponent. */
export function bf16v(bits: number): { v: bigint; e: number } {
  const s = bits & 0x8000 ? -1n : 1n, ef = (bits >> 7) & 0xff, m = bits & 0x7f;
  if ((bits & 0x7fff) === 0) return { v: 0n, e: -126 };
  if (ef === 0) return { v: s * ((BigInt(m) << SC) >> 133n), e: -126 };
  const e = ef - 127;
  const mant = BigInt(128 + m);
  return { v: s * (e - 7 >= 0 ? mant << (SC + BigInt(e - 7)) : (mant << SC) >> BigInt(7 - e)), e };
}

/** A JS number (finite, binary64) → scaled BigInt (exact for the magnitudes used here). */
export function big(x: number): bigint {
  if (x === 0) return 0n;
  let e = 0, m = Math.abs(x);
  while (m >= 2 ** 53) {
    m /= 2;
    e++;
  }
  while (!Number.isInteger(m)) {
    m *= 2;
    e--;
  }
  const b = BigInt(m) * (x < 0 ? -1n : 1n);
  return e >= 0 ? (b << BigInt(e)) << SC : (b << SC) >> BigInt(-e);
}

function bitLen(x: bigint): number {
  return x === 0n ? 0 : x.toString(2).length;
}

/** Rounds a scaled value to `frac` fraction bits (min exponent minExp); RNE or RZ; returns a JS number. */
export function roundBig(N: bigint, frac: number, minExp: number, rz = false): number {
  if (N === 0n) return 0;
  const neg = N < 0n, mag = neg ? -N : N;
  const msb = bitLen(mag) - 1 - Number(SC);
  const qe = Math.max(msb, minExp) - frac;
  const sh = BigInt(qe) + SC;
  let q = sh > 0n ? mag >> sh : mag << -sh;
  if (!rz && sh > 0n) {
    const rem = mag - (q << sh), half = 1n << (sh - 1n);
    if (rem > half || (rem === half && (q & 1n) === 1n)) q += 1n;
  }
  const r = Number(q) * 2 ** qe;
  return neg ? -r : r;
}

/** floor(log2|v|) of a nonzero scaled value, clamped below at −126. */
function expOf(v: bigint): number {
  if (v === 0n) return -126;
  return Math.max(-126, bitLen(v < 0n ? -v : v) - 1 - Number(SC));
}

/** One MMA-Sim fused step with n fraction bits, from operand (v, e) pairs; output RZ to `outFrac` bits. */
export function slowStep(terms: { v: bigint; e: number }[][], c: bigint, n: number, outFrac: number): bigint {
  let E = expOf(c);
  for (const [a, b] of terms) E = Math.max(E, a.e + b.e);
  const sh = BigInt(n - E);
  // trunc(x · 2^(n−E)) toward zero; BigInt division truncates toward zero.
  const tr = (x: bigint, scale: bigint) => (sh >= 0n ? (x << sh) / scale : x / (scale << -sh));
  let sum = tr(c, ONE);
  for (const [a, b] of terms) sum += tr(a.v * b.v, ONE * ONE);
  const scaled = E - n >= 0 ? (sum << BigInt(E - n)) << SC : (sum << SC) >> BigInt(n - E); // exact: n − E < SC
  return big(roundBig(scaled, outFrac, -126, true));
}

/** SM90 1D2D / 1D1D element: per 128 block 4 chained k32 steps, s = fl32(sa·sb), F = fma(s, P, F). */
export function slowSm90(a: number[], b: number[], sa: number[], sb: number[]): number {
  let F = 0n;
  for (let k0 = 0, g = 0; k0 < a.length; k0 += 128, g++) {
    let P = 0n;
    for (let s = k0; s < Math.min(a.length, k0 + 128); s += 32) {
      const terms = [];
      for (let k = s; k < Math.min(a.length, s + 32); k++) terms.push([e4m3(a[k]), e4m3(b[k])]);
      P = slowStep(terms, P, 13, 13);
    }
    const s = Math.fround(sa[g] * sb[g]);
    F = big(roundBig(big(s) * P / ONE + F, 23, -126)); // fma: exact s·P + F, one RNE rounding
  }
  return roundBig(F, 23, -126);
}

/** Exact: Σ_g sa·sb·Σ a·b (+ c) rounded once. */
export function slowExact(
  a: bigint[],
  b: bigint[],
  sa: number[] | null,
  sb: number[] | null,
  c: number,
  frac: number,
): number {
  let acc = big(c) * ONE;
  for (let k = 0; k < a.length; k++) {
    const g = Math.floor(k / 128);
    const s = sa && sb ? big(sa[g]) * big(sb[g]) / ONE : ONE;
    acc += (a[k] * b[k] / ONE) * s;
  }
  return roundBig(acc / ONE, frac, -126);
}

/** bf16 RNE of an fp32 value, as bits. */
export function bf16Bits(x: number): number {
  const u = new Uint32Array(new Float32Array([x]).buffer)[0];
  return ((u + 0x7fff + ((u >>> 16) & 1)) >>> 16) & 0xffff;
}

/** BF16 model element (deepgemm-ops.md §6.4): k16 fused steps with 25 fraction bits chained from 0, RZ to fp32. */
export function slowBf16Chain(a: number[], b: number[]): number {
  let acc = 0n;
  for (let s = 0; s < a.length; s += 16) {
    const terms = [];
    for (let k = s; k < Math.min(a.length, s + 16); k++) terms.push([bf16v(a[k]), bf16v(b[k])]);
    acc = slowStep(terms, acc, 25, 23);
  }
  return roundBig(acc, 23, -126);
}

function scaled(x: { v: bigint; e: number }, p: number): { v: bigint; e: number } {
  return { v: p >= 0 ? x.v << BigInt(p) : x.v >> BigInt(-p), e: x.e + p };
}

/**
 * SM100 1D1D element (deepgemm-ops.md §6.3, numerics.md §8.1): k32 block-scaled steps with 25 fraction bits from 0,
 * RZ to fp32; the power-of-two scales 2^xa, 2^xb of each K group scale the operands and add to their exponents.
 */
export function slowSm100(a: number[], b: number[], xa: number[], xb: number[], granK: number): number {
  let acc = 0n;
  for (let s = 0; s < a.length; s += 32) {
    const terms = [];
    for (let k = s; k < Math.min(a.length, s + 32); k++) {
      const g = Math.floor(k / granK);
      terms.push([scaled(e4m3(a[k]), xa[g]), scaled(e4m3(b[k]), xb[g])]);
    }
    acc = slowStep(terms, acc, 25, 23);
  }
  return roundBig(acc, 23, -126);
}
