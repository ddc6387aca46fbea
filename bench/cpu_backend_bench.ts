/**
 * Throughput of the native CPU backend's `sm90_1d2d` FP8 GEMM (`fp8_gemm_nt`, e4m3, f32 scales, BF16 out) in
 * multiply-adds per second, on one thread and on all hardware threads, per kernel (kernels/cpu/sm90_fast.cpp: the
 * dispatched one by default, or AVX-512 / AVX2 / portable forced through GO_CPU_ISA), next to the TypeScript
 * reference on the same operands (whose bits must equal the backend's). Operands are copied to device buffers once;
 * only the native call is timed (it includes the backend's decoding and packing of A and B, every call).
 *
 * `deno run -A bench/cpu_backend_bench.ts [--m 512] [--n 512] [--k 2048] [--reps 5] [--isa auto|avx512|avx2|portable|all]
 * [--ts-reps 1]` prints a table (`--ts-reps 0` skips the TypeScript reference);
 * `deno bench -A bench/cpu_backend_bench.ts` runs 128×128×512 calls under Deno.bench.
 * @module
 */
import process from "node:process";
import { benchArgs } from "./_args.ts";
import { type Backend, type DeviceTensor, openBackend } from "../ffi/mod.ts";
import { Prng } from "../reference/random/prng.ts";
import { f32FromBits } from "../reference/fp32.ts";
import { GEMM_OPS } from "../reference/registry.ts";
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

/** Runs `body` with GO_CPU_ISA set to `isa` ("auto": unset), restoring the variable afterwards. */
function withIsa<T>(isa: string, body: () => T): T {
  const saved = Deno.env.get("GO_CPU_ISA");
  if (isa === "auto") Deno.env.delete("GO_CPU_ISA");
  else Deno.env.set("GO_CPU_ISA", isa);
  try {
    return body();
  } finally {
    if (saved === undefined) Deno.env.delete("GO_CPU_ISA");
    else Deno.env.set("GO_CPU_ISA", saved);
  }
}

const G = (x: number) => (x / 1e9).toFixed(2);

if (import.meta.main) {
  const { values } = benchArgs(
    "usage: deno run -A bench/cpu_backend_bench.ts [--m 512] [--n 512] [--k 2048] [--reps 5] " +
      "[--isa auto|avx512|avx2|portable|all] [--ts-reps 1]",
    {
      options: {
        m: { type: "string", default: "512" },
        n: { type: "string", default: "512" },
        k: { type: "string", default: "2048" },
        reps: { type: "string", default: "5" },
        isa: { type: "string", default: "auto" },
        "ts-reps": { type: "string", default: "1" },
      },
    },
  );
  const [M, N, K, reps, tsReps] = [values.m, values.n, values.k, values.reps, values["ts-reps"]].map(Number);
  using be = await openBackend("cpu");
  const supported = String(be.info.isa_supported);
  const order = ["avx512", "avx2", "portable"];
  const isas = values.isa === "all" ? order.slice(order.indexOf(supported)) : [values.isa as string];
  const p = problem(be, M, N, K);
  const hw = Number(be.info.threads);
  const load = Deno.loadavg()[0].toFixed(1);
  console.log(
    `CPU backend fp8_gemm_nt sm90_1d2d (e4m3, f32 scales, bf16 out), (M, N, K) = (${M}, ${N}, ${K}), best of ${reps},` +
      ` ${hw} hardware threads, CPU supports ${supported}, load average ${load}`,
  );
  console.log(`| kernel | threads | G multiply-adds/s (wall) | G per core (wall / threads) | G per CPU-second |`);
  console.log(`|---|---|---|---|---|`);
  let one = 0;
  for (const isa of isas) {
    withIsa(isa, () => {
      const name = isa === "auto" ? `${be.info.isa} (dispatched)` : isa;
      for (const threads of hw > 1 ? [1, hw] : [1]) {
        const r = measure(be, p, threads === hw && hw > 1 ? 0 : 1, reps);
        if (threads === 1 && one === 0) one = r.wall;
        console.log(`| ${name} | ${threads} | ${G(r.wall)} | ${G(r.wall / threads)} | ${G(r.cpu)} |`);
      }
    });
  }
  if (tsReps > 0) {
    const ts = withIsa(isas[0], () => measureReference(be, p, tsReps));
    console.log(`| TS reference | 1 | ${G(ts.wall)} | ${G(ts.wall)} | ${G(ts.cpu)} |`);
    console.log(
      `TS reference / native (${isas[0]}), one thread: ${
        (ts.wall / one).toFixed(3)
      } (wall); bits equal: ${ts.sameBits}`,
    );
  }
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
