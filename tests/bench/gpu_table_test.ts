import assert from "node:assert/strict";
import {
  compareFamilies,
  deepgemmTflops,
  formatFamilies,
  formatReport,
  formatSweep,
  formatTable,
  hasDeepGemm,
  type JoinedRow,
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
    assert.equal(s.smallMFloor.oursWithin, 0, "1.33x is past issue 26's 1.1x");
    assert.equal(s.smallMFloor.deepGemm.count, 0, "no DeepGEMM time in these rows");
  });
  await t.step("summarize: DeepGEMM's time over the streaming floor beside ours", () => {
    const row = (m: number, n: number, us: number, floor: number, dg?: number): JoinedRow => {
      const shape = { kind: "dense", g: 1, m, n, k: 7168 } as const;
      return {
        ...shape,
        ours: { ...shape, us, tflops: 2 * m * n * 7168 / us / 1e6, floor_us: floor },
        torch: dg === undefined
          ? undefined
          : { ...shape, deepgemm_us: dg, deepgemm_tflops: 2 * m * n * 7168 / dg / 1e6 },
      };
    };
    const f =
      summarize([row(64, 576, 8.6, 3.8, 10.1), row(128, 576, 4.1, 3.8, 4.5), row(64, 2112, 9.0, 4.0)]).smallMFloor;
    assert.equal(f.count, 3);
    assert.equal(f.oursWithin, 1); // 4.1 / 3.8 = 1.08
    assert.deepEqual(
      { count: f.deepGemm.count, within: f.deepGemm.within },
      { count: 2, within: 0 }, // 10.1 / 3.8 and 4.5 / 3.8 = 1.18
    );
    assert.ok(Math.abs(f.deepGemm.best - 4.5 / 3.8) < 1e-12);
    assert.ok(Math.abs(f.deepGemm.median - (4.5 / 3.8 + 10.1 / 3.8) / 2) < 1e-12);
  });
  await t.step(
    "summarize and formatReport: each other family's time over its streaming floor, DeepGEMM's beside",
    () => {
      const row = (kind: string, g: number, m: number, us: number, floor?: number, dg?: number): JoinedRow => {
        const shape = { kind, g, m, n: 4096, k: 2048 };
        const flops = 2 * g * m * 4096 * 2048;
        return {
          ...shape,
          ours: { ...shape, us, tflops: flops / us / 1e6, ...(floor === undefined ? {} : { floor_us: floor }) },
          torch: dg === undefined ? undefined : { ...shape, deepgemm_us: dg, deepgemm_tflops: flops / dg / 1e6 },
        };
      };
      const rows = [
        row("masked", 32, 20, 77.1, 63.0, 73.0),
        row("masked", 6, 20, 18.6, 14.2),
        row("masked", 32, 192, 108.6), // no floor: not counted
        row("contiguous", 4, 8192, 476.9, 96.6, 455.2),
        row("dense", 1, 4096, 90.0), // dense M = 4096 without a floor: the family is left out
      ];
      const f = summarize(rows).familyFloor;
      assert.deepEqual(f.map((x) => [x.family, x.count, x.deepGemm.count]), [
        ["m-grouped contiguous", 1, 1],
        ["m-grouped masked", 2, 1],
      ]);
      const masked = f[1];
      assert.ok(Math.abs(masked.ours.min - 77.1 / 63.0) < 1e-12);
      assert.ok(Math.abs(masked.ours.max - 18.6 / 14.2) < 1e-12);
      assert.ok(Math.abs(masked.ours.median - (77.1 / 63.0 + 18.6 / 14.2) / 2) < 1e-12);
      assert.ok(Math.abs(masked.deepGemm.median - 73.0 / 63.0) < 1e-12);
      const md = formatReport({
        ours: { date: "2026-12-03", device: "NVIDIA H200", rows: rows.map((r) => r.ours!) },
      });
      assert.match(
        md,
        /^- m-grouped masked, our time over the streaming floor's: median \*\*1\.27×\*\* \(1\.22–1\.31×\) over 2$/m,
      );
    },
  );
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
      /streaming floor of the same 1 shapes .*: min \*\*83\.3 %\*\*, median \*\*83\.3 %\*\* of the HBM bound; 1 of 1 reach 70 %; our time over the floor's, median \*\*1\.33×\*\*, 0 of 1 within 1\.1× \(issue 26's target\)$/m,
    );
    assert.match(md, /40 compiles, mean 2000\.0 ms, max 3100\.0 ms; parallel prepare 51234\.5 ms wall on 16 threads/);
    assert.match(md, /warm loads from the disk cache \(second run\): 4, mean 2\.5 ms, max 4\.5 ms/);
    assert.match(md, /### Configuration sweep/);
    assert.match(md, /- device: NVIDIA H200; date: 2026-11-30/);
    assert.doesNotMatch(md, /Incomplete/);
    assert.match(formatReport({ ours: { ...ours, complete: false } }), /\*\*Incomplete:\*\* .* after 9 rows/);
  });
  await t.step(
    "formatReport: a first run that compiled nothing says it loaded from the disk cache, not a 0 ms mean",
    () => {
      const cached = { ...ours, jit: parseBenchJson<OursRow>(WARM).jit };
      const md = formatReport({ ours: cached, warm: parseBenchJson<OursRow>(WARM) });
      assert.match(
        md,
        /- JIT \(first run\): nothing compiled, 4 kernels loaded from a disk cache an earlier run filled;/,
      );
      assert.doesNotMatch(md, /0 compiles, mean/);
    },
  );
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

