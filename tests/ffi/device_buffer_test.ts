import assert from "node:assert/strict";
import { DeviceBuffer, NativeError, openBackend } from "../../ffi/mod.ts";

function nativeCode(code: string, pattern: RegExp) {
  return (e: unknown) => e instanceof NativeError && e.code === code && pattern.test(e.message);
}

Deno.test("DeviceBuffer", async (t) => {
  using be = await openBackend("cpu");
  const lib = be.library;

  await t.step("round-trips bytes through copyIn/copyOut", () => {
    using buf = be.alloc(16);
    buf.copyIn(new Float32Array([1, 2, 3, 4]));
    const back = new Float32Array(4);
    buf.copyOut(back);
    assert.deepEqual([...back], [1, 2, 3, 4]);
    const part = new Float32Array(2);
    buf.copyOut(part, 8);
    assert.deepEqual([...part], [3, 4]);
  });

  await t.step("starts zero-filled", () => {
    using buf = be.alloc(8);
    const back = new Uint8Array(8).fill(9);
    buf.copyOut(back);
    assert.deepEqual([...back], [0, 0, 0, 0, 0, 0, 0, 0]);
  });

  await t.step("rejects zero, negative, fractional and unsafe sizes with RangeError", () => {
    for (const n of [0, -1, 1.5, 2 ** 53]) assert.throws(() => DeviceBuffer.alloc(lib, n), RangeError, String(n));
  });

  await t.step("reports an impossible native allocation as GO_ERR_OUT_OF_MEMORY", () => {
    assert.throws(() => DeviceBuffer.alloc(lib, 2 ** 52), nativeCode("GO_ERR_OUT_OF_MEMORY", /beyond any host memory/));
  });

  await t.step("rejects copies beyond the buffer before the native call", () => {
    using buf = be.alloc(8);
    assert.throws(() => buf.copyIn(new Uint8Array(9)), RangeError);
    assert.throws(() => buf.copyOut(new Uint8Array(4), 6), RangeError);
    assert.throws(() => buf.copyIn(new Uint8Array(1), -1), RangeError);
  });

  await t.step("native copies are bounds-checked against the allocation registry", () => {
    using buf = be.alloc(8);
    const p = Deno.UnsafePointer.create(buf.address(4));
    assert.throws(
      () => lib.check(lib.symbols.go_copy_in(p, new Uint8Array(8), 8n), "go_copy_in"),
      nativeCode("GO_ERR_OUT_OF_BOUNDS", /8 bytes at offset 4 exceed the allocation of 8 bytes/),
    );
    const stray = Deno.UnsafePointer.create(0x1000n);
    assert.throws(
      () => lib.check(lib.symbols.go_copy_out(new Uint8Array(4), stray, 4n), "go_copy_out"),
      nativeCode("GO_ERR_OUT_OF_BOUNDS", /not inside any live allocation/),
    );
  });

  await t.step("native calls reject null pointers", () => {
    assert.throws(
      () => lib.check(lib.symbols.go_copy_in(null, new Uint8Array(4), 4n), "go_copy_in"),
      nativeCode("GO_ERR_INVALID_ARGUMENT", /null pointer/),
    );
    using buf = be.alloc(4);
    const p = Deno.UnsafePointer.create(buf.address());
    assert.throws(
      () => lib.check(lib.symbols.go_copy_in(p, null, 4n), "go_copy_in"),
      nativeCode("GO_ERR_INVALID_ARGUMENT", /host source is a null pointer/),
    );
    assert.throws(
      () => lib.check(lib.symbols.go_alloc(8n, null), "go_alloc"),
      nativeCode("GO_ERR_INVALID_ARGUMENT", /out is a null pointer/),
    );
  });

  await t.step("go_free rejects a pointer it did not allocate, and a double free", () => {
    const buf = be.alloc(4);
    const p = Deno.UnsafePointer.create(buf.address());
    buf.free();
    assert.throws(
      () => lib.check(lib.symbols.go_free(p), "go_free"),
      nativeCode("GO_ERR_INVALID_ARGUMENT", /not a live allocation/),
    );
    buf.free(); // idempotent on the TypeScript side
    assert.throws(() => buf.copyIn(new Uint8Array(1)), ReferenceError);
  });

  await t.step("reports one device and refuses another", () => {
    const n = new Int32Array(1);
    lib.check(lib.symbols.go_device_count(n), "go_device_count");
    assert.equal(n[0], 1);
    assert.throws(
      () => lib.check(lib.symbols.go_set_device(3), "go_set_device"),
      nativeCode("GO_ERR_INVALID_ARGUMENT", /device 3/),
    );
  });
});
