import assert from "node:assert/strict";
import {
  formatReport,
  formatSweep,
  formatTable,
  joinRows,
  type OursRow,
  parseBenchJson,
  problemBytes,
  replaceRegion,
  summarize,
  type TorchRow,
} from "../../bench/gpu_table.ts";

const OURS = `{
  "device": "NVIDIA H200", "date": "2026-11-30T01:02:03Z", "prepare_ms": 51234.5, "prepare_threads": 16,
  "jit": {"compiles": 40, "compile_ms_total": 80000, "compile_ms_max": 3100, "disk_loads": 0, "load_ms_total": 0,
          "load_ms_max": 0, "memory_hits": 500, "aot_launches": 0},
  "rows": [
    {"kind": "dense", "g": 1, "m": 64, "n": 4096, "k": 7168, "us": 10, "tflops": 375.8, "gbs": 3000, "bytes": 30e6,
     "us_call": 14.5, "host_us": 6.25, "floor_us": 7.5,
     "config": "bn=64 stages=6"},
    {"kind": "dense", "g": 1, "m": 128, "n": 2112, "k": 7168, "us": 8, "tflops": 484.4, "gbs": 2100, "bytes": 16.8e6,
     "config": "bn=128"},
    {"kind": "dense", "g": 1, "m": 64, "n": 576, "k": 7168, "error": "status 3: unsupported", "config": ""},
    {"kind": "dense", "g": 1, "m": 4096, "n": 7168, "k": 16384, "us": 640, "tflops": 1503.3, "gbs": 400,
     "config": "bn=128 multicast=2"},
    {"kind": "contiguous", "g": 4, "m": 8192, "n": 4096, "k": 7168, "us": 1500, "tflops": 1282.8, "gbs": 400,
     "config": "bn=128"},
    {"kind": "masked", "g": 32, "m": 20, "n": 4096, "k": 2048, "us": 100, "tflops": 10.7, "gbs": 2800, "config": "bn=64"},
    {"kind": "dense-sweep", "g": 1, "m": 64, "n": 4096, "k": 7168, "us": 12, "tflops": 313.2, "config": "bn=128"},
    {"kind": "dense-sweep", "g": 1, "m": 64, "n": 4096, "k": 7168, "us": 10, "tflops": 375.8, "config": "bn=64"},
    {"kind": "dense-sweep", "g": 1, "m": 128, "n": 2112, "k": 7168, "error": "status 1: bad", "config": "bn=64"}
  ]
}`;

const TORCH = `{
  "device": "NVIDIA H200", "torch": "2.11.0",
  "rows": [
    {"kind": "dense", "g": 1, "m": 64, "n": 4096, "k": 7168, "blockfp8_us": 12, "blockfp8_tflops": 313.2,
     "bf16_us": 20, "bf16_tflops": 187.9, "refused": null},
    {"kind": "dense", "g": 1, "m": 128, "n": 2112, "k": 7168, "refused": "Invalid scaling configuration",
     "bf16_us": 16, "bf16_tflops": 242.2},
    {"kind": "dense", "g": 1, "m": 4096, "n": 7168, "k": 16384, "blockfp8_us": 830, "blockfp8_tflops": 1159.2,
     "bf16_us": 1400, "bf16_tflops": 687.2, "refused": null},
    {"kind": "contiguous", "g": 4, "m": 8192, "n": 4096, "k": 7168, "blockfp8_us": 1800, "bf16_us": 2600,
     "blockfp8_method": "loop of G calls", "bf16_method": "torch._grouped_mm"},
    {"kind": "masked", "g": 6, "m": 20, "n": 4096, "k": 2048, "bf16_us": 40}
  ]
}`;

const WARM = `{"device": "NVIDIA H200", "rows": [],
  "jit": {"compiles": 0, "compile_ms_total": 0, "compile_ms_max": 0, "disk_loads": 4, "load_ms_total": 10,
          "load_ms_max": 4.5, "memory_hits": 3, "aot_launches": 0}}`;

const ours = parseBenchJson<OursRow>(OURS), torch = parseBenchJson<TorchRow>(TORCH);

