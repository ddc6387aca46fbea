import assert from "node:assert/strict";
import { codeOrdinal, ulpDistance } from "../../reference/compare/mod.ts";
import { decode, isNanCode } from "../../reference/formats/mod.ts";

Deno.test("ulpDistance()", async (t) => {
  await t.step("counts representable values between two codes, +0 and −0 being one", () => {
    assert.equal(ulpDistance("e4m3", 0x00, 0x80), 0);
    assert.equal(ulpDistance("e4m3", 0x01, 0x81), 2);
    assert.equal(ulpDistance("e4m3", 0x7e, 0xfe), 2 * 0x7e);
    assert.equal(ulpDistance("ue8m0", 0x00, 0xfe), 0xfe);
  });
  await t.step("agrees with the value order on every pair of adjacent e5m2 and fp16 codes", () => {
    for (const [f, n] of [["e5m2", 256], ["fp16", 65536]] as const) {
      const codes = [...Array(n).keys()].filter((c) => !isNanCode(f, c));
      codes.sort((a, b) => decode(f, a) - decode(f, b) || codeOrdinal(f, a) - codeOrdinal(f, b));
      for (let i = 1; i < codes.length; i++) {
        const d = ulpDistance(f, codes[i - 1], codes[i]);
        const same = decode(f, codes[i - 1]) === decode(f, codes[i]);
        assert.equal(d, same ? 0 : 1, `${f} ${codes[i - 1]} ${codes[i]}`);
      }
    }
  });
  await t.step("is 0 between NaNs and Infinity between NaN and a number", () => {
    assert.equal(ulpDistance("bf16", 0x7fc0, 0xffff), 0);
    assert.equal(ulpDistance("bf16", 0x7fc0, 0x3f80), Infinity);
  });
  await t.step(
    "throws RangeError for codes out of range",
    () => assert.throws(() => ulpDistance("e2m1", 0, 16), RangeError),
  );
});
