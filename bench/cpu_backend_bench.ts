/**
 * Throughput of the native CPU backend's `sm90_1d2d` FP8 GEMM model in multiply-adds per second, on one thread and
 * on all hardware threads. Operands are copied to device buffers once; only the native call is timed.
 *
 * `deno run -A bench/cpu_backend_bench.ts [--m 256] [--n 256] [--k 1024] [--reps 3]` prints a table;
 * `deno bench -A bench/cpu_backend_bench.ts` runs the same calls under Deno.bench.
 * @module
 */
import process from "node:process";
import { parseArgs } from "node:util";
import { type Backend, type DeviceTensor, openBackend } from "../ffi/mod.ts";
import { Prng } from "../reference/random/prng.ts";
import { f32FromBits } from "../reference/fp32.ts";
import { GEMM_OPS } from "../reference/gemm/registry.ts";
import { Tensor } from "../reference/tensor/tensor.ts";

interface Problem {
  /** The same operands as host tensors, for the TypeScript reference. */
  host: Record<string, Tensor>;
  a: DeviceTensor;
  sfa: DeviceTensor;
  b: DeviceTensor;
  sfb: DeviceTensor;
  d: DeviceTensor;
  macs: number;
  free(): void;
}

function upload(
  be: Backend,
  dtype: DeviceTensor["dtype"],
  shape: number[],
  data: Uint8Array<ArrayBuffer> | Float32Array<ArrayBuffer>,
): DeviceTensor {
  const buffer = be.alloc(Math.max(1, data.byteLength));
  buffer.copyIn(data);
  const strides = shape.map((_, i) => shape.slice(i + 1).reduce((x, y) => x * y, 1));
  return { buffer, byteOffset: 0, dtype, shape, strides };
}

function problem(be: Backend, M: number, N: number, K: number): Problem {
  const rng = new Prng(2026);
  const code = () => {
    const c = rng.int(256);
    return (c & 0x7f) === 0x7f ? 0x38 : c;
  };
  const kb = Math.ceil(K / 128);
  const scales = (n: number) =>
    Float32Array.from({ length: n }, () => f32FromBits(((120 + rng.int(8)) << 23) | rng.int(1 << 23)));
  const host = {
    a: Tensor.from("e4m3", [M, K], Uint8Array.from({ length: M * K }, code)),
    b: Tensor.from("e4m3", [N, K], Uint8Array.from({ length: N * K }, code)),
    sfa: Tensor.from("f32", [M, kb], scales(M * kb)),
    sfb: Tensor.from("f32", [Math.ceil(N / 128), kb], scales(Math.ceil(N / 128) * kb)),
  };
  const a = upload(be, "e4m3", [M, K], host.a.data as Uint8Array<ArrayBuffer>);
  const b = upload(be, "e4m3", [N, K], host.b.data as Uint8Array<ArrayBuffer>);
  const sfa = upload(be, "f32", host.sfa.shape as number[], host.sfa.data as Float32Array<ArrayBuffer>);
  const sfb = upload(be, "f32", host.sfb.shape as number[], host.sfb.data as Float32Array<ArrayBuffer>);
  const dbuf = be.alloc(M * N * 2);
  const d: DeviceTensor = { buffer: dbuf, byteOffset: 0, dtype: "bf16", shape: [M, N], strides: [N, 1] };
  return { host, a, sfa, b, sfb, d, macs: M * N * K, free: () => [a, b, sfa, sfb, d].forEach((t) => t.buffer.free()) };
}

function run(be: Backend, p: Problem): void {
  be.fp8Gemm({ a: p.a, sfa: p.sfa, b: p.b, sfb: p.sfb, d: p.d, model: "sm90_1d2d" });
}

/**
 * The TypeScript reference (`reference/gemm`, one thread) on the same operands: multiply-adds per wall second
 * (best of `reps`) and per CPU second, and whether its bits equal the native backend's.
 */
