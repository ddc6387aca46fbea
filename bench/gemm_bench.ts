// Reference GEMM throughput: `deno run -A bench/gemm_bench.ts [--reps N] [--skip-big]`.
// Prints one line per measurement (median, min and max of N runs, wall clock and process CPU time) and the load
// average, because the machine may be shared; copy the numbers into bench/RESULTS.md with the machine and date.
import process from "node:process";
import { benchArgs } from "./_args.ts";
import { GEMM_OPS } from "../reference/registry.ts";
import { GemmWorkerPool } from "../reference/gemm/evaluate_parallel.ts";
import { selectTiles } from "../reference/gemm/engine.ts";
import { planNormal } from "../reference/gemm/normal_gemm.ts";
import { Prng } from "../reference/random/prng.ts";
import { Tensor } from "../reference/tensor/tensor.ts";

const { values } = benchArgs("usage: deno run -A bench/gemm_bench.ts [--reps 3] [--skip-big]", {
  options: { reps: { type: "string", default: "3" }, "skip-big": { type: "boolean", default: false } },
});
const REPS = Number(values.reps);

/** Uniformly random e4m3 codes (NaN codes replaced by 448) and fp32 scales in [0.5, 1.5). */
function fp8Case(M: number, N: number, K: number) {
  const r = new Prng(1), sfk = Math.ceil(K / 128);
  const codes = (n: number) => {
    const u = new Uint8Array(n);
    for (let i = 0; i < n; i++) {
      const c = r.nextU32() & 0xff;
      u[i] = (c & 0x7f) === 0x7f ? 0x7e : c;
    }
    return u;
  };
  const sc = (n: number) => Float32Array.from({ length: n }, () => Math.fround(0.5 + r.uniform()));
  return {
    a: Tensor.from("e4m3", [M, K], codes(M * K)),
    b: Tensor.from("e4m3", [N, K], codes(N * K)),
    sfa: Tensor.from("f32", [M, sfk], sc(M * sfk)),
    sfb: Tensor.from("f32", [Math.ceil(N / 128), sfk], sc(Math.ceil(N / 128) * sfk)),
  };
}

const med = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];

/** Runs f `reps` times; reports M multiply-adds/s (median, min–max) by wall clock and by process CPU time. */
async function measure(label: string, macs: number, f: () => unknown, reps = REPS): Promise<number> {
  const wall: number[] = [], cpu: number[] = [];
  for (let i = 0; i < reps; i++) {
    const c0 = process.cpuUsage(), t0 = performance.now();
    await f();
    wall.push((performance.now() - t0) / 1000);
    const u = process.cpuUsage(c0);
    cpu.push((u.user + u.system) / 1e6);
  }
  const rate = (s: number) => (macs / s / 1e6).toFixed(0);
  console.log(
    `${label}: ${med(wall).toFixed(2)} s; ${rate(med(wall))} M MAC/s wall (${rate(Math.max(...wall))}–${
      rate(Math.min(...wall))
    }), ${rate(med(cpu))} M MAC/s per CPU-second; load ${Deno.loadavg()[0].toFixed(1)}`,
  );
  return med(wall);
}

console.log(`machine: ${navigator.hardwareConcurrency} cores, Deno ${Deno.version.deno}, ${new Date().toISOString()}`);
const small = fp8Case(256, 256, 4096), smallMacs = 256 * 256 * 4096;
GEMM_OPS.fp8_gemm_nt.run(small, {}, {}); // JIT warm-up of both paths on the measured shape
GEMM_OPS.fp8_gemm_nt.run(small, {}, { model: "exact" });
await measure(
  "single core sm90_1d2d (hopper_wgmma_fp8) 256x256x4096",
  smallMacs,
  () => GEMM_OPS.fp8_gemm_nt.run(small, {}, {}),
);
await measure(
  "single core exact 256x256x4096",
  smallMacs,
  () => GEMM_OPS.fp8_gemm_nt.run(small, {}, { model: "exact" }),
);

// Scaling: a job of 2.1 G multiply-adds (about 4 s on one core), so Worker start-up (module load and JIT warm-up
// in each Worker, about 0.2 s) does not dominate.
const mid = fp8Case(1024, 512, 4096), midMacs = 1024 * 512 * 4096;
const t1 = await measure("scaling 1024x512x4096: 1 thread", midMacs, () => GEMM_OPS.fp8_gemm_nt.run(mid, {}, {}));
for (let w = 2; w <= Math.max(2, navigator.hardwareConcurrency); w *= 2) {
  const tw = await measure(
    `scaling 1024x512x4096: ${w} Workers (fresh pool per call)`,
    midMacs,
    () => GEMM_OPS.fp8_gemm_nt.runAsync(mid, {}, { workers: w }),
  );
  console.log(`  speed-up ${w} Workers vs 1 thread: ${(t1 / tw).toFixed(2)}x`);
}
{
  // A kept pool: Workers already started and JIT-warm from a previous job (as a long `verify` run would keep one).
  const pool = new GemmWorkerPool(2);
  try {
    const { job } = planNormal({
      op: "fp8_gemm_nt",
      A: mid.a,
      B: mid.b,
      sfa: mid.sfa,
      sfb: mid.sfb,
      c: null,
      d: null,
      scalars: {},
      options: {},
      kind: "fp8",
    });
    const tiles = selectTiles(job!.problems);
    await pool.evaluate(job!, tiles);
    const tp = await measure(
      "scaling 1024x512x4096: 2 Workers (kept, warm pool)",
      midMacs,
      () => pool.evaluate(job!, tiles),
    );
    console.log(`  speed-up warm pool vs 1 thread: ${(t1 / tp).toFixed(2)}x`);
  } finally {
    pool.close();
  }
}

if (!values["skip-big"]) {
  const big = fp8Case(4096, 7168, 7168);
  const sample = { fraction: 0.01, seed: 0 };
  const tiles = 56; // covering diagonal: max(32 M blocks, 56 N blocks) tiles ≥ 1 % of 1792
  await measure(
    `fp8_gemm_nt 4096x7168x7168, 1 % tile sample (${tiles} tiles), all Workers`,
    tiles * 128 * 128 * 7168,
    () => GEMM_OPS.fp8_gemm_nt.runAsync(big, {}, { sample }),
    Math.min(REPS, 2),
  );
}
