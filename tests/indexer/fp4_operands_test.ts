import assert from "node:assert/strict";
import { decodeFp4Rows, fp4ScorerFor } from "../../reference/indexer/fp4_operands.ts";

Deno.test("decodeFp4Rows()", async (t) => {
  await t.step("reads the low nibble as the even element and bit 3 as the sign", () => {
    const bytes = new Int8Array(32);
    bytes[0] = 0x9f - 256; // codes 0xf (−6), 0x9 (−0.5)
    bytes[1] = 0x07; // codes 7 (6), 0 (0)
    const r = decodeFp4Rows(bytes, 0, 1, 64, [0x7f7f7f7f], 0);
    assert.deepEqual([r.v[0], r.v[1], r.v[2], r.v[3]], [-6, -0.5, 6, 0]);
    assert.deepEqual([r.e[0], r.e[1], r.e[2]], [2, 0, 2]); // MMA-Sim exponents, clamped at E2M1's 0
  });

  await t.step("decodes scale byte 0 as 2^-127 and byte 255 as NaN (UE8M0 in the tensor core)", () => {
    const r = decodeFp4Rows(new Uint8Array(64), 0, 1, 128, [0xff7f0100 | 0], 0);
    assert.deepEqual([r.sv[0], r.sv[1], r.sv[2]], [2 ** -127, 2 ** -126, 1]);
    assert.ok(Number.isNaN(r.sv[3]));
    assert.deepEqual([...r.se], [-127, -126, 0, 128]);
  });
});

Deno.test("fp4ScorerFor()", async (t) => {
  // Scale word 0x7f7f7f8e: block 0 at 2^15, block 1 at 1 (D = 64).
  const ones = new Uint8Array(32).fill(0x22); // every element 1.0
  const withBlock1 = (byte: number) => {
    const b = ones.slice();
    b.fill(byte, 16, 32); // elements 32…63
    return decodeFp4Rows(b, 0, 1, 64, [0x7f7f7f8e], 0);
  };

  await t.step("rounds the fused sum toward zero where an exact unit rounds to nearest", () => {
    // block 0: 32 · (1·1) · 2^15·2^15 = 2^35; block 1: 32 · (6·−6) = −1152. fp32's ulp below 2^35 is 2048:
    // 2^35 − 1152 lies nearer 2^35 − 2048 than 2^35, so RZ and RNE agree here.
    const a = withBlock1(0x77);
    assert.equal(fp4ScorerFor("tcgen05_mxf4nvf4")(a, 0, withBlock1(0xff), 0, 64), 2 ** 35 - 2048);
    assert.equal(fp4ScorerFor("exact")(a, 0, withBlock1(0xff), 0, 64), 2 ** 35 - 2048);
    // 32 · (6·−3) = −576 < 1024: RZ still 2^35 − 2048, RNE 2^35.
    assert.equal(fp4ScorerFor("tcgen05_mxf4nvf4")(a, 0, withBlock1(0xdd), 0, 64), 2 ** 35 - 2048);
    assert.equal(fp4ScorerFor("exact")(a, 0, withBlock1(0xdd), 0, 64), 2 ** 35);
  });

  await t.step("truncates each scaled group term on its own: a tiny negative group leaves no trace", () => {
    // Block 1 at 2^-40 on both sides: group terms 16 · 2^-80 are truncated to 0 at 35 bits below exponent 0, so
    // 32 − 32·2^-80 gives exactly 32 (a unit with a sticky bit and RZ would give the float below 32).
    const a = decodeFp4Rows(ones, 0, 1, 64, [0x7f7f577f], 0);
    const negBytes = ones.slice();
    negBytes.fill(0xaa, 16, 32); // −1.0
    const neg = decodeFp4Rows(negBytes, 0, 1, 64, [0x7f7f577f], 0);
    assert.equal(fp4ScorerFor("tcgen05_mxf4nvf4")(a, 0, a, 0, 64), 32);
    assert.equal(fp4ScorerFor("tcgen05_mxf4nvf4")(neg, 0, a, 0, 64), 32);
    assert.equal(fp4ScorerFor("tcgen05_mxf8f6f4")(neg, 0, a, 0, 64), 32);
    assert.equal(fp4ScorerFor("exact")(neg, 0, a, 0, 64), 32);
  });

  await t.step("gives NaN for a NaN scale and rejects profiles without block scales", () => {
    const a = decodeFp4Rows(ones, 0, 1, 64, [0x7f7f7fff], 0);
    for (const p of ["tcgen05_mxf4nvf4", "tcgen05_mxf8f6f4", "exact"]) {
      assert.ok(Number.isNaN(fp4ScorerFor(p)(a, 0, a, 0, 64)), p);
    }
    assert.throws(() => fp4ScorerFor("hopper_wgmma_fp8"), /cannot take block-scaled E2M1 operands/);
  });
});
