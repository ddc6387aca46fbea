import assert from "node:assert/strict";
import { fusedDotAdd, roundSum, STEP_ROUNDINGS } from "../../reference/tensor_core/fused_dot_add.ts";
import { ExactSum } from "../../reference/tensor_core/exact_sum.ts";
import {
  TENSOR_CORE_PROFILES,
  type TensorCoreProfile,
  tensorCoreProfile,
} from "../../reference/tensor_core/profiles.ts";
import { Prng } from "../../reference/random/prng.ts";

const ones = (n: number) => new Array(n).fill(1);
const fp8 = (a: number[]) => fusedDotAdd("hopper_wgmma_fp8", a, ones(a.length), 0);
const zeros = (n: number) => new Array(n).fill(0);

Deno.test("fusedDotAdd()", async (t) => {
  // numerics.md §8.2, every targeted vector (H200 observations).
  await t.step(
    "256 + 2^-6 + 2^-6 gives 256: each 2^-6 truncated on its own",
    () => assert.equal(fp8([256, 2 ** -6, 2 ** -6]), 256),
  );
  await t.step("256 + 2^-5 is kept", () => assert.equal(fp8([256, 2 ** -5]), 256.03125));
  await t.step("256 + 31×2^-6 gives 256", () => assert.equal(fp8([256, ...new Array(31).fill(2 ** -6)]), 256));
  await t.step("256 − 2^-6 truncates toward zero to 256", () => assert.equal(fp8([256, -(2 ** -6)]), 256));
  await t.step("−256 + 2^-6 truncates toward zero to −256", () => assert.equal(fp8([-256, 2 ** -6]), -256));
  await t.step("256 − 2^-5 + 2^-6 gives 255.96875", () => assert.equal(fp8([256, -(2 ** -5), 2 ** -6]), 255.96875));
  await t.step("512 + 2^-5 is re-truncated to 512", () => assert.equal(fp8([256, 256, 2 ** -5]), 512));
  await t.step(
    "sixteen subnormal 2^-9 inputs sum exactly",
    () => assert.equal(fp8(new Array(16).fill(2 ** -9)), 0.03125),
  );
  for (const K of [64, 128, 256]) {
    await t.step(`K-chaining keeps 256 at K = ${K}`, () => {
      assert.equal(fp8([256, ...zeros(31), ...new Array(K - 32).fill(2 ** -6)]), 256);
    });
  }
  await t.step("the exact profile keeps every bit", () => {
    assert.equal(fusedDotAdd("exact", [256, ...zeros(31), ...new Array(224).fill(2 ** -6)], ones(256), 0), 259.5);
  });
  await t.step("bf16 wgmma keeps 25 bits per term and RZ's the fp32 result", () => {
    // 1 + 2^-24 + 2^-24: exact 1 + 2^-23 is representable; RZ keeps it. 1 + 2^-26 is cut at 2^-25 → 1.
    assert.equal(
      fusedDotAdd("hopper_wgmma_bf16", [1, 2 ** -24, 2 ** -24], [1, 1, 1], 0, { aFormat: "bf16", bFormat: "bf16" }),
      1 + 2 ** -23,
    );
    assert.equal(fusedDotAdd("hopper_wgmma_bf16", [1, 2 ** -26], [1, 1], 0, { aFormat: "bf16", bFormat: "bf16" }), 1);
    assert.equal(
      fusedDotAdd("hopper_wgmma_bf16", [1, -(2 ** -25)], [1, 1], 0, { aFormat: "bf16", bFormat: "bf16" }),
      1 - 2 ** -24,
    );
  });
  await t.step("NaN and Inf come first", () => {
    assert.ok(
      Number.isNaN(fusedDotAdd("hopper_wgmma_bf16", [Infinity, 1], [0, 1], 0, { aFormat: "bf16", bFormat: "bf16" })),
    );
    assert.equal(
      fusedDotAdd("hopper_wgmma_bf16", [Infinity, 1], [1, 1], 0, { aFormat: "bf16", bFormat: "bf16" }),
      Infinity,
    );
    assert.ok(Number.isNaN(fusedDotAdd("hopper_wgmma_fp8", [NaN], [1], 0)));
  });
  await t.step(
    "an f16 accumulator's exponent is clamped at f16's −14, as MMA-Sim decomposes c in its own dtype",
    () => {
      // MMA-Sim extract_significand_exponent(c) uses c.dtype: an f16 subnormal c = 3·2^-24 gets exponent −14, so
      // E = −14 and, with n = 5, both c and the product 2^-20 fall below the 2^-19 quantum: the result is 0.
      const f16Acc: TensorCoreProfile = {
        ...tensorCoreProfile("ampere_mma_bf16"),
        name: "f16_acc_n5",
        fractionBits: 5,
        output: "rne_f16",
      };
      const r = fusedDotAdd(f16Acc, [2 ** -10], [2 ** -10], 3 * 2 ** -24, { aFormat: "f16", bFormat: "f16" });
      assert.equal(r, 0);
    },
  );
  await t.step("block-scale exponent scales products, not c", () => {
    assert.equal(fusedDotAdd("tcgen05_mxf8f6f4", [1, 1], [1, 1], 1, { scaleExponent: 3 }), 17);
  });
  await t.step("fp32_sequential rounds after every FMA", () => {
    assert.equal(
      fusedDotAdd("fp32_sequential", [2 ** 24, 1, 1], [1, 1, 1], 0, { aFormat: "bf16", bFormat: "bf16" }),
      2 ** 24,
    );
    assert.equal(
      fusedDotAdd("exact", [2 ** 24, 1, 1], [1, 1, 1], 0, { aFormat: "bf16", bFormat: "bf16" }),
      2 ** 24 + 2,
    );
  });
});

