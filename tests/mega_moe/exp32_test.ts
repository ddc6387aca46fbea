import assert from "node:assert/strict";
import { exp2F32, expF32 } from "../../reference/mega_moe/mod.ts";
import { bf16ToF32, f32Bits, f32FromBits } from "../../reference/fp32.ts";

// Math.exp / ** appear only here, as an independent check: fround of V8's double result is the correctly rounded fp32
// value unless the double lands within its own error of an fp32 midpoint (the sweep found no such input).
Deno.test("expF32()", async (t) => {
  await t.step("is correctly rounded for every bf16 argument (exhaustive, 65,280 finite values)", () => {
    let n = 0;
    for (let b = 0; b < 0x10000; b++) {
      const x = bf16ToF32(b);
      if (!Number.isFinite(x)) continue;
      assert.ok(Object.is(expF32(x), Math.fround(Math.exp(x))), `exp(${x})`);
      n++;
    }
    assert.equal(n, 65280);
  });

  await t.step("matches published fp32 values", () => {
    assert.equal(f32Bits(expF32(1)), 0x402df854);
    assert.equal(f32Bits(expF32(-1)), 0x3ebc5ab2);
    assert.equal(f32Bits(expF32(10)), 0x46ac14ee);
  });

  await t.step("overflows to +Inf above ln(FLT_MAX·(1 + 2^-24)) and underflows through subnormals to 0", () => {
    const big = f32FromBits(0x42b17217); // largest fp32 whose exp is finite
    assert.ok(expF32(big) < Infinity && expF32(big) === Math.fround(Math.exp(big)));
    assert.equal(expF32(f32FromBits(0x42b17218)), Infinity);
    const sub = expF32(-103);
    assert.ok(sub > 0 && sub < 2 ** -126 && sub === Math.fround(Math.exp(-103)));
    assert.equal(expF32(-103.98), 0);
    assert.ok(Number.isNaN(expF32(NaN)));
  });
});

Deno.test("exp2F32()", async (t) => {
  await t.step("is correctly rounded on a sweep of fp32 arguments", () => {
    for (let i = -4000; i <= 4000; i++) {
      const y = Math.fround(i * 0.0318);
      assert.ok(Object.is(exp2F32(y), Math.fround(2 ** y)), `2^${y}`);
    }
  });

  await t.step("is exact on integers and rounds 2^-150 to 0 (ties to even)", () => {
    assert.equal(exp2F32(-126), 2 ** -126);
    assert.equal(exp2F32(-149), 2 ** -149);
    assert.equal(exp2F32(-150), 0);
    assert.equal(exp2F32(128), Infinity);
  });
});
