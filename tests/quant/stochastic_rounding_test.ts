import assert from "node:assert/strict";
import { f32Bits } from "../../reference/fp32.ts";
import { stochasticRound, stochasticRoundFp4Te } from "../../reference/quant/mod.ts";

Deno.test("stochasticRound()", async (t) => {
  await t.step("rounds up for exactly floor(frac · 256) of the 256 random values", () => {
    for (const [x, lo, ups] of [[1.03125, 0x38, 64], [1.1, 0x38, 204], [300, 0x79, 96]] as const) {
      const codes = Array.from({ length: 256 }, (_, r) => stochasticRound("e4m3", f32Bits(x), r));
      assert.equal(codes.filter((c) => c === lo + 1).length, ups);
      assert.equal(codes.filter((c) => c === lo).length, 256 - ups);
    }
  });
  await t.step("exact values never move, and saturates at the largest finite value", () => {
    for (let r = 0; r < 256; r += 17) {
      assert.equal(stochasticRound("e4m3", f32Bits(448), r), 0x7e);
      assert.equal(stochasticRound("e4m3", f32Bits(1000), r), 0x7e);
      assert.equal(stochasticRound("e2m1", f32Bits(-1.5), r), 0xb);
    }
  });
  await t.step("keeps the sign and gives the format's NaN", () => {
    assert.equal(stochasticRound("e5m2", f32Bits(-1.1), 255), 0xbd);
    assert.equal(stochasticRound("e4m3", 0x7fc00000, 0), 0x7f);
    assert.equal(stochasticRound("e2m1", 0xffc00000, 0), 0x7);
  });
});

Deno.test("stochasticRoundFp4Te()", async (t) => {
  await t.step("rounds 2.5 (halfway between 2 and 3) up for half of the 256 values", () => {
    const ups = Array.from({ length: 256 }, (_, r) =>
      stochasticRoundFp4Te(0x40200000, r)).filter((c) => c === 5).length;
    assert.equal(ups, 128);
  });
  await t.step("exact values stay and the sign is copied", () => {
    for (let r = 0; r < 256; r += 51) assert.equal(stochasticRoundFp4Te(f32Bits(-4), r), 0xe);
  });
});
