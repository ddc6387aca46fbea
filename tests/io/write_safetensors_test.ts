import assert from "node:assert/strict";
import { type DType, Tensor } from "../../reference/tensor/mod.ts";
import { parseSafetensors, serializeSafetensors, writeSafetensors } from "../../io/mod.ts";

const enc = new TextEncoder();

function handBuilt(header: string, data: number[]): Uint8Array {
  const h = enc.encode(header);
  const out = new Uint8Array(8 + h.length + data.length);
  new DataView(out.buffer).setBigUint64(0, BigInt(h.length), true);
  out.set(h, 8);
  out.set(data, 8 + h.length);
  return out;
}

Deno.test("serializeSafetensors()", async (t) => {
  await t.step("writes the hand-built bytes for one f32 tensor", () => {
    const got = serializeSafetensors({ x: Tensor.from("f32", [2], new Float32Array([1, -2])) });
    const want = handBuilt('{"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}  ', [
      0,
      0,
      0x80,
      0x3f,
      0,
      0,
      0,
      0xc0,
    ]);
    assert.deepEqual(got, want);
  });

  await t.step("orders tensors widest first, then by name, with metadata first and sorted", () => {
    const got = serializeSafetensors({
      b: Tensor.from("u8", [1], new Uint8Array([7])),
      a: Tensor.from("u8", [1], new Uint8Array([6])),
      c: Tensor.from("bf16", [1], new Uint16Array([0x3f80])),
      q: Tensor.from("e2m1", [2], new Uint8Array([3, 0xa])),
    }, { z: "1", op: "fp8_gemm_nt" });
    const header = '{"__metadata__":{"f4_nibble_order":"low_first","op":"fp8_gemm_nt","z":"1"},' +
      '"c":{"dtype":"BF16","shape":[1],"data_offsets":[0,2]},"a":{"dtype":"U8","shape":[1],"data_offsets":[2,3]},' +
      '"b":{"dtype":"U8","shape":[1],"data_offsets":[3,4]},"q":{"dtype":"F4","shape":[2],"data_offsets":[4,5]}}';
    assert.equal(header.length, 285); // padded with 3 spaces to 288
    assert.deepEqual(got, handBuilt(header + "   ", [0x80, 0x3f, 6, 7, 0xa3]));
  });

  await t.step("writes i64, i8 and ue8m0 in their safetensors spellings", () => {
    const got = serializeSafetensors({
      l: Tensor.from("i64", [1], new BigInt64Array([-2n])),
      s: Tensor.from("i8", [1], new Int8Array([-1])),
      e: Tensor.from("ue8m0", [1], new Uint8Array([127])),
    });
    const header =
      '{"l":{"dtype":"I64","shape":[1],"data_offsets":[0,8]},"e":{"dtype":"F8_E8M0","shape":[1],"data_offsets":[8,9]},' +
      '"s":{"dtype":"I8","shape":[1],"data_offsets":[9,10]}}';
    const pad = " ".repeat((8 - (header.length % 8)) % 8);
    assert.deepEqual(got, handBuilt(header + pad, [0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 127, 0xff]));
  });

  await t.step("is deterministic whatever the insertion order", () => {
    const a = Tensor.from("f32", [1], new Float32Array([1]));
    const b = Tensor.from("i32", [1], new Int32Array([2]));
    assert.deepEqual(
      serializeSafetensors({ a, b }, { x: "1", y: "2" }),
      serializeSafetensors(new Map([["b", b], ["a", a]]), { y: "2", x: "1" }),
    );
  });

  await t.step("writes strided views row-major", () => {
    const m = Tensor.from("i32", [2, 3], new Int32Array([1, 2, 3, 4, 5, 6])).transpose();
    const back = parseSafetensors(serializeSafetensors({ m })).tensors.get("m")!;
    assert.deepEqual(back.shape, [3, 2]);
    assert.deepEqual([...back.data], [1, 4, 2, 5, 3, 6]);
  });

  await t.step("rejects odd F4 counts, codes above 15, bad metadata and reserved names", () => {
    assert.throws(() => serializeSafetensors({ q: Tensor.from("e2m1", [3], new Uint8Array(3)) }), RangeError);
    assert.throws(
      () => serializeSafetensors({ q: Tensor.from("e2m1", [2], new Uint8Array([0, 16])) }),
      /does not fit in 4 bits/,
    );
    assert.throws(() => serializeSafetensors({}, { k: 1 as unknown as string }), TypeError);
    assert.throws(() => serializeSafetensors({ __metadata__: Tensor.zeros("u8", [1]) }), /reserved/);
    assert.throws(() => serializeSafetensors({}, { f4_nibble_order: "high_first" }), RangeError);
  });
});

Deno.test("round trip through serializeSafetensors() and parseSafetensors()", async (t) => {
  const samples: Record<DType, () => Tensor> = {
    f32: () => Tensor.from("f32", [2, 2], new Float32Array([1.5, -0, Infinity, NaN])),
    bf16: () => Tensor.from("bf16", [3], new Uint16Array([0x7fff, 0x8000, 0x3f80])),
    f16: () => Tensor.from("f16", [3], new Uint16Array([0x7e01, 0xfc00, 0x0001])),
    e4m3: () => Tensor.from("e4m3", [4], new Uint8Array([0x7f, 0xff, 0x7e, 0x80])),
    e5m2: () => Tensor.from("e5m2", [2], new Uint8Array([0x7c, 0x7f])),
    ue8m0: () => Tensor.from("ue8m0", [3], new Uint8Array([0, 127, 255])),
    e2m1: () => Tensor.from("e2m1", [2, 3], new Uint8Array([0, 1, 7, 8, 9, 15])),
    i32: () => Tensor.from("i32", [3], new Int32Array([-1, 2 ** 31 - 1, -(2 ** 31)])),
    i64: () => Tensor.from("i64", [2], new BigInt64Array([-(2n ** 63n), 2n ** 62n])),
    i16: () => Tensor.from("i16", [3], new Int16Array([-32768, -1, 32767])),
    u16: () => Tensor.from("u16", [2], new Uint16Array([0, 65535])),
    u8: () => Tensor.from("u8", [2], new Uint8Array([0, 255])),
    i8: () => Tensor.from("i8", [2], new Int8Array([-128, 127])),
  };
  for (const [dtype, make] of Object.entries(samples)) {
    await t.step(`keeps every bit of ${dtype}`, () => {
      const x = make();
      const back = parseSafetensors(serializeSafetensors({ x })).tensors.get("x")!;
      assert.equal(back.dtype, dtype);
      assert.deepEqual(back.shape, x.shape);
      const bits = (d: Tensor) => [...new Uint8Array(d.data.buffer, d.data.byteOffset, d.data.byteLength)];
      assert.deepEqual(bits(back), bits(x));
    });
  }
});

Deno.test("writeSafetensors()", async (t) => {
  await t.step("writes the serialized bytes to disk", async () => {
    const path = await Deno.makeTempFile();
    try {
      const x = { x: Tensor.from("u8", [1], new Uint8Array([1])) };
      await writeSafetensors(path, x, { a: "b" });
      assert.deepEqual(await Deno.readFile(path), serializeSafetensors(x, { a: "b" }));
    } finally {
      await Deno.remove(path);
    }
  });
});
