// run.sh's bench step times the streaming floor in its first bench.cpp run only (bench.cpp times it only with --floor):
// the table reads the floor from that run's JSON, and the other runs (the warm --quick rerun, BENCH_CFG2's, the simple
// kernels') leave it out, as do the ab and trace steps, so that the floor's timings (six variants a shape, grouped
// shapes too) cost nothing where no one reads them. A stand-in bench records its arguments.
import assert from "node:assert/strict";
import { runRunSh, withRunDirs } from "./_run_sh.ts";

Deno.test("run.sh's bench step asks for the floor (--floor) in its first run and not in the others", async () => {
  const calls = await withRunDirs("go-bench-floor", async (out, b) => {
    const log = `${b}/calls.txt`;
    await Deno.writeTextFile(`${b}/bench`, `#!/bin/bash\n(IFS='|'; echo "$*") >> "${log}"\n`);
    await Deno.chmod(`${b}/bench`, 0o755);
    await runRunSh({
      OUT: out,
      BUILD_DIR: b,
      STEPS: "bench",
      SKIP_TORCH: "1",
      BENCH_CFG2: "bn=112",
      BENCH_SIMPLE: "1",
      BENCH_FILTER: "masked 32x20",
    });
    return (await Deno.readTextFile(log)).trim().split("\n").map((c) => c.split("|"));
  });
  assert.equal(calls.length, 4, "first run, warm rerun, BENCH_CFG2's, the simple kernels'");
  assert.ok(calls[0].includes("--floor"), calls[0].join(" "));
  for (const c of calls.slice(1)) assert.ok(!c.includes("--floor"), c.join(" "));
});
