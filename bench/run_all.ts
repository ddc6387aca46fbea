/**
 * `deno task bench`: every benchmark of the project in one run — the reference and CPU-backend throughputs on this
 * machine and, where an NVIDIA GPU is present, the CUDA kernels against cuBLASLt and PyTorch (`tests/gpu/run.sh`
 * with `STEPS="build bench"`). Each benchmark prints its own table; measured numbers are recorded by hand, with the
 * machine and the date, in `bench/RESULTS.md`.
 *
 * Usage: deno run -A bench/run_all.ts [--only formats,quant,gemm,cpu,mqa,safetensors,gpu]
 * @module
 */
import { benchArgs } from "./_args.ts";
import { gpuPresent } from "../ffi/backend.ts";

const BENCHES: Readonly<Record<string, string[]>> = {
  formats: ["deno", "run", "-A", "bench/formats_bench.ts"],
  quant: ["deno", "run", "-A", "bench/quant_bench.ts"],
  gemm: ["deno", "run", "-A", "bench/gemm_bench.ts"],
  cpu: ["deno", "run", "-A", "bench/cpu_backend_bench.ts"],
  mqa: ["deno", "run", "-A", "bench/mqa_bench.ts"],
  safetensors: ["deno", "run", "-A", "bench/safetensors_bench.ts"],
  gpu: ["bash", "tests/gpu/run.sh"],
};

const { values } = benchArgs(
  "usage: deno run -A bench/run_all.ts [--only formats,quant,gemm,cpu,mqa,safetensors,gpu]",
  { options: { only: { type: "string" } } },
);
const names = values.only ? values.only.split(",") : Object.keys(BENCHES);
const unknown = names.filter((n) => !Object.hasOwn(BENCHES, n));
if (unknown.length) {
  console.error(`bench: unknown benchmark(s) ${unknown.join(", ")} (known: ${Object.keys(BENCHES).join(", ")})`);
  Deno.exit(2);
}
let failed = 0;
for (const name of names) {
  if (name === "gpu" && !gpuPresent()) {
    console.log(`\n== gpu: skipped (no NVIDIA GPU or driver: /dev/nvidiactl absent)`);
    continue;
  }
  const [cmd, ...args] = BENCHES[name];
  console.log(`\n== ${name}: ${[cmd, ...args].join(" ")}`);
  const env = name === "gpu" ? { STEPS: "build bench" } : undefined;
  const r = await new Deno.Command(cmd, { args, env, stdout: "inherit", stderr: "inherit" }).output();
  if (!r.success) {
    console.error(`bench: ${name} exited with ${r.code}`);
    failed++;
  }
}
Deno.exit(failed ? 1 : 0);
