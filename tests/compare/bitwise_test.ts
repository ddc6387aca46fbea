import assert from "node:assert/strict";
import { compareBitwise, unravelIndex } from "../../reference/compare/mod.ts";

Deno.test("compareBitwise()", async (t) => {
  await t.step("reports zero mismatches for identical arrays", () => {
    const r = compareBitwise("e4m3", new Uint8Array([1, 2, 3]), new Uint8Array([1, 2, 3]));
    assert.deepEqual(r, { elements: 3, mismatches: 0, first: null, maxUlp: 0 });
  });
  await t.step("reports the count, the first mismatch with coordinate, values and bits, and the max ULP", () => {
    const e = new Uint16Array([0x3f80, 0x4000, 0x4040, 0x4080, 0x40a0, 0x40c0]);
    const a = new Uint16Array([0x3f80, 0x4000, 0x4040, 0x4081, 0x40a0, 0x40c4]);
    const r = compareBitwise("bf16", e, a, { shape: [2, 3] });
    assert.equal(r.elements, 6);
    assert.equal(r.mismatches, 2);
    assert.deepEqual(r.first, {
      index: 3,
      coordinate: [1, 0],
      expected: { value: 4, bits: 0x4080 },
      actual: { value: 4.03125, bits: 0x4081 },
    });
    assert.equal(r.maxUlp, 4);
  });
  await t.step("treats different NaN spellings as mismatches in bits mode and as equal in class mode", () => {
    const e = new Uint8Array([0x7f, 0x7e]);
    const a = new Uint8Array([0xff, 0x7e]);
    assert.equal(compareBitwise("e4m3", e, a).mismatches, 1);
    assert.equal(compareBitwise("e4m3", e, a).maxUlp, 0);
    assert.equal(compareBitwise("e4m3", e, a, { nan: "class" }).mismatches, 0);
    assert.equal(
      compareBitwise("e4m3", new Uint8Array([0x7f]), new Uint8Array([0x7e]), { nan: "class" }).maxUlp,
      Infinity,
    );
  });
  await t.step("compares f32 by bits, so −0 differs from +0 and NaN payloads count in bits mode", () => {
    const r = compareBitwise("f32", new Float32Array([0, 1]), new Float32Array([-0, 1]));
    assert.equal(r.mismatches, 1);
    assert.equal(r.first?.actual.bits, 0x80000000);
    const n1 = new Uint32Array([0x7fc00000]), n2 = new Uint32Array([0x7fc00001]);
    assert.equal(compareBitwise("f32", n1, n2).mismatches, 1);
    assert.equal(compareBitwise("f32", n1, n2, { nan: "class" }).mismatches, 0);
  });
  await t.step("throws TypeError for an array type that does not match the format", () => {
    assert.throws(() => compareBitwise("bf16", new Uint8Array(1), new Uint8Array(1)), /must be a Uint16Array/);
  });
  await t.step("throws RangeError for different lengths or a shape that does not fit", () => {
    assert.throws(() => compareBitwise("e4m3", new Uint8Array(2), new Uint8Array(3)), RangeError);
    assert.throws(
      () => compareBitwise("e4m3", new Uint8Array(6), new Uint8Array(6), { shape: [4, 2] }),
      /holds 8 elements/,
    );
  });
});

Deno.test("unravelIndex()", async (t) => {
  await t.step("converts a row-major index to a coordinate", () => {
    assert.deepEqual(unravelIndex(0, [3, 4, 5]), [0, 0, 0]);
    assert.deepEqual(unravelIndex(59, [3, 4, 5]), [2, 3, 4]);
    assert.deepEqual(unravelIndex(23, [3, 4, 5]), [1, 0, 3]);
  });
});
