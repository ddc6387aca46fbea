import assert from "node:assert/strict";
import { bf16Rne, f32Bits } from "../../reference/fp32.ts";
import { Prng } from "../../reference/random/prng.ts";
import { Tensor, toFloat32 } from "../../reference/tensor/mod.ts";
import {
  castBackFromFp8,
  perBlockCastToFp8,
  perChannelCastToFp8,
  perCustomDimsCastToFp8,
  perTokenCastToFp8,
} from "../../reference/quant/mod.ts";
import { fastEncoder } from "../../reference/quant/_fast_encode.ts";
import { slowBlockCast, torchE4m3 } from "./_slow_reference.ts";

function randomBf16(rng: Prng, m: number, n: number, scale = 1): Tensor {
  const b = new Uint16Array(m * n);
  for (let i = 0; i < b.length; i++) b[i] = bf16Rne(rng.normal() * scale * (rng.int(8) === 0 ? 100 : 1));
  return Tensor.from("bf16", [m, n], b);
}

Deno.test("perTokenCastToFp8()", async (t) => {
  const rng = new Prng(2026);
  await t.step("matches the slow re-implementation on random BF16 (gran 32/128, ue8m0 on/off, gpu/cpu)", () => {
    for (const [m, n] of [[3, 257], [5, 128], [2, 1000]]) {
      const x = randomBf16(rng, m, n);
      const vals = toFloat32(x);
      for (const granK of [32, 128]) {
        for (const useUe8m0 of [false, true]) {
          for (const semantics of ["gpu", "cpu"] as const) {
            const got = perTokenCastToFp8(x, { useUe8m0, granK, semantics });
            const want = slowBlockCast(vals, m, n, 1, granK, 448, useUe8m0, semantics === "gpu", torchE4m3);
            assert.deepEqual([...(got.q.data as Uint8Array)], want.codes);
            assert.deepEqual([...(got.sf.data as Float32Array)], want.sf);
            assert.deepEqual(got.sf.shape, [m, Math.ceil(n / granK)]);
          }
        }
      }
    }
  });
  await t.step("an all-zero group gets amax 1e-4, i.e. the UE8M0 scale 2^-22 (byte 105)", () => {
    const { q, sf } = perTokenCastToFp8(Tensor.zeros("bf16", [1, 256]), { useUe8m0: true });
    assert.deepEqual([...(sf.data as Float32Array)], [2 ** -22, 2 ** -22]);
    assert.equal(f32Bits(sf.at(0, 0)) >>> 23, 105);
    assert.ok((q.data as Uint8Array).every((c) => c === 0));
  });
  await t.step("packs UE8M0 scales 4 per int32 when the group count allows", () => {
    const { sf } = perTokenCastToFp8(Tensor.zeros("bf16", [1, 512]), { useUe8m0: true, usePackedUe8m0: true });
    assert.deepEqual(sf.shape, [1, 1]);
    assert.equal(sf.at(0, 0), 0x69696969);
  });
  await t.step("refuses to pack a group count that is not a multiple of 4", () => {
    assert.throws(
      () => perTokenCastToFp8(Tensor.zeros("bf16", [1, 256]), { useUe8m0: true, usePackedUe8m0: true }),
      RangeError,
    );
  });
  await t.step("fp32 scales of an all-zero group: 1e-4 · fl32(1/448) on a GPU", () => {
    const { sf } = perTokenCastToFp8(Tensor.zeros("f32", [1, 4]), { useUe8m0: false });
    assert.equal(sf.at(0, 0), Math.fround(Math.fround(1e-4) * Math.fround(1 / 448)));
  });
  await t.step("GPU and CPU scales differ where the reciprocal multiply loses a bit (amax 1 + 2^-9)", () => {
    const x = Tensor.from("f32", [1, 1], new Float32Array([1 + 2 ** -9]));
    const g = perTokenCastToFp8(x, { useUe8m0: false, semantics: "gpu" }).sf.at(0, 0);
    const c = perTokenCastToFp8(x, { useUe8m0: false, semantics: "cpu" }).sf.at(0, 0);
    assert.equal(f32Bits(g) - f32Bits(c), 1);
  });
  await t.step("a NaN makes its whole group NaN (0x7F) with fp32 scales; other groups are untouched", () => {
    const v = new Float32Array(8).fill(1);
    v[1] = NaN;
    const { q, sf } = perTokenCastToFp8(Tensor.from("f32", [1, 8], v), { useUe8m0: false, granK: 4 });
    assert.deepEqual([...(q.data as Uint8Array)].slice(0, 4), [0x7f, 0x7f, 0x7f, 0x7f]);
    assert.ok(Number.isNaN(sf.at(0, 0)));
    assert.equal(q.at(0, 4), torchE4m3(f32Bits(Math.fround(1 * Math.fround(1 / sf.at(0, 1))))));
  });
  await t.step("with UE8M0 a NaN group gets scale 2^127 and only the NaN element stays NaN", () => {
    const v = new Float32Array([NaN, 3, -3, 0]);
    const { q, sf } = perTokenCastToFp8(Tensor.from("f32", [1, 4], v), { useUe8m0: true, granK: 4 });
    assert.equal(sf.at(0, 0), 2 ** 127);
    assert.deepEqual([...(q.data as Uint8Array)], [0x7f, 0x00, 0x80, 0x00]);
  });
  await t.step("an Inf input gives sf = Inf and NaN codes (Inf · 0) with fp32 scales", () => {
    const { q } = perTokenCastToFp8(Tensor.from("f32", [1, 2], new Float32Array([Infinity, 1])), { useUe8m0: false });
    assert.equal(q.at(0, 0), 0x7f);
    assert.equal(q.at(0, 1), 0x00);
  });
  await t.step("on CPU semantics Inf · 0 is the x86 default NaN, which torch casts to 0xFF", () => {
    const { q } = perTokenCastToFp8(Tensor.from("f32", [1, 1], new Float32Array([-Infinity])), {
      useUe8m0: false,
      semantics: "cpu",
    });
    assert.equal(q.at(0, 0), 0xff);
  });
  await t.step("rejects a rank other than 2 and missing options", () => {
    assert.throws(() => perTokenCastToFp8(Tensor.zeros("bf16", [4]), { useUe8m0: false }), TypeError);
    assert.throws(() => perTokenCastToFp8(Tensor.zeros("bf16", [1, 4]), undefined as never), TypeError);
    assert.throws(() => perTokenCastToFp8(Tensor.zeros("bf16", [1, 4]), { useUe8m0: false, granK: 0 }), RangeError);
  });
  await t.step("the E4M3 profile is selectable (satfinite vs torch on an Inf product)", () => {
    const x = Tensor.from("f32", [1, 2], new Float32Array([Infinity, 1]));
    const { q } = perTokenCastToFp8(x, { useUe8m0: true, e4m3Profile: "cuda_satfinite" });
    assert.equal(q.at(0, 0), 0x7e); // Inf · 2^-127 = Inf → satfinite 448
    assert.equal(perTokenCastToFp8(x, { useUe8m0: true }).q.at(0, 0), 0x7f);
  });
});

