// The CUDA backend compiles for sm_90a wherever nvcc exists (CI has nvcc 13.0 and no GPU), and loading it where no
// GPU or driver is present is a clear "CUDA not available" error, never a crash.
import assert from "node:assert/strict";
import { buildBackend } from "../../kernels/build.ts";
import { gpuPresent, openBackend } from "../../ffi/backend.ts";
import { BackendNotAvailableError } from "../../ffi/errors.ts";

async function hasCommand(cmd: string): Promise<boolean> {
  try {
    return (await new Deno.Command(cmd, { args: ["--version"], stdout: "null", stderr: "null" }).output()).success;
  } catch {
    return false;
  }
}

const nvcc = await hasCommand("nvcc");

Deno.test({
  name: 'buildBackend("cuda")',
  ignore: !nvcc,
  async fn(t) {
    await t.step(
      "compiles every kernels/cuda source for sm_90a into the cache (nvcc -gencode=arch=compute_90a,code=sm_90a)",
      async () => {
        const r = await buildBackend("cuda");
        assert.match(r.path, /\.cache\/kernels\/cuda-[0-9a-f]+\/libgemm_oracle_cuda\.so$/);
        assert.ok(Deno.statSync(r.path).size > 0);
        const again = await buildBackend("cuda");
        assert.equal(again.cached, true, "a second build with the same sources is a cache hit");
        assert.equal(again.path, r.path);
      },
    );
  },
});

Deno.test({
  name: 'openBackend("cuda") without a GPU',
  ignore: !nvcc || gpuPresent(),
  async fn(t) {
    await t.step("is a BackendNotAvailableError saying CUDA is not available", async () => {
      await assert.rejects(() => openBackend("cuda"), (e: unknown) => {
        assert.ok(e instanceof BackendNotAvailableError, String(e));
        assert.match((e as Error).message, /CUDA not available/);
        return true;
      });
    });
  },
});
