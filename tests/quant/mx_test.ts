import assert from "node:assert/strict";
import { Prng } from "../../reference/random/prng.ts";
import { Tensor, toFloat32 } from "../../reference/tensor/mod.ts";
import { mxQuantize, mxReciprocal, mxScaleCode, type MxScaleRule } from "../../reference/quant/mod.ts";

const RULES: MxScaleRule[] = ["floor", "ceil", "even", "rceil"];

// numerics.md §5.3: amax bits → [E4M3 FLOOR/CEIL/EVEN/RCEIL], [E2M1 FLOOR/CEIL/EVEN/RCEIL]
const TABLE: [string, number, number[], number[]][] = [
  ["448", 0x43e00000, [0x7f, 0x80, 0x7f, 0x7f], [0x85, 0x86, 0x86, 0x86]],
  ["500", 0x43fa0000, [0x7f, 0x80, 0x80, 0x80], [0x85, 0x86, 0x86, 0x86]],
  ["255.99998", 0x437fffff, [0x7e, 0x7f, 0x7f, 0x7f], [0x84, 0x85, 0x85, 0x85]],
  ["7", 0x40e00000, [0x79, 0x7a, 0x79, 0x79], [0x7f, 0x80, 0x80, 0x80]],
  ["6", 0x40c00000, [0x79, 0x7a, 0x79, 0x79], [0x7f, 0x80, 0x7f, 0x7f]],
  ["5", 0x40a00000, [0x79, 0x7a, 0x79, 0x79], [0x7f, 0x80, 0x7f, 0x7f]],
  ["3.5", 0x40600000, [0x78, 0x79, 0x78, 0x78], [0x7e, 0x7f, 0x7f, 0x7f]],
  ["3", 0x40400000, [0x78, 0x79, 0x78, 0x78], [0x7e, 0x7f, 0x7e, 0x7e]],
  ["1", 0x3f800000, [0x77, 0x77, 0x77, 0x77], [0x7d, 0x7d, 0x7d, 0x7d]],
  ["0", 0x00000000, [0, 0, 0, 0], [0, 0, 0, 0]],
  ["subnormal 0x00080000", 0x00080000, [0, 0, 0, 0], [0, 0, 0, 0]],
  ["+Inf", 0x7f800000, [0xff, 0xff, 0xff, 0xff], [0xff, 0xff, 0xff, 0xff]],
  ["NaN", 0x7fc00000, [0xff, 0xff, 0xff, 0xff], [0xff, 0xff, 0xff, 0xff]],
];

Deno.test("mxScaleCode()", async (t) => {
  for (const [name, bits, e4m3, e2m1] of TABLE) {
    await t.step(`amax ${name} gives the numerics.md §5.3 codes for E4M3 and E2M1`, () => {
      assert.deepEqual(RULES.map((r) => mxScaleCode(bits, "e4m3", r)), e4m3);
      assert.deepEqual(RULES.map((r) => mxScaleCode(bits, "e2m1", r)), e2m1);
    });
  }
  await t.step("E5M2 uses emax 15", () => assert.equal(mxScaleCode(0x3f800000, "e5m2", "floor"), 127 - 15));
  await t.step("rejects unknown rules and formats", () => {
    assert.throws(() => mxScaleCode(0, "e4m3", "nearest" as MxScaleRule), RangeError);
    assert.throws(() => mxScaleCode(0, "e3m2" as "e4m3", "floor"), RangeError);
  });
});

Deno.test("mxReciprocal()", async (t) => {
  await t.step("is exact from the code, with 254 → 2^-127 and 255 → NaN", () => {
    assert.equal(mxReciprocal(127 + 5), 2 ** -5);
    assert.equal(mxReciprocal(254), 2 ** -127);
    assert.ok(Number.isNaN(mxReciprocal(255)));
  });
});

Deno.test("mxQuantize()", async (t) => {
  const v = new Float32Array(32);
  v.set([7, -3.3, 0.9, 0.26, -0.24, 2.5, 1.25, 0]);
  const x = Tensor.from("f32", [1, 32], v);
  await t.step("MXFP4 FLOOR example of numerics.md §5.3 clips 7 to 6", () => {
    const r = mxQuantize(x, { elem: "e2m1", scaleRule: "floor" });
    assert.deepEqual([...(r.codes.data as Uint8Array).subarray(0, 8)], [7, 0xd, 2, 1, 8, 4, 2, 0]);
  });
  await t.step("MXFP4 RCEIL example of numerics.md §5.3", () => {
    const r = mxQuantize(x, { elem: "e2m1", scaleRule: "rceil" });
    assert.equal(r.sf.at(0, 0), 0x80);
    assert.deepEqual([...(r.codes.data as Uint8Array).subarray(0, 8)], [6, 0xb, 1, 0, 8, 2, 1, 0]);
  });
  await t.step("MXFP8 FLOOR clamps to ±448 before the (non-saturating) torch cast", () => {
    const w = new Float32Array(32);
    w[0] = 500; // FLOOR scale 0x7F (X = 1): 500 → 448, not NaN
    w[1] = -500;
    const r = mxQuantize(Tensor.from("f32", [1, 32], w), { elem: "e4m3", scaleRule: "floor" });
    assert.deepEqual([r.codes.at(0, 0), r.codes.at(0, 1)], [0x7e, 0xfe]);
  });
  await t.step("a NaN in a block gives scale 0xFF and NaN codes for the whole block", () => {
    const w = new Float32Array(64).fill(1);
    w[3] = NaN;
    const r = mxQuantize(Tensor.from("f32", [2, 32], w), { elem: "e4m3" });
    assert.equal(r.sf.at(0, 0), 0xff);
    assert.equal(r.codes.at(0, 5), 0x7f);
    assert.equal(r.sf.at(1, 0), 0x77);
  });
  await t.step("dequant(quant(x)) stays within the element's rounding bound for every rule", () => {
    const rng = new Prng(21);
    const w = new Float32Array(4 * 64).map(() => Math.fround(rng.normal() * 3));
    const xx = Tensor.from("f32", [4, 64], w);
    for (const elem of ["e4m3", "e5m2"] as const) {
      for (const scaleRule of RULES.filter((r) => r !== "floor")) {
        const r = mxQuantize(xx, { elem, scaleRule });
        const vals = toFloat32(r.codes), sc = toFloat32(r.sf);
        const rel = elem === "e4m3" ? 2 ** -4 : 2 ** -3;
        for (let i = 0; i < w.length; i++) {
          const s = sc[Math.floor(i / 32)];
          assert.ok(Math.abs(vals[i] * s - w[i]) <= Math.abs(w[i]) * rel + s * 2 ** -9, `${elem} ${scaleRule} ${i}`);
        }
      }
    }
  });
  await t.step("rejects a last dimension not divisible by the block size", () => {
    assert.throws(() => mxQuantize(Tensor.zeros("f32", [1, 33]), { elem: "e4m3" }), RangeError);
  });
});
