// The GPU machine's test programs (tests/gpu/run.sh builds them there, where a build error costs device time) build
// here too, with the command lines run.sh itself uses: check.cpp with g++, bench.cpp and pdl_check.cu with nvcc for
// sm_90a.
import assert from "node:assert/strict";
import { nvccTest } from "../kernels/_nvcc.ts";

const root = new URL("../../", import.meta.url).pathname;

/** run.sh's build command for `program`: the `g++` or `nvcc` command that ends in `tests/gpu/<program> -ldl`. */
function buildCommand(runSh: string, program: string): string[] {
  const m = new RegExp(`((?:g\\+\\+|nvcc) [^&()]*? tests/gpu/${program.replace(".", "\\.")} -ldl)`).exec(runSh);
  assert.ok(m, `run.sh has no build command for tests/gpu/${program}`);
  return m[1].split(/\s+/);
}

await nvccTest("the GPU test programs build with run.sh's command lines", "go-gpu-programs-", async (t, dir) => {
  const runSh = await Deno.readTextFile(`${root}tests/gpu/run.sh`);
  for (const program of ["check.cpp", "bench.cpp", "pdl_check.cu"]) {
    await t.step(program, async () => {
      const [cmd, ...args] = buildCommand(runSh, program);
      if (program !== "check.cpp") assert.ok(args.includes("-gencode=arch=compute_90a,code=sm_90a"), args.join(" "));
      // run.sh writes into its build directory "$B"; here, a scratch directory.
      const out = await new Deno.Command(cmd, {
        args: args.map((a) => a.replace('"$B', dir).replace(/"$/, "")),
        cwd: root,
        stdout: "piped",
        stderr: "piped",
      }).output();
      assert.ok(out.success, `${cmd} ${args.join(" ")}\n${new TextDecoder().decode(out.stderr)}`);
      assert.ok((await Deno.stat(`${dir}/${program.replace(/\.\w+$/, "")}`)).isFile);
    });
  }
});
