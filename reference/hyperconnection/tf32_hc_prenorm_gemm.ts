/**
 * `tf32_hc_prenorm_gemm(a, b, d, sqr_sum, num_splits)` of DeepGEMM (`csrc/apis/hyperconnection.hpp`,
 * `impls/sm90_tf32_hc_prenorm_gemm.cuh`, `deepgemm-ops.md` §7): `D = A·Bᵀ` with A bf16 and B fp32 read as TF32, and
 * `sqr_sum[m] = Σ_k A[m,k]²`, optionally split along K into partial results.
 *
 * - Split-K: the `Kb = K/64` blocks are cut contiguously; split s takes `Kb div S + (s < Kb mod S)` blocks starting at
 *   block `s·(Kb div S) + min(s, Kb mod S)`; `d[s]`, `sqr_sum[s]` are partial results the caller sums.
 * - D: one chain of TF32 wgmma steps (k8) over the split's K, from zero, no promotion (`accum` starts at 0 and every
 *   wgmma accumulates); the step model is the tensor-core profile (default `hopper_wgmma_tf32`), B is first rounded
 *   to TF32 with the named {@link Tf32Rounding} (A is bf16, exact in TF32; the TMA rounds B with RNE).
 * - Checked end to end against DeepGEMM's kernel on an H200 (M = 64, N = 32, K = 256): D 2,048/2,048 and sqr_sum
 *   64/64 bit for bit with the defaults. [verified on H200]
 * - sqr_sum, SM90 lane order: per row, four lanes q = 0..3 each run `v_q = fl32(v_q + fl32(x[8i+q]² + x[8i+q+4]²))`
 *   over the split's 64-blocks and, inside a block, over the 8 logical 16-byte chunks i = 0..7 (the 128B-swizzle read
 *   `(row xor i) mod 8` is logical chunk i); then `warp_reduce_sum<4>`: xor 2 then xor 1, i.e. `(v0+v2) + (v1+v3)`.
 *   bf16 squares are exact in fp32, so the inner pair sum has one rounding however NVCC contracts it; that the running
 *   add stays a separate FADD (no reassociation into an FMA chain) is [inferred] from `-O3` without fast-math.
 * @module
 */
import { f32 } from "../fp32.ts";
import { Tensor } from "../tensor/tensor.ts";
import { toFloat32 } from "../tensor/values.ts";
import { fusedStep, STEP_ROUNDINGS } from "../tensor_core/fused_dot_add.ts";
import { mmaExponent } from "../tensor_core/operand_tables.ts";
import { tensorCoreProfile } from "../tensor_core/profiles.ts";
import { type Tf32Rounding, toTf32 } from "./tf32_rounding.ts";

/** Scalars and model of the HC pre-norm GEMM. */
export interface HcPrenormOptions {
  /** `num_splits` (undefined: no split dimension in the outputs). */
  numSplits?: number;
  /** fp32 → TF32 rounding of B by the TMA unit (default `rne`, verified on an H200; `truncate` is the variant). */
  tf32Rounding?: Tf32Rounding;
  /** Tensor-core profile of the TF32 steps (default `hopper_wgmma_tf32`). */
  tensorCore?: string;
  /** Architecture; only `sm90` is modelled (SM100 has a different sqr_sum order). */
  arch?: "sm90" | "sm100";
}

/**
 * The K-block range `[start, start + count)` of split s (in 64-wide blocks).
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { hcSplitBlocks } from "./tf32_hc_prenorm_gemm.ts";
 * // 10 K blocks over 3 splits: 4 + 3 + 3, the remainder going to the first splits.
 * assert.deepEqual(hcSplitBlocks(10, 3, 0), [0, 4]);
 * assert.deepEqual(hcSplitBlocks(10, 3, 1), [4, 3]);
 * assert.deepEqual(hcSplitBlocks(10, 3, 2), [7, 3]);
 * ```
 */
export function hcSplitBlocks(kBlocks: number, numSplits: number, s: number): [number, number] {
  const per = Math.floor(kBlocks / numSplits), rem = kBlocks % numSplits;
  return [s * per + Math.min(s, rem), per + (s < rem ? 1 : 0)];
}

