// run.sh's profile step with PROFILE_METRICS: ncu's CSV (`--metrics ... --csv`) comes mixed with the profiled program's
// own output; ncu_run titles the run in ncu/summary.txt and ncu_metrics turns the rows into "name = value unit" lines.
import assert from "node:assert/strict";

const root = new URL("../../", import.meta.url).pathname;

/** run.sh's Nsight Compute functions: the shared ones (ncu_settle, ncu_profile, ncu_report_pages, at the top level)
 * and the profile step's (ncu_pages, ncu_metrics, ncu_run, profile_options, profile_shape), as the script defines them. */
async function profileFunctions(): Promise<string> {
  const runSh = await Deno.readTextFile(`${root}tests/gpu/run.sh`);
  const fns = [
    ...["ncu_settle", "ncu_profile", "ncu_report_pages"].map((f) =>
      new RegExp(`\\n(${f}\\(\\) \\{[\\s\\S]*?\\n\\}\\n)`).exec(runSh)
    ),
    ...["ncu_pages", "ncu_metrics", "ncu_run", "profile_options", "profile_shape"].map((f) =>
      new RegExp(`\\n( {2}${f}\\(\\) \\{[\\s\\S]*?\\n {2}\\}\\n)`).exec(runSh)
    ),
  ];
  assert.ok(
    fns.every((m) => m),
    "run.sh lacks ncu_settle, ncu_profile, ncu_report_pages, ncu_pages, ncu_metrics, ncu_run, profile_options or " +
      "profile_shape",
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

/** Runs the profile step's loop for one shape with stand-ins for ncu (recording each run's arguments and
 * GO_CUDA_FAST_CFG; `ncu --help` names --sampling-interval where `sampling` is true) and python3 (deep_gemm imports
 * where `deepgemm` is true), under `env`; returns the recorded lines and summary.txt. */
async function profileShape(
  env: Record<string, string>,
  opts: { sampling: boolean; deepgemm: boolean },
): Promise<{ runs: string[]; notes: string }> {
  const dir = await Deno.makeTempDir({ prefix: "go-ncu-shape-" });
  try {
    await Deno.mkdir(`${dir}/ncu`);
    await Deno.mkdir(`${dir}/bin`);
    const help = opts.sampling ? "  --sampling-interval arg  Set the sampling period" : "  --set arg";
    await Deno.writeTextFile(
      `${dir}/bin/ncu`,
      `#!/bin/sh\nif [ "$1" = --help ]; then echo "${help}"; exit 0; fi\n` +
        `echo "[\${GO_CUDA_FAST_CFG:-}] $*" >>"${dir}/runs.txt"\n`,
    );
    await Deno.writeTextFile(`${dir}/bin/python3`, `#!/bin/sh\nexit ${opts.deepgemm ? 0 : 1}\n`);
    await Deno.chmod(`${dir}/bin/ncu`, 0o755);
    await Deno.chmod(`${dir}/bin/python3`, 0o755);
    const script = `note() { echo "$*" >>"$OUT/summary.txt"; }\n${await profileFunctions()}` +
      `B=/b CUDA_SO=/b/libgo_cuda.so PROF_SO=/b/prof.so\npcfgs=(default "bn=64")\nn=0\n` +
      `profile_options\nprofile_shape 128x4096x7168\n`;
    const out = await new Deno.Command("bash", {
      args: ["-c", script],
      env: { OUT: dir, ...env, PATH: `${dir}/bin:${Deno.env.get("PATH")}` },
      stderr: "piped",
    }).output();
    assert.ok(out.success, new TextDecoder().decode(out.stderr));
    const read = async (f: string) => {
      try {
        return await Deno.readTextFile(`${dir}/${f}`);
      } catch {
        return "";
      }
    };
    return {
      runs: (await read("runs.txt")).trimEnd().split("\n").map((l) => l.replaceAll(dir, "$OUT")),
      notes: await read("summary.txt"),
    };
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("run.sh's profile step profiles each kernel's first launch with the full set unless told otherwise", async () => {
  const { runs } = await profileShape({}, { sampling: true, deepgemm: true });
  assert.deepEqual(runs, [
    "[] --clock-control none --set full --import-source no -f -o $OUT/ncu/p1 --kernel-name go_fp8_fast " +
    "--launch-count 1 /b/bench /b/libgo_cuda.so --shape dense 128x4096x7168 --calls 1 --no-prepare --stall 0",
    "[bn=64] --clock-control none --set full --import-source no -f -o $OUT/ncu/p2 --kernel-name go_fp8_fast " +
    "--launch-count 1 /b/bench /b/libgo_cuda.so --shape dense 128x4096x7168 --calls 1 --no-prepare --stall 0",
    "[] --clock-control none --set full --import-source no -f -o $OUT/ncu/dg_128x4096x7168 " +
    "--kernel-name regex:sm90_fp8_gemm_1d2d --launch-skip 1 --launch-count 1 python3 tests/gpu/profile_deepgemm.py " +
    "dense 128x4096x7168 --calls 3",
  ]);
});

Deno.test("run.sh's profile step with PROFILE_WARM, PROFILE_SECTIONS and PROFILE_SAMPLING profiles a launch that follows its own kernel, caches unflushed", async () => {
  const env = { PROFILE_WARM: "10", PROFILE_SECTIONS: "SourceCounters WarpStateStats", PROFILE_SAMPLING: "0" };
  const opts = "--cache-control none --section SourceCounters --section WarpStateStats --sampling-interval 0";
  const { runs, notes } = await profileShape(env, { sampling: true, deepgemm: true });
  assert.equal(runs.length, 3, runs.join("\n"));
  assert.equal(
    runs[0],
    `[] --clock-control none --import-source no -f -o $OUT/ncu/p1 --kernel-name go_fp8_fast --launch-skip 10 ` +
      `--launch-count 1 ${opts} /b/bench /b/libgo_cuda.so --shape dense 128x4096x7168 --calls 11 --no-prepare --stall 0`,
  );
  assert.equal(
    runs[2],
    `[] --clock-control none --import-source no -f -o $OUT/ncu/dg_128x4096x7168 --kernel-name regex:sm90_fp8_gemm_1d2d ` +
      `--launch-skip 10 --launch-count 1 ${opts} python3 tests/gpu/profile_deepgemm.py dense 128x4096x7168 --calls 12`,
  );
  assert.equal(notes.split("\n").filter((l) => l.startsWith("profile:")).length, 0, notes);
});

Deno.test("run.sh's profile step says which of PROFILE_WARM and PROFILE_SAMPLING it could not take, and goes on", async () => {
  const bad = await profileShape({ PROFILE_WARM: "ten", PROFILE_SAMPLING: "40" }, { sampling: true, deepgemm: false });
  assert.match(bad.notes, /profile: PROFILE_WARM="ten" is not a count of launches from 0 to 999: profiling the first/);
  assert.match(bad.notes, /profile: PROFILE_SAMPLING="40" is not from 0 to 31: ncu's own sampling period/);
  assert.equal(bad.runs.length, 2, "no DeepGEMM run where deep_gemm does not import");
  assert.ok(bad.runs.every((r) => r.includes("--calls 1 ") && !r.includes("--launch-skip")), bad.runs.join("\n"));
  const old = await profileShape({ PROFILE_SAMPLING: "0" }, { sampling: false, deepgemm: false });
  assert.match(old.notes, /profile: this ncu has no --sampling-interval: PROFILE_SAMPLING ignored/);
  assert.ok(old.runs.every((r) => !r.includes("--sampling-interval")), old.runs.join("\n"));
});
