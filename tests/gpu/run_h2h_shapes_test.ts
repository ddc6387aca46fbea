// run.sh's h2h step with H2H_SHAPES: head_to_head.py gets one --shape per named shape, beside H2H_FILTER where set, so
// that a K sweep (bench/k_sweep.ts --shapes) runs in the same process as the gate's table does. A stand-in python3
// records its arguments and writes no JSON, so no table is made (and bench/RESULTS.md is never touched).
import assert from "node:assert/strict";
import { runRunSh, withRunDirs } from "./_run_sh.ts";

/** The arguments of the stand-in python3's head_to_head.py run after run.sh's h2h step (other python3 calls of the
 * script, such as its environment log, are left out). */
async function h2hCall(env: Record<string, string>): Promise<string[]> {
  return await withRunDirs("go-h2h-shapes", async (out, b) => {
    await Deno.mkdir(`${b}/bin`);
    const calls = `${b}/calls.txt`;
    await Deno.writeTextFile(`${b}/bin/python3`, `#!/bin/bash\n(IFS='|'; echo "$*") >> "${calls}"\n`);
    await Deno.chmod(`${b}/bin/python3`, 0o755);
    await runRunSh({ OUT: out, BUILD_DIR: b, STEPS: "h2h", PATH: `${b}/bin:${Deno.env.get("PATH")}`, ...env });
    const runs = (await Deno.readTextFile(calls)).trim().split("\n").map((l) => l.split("|"))
      .filter((a) => a[0] === "tests/gpu/head_to_head.py");
    assert.equal(runs.length, 1, "one head_to_head.py run");
    return runs[0];
  });
}

Deno.test("run.sh's h2h step passes H2H_SHAPES to head_to_head.py as one --shape each", async () => {
  const args = await h2hCall({ H2H_SHAPES: "dense 128x4096x1024;dense 128x4096x2048;", H2H_ROUNDS: "4" });
  assert.equal(args[0], "tests/gpu/head_to_head.py");
  assert.deepEqual(args.slice(args.indexOf("--rounds")), [
    "--rounds",
    "4",
    "--samples",
    "10",
    "--shape",
    "dense 128x4096x1024",
    "--shape",
    "dense 128x4096x2048",
  ]);
});

Deno.test("run.sh's h2h step keeps H2H_FILTER beside H2H_SHAPES, and without either runs the 45", async () => {
  const both = await h2hCall({ H2H_FILTER: "dense 64x", H2H_SHAPES: "masked 32x100x4096x2048" });
  assert.deepEqual(both.slice(both.indexOf("--filter")), [
    "--filter",
    "dense 64x",
    "--shape",
    "masked 32x100x4096x2048",
  ]);
  const plain = await h2hCall({});
  assert.ok(!plain.includes("--shape") && !plain.includes("--filter"), plain.join(" "));
});
