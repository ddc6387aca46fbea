// The GPU machine's test programs (tests/gpu/run.sh builds them there, where a build error costs device time) build
// here too: check.cpp with g++, bench.cpp and pdl_check.cu with nvcc for sm_90a, with run.sh's own command lines.
import assert from "node:assert/strict";
import { nvccTest, runNvcc } from "../kernels/_nvcc.ts";

const here = new URL(".", import.meta.url).pathname;

await nvccTest("the GPU test programs build with run.sh's command lines", "go-gpu-programs-", async (t, dir) => {
  const runSh = await Deno.readTextFile(`${here}run.sh`);
  for (const program of ["bench.cpp", "pdl_check.cu"]) {
    await t.step(`${program} (nvcc -x cu, sm_90a)`, async () => {
      assert.match(
        runSh,
        new RegExp(
          `nvcc -x cu -gencode=arch=compute_90a,code=sm_90a -O2 -std=c\\+\\+17 -o "\\$B/\\w+" tests/gpu/${
            program.replace(".", "\\.")
          } -ldl`,
        ),
      );
      const r = await runNvcc([
        "-x",
        "cu",
        "-gencode=arch=compute_90a,code=sm_90a",
        "-O2",
        "-std=c++17",
        "-o",
        `${dir}/${program}.out`,
        `${here}${program}`,
        "-ldl",
      ]);
      assert.ok(r.ok, r.log);
    });
  }
  await t.step("check.cpp (g++, no CUDA)", async () => {
    assert.match(runSh, /g\+\+ -O2 -std=c\+\+17 -ffp-contract=off -o "\$B\/check" tests\/gpu\/check\.cpp -ldl/);
    const out = await new Deno.Command("g++", {
      args: ["-O2", "-std=c++17", "-ffp-contract=off", "-o", `${dir}/check`, `${here}check.cpp`, "-ldl"],
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.ok(out.success, new TextDecoder().decode(out.stderr));
  });
});
