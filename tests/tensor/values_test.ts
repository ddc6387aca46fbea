import assert from "node:assert/strict";
import { f32Bits } from "../../reference/fp32.ts";
import { Prng } from "../../reference/random/prng.ts";
import { f32Tensor, rowMajorData, Tensor, toFloat32, toFloat32Bits, widenBf16 } from "../../reference/tensor/mod.ts";

Deno.test("widenBf16()", async (t) => {
  await t.step("is the exact shift for every one of the 65536 patterns, NaN payloads included", () => {
    const all = Uint16Array.from({ length: 65536 }, (_, i) => i);
    const u = new Uint32Array(widenBf16(all).buffer);
    for (let i = 0; i < 65536; i++) assert.equal(u[i], (i << 16) >>> 0);
  });
  await t.step("rejects other arrays", () => {
    assert.throws(() => widenBf16(new Float32Array(1) as never), TypeError);
  });
});

Deno.test("toFloat32()", async (t) => {
  await t.step("gathers a transposed view in logical order", () => {
    const a = Tensor.from("f32", [2, 3], new Float32Array([1, 2, 3, 4, 5, 6]));
    assert.deepEqual([...toFloat32(a.transpose())], [1, 4, 2, 5, 3, 6]);
  });
  await t.step("copies f32 bits unchanged (a signalling NaN payload survives)", () => {
    const d = new Float32Array(2);
    new Uint32Array(d.buffer).set([0x7fa00001, 0x80000000]);
    assert.deepEqual([...toFloat32Bits(Tensor.from("f32", [2], d))], [0x7fa00001, 0x80000000]);
  });
  await t.step("decodes e4m3, e5m2, ue8m0, e2m1 and f16 codes", () => {
    assert.deepEqual([...toFloat32(Tensor.from("e4m3", [3], new Uint8Array([0x7e, 0x01, 0xb8])))], [448, 2 ** -9, -1]);
    assert.deepEqual([...toFloat32(Tensor.from("e5m2", [2], new Uint8Array([0x7b, 0x7c])))], [57344, Infinity]);
    assert.deepEqual([...toFloat32(Tensor.from("ue8m0", [2], new Uint8Array([0x00, 0x7f])))], [2 ** -127, 1]);
    assert.deepEqual([...toFloat32(Tensor.from("e2m1", [2], new Uint8Array([0x7, 0xd])))], [6, -3]);
    assert.deepEqual([...toFloat32(Tensor.from("f16", [1], new Uint16Array([0x3c00])))], [1]);
    assert.ok(Number.isNaN(toFloat32(Tensor.from("e4m3", [1], new Uint8Array([0xff])))[0]));
  });
  await t.step("converts integers", () => {
    assert.deepEqual([...toFloat32(Tensor.from("i64", [2], new BigInt64Array([3n, -4n])))], [3, -4]);
    assert.deepEqual([...toFloat32(Tensor.from("i8", [1], new Int8Array([-5])))], [-5]);
  });
  await t.step("never returns the tensor's own storage", () => {
    const a = f32Tensor([2], [1, 2]);
    assert.notEqual(toFloat32(a), a.data);
  });
  await t.step("rowMajorData of a random permuted view matches element-wise at()", () => {
    const rng = new Prng(7);
    const a = Tensor.from("i32", [3, 4, 5], Int32Array.from({ length: 60 }, () => rng.int(1000)));
    const v = a.transpose(0, 2).narrow(1, 1, 3);
    const flat = rowMajorData(v);
    let k = 0;
    for (let i = 0; i < 5; i++) {
      for (let j = 0; j < 3; j++) for (let l = 0; l < 3; l++) assert.equal(flat[k++], v.at(i, j, l));
    }
  });
  await t.step("bf16 tensors widen exactly", () => {
    const b = Tensor.from("bf16", [1], new Uint16Array([0x4049]));
    assert.equal(f32Bits(toFloat32(b)[0]), 0x40490000);
  });
});
