import assert from "node:assert/strict";
import { makeElement } from "../../reference/kernel_models/element.ts";
import { exactTile, exactTileApplies } from "../../reference/kernel_models/exact_tile.ts";
import { resolveModel } from "../../reference/kernel_models/kernel_models.ts";
import { TileScratch } from "../../reference/kernel_models/sm90_fp8_tile.ts";
import { type OperandFormat, operandTable } from "../../reference/tensor_core/operand_tables.ts";
import { Prng } from "../../reference/random/prng.ts";

Deno.test("exactTile()", async (t) => {
  const r = new Prng(5);
  const cases = [
    ["e4m3", "e4m3", true, 6, 7, 300, "bf16", true],
    ["e2m1", "e4m3", true, 3, 5, 96, "f32", false],
    ["e4m3", "e4m3", false, 5, 4, 200, "f32", true],
  ] as const;
  for (const [fa, fb, scaled, R, C, K, out, withC] of cases) {
    await t.step(`equals the generic exact element (${fa}×${fb}, ${scaled ? "scaled" : "no scales"}, ${out})`, () => {
      const gran = fa === "e2m1" ? 32 : 128, G = Math.ceil(K / gran);
      const codes = (f: string, n: number) =>
        Uint8Array.from({ length: n }, () => {
          const c = r.int(f === "e2m1" ? 16 : 256);
          return f === "e4m3" && (c & 0x7f) === 0x7f ? 0x7e : c;
        });
      const a = codes(fa, R * K), b = codes(fb, C * K);
      const sv = (n: number) =>
        Float64Array.from({ length: n }, () => Math.fround((0.5 + r.uniform()) * 2 ** (r.int(61) - 30)));
      const sfa = scaled ? sv(R * G) : null, sfb = scaled ? sv(C * G) : null;
      const c = withC
        ? Float64Array.from({ length: R * C }, () => Math.fround((r.uniform() - 0.5) * 2 ** (r.int(20) - 5)))
        : null;
      const res = new Float64Array(R * C);
      const aOff = Int32Array.from({ length: R }, (_, i) => i * K),
        bOff = Int32Array.from({ length: C }, (_, j) => j * K);
      exactTile(
        fa,
        fb,
        a,
        aOff,
        b,
        bOff,
        K,
        sfa,
        scaled ? Int32Array.from({ length: R }, (_, i) => i * G) : null,
        sfb,
        scaled ? Int32Array.from({ length: C }, (_, j) => j * G) : null,
        gran,
        c,
        out,
        res,
        new TileScratch(),
      );
      const el = makeElement(resolveModel({ model: "exact", outDtype: out }), fa, fb);
      const dec = (f: string, x: Uint8Array) => Float64Array.from(x, (q) => operandTable(f as OperandFormat).values[q]);
      const inp = {
        av: dec(fa, a),
        ae: new Int32Array(R * K),
        bv: dec(fb, b),
        be: new Int32Array(C * K),
        sfa,
        sfaExp: null,
        sfb,
        sfbExp: null,
        granK: gran,
      };
      for (let i = 0; i < R; i++) {
        for (let j = 0; j < C; j++) {
          const want = el(inp, i * K, j * K, K, i * G, j * G, c ? c[i * C + j] : null);
          assert.ok(Object.is(res[i * C + j], want), `element (${i}, ${j}): ${res[i * C + j]} vs ${want}`);
        }
      }
    });
  }
  await t.step("applies to e4m3/e2m1 only, and unscaled only while a dot product stays exact", () => {
    assert.equal(exactTileApplies("e4m3", "e4m3", false, 65536), true);
    assert.equal(exactTileApplies("e4m3", "e4m3", false, 65537), false);
    assert.equal(exactTileApplies("bf16", "bf16", true, 128), false);
  });
});
