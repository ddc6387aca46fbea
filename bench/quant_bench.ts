/**
 * Throughput of DeepGEMM's FP8 quantizers on a 4096×7168 BF16 tensor (the target: ≤ 1 s each, ≥ 30 M
 * elements/s). Run: `deno run -A bench/quant_bench.ts` (or `deno task bench:quant`).
 * @module
 */
import { cpuUsage } from "node:process";
import { bf16Rne } from "../reference/fp32.ts";
import { Prng } from "../reference/random/prng.ts";
import { Tensor } from "../reference/tensor/mod.ts";
import { perBlockCastToFp8, perTokenCastToFp8 } from "../reference/quant/mod.ts";
import { benchArgs } from "./_args.ts";

benchArgs("usage: deno run -A bench/quant_bench.ts (no arguments)", { options: {} });
const M = 4096, N = 7168;
const rng = new Prng(42);
const bits = new Uint16Array(M * N);
for (let i = 0; i < bits.length; i++) bits[i] = bf16Rne(rng.normal());
const x = Tensor.from("bf16", [M, N], bits);

function time(name: string, f: () => unknown): void {
  f(); // warm-up (JIT, encoder tables)
  const runs = 3;
  const ms: number[] = [], cpu: number[] = [];
  for (let r = 0; r < runs; r++) {
    const t0 = performance.now(), c0 = cpuUsage();
    f();
    const c = cpuUsage(c0);
    ms.push(performance.now() - t0);
    cpu.push((c.user + c.system) / 1e3);
  }
  ms.sort((a, b) => a - b);
  cpu.sort((a, b) => a - b);
  const med = ms[1], cmed = cpu[1];
  console.log(
    `${name.padEnd(40)} wall ${med.toFixed(0).padStart(5)} ms (${((M * N) / med / 1e3).toFixed(1)} M elem/s)  ` +
      `cpu ${cmed.toFixed(0).padStart(5)} ms (${((M * N) / cmed / 1e3).toFixed(1)} M elem/s)`,
  );
}

console.log(
  `quantizers on ${M}x${N} bf16 (Deno ${Deno.version.deno}, ${Deno.build.target}, load ${Deno.loadavg()[0]})`,
);
time("per_token_cast_to_fp8 (fp32 scales)", () => perTokenCastToFp8(x, { useUe8m0: false }));
time("per_token_cast_to_fp8 (ue8m0, packed)", () => perTokenCastToFp8(x, { useUe8m0: true, usePackedUe8m0: true }));
time("per_block_cast_to_fp8 (fp32 scales)", () => perBlockCastToFp8(x, { useUe8m0: false }));
time("per_block_cast_to_fp8 (ue8m0)", () => perBlockCastToFp8(x, { useUe8m0: true }));
