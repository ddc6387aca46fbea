/**
 * Operands for the DeepSeek-V3 table at its real M (`--suite deepseek-v3-full`, up to 32768×7168 E4M3 = 235 MB per
 * operand, 10 GB over the 45 shapes), made fast: the reduced-M suite quantizes `torch.randn`-like BF16 tensors (12
 * PRNG draws per element), which would take minutes per shape here. These builders write E4M3 codes directly, two
 * bytes per 16 PRNG bits through a table whose 128 magnitudes are the quantiles of |normal| · 128 (so the codes are
 * distributed like a per-token quantized Gaussian: symmetric, mostly mid-range, a few near 448, no NaN), from an
 * inlined xoshiro128** (the generator of {@link Prng}, seeded from the case's Prng), and positive fp32 scales in
 * [2^-8, 2^-6). Integer arithmetic only, so the same case id gives the same bits on every machine.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Prng } from "../../reference/random/prng.ts";
 * import { denseFast, fillE4m3 } from "./fast_inputs.ts";
 * const a = new Uint8Array(1000), b = new Uint8Array(1000);
 * fillE4m3(a, new Prng(7));
 * fillE4m3(b, new Prng(7));
 * assert.deepEqual(a, b); // seeded: the same bits every time
 * assert.ok(a.every((c) => (c & 0x7f) !== 0x7f)); // no NaN code
 * const built = denseFast(64, 256, 384)(new Prng(1));
 * assert.deepEqual(built.inputs.sfb.shape, [2, 3]);
 * ```
 * @module
 */
import { Prng } from "../../reference/random/prng.ts";
import { Tensor } from "../../reference/tensor/tensor.ts";
import { operandTable } from "../../reference/tensor_core/operand_tables.ts";
import type { Built } from "../../reference/cases/case_spec.ts";

/** Byte → E4M3 code: bit 7 the sign, bits 0-6 index the 128 quantile magnitudes (ascending). */
const BYTE_CODE: Uint8Array = (() => {
  const values = operandTable("e4m3").values; // code → value
  // 128 quantiles of |N(0, 1)| (Irwin–Hall normals of Prng: exact integer arithmetic), scaled by 128 (so ±3.5σ ≈ 448)
  const rng = new Prng(0x0e4a3f8);
  const per = 32;
  const draws = Float64Array.from({ length: 128 * per }, () => Math.abs(rng.normal()) * 128).sort();
  const out = new Uint8Array(256);
  for (let i = 0; i < 128; i++) {
    const v = Math.min(448, draws[i * per + per / 2]);
    let best = 0;
    for (let c = 1; c < 0x7f; c++) if (Math.abs(values[c] - v) < Math.abs(values[best] - v)) best = c;
    out[i] = best;
    out[128 + i] = 0x80 | best;
  }
  return out;
})();

/** Two codes per 16 random bits (little-endian: the low byte first). */
const PAIR_CODE: Uint16Array = (() => {
  const t = new Uint16Array(65536);
  for (let x = 0; x < 65536; x++) t[x] = BYTE_CODE[x & 255] | (BYTE_CODE[x >>> 8] << 8);
  return t;
})();

/** The xoshiro128** state for one operand: four words of the case's PRNG (never all zero). */
function seedState(p: Prng): Int32Array {
  const s = Int32Array.from({ length: 4 }, () => p.nextU32() | 0);
  if ((s[0] | s[1] | s[2] | s[3]) === 0) s[0] = 1;
  return s;
}

/**
 * Fills `out` with random 32-bit words mapped by `map` (one call per 4 bytes), from a xoshiro128** seeded by `p`.
 * `out` must start at a 4-byte aligned offset; a tail of 1-3 bytes takes the low bytes of one more word.
 */
function fillWords(out: Uint8Array, p: Prng, map: (r: number) => number): void {
  const st = seedState(p);
  let s0 = st[0], s1 = st[1], s2 = st[2], s3 = st[3];
  const whole = out.length >>> 2;
  if (out.byteOffset % 4 !== 0) throw new RangeError("fillWords: 4-byte aligned output needed");
  const w = new Uint32Array(out.buffer, out.byteOffset, whole);
  for (let i = 0; i < whole; i++) {
    const m5 = Math.imul(s1, 5);
    const r = Math.imul((m5 << 7) | (m5 >>> 25), 9);
    const t = s1 << 9;
    s2 ^= s0;
    s3 ^= s1;
    s1 ^= s2;
    s0 ^= s3;
    s2 ^= t;
    s3 = (s3 << 11) | (s3 >>> 21);
    w[i] = map(r);
  }
  const tail = out.length & 3;
  if (tail) {
    const m5 = Math.imul(s1, 5);
    const v = map(Math.imul((m5 << 7) | (m5 >>> 25), 9)) >>> 0;
    for (let j = 0; j < tail; j++) out[whole * 4 + j] = (v >>> (8 * j)) & 255;
  }
}

