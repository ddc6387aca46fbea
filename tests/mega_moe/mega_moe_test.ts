import assert from "node:assert/strict";
import {
  interleaveGateUp,
  megaMoe,
  megaMoeUnfused,
  requantPer32,
  siluOfBf16,
  swiglu,
  transformWeightsForMegaMoe,
  transposeSfForUtccp,
} from "../../reference/mega_moe/mod.ts";
import { bf16ToF32, f32Bits } from "../../reference/fp32.ts";
import { Tensor } from "../../reference/tensor/tensor.ts";
import { moeBf16Case as bf16Case, moeFp8Case as fp8Case } from "../../reference/cases/moe_builders.ts";

const T = 5, E = 4, K = 3;
// Token 2: all slots unused; token 3: expert 1 twice; token 4: one unused slot in the middle.
const IDX = [0, 1, 2, 3, 2, 0, -1, -1, -1, 1, 1, 3, 2, -1, 0];

function equalBits(a: Tensor, b: Tensor): boolean {
  return a.data.length === b.data.length && a.data.every((v, i) => v === b.data[i]);
}

Deno.test("megaMoe()", async (t) => {
  for (const clamp of [undefined, 10]) {
    for (const fastMath of [true, false]) {
      await t.step(
        `FP8×FP4: fused equals the composed pipeline bit for bit (clamp ${clamp}, fast_math ${fastMath})`,
        () => {
          const c = fp8Case(1, T, E, K, IDX);
          const fused = megaMoe(c, { clamp, fastMath }), ref = megaMoeUnfused(c, { clamp, fastMath });
          assert.ok(equalBits(fused.y, ref.y));
          assert.ok(equalBits(fused.recv_stats, ref.recv_stats));
          assert.ok((fused.y.data as Uint16Array).some((v) => v !== 0));
        },
      );
    }
  }

  await t.step("the clamp changes the result (and the bf16 constant is what clamps)", () => {
    const c = fp8Case(1, T, E, K, IDX);
    assert.ok(!equalBits(megaMoe(c, { clamp: 0.5 }).y, megaMoe(c).y));
    // 10.3 → bf16 10.3125: u = 20 clamps to 10.3125, not to 10.3.
    const a = swiglu(new Float32Array([20, 20]), 1, { clamp: 10.3 });
    const g = 10.3125;
    assert.equal(a[0], Math.fround(siluOfBf16(g, "fast", "correctly_rounded") * g));
  });

  await t.step("gives +0 to a token whose experts are all −1", () => {
    const r = megaMoe(fp8Case(1, T, E, K, IDX));
    for (let n = 0; n < 128; n++) assert.equal(r.y.at(2, n), 0);
  });

  await t.step("counts each routed (token, slot), duplicates included, on top of the incoming statistics", () => {
    const r = megaMoe(fp8Case(1, T, E, K, IDX));
    // expert 0: t0, t1, t4; expert 1: t0, t3 ×2; expert 2: t0, t1, t4; expert 3: t1, t3.
    assert.deepEqual(Array.from(r.recv_stats.data as Int32Array), [0 + 3, 10 + 3, 20 + 3, 30 + 2]);
  });

  await t.step("a duplicated expert contributes twice in slot order", () => {
    const c = fp8Case(1, T, E, K, IDX);
    const once = megaMoe({
      ...c,
      topk_idx: Tensor.from("i64", [T, K], BigInt64Array.from(IDX.map((v, i) => i === 10 ? -1 : v), BigInt)),
    });
    assert.ok(!equalBits(once.y, megaMoe(c).y));
  });

  await t.step("BF16 variant: fused equals the composed pipeline bit for bit", () => {
    const c = bf16Case(2, T, E, K, IDX);
    for (const clamp of [undefined, 1]) {
      const fused = megaMoe(c, { clamp }), ref = megaMoeUnfused(c, { clamp });
      assert.ok(equalBits(fused.y, ref.y));
      assert.ok((fused.y.data as Uint16Array).some((v) => v !== 0));
    }
  });

  await t.step("accepts packed int32 scales equal to the byte form", () => {
    const c = fp8Case(3, 2, 2, 1, [1, 0]);
    const pack = (s: Tensor) => {
      const b = (s.data as Uint8Array).slice();
      return Tensor.from("i32", [...s.shape.slice(0, -1), s.shape[s.ndim - 1] / 4], new Int32Array(b.buffer));
    };
    const r1 = megaMoe(c), r2 = megaMoe({ ...c, x_sf: pack(c.x_sf), l1_sf: pack(c.l1_sf), l2_sf: pack(c.l2_sf) });
    assert.ok(equalBits(r1.y, r2.y));
  });

  await t.step("rejects bad input naming the rule", () => {
    const c = fp8Case(1, T, E, K, IDX);
    assert.throws(
      () => megaMoe({ ...c, l1: Tensor.zeros("bf16", [E, 256, 128]) }),
      /l1 weights must be 3-D packed FP4/,
    );
    assert.throws(
      () => megaMoe({ ...c, x: Tensor.zeros("e4m3", [T, 96]), x_sf: Tensor.zeros("u8", [T, 3]) }),
      /hidden must be a multiple of 128/,
    );
    assert.throws(
      () =>
        megaMoe({
          ...c,
          topk_idx: Tensor.from(
            "i64",
            [T, K],
            BigInt64Array.from(IDX.map((v) => v === 3 ? 4 : v), BigInt),
          ),
        }),
      /outside \[-1, 4\)/,
    );
    assert.throws(() => megaMoe({ ...c, l2_sf: Tensor.zeros("u8", [E, 128, 3]) }), /l2_sf must be UE8M0 bytes/);
    assert.throws(() => megaMoe({ ...c, x_sf: undefined }), /x_sf is required/);
    assert.throws(() => megaMoe({ ...c, x: Tensor.zeros("f32", [T, 128]) }), TypeError);
    const wide = Tensor.zeros("i64", [T, 33]);
    assert.throws(
      () => megaMoe({ ...c, topk_idx: wide, topk_weights: Tensor.zeros("f32", [T, 33]) }),
      /topk must be ≤ 32/,
    );
  });
});

