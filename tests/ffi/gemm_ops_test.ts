// Misuse of the operation wrappers and of the raw native entries: every mistake is a clear error, never a crash.
import assert from "node:assert/strict";
import { type DeviceTensor, DTYPE_CODES, NativeError, openBackend } from "../../ffi/mod.ts";
import { Tensor } from "../../reference/tensor/tensor.ts";

/** A raw go_tensor descriptor that skips every TypeScript check (to reach the native validation). */
function rawDesc(ptr: bigint, dtype: number, shape: number[], strides: number[]): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(80), v = new DataView(out.buffer);
  v.setBigUint64(0, ptr, true);
  v.setInt32(8, dtype, true);
  v.setInt32(12, shape.length, true);
  shape.forEach((s, i) => v.setBigInt64(16 + 8 * i, BigInt(s), true));
  strides.forEach((s, i) => v.setBigInt64(48 + 8 * i, BigInt(s), true));
  return out;
}

function native(code: string, pattern: RegExp) {
  return (e: unknown) => e instanceof NativeError && e.code === code && pattern.test(e.message);
}

const e4 = (shape: number[]) => Tensor.zeros("e4m3", shape);
const f32 = (shape: number[]) => Tensor.zeros("f32", shape);

Deno.test("fp8Gemm() argument checks", async (t) => {
  using be = await openBackend("cpu");
  const lib = be.library;
  const ok = { a: e4([4, 128]), sfa: f32([4, 1]), b: e4([8, 128]), sfb: f32([1, 1]), d: Tensor.zeros("bf16", [4, 8]) };

  await t.step("accepts a well-formed call", () => {
    be.fp8Gemm(ok);
  });

  await t.step("rejects a wrong dtype with a TypeError naming the argument", () => {
    assert.throws(
      () => be.fp8Gemm({ ...ok, a: Tensor.zeros("bf16", [4, 128]) }),
      /a: dtype "bf16" where "e4m3" or "e5m2"/,
    );
    assert.throws(() => be.fp8Gemm({ ...ok, sfa: Tensor.zeros("i32", [4, 1]) }), TypeError);
    assert.throws(() => be.fp8Gemm({ ...ok, d: Tensor.zeros("f16", [4, 8]) }), TypeError);
  });

  await t.step("rejects mismatched shapes and a C of another dtype", () => {
    assert.throws(() => be.fp8Gemm({ ...ok, b: e4([8, 64]) }), /b: shape \[8, 64\] where \[8, 128\]/);
    assert.throws(() => be.fp8Gemm({ ...ok, sfa: f32([4, 2]) }), /sfa: shape/);
    assert.throws(() => be.fp8Gemm({ ...ok, c: f32([4, 8]) }), /c: dtype "f32" differs from d's "bf16"/);
    assert.throws(() => be.fp8Gemm({ ...ok, a: e4([4, 128, 1]) }), /rank 3/);
  });

  await t.step("rejects bad recipes and unknown models with RangeError", () => {
    assert.throws(() => be.fp8Gemm({ ...ok, recipeA: [0, 128] }), RangeError);
    assert.throws(() => be.fp8Gemm({ ...ok, recipeB: [128, -1] }), RangeError);
    // deno-lint-ignore no-explicit-any
    assert.throws(() => be.fp8Gemm({ ...ok, model: "sm999" as any }), /Unknown model "sm999"/);
  });

  await t.step("reports a model the backend does not compute as GO_ERR_UNSUPPORTED", () => {
    assert.throws(() => be.fp8Gemm({ ...ok, model: "tf32" }), native("GO_ERR_UNSUPPORTED", /model tf32/));
    assert.throws(
      () => be.fp8Gemm({ ...ok, recipeA: [1, 64], sfa: f32([4, 2]), model: "sm90_1d2d" }),
      native("GO_ERR_INVALID_ARGUMENT", /gran_a_k and gran_b_k must be 128/),
    );
  });

  await t.step("rejects a short device buffer, negative sizes and misalignment before the native call", () => {
    using buf = be.alloc(256);
    const dev = (shape: number[], strides: number[], byteOffset = 0, dtype: "e4m3" | "f32" = "e4m3"): DeviceTensor => ({
      buffer: buf,
      byteOffset,
      dtype,
      shape,
      strides,
    });
    assert.throws(
      () => be.fp8Gemm({ ...ok, a: dev([4, 128], [128, 1]) }),
      /needs 512 bytes, the device buffer has 256/,
    );
    assert.throws(() => be.fp8Gemm({ ...ok, a: dev([-4, 128], [128, 1]) }), RangeError);
    assert.throws(() => be.fp8Gemm({ ...ok, sfa: dev([4, 1], [1, 1], 2, "f32") }), /not aligned to 4-byte elements/);
  });

  await t.step("rejects M·K beyond 2^31 on a small buffer (DeepGEMM's int32 overflow) in TypeScript", () => {
    using buf = be.alloc(1024);
    const big: DeviceTensor = { buffer: buf, byteOffset: 0, dtype: "e4m3", shape: [65536, 65536], strides: [65536, 1] };
    assert.throws(
      () =>
        be.fp8Gemm({
          a: big,
          sfa: f32([65536, 512]),
          b: e4([1, 65536]),
          sfb: f32([1, 512]),
          d: Tensor.zeros("bf16", [65536, 1]),
        }),
      /needs 4294967296 bytes, the device buffer has 1024/,
    );
  });

  // Raw native calls: the backend's own checks, for callers in other languages.
  using a = be.alloc(512), sfa = be.alloc(16), b = be.alloc(1024), sfb = be.alloc(4), d = be.alloc(64);
  const desc = {
    a: rawDesc(a.address(), DTYPE_CODES.e4m3!, [4, 128], [128, 1]),
    sfa: rawDesc(sfa.address(), DTYPE_CODES.f32!, [4, 1], [1, 1]),
    b: rawDesc(b.address(), DTYPE_CODES.e4m3!, [8, 128], [128, 1]),
    sfb: rawDesc(sfb.address(), DTYPE_CODES.f32!, [1, 1], [1, 1]),
    d: rawDesc(d.address(), DTYPE_CODES.bf16!, [4, 8], [8, 1]),
  };
  const call = (over: Partial<typeof desc>, model = -1) => {
    const x = { ...desc, ...over };
    lib.check(lib.symbols.go_fp8_gemm!(x.a, x.sfa, x.b, x.sfb, null, x.d, 1, 128, 128, 128, model), "go_fp8_gemm");
  };

  await t.step("native: a well-formed raw call succeeds", () => call({}));

  await t.step("native: M·K beyond 2^31 on a small allocation is GO_ERR_OUT_OF_BOUNDS naming the argument", () => {
    const huge = rawDesc(a.address(), DTYPE_CODES.e4m3!, [65536, 65536], [65536, 1]);
    assert.throws(
      () => call({ a: huge }),
      native("GO_ERR_OUT_OF_BOUNDS", /a: 4294967296 bytes at offset 0 exceed the allocation of 512 bytes/),
    );
    const bigK = rawDesc(a.address(), DTYPE_CODES.e4m3!, [4, 2 ** 31 + 128], [2 ** 31 + 128, 1]);
    assert.throws(
      () => call({ a: bigK, b: rawDesc(b.address(), DTYPE_CODES.e4m3!, [8, 2 ** 31 + 128], [2 ** 31 + 128, 1]) }),
      native("GO_ERR_OUT_OF_BOUNDS", /^go_fp8_gemm failed with GO_ERR_OUT_OF_BOUNDS: a: /),
    );
  });

  await t.step("native: a short buffer is GO_ERR_OUT_OF_BOUNDS", () => {
    const short = rawDesc(d.address(), DTYPE_CODES.bf16!, [4, 16], [16, 1]);
    assert.throws(
      () => call({ d: rawDesc(d.address(), DTYPE_CODES.f32!, [4, 8], [8, 1]) }),
      native("GO_ERR_OUT_OF_BOUNDS", /d: 128 bytes at offset 0 exceed the allocation of 64 bytes/),
    );
    assert.throws(() => call({ d: short }), native("GO_ERR_OUT_OF_BOUNDS", /d: 128 bytes at offset 0 exceed/));
    const wrongShape = rawDesc(d.address(), DTYPE_CODES.bf16!, [4, 4], [4, 1]);
    assert.throws(() => call({ d: wrongShape }), native("GO_ERR_INVALID_ARGUMENT", /d: shape \[4, 4\] where \[4, 8\]/));
  });

  await t.step("native: negative sizes, negative strides and bad ranks are GO_ERR_INVALID_ARGUMENT", () => {
    assert.throws(
      () => call({ a: rawDesc(a.address(), DTYPE_CODES.e4m3!, [-4, 128], [128, 1]) }),
      native("GO_ERR_INVALID_ARGUMENT", /a: negative size -4/),
    );
    assert.throws(
      () => call({ a: rawDesc(a.address(), DTYPE_CODES.e4m3!, [4, 128], [-128, 1]) }),
      native("GO_ERR_INVALID_ARGUMENT", /a: negative stride/),
    );
    assert.throws(
      () => call({ a: rawDesc(a.address(), DTYPE_CODES.e4m3!, [512], [1]) }),
      native("GO_ERR_INVALID_ARGUMENT", /a: 1 dimensions where 2/),
    );
    assert.throws(
      () => call({ a: rawDesc(a.address(), DTYPE_CODES.e4m3!, [4, 128], [2 ** 62, 1]) }),
      native("GO_ERR_INVALID_ARGUMENT", /extent overflows/),
    );
  });

  await t.step("native: a null data pointer or a null descriptor is GO_ERR_INVALID_ARGUMENT", () => {
    assert.throws(
      () => call({ a: rawDesc(0n, DTYPE_CODES.e4m3!, [4, 128], [128, 1]) }),
      native("GO_ERR_INVALID_ARGUMENT", /a: required tensor is missing/),
    );
    assert.throws(
      () =>
        lib.check(
          lib.symbols.go_fp8_gemm!(desc.a, null, desc.b, desc.sfb, null, desc.d, 1, 128, 128, 128, -1),
          "go_fp8_gemm",
        ),
      native("GO_ERR_INVALID_ARGUMENT", /sfa: required tensor is missing/),
    );
  });

  await t.step("native: a wrong dtype code, a misaligned pointer and a stray pointer are clear errors", () => {
    assert.throws(
      () => call({ a: rawDesc(a.address(), 42, [4, 128], [128, 1]) }),
      native("GO_ERR_INVALID_ARGUMENT", /a: dtype unknown \(42\)/),
    );
    assert.throws(
      () => call({ sfa: rawDesc(sfa.address() + 2n, DTYPE_CODES.f32!, [4, 1], [1, 1]) }),
      native("GO_ERR_INVALID_ARGUMENT", /sfa: data pointer is not aligned/),
    );
    assert.throws(
      () => call({ sfb: rawDesc(0x10n, DTYPE_CODES.f32!, [1, 1], [1, 1]) }),
      native("GO_ERR_OUT_OF_BOUNDS", /sfb: address .* not inside any live allocation/),
    );
  });

  await t.step("native: an output overlapping an input is GO_ERR_INVALID_ARGUMENT", () => {
    assert.throws(
      () => call({ d: rawDesc(a.address(), DTYPE_CODES.bf16!, [4, 8], [8, 1]) }),
      native("GO_ERR_INVALID_ARGUMENT", /d overlaps a/),
    );
  });

  await t.step("native: an unknown model value is GO_ERR_UNSUPPORTED", () => {
    assert.throws(() => call({}, 99), native("GO_ERR_UNSUPPORTED", /\(99\)/));
  });
});

Deno.test("kGroupedFp8Gemm() argument checks", async (t) => {
  using be = await openBackend("cpu");
  await t.step("checks numel(A) == M·ΣK in 64-bit arithmetic (ΣK·M beyond 2^31)", () => {
    const ks = [65536, 65536];
    assert.throws(
      () =>
        be.kGroupedFp8Gemm({
          a: e4([128]),
          sfa: f32([32768, 1024]),
          b: e4([128]),
          sfb: f32([1, 1024]),
          d: f32([2, 32768, 1]),
          ks: Tensor.from("i32", [2], Int32Array.from(ks)),
          ksHost: ks,
        }),
      /a: shape \[128\] where \[4294967296\]/,
    );
  });

  await t.step("rejects negative K values and a ksHost of the wrong length", () => {
    const base = {
      a: e4([0]),
      sfa: f32([1, 0]),
      b: e4([0]),
      sfb: f32([1, 0]),
      d: f32([1, 1, 1]),
      ks: Tensor.from("i32", [1], new Int32Array([0])),
    };
    assert.throws(() => be.kGroupedFp8Gemm({ ...base, ksHost: [-128] }), RangeError);
    assert.throws(() => be.kGroupedFp8Gemm({ ...base, ksHost: [0, 0] }), /ksHost: 2 values for 1 groups/);
  });

  await t.step("native: a negative ks value is GO_ERR_INVALID_ARGUMENT", () => {
    assert.throws(
      () =>
        be.kGroupedFp8Gemm({
          a: e4([0]),
          sfa: f32([1, 0]),
          b: e4([0]),
          sfb: f32([1, 0]),
          d: f32([1, 1, 1]),
          ks: Tensor.from("i32", [1], new Int32Array([-128])),
          ksHost: [0],
        }),
      native("GO_ERR_INVALID_ARGUMENT", /ks\[0\] = -128 is negative/),
    );
  });
});

Deno.test("mGroupedFp8GemmMasked() argument checks", async (t) => {
  using be = await openBackend("cpu");
  await t.step("native: masked_m beyond Mmax is GO_ERR_INVALID_ARGUMENT", () => {
    assert.throws(
      () =>
        be.mGroupedFp8GemmMasked({
          a: e4([1, 4, 128]),
          sfa: f32([1, 4, 1]),
          b: e4([1, 8, 128]),
          sfb: f32([1, 1, 1]),
          d: Tensor.zeros("bf16", [1, 4, 8]),
          maskedM: Tensor.from("i32", [1], new Int32Array([5])),
        }),
      native("GO_ERR_INVALID_ARGUMENT", /masked_m\[0\] = 5 is outside \[0, 4\]/),
    );
  });
});

Deno.test("broadcast views of huge tensors", async (t) => {
  using be = await openBackend("cpu");
  const lib = be.library;
  await t.step("native: a stride-0 view with more than 2^48 elements is rejected, not allocated", () => {
    using a = be.alloc(64), sfa = be.alloc(64), b = be.alloc(64), sfb = be.alloc(64), d = be.alloc(64);
    const huge = 2 ** 40;
    const call = () =>
      lib.check(
        lib.symbols.go_fp8_gemm!(
          rawDesc(a.address(), DTYPE_CODES.e4m3!, [huge, huge], [0, 0]),
          rawDesc(sfa.address(), DTYPE_CODES.f32!, [huge, 1], [0, 0]),
          rawDesc(b.address(), DTYPE_CODES.e4m3!, [1, huge], [0, 0]),
          rawDesc(sfb.address(), DTYPE_CODES.f32!, [1, 1], [0, 0]),
          null,
          rawDesc(d.address(), DTYPE_CODES.bf16!, [huge, 1], [0, 0]),
          1,
          128,
          128,
          128,
          -1,
        ),
        "go_fp8_gemm",
      );
    assert.throws(call, native("GO_ERR_INVALID_ARGUMENT", /a: more than 2\^48 elements/));
  });

  await t.step("native: head_splits whose mid width overflows 64 bits are rejected", () => {
    using a = be.alloc(128), sfa = be.alloc(4), b = be.alloc(1024), sfb = be.alloc(4), d = be.alloc(64);
    assert.throws(
      () =>
        lib.check(
          lib.symbols.go_fp8_gemm_skip_head_mid!(
            rawDesc(a.address(), DTYPE_CODES.e4m3!, [1, 128], [128, 1]),
            rawDesc(sfa.address(), DTYPE_CODES.f32!, [1, 1], [1, 1]),
            rawDesc(b.address(), DTYPE_CODES.e4m3!, [2 ** 40, 128], [0, 1]),
            rawDesc(sfb.address(), DTYPE_CODES.f32!, [1, 1], [0, 1]),
            rawDesc(d.address(), DTYPE_CODES.bf16!, [1, 8], [8, 1]),
            1,
            128,
            128,
            128,
            1,
            2 ** 31 - 1,
            1,
            -1,
          ),
          "go_fp8_gemm_skip_head_mid",
        ),
      native("GO_ERR_INVALID_ARGUMENT", /d \(heads·mid\): size overflows 64 bits/),
    );
  });
});
