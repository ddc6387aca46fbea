// run.sh's profile step with PROFILE_METRICS: ncu's CSV (`--metrics ... --csv`) comes mixed with the profiled program's
// own output; ncu_run titles the run in ncu/summary.txt and ncu_metrics turns the rows into "name = value unit" lines.
import assert from "node:assert/strict";

const root = new URL("../../", import.meta.url).pathname;

/** run.sh's Nsight Compute functions: the shared ones (ncu_settle, ncu_profile, ncu_report_pages, at the top level)
 * and the profile step's (ncu_pages, ncu_metrics, ncu_run), as the script defines them. */
async function profileFunctions(): Promise<string> {
  const runSh = await Deno.readTextFile(`${root}tests/gpu/run.sh`);
  const fns = [
    ...["ncu_settle", "ncu_profile", "ncu_report_pages"].map((f) =>
      new RegExp(`\\n(${f}\\(\\) \\{[\\s\\S]*?\\n\\}\\n)`).exec(runSh)
    ),
    ...["ncu_pages", "ncu_metrics", "ncu_run"].map((f) =>
      new RegExp(`\\n( {2}${f}\\(\\) \\{[\\s\\S]*?\\n {2}\\}\\n)`).exec(runSh)
    ),
  ];
  assert.ok(
    fns.every((m) => m),
    "run.sh lacks ncu_settle, ncu_profile, ncu_report_pages, ncu_pages, ncu_metrics or ncu_run",
  );
  return fns.map((m) => m![1]).join("");
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

/** ncu/summary.txt as ncu_run writes it for `captured`'s rows under the run's title. */
const summaryOf = (title: string) =>
  [
    `==== ncu ${title} ====`,
    "  gpu__time_duration.sum = 654,112 ns",
    "  sm__cycles_active.avg = 955,008.70 cycle",
    "  sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active = 93.16 %",
  ].join("\n") + "\n";

Deno.test("run.sh's profile step with PROFILE_METRICS writes a run's title and values, one per line", async () => {
  const dir = await Deno.makeTempDir({ prefix: "go-ncu-metrics-" });
  try {
    await Deno.mkdir(`${dir}/ncu`);
    await Deno.mkdir(`${dir}/bin`);
    // A stand-in for ncu: records its arguments and prints what the H200's ncu printed.
    await Deno.writeTextFile(`${dir}/captured.txt`, captured);
    await Deno.writeTextFile(`${dir}/bin/ncu`, `#!/bin/sh\necho "$@" >"${dir}/args.txt"\ncat "${dir}/captured.txt"\n`);
    await Deno.chmod(`${dir}/bin/ncu`, 0o755);
    const script = `note() { echo "$*" >>"$OUT/summary.txt"; }\n${await profileFunctions()}` +
      `ncu_run dg_4096x7168x16384 "DeepGEMM dense 4096x7168x16384" --kernel-name K --launch-count 1 prog arg\n` +
      `ncu_metrics p9\n`;
    const out = await new Deno.Command("bash", {
      args: ["-c", script],
      env: { OUT: dir, PROFILE_METRICS: "gpu__time_duration.sum", PATH: `${dir}/bin:${Deno.env.get("PATH")}` },
      stderr: "piped",
    }).output();
    assert.ok(out.success, new TextDecoder().decode(out.stderr));
    assert.equal(
      await Deno.readTextFile(`${dir}/args.txt`),
      "--clock-control none --metrics gpu__time_duration.sum --csv --kernel-name K --launch-count 1 prog arg\n",
    );
    assert.equal(
      await Deno.readTextFile(`${dir}/ncu/summary.txt`),
      summaryOf("dg_4096x7168x16384: DeepGEMM dense 4096x7168x16384"),
      "the header, ncu's notes and the program's own lines are left out; a run without a CSV adds nothing",
    );
    assert.equal(
      await Deno.readTextFile(`${dir}/summary.txt`),
      "ncu dg_4096x7168x16384 DeepGEMM dense 4096x7168x16384: exit 0\n",
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("run.sh's profile step reads a timed-out run's rows once the ncu process behind the launcher has written them", async () => {
  const dir = await Deno.makeTempDir({ prefix: "go-ncu-timeout-" });
  try {
    await Deno.mkdir(`${dir}/ncu`);
    await Deno.mkdir(`${dir}/bin`);
    await Deno.mkdir(`${dir}/real`);
    await Deno.writeTextFile(`${dir}/captured.txt`, captured);
    // The launcher script starts the profiler as a child (not exec), as CUDA's bin/ncu does; `timeout` ends the
    // launcher at once, while the profiler, told to stop, writes its rows a second later.
    await Deno.writeTextFile(`${dir}/bin/ncu`, `#!/bin/sh\n"${dir}/real/ncu" "$@"\n`);
    await Deno.writeTextFile(
      `${dir}/real/ncu`,
      `#!/bin/bash\ntrap 'sleep 1; cat "${dir}/captured.txt"; exit 0' TERM\nwhile :; do sleep 0.1; done\n`,
    );
    await Deno.chmod(`${dir}/bin/ncu`, 0o755);
    await Deno.chmod(`${dir}/real/ncu`, 0o755);
    const script = `note() { echo "$*" >>"$OUT/summary.txt"; }\n${await profileFunctions()}` +
      `ncu_run p1 "dense 4096x7168x16384 [default]" --kernel-name K --launch-count 1 prog arg\n`;
    const out = await new Deno.Command("bash", {
      args: ["-c", script],
      env: {
        OUT: dir,
        PROFILE_METRICS: "gpu__time_duration.sum",
        PROFILE_TIMEOUT: "1",
        PATH: `${dir}/bin:${Deno.env.get("PATH")}`,
      },
      stderr: "piped",
    }).output();
    assert.ok(out.success, new TextDecoder().decode(out.stderr));
    assert.equal(await Deno.readTextFile(`${dir}/summary.txt`), "ncu p1 dense 4096x7168x16384 [default]: exit 124\n");
    assert.equal(await Deno.readTextFile(`${dir}/ncu/summary.txt`), summaryOf("p1: dense 4096x7168x16384 [default]"));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
