// bench/ncu_diff.ts: two Nsight Compute raw pages become the headline metrics side by side and the metrics that differ
// by more than a factor, largest difference first; a file that is not a raw page is refused with its name.
import assert from "node:assert/strict";
import { runBench } from "./_run.ts";
import { diffRawPages, formatDiff, parseRawPage } from "../../bench/ncu_diff.ts";

const page = (time: string, tma: string, gmma: string, wait: string) =>
  [
    '"ID","Kernel Name","gpu__time_duration.sum","smsp__inst_executed_op_tma_ld.sum",' +
    '"smsp__average_warps_issue_stalled_gmma_per_issue_active.ratio","smsp__pcsamp_warps_issue_stalled_wait",' +
    '"smsp__pcsamp_warps_issue_stalled_wait.max"',
    '"","","us","inst","inst","warp","warp"',
    `"0","go_fp8_fast","${time}","${tma}","${gmma}","${wait}","9"`,
  ].join("\n");
const OURS = page("770.69", "405,504", "0.2585", "100");
const THEIRS = page("745.34", "270,336", "0.1384", "105");

Deno.test("ncu_diff reads a raw page's first launch: numbers with thousands separators, text left as text", () => {
  const m = parseRawPage(OURS);
  assert.equal(m.get("smsp__inst_executed_op_tma_ld.sum")!.value, 405504);
  assert.equal(m.get("gpu__time_duration.sum")!.unit, "us");
  assert.equal(m.get("Kernel Name")!.value, undefined);
  assert.equal(m.get("Kernel Name")!.text, "go_fp8_fast");
});

Deno.test("ncu_diff gives the headline metrics, then the ones past the factor, largest difference first", () => {
  const d = diffRawPages(parseRawPage(OURS), parseRawPage(THEIRS), { factor: 1.16 });
  assert.deepEqual(d.headline.map((p) => p.name), ["gpu__time_duration.sum", "smsp__inst_executed_op_tma_ld.sum"]);
  assert.equal(d.headline[1].ratio, 1.5);
  // gmma 1.87x and TMA 1.5x pass; wait (0.95x) does not; a .max variant is never listed.
  assert.deepEqual(d.differing.map((p) => p.name), [
    "smsp__average_warps_issue_stalled_gmma_per_issue_active.ratio",
    "smsp__inst_executed_op_tma_ld.sum",
  ]);
  const text = formatDiff(d);
  assert.match(text, /^\| smsp__inst_executed_op_tma_ld\.sum \| 4\.055e\+5 \| 2\.703e\+5 \| inst \| 1\.500× \|$/m);
  assert.match(text, /^\| differing by more than 1\.16× \|/m);
});

Deno.test("ncu_diff's command exits 2 naming the file that is not a raw page, or on a bad factor", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(`${dir}/ours.raw.csv`, OURS);
    await Deno.writeTextFile(`${dir}/p1.sass.csv`, '"Kernel Name","k",\n"Address","Source"\n');
    await Deno.writeTextFile(`${dir}/empty.raw.csv`, OURS.split("\n").slice(0, 2).join("\n"));
    const sass = await runBench("ncu_diff.ts", `${dir}/ours.raw.csv`, `${dir}/p1.sass.csv`);
    assert.equal(sass.code, 2);
    assert.match(
      sass.stderr,
      /p1\.sass\.csv: raw page CSV: no header line starting with "ID"/,
    );
    const empty = await runBench("ncu_diff.ts", `${dir}/ours.raw.csv`, `${dir}/empty.raw.csv`);
    assert.equal(empty.code, 2);
    assert.match(empty.stderr, /empty\.raw\.csv: raw page CSV: no profiled launch/);
    assert.equal(
      (await runBench("ncu_diff.ts", `${dir}/ours.raw.csv`, `${dir}/ours.raw.csv`, "--factor", "0.9")).code,
      2,
    );
    const same = await runBench("ncu_diff.ts", `${dir}/ours.raw.csv`, `${dir}/ours.raw.csv`);
    assert.equal(same.code, 0);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

// What `ncu --metrics ... --csv bench ... --once` prints: ncu's notes, the program's own lines, the header, one row per
// metric (the thirty-eighth round's call at 4096x4096x7168, BLOCK_M 192 forced; two metrics of it).
const metricsRun = (active: string, tensor: string) =>
  [
    "==WARNING== Note: Running with unmodified GPU clocks. If not controlled otherwise, profiling results may be inconsistent.",
    "device 0: NVIDIA H200, 132 SMs, L2 60.0 MB; rotating inputs >= 240 MB per shape; median of 25 samples",
    '"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device",' +
    '"CC","Section Name","Metric Name","Metric Unit","Metric Value"',
    "dense 4096x4096x7168               called once  bm=192 bn=128 stages=4 multicast=2 acc=single sfa=tma jit=shape",
    `"0","77","bench","127.0.0.1","go_fp8_fast","1","7","(512, 1, 1)","(132, 1, 1)","0","9.0",` +
    `"Command line profiler metrics","sm__cycles_active.avg","cycle","${active}"`,
    `"0","77","bench","127.0.0.1","go_fp8_fast","1","7","(512, 1, 1)","(132, 1, 1)","0","9.0",` +
    `"Command line profiler metrics","sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active","%","${tensor}"`,
  ].join("\n");

Deno.test("ncu_diff reads a metrics run's CSV among the program's own lines and compares it like a raw page", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(`${dir}/a.1.metrics.csv`, metricsRun("256,909.36", "86.58"));
    await Deno.writeTextFile(`${dir}/b1.1.metrics.csv`, metricsRun("257,311.14", "86.44"));
    await Deno.writeTextFile(`${dir}/none.metrics.csv`, metricsRun("1", "1").split("\n").slice(0, 4).join("\n"));
    const r = await runBench("ncu_diff.ts", `${dir}/a.1.metrics.csv`, `${dir}/b1.1.metrics.csv`, "--grep", "__");
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^\| sm__cycles_active\.avg \| 2\.569e\+5 \| 2\.573e\+5 \| cycle \| 0\.998× \|$/m);
    assert.match(
      r.stdout,
      /^\| sm__pipe_tensor_cycles_active\.avg\.pct_of_peak_sustained_active \| 86\.58 \| 86\.44 \| % \|/m,
    );
    const none = await runBench("ncu_diff.ts", `${dir}/a.1.metrics.csv`, `${dir}/none.metrics.csv`);
    assert.equal(none.code, 2);
    assert.match(none.stderr, /none\.metrics\.csv: metrics CSV: no metric rows after the header/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
