/**
 * The head reduction of the lightning indexer: `logit = Σ_h w[h]·relu(s_h)·sfkv`, evaluated in the exact fp32
 * operation order of a kernel. The order is a named part of the MQA model (`deepgemm-ops.md` §8.1).
 *
 * How the `sm90` order was derived (DeepGEMM `54e2261`, `impls/sm90_fp8_mqa_logits.cuh`, read, not copied):
 * - the score tile is `WGMMA(KV · Qᵀ)`: M = KV rows, N = (query, head) pairs; by the wgmma m64nNk32 accumulator layout a
 *   lane of quad position q = lane mod 4 holds, for each of its two KV rows, heads `h = 8t + 2q + e` (t = 0 … H/8−1,
 *   e ∈ {0, 1}), and its weight registers are loaded with the same head mapping;
 * - per (row, e) the lane keeps one running sum `sum[k] += fmaxf(s, 0) · w` over t, starting from `sum[k] = fmaxf(s,0)·w`
 *   of t = 0; then `v = (sum[e=0] + sum[e=1]) · sfkv`, then `v += shfl_xor(v, 1)`, `v += shfl_xor(v, 2)`;
 * - NVCC (CUDA 13.0, `-O3`, default `--fmad=true`) contracts `sum = p0 + p1` of the first two products as
 *   `fma(relu(s_{t=0}), w_{t=0}, fl32(relu(s_{t=1})·w_{t=1}))` (the FMA absorbs the LEFT product; the right one is
 *   rounded), every later step as `fma(relu(s_t), w_t, sum)`; the scale multiply and the shuffle adds stay separate
 *   FMUL / FADD. This was read off the SASS of a probe kernel with the same expression shape
 *   (`tests/indexer/gpu_probe/mqa_reduce_probe.cu`) and checked on an H200: 65,536 of 65,536 lane results equal this
 *   order bit for bit for H = 32 and 64, while the order of §8.1 (product of t = 0 rounded, FMA from t = 1) matches
 *   only about 91 % — the source of the "about 86 % bit-equal" of `numerics.md` §8.2b. [verified on H200, probe]
 * - the four lanes of a quad end with identical values (IEEE addition is commutative), so the racing store of the
 *   four lanes to one address is harmless (checked by the probe as well).
 * - End to end: DeepGEMM's own `sm90_fp8_mqa_logits` kernel, compiled from its headers and run on an H200
 *   (`tests/indexer/gpu_probe/deepgemm_mqa_run.cu`), gave 38,118 in-range logits (H = 64/D = 128 and H = 32/D = 64);
 *   the `sm90` model (this order + `hopper_wgmma_fp8` scores) reproduced 100 % of them bit for bit, the §8.1 order
 *   89.3 % and 85.8 %. [verified on H200]
 *
 * @module
 */
import { bf16, bf16ToF32, f32, fma32 } from "../fp32.ts";
import { bf16Add, bf16Fma, bf16Mul } from "./bf16_fma.ts";

/**
 * Named head-reduction orders:
 * - `sm90`: DeepGEMM's SM90 kernel (FP8 MQA and paged MQA), derived and probe-verified as described above;
 * - `sm90_spec81`: the order as written in `deepgemm-ops.md` §8.1 (first product rounded, FMA from the second head
 *   group); kept as a separate variant because it differs from the kernel in about one logit in ten;
 * - `sm100_fp32`: `deepgemm-ops.md` §8.1 for SM100 with fp32 weights: four FMA chains over heads ≡ r (mod 4) from 0
 *   on `a + |a|` (= 2·relu(a)), `((S0+S2)+(S1+S3))/2`, then `· sfkv` (FP8). [from source, not checked on a GPU]
 * - `sm100_bf16`: `deepgemm-ops.md` §8.1 for SM100 with bf16 weights (bf16 logits): `a = bf16(relu(s))` (RNE), four
 *   chains `S_r = bf16_fma(a, w, S_r)` over heads ≡ r (mod 4) from 0, each with one bf16 rounding ({@link bf16Fma}),
 *   `reduced = bf16(S_0+S_2) ⊕bf16 bf16(S_1+S_3)`, FP8: `bf16(reduced · bf16(sfkv))`; the result is a bf16 value.
 *   [from source, not checked on a GPU]
 */
export type HeadReductionOrder = "sm90" | "sm90_spec81" | "sm100_fp32" | "sm100_bf16";

