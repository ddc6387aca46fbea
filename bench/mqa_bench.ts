// Reference throughput of the lightning indexer: `deno run -A bench/mqa_bench.ts [--rows N] [--workers W]`.
// Problem: S = 2048 queries, S_kv = 8192 keys, H = 64 heads, D = 128 (DeepGEMM's MQA benchmark shape), every key in
// range. The full problem is 137 G multiply-adds; the bench evaluates a deterministic block of query rows (default 8,
// all S_kv keys each) with Workers and reports multiply-adds per second and the projected time of the full problem.
// Results go to bench/RESULTS.md by hand with machine and date.
import { benchArgs } from "./_args.ts";
import { fp8MqaLogits, fp8MqaLogitsParallel } from "../reference/indexer/mod.ts";
import { Prng } from "../reference/random/prng.ts";
import { Tensor } from "../reference/tensor/tensor.ts";

const { values } = benchArgs("usage: deno run -A bench/mqa_bench.ts [--rows 8] [--workers N] [--model sm90]", {
  options: {
    rows: { type: "string", default: "8" },
    workers: { type: "string", default: String(navigator.hardwareConcurrency ?? 1) },
    model: { type: "string", default: "sm90" },
  },
});
const S = 2048, Skv = 8192, H = 64, D = 128;
const rows = Number(values.rows), workers = Number(values.workers);
const rng = new Prng(2026);
const codes = (n: number) =>
  Uint8Array.from({ length: n }, () => {
    const c = rng.int(256);
    return (c & 0x7f) === 0x7f ? 0x7e : c;
  });
const inputs = {
  q: Tensor.from("e4m3", [S, H, D], codes(S * H * D)),
  kv: Tensor.from("e4m3", [Skv, D], codes(Skv * D)),
  kv_sf: Tensor.from(
    "f32",
    [Skv],
    Float32Array.from({ length: Skv }, () => Math.fround(2 ** -8 * (1 + rng.uniform()))),
  ),
  weights: Tensor.from("f32", [S, H], Float32Array.from({ length: S * H }, () => Math.fround(rng.uniform() - 0.5))),
  ks: Tensor.from("i32", [S], new Int32Array(S)),
  ke: Tensor.from("i32", [S], new Int32Array(S).fill(Skv)),
};
const r0 = 1000; // a block in the middle of the sequence
fp8MqaLogits(inputs, { rows: [0, 1], model: values.model }); // warm-up (JIT)
const macs = rows * Skv * H * D, full = S * Skv * H * D;
const t0 = performance.now();
await fp8MqaLogitsParallel(inputs, { rows: [r0, r0 + rows], model: values.model }, workers);
const s = (performance.now() - t0) / 1000;
console.log(JSON.stringify({
  op: "fp8_mqa_logits",
  model: values.model,
  shape: { S, Skv, H, D },
  rows,
  workers,
  seconds: +s.toFixed(2),
  macsPerSecond: Math.round(macs / s),
  projectedFullSeconds: Math.round(full / (macs / s)),
  date: new Date().toISOString().slice(0, 10),
  deno: Deno.version.deno,
  cores: navigator.hardwareConcurrency,
}));
