import assert from "node:assert/strict";
import { contiguousStrides, numel, Tensor } from "../../reference/tensor/mod.ts";

const iota = (n: number) => Float32Array.from({ length: n }, (_, i) => i);

Deno.test("Tensor views", async (t) => {
  const a = Tensor.from("f32", [2, 3, 4], iota(24));
  await t.step("transpose shares storage and swaps strides", () => {
    const v = a.transpose(0, 2);
    assert.equal(v.data, a.data);
    assert.deepEqual(v.shape, [4, 3, 2]);
    assert.deepEqual(v.strides, [1, 4, 12]);
    assert.equal(v.at(3, 2, 1), a.at(1, 2, 3));
  });
  await t.step("select and narrow share storage and move the offset", () => {
    const s = a.select(0, 1);
    assert.equal(s.data, a.data);
    assert.equal(s.offset, 12);
    const n = a.narrow(2, 1, 2);
    assert.equal(n.data, a.data);
    assert.equal(n.at(1, 2, 1), 22);
  });
  await t.step("a write through the storage is seen by every view", () => {
    const b = Tensor.from("f32", [2, 2], iota(4));
    const v = b.transpose();
    (b.data as Float32Array)[1] = 42;
    assert.equal(v.at(1, 0), 42);
  });
  await t.step("reshape of a contiguous view shares storage", () => {
    const r = a.reshape([6, 4]);
    assert.equal(r.data, a.data);
    assert.equal(r.at(5, 3), 23);
  });
  await t.step("contiguous() returns itself when already row-major, copies otherwise", () => {
    assert.equal(a.contiguous(), a);
    const c = a.transpose().contiguous();
    assert.notEqual(c.data, a.data);
    assert.deepEqual(c.strides, contiguousStrides([2, 4, 3]));
    assert.equal(c.at(1, 3, 2), a.at(1, 2, 3));
  });
});

Deno.test("Tensor bounds errors", async (t) => {
  await t.step("a view reaching outside storage is a RangeError", () => {
    assert.throws(() => new Tensor("f32", [2, 3], new Float32Array(5)), RangeError);
    assert.throws(() => new Tensor("f32", [2], new Float32Array(4), [1], 3), RangeError);
  });
  await t.step("the wrong storage type is a TypeError", () => {
    assert.throws(() => Tensor.from("bf16", [2], new Float32Array(2) as never), TypeError);
  });
  await t.step("index, select, narrow and transpose check their ranges", () => {
    const a = Tensor.zeros("i32", [2, 3]);
    assert.throws(() => a.at(2, 0), RangeError);
    assert.throws(() => a.at(0), RangeError);
    assert.throws(() => a.select(1, 3), RangeError);
    assert.throws(() => a.narrow(1, 2, 2), RangeError);
    assert.throws(() => a.transpose(0, 2), RangeError);
  });
  await t.step("reshape needs the same element count and a contiguous view", () => {
    const a = Tensor.zeros("f32", [2, 3]);
    assert.throws(() => a.reshape([4, 2]), RangeError);
    assert.throws(() => a.transpose().reshape([6]), RangeError);
  });
  await t.step("negative or fractional extents are rejected", () => {
    assert.throws(() => Tensor.zeros("f32", [-1]), RangeError);
    assert.throws(() => Tensor.zeros("f32", [1.5]), RangeError);
    assert.equal(numel([]), 1);
  });
});
