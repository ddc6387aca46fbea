import assert from "node:assert/strict";
import { Tensor } from "../../reference/tensor/mod.ts";
import { compareTensors } from "../../reference/compare/compare_tensors.ts";

const bf = (v: number[]) => Tensor.from("bf16", [2, 2], new Uint16Array(v));

Deno.test("compareTensors()", async (t) => {
  await t.step("reports the first mismatch with coordinate, values and bit patterns", () => {
    const r = compareTensors("d", bf([0x3f80, 0x4000, 0x3fc0, 0]), bf([0x3f80, 0x4000, 0x3fc1, 0x8000]), {
      kind: "bitwise",
    });
    assert.equal(r.elements, 4);
    assert.equal(r.mismatches, 2);
    assert.deepEqual(r.first, {
      coordinate: [1, 0],
      expected: { value: 1.5, bits: "0x3fc0" },
      actual: { value: 1.5078125, bits: "0x3fc1" },
    });
    assert.equal(r.maxUlp, 1);
    assert.equal(r.pass, false);
  });

  await t.step("passes within ulp=1 and within calc-diff=1e-3", () => {
    const e = bf([0x3f80, 0x4000, 0x3fc0, 0x4040]), a = bf([0x3f80, 0x4000, 0x3fc1, 0x4040]);
    assert.equal(compareTensors("d", e, a, { kind: "ulp", limit: 1 }).pass, true);
    assert.equal(compareTensors("d", e, a, { kind: "ulp", limit: 0 }).pass, false);
    const r = compareTensors("d", e, a, { kind: "calc-diff", limit: 1e-3 });
    assert.ok(r.calcDiff > 0 && r.calcDiff < 1e-5, String(r.calcDiff));
    assert.equal(r.pass, true);
  });

  await t.step("compares integer tensors by value with |difference| as the distance", () => {
    const r = compareTensors(
      "k",
      Tensor.from("i64", [2], new BigInt64Array([5n, -1n])),
      Tensor.from("i64", [2], new BigInt64Array([5n, 2n])),
      {
        kind: "bitwise",
      },
    );
    assert.equal(r.maxUlp, 3);
    assert.deepEqual(r.first?.actual, { value: "2", bits: "0x0000000000000002" });
  });

  await t.step("treats NaN spellings as equal only with nan class", () => {
    const e = Tensor.from("f32", [1], new Float32Array(new Uint32Array([0x7fc00000]).buffer));
    const a = Tensor.from("f32", [1], new Float32Array(new Uint32Array([0x7fffffff]).buffer));
    assert.equal(compareTensors("x", e, a, { kind: "bitwise" }).pass, false);
    assert.equal(compareTensors("x", e, a, { kind: "bitwise" }, "class").pass, true);
  });

  await t.step("compares 16-bit storage as i16 or u16 integers, also across bf16 and f16", () => {
    const e = bf([0x3f80, 0xbf80, 0x8000, 0]);
    const a = Tensor.from("f16", [2, 2], new Uint16Array([0x3f80, 0xbf7f, 0x8000, 0]));
    const i = compareTensors("d", e, a, { kind: "bitwise" }, "bits", true, "i16");
    assert.equal(i.dtype, "i16");
    assert.deepEqual(i.first, {
      coordinate: [0, 1],
      expected: { value: 0xbf80 - 0x10000, bits: "0xbf80" },
      actual: { value: 0xbf7f - 0x10000, bits: "0xbf7f" },
    });
    assert.equal(i.maxUlp, 1);
    assert.equal(i.map?.dtype, "i16");
    assert.deepEqual(i.map?.worst?.expected, { value: -16512, bits: "0xbf80" });
    const u = compareTensors("d", e, a, { kind: "ulp", limit: 1 }, "bits", false, "u16");
    assert.deepEqual([u.dtype, u.first?.expected.value, u.pass], ["u16", 0xbf80, true]);
    assert.throws(
      () =>
        compareTensors(
          "x",
          Tensor.zeros("f32", [2]),
          Tensor.zeros("f32", [2]),
          { kind: "bitwise" },
          "bits",
          false,
          "i16",
        ),
      /not stored in 16 bits/,
    );
  });

  await t.step("rejects different dtypes and shapes", () => {
    assert.throws(
      () => compareTensors("x", Tensor.zeros("f32", [2]), Tensor.zeros("bf16", [2]), { kind: "bitwise" }),
      /dtypes differ/,
    );
    assert.throws(
      () => compareTensors("x", Tensor.zeros("f32", [2]), Tensor.zeros("f32", [1, 2]), { kind: "bitwise" }),
      /shapes differ/,
    );
  });
});