export function measureReference(be: Backend, p: Problem, reps: number): Measurement & { sameBits: boolean } {
  const op = GEMM_OPS.fp8_gemm_nt;
  let out = op.run(p.host, {}, { model: "sm90_1d2d" }).d; // warm-up
  let best = Infinity;
  const c0 = process.cpuUsage();
  for (let i = 0; i < reps; i++) {
    const t0 = performance.now();
    out = op.run(p.host, {}, { model: "sm90_1d2d" }).d;
    best = Math.min(best, performance.now() - t0);
  }
  const c1 = process.cpuUsage(c0);
  run(be, p);
  const native = new Uint16Array(out.numel);
  p.d.buffer.copyOut(native);
  const ref = out.contiguous().data as Uint16Array;
  const sameBits = native.every((v, i) => v === ref[i]);
  return { wall: p.macs / (best / 1000), cpu: (p.macs * reps) / ((c1.user + c1.system) / 1e6), sameBits };
}

/** Result of {@link measure}. */
export interface Measurement {
  /** Best-of-reps multiply-adds per wall-clock second. */
  wall: number;
  /** Multiply-adds per second of process CPU time (user + system) over all reps: robust to a busy machine. */
  cpu: number;
}

/** Multiply-adds per second with `threads` worker threads (0 = all), best of `reps` wall times and per CPU second. */
export function measure(be: Backend, p: Problem, threads: number, reps: number): Measurement {
  be.setNumThreads(threads);
  run(be, p); // warm-up
  let best = Infinity;
  const c0 = process.cpuUsage();
  for (let i = 0; i < reps; i++) {
    const t0 = performance.now();
    run(be, p);
    best = Math.min(best, performance.now() - t0);
  }
  const c1 = process.cpuUsage(c0);
  be.setNumThreads(0);
  return { wall: p.macs / (best / 1000), cpu: (p.macs * reps) / ((c1.user + c1.system) / 1e6) };
}

if (import.meta.main) {
  const { values } = parseArgs({
    args: Deno.args,
    options: {
      m: { type: "string", default: "256" },
      n: { type: "string", default: "256" },
      k: { type: "string", default: "1024" },
      reps: { type: "string", default: "3" },
    },
  });
  const [M, N, K, reps] = [values.m, values.n, values.k, values.reps].map(Number);
  using be = await openBackend("cpu");
  const p = problem(be, M, N, K);
  const hw = Number(be.info.threads);
  const one = measure(be, p, 1, reps);
  const all = measure(be, p, 0, reps);
  const ts = measureReference(be, p, reps);
  const load = Deno.loadavg()[0].toFixed(1);
  console.log(`CPU backend sm90_1d2d fp8_gemm, (M, N, K) = (${M}, ${N}, ${K}), best of ${reps}, load average ${load}`);
  console.log(`| threads | multiply-adds/s (wall) | multiply-adds per CPU-second |`);
  console.log(`|---|---|---|`);
  console.log(`| 1 | ${(one.wall / 1e6).toFixed(1)} M | ${(one.cpu / 1e6).toFixed(1)} M |`);
  console.log(`| ${hw} (all) | ${(all.wall / 1e6).toFixed(1)} M | ${(all.cpu / 1e6).toFixed(1)} M |`);
  console.log(`| TS reference, 1 | ${(ts.wall / 1e6).toFixed(1)} M | ${(ts.cpu / 1e6).toFixed(1)} M |`);
  console.log(
    `TS reference / native, one core: ${(ts.wall / one.wall).toFixed(2)} (wall), ${
      (ts.cpu / one.cpu).toFixed(2)
    } (per CPU second);` +
      ` bits equal: ${ts.sameBits}`,
  );
  p.free();
} else {
  const be = await openBackend("cpu");
  const p = problem(be, 128, 128, 512);
  Deno.bench("sm90_1d2d 128x128x512, 1 thread", { group: "cpu_sm90_1d2d", baseline: true }, () => {
    be.setNumThreads(1);
    run(be, p);
  });
  Deno.bench("sm90_1d2d 128x128x512, all threads", { group: "cpu_sm90_1d2d" }, () => {
    be.setNumThreads(0);
    run(be, p);
  });
}
