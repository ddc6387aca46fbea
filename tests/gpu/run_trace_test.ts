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
