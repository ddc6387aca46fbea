import assert from "node:assert/strict";
import { f32Bits } from "../../reference/fp32.ts";
import { Prng } from "../../reference/random/prng.ts";
import { Tensor } from "../../reference/tensor/mod.ts";
import { ceilToUe8m0, ceilToUe8m0Bits, packUe8m0ToInt, unpackUe8m0FromInt } from "../../reference/quant/mod.ts";

Deno.test("ceilToUe8m0()", async (t) => {
  await t.step("keeps exact powers of two and rounds everything else up", () => {
    assert.equal(ceilToUe8m0Bits(0x3f800000), 0x3f800000);
    assert.equal(ceilToUe8m0Bits(0x3f800001), 0x40000000);
    assert.equal(ceilToUe8m0Bits(0x3fffffff), 0x40000000);
  });
  await t.step("sends 0, −0 and subnormals to 2^-126, Inf and NaN to 2^127, and drops the sign", () => {
    for (const b of [0, 0x80000000, 1, 0x007fffff]) assert.equal(ceilToUe8m0Bits(b), 0x00800000);
    for (const b of [0x7f800000, 0xff800000, 0x7fc00000, 0x7f7fffff]) assert.equal(ceilToUe8m0Bits(b), 0x7f000000);
    assert.equal(ceilToUe8m0Bits(0xc0400000), 0x40800000); // −3 → 4
  });
  await t.step("always returns a power of two ≥ |x| (random property)", () => {
    const rng = new Prng(1);
    const v = new Float32Array(5000).map(() => (rng.uniform() - 0.5) * 2 ** (rng.int(60) - 30));
    const y = ceilToUe8m0(Tensor.from("f32", [5000], v)).data as Float32Array;
    for (let i = 0; i < v.length; i++) {
      assert.equal(f32Bits(y[i]) & 0x807fffff, 0);
      assert.ok(y[i] >= Math.abs(v[i]) && y[i] < 2 * Math.abs(v[i]) + 2 ** -126);
    }
  });
});

Deno.test("packUe8m0ToInt()", async (t) => {
  await t.step("round-trips every exponent byte 1..254 through unpackUe8m0FromInt", () => {
    const v = Float32Array.from({ length: 256 }, (_, i) => 2 ** (Math.min(Math.max(i, 1), 254) - 127));
    const sf = Tensor.from("f32", [4, 64], v);
    const back = unpackUe8m0FromInt(packUe8m0ToInt(sf));
    assert.deepEqual(back.shape, [4, 64]);
    assert.deepEqual(back.data, sf.data);
  });
  await t.step("rejects a non-power of two, a negative scale and −0", () => {
    for (const bad of [3, -1, -0]) {
      assert.throws(() => packUe8m0ToInt(Tensor.from("f32", [4], new Float32Array([1, 1, 1, bad]))), RangeError);
    }
  });
  await t.step("rejects a last dimension not divisible by 4 and non-f32 input", () => {
    assert.throws(() => packUe8m0ToInt(Tensor.zeros("f32", [3])), RangeError);
    assert.throws(() => packUe8m0ToInt(Tensor.zeros("bf16", [4])), TypeError);
  });
  await t.step("unpacks byte 0 to +0 and byte 255 to +Inf, as DeepGEMM's bit shift does", () => {
    const f = unpackUe8m0FromInt(Tensor.from("i32", [1], new Int32Array([0xff000000 | 0]))).data as Float32Array;
    assert.deepEqual([...f], [0, 0, 0, Infinity]);
  });
});
