// Seeded random GEMM cases for the CPU-backend tests, with the slow model's expectation of every output element.
import { bf16Rne, f32Bits } from "../../reference/fp32.ts";
import { Prng } from "../../reference/random/prng.ts";
import { Tensor } from "../../reference/tensor/tensor.ts";
import {
  bf16Acc,
  bf16Value,
  e4m3Value,
  epilogue,
  exactRound,
  randomBf16,
  randomE4m3,
  randomScale,
  sm100Acc,
  sm90Acc,
} from "./_slow_model.ts";

/** Models the slow model covers. */
export type Fp8Model = "sm90_1d2d" | "sm90_1d1d" | "sm100_1d1d" | "exact";

/** A random tensor of e4m3 codes. */
export function e4m3Tensor(rng: Prng, shape: number[]): Tensor {
  const n = shape.reduce((x, y) => x * y, 1);
  return Tensor.from("e4m3", shape, Uint8Array.from({ length: n }, () => randomE4m3(rng)));
}

/** A random tensor of bf16 patterns. */
export function bf16Tensor(rng: Prng, shape: number[]): Tensor {
  const n = shape.reduce((x, y) => x * y, 1);
  return Tensor.from("bf16", shape, Uint16Array.from({ length: n }, () => randomBf16(rng)));
}

/** Random scales: full-mantissa f32 or UE8M0 codes 118..133 (sm100 needs powers of two). */
export function scaleTensor(rng: Prng, shape: number[], pow2: boolean): Tensor {
  const n = shape.reduce((x, y) => x * y, 1);
  if (pow2) return Tensor.from("ue8m0", shape, Uint8Array.from({ length: n }, () => 118 + rng.int(16)));
  return Tensor.from("f32", shape, Float32Array.from({ length: n }, () => randomScale(rng)));
}

/** The value of a scale element (f32 or ue8m0). */
export function scaleValue(t: Tensor, ...idx: number[]): number {
  const v = t.at(...idx);
  return t.dtype === "ue8m0" ? 2 ** (v - 127) : v;
}

/** The exponent of a power-of-two scale element. */
export function scaleExp(t: Tensor, ...idx: number[]): number {
  if (t.dtype === "ue8m0") return t.at(...idx) - 127;
  const bits = f32Bits(t.at(...idx));
  return ((bits >>> 23) & 0xff) - 127;
}

/** Output bits of a value (bf16 pattern or fp32 bits), for bit-for-bit comparisons. */
export function outBits(v: number, out: "bf16" | "f32"): number {
  return out === "bf16" ? bf16Rne(v) : f32Bits(v);
}

/** Bits of every element of a 2-D or 3-D output tensor, row-major. */
export function bitsOf(t: Tensor): number[] {
  const out: number[] = [];
  const idx = t.shape.map(() => 0);
  const n = t.numel;
  for (let i = 0; i < n; i++) {
    const v = t.at(...idx);
    out.push(t.dtype === "f32" ? f32Bits(v) : v);
    for (let d = t.ndim - 1; d >= 0; d--) {
      if (++idx[d] < t.shape[d]) break;
      idx[d] = 0;
    }
  }
  return out;
}

/** Row m of a [*, K] FP8 view as values. */
export function fp8Row(t: Tensor, m: number, K: number): number[] {
  return Array.from({ length: K }, (_, k) => e4m3Value(t.at(m, k)));
}

/** Row of a bf16 view as values. */
export function bf16Row(t: Tensor, m: number, K: number): number[] {
  return Array.from({ length: K }, (_, k) => bf16Value(t.at(m, k)));
}

/**
 * The slow model's value of one FP8 GEMM element.
 * @param a A row values, b B row values (length K)
 * @param sa/sb scale lookups per K group (value) and se/sb exponents
 */
export function fp8Element(
  model: Fp8Model,
  a: number[],
  b: number[],
  sa: (g: number) => number,
  sb: (g: number) => number,
  ea: (g: number) => number,
  eb: (g: number) => number,
  granK: number,
  c: number | null,
  out: "bf16" | "f32",
): number {
  if (model === "exact") {
    const terms = a.map((x, k) => [x, b[k], sa(Math.floor(k / granK)), sb(Math.floor(k / granK))]);
    return exactRound(terms, c, out);
  }
  const acc = model === "sm100_1d1d" ? sm100Acc(a, b, ea, eb, granK) : sm90Acc(a, b, sa, sb);
  return epilogue(acc, c, out);
}

/** The slow model's BF16 GEMM element. */
export function bf16Element(
  model: "bf16" | "exact",
  a: number[],
  b: number[],
  c: number | null,
  out: "bf16" | "f32",
): number {
  if (model === "exact") return exactRound(a.map((x, k) => [x, b[k]]), c, out);
  return epilogue(bf16Acc(a, b), c, out);
}

/** A seeded generator for a test. */
export function rngFor(seed: number): Prng {
  return new Prng(seed);
}
