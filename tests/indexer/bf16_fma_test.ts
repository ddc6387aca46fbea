import assert from "node:assert/strict";
import { bf16Add, bf16Fma, bf16Mul } from "../../reference/indexer/bf16_fma.ts";
import { bf16ToF32 } from "../../reference/fp32.ts";
import { Prng } from "../../reference/random/prng.ts";
import { slowBf16Fma } from "./_fp4_slow.ts";

/** A random finite bf16 value with exponent in [lo, hi] (subnormals included at the bottom). */
function randomBf16(rng: Prng, lo: number, hi: number): number {
  const e = lo + rng.int(hi - lo + 1), m = rng.int(128), s = rng.int(2);
  const v = e < -126 ? m * 2 ** -133 : (1 + m / 128) * 2 ** e;
  return s ? -v : v;
}

Deno.test("bf16Fma()", async (t) => {
  await t.step("rounds a·b + c once: 20,000 random triples equal the BigInt path", () => {
    const rng = new Prng(2026);
    for (let n = 0; n < 20000; n++) {
      const a = randomBf16(rng, -140, 50), b = randomBf16(rng, -140, 50);
      const c = rng.int(4) === 0
        ? randomBf16(rng, -140, 127)
        : a * b * (1 + rng.int(64) / 64) * 2 ** (rng.int(40) - 20);
      const cb = bf16ToF32(bf16Fma(c, 1, 0)); // c itself must be a bf16 value
      const got = bf16ToF32(bf16Fma(a, b, cb)), want = slowBf16Fma(a, b, cb);
      assert.ok(got === want, `bf16_fma(${a}, ${b}, ${cb}) = ${got}, BigInt ${want}`);
    }
  });

  await t.step("keeps a far-away addend as a sticky bit (1 + 2^-8 + 2^-60 rounds up, not to even)", () => {
    assert.equal(bf16Fma(1 + 2 ** -7, 1 + 2 ** -7, -(2 ** -6)), 0x3f80); // 1 + 2^-14 → 1
    assert.equal(bf16Fma(1 + 2 ** -8, 1, 2 ** -60), 0x3f81);
    assert.equal(bf16Fma(1 + 2 ** -8, 1, -(2 ** -60)), 0x3f80);
    assert.equal(bf16Fma(-(1 + 2 ** -8), 1, -(2 ** -60)), 0xbf81);
  });

  await t.step("gives subnormal bf16 results and overflows to ±Inf", () => {
    assert.equal(bf16ToF32(bf16Fma(2 ** -70, 2 ** -70, 0)), 0); // below half the smallest subnormal
    assert.equal(bf16ToF32(bf16Fma(2 ** -67, 3 * 2 ** -67, 0)), 2 ** -132); // 1.5·2^-133 ties up to the even 2^-132
    assert.equal(bf16Fma(-(2 ** 70), 2 ** 70, 0), 0xff80);
    assert.equal(bf16Fma(NaN, 1, 0), 0x7fff);
  });

  await t.step("bf16Add and bf16Mul are the single-rounded sum and product", () => {
    assert.equal(bf16Add(1, 2 ** -8), 1); // tie to even
    assert.equal(bf16Add(1 + 2 ** -7, 2 ** -8), 1 + 2 ** -6); // tie to even (up)
    assert.equal(bf16Mul(3, 1 + 2 ** -7), 3 + 2 ** -5); // 3 + 1.5·2^-6: a tie, to the even 3 + 2^-5
    assert.equal(bf16Mul(3, 1 + 2 ** -6), 3 + 3 * 2 ** -6); // exact: on the bf16 grid of [2, 4)
  });
});
