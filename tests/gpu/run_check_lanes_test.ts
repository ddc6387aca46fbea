// run.sh's check step in CHECK_LANES lanes: configuration i runs in lane i mod CHECK_LANES, the lanes at once, each in
// order; check.log and summary.txt read as one lane's would, in configuration order; a configuration that times out
// stops its own lane, and the configurations that lane never ran are named as not run. A stand-in check prints its
// configuration, and sleeps past CHECK_TIMEOUT on the one called "hang".
import assert from "node:assert/strict";
import { runRunSh, withRunDirs } from "./_run_sh.ts";

function checkStep(cfgs: string, lanes?: number): Promise<{ summary: string[]; log: string }> {
  return withRunDirs("go-lanes", async (out, b) => {
    await Deno.writeTextFile(
      `${b}/check`,
      `#!/bin/bash\n[ "$GO_CUDA_FAST_CFG" = hang ] && sleep 5\necho "SUMMARY cases=1 cfg=\${GO_CUDA_FAST_CFG:-heuristic}"\n`,
    );
    await Deno.chmod(`${b}/check`, 0o755);
    await runRunSh({
      OUT: out,
      BUILD_DIR: b,
      STEPS: "check",
      CHECK_CFGS: cfgs,
      CHECK_TIMEOUT: "1",
      ...(lanes ? { CHECK_LANES: String(lanes) } : {}),
      PATH: Deno.env.get("PATH")!,
    });
    const summary = (await Deno.readTextFile(`${out}/summary.txt`)).split("\n").filter((l) => l.startsWith("check"));
    const log = await Deno.readTextFile(`${out}/check.log`);
    await assert.rejects(Deno.stat(`${out}/check.lanes`), Deno.errors.NotFound, "the lanes' logs are removed");
    return { summary, log };
  });
}

Deno.test("run.sh's check step", async (t) => {
  await t.step("in two lanes, reports every configuration in its own order", async () => {
    const { summary, log } = await checkStep("a;default;b;c;d", 2);
    assert.deepEqual(summary, [
      "check [a]: exit 0; SUMMARY cases=1 cfg=a",
      "check [default]: exit 0; SUMMARY cases=1 cfg=heuristic",
      "check [b]: exit 0; SUMMARY cases=1 cfg=b",
      "check [c]: exit 0; SUMMARY cases=1 cfg=c",
      "check [d]: exit 0; SUMMARY cases=1 cfg=d",
    ]);
    assert.deepEqual([...log.matchAll(/^==== check: (\S+)/gm)].map((m) => m[1]), ["a", "default", "b", "c", "d"]);
  });
  await t.step("a configuration that times out stops its lane only, and what it skipped is named", async () => {
    const { summary } = await checkStep("a;b;hang;c;d;e", 2);
    assert.deepEqual(summary, [
      "check [a]: exit 0; SUMMARY cases=1 cfg=a",
      "check [b]: exit 0; SUMMARY cases=1 cfg=b",
      "check [hang]: exit 124; no SUMMARY line: the run ended before its summary",
      "check [hang] timed out (a hung kernel?): its lane stopped there; skipping the benchmark",
      "check [c]: exit 0; SUMMARY cases=1 cfg=c",
      "check [d]: not run (its lane stopped at a configuration that timed out)",
      "check [e]: exit 0; SUMMARY cases=1 cfg=e",
    ]);
  });
  await t.step("in one lane (the default), stops at a timeout as before", async () => {
    const { summary } = await checkStep("a;hang;b");
    assert.deepEqual(summary, [
      "check [a]: exit 0; SUMMARY cases=1 cfg=a",
      "check [hang]: exit 124; no SUMMARY line: the run ended before its summary",
      "check [hang] timed out (a hung kernel?): its lane stopped there; skipping the benchmark",
      "check [b]: not run (its lane stopped at a configuration that timed out)",
    ]);
  });
});