/** Every head-reduction order, for CLI validation and loops in tests. */
export const HEAD_REDUCTION_ORDERS: readonly HeadReductionOrder[] = Object.freeze([
  "sm90",
  "sm90_spec81",
  "sm100_fp32",
  "sm100_bf16",
]);

/**
 * Checks that a name is a head-reduction order.
 * @throws RangeError naming the known orders
 */
export function checkHeadReductionOrder(name: string): HeadReductionOrder {
  if (!(HEAD_REDUCTION_ORDERS as readonly string[]).includes(name)) {
    throw new RangeError(`Unknown head-reduction order "${name}"; known: ${HEAD_REDUCTION_ORDERS.join(", ")}`);
  }
  return name as HeadReductionOrder;
}

/**
 * Reduces the H scores of one (query, key) pair to one fp32 logit in a kernel's exact operation order.
 * @param order the named order
 * @param s scores `s_h` (fp32 values), read at `s[sOff + h]`
 * @param w weights (fp32 values; bf16 values for `sm100_bf16`), read at `w[wOff + h]`
 * @param H number of heads (a multiple of 8 for the SM90 orders, of 4 for SM100)
 * @param sfkv the key's fp32 scale (FP8 KV); pass `undefined` for FP4 (no scale multiply on SM100)
 * @returns the fp32 logit (before any cast to the logits dtype); a bf16 value for `sm100_bf16`
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { reduceHeads } from "./head_reduction.ts";
 * const s = new Float64Array(32).fill(1), w = new Float64Array(32).fill(0.5);
 * s[3] = -7; // relu drops it
 * assert.equal(reduceHeads("sm90", s, 0, w, 0, 32, 2), 31);
 * assert.equal(reduceHeads("sm100_fp32", s, 0, w, 0, 32, 2), 31);
 * assert.equal(reduceHeads("sm100_bf16", s, 0, w, 0, 32, 2), 31);
 * ```
 */
export function reduceHeads(
  order: HeadReductionOrder,
  s: ArrayLike<number>,
  sOff: number,
  w: ArrayLike<number>,
  wOff: number,
  H: number,
  sfkv: number | undefined,
): number {
  if (order === "sm100_bf16") {
    const S = [0, 0, 0, 0];
    for (let h = 0; h < H; h++) {
      const a = bf16(Math.max(s[sOff + h], 0));
      S[h & 3] = bf16ToF32(bf16Fma(a, w[wOff + h], S[h & 3]));
    }
    const reduced = bf16Add(bf16Add(S[0], S[2]), bf16Add(S[1], S[3]));
    return sfkv === undefined ? reduced : bf16Mul(reduced, bf16(sfkv));
  }
  if (order === "sm100_fp32") {
    const S = [0, 0, 0, 0];
    for (let h = 0; h < H; h++) {
      const a = s[sOff + h];
      S[h & 3] = fma32(f32(a + Math.abs(a)), w[wOff + h], S[h & 3]);
    }
    const reduced = f32(f32(f32(S[0] + S[2]) + f32(S[1] + S[3])) / 2);
    return sfkv === undefined ? reduced : f32(reduced * sfkv);
  }
  const groups = H >> 3;
  const sf = sfkv ?? 1;
  const P = [0, 0, 0, 0];
  for (let q = 0; q < 4; q++) {
    let pair = 0;
    for (let e = 0; e < 2; e++) {
      const h0 = 2 * q + e;
      const r0 = Math.max(s[sOff + h0], 0), w0 = w[wOff + h0];
      let S: number, t: number;
      if (order === "sm90" && groups >= 2) {
        // NVCC's contraction of `p0 + p1`: the left product is fused, the right one rounded (see the module doc).
        S = fma32(r0, w0, f32(Math.max(s[sOff + h0 + 8], 0) * w[wOff + h0 + 8]));
        t = 2;
      } else {
        S = f32(r0 * w0);
        t = 1;
      }
      for (; t < groups; t++) {
        const h = h0 + 8 * t;
        S = fma32(Math.max(s[sOff + h], 0), w[wOff + h], S);
      }
      pair = e === 0 ? S : f32(pair + S);
    }
    P[q] = f32(pair * sf);
  }
  // Butterfly: xor 1 forms P0+P1 and P2+P3, xor 2 adds the two (every lane of the quad gets the same bits).
  return f32(f32(P[0] + P[1]) + f32(P[2] + P[3]));
}