Deno.test("E4M3 cast inside the quantizers (torch_2_11)", async (t) => {
  const f = fastEncoder("torch_2_11", "e4m3");
  const enc = (bits: number) => (f.table[bits >>> 16] >= 0 ? f.table[bits >>> 16] : f.encode(bits));
  await t.step("rounds the tie at 464 down to 448", () => assert.equal(enc(0x43e80000), 0x7e));
  await t.step("sends (464, 480) and 480 to NaN, keeping the sign", () => {
    assert.equal(enc(0x43e80001), 0x7f);
    assert.equal(enc(0x43f00000), 0x7f);
    assert.equal(enc(0xc3e80001), 0xff);
    assert.equal(enc(0xc3e80000), 0xfe);
  });
  await t.step("the lookup table agrees with the converter on 200000 random patterns", () => {
    const rng = new Prng(5);
    for (let i = 0; i < 200000; i++) {
      const b = rng.nextU32();
      assert.equal(enc(b), torchE4m3(b));
    }
  });
});

Deno.test("perChannelCastToFp8()", async (t) => {
  const rng = new Prng(11);
  await t.step("matches the slow re-implementation (groups of granK rows per column)", () => {
    const x = randomBf16(rng, 256, 33);
    for (const useUe8m0 of [false, true]) {
      const got = perChannelCastToFp8(x, { useUe8m0 });
      const want = slowBlockCast(toFloat32(x), 256, 33, 128, 1, 448, useUe8m0, true, torchE4m3);
      assert.deepEqual([...(got.q.data as Uint8Array)], want.codes);
      assert.deepEqual([...(got.sf.data as Float32Array)], want.sf);
      assert.deepEqual(got.sf.shape, [2, 33]);
    }
  });
  await t.step("rejects m % granK != 0 with a RangeError", () => {
    assert.throws(() => perChannelCastToFp8(Tensor.zeros("bf16", [100, 4]), { useUe8m0: true }), /multiple of granK/);
  });
});