// bench_torch.py with DeepGEMM: a time per shape, one shape's JIT failure (its first line, with a "|"), a torch-only
// shape, and one TFLOPS left for the table to compute from the time.
const TORCH_DG = `{
  "device": "NVIDIA H200", "torch": "2.11.0", "deepgemm": "2.6.1", "deepgemm_error": null, "complete": true,
  "rows": [
    {"kind": "dense", "g": 1, "m": 64, "n": 4096, "k": 7168, "blockfp8_us": 12, "blockfp8_tflops": 313.2,
     "deepgemm_us": 12.5, "deepgemm_tflops": 300.0, "deepgemm_method": "deep_gemm.fp8_gemm_nt"},
    {"kind": "dense", "g": 1, "m": 128, "n": 2112, "k": 7168, "refused": "Invalid scaling configuration",
     "deepgemm_us": 9.7, "deepgemm_tflops": 400.0},
    {"kind": "dense", "g": 1, "m": 64, "n": 576, "k": 7168, "blockfp8_us": 9, "blockfp8_tflops": 58.7,
     "deepgemm_us": 10.6, "deepgemm_tflops": 50.0},
    {"kind": "dense", "g": 1, "m": 4096, "n": 7168, "k": 16384, "blockfp8_us": 830, "blockfp8_tflops": 1159.2,
     "deepgemm_us": 687.2, "deepgemm_tflops": 1400.0},
    {"kind": "contiguous", "g": 4, "m": 8192, "n": 4096, "k": 7168, "blockfp8_us": 1800, "deepgemm_us": 1600},
    {"kind": "masked", "g": 32, "m": 20, "n": 4096, "k": 2048, "blockfp8_us": 250, "blockfp8_tflops": 4.3,
     "deepgemm_error": "first call: JIT | nvcc exit 1: kernel.cu(12): error: too many resources requested"},
    {"kind": "masked", "g": 6, "m": 20, "n": 4096, "k": 2048, "bf16_us": 40, "deepgemm_us": 30}
  ]
}`;

