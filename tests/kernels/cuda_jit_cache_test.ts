// The CUDA backend's JIT (kernels/cuda/jit.h) compiles a kernel text into its on-disk cubin cache once and finds it
// afterwards, and names what went wrong when the text does not compile, nvcc is missing or the JIT is off. Its
// compile half needs nvcc, not a GPU (go_ext_jit_compile), so this runs in CI; loading and launching the cubins is
// checked on an H200 by tests/gpu/run.sh.
import assert from "node:assert/strict";
import { hasNvcc } from "./_nvcc.ts";
import { cString, openCudaExt } from "./_cuda_ext.ts";
import { fastKernelSource } from "./_fast_kernel_source.ts";

const GO_ERR_INVALID_ARGUMENT = 1, GO_ERR_NOT_AVAILABLE = 6;

const FAST_KERNEL = fastKernelSource({ bn: 64, stages: 8, n: 4096, k: 7168 });

Deno.test({
  name: "CUDA backend JIT cache",
  ignore: !(await hasNvcc()),
  async fn(t) {
    const { lib, lastError } = await openCudaExt({
      go_ext_jit_compile: { parameters: ["buffer", "buffer", "i64", "buffer"], result: "i32" },
    });
    const cache = await Deno.makeTempDir({ prefix: "go-jit-cache-" });
    const saved = ["GO_CUDA_JIT_CACHE", "GO_CUDA_JIT", "GO_NVCC"].map((k) => [k, Deno.env.get(k)] as const);
    Deno.env.set("GO_CUDA_JIT_CACHE", cache);
    const compile = (source: string) => {
      const out = new Uint8Array(4096), compiled = new Int32Array(1);
      const status = lib.symbols.go_ext_jit_compile(new TextEncoder().encode(source + "\0"), out, 4096n, compiled);
      return { status, message: lastError(status), cubin: cString(out), compiled: compiled[0] };
    };
    try {
      await t.step("compiles a kernel text once into the cache and finds it there afterwards", () => {
        const first = compile(FAST_KERNEL);
        assert.equal(first.status, 0, first.message);
        assert.equal(first.compiled, 1);
        assert.ok(first.cubin.startsWith(cache + "/") && first.cubin.endsWith(".cubin"), first.cubin);
        assert.ok(Deno.statSync(first.cubin).size > 1000);
        const again = compile(FAST_KERNEL);
        assert.equal(again.status, 0, again.message);
        assert.equal(again.compiled, 0, "the second request is a cache hit");
        assert.equal(again.cubin, first.cubin);
        const other = compile(FAST_KERNEL.replace("4096, 7168", "4096, 2048"));
        assert.equal(other.compiled, 1, "another shape class is another kernel");
        assert.notEqual(other.cubin, first.cubin);
      });
      await t.step("a text that does not compile is an error carrying nvcc's message", () => {
        const r = compile(FAST_KERNEL.replace("FastConfig<128, 64,", "FastConfig<128, 63,"));
        assert.equal(r.status, GO_ERR_INVALID_ARGUMENT);
        assert.match(r.message, /nvcc failed \(exit \d+\)/);
        assert.match(r.message, /BLOCK_N must be a multiple of 8/);
      });
      await t.step("GO_CUDA_JIT=0 and a missing nvcc are 'not available', with the reason", () => {
        Deno.env.set("GO_CUDA_JIT", "0");
        let r = compile(FAST_KERNEL);
        assert.equal(r.status, GO_ERR_NOT_AVAILABLE);
        assert.match(r.message, /JIT off \(GO_CUDA_JIT=0\)/);
        Deno.env.delete("GO_CUDA_JIT");
        Deno.env.set("GO_NVCC", "/nonexistent/nvcc");
        r = compile(FAST_KERNEL);
        assert.equal(r.status, GO_ERR_NOT_AVAILABLE);
        assert.match(r.message, /nvcc not found/);
      });
    } finally {
      for (const [k, v] of saved) v === undefined ? Deno.env.delete(k) : Deno.env.set(k, v);
      lib.close();
      await Deno.remove(cache, { recursive: true });
    }
  },
});