Deno.test("gpu_table: parse and join", async (t) => {
  await t.step("parseBenchJson rejects rows without integer shape fields", () => {
    assert.throws(() => parseBenchJson('{"rows":[{"kind":"dense","g":1,"m":1.5,"n":1,"k":1}]}'), TypeError);
    assert.throws(() => parseBenchJson("[]"), TypeError);
  });
  await t.step("joinRows keys on (kind, g, m, n, k), skips sweep rows, keeps torch-only rows at the end", () => {
    const j = joinRows(ours.rows, torch.rows);
    assert.deepEqual(j.map((r) => `${r.kind} ${r.m} ${r.n}`), [
      "dense 64 4096",
      "dense 128 2112",
      "dense 64 576",
      "dense 4096 7168",
      "contiguous 8192 4096",
      "masked 20 4096",
      "masked 20 4096", // torch's G = 6 row: another key than our G = 32 row
    ]);
    assert.equal(j[0].torch?.blockfp8_us, 12);
    assert.equal(j[5].torch, undefined);
    assert.equal(j[6].ours, undefined);
  });
  await t.step("problemBytes counts the real rows of masked shapes", () => {
    // 32 groups x 20 rows: A 640·2048, B 32·4096·2048, D 640·4096·2, sfa 640·16·4, sfb 32·32·16·4
    assert.equal(
      problemBytes({ kind: "masked", g: 32, m: 20, n: 4096, k: 2048 }),
      640 * 2048 + 32 * 4096 * 2048 + 640 * 4096 * 2 + 640 * 16 * 4 + 32 * 32 * 16 * 4,
    );
  });
});