Deno.test("roundSum()", async (t) => {
  await t.step(
    "RZ to e8m13 drops the 14th bit",
    () => assert.equal(roundSum(2 ** 14 + 1, 0, STEP_ROUNDINGS.rz_e8m13), 2 ** 14),
  );
  await t.step(
    "RNE to f16 rounds the tie to even",
    () => assert.equal(roundSum(2 ** 11 + 1, 0, STEP_ROUNDINGS.rne_f16), 2 ** 11),
  );
  await t.step("overflow gives Inf", () => assert.equal(roundSum(1, 128, STEP_ROUNDINGS.rz_f32), Infinity));
  await t.step(
    "subnormal results use the 2^-149 quantum",
    () => assert.equal(roundSum(3, -150, STEP_ROUNDINGS.rz_f32), 2 ** -149),
  );
});

Deno.test("ExactSum", async (t) => {
  await t.step("matches a BigInt sum rounded to fp32 on random wide-range values", () => {
    const r = new Prng(7);
    for (let trial = 0; trial < 200; trial++) {
      const s = new ExactSum();
      let big = 0n;
      const SH = 300n;
      for (let i = 0; i < 20; i++) {
        const m = r.int(1 << 20) - (1 << 19), e = r.int(120) - 80;
        const v = m * 2 ** e;
        s.add(v);
        big += e >= 0 ? (BigInt(m) << BigInt(e)) << SH : (BigInt(m) << SH) >> BigInt(-e);
      }
      // reference rounding with BigInt: RNE to 24 significant bits
      const neg = big < 0n;
      let mag = neg ? -big : big;
      let want = 0;
      if (mag !== 0n) {
        const bl = mag.toString(2).length;
        let shift = BigInt(Math.max(0, bl - 24));
        const minShift = 300n - 149n; // fp32 subnormal quantum
        if (shift < minShift) shift = minShift;
        let q = mag >> shift;
        const rem = mag - (q << shift), half = shift > 0n ? 1n << (shift - 1n) : 0n;
        if (shift > 0n && (rem > half || (rem === half && (q & 1n) === 1n))) q += 1n;
        mag = q;
        want = Number(q) * 2 ** (Number(shift) - 300);
        if (neg) want = -want;
      }
      assert.equal(s.round(23, -126, 127), want);
    }
  });
});

Deno.test("ExactSum.reset()", async (t) => {
  await t.step("one accumulator reused: far-apart ranges, cancellation, sticky bits 900 binades below", () => {
    const s = new ExactSum();
    const sum = (xs: number[], frac = 23) => {
      s.reset();
      for (const x of xs) s.add(x);
      return s.round(frac, -126, 127);
    };
    assert.equal(sum([2 ** 100, 3 * 2 ** -50]), 2 ** 100);
    assert.equal(sum([1, 2 ** -8]), 1 + 2 ** -8); // limbs of the previous sum must not leak in
    assert.equal(sum([1, 2 ** -8], 7), 1); // bf16 tie to even
    assert.equal(sum([1, 2 ** -8, 2 ** -900], 7), 1 + 2 ** -7); // a sticky bit far below breaks the tie
    assert.equal(sum([-1, -(2 ** -8), -(2 ** -900)], 7), -(1 + 2 ** -7));
    assert.equal(sum([2 ** 60, 1, -(2 ** 60), -(2 ** -1000)]), 1);
    assert.equal(sum([2 ** -1000, -(2 ** 60), 2 ** 60]), 0); // below the fp32 subnormal quantum: 0
    assert.equal(sum([-3, 2 ** -1074]), -3);
    assert.equal(sum([]), 0);
  });
  await t.step("agrees with a fresh accumulator on random mixed-sign sums", () => {
    const r = new Prng(9), reused = new ExactSum();
    for (let trial = 0; trial < 300; trial++) {
      const fresh = new ExactSum();
      reused.reset();
      const n = 1 + r.int(12);
      for (let i = 0; i < n; i++) {
        const v = (r.int(1 << 24) - (1 << 23)) * 2 ** (r.int(400) - 200);
        fresh.add(v);
        reused.add(v);
        if (r.int(4) === 0) (fresh.add(-v), reused.add(-v));
      }
      for (const [f, lo] of [[23, -126], [7, -126], [52, -1022]]) {
        assert.equal(reused.round(f, lo, 1023), fresh.round(f, lo, 1023));
        assert.equal(reused.round(f, lo, 1023, "rz"), fresh.round(f, lo, 1023, "rz"));
      }
    }
  });
});

Deno.test("TENSOR_CORE_PROFILES", async (t) => {
  await t.step("marks Blackwell rows as not verified here", () => {
    for (const n of ["tcgen05", "tcgen05_mxf8f6f4", "tcgen05_mxf4nvf4"]) {
      assert.equal(TENSOR_CORE_PROFILES[n].status, "published, not verified here");
    }
    assert.equal(tensorCoreProfile("tcgen05_mxf4nvf4").fractionBits, 35);
  });
});
