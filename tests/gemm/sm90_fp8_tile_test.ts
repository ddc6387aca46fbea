import assert from "node:assert/strict";
import { makeElement } from "../../reference/kernel_models/element.ts";
import { resolveModel } from "../../reference/kernel_models/kernel_models.ts";
import { sm90Fp8Tile, sm90Fp8TileApplies, TileScratch } from "../../reference/kernel_models/sm90_fp8_tile.ts";
import { operandTable } from "../../reference/tensor_core/operand_tables.ts";
import { GEMM_OPS } from "../../reference/registry.ts";
import { Prng } from "../../reference/random/prng.ts";
import { Tensor } from "../../reference/tensor/tensor.ts";

/** e4m3 codes drawn from the classes that stress the step: zeros, subnormals, the largest values, anything. */
function mixedCodes(r: Prng, n: number, small = false): Uint8Array {
  return Uint8Array.from({ length: n }, () => {
    const s = r.int(2) << 7, cls = small ? r.int(2) * 3 + (r.int(2) ? 0 : 1) : r.int(5);
    const c = cls === 0
      ? 0
      : cls === 1
      ? r.int(8)
      : cls === 2
      ? 0x70 + r.int(15)
      : cls === 3
      ? 0x08 + r.int(8)
      : r.int(127);
    return s | c;
  });
}

/** The generic path's F for one element (f32 output of the same model without C is F itself). */
function genericF(
  model: string,
  a: Uint8Array,
  b: Uint8Array,
  K: number,
  i: number,
  j: number,
  sfa: Float64Array | null,
  sfb: Float64Array | null,
): number {
  const t = operandTable("e4m3");
  const el = makeElement(resolveModel({ model, outDtype: "f32" }), "e4m3", "e4m3");
  const dec = (c: Uint8Array, o: number) => ({
    v: Float64Array.from(c.subarray(o, o + K), (x) => t.values[x]),
    e: Int32Array.from(c.subarray(o, o + K), (x) => t.exps[x]),
  });
  const A = dec(a, i * K), B = dec(b, j * K);
  const sfk = Math.ceil(K / 128);
  const inp = {
    av: A.v,
    ae: A.e,
    bv: B.v,
    be: B.e,
    sfa,
    sfaExp: null,
    sfb,
    sfbExp: null,
    granK: 128,
  };
  return el(inp, 0, 0, K, i * sfk, j * sfk, null);
}

Deno.test("sm90Fp8Tile()", async (t) => {
  const r = new Prng(77);
  for (
    const [R, C, K, model] of [[5, 7, 200, "sm90_1d2d"], [3, 9, 384, "cublaslt"], [2, 4, 32, "sm90_1d1d"]] as const
  ) {
    await t.step(`equals the generic element path bit for bit (${R}×${C}×${K}, ${model})`, () => {
      const a = mixedCodes(r, R * K), b = mixedCodes(r, C * K);
      const sfk = Math.ceil(K / 128);
      const scaled = model !== "cublaslt";
      const sv = (n: number) =>
        Float64Array.from({ length: n }, () => Math.fround((0.25 + r.uniform()) * 2 ** (r.int(41) - 20)));
      const sfa = scaled ? sv(R * sfk) : null, sfb = scaled ? sv(C * sfk) : null;
      const F = new Float64Array(R * C);
      const ok = sm90Fp8Tile(
        a,
        Int32Array.from({ length: R }, (_, i) => i * K),
        b,
        Int32Array.from({ length: C }, (_, j) => j * K),
        K,
        sfa,
        scaled ? Int32Array.from({ length: R }, (_, i) => i * sfk) : null,
        sfb,
        scaled ? Int32Array.from({ length: C }, (_, j) => j * sfk) : null,
        F,
        new TileScratch(),
      );
      assert.equal(ok, true);
      let nonzero = 0;
      for (let i = 0; i < R; i++) {
        for (let j = 0; j < C; j++) {
          const want = genericF(model, a, b, K, i, j, sfa, sfb);
          assert.ok(Object.is(F[i * C + j], want), `element (${i}, ${j}): ${F[i * C + j]} vs ${want}`);
          if (want !== 0) nonzero++;
        }
      }
      assert.ok(nonzero > 0);
    });
  }
  await t.step("zeros facing the largest values never set a step's exponent", () => {
    // A is 0 wherever B is large, and both are small elsewhere: only zero products carry large exponents.
    const K = 64, a = new Uint8Array(K), b = new Uint8Array(K);
    for (let k = 0; k < K; k++) {
      a[k] = k % 2 === 0 ? (r.int(2) << 7) : 1 + r.int(15);
      b[k] = k % 2 === 0 ? 0x70 + r.int(14) : 1 + r.int(15);
    }
    const F = new Float64Array(1);
    sm90Fp8Tile(a, new Int32Array([0]), b, new Int32Array([0]), K, null, null, null, null, F, new TileScratch());
    const want = genericF("cublaslt", a, b, K, 0, 0, null, null);
    assert.ok(want !== 0);
    assert.equal(F[0], want);
  });
  await t.step("reports NaN codes instead of computing them", () => {
    const a = new Uint8Array(32).fill(0x38), b = new Uint8Array(32).fill(0x38);
    a[5] = 0x7f;
    const ok = sm90Fp8Tile(
      a,
      new Int32Array([0]),
      b,
      new Int32Array([0]),
      32,
      null,
      null,
      null,
      null,
      new Float64Array(1),
      new TileScratch(),
    );
    assert.equal(ok, false);
  });
  await t.step("a NaN code falls back to the generic path inside fp8_gemm_nt (NaN row, other rows computed)", () => {
    const K = 128, a = new Uint8Array(2 * K).fill(0x38), b = new Uint8Array(8 * K).fill(0x30);
    a[3] = 0xff;
    const one = Tensor.from("f32", [2, 1], new Float32Array([1, 1]));
    const { d } = GEMM_OPS.fp8_gemm_nt.run(
      {
        a: Tensor.from("e4m3", [2, K], a),
        sfa: one,
        b: Tensor.from("e4m3", [8, K], b),
        sfb: Tensor.from("f32", [1, 1], new Float32Array([1])),
      },
      {},
      {},
    );
    assert.equal(d.at(0, 0), 0x7fff);
    assert.equal(d.at(1, 5), 0x4280); // 128 × 1 × 0.5 = 64
  });
  await t.step("applies only where it is bit-identical", () => {
    const base = { aFormat: "e4m3", bFormat: "e4m3", sfa: new Float64Array(1), granK: 128 };
    assert.equal(sm90Fp8TileApplies({ ...base, model: resolveModel({ model: "sm90_1d2d" }) }), true);
    assert.equal(sm90Fp8TileApplies({ ...base, model: resolveModel({ model: "cublaslt" }) }), true);
    assert.equal(sm90Fp8TileApplies({ ...base, granK: 32, model: resolveModel({ model: "sm90_1d2d" }) }), false);
    assert.equal(
      sm90Fp8TileApplies({ ...base, model: resolveModel({ model: "sm90_1d2d", promotion: "none" }) }),
      false,
    );
    assert.equal(
      sm90Fp8TileApplies({ ...base, model: resolveModel({ model: "sm90_1d2d", tensorCore: "ada_mma_fp8" }) }),
      false,
    );
    assert.equal(sm90Fp8TileApplies({ ...base, bFormat: "e2m1", model: resolveModel({ model: "sm90_1d2d" }) }), false);
    assert.equal(sm90Fp8TileApplies({ ...base, model: resolveModel({ model: "exact" }) }), false);
  });
});
