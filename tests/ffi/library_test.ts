import assert from "node:assert/strict";
import { buildBackend } from "../../kernels/build.ts";
import { ABI_VERSION, LibraryLoadError, NativeError, NativeLibrary, openBackend } from "../../ffi/mod.ts";
import { fp8Gemm } from "../../ffi/gemm_ops.ts";
import { Tensor } from "../../reference/tensor/tensor.ts";
import { buildFake } from "./_fake_library.ts";

Deno.test("NativeLibrary.open()", async (t) => {
  const dir = await Deno.makeTempDir({ prefix: "go_fake_" });
  try {
    await t.step("loads the CPU backend and reads its info", async () => {
      using lib = NativeLibrary.open((await buildBackend("cpu")).path);
      assert.equal(lib.info.name, "cpu");
      assert.equal(lib.info.abi, ABI_VERSION);
      assert.equal(lib.info.models.fp8_gemm, "sm90_1d2d");
      assert.equal(lib.info.models.bf16_gemm, "bf16");
    });

    await t.step("rejects a missing library with a LibraryLoadError naming the path", () => {
      assert.throws(
        () => NativeLibrary.open(`${dir}/no_such_lib.so`),
        (e: unknown) =>
          e instanceof LibraryLoadError && e.message.includes("no_such_lib.so") && /not found/.test(e.message),
      );
    });

    await t.step("rejects a relative path with a TypeError", () => {
      assert.throws(() => NativeLibrary.open("libgemm_oracle_cpu.so"), TypeError);
    });

    await t.step("rejects a library of another ABI version", async () => {
      const path = await buildFake(dir, "abi2", 2);
      assert.throws(
        () => NativeLibrary.open(path),
        (e: unknown) =>
          e instanceof LibraryLoadError && /ABI version 2/.test(e.message) && /needs version 1/.test(e.message),
      );
    });

    await t.step("rejects a library missing a required symbol, naming it", async () => {
      const path = await buildFake(dir, "noalloc", 1, ["go_alloc"]);
      assert.throws(
        () => NativeLibrary.open(path),
        (e: unknown) => e instanceof LibraryLoadError && /required symbol go_alloc/.test(e.message),
      );
    });

    await t.step("loads a library without operations; an absent operation is a clear TypeError", async () => {
      const path = await buildFake(dir, "noops", 1);
      using lib = NativeLibrary.open(path);
      assert.equal(lib.info.name, "fake");
      assert.equal(lib.symbols.go_fp8_gemm, null);
      const e4 = Tensor.zeros("e4m3", [1, 1]);
      assert.throws(
        () =>
          fp8Gemm(lib, {
            a: e4,
            sfa: Tensor.zeros("f32", [1, 1]),
            b: e4,
            sfb: Tensor.zeros("f32", [1, 1]),
            d: Tensor.zeros("bf16", [1, 1]),
          }),
        (e: unknown) => e instanceof TypeError && /does not implement go_fp8_gemm/.test(e.message),
      );
    });

    await t.step("turns a native status into a NativeError carrying go_last_error", async () => {
      const path = await buildFake(dir, "nomem", 1);
      using lib = NativeLibrary.open(path);
      assert.throws(
        () => lib.check(lib.symbols.go_alloc(16n, new BigUint64Array(1)), "go_alloc"),
        (e: unknown) => e instanceof NativeError && e.code === "GO_ERR_OUT_OF_MEMORY" && /fake/.test(e.message),
      );
    });

    await t.step("opens any library implementing the header by path through openBackend", async () => {
      const path = await buildFake(dir, "bypath", 1);
      using be = await openBackend(path);
      assert.equal(be.name, "fake");
    });

    await t.step("closes idempotently and refuses calls after close", async () => {
      const lib = NativeLibrary.open((await buildBackend("cpu")).path);
      lib.close();
      lib.close();
      assert.throws(() => lib.assertOpen(), ReferenceError);
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("openBackend()", async (t) => {
  await t.step("opens the CPU backend by name", async () => {
    using be = await openBackend("cpu");
    assert.equal(be.name, "cpu");
    assert.equal(be.info.device, "cpu");
  });

  await t.step("rejects an empty name with a TypeError", async () => {
    await assert.rejects(() => openBackend(""), TypeError);
  });

  await t.step(
    "refuses synchronize, setNumThreads and lastError after close instead of calling unloaded code",
    async () => {
      const be = await openBackend("cpu");
      be.close();
      assert.throws(() => be.synchronize(), ReferenceError);
      assert.throws(() => be.setNumThreads(1), ReferenceError);
      assert.throws(() => be.library.lastError(), ReferenceError);
      assert.throws(() => be.library.check(1, "go_fp8_gemm"), ReferenceError);
    },
  );
});
