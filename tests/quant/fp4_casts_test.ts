import assert from "node:assert/strict";
import { bf16Rne, f32Bits } from "../../reference/fp32.ts";
import { getConverter } from "../../reference/formats/mod.ts";
import { Prng } from "../../reference/random/prng.ts";
import { Tensor, toFloat32 } from "../../reference/tensor/mod.ts";
import {
  castBackFromFp4,
  packFp4,
  perTokenCastToFp4,
  transposePackedFp4,
  unpackFp4,
} from "../../reference/quant/mod.ts";
import { deepgemmFp4, slowBlockCast } from "./_slow_reference.ts";

/** Codes of y with sf = 1: amax 6 in the row makes sf = 6 · fl32(1/6) = 1 exactly. */
function codesAtUnitScale(ys: number[]): number[] {
  const x = Tensor.from("f32", [1, ys.length + 2], new Float32Array([6, 0, ...ys]));
  const { q } = perTokenCastToFp4(x, { useUe8m0: false, granK: ys.length + 2 });
  return [...(unpackFp4(q).data as Uint8Array)].slice(2);
}

Deno.test("perTokenCastToFp4()", async (t) => {
  await t.step("rounds the ties 0.75, 1.75 and 3.5 toward zero (not to even)", () => {
    assert.deepEqual(codesAtUnitScale([0.75, 1.75, 3.5, -0.75]), [0x1, 0x3, 0x5, 0x9]);
  });
  await t.step("rounds the ties 0.25, 1.25, 2.5 and 5 toward zero too (same as RNE there)", () => {
    assert.deepEqual(codesAtUnitScale([0.25, 1.25, 2.5, 5]), [0x0, 0x2, 0x4, 0x6]);
  });
  await t.step("rounds just above a tie up and saturates above 5", () => {
    const up = (v: number) => Math.fround(v) + Math.fround(v) * 2 ** -23;
    assert.deepEqual(codesAtUnitScale([up(0.75), up(3.5), 5.5, -up(1.75)]), [0x2, 0x6, 0x7, 0xc]);
  });
  await t.step("never writes −0, and a NaN gives code 0", () => {
    assert.deepEqual(codesAtUnitScale([-0.1, -0, NaN, -6]).slice(0, 2), [0x0, 0x0]);
    const x = Tensor.from("f32", [1, 4], new Float32Array([6, NaN, 1, 0]));
    assert.equal(unpackFp4(perTokenCastToFp4(x, { useUe8m0: true, granK: 2 }).q).at(0, 1), 0);
  });
  await t.step("an all-zero group gets the UE8M0 scale 2^-15", () => {
    const { sf } = perTokenCastToFp4(Tensor.zeros("bf16", [1, 128]), { useUe8m0: true });
    assert.equal(sf.at(0, 0), 2 ** -15);
  });
  await t.step("packed scales are padded with byte 127 (1.0) to a multiple of 4", () => {
    const x = Tensor.from("f32", [1, 64], new Float32Array(64).fill(3));
    const { sf } = perTokenCastToFp4(x, { useUe8m0: true, granK: 32, usePackedUe8m0: true });
    assert.deepEqual(sf.shape, [1, 1]);
    assert.equal(sf.at(0, 0), 0x7f7f7e7e); // fl32(3 · fl32(1/6)) = 0.5 → byte 126 twice, then the 127 padding
  });
  await t.step("matches the literal threshold transcription on random BF16 rows", () => {
    const rng = new Prng(77);
    const m = 4, n = 160;
    const b = new Uint16Array(m * n).map(() => bf16Rne(rng.normal() * 3));
    const x = Tensor.from("bf16", [m, n], b);
    for (const useUe8m0 of [false, true]) {
      for (const semantics of ["gpu", "cpu"] as const) {
        const got = perTokenCastToFp4(x, { useUe8m0, granK: 32, semantics });
        const want = slowBlockCast(toFloat32(x), m, n, 1, 32, 6, useUe8m0, semantics === "gpu", (bits) => {
          const f = new Float32Array(new Uint32Array([bits]).buffer)[0];
          return deepgemmFp4(f);
        });
        assert.deepEqual([...(unpackFp4(got.q).data as Uint8Array)], want.codes);
        assert.deepEqual([...(got.sf.data as Float32Array)], want.sf);
      }
    }
  });
  await t.step("the deepgemm_fp4 profile equals the literal transcription on 100000 random fp32 values", () => {
    const enc = getConverter("deepgemm_fp4", "e2m1");
    const rng = new Prng(78);
    const f = new Float32Array(1);
    for (let i = 0; i < 100000; i++) {
      f[0] = (rng.uniform() - 0.5) * 16;
      assert.equal(enc(f32Bits(f[0])), deepgemmFp4(f[0]));
    }
  });
  await t.step("rejects odd n, packing without UE8M0 and a wrong rank", () => {
    assert.throws(() => perTokenCastToFp4(Tensor.zeros("bf16", [1, 3]), { useUe8m0: true }), /odd/);
    assert.throws(
      () => perTokenCastToFp4(Tensor.zeros("bf16", [1, 4]), { useUe8m0: false, usePackedUe8m0: true }),
      TypeError,
    );
    assert.throws(() => perTokenCastToFp4(Tensor.zeros("bf16", [1, 2, 2]), { useUe8m0: true }), TypeError);
  });
});

Deno.test("transposePackedFp4()", async (t) => {
  const rng = new Prng(4);
  const codes = Tensor.from("e2m1", [6, 10], Uint8Array.from({ length: 60 }, () => rng.int(16)));
  const packed = packFp4(codes);
  await t.step("equals packing the transposed codes", () => {
    assert.deepEqual(transposePackedFp4(packed).data, packFp4(codes.transpose().contiguous()).data);
    assert.deepEqual(transposePackedFp4(packed).shape, [10, 3]);
  });
  await t.step("applied twice is the identity", () => {
    assert.deepEqual(transposePackedFp4(transposePackedFp4(packed)).data, packed.data);
  });
  await t.step("rejects an odd m", () => {
    assert.throws(() => transposePackedFp4(Tensor.zeros("i8", [3, 2])), RangeError);
  });
});

Deno.test("packFp4()", async (t) => {
  await t.step("round-trips with unpackFp4 for every pair of codes", () => {
    const all = Tensor.from(
      "e2m1",
      [256, 2],
      Uint8Array.from({ length: 512 }, (_, i) => (i % 2 ? i >> 5 : (i >> 1) & 15)),
    );
    assert.deepEqual(unpackFp4(packFp4(all)).data, all.data);
  });
});

Deno.test("castBackFromFp4()", async (t) => {
  await t.step("dequant(quant(x)) is within half an E2M1 step of the scaled value", () => {
    const rng = new Prng(8);
    const v = new Float32Array(2 * 256).map(() => Math.fround(rng.normal()));
    const x = Tensor.from("f32", [2, 256], v);
    for (const usePackedUe8m0 of [false, true]) {
      const { q, sf } = perTokenCastToFp4(x, { useUe8m0: true, usePackedUe8m0 });
      const y = toFloat32(castBackFromFp4(q, sf, 128, usePackedUe8m0));
      const s = toFloat32(usePackedUe8m0 ? perTokenCastToFp4(x, { useUe8m0: true }).sf : sf);
      for (let i = 0; i < v.length; i++) {
        const sc = s[Math.floor(i / 256) * 2 + Math.floor((i % 256) / 128)];
        assert.ok(Math.abs(y[i] - v[i]) <= sc, `element ${i}`); // largest gap of E2M1 is 2 → half is 1 · sc
      }
    }
  });
});
