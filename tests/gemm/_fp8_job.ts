// A seeded FP8 GEMM job (random E4M3 codes, fp32 scales near 1) for the parallel-evaluation tests.
import { planNormal } from "../../reference/gemm/normal_gemm.ts";
import type { GemmJob } from "../../reference/gemm/job.ts";
import { Prng } from "../../reference/random/prng.ts";
import { Tensor } from "../../reference/tensor/tensor.ts";

/** The job of `fp8_gemm_nt` on M×K and N×K random operands (1×128 / 128×128 scales). */
export function fp8Job(seed: number, M: number, N: number, K: number): GemmJob {
  const r = new Prng(seed), sfk = Math.ceil(K / 128);
  const codes = (n: number) => Uint8Array.from({ length: n }, () => r.int(0x7f) | (r.int(2) << 7));
  const sc = (n: number) => Float32Array.from({ length: n }, () => Math.fround(0.5 + r.uniform()));
  const p = planNormal({
    op: "fp8_gemm_nt",
    A: Tensor.from("e4m3", [M, K], codes(M * K)),
    B: Tensor.from("e4m3", [N, K], codes(N * K)),
    sfa: Tensor.from("f32", [M, sfk], sc(M * sfk)),
    sfb: Tensor.from("f32", [Math.ceil(N / 128), sfk], sc(Math.ceil(N / 128) * sfk)),
    c: null,
    d: null,
    scalars: {},
    options: {},
    kind: "fp8",
  });
  return p.job!;
}
