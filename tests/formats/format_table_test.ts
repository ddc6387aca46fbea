import assert from "node:assert/strict";
import { decode, FORMAT_NAMES, FORMATS, formatSpec } from "../../reference/formats/mod.ts";
import { LAYOUT } from "./_reference.ts";

Deno.test("FORMATS", async (t) => {
  await t.step("matches the layouts of numerics.md §1", () => {
    for (const [name, L] of Object.entries(LAYOUT)) {
      const f = FORMATS[name as keyof typeof FORMATS];
      assert.equal(f.exponentBits, L.e, name);
      assert.equal(f.mantissaBits, L.m, name);
      assert.equal(f.bias, L.bias, name);
      assert.equal(f.hasSign, L.signed, name);
      assert.equal(f.bits, (L.signed ? 1 : 0) + L.e + L.m, name);
    }
  });

  await t.step("has the max finite values of numerics.md §1", () => {
    assert.equal(decode("e4m3", FORMATS.e4m3.maxFiniteCode), 448);
    assert.equal(decode("e5m2", FORMATS.e5m2.maxFiniteCode), 57344);
    assert.equal(decode("e2m1", FORMATS.e2m1.maxFiniteCode), 6);
    assert.equal(decode("ue8m0", FORMATS.ue8m0.maxFiniteCode), 2 ** 127);
    assert.equal(decode("bf16", FORMATS.bf16.maxFiniteCode), 3.3895313892515355e38);
    assert.equal(decode("fp16", FORMATS.fp16.maxFiniteCode), 65504);
    assert.equal(decode("f32", FORMATS.f32.maxFiniteCode), 3.4028234663852886e38);
  });

  await t.step("marks infinities and NaN spellings as the spec does", () => {
    assert.deepEqual(FORMAT_NAMES.filter((f) => FORMATS[f].hasInfinity), ["e5m2", "bf16", "fp16", "f32"]);
    assert.deepEqual(FORMAT_NAMES.filter((f) => FORMATS[f].nan === "all_ones"), ["e4m3", "ue8m0"]);
    assert.deepEqual(FORMAT_NAMES.filter((f) => !FORMATS[f].hasZero), ["ue8m0"]);
    for (const f of FORMAT_NAMES) {
      const inf = FORMATS[f].infinityCode;
      if (inf !== null) assert.equal(decode(f, inf), Infinity, f);
    }
  });
});

Deno.test("formatSpec()", async (t) => {
  await t.step("returns the row of a known format", () => assert.equal(formatSpec("fp16").mantissaBits, 10));
  await t.step("throws RangeError listing every valid name for an unknown format", () => {
    assert.throws(() => formatSpec("fp8"), /valid formats are e4m3, e5m2, e2m1, ue8m0, bf16, fp16, f32/);
  });
  await t.step("throws TypeError for a non-string", () => {
    assert.throws(() => formatSpec(3 as unknown as string), TypeError);
  });
});