/**
 * The reference of `tf32_hc_prenorm_gemm`.
 * @param a bf16 `[M, K]`
 * @param b f32 `[N, K]`
 * @returns `d` f32 `[M, N]` (or `[S, M, N]`) and `sqr_sum` f32 `[M]` (or `[S, M]`)
 * @throws TypeError for wrong dtypes/shapes; RangeError for `K % 64 ≠ 0`, `N % 8 ≠ 0`, `N > 32` (SM90), bad splits
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Tensor } from "../tensor/tensor.ts";
 * import { tf32HcPrenormGemm } from "./tf32_hc_prenorm_gemm.ts";
 * const a = Tensor.from("bf16", [1, 64], new Uint16Array(64).fill(0x4000)); // 2.0
 * const b = Tensor.from("f32", [8, 64], new Float32Array(8 * 64).fill(1 + 2 ** -12)); // below half a TF32 ulp
 * const { d, sqr_sum } = tf32HcPrenormGemm(a, b);
 * assert.equal(d.at(0, 3), 128);
 * assert.equal(sqr_sum.at(0), 256);
 * ```
 */
export function tf32HcPrenormGemm(
  a: Tensor,
  b: Tensor,
  options: HcPrenormOptions = {},
): { d: Tensor; sqr_sum: Tensor } {
  const fn = "tf32_hc_prenorm_gemm";
  if (!(a instanceof Tensor) || a.dtype !== "bf16" || a.ndim !== 2) {
    throw new TypeError(`${fn}: a must be a 2-D bf16 tensor`);
  }
  if (!(b instanceof Tensor) || b.dtype !== "f32" || b.ndim !== 2) {
    throw new TypeError(`${fn}: b must be a 2-D f32 tensor`);
  }
  const [M, K] = a.shape, [N, K2] = b.shape;
  if (K !== K2) throw new TypeError(`${fn}: a has K = ${K}, b has K = ${K2}`);
  if (N <= 0 || K <= 0) throw new RangeError(`${fn}: n and k must be positive`);
  if (K % 64 !== 0) throw new RangeError(`${fn}: k must be a multiple of 64 (BLOCK_K), got ${K}`);
  if (N % 8 !== 0) throw new RangeError(`${fn}: n must be a multiple of 8, got ${N}`);
  const arch = options.arch ?? "sm90";
  if (arch !== "sm90") {
    throw new RangeError(`${fn}: only the SM90 kernel is modelled (the SM100 sqr_sum order differs)`);
  }
  if (N > 32) throw new RangeError(`${fn}: SM90 supports n ≤ 32, got ${N}`);
  const splits = options.numSplits;
  if (splits !== undefined && !(Number.isSafeInteger(splits) && splits >= 1)) {
    throw new RangeError(`${fn}: num_splits must be an integer ≥ 1, got ${splits}`);
  }
  const S = splits ?? 1;
  const rounding = options.tf32Rounding ?? "rne";
  const p = tensorCoreProfile(options.tensorCore ?? "hopper_wgmma_tf32");
  if (p.output !== "rz_f32" && p.output !== "rz_e8m13" && p.output !== "rne_f16") {
    throw new RangeError(`${fn}: tensor-core profile "${p.name}" is not a fused-step profile`);
  }
  const r = STEP_ROUNDINGS[p.output];

  const av = Float64Array.from(toFloat32(a.contiguous()));
  const bv = Float64Array.from(toFloat32(b.contiguous()), (x) => toTf32(x, rounding));
  const ae = Int32Array.from(av, (x) => mmaExponent(x, -126)), be = Int32Array.from(bv, (x) => mmaExponent(x, -126));
  const d = Tensor.zeros("f32", splits === undefined ? [M, N] : [S, M, N]);
  const sq = Tensor.zeros("f32", splits === undefined ? [M] : [S, M]);
  const dd = d.data as Float32Array, sd = sq.data as Float32Array;
  const kBlocks = K / 64;
  for (let s = 0; s < S; s++) {
    const [b0, nb] = hcSplitBlocks(kBlocks, S, s);
    const k0 = b0 * 64, k1 = k0 + nb * 64;
    for (let m = 0; m < M; m++) {
      for (let n = 0; n < N; n++) {
        let acc = 0;
        for (let k = k0; k < k1; k += p.termsPerStep) {
          acc = fusedStep(
            av,
            ae,
            m * K + k,
            bv,
            be,
            n * K + k,
            Math.min(p.termsPerStep, k1 - k),
            acc,
            0,
            p.fractionBits,
            r,
          );
        }
        dd[(s * M + m) * N + n] = acc;
      }
      const v = [0, 0, 0, 0];
      for (let k = k0; k < k1; k += 8) {
        for (let q = 0; q < 4; q++) {
          const x = av[m * K + k + q], y = av[m * K + k + q + 4];
          v[q] = f32(v[q] + f32(x * x + y * y));
        }
      }
      sd[s * M + m] = f32(f32(v[0] + v[2]) + f32(v[1] + v[3]));
    }
  }
  return { d, sqr_sum: sq };
}
