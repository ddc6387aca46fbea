// run.sh's PACK=1: every report under $OUT but summary.txt goes into reports.tgz (the originals removed, empty folders
// too), so that a caller that brings back only a few files of a call gets them all; summary.txt says how many.
import assert from "node:assert/strict";
import { runRunSh, withRunDirs } from "./_run_sh.ts";

/** run.sh with no steps: what is left is its reports' packing. */
function run(env: Record<string, string>): Promise<void> {
  return runRunSh({ ...env, STEPS: "none" });
}

async function listing(dir: string): Promise<string[]> {
  const names: string[] = [];
  for await (const e of Deno.readDir(dir)) names.push(e.name);
  return names.sort();
}

async function tarList(file: string): Promise<string[]> {
  const out = await new Deno.Command("tar", { args: ["tzf", file], stdout: "piped" }).output();
  assert.equal(out.code, 0);
  return new TextDecoder().decode(out.stdout).split("\n").filter((l) => l !== "").sort();
}

Deno.test("run.sh with PACK=1 leaves summary.txt and reports.tgz, which holds every other report", () =>
  withRunDirs("go-pack", async (out, b) => {
    await Deno.mkdir(`${out}/r/ab`, { recursive: true });
    await Deno.writeTextFile(`${out}/r/ab/check.log`, "SUMMARY failures=0\n");
    await Deno.writeTextFile(`${out}/probe.log`, "| none | 1 |\n");
    await run({ OUT: out, BUILD_DIR: b, PACK: "1" });
    assert.deepEqual(await listing(out), ["reports.tgz", "summary.txt"], "the folders emptied by the packing go too");
    assert.deepEqual(await tarList(`${out}/reports.tgz`), ["./env.log", "./probe.log", "./r/ab/check.log"]);
    const summary = await Deno.readTextFile(`${out}/summary.txt`);
    assert.match(summary, /^reports: 3 files in reports\.tgz$/m);
  }));

Deno.test("run.sh without PACK leaves the reports as they are", () =>
  withRunDirs("go-pack", async (out, b) => {
    await Deno.writeTextFile(`${out}/probe.log`, "| none | 1 |\n");
    await run({ OUT: out, BUILD_DIR: b });
    assert.deepEqual(await listing(out), ["env.log", "probe.log", "summary.txt"]);
  }));
