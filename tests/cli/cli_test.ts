import assert from "node:assert/strict";
import { COMMANDS, main } from "../../cli.ts";
import { hostileCorpus } from "../io/_hostile_corpus.ts";
import { runCli, runCliProcess, withTempDir } from "./_run.ts";

Deno.test("main()", async (t) => {
  await t.step("lists every subcommand in the overview and exits 0 on --help", async () => {
    const r = await runCli(["--help"]);
    assert.equal(r.code, 0);
    for (const name of Object.keys(COMMANDS)) assert.match(r.stdout, new RegExp(`\\n  ${name} `));
  });

  await t.step("exits 2 with no subcommand or an unknown one", async () => {
    assert.equal((await runCli([])).code, 2);
    const r = await runCli(["frobnicate"]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /unknown subcommand "frobnicate"/);
  });

  await t.step("gives every subcommand a --help that exits 0", async () => {
    for (const name of Object.keys(COMMANDS)) {
      const r = await runCli([name, "--help"]);
      assert.equal(r.code, 0, name);
      assert.match(r.stdout, new RegExp(`Usage: oracle ${name}`));
    }
  });

  await t.step("turns a missing file into exit 2 with a message", async () => {
    let err = "";
    const code = await main(["compare", "a", "b"], {
      stdout: () => {},
      stderr: (s) => (err += s),
      env: () => undefined,
    });
    assert.equal(code, 2);
    assert.match(err, /cannot access a file/);
  });

  await t.step("names the subcommand once in argument errors", async () => {
    for (const args of [["compare", "--nope"], ["compare", "a", "b", "c"], ["fixtures", "stray"]]) {
      const r = await runCli(args);
      assert.equal(r.code, 2, args.join(" "));
      assert.equal(r.stderr.match(/oracle (compare|fixtures)/g)?.length, 2, r.stderr); // prefix + "see oracle X --help"
      assert.match(r.stderr, /^oracle (compare|fixtures): /);
    }
  });
});

Deno.test("oracle (subprocess)", async (t) => {
  await t.step("exits 2 with a message for hostile files in a real process", async () => {
    await withTempDir(async (dir) => {
      const corpus = hostileCorpus();
      for (const i of [0, 300, corpus.length - 1]) {
        const path = `${dir}/h.safetensors`;
        await Deno.writeFile(path, corpus[i].bytes);
        const r = await runCliProcess(["compare", path, path]);
        assert.equal(r.code, 2, corpus[i].name);
        assert.match(r.stderr, /h\.safetensors: /);
        assert.equal(r.stdout, "");
      }
    });
  });

  await t.step("exits 0 with the overview on --help", async () => {
    const r = await runCliProcess(["--help"]);
    assert.equal(r.code, 0);
    assert.match(r.stdout, /Subcommands:/);
  });
});

Deno.test("oracle --version prints the version and exits 0", async () => {
  let out = "";
  const code = await main(["--version"], { stdout: (t) => void (out += t), stderr: () => {}, env: () => undefined });
  assert.equal(code, 0);
  assert.match(out, /^oracle \d+\.\d+\.\d+ \(gemm-oracle; Deno /);
});