Deno.test("gpu_table: table, summary, sweep, report", async (t) => {
  const j = joinRows(ours.rows, torch.rows);
  await t.step("formatTable: ratios, refusals, errors, loops, HBM %", () => {
    const md = formatTable(j);
    const lines = md.split("\n");
    assert.equal(lines.length, 2 + j.length);
    // 64x4096x7168: 30e6 B at 4.8 TB/s = 6.25 µs of 10 µs -> 62.5 %; 375.8 / 313.2 = 1.20
    assert.match(lines[2], /^\| dense 64×4096×7168 \| 10\.0 \| 375\.8 \| 3000\.0 \| 62\.5 % \| 313\.2 \| 1\.20× \|/);
    // the streaming floor: 6.25 µs of traffic in 7.5 µs -> 83.3 %
    assert.match(lines[2], /\| 187\.9 \| 2\.00× \| 7\.5 \(83\.3 %\) \| 14\.5 \(6\.3\) \| bn=64 stages=6 \|$/);
    assert.match(lines[3], /\| — \| — \| bn=128 \|$/); // no floor, no per-call time
    assert.match(lines[3], /refused: Invalid scaling configuration \| — \| 242\.2 \|/);
    assert.match(lines[4], /\| dense 64×576×7168 \| error: status 3: unsupported \|/);
    // contiguous: cuBLASLt TFLOPS from us: 2·32768·4096·7168 / 1800 µs
    const tf = (2 * 32768 * 4096 * 7168 / 1800e-6 / 1e12).toFixed(1);
    assert.ok(lines[6].includes(`| ${tf} (loop of G calls) |`), lines[6]);
    assert.match(lines[8], /\| masked 6×20×4096×2048 \| not run \|/);
  });
  await t.step("summarize: geometric means by group, big-shape TFLOPS, small-M HBM", () => {
    const s = summarize(j);
    assert.equal(s.geoAll.count, 3);
    assert.equal(s.geoSmallM.count, 1);
    assert.ok(Math.abs(s.geoSmallM.value - 375.8 / 313.2) < 1e-12);
    assert.ok(Math.abs(s.geoBigM.value - 1503.3 / 1159.2) < 1e-12);
    assert.equal(s.geoGrouped.count, 1);
    assert.equal(s.bigTflops, 1503.3);
    assert.equal(s.smallMHbm.count, 2);
    assert.ok(Math.abs(s.smallMHbm.min - 16.8e6 / 4.8e12 / 8e-6 * 100) < 1e-9); // 43.75 %
    assert.ok(Math.abs(s.smallMHbm.median - (62.5 + 43.75) / 2) < 1e-9);
    // the floor: measured for one of the two shapes
    assert.equal(s.smallMFloor.count, 1);
    assert.ok(Math.abs(s.smallMFloor.median - 6.25 / 7.5 * 100) < 1e-9);
    assert.equal(s.smallMFloor.atTarget, 1);
    assert.ok(Math.abs(s.smallMFloor.oursOverFloor - 10 / 7.5) < 1e-12);
  });
  await t.step("formatSweep: the heuristic's row first, best configuration per shape in bold, errors shown", () => {
    const s = formatSweep(ours.rows);
    assert.match(s, /^\| shape \| heuristic \| `bn=128` \| `bn=64` \| best \|/);
    // A tie keeps the first column: the heuristic's 375.8 against bn=64's.
    assert.match(s, /\| dense 64×4096×7168 \| \*\*375\.8\*\* \| 313\.2 \| 375\.8 \| heuristic \|/);
    assert.match(s, /\| dense 128×2112×7168 \| \*\*484\.4\*\* \| — \| error: status 1: bad \| heuristic \|/);
    const sweepOnly = formatSweep(ours.rows.filter((r) => r.kind === "dense-sweep"));
    assert.match(sweepOnly, /^\| shape \| `bn=128` \| `bn=64` \| best \|/);
    assert.match(sweepOnly, /\| dense 64×4096×7168 \| 313\.2 \| \*\*375\.8\*\* \| bn=64 \|/);
  });
  await t.step("formatReport: summary lines, JIT from the cold and warm runs, device and date", () => {
    const md = formatReport({ ours, torch, warm: parseBenchJson<OursRow>(WARM) });
    assert.match(md, /2026-11-30, NVIDIA H200, torch 2\.11\.0\./);
    assert.match(md, /4096×7168×16384: \*\*1503\.3 TFLOPS\*\* \(target ≥ 1450: met\)/);
    assert.match(md, /min \*\*43\.8 %\*\*, median \*\*53\.1 %\*\* over 2 \(target ≥ 70 %: not met\)/);
    assert.match(
      md,
      /streaming floor of the same 1 shapes .*: min \*\*83\.3 %\*\*, median \*\*83\.3 %\*\* of the HBM bound; 1 of 1 reach 70 %; our time over the floor's, median \*\*1\.33×\*\*/,
    );
    assert.match(md, /40 compiles, mean 2000\.0 ms, max 3100\.0 ms; parallel prepare 51234\.5 ms wall on 16 threads/);
    assert.match(md, /warm loads from the disk cache \(second run\): 4, mean 2\.5 ms, max 4\.5 ms/);
    assert.match(md, /### Configuration sweep/);
    assert.match(md, /- device: NVIDIA H200; date: 2026-11-30/);
    assert.doesNotMatch(md, /Incomplete/);
    assert.match(formatReport({ ours: { ...ours, complete: false } }), /\*\*Incomplete:\*\* .* after 9 rows/);
  });
  await t.step("formatReport says how the grouped rows were timed, from their timing field", () => {
    // The fixture's grouped rows carry no timing (runs before the device check): per call, 2 of 2.
    assert.match(formatReport({ ours }), /Grouped shapes: ours per call as issued where timed so \(2 of 2;/);
    const gpu = {
      ...ours,
      rows: ours.rows.map((r) => r.kind === "contiguous" || r.kind === "masked" ? { ...r, timing: "gpu" } : r),
    };
    const md = formatReport({ ours: gpu });
    assert.match(md, /Grouped shapes: ours GPU time like the dense ones \(each call checks its index tensor/);
    assert.doesNotMatch(md, /per call as issued where timed so/);
  });
  await t.step("replaceRegion replaces only between the markers and appends them when absent", () => {
    const before = "# Results\n\nintro\n";
    const once = replaceRegion(before, "A\n");
    assert.equal(once, "# Results\n\nintro\n\n<!-- gpu-bench:begin -->\nA\n<!-- gpu-bench:end -->\n");
    const twice = replaceRegion(once + "after\n", "B");
    assert.equal(twice, "# Results\n\nintro\n\n<!-- gpu-bench:begin -->\nB\n<!-- gpu-bench:end -->\nafter\n");
  });
});
