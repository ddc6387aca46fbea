import assert from "node:assert/strict";
import { COMMANDS } from "../../cli.ts";
import { referenceOp as runOp, referenceOpNames as runOpNames } from "../../reference/registry.ts";
import { runCli, runCliProcess, withTempDir } from "./_run.ts";

const REPO = new URL("../../", import.meta.url).pathname.replace(/\/$/, "");

/** The command lines of a help text's Example section(s): the indented lines after "Example..." up to a blank line. */
function exampleLines(help: string): string[] {
  const out: string[] = [];
  let inside = false;
  for (const line of help.split("\n")) {
    if (/^Examples?\b/.test(line)) inside = true;
    else if (line.trim() === "") inside = false;
    else if (inside && line.startsWith("  ")) out.push(line.trim());
  }
  return out;
}

Deno.test("every subcommand's --help has an Example section with a command line (issue 27)", async () => {
  for (const name of Object.keys(COMMANDS)) {
    const r = await runCli([name, "--help"]);
    assert.equal(r.code, 0, name);
    assert.match(r.stdout, /^Examples?\b/m, `${name} --help has no Example section`);
    const lines = exampleLines(r.stdout);
    assert.ok(lines.some((l) => /(^|\| )deno task (oracle|verify|fixtures) /.test(l)), `${name}: ${lines.join(" / ")}`);
  }
});

Deno.test("the help's examples run as printed", async () => {
  // Every example that names only files of the repository and its own outputs (no quotes, pipes or placeholders), as
  // a user types it in the repository: a child process in a scratch directory that sees the repository's fixtures/,
  // so the outputs land there. `deno task oracle` is `deno run -A cli.ts` (deno.json).
  await withTempDir(async (dir) => {
    await Deno.symlink(`${REPO}/fixtures`, `${dir}/fixtures`);
    const ran: string[] = [];
    for (const help of [...Object.keys(COMMANDS).map((n) => [n, "--help"]), ["run", "bf16_gemm_nt", "--help"]]) {
      for (const line of exampleLines((await runCli(help)).stdout)) {
        if (!line.startsWith("deno task oracle ") || /['"|$<>]|IN\.safetensors/.test(line)) continue;
        const args = line.split(/ +/).slice(3);
        // Under `deno task test` INIT_CWD names the repository: paths would resolve there (cli/paths.ts).
        const out = await runCliProcess(args, { cwd: dir, env: { INIT_CWD: dir } });
        assert.equal(out.code, 0, `${line}\n${out.stderr}`);
        ran.push(args[0]);
      }
    }
    for (const name of ["cast", "quantize", "run", "identify", "compare"]) {
      assert.ok(ran.includes(name), `no ${name} example ran`);
    }
  });
});

Deno.test("oracle run OP --help lists the op's tensors with dtype and shape, its outputs and its scalars", async (t) => {
  await t.step("fp8_gemm_nt", async () => {
    const r = await runCli(["run", "fp8_gemm_nt", "--help"]);
    assert.equal(r.code, 0);
    assert.match(r.stdout, /models sm90_1d2d \(default\), sm90_1d1d/);
    assert.match(r.stdout, /^ {2}a +e4m3 +\[16, 256\]$/m);
    assert.match(r.stdout, /^ {2}sfa +f32 +\[16, 2\]$/m);
    assert.match(r.stdout, /^ {2}sfb +f32 +\[1, 2\]$/m);
    assert.match(r.stdout, /^ {2}c +- +- +optional: not given in this case$/m);
    assert.match(r.stdout, /Outputs:\n {2}d +bf16 +\[16, 128\]/);
    assert.match(r.stdout, /^ {2}--recipe-a +\[gran_mn, gran_k\] for A/m);
  });

  await t.step("every op: each tensor, output and scalar named, and an example on a stored case", async () => {
    for (const name of runOpNames()) {
      const op = runOp(name)!;
      const r = await runCli(["run", name, "--help"]);
      assert.equal(r.code, 0, name);
      for (const n of [...op.inputs, ...op.outputs]) {
        assert.match(r.stdout, new RegExp(`^  ${n} `, "m"), `${name}: ${n}`);
      }
      for (const k of Object.keys(op.scalars)) {
        assert.match(r.stdout, new RegExp(`^  --${k.replaceAll("_", "-")} `, "m"), `${name}: ${k}`);
      }
      const file = /^ {2}deno task oracle run \S+(?: --model \S+)? (fixtures\/\S+) out\.safetensors$/m.exec(r.stdout);
      assert.ok(file, `${name}: no example on a golden case`);
      await Deno.stat(`${REPO}/${file[1]}`);
    }
  });
});
