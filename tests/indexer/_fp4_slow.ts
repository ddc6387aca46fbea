/**
 * Slow, independent paths for the SM100 indexer tests: FP4 codes and UE8M0 bytes decoded to exact integers, the
 * block-scaled score computed in BigInt with MMA-Sim's documented mxf4nvf4 rule (numerics.md §8.1: each group of 16
 * products summed exactly, times its two scales, the groups and c fused with n = 35 fraction bits by truncating
 * each term toward zero, then RZ to fp32), and exact bf16 rounding for the bf16 reduction.
 */
import { fma32 } from "../../reference/fp32.ts";

/** 2·|value| of the E2M1 magnitude codes 0…7 (integers, so products are exact). */
const TWICE = [0, 1, 2, 3, 4, 6, 8, 12];

/** Signed 2·value of an E2M1 code. */
export function twiceE2m1(code: number): number {
  const m = TWICE[code & 7];
  return code & 8 ? -m : m;
}

/** Codes of element k of a packed row (low nibble = even element). */
export function codeAt(bytes: ArrayLike<number>, rowOff: number, k: number): number {
  const b = bytes[rowOff + (k >> 1)] & 0xff;
  return k & 1 ? b >> 4 : b & 0xf;
}

/** An exact binary number m·2^e. */
interface Exact {
  m: bigint;
  e: number;
}

const bitLen = (x: bigint) => (x < 0n ? -x : x).toString(2).length;

/** trunc(m · 2^sh) toward zero. */
function shiftTrunc(m: bigint, sh: number): bigint {
  if (sh >= 0) return m << BigInt(sh);
  const a = m < 0n ? -m : m;
  const r = a >> BigInt(-sh);
  return m < 0n ? -r : r;
}

/** RZ of m·2^e to fp32 (24 significant bits, quantum ≥ 2^-149). */
function rzF32(x: Exact): Exact {
  if (x.m === 0n) return { m: 0n, e: 0 };
  const msb = bitLen(x.m) - 1 + x.e;
  if (msb > 127) throw new Error("overflow not expected in these tests");
  const qe = Math.max(msb, -126) - 23;
  return qe > x.e ? { m: shiftTrunc(x.m, x.e - qe), e: qe } : x;
}

function toNumber(x: Exact): number {
  return Number(x.m) * 2 ** x.e; // ≤ 24 bits (or an exact bf16/fp32 value): exact
}

/**
 * The mxf4nvf4 score of one Q row and one KV row (D elements; scale bytes per 32), chained over 64-wide steps.
 */
export function slowFp4Score(
  qBytes: ArrayLike<number>,
  qOff: number,
  qScale: readonly number[],
  kBytes: ArrayLike<number>,
  kOff: number,
  kScale: readonly number[],
  D: number,
  n = 35,
): number {
  let c: Exact = { m: 0n, e: 0 };
  for (let k0 = 0; k0 < D; k0 += 64) {
    const ec = c.m === 0n ? -126 : Math.max(bitLen(c.m) - 1 + c.e, -126);
    const terms: { G: bigint; eg: number }[] = [];
    for (let g = 0; g < 4 && k0 + 16 * g < D; g++) {
      let G = 0n; // 4 · (exact group sum)
      for (let k = k0 + 16 * g; k < k0 + 16 * g + 16; k++) {
        G += BigInt(twiceE2m1(codeAt(qBytes, qOff, k)) * twiceE2m1(codeAt(kBytes, kOff, k)));
      }
      const blk = (k0 + 16 * g) >> 5;
      terms.push({ G, eg: (qScale[blk] - 127) + (kScale[blk] - 127) });
    }
    let E = ec;
    for (const t of terms) E = Math.max(E, t.eg);
    let sum = shiftTrunc(c.m, c.e + n - E);
    for (const t of terms) sum += shiftTrunc(t.G, t.eg + n - E - 2);
    c = rzF32({ m: sum, e: E - n });
  }
  return toNumber(c);
}

/** The exact value of a finite double as m·2^e. */
function exactOf(x: number): Exact {
  if (!Number.isFinite(x)) throw new RangeError(`exactOf: ${x} is not finite`);
  if (x === 0) return { m: 0n, e: 0 };
  let e = 0;
  while (!Number.isInteger(x)) {
    x *= 2;
    e--;
  }
  while (Number.isInteger(x / 2) && x !== 0 && Math.abs(x) > 1) {
    x /= 2;
    e++;
  }
  return { m: BigInt(x), e };
}

/** RNE of an exact value to bf16 (8 significant bits, quantum ≥ 2^-133), overflow → ±Inf; returns the value. */
export function rneBf16(x: Exact): number {
  if (x.m === 0n) return 0;
  const neg = x.m < 0n, a = neg ? -x.m : x.m;
  const msb = bitLen(a) - 1 + x.e;
  const qe = Math.max(msb, -126) - 7;
  let q = a, e = x.e;
  if (qe > x.e) {
    const sh = BigInt(qe - x.e);
    q = a >> sh;
    const rem = a - (q << sh), half = 1n << (sh - 1n);
    if (rem > half || (rem === half && (q & 1n) === 1n)) q += 1n;
    e = qe;
  }
  const v = Number(q) * 2 ** e;
  if (v >= (2 - 2 ** -8) * 2 ** 127) return neg ? -Infinity : Infinity;
  return neg ? -v : v;
}

/** bf16(a·b + c) with one rounding, by exact BigInt arithmetic (a, b, c finite bf16 values). */
export function slowBf16Fma(a: number, b: number, c: number): number {
  const A = exactOf(a), B = exactOf(b), C = exactOf(c);
  const p: Exact = { m: A.m * B.m, e: A.e + B.e };
  if (p.m === 0n) return rneBf16(C);
  if (C.m === 0n) return rneBf16(p);
  const e = Math.min(p.e, C.e);
  return rneBf16({ m: (p.m << BigInt(p.e - e)) + (C.m << BigInt(C.e - e)), e });
}

/** The SM100 fp32 head reduction (§8.1) by direct evaluation: four chains, `((S0+S2)+(S1+S3))/2`, FP4: no sfkv. */
export function slowSm100Fp32(s: readonly number[], w: ArrayLike<number>, wOff: number, sfkv?: number): number {
  const f = Math.fround, S = [0, 0, 0, 0];
  s.forEach((x, h) => S[h % 4] = fma32(2 * Math.max(x, 0), w[wOff + h], S[h % 4]));
  const r = f(f(f(S[0] + S[2]) + f(S[1] + S[3])) / 2);
  return sfkv === undefined ? r : f(r * sfkv);
}

/** The SM100 bf16 head reduction (§8.1) by direct evaluation with exact bf16 roundings. */
export function slowSm100Bf16(s: readonly number[], w: ArrayLike<number>, wOff: number, sfkv?: number): number {
  const S = [0, 0, 0, 0];
  s.forEach((x, h) => S[h % 4] = slowBf16Fma(rneBf16(exactOf(Math.max(x, 0))), w[wOff + h], S[h % 4]));
  const add = (x: number, y: number) => slowBf16Fma(x, 1, y);
  const r = add(add(S[0], S[2]), add(S[1], S[3]));
  return sfkv === undefined ? r : slowBf16Fma(r, rneBf16(exactOf(sfkv)), 0);
}
