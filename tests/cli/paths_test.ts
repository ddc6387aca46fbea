import assert from "node:assert/strict";
import { Tensor } from "../../reference/tensor/mod.ts";
import { readSafetensors, writeSafetensors } from "../../io/mod.ts";
import { runCli, runCliProcess, withTempDir } from "./_run.ts";

const REPO = new URL("../../", import.meta.url).pathname.replace(/\/$/, "");
const FIXTURE = `${REPO}/fixtures/fp8_gemm_nt/fp8_gemm_nt_m16_n128_k256_fp32.safetensors`;

/** `oracle args...` as `deno task --config REPO/deno.json oracle` starts it: cwd the repository, INIT_CWD the caller's. */
const fromElsewhere = (caller: string, args: string[]) => runCliProcess(args, { cwd: REPO, env: { INIT_CWD: caller } });

async function exists(path: string): Promise<boolean> {
  return await Deno.stat(path).then(() => true, () => false);
}

Deno.test("relative paths resolve against INIT_CWD, the caller's directory under deno task (issue 27)", async (t) => {
  await t.step("a child process run from the repository reads and writes in the caller's directory", async () => {
    await withTempDir(async (dir) => {
      await writeSafetensors(`${dir}/x.safetensors`, { a: Tensor.zeros("bf16", [4, 128]) });
      await Deno.mkdir(`${dir}/sub`);
      const cast = await fromElsewhere(dir, ["cast", "--to", "f32", "x.safetensors", "sub/f.safetensors"]);
      assert.equal(cast.code, 0, cast.stderr);
      assert.equal((await readSafetensors(`${dir}/sub/f.safetensors`)).tensors.get("a")!.dtype, "f32");
      const q = await fromElsewhere(`${dir}/sub`, [
        "quantize",
        "--recipe",
        "per_token_cast_to_fp8",
        "../x.safetensors",
        "q.st",
      ]);
      assert.equal(q.code, 0, q.stderr);
      assert.ok(await exists(`${dir}/sub/q.st`));
      // fixtures --dir names a folder of the caller's
      const fx = await fromElsewhere(dir, ["fixtures", "--check", "--dir", "nothere"]);
      assert.notEqual(fx.code, 0);
      assert.match(fx.stderr, new RegExp(`'${dir}/nothere'`));
      for (const stray of ["sub", "x.safetensors", "q.st"]) assert.ok(!(await exists(`${REPO}/${stray}`)), stray);
    });
  });

  await t.step("every command's user paths: run, identify --json, verify --json / --baseline", async () => {
    await withTempDir(async (dir) => {
      await Deno.copyFile(FIXTURE, `${dir}/in.safetensors`);
      const env = { INIT_CWD: dir };
      const run = await runCli(["run", "fp8_gemm_nt", "in.safetensors", "out.safetensors"], env);
      assert.equal(run.code, 0, run.stderr);
      assert.ok(await exists(`${dir}/out.safetensors`));
      const identify = await runCli(
        ["identify", "fp8_gemm_nt", "in.safetensors", "out.safetensors", "--json", "id.json", "--max-split-k", "1"],
        env,
      );
      assert.equal(identify.code, 0, identify.stderr);
      assert.match(await Deno.readTextFile(`${dir}/id.json`), /"matches"/);
      const verify = ["verify", "--backend", "reference", "--ops", "fp8_gemm_nt", "--suite", "fixtures"];
      const first = await runCli([...verify, "--json", "r.json", "--junit", "r.xml", "--html", "r.html"], env);
      assert.equal(first.code, 0, first.stderr);
      for (const f of ["r.json", "r.xml", "r.html"]) assert.ok(await exists(`${dir}/${f}`), f);
      const gated = await runCli([...verify, "--baseline", "r.json"], env);
      assert.equal(gated.code, 0, gated.stderr);
    });
  });

  await t.step("oracle serve resolves the paths of its requests the same way", async () => {
    await withTempDir(async (dir) => {
      await Deno.copyFile(FIXTURE, `${dir}/in.safetensors`);
      const child = new Deno.Command(Deno.execPath(), {
        args: ["run", "-A", `${REPO}/cli.ts`, "serve"],
        cwd: REPO,
        env: { INIT_CWD: dir },
        stdin: "piped",
        stdout: "piped",
        stderr: "null",
      }).spawn();
      const request = { id: 1, cmd: "run", op: "fp8_gemm_nt", inputs: "in.safetensors", outputs: "o.st" };
      const writer = child.stdin.getWriter();
      await writer.write(new TextEncoder().encode(JSON.stringify(request) + "\n"));
      await writer.close();
      const out = await child.output();
      const answer = JSON.parse(new TextDecoder().decode(out.stdout).trim().split("\n")[1]);
      assert.equal(answer.status, "ok", answer.message);
      assert.ok(await exists(`${dir}/o.st`));
      assert.ok(!(await exists(`${REPO}/o.st`)));
    });
  });

  await t.step("absolute paths, and every path without INIT_CWD, are left as they are", async () => {
    await withTempDir(async (dir) => {
      await Deno.copyFile(FIXTURE, `${dir}/in.safetensors`);
      const r = await runCli(["run", "fp8_gemm_nt", `${dir}/in.safetensors`, `${dir}/o.st`], { INIT_CWD: "/nowhere" });
      assert.equal(r.code, 0, r.stderr);
      const missing = await runCli(["run", "fp8_gemm_nt", "in.safetensors", `${dir}/o.st`]);
      assert.equal(missing.code, 2);
      assert.match(missing.stderr, /cannot access a file/);
    });
  });
});