/**
 * Fills `out` with E4M3 codes distributed like a per-token quantized Gaussian (no NaN), 4 codes per PRNG word.
 * @param out the codes (4-byte aligned start)
 * @param p the case's PRNG (four words are drawn from it)
 */
export function fillE4m3(out: Uint8Array, p: Prng): void {
  fillWords(out, p, (r) => PAIR_CODE[r & 0xffff] | (PAIR_CODE[r >>> 16] << 16));
}

/**
 * Fills `out` with positive fp32 scales in [2^-8, 2^-6) (random exponent of two, random 23-bit fraction).
 * @param out the scales
 * @param p the case's PRNG
 */
export function fillScales(out: Float32Array, p: Prng): void {
  fillWords(new Uint8Array(out.buffer, out.byteOffset, out.byteLength), p, (r) => ((119 + (r & 1)) << 23) | (r >>> 9));
}

/** An E4M3 tensor of `shape` filled by {@link fillE4m3}. */
export function e4m3Tensor(p: Prng, shape: readonly number[]): Tensor {
  const t = Tensor.zeros("e4m3", shape);
  fillE4m3(t.data as Uint8Array, p);
  return t;
}

/** An f32 scale tensor of `shape` filled by {@link fillScales}. */
export function scaleTensor(p: Prng, shape: readonly number[]): Tensor {
  const t = Tensor.zeros("f32", shape);
  fillScales(t.data as Float32Array, p);
  return t;
}

const sfk = (k: number) => Math.ceil(k / 128);

/** Dense `fp8_gemm_nt`: A `[m, k]` per-token scales, B `[n, k]` per-128-block scales (SM90 1D2D). */
export function denseFast(m: number, n: number, k: number): (p: Prng) => Built {
  return (p) => ({
    inputs: {
      a: e4m3Tensor(p, [m, k]),
      sfa: scaleTensor(p, [m, sfk(k)]),
      b: e4m3Tensor(p, [n, k]),
      sfb: scaleTensor(p, [Math.ceil(n / 128), sfk(k)]),
    },
    scalars: {},
  });
}

/**
 * M-grouped contiguous: `sizes[g]` rows of group g, each segment padded with −1 rows (A zeroed there, as DeepGEMM's
 * tests do) to a multiple of 128; B `[G, n, k]` per-block scales.
 */
export function contiguousFast(sizes: readonly number[], n: number, k: number): (p: Prng) => Built {
  return (p) => {
    const layout: number[] = [];
    for (const [g, s] of sizes.entries()) {
      for (let r = 0; r < s; r++) layout.push(g);
      for (let r = s; r < Math.ceil(s / 128) * 128; r++) layout.push(-1);
    }
    const M = layout.length, G = sizes.length;
    const a = e4m3Tensor(p, [M, k]);
    const ad = a.data as Uint8Array;
    layout.forEach((g, r) => g < 0 && ad.fill(0, r * k, (r + 1) * k));
    return {
      inputs: {
        a,
        sfa: scaleTensor(p, [M, sfk(k)]),
        b: e4m3Tensor(p, [G, n, k]),
        sfb: scaleTensor(p, [G, Math.ceil(n / 128), sfk(k)]),
        grouped_layout: Tensor.from("i32", [M], Int32Array.from(layout)),
      },
      scalars: {},
    };
  };
}

/** Masked: A `[G, mMax, k]` (every row random, padding included), B `[G, n, k]`, `masked_m`, `expected_m`. */
export function maskedFast(
  G: number,
  mMax: number,
  n: number,
  k: number,
  maskedM: readonly number[],
  expectedM: number,
): (p: Prng) => Built {
  return (p) => ({
    inputs: {
      a: e4m3Tensor(p, [G, mMax, k]),
      sfa: scaleTensor(p, [G, mMax, sfk(k)]),
      b: e4m3Tensor(p, [G, n, k]),
      sfb: scaleTensor(p, [G, Math.ceil(n / 128), sfk(k)]),
      masked_m: Tensor.from("i32", [G], Int32Array.from(maskedM)),
    },
    scalars: { expected_m: expectedM },
  });
}
