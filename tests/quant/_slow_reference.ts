// An independent, scalar re-implementation of deep_gemm/utils/math.py for the tests (deepgemm-ops.md §2):
// plain loops over (row, column), no shared code with reference/quant beyond the conversion profiles.
import { getConverter } from "../../reference/formats/mod.ts";
import { f32Bits, f32FromBits } from "../../reference/fp32.ts";

export function ceilUe8m0(x: number): number {
  const b = f32Bits(Math.abs(x));
  let e = (b >>> 23) + ((b & 0x7fffff) ? 1 : 0);
  e = Math.min(254, Math.max(1, e));
  return f32FromBits(e << 23);
}

/** Slow block quantizer over an [m, n] number array (fp32 values); returns codes and scales. */
export function slowBlockCast(
  x: Float32Array,
  m: number,
  n: number,
  bm: number,
  bn: number,
  divisor: number,
  ue8m0: boolean,
  gpu: boolean,
  encode: (bits: number) => number,
): { codes: number[]; sf: number[] } {
  const R = Math.ceil(m / bm), C = Math.ceil(n / bn);
  const sf: number[] = [];
  for (let gi = 0; gi < R; gi++) {
    for (let gj = 0; gj < C; gj++) {
      let amax = 0;
      for (let i = gi * bm; i < Math.min(m, gi * bm + bm); i++) {
        for (let j = gj * bn; j < Math.min(n, gj * bn + bn); j++) amax = Math.max(amax, Math.abs(x[i * n + j]));
      }
      amax = Math.max(amax, Math.fround(1e-4));
      let s = gpu ? Math.fround(amax * Math.fround(1 / divisor)) : Math.fround(amax / divisor);
      if (ue8m0) s = ceilUe8m0(s);
      sf.push(s);
    }
  }
  const codes: number[] = [];
  for (let i = 0; i < m; i++) {
    for (let j = 0; j < n; j++) {
      const r = Math.fround(1 / sf[Math.floor(i / bm) * C + Math.floor(j / bn)]);
      codes.push(encode(f32Bits(Math.fround(x[i * n + j] * r))));
    }
  }
  return { codes, sf };
}

export const torchE4m3 = getConverter("torch_2_11", "e4m3");

/** DeepGEMM's `_quantize_to_fp4_e2m1`, transcribed literally (seven strict comparisons). */
export function deepgemmFp4(y: number): number {
  const ax = Math.abs(y);
  let code = 0;
  for (const b of [0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0]) code += ax > b ? 1 : 0;
  return y < 0 && code !== 0 ? code | 8 : code;
}
