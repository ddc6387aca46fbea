// Reference GEMM throughput: `deno run -A bench/gemm_bench.ts` (prints one line per measurement; results go to
// bench/RESULTS.md by hand with machine and date).
import { GEMM_OPS } from "../reference/gemm/registry.ts";
import { Prng } from "../reference/random/prng.ts";
import { Tensor } from "../reference/tensor/tensor.ts";

function fp8Case(M: number, N: number, K: number) {
  const r = new Prng(1), sfk = Math.ceil(K / 128);
  const codes = (n: number) =>
    Uint8Array.from({ length: n }, () => {
      const c = r.int(256);
      return (c & 0x7f) === 0x7f ? 0x7e : c;
    });
  const sc = (n: number) => Float32Array.from({ length: n }, () => Math.fround(0.5 + r.uniform()));
  return {
    a: Tensor.from("e4m3", [M, K], codes(M * K)),
    b: Tensor.from("e4m3", [N, K], codes(N * K)),
    sfa: Tensor.from("f32", [M, sfk], sc(M * sfk)),
    sfb: Tensor.from("f32", [Math.ceil(N / 128), sfk], sc(Math.ceil(N / 128) * sfk)),
  };
}

async function time(label: string, macs: number, f: () => unknown): Promise<number> {
  const t0 = performance.now();
  await f();
  const s = (performance.now() - t0) / 1000;
  console.log(`${label}: ${s.toFixed(2)} s, ${(macs / s / 1e6).toFixed(1)} M multiply-adds/s`);
  return s;
}

const small = fp8Case(256, 256, 4096);
const macs = 256 * 256 * 4096;
GEMM_OPS.fp8_gemm_nt.run(fp8Case(8, 8, 256), {}, {}); // warm-up
await time(
  "single core sm90_1d2d / hopper_wgmma_fp8 256x256x4096",
  macs,
  () => GEMM_OPS.fp8_gemm_nt.run(small, {}, {}),
);
await time("single core exact 256x256x4096", macs, () => GEMM_OPS.fp8_gemm_nt.run(small, {}, { model: "exact" }));
const w = navigator.hardwareConcurrency;
await time(`${w} workers sm90_1d2d 256x256x4096`, macs, () => GEMM_OPS.fp8_gemm_nt.runAsync(small, {}, { workers: w }));
const big = fp8Case(4096, 7168, 7168);
const sample = { fraction: 0.01, seed: 0 };
await time(
  "fp8_gemm_nt 4096x7168x7168, 1% tile sample, all workers (sampled MACs)",
  4096 * 7168 * 7168 * 0.01,
  () => GEMM_OPS.fp8_gemm_nt.runAsync(big, {}, { sample }),
);