Deno.test("requantPer32()", async (t) => {
  await t.step("takes the smallest power of two ≥ fl32(amax·fl32(1/448)) as the scale, without a 1e-4 floor", () => {
    const C = Math.fround(1 / 448);
    for (const amax of [1e-30, 1e-6, 0.3, 1, 447.99, 448, 448.01, 3e5]) {
      const a = new Float32Array(32);
      a[7] = -amax;
      const { sf } = requantPer32(a);
      const scaled = Math.fround(Math.fround(amax) * C);
      let p = 2 ** -127, e = -127; // slow path: double until ≥ scaled
      while (p < scaled) p *= 2, e++;
      assert.equal(sf[0], e + 127, `amax ${amax}`);
    }
  });

  await t.step("writes byte 0 and zero codes for an all-zero group", () => {
    const { codes, sf } = requantPer32(new Float32Array(32));
    assert.equal(sf[0], 0);
    assert.ok(codes.every((c) => c === 0));
  });

  await t.step(
    "follows the exponent-bit arithmetic for an infinite amax: sf = Inf, sf_inv wraps to −Inf, −448 saturated",
    () => {
      const a = new Float32Array(32).fill(1);
      a[1] = Infinity;
      const r = requantPer32(a);
      assert.equal(r.sf[0], 255);
      assert.equal(r.codes[2], 0xfe); // 1·(−Inf) saturates to −448 (cvt.rn.satfinite), never NaN
    },
  );
});

Deno.test("transformWeightsForMegaMoe()", async (t) => {
  await t.step("interleaves L1 rows by 8 and permutes every packed scale tensor for UTCCP", () => {
    const I = 128, E = 1;
    const w1 = Tensor.from("i32", [E, 2 * I, 1], Int32Array.from({ length: 2 * I }, (_, i) => i));
    const s1 = Tensor.from("i32", [E, 2 * I, 1], Int32Array.from({ length: 2 * I }, (_, i) => 1000 + i));
    const w2 = Tensor.zeros("u8", [E, 128, 64]);
    const s2 = Tensor.from("i32", [E, 128, 1], Int32Array.from({ length: 128 }, (_, i) => i));
    const out = transformWeightsForMegaMoe([w1, s1], [w2, s2]);
    const [tw1, ts1] = out.l1 as [Tensor, Tensor];
    assert.equal(tw1.at(0, 8, 0), I); // row 8 = up row 0
    assert.equal(tw1.at(0, 16, 0), 8); // row 16 = gate row 8
    const inter = interleaveGateUp(s1);
    assert.equal(ts1.at(0, 4 * 3 + 2, 0), inter.at(0, 32 * 2 + 3, 0)); // new 4b + a ← old 32a + b
    assert.equal((out.l2 as [Tensor, Tensor])[0], w2);
    assert.equal((out.l2 as [Tensor, Tensor])[1].at(0, 1, 0), 32);
    assert.throws(() => transposeSfForUtccp(Tensor.zeros("i32", [1, 100, 1])), /multiple of 128/);
  });

  await t.step("BF16: only L1 is interleaved", () => {
    const w1 = Tensor.from("bf16", [1, 32, 1], Uint16Array.from({ length: 32 }, (_, i) => i));
    const w2 = Tensor.zeros("bf16", [1, 8, 8]);
    const out = transformWeightsForMegaMoe(w1, w2);
    assert.equal((out.l1 as Tensor).at(0, 8, 0), 16);
    assert.equal(out.l2, w2);
  });
});

Deno.test("siluOfBf16()", async (t) => {
  await t.step("takes the squaring path of __expf below 2^-126 and keeps silu(g) = g there", () => {
    assert.equal(siluOfBf16(100, "fast", "correctly_rounded"), 100);
  });

  await t.step("h200_measured differs from the correctly rounded model only where the H200 did", () => {
    let diff = 0;
    for (let b = 0; b < 0x7f80; b += 7) {
      const g = bf16ToF32(b);
      if (f32Bits(siluOfBf16(g, "fast", "h200_measured")) !== f32Bits(siluOfBf16(g, "fast", "correctly_rounded"))) {
        diff++;
      }
    }
    assert.ok(diff > 0 && diff < 300, `${diff}`);
  });
});
