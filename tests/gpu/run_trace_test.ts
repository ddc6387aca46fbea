// run.sh's trace step needs the profiling library, which only a build step in the same STEPS makes: without it the
// step says so and names the library, instead of running the benchmark on a missing file (a call with STEPS=trace
// alone, after a build for other steps, had reported only "trace: exit 2, 0 traces").
import assert from "node:assert/strict";
import { runRunSh, withRunDirs } from "./_run_sh.ts";

Deno.test("run.sh's trace step without the profiling library says which library and how to build it", () =>
  withRunDirs("go-trace", async (out, b) => {
    await runRunSh({ OUT: out, BUILD_DIR: b, STEPS: "trace", PATH: Deno.env.get("PATH")! });
    const summary = (await Deno.readTextFile(`${out}/summary.txt`)).split("\n").filter((l) => l.startsWith("trace"));
    assert.deepEqual(summary, [
      `trace: skipped: no profiling library (${b}/prof/libgo_cuda_prof.so): run the build step with trace in the same STEPS`,
    ]);
    await assert.rejects(Deno.stat(`${out}/trace.log`), Deno.errors.NotFound, "no benchmark ran");
  }));

Deno.test("run.sh's trace step with TRACE_AB=1 traces each AB_SOURCES copy on its profiling build, and names a missing one", () =>
  withRunDirs("go-trace-ab", async (out, b) => {
    // A stand-in for bench.cpp that prints one trace line naming the library it was given.
    await Deno.writeTextFile(`${b}/bench`, `#!/bin/sh\necho "fast trace (dense 1x1x1): launch 30, CTA 0, lib $1"\n`);
    await Deno.chmod(`${b}/bench`, 0o755);
    for (const d of ["prof", "ab/1/prof"]) {
      await Deno.mkdir(`${b}/${d}`, { recursive: true });
      await Deno.writeTextFile(`${b}/${d}/libgo_cuda_prof.so`, "");
    }
    await runRunSh({
      OUT: out,
      BUILD_DIR: b,
      STEPS: "trace",
      TRACE_AB: "1",
      AB_SOURCES: ".ab/x/kernels:.ab/y/kernels",
      PATH: Deno.env.get("PATH")!,
    });
    const summary = (await Deno.readTextFile(`${out}/summary.txt`)).split("\n").filter((l) => /^trace[.:]/.test(l));
    assert.deepEqual(summary, [
      "trace: exit 0, 1 traces",
      "trace.b1: exit 0, 1 traces",
      `trace.b2: skipped: no profiling library for .ab/y/kernels (${b}/ab/2/prof/libgo_cuda_prof.so): run the ` +
      "build step with trace and TRACE_AB=1 in the same STEPS",
    ]);
    assert.match(await Deno.readTextFile(`${out}/trace.log`), new RegExp(`lib ${b}/prof/libgo_cuda_prof\\.so`));
    assert.match(await Deno.readTextFile(`${out}/trace.b1.log`), new RegExp(`lib ${b}/ab/1/prof/libgo_cuda_prof\\.so`));
  }));