Deno.test("perBlockCastToFp8()", async (t) => {
  const rng = new Prng(12);
  await t.step("matches the slow re-implementation with partial tiles", () => {
    const x = randomBf16(rng, 130, 200);
    for (const useUe8m0 of [false, true]) {
      const got = perBlockCastToFp8(x, { useUe8m0 });
      const want = slowBlockCast(toFloat32(x), 130, 200, 128, 128, 448, useUe8m0, true, torchE4m3);
      assert.deepEqual([...(got.q.data as Uint8Array)], want.codes);
      assert.deepEqual([...(got.sf.data as Float32Array)], want.sf);
      assert.deepEqual(got.sf.shape, [2, 2]);
    }
  });
  await t.step("accepts a transposed (non-contiguous) view", () => {
    const x = randomBf16(rng, 64, 48);
    const a = perBlockCastToFp8(x.transpose(), { useUe8m0: true, granK: 32 });
    const b = perBlockCastToFp8(x.transpose().contiguous(), { useUe8m0: true, granK: 32 });
    assert.deepEqual(a.q.data, b.q.data);
  });
});

Deno.test("perCustomDimsCastToFp8()", async (t) => {
  await t.step("dims [0] on kv[seq, d] gives one scale per token, like per-token with granK = d", () => {
    const x = randomBf16(new Prng(3), 6, 64);
    const a = perCustomDimsCastToFp8(x, [0], { useUe8m0: false });
    const b = perTokenCastToFp8(x, { useUe8m0: false, granK: 64 });
    assert.deepEqual(a.q.data, b.q.data);
    assert.deepEqual([...(a.sf.data as Float32Array)], [...(b.sf.data as Float32Array)]);
    assert.deepEqual(a.sf.shape, [6]);
  });
  await t.step("reduces over a middle dimension of a 3-D tensor", () => {
    const v = new Float32Array(2 * 3 * 2);
    v[1 * 6 + 2 * 2 + 1] = 448; // element (1, 2, 1)
    const { sf } = perCustomDimsCastToFp8(Tensor.from("f32", [2, 3, 2], v), [0, 2], {
      useUe8m0: false,
      semantics: "cpu",
    });
    assert.deepEqual(sf.shape, [2, 2]);
    assert.equal(sf.at(1, 1), 1);
  });
  await t.step("rejects a dimension out of range", () => {
    assert.throws(() => perCustomDimsCastToFp8(Tensor.zeros("f32", [2]), [1], { useUe8m0: false }), RangeError);
  });
});

Deno.test("castBackFromFp8()", async (t) => {
  await t.step("dequant(quant(x)) is within half an E4M3 ulp (2^-4 relative) plus the subnormal step", () => {
    const x = randomBf16(new Prng(9), 16, 256);
    for (const useUe8m0 of [false, true]) {
      const { q, sf } = perTokenCastToFp8(x, { useUe8m0 });
      const y = toFloat32(castBackFromFp8(q, sf, 1, 128));
      const v = toFloat32(x);
      for (let i = 0; i < v.length; i++) {
        const s = sf.at(Math.floor(i / 256), Math.floor((i % 256) / 128));
        assert.ok(Math.abs(y[i] - v[i]) <= Math.abs(v[i]) * 2 ** -4 + s * 2 ** -10, `element ${i}: ${v[i]} → ${y[i]}`);
      }
    }
  });
  await t.step("reads packed UE8M0 scales", () => {
    const x = randomBf16(new Prng(10), 2, 512);
    const a = perTokenCastToFp8(x, { useUe8m0: true });
    const b = perTokenCastToFp8(x, { useUe8m0: true, usePackedUe8m0: true });
    assert.deepEqual(castBackFromFp8(a.q, a.sf, 1, 128).data, castBackFromFp8(b.q, b.sf, 1, 128, true).data);
  });
  await t.step("rejects scales that do not cover q", () => {
    assert.throws(
      () => castBackFromFp8(Tensor.zeros("e4m3", [2, 256]), Tensor.zeros("f32", [2, 1]), 1, 128),
      RangeError,
    );
  });
});
