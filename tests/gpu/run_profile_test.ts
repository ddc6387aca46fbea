// run.sh's profile step with PROFILE_METRICS: ncu's CSV (`--metrics ... --csv`) comes mixed with the profiled program's
// own output, and ncu_metrics turns its rows into "name = value unit" lines of ncu/summary.txt under the run's title.
import assert from "node:assert/strict";

const root = new URL("../../", import.meta.url).pathname;

/** run.sh's ncu_metrics function, as the profile step defines it. */
async function ncuMetricsFunction(): Promise<string> {
  const runSh = await Deno.readTextFile(`${root}tests/gpu/run.sh`);
  const m = /\n( *ncu_metrics\(\) \{[\s\S]*?\n {2}\}\n)/.exec(runSh);
  assert.ok(m, "run.sh has no ncu_metrics function");
  return m[1];
}

// What `ncu --metrics ... --csv python3 tests/gpu/profile_deepgemm.py ...` printed on the H200: ncu's notes, the
// program's line, the CSV header and rows (DeepGEMM's kernel name holds commas inside its quotes).
const kernel = "void sm90_fp8_gemm_1d2d_impl<0, 0, 7168, 16384, 1, 256, 128>(float *, int *, CUtensorMap_st)";
const row = (name: string, unit: string, value: string) =>
  `"0","1731","python3.12","127.0.0.1","${kernel}","1","7","(384, 1, 1)","(132, 1, 1)","0","9.0",` +
  `"Command line profiler metrics","${name}","${unit}","${value}"`;
const captured = [
  "==WARNING== Note: Running with unmodified GPU clocks. If not controlled otherwise, profiling results may be inconsistent.",
  "==PROF== Connected to process 1731 (/usr/bin/python3.12)",
  "dense 4096x7168x16384: 3 calls of deep_gemm.fp8_gemm_nt",
  "==PROF== Disconnected from process 1731",
  `"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC",` +
  `"Section Name","Metric Name","Metric Unit","Metric Value"`,
  row("gpu__time_duration.sum", "ns", "654,112"),
  row("sm__cycles_active.avg", "cycle", "955,008.70"),
  row("sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active", "%", "93.16"),
].join("\n") + "\n";

Deno.test("run.sh's profile step writes a metrics run's values, one per line, under the run's title", async () => {
  const dir = await Deno.makeTempDir({ prefix: "go-ncu-metrics-" });
  try {
    await Deno.mkdir(`${dir}/ncu`);
    await Deno.writeTextFile(`${dir}/ncu/dg_4096x7168x16384.metrics.csv`, captured);
    const script = `${await ncuMetricsFunction()}ncu_metrics dg_4096x7168x16384 "DeepGEMM dense 4096x7168x16384"\n` +
      `ncu_metrics p9 "a run that wrote no CSV"\n`;
    const out = await new Deno.Command("bash", { args: ["-c", script], env: { OUT: dir }, stderr: "piped" }).output();
    assert.ok(out.success, new TextDecoder().decode(out.stderr));
    assert.equal(
      await Deno.readTextFile(`${dir}/ncu/summary.txt`),
      [
        "==== dg_4096x7168x16384: DeepGEMM dense 4096x7168x16384",
        "  gpu__time_duration.sum = 654,112 ns",
        "  sm__cycles_active.avg = 955,008.70 cycle",
        "  sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active = 93.16 %",
      ].join("\n") + "\n",
      "the header, ncu's notes and the program's own lines are left out; a run without a CSV adds nothing",
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
