// bench/ab_variants.ts writes the kernel variants kept as patches (bench/variants/) as copies of kernels/ for the GPU
// round's ab step. A kept variant must still apply to the tree and compile clean, or the round that finally gets a GPU
// finds it rotted; the compile checks run wherever nvcc exists.
import assert from "node:assert/strict";
import { variantNames, VARIANTS_DIR, writeVariant } from "../../bench/ab_variants.ts";
import { compileFastKernel, jitGridParams, SMALL_M_KERNEL } from "../kernels/_fast_kernel_source.ts";
import { nvccTest } from "../kernels/_nvcc.ts";
import { runBench } from "./_run.ts";

const KERNELS = new URL("../../kernels/", import.meta.url).pathname;

/** Names of the files under `dir` whose bytes differ from kernels/'s (every file of `dir` has one there). */
async function changedFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const sub of ["", "cuda/"]) {
    for (const e of Deno.readDirSync(`${dir}/${sub}`)) {
      if (!e.isFile) continue;
      const [a, b] = await Promise.all([
        Deno.readFile(`${dir}/${sub}${e.name}`),
        Deno.readFile(`${KERNELS}${sub}${e.name}`),
      ]);
      if (a.length !== b.length || a.some((x, i) => x !== b[i])) out.push(`${sub}${e.name}`);
    }
  }
  return out;
}

Deno.test("every kept variant applies to the tree's kernels/ and changes only CUDA sources", async () => {
  const names = variantNames();
  assert.ok(names.length > 0, "bench/variants/ holds no patch");
  assert.equal(jitGridParams(`${KERNELS}cuda`), false);
  const into = await Deno.makeTempDir({ prefix: "go-variants-" });
  try {
    for (const name of names) {
      const r = await writeVariant(`${VARIANTS_DIR}/${name}.patch`, into);
      assert.ok("kernels" in r, `${name}: ${"error" in r ? r.error : ""}`);
      // The tree passes FastParams as a plain parameter; a variant that calls device code out of line with the
      // block's address passes it __grid_constant__, and the compile below follows its JIT text.
      assert.equal(
        jitGridParams(`${r.kernels}/cuda`),
        /__grid_constant__ go_sm90::FastParams/.test(
          await Deno.readTextFile(`${VARIANTS_DIR}/${name}.patch`),
        ),
        name,
      );
      const changed = await changedFiles(r.kernels);
      assert.ok(changed.length > 0, `${name} leaves kernels/ as it is`);
      for (const f of changed) assert.match(f, /^cuda\//, `${name} changes ${f}`);
    }
  } finally {
    await Deno.remove(into, { recursive: true });
  }
});

Deno.test("a patch that does not apply is refused with git's reason, and no copy is left", async () => {
  const into = await Deno.makeTempDir({ prefix: "go-variants-" });
  try {
    const patch = `${into}/stale.patch`;
    await Deno.writeTextFile(
      patch,
      "--- a/kernels/cuda/sm90_fp8_fast_kernel.cuh\n+++ b/kernels/cuda/sm90_fp8_fast_kernel.cuh\n" +
        "@@ -1,1 +1,1 @@\n-this line is not in the file\n+nor is this one\n",
    );
    const r = await writeVariant(patch, into);
    assert.ok("error" in r && /patch does not apply|patch failed/.test(r.error), JSON.stringify(r));
    await assert.rejects(Deno.stat(`${into}/stale`));
  } finally {
    await Deno.remove(into, { recursive: true });
  }
});

Deno.test("the command refuses a variant that is not kept, with status 2, naming the patch it looked for", async () => {
  const into = await Deno.makeTempDir({ prefix: "go-variants-" });
  try {
    const r = await runBench("ab_variants.ts", "no-such-variant", "--into", into);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /bench\/variants\/no-such-variant\.patch: no such variant \(kept: /);
  } finally {
    await Deno.remove(into, { recursive: true });
  }
});

await nvccTest(
  "every kept variant compiles the 128 x 32 ktma=2 kernel with no spills and no stack frame, its parameter block passed as its JIT text passes it",
  "go-variants-",
  async (_t, dir) => {
    const into = `${dir}/ab`;
    for (const name of variantNames()) {
      const r = await writeVariant(`${VARIANTS_DIR}/${name}.patch`, into);
      assert.ok("kernels" in r);
      const c = await compileFastKernel(SMALL_M_KERNEL, `${dir}/${name}.cubin`, `${r.kernels}/cuda`);
      assert.ok(c.ok, `${name}: ${c.log}`);
      assert.equal(c.spillStores, 0, `${name}: ${c.log}`);
      assert.doesNotMatch(c.log, /[1-9]\d* bytes stack frame/, name);
    }
  },
);
