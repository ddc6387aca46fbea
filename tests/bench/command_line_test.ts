// Every script in bench/ answers --help with its usage (exit 0) and a flag it does not know with the reason and its
// usage on stderr (exit 2), before it measures anything (bench/_args.ts), instead of an uncaught TypeError.
import assert from "node:assert/strict";
import { runBench } from "./_run.ts";

const SCRIPTS = [...Deno.readDirSync(new URL("../../bench/", import.meta.url))]
  .filter((e) => e.isFile && e.name.endsWith(".ts") && !e.name.startsWith("_"))
  .map((e) => e.name)
  .sort();

Deno.test("every bench script answers --help and refuses an unknown flag with its usage", async (t) => {
  assert.ok(SCRIPTS.length >= 16, `bench/ has ${SCRIPTS.length} scripts`);
  for (const script of SCRIPTS) {
    await t.step(script, async () => {
      const help = await runBench(script, "--help");
      assert.equal(help.code, 0, help.stderr);
      assert.match(help.stdout, new RegExp(`^usage: deno run -A bench/${script.replace(".", "\\.")}`));
      const bad = await runBench(script, "--no-such-flag");
      assert.equal(bad.code, 2, bad.stderr);
      assert.match(bad.stderr, /Unknown option '--no-such-flag'/);
      assert.match(bad.stderr, /usage: deno run -A bench\//);
      assert.doesNotMatch(bad.stderr, /Uncaught|at parseArgs/);
    });
  }
});
