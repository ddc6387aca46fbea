import { Prng } from "../../reference/random/prng.ts";
import { Tensor } from "../../reference/tensor/tensor.ts";
import { fma32 } from "../../reference/fp32.ts";
import { decodeTable } from "../../reference/formats/batch.ts";
import { fusedDotAdd } from "../../reference/tensor_core/fused_dot_add.ts";

export const E4M3 = decodeTable("e4m3");
const f = Math.fround;

/** Random finite e4m3 codes with |value| ≤ 2^maxExp (exponent field ≤ 7 + maxExp). */
export function randomE4m3(rng: Prng, n: number, maxExp = 3): Uint8Array {
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    const e = rng.int(8 + maxExp), m = rng.int(8), s = rng.int(2);
    out[i] = (s << 7) | (e << 3) | m;
  }
  return out;
}

/** Random fp32 values in ±[2^lo, 2^hi). */
export function randomF32(rng: Prng, n: number, lo = -3, hi = 1, positive = false): Float32Array {
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    const v = (1 + rng.uniform()) * 2 ** (lo + rng.int(hi - lo));
    out[i] = positive || rng.int(2) === 0 ? v : -v;
  }
  return out;
}

/** MQA inputs with random data. */
export function mqaInputs(seed: number, S: number, H: number, D: number, Skv: number, ks: number[], ke: number[]) {
  const rng = new Prng(seed);
  return {
    q: Tensor.from("e4m3", [S, H, D], randomE4m3(rng, S * H * D)),
    kv: Tensor.from("e4m3", [Skv, D], randomE4m3(rng, Skv * D)),
    kv_sf: Tensor.from("f32", [Skv], randomF32(rng, Skv, -8, -4, true)),
    weights: Tensor.from("f32", [S, H], randomF32(rng, S * H)),
    ks: Tensor.from("i32", [S], Int32Array.from(ks)),
    ke: Tensor.from("i32", [S], Int32Array.from(ke)),
  };
}

/**
 * Slow independent SM90 logit: scores through the readable fusedDotAdd, then the epilogue simulated lane by lane as the
 * kernel source writes it (sum[4] per lane, NVCC's contraction of the first pair, per-lane scale, xor-1 then xor-2).
 */
export function slowSm90Logit(
  qCodes: ArrayLike<number>,
  qOff: number,
  kvCodes: ArrayLike<number>,
  kvOff: number,
  w: ArrayLike<number>,
  wOff: number,
  H: number,
  D: number,
  sf: number,
): number {
  const s: number[] = [];
  for (let h = 0; h < H; h++) {
    const a: number[] = [], b: number[] = [];
    for (let d = 0; d < D; d++) {
      a.push(E4M3[qCodes[qOff + h * D + d]]);
      b.push(E4M3[kvCodes[kvOff + d]]);
    }
    s.push(fusedDotAdd("hopper_wgmma_fp8", a, b, 0));
  }
  const v: number[] = [];
  for (let lane = 0; lane < 4; lane++) {
    // Accumulator registers j of this lane for one KV row: heads 8(j/4) + 2·lane + (j&1), j&2 = 0 (row v_0).
    const tr = (j: number) => {
      const h = 8 * (j >> 2) + 2 * lane + (j & 1);
      return [Math.max(s[h], 0), w[wOff + h]];
    };
    const sum = [0, 1].map((k) => {
      const [x0, y0] = tr(k), [x1, y1] = tr(4 + k);
      return H >= 16 ? fma32(x0, y0, f(x1 * y1)) : f(x0 * y0);
    });
    for (let j = 2; j < H / 8; j++) {
      for (let k = 0; k < 2; k++) {
        const [x, y] = tr(4 * j + k);
        sum[k] = fma32(x, y, sum[k]);
      }
    }
    v.push(f(f(sum[0] + sum[1]) * sf));
  }
  const x1 = v.map((x, i) => f(x + v[i ^ 1]));
  return f(x1[0] + x1[2]);
}
