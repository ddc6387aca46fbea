// run.sh's ab step with AB_SHAPES: each side's bench run gets AB_FILTER's filter and a --shape per named shape outside
// the 45 (bench.cpp), so a variant can be timed where the benchmark's shapes do not reach. A stand-in bench records its
// arguments; a stand-in B library stands where the build step puts it.
import assert from "node:assert/strict";
import { runAbStep, withRunDirs } from "./_run_sh.ts";

/** The stand-in bench's argument lists (one line per call, arguments joined by "|"), after run.sh's ab step. */
async function benchCalls(env: Record<string, string>): Promise<string[]> {
  return await withRunDirs("go-ab-shapes", async (out, b) => {
    const calls = `${b}/calls.txt`;
    await Deno.writeTextFile(
      `${b}/bench`,
      `#!/bin/bash\n(IFS='|'; echo "$*") >> "${calls}"\n`,
    );
    await Deno.chmod(`${b}/bench`, 0o755);
    await runAbStep(out, b, env);
    return (await Deno.readTextFile(calls)).trim().split("\n");
  });
}

Deno.test("run.sh's ab step passes AB_SHAPES to bench as one --shape each, beside AB_FILTER, on every side", async () => {
  const calls = await benchCalls({ AB_FILTER: "dense 64x", AB_SHAPES: "masked 32x100x4096x2048;dense 64x100x7168" });
  assert.equal(calls.length, 2, "side A and side B1, one run each");
  for (const [i, c] of calls.entries()) {
    const args = c.split("|");
    assert.deepEqual(args.slice(args.indexOf("--filter")), [
      "--filter",
      "dense 64x",
      "--shape",
      "masked 32x100x4096x2048",
      "--shape",
      "dense 64x100x7168",
    ], `call ${i}: ${c}`);
  }
  assert.match(calls[0], /libgo_cuda\.so/);
  assert.match(calls[1], /\/ab\/1\/libgo_cuda\.so/, "B1 runs its own library");
});

Deno.test("run.sh's ab step without AB_SHAPES runs AB_FILTER's shapes alone", async () => {
  const calls = await benchCalls({ AB_FILTER: "dense 64x" });
  for (const c of calls) assert.ok(!c.includes("--shape"), c);
  assert.equal(calls.length, 2);
});

Deno.test("run.sh's ab step skips the streaming floor on every side (no --floor to bench)", async () => {
  const calls = await benchCalls({ AB_FILTER: "masked 32x20" });
  assert.equal(calls.length, 2);
  for (const c of calls) assert.ok(!c.split("|").includes("--floor"), c);
});
