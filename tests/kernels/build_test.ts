import assert from "node:assert/strict";
import { buildBackend, BuildError, CompilerNotFoundError } from "../../kernels/build.ts";

Deno.test("buildBackend()", async (t) => {
  await t.step("builds the CPU backend once and then serves it from the cache", async () => {
    const first = await buildBackend("cpu");
    const second = await buildBackend("cpu");
    assert.equal(second.path, first.path);
    assert.equal(second.cached, true);
    assert.match(second.path, /\/\.cache\/kernels\/cpu-[0-9a-f]{24}\/libgemm_oracle_cpu\.so$/);
    assert.ok((await Deno.stat(second.path)).isFile);
  });

  const tmp = await Deno.makeTempDir({ prefix: "go_build_" });
  try {
    await t.step("keys the cache by the source text", async () => {
      const src = `${tmp}/src`;
      await Deno.mkdir(src);
      await Deno.writeTextFile(`${src}/x.cpp`, 'extern "C" int go_x() { return 1; }\n');
      const a = await buildBackend("cpu", { sourceDir: src, cacheDir: `${tmp}/cache` });
      await Deno.writeTextFile(`${src}/x.cpp`, 'extern "C" int go_x() { return 2; }\n');
      const b = await buildBackend("cpu", { sourceDir: src, cacheDir: `${tmp}/cache` });
      assert.equal(a.cached, false);
      assert.equal(b.cached, false);
      assert.notEqual(a.path, b.path);
    });

    await t.step("throws a BuildError carrying the compiler's message", async () => {
      const src = `${tmp}/broken`;
      await Deno.mkdir(src);
      await Deno.writeTextFile(`${src}/bad.cpp`, "int f() { return undeclared_name; }\n");
      await assert.rejects(
        () => buildBackend("cpu", { sourceDir: src, cacheDir: `${tmp}/cache` }),
        (e: unknown) => e instanceof BuildError && /undeclared_name/.test(e.stderr) && /g\+\+ failed/.test(e.message),
      );
    });

    await t.step("reports a missing compiler (e.g. nvcc not found)", async () => {
      await assert.rejects(
        () =>
          buildBackend("cuda", { compiler: "nvcc-not-installed", sourceDir: `${tmp}/src`, cacheDir: `${tmp}/cache` }),
        (e: unknown) => e instanceof CompilerNotFoundError && /nvcc-not-installed not found/.test(e.message),
      );
    });

    await t.step("rejects an unknown backend name and an empty source directory", async () => {
      // deno-lint-ignore no-explicit-any
      await assert.rejects(() => buildBackend("rocm" as any), TypeError);
      await Deno.mkdir(`${tmp}/empty`);
      await assert.rejects(() => buildBackend("cpu", { sourceDir: `${tmp}/empty` }), /no cpu sources/);
    });
  } finally {
    await Deno.remove(tmp, { recursive: true });
  }
});