Deno.test("gpu_table: the DeepGEMM column (issue 26)", async (t) => {
  const torchDg = parseBenchJson<TorchRow>(TORCH_DG);
  const j = joinRows(ours.rows, torchDg.rows);
  const contiguousDg = 2 * 32768 * 4096 * 7168 / 1600e-6 / 1e12; // TFLOPS from deepgemm_us alone
  const contiguousBlock = 2 * 32768 * 4096 * 7168 / 1800e-6 / 1e12;
  await t.step("hasDeepGemm: a DeepGEMM time or error in any row", () => {
    assert.equal(hasDeepGemm(j), true);
    assert.equal(hasDeepGemm(joinRows(ours.rows, torch.rows)), false);
  });
  await t.step("formatTable: DeepGEMM TFLOPS and ours / DeepGEMM after the HBM %, errors in the cell", () => {
    const lines = formatTable(j).split("\n");
    assert.match(
      lines[0],
      /\| % of HBM bound \| DeepGEMM TFLOPS \| ours \/ DeepGEMM \| cuBLASLt block-scaled TFLOPS \|/,
    );
    assert.equal(lines[1], "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    // 375.8 / 300 = 1.25; 375.8 / 313.2 = 1.20
    assert.match(
      lines[2],
      /^\| dense 64×4096×7168 \| 10\.0 \| 375\.8 \| 3000\.0 \| 62\.5 % \| 300\.0 \| 1\.25× \| 313\.2 \| 1\.20× \|/,
    );
    assert.match(lines[3], /\| 400\.0 \| 1\.21× \| refused: Invalid scaling configuration \|/);
    assert.match(
      lines[4],
      /\| dense 64×576×7168 \| error: status 3: unsupported \| — \| — \| — \| 50\.0 \| — \| 58\.7 \|/,
    );
    assert.ok(lines[6].includes(`| ${contiguousDg.toFixed(1)} | ${(1282.8 / contiguousDg).toFixed(2)}× |`), lines[6]);
    // the error, cut to 60 characters, its "|" escaped
    assert.match(
      lines[7],
      /\| masked 32×20×4096×2048 \| .* \| error: first call: JIT \\\| nvcc exit 1: kernel\.cu\(12\): error: too ma… \| — \| 4\.3 \(loop of G calls\) \|/,
    );
    assert.match(lines[8], /\| masked 6×20×4096×2048 \| not run \| — \| — \| — \| 67\.1 \| — \|/);
    // all rows have the same number of cells as the header
    const cells = (l: string) => l.replaceAll("\\|", "").split("|").length;
    for (const l of lines) assert.equal(cells(l), cells(lines[0]), l);
  });
  await t.step("formatTable: DeepGEMM timed with its programmatic dependent launch too gives the faster", () => {
    // 64×4096×7168: 12.5 us by default (300.0 TFLOPS as bench_torch.py wrote it), 10.0 with set_pdl(True)
    const rows = torchDg.rows.map((r) => r.m === 64 && r.n === 4096 ? { ...r, deepgemm_pdl_us: 10 } : r);
    const pdlTflops = 2 * 64 * 4096 * 7168 / 10e-6 / 1e12;
    assert.ok(Math.abs(deepgemmTflops(joinRows(ours.rows, rows)[0])! - pdlTflops) < 1e-9);
    const line = formatTable(joinRows(ours.rows, rows)).split("\n")[2];
    assert.ok(line.includes(`| ${pdlTflops.toFixed(1)} | ${(375.8 / pdlTflops).toFixed(2)}× |`), line);
    // the report says which launches it timed
    const withPdl = parseBenchJson<TorchRow>(JSON.stringify({ ...torchDg, rows }));
    assert.match(
      formatReport({ ours, torch: withPdl }),
      /with it on \(`deep_gemm\.set_pdl\(True\)`\), as ours launches/,
    );
    assert.match(formatReport({ ours, torch: torchDg }), /timed only as DeepGEMM launches by default/);
    // slower with it: the default's time and TFLOPS stand
    const slower = torchDg.rows.map((r) => r.m === 64 && r.n === 4096 ? { ...r, deepgemm_pdl_us: 13 } : r);
    assert.equal(deepgemmTflops(joinRows(ours.rows, slower)[0]), 300);
  });
  await t.step("compareFamilies: per family, geometric means over the shapes both sides ran, the worst shape", () => {
    const f = compareFamilies(j);
    assert.deepEqual(f.map((x) => [x.family, x.shapes]), [
      ["dense M ∈ {64, 128}", 3],
      ["dense M = 4096", 1],
      ["m-grouped contiguous", 1],
      ["m-grouped masked", 2],
      ["all", 7],
    ]);
    const small = f[0];
    assert.equal(small.oursOverDeepGemm.count, 2); // 64×576: ours failed
    assert.ok(Math.abs(small.oursOverDeepGemm.value - Math.sqrt(375.8 / 300 * (484.4 / 400))) < 1e-12);
    assert.deepEqual(small.oursOverDeepGemm.worst, { ratio: 484.4 / 400, label: "dense 128×2112×7168" });
    assert.equal(small.oursOverBlock.count, 1); // 128×2112: cuBLASLt refused
    assert.equal(small.deepgemmOverBlock.count, 2);
    assert.ok(Math.abs(small.deepgemmOverBlock.value - Math.sqrt(300 / 313.2 * (50 / 58.7))) < 1e-12);
    assert.equal(f[3].oursOverDeepGemm.count, 0); // masked: a DeepGEMM error and a shape we lack
    assert.equal(f[4].oursOverDeepGemm.count, 4);
    assert.deepEqual(f[4].oursOverDeepGemm.worst, {
      ratio: 1282.8 / contiguousDg,
      label: "contiguous 4×8192×4096×7168",
    });
  });
  await t.step("formatFamilies: the issue's table", () => {
    const lines = formatFamilies(compareFamilies(j)).split("\n");
    assert.equal(
      lines[0],
      "| family | shapes | ours / DeepGEMM | ours / cuBLASLt | DeepGEMM / cuBLASLt | worst ours / DeepGEMM |",
    );
    const g2 = Math.sqrt(375.8 / 300 * (484.4 / 400)).toFixed(3);
    assert.equal(
      lines[2],
      `| dense M ∈ {64, 128} | 3 | ${g2}× (2 of 3) | 1.200× (1 of 3) | 0.903× (2 of 3) | 1.21× (dense 128×2112×7168) |`,
    );
    assert.equal(lines[3], "| dense M = 4096 | 1 | 1.074× | 1.297× | 1.208× | 1.07× (dense 4096×7168×16384) |");
    assert.match(lines[4], /^\| m-grouped contiguous \| 1 \| 1\.067× \| 1\.200× \| 1\.125× \| 1\.07× \(contiguous /);
    assert.equal(lines[5], "| m-grouped masked | 2 | — | 2.488× (1 of 2) | — | — |");
    assert.equal(
      lines[6],
      "| all | 7 | 1.148× (4 of 7) | 1.468× (4 of 7) | 1.026× (4 of 7) | 1.07× (contiguous 4×8192×4096×7168) |",
    );
    assert.ok(Math.abs(contiguousDg / contiguousBlock - 1.125) < 1e-12);
  });
  await t.step(
    "formatReport: heading, method, family table, the ours / DeepGEMM line, the big shape's three TFLOPS",
    () => {
      const md = formatReport({ ours, torch: torchDg });
      assert.match(
        md,
        /^## GPU benchmark: fast FP8 GEMM vs DeepGEMM, cuBLASLt block-scaled FP8 and torch BF16 \(issues 8, 26\)/,
      );
      assert.match(md, /DeepGEMM 2\.6\.1 \(bench_torch\.py, timed like the baselines\): `deep_gemm\.fp8_gemm_nt`/);
      assert.match(
        md,
        /\n\| family \| shapes \| ours \/ DeepGEMM \| ours \/ cuBLASLt \| DeepGEMM \/ cuBLASLt \| worst ours \/ DeepGEMM \|\n/,
      );
      const line = md.split("\n").find((l) => l.startsWith("- ours / DeepGEMM"));
      assert.ok(line, md);
      assert.match(
        line,
        /^- ours \/ DeepGEMM \(geometric mean of per-shape TFLOPS ratios\): \*\*\d\.\d{3}×\*\* over 4 shapes; /,
      );
      assert.match(
        line,
        /dense M ∈ \{64, 128\}: \*\*\d\.\d{3}×\*\* over 2 shapes; dense M = 4096: \*\*1\.074×\*\* over 1 shapes; /,
      );
      assert.match(
        line,
        /m-grouped masked: — \(no shape ran on both\); worst \*\*1\.07×\*\* at contiguous 4×8192×4096×7168; /,
      );
      assert.match(line, /; DeepGEMM failed on 1 shape \(see the table\)$/);
      assert.match(
        md,
        /\n- 4096×7168×16384: \*\*1503\.3 TFLOPS\*\* \(target ≥ 1450: met\); DeepGEMM \*\*1400\.0 TFLOPS\*\*, cuBLASLt \*\*1159\.2 TFLOPS\*\*\n/,
      );
      // the lines tests/gpu/run.sh greps, one each
      for (
        const re of [
          /^- geometric mean/,
          /^- ours \/ DeepGEMM/,
          /^- 4096×7168×16384/,
          /^- % of HBM bound/,
          /^- the streaming floor/,
        ]
      ) {
        assert.equal(md.split("\n").filter((l) => re.test(l)).length, 1, String(re));
      }
      assert.doesNotMatch(md, /Incomplete/);
      assert.match(
        formatReport({ ours, torch: { ...torchDg, complete: false } }),
        /\*\*Incomplete:\*\* the bench_torch\.py run .* after 7 rows/,
      );
    },
  );
  await t.step("the per-tensor FP8 line: ours and DeepGEMM over cuBLASLt per-tensor, only where it was timed", () => {
    const withTensor = parseBenchJson<TorchRow>(TORCH.replace(
      '"bf16_us": 1400, "bf16_tflops": 687.2,',
      '"bf16_us": 1400, "bf16_tflops": 687.2, "deepgemm_us": 700, "deepgemm_tflops": 1374.6, "tensorfp8_us": 600, ' +
        '"tensorfp8_tflops": 1603.6, "tensorfp8_fast_error": "refused",',
    ));
    const md = formatReport({ ours, torch: withTensor });
    assert.match(
      md,
      /\n- cuBLASLt FP8 with one scale per tensor \(.*\): dense M = 4096 \(1 shapes\): ours \/ per-tensor \*\*0\.937×\*\* \/ —, DeepGEMM \/ per-tensor \*\*0\.857×\*\* \/ —; 4096×7168×16384 \*\*1603\.6\*\* \/ — TFLOPS\n/,
    );
    assert.doesNotMatch(md, /dense M ∈ \{64, 128\}: ours \/ per-tensor/);
    assert.match(md, /Baselines: .*dense shapes also `torch\._scaled_mm` with one f32 scale per tensor/);
    assert.doesNotMatch(formatReport({ ours, torch }), /one scale per tensor|one f32 scale per tensor/);
  });
  await t.step("without a DeepGEMM column the report is today's, plus one line saying why", () => {
    const noDg = parseBenchJson<TorchRow>(
      TORCH.replace(
        '"torch": "2.11.0",',
        `"torch": "2.11.0", "deepgemm": null, "deepgemm_error": ${
          JSON.stringify("import deep_gemm: ModuleNotFoundError: No module named 'deep_gemm'")
        },`,
      ),
    );
    const md = formatReport({ ours, torch: noDg });
    assert.match(md, /^## GPU benchmark: fast FP8 GEMM vs cuBLASLt block-scaled FP8 and torch BF16 \(issue 8\)\n/);
    assert.doesNotMatch(md, /DeepGEMM TFLOPS|\| family \||DeepGEMM 2|; DeepGEMM \*\*/);
    assert.match(
      md,
      /\n- ours \/ DeepGEMM: not measured \(bench_torch\.py: import deep_gemm: ModuleNotFoundError: No module named 'deep_gemm'\)\n/,
    );
    // the rest as before the DeepGEMM column: same lines but that one
    const before = formatReport({ ours, torch });
    const drop = (s: string) => s.split("\n").filter((l) => !l.startsWith("- ours / DeepGEMM")).join("\n");
    assert.equal(drop(md), drop(before));
    assert.match(before, /\n- ours \/ DeepGEMM: not measured \(the bench_torch\.py JSON has no DeepGEMM result\)\n/);
    assert.match(formatReport({ ours }), /\n- ours \/ DeepGEMM: not measured \(no bench_torch\.py JSON\)\n/);
    assert.equal(
      formatTable(j, undefined, false).split("\n")[0],
      formatTable(joinRows(ours.rows, torch.rows)).split("\n")[0],
    );
  });
});
