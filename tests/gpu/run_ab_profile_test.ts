// run.sh's ab step with AB_PROFILE: for each named shape, every side's kernel is run once outside the tool (its JIT
// warm-up) and then profiled by Nsight Compute, one launch of go_fp8_fast with the full set, clocks left alone; the
// report's details, SASS and raw pages land in ab.tgz as ab/ncu/<side>.<n>.*, and a side whose profile wrote no report
// is named in the summary; with AB_PROFILE_METRICS, a metrics run per side instead, its CSV as
// ab/ncu/<side>.<n>.metrics.csv. A stand-in bench and a stand-in ncu record their arguments; a stand-in B library
// stands where the build step puts it.
import assert from "node:assert/strict";
import { runAbStep, withRunDirs } from "./_run_sh.ts";

/** A stand-in `ncu`: records its arguments; `-o TAG` writes TAG.ncu-rep unless TAG's name holds "b1.2" (a profile
 * that wrote no report); `-i REP --page P` prints a line naming the page; `--metrics` prints a metrics run's CSV
 * header and one row, but for a masked shape (a run that printed none). */
const NCU = `#!/bin/bash
(IFS='|'; echo "ncu|$*") >> "$CALLS"
prev="" metrics="" masked=""
for a in "$@"; do
  if [ "$prev" = -o ] && [[ "$a" != *b1.2 ]]; then : > "$a.ncu-rep"; fi
  if [ "$prev" = --page ]; then echo "page $a"; fi
  [ "$a" = --metrics ] && metrics=1
  [[ "$a" == masked* ]] && masked=1
  prev=$a
done
if [ -n "$metrics" ] && [ -z "$masked" ]; then
  echo '"ID","Kernel Name","Metric Name","Metric Unit","Metric Value"'
  echo '"0","go_fp8_fast","sm__cycles_active.avg","cycle","1"'
fi
`;

interface ProfileRun {
  calls: string[];
  archived: string[];
  summary: string;
}

async function profileRun(env: Record<string, string>): Promise<ProfileRun> {
  return await withRunDirs("go-ab-profile", async (out, b) => {
    const calls = `${b}/calls.txt`, stubs = `${b}/stubs`;
    await Deno.mkdir(stubs);
    await Deno.writeTextFile(`${b}/bench`, `#!/bin/bash\n(IFS='|'; echo "bench|$*") >> "${calls}"\n`);
    await Deno.writeTextFile(`${stubs}/ncu`, NCU);
    for (const f of [`${b}/bench`, `${stubs}/ncu`]) await Deno.chmod(f, 0o755);
    await runAbStep(out, b, {
      AB_FILTER: "dense 64x",
      CALLS: calls,
      PATH: `${stubs}:${Deno.env.get("PATH") ?? "/usr/bin:/bin"}`,
      ...env,
    });
    const tar = await new Deno.Command("tar", { args: ["tzf", `${out}/ab.tgz`], stdout: "piped" }).output();
    return {
      calls: (await Deno.readTextFile(calls)).trim().split("\n"),
      archived: new TextDecoder().decode(tar.stdout).trim().split("\n").sort(),
      summary: await Deno.readTextFile(`${out}/summary.txt`),
    };
  });
}

Deno.test("run.sh's ab step with AB_PROFILE warms each side up, then profiles one launch of it per shape", async () => {
  const r = await profileRun({ AB_PROFILE: "dense 4096x7168x2048;masked 6x1024x4096x2048" });
  const profiling = r.calls.filter((c) => c.startsWith("ncu|") && c.includes("|-o|"));
  assert.equal(profiling.length, 4, "two shapes, two sides");
  for (const c of profiling) {
    const args = c.split("|");
    for (
      const flag of ["--clock-control|none", "--set|full", "--kernel-name|go_fp8_fast", "--launch-count|1", "|--once|"]
    ) {
      assert.ok(c.includes(flag), `${flag} in ${c}`);
    }
    const shape = args[args.indexOf("--shape") + 1];
    assert.ok(["dense 4096x7168x2048", "masked 6x1024x4096x2048"].includes(shape), `the named shape: ${c}`);
  }
  assert.match(profiling[0], /\/ab\/ncu\/a\.1\|.*\|--shape\|dense 4096x7168x2048\|/);
  assert.match(profiling[1], /\/ab\/ncu\/b1\.1\|.*\/ab\/1\/libgo_cuda\.so\|--shape\|dense 4096x7168x2048\|/);
  assert.match(profiling[3], /\/ab\/ncu\/b1\.2\|.*\|--shape\|masked 6x1024x4096x2048\|/);
  // Each profile follows a run of the same side and shape outside the tool.
  const i = r.calls.indexOf(profiling[1]);
  assert.match(r.calls[i - 1], /^bench\|.*\/ab\/1\/libgo_cuda\.so\|--shape\|dense 4096x7168x2048\|--once\|/);
  for (const side of ["a.1", "b1.1", "a.2"]) {
    for (const page of ["details.txt", "sass.csv", "raw.csv"]) {
      assert.ok(r.archived.includes(`ab/ncu/${side}.${page}`), `ab/ncu/${side}.${page} in ab.tgz`);
    }
  }
  assert.ok(!r.archived.some((f) => f.endsWith(".ncu-rep")), "reports are dropped once their pages are written");
  assert.ok(!r.archived.includes("ab/ncu/b1.2.raw.csv"), "no pages without a report");
  assert.match(r.summary, /^ab profile dense 4096x7168x2048 \[b1\]: ncu exit 0, pages written$/m);
  assert.match(
    r.summary,
    /^ab profile masked 6x1024x4096x2048 \[b1\]: ncu exit 0, NO REPORT \(see ab\/ncu\/b1\.2\.run\.txt\)$/m,
  );
});

Deno.test("run.sh's ab step without AB_PROFILE runs no profiler", async () => {
  const r = await profileRun({});
  assert.deepEqual(r.calls.filter((c) => c.startsWith("ncu|")), []);
  assert.ok(!r.archived.some((f) => f.startsWith("ab/ncu")), r.archived.join(" "));
});

Deno.test("run.sh's ab step with AB_PROFILE_METRICS runs one metrics pass a side and shape instead of the full set", async () => {
  const metrics = "sm__cycles_active.avg,gpu__time_duration.sum";
  const r = await profileRun({
    AB_PROFILE: "dense 4096x7168x2048;masked 6x1024x4096x2048",
    AB_PROFILE_METRICS: metrics,
  });
  const profiling = r.calls.filter((c) => c.startsWith("ncu|"));
  assert.equal(profiling.length, 4, "two shapes, two sides, no report pages to read");
  for (const c of profiling) {
    assert.ok(c.includes(`|--metrics|${metrics}|--csv|`) && c.includes("|--once|"), c);
    assert.ok(!c.includes("|--set|") && !c.includes("|-o|"), c);
  }
  for (const side of ["a.1", "b1.1", "a.2", "b1.2"]) {
    assert.ok(r.archived.includes(`ab/ncu/${side}.metrics.csv`), `ab/ncu/${side}.metrics.csv in ab.tgz`);
  }
  assert.match(r.summary, /^ab profile dense 4096x7168x2048 \[b1\]: ncu exit 0, metrics written$/m);
  assert.match(
    r.summary,
    /^ab profile masked 6x1024x4096x2048 \[b1\]: ncu exit 0, NO METRICS \(see ab\/ncu\/b1\.2\.metrics\.csv\)$/m,
  );
});
