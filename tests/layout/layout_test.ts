import assert from "node:assert/strict";
import { Prng } from "../../reference/random/prng.ts";
import { Tensor, toFloat32 } from "../../reference/tensor/mod.ts";
import {
  checkKGroupedPackedUe8m0Tensor,
  deepgemmPackPath,
  getKGroupedMnMajorTmaAlignedPackedUe8m0Tensor,
  getMnMajorTmaAlignedPackedUe8m0Tensor,
  getMnMajorTmaAlignedTensor,
  getTmaAlignedSize,
  transformKGroupedSfIntoRequiredLayout,
  transformSfIntoRequiredLayout,
} from "../../reference/layout/mod.ts";
import { assertSameTensor, torchImplPacked } from "./_torch_impl.ts";

const FULL = Deno.env.get("GEMM_ORACLE_FULL") === "1";

/** Random UE8M0-valued fp32 scales (powers of two around 2^-10..2^3), like per_token_cast_to_fp8's. */
function randomSf(rng: Prng, n: number, ue8m0: boolean): Float32Array {
  return new Float32Array(n).map(() => (ue8m0 ? 2 ** (rng.int(14) - 10) : Math.fround(rng.uniform() + 2 ** -20)));
}

/** DeepGEMM's enumerate_sf_layout: mn ∈ {4096, 4097, 8192}, k ∈ {128, 7168, 7296}, groups {1, 2, 4}, gran {32, 128}. */
function* sfLayoutCases(): Generator<[number, number, boolean, boolean, number, number]> {
  for (const useUe8m0 of [false, true]) {
    for (const withTranspose of [true, false]) {
      for (const mn of [4096, 4097, 8192]) {
        for (const k of [128, 7168, 7296]) {
          for (const g of [1, 2, 4]) for (const granK of [32, 128]) yield [mn, k, withTranspose, useUe8m0, g, granK];
        }
      }
    }
  }
}

Deno.test("getTmaAlignedSize()", async (t) => {
  await t.step("aligns to 16 bytes", () => {
    assert.deepEqual([getTmaAlignedSize(4096, 4), getTmaAlignedSize(4097, 4), getTmaAlignedSize(5, 2)], [
      4096,
      4100,
      8,
    ]);
  });
  await t.step(
    "rejects element sizes that do not divide 16",
    () => assert.throws(() => getTmaAlignedSize(4, 3), RangeError),
  );
});

Deno.test("DeepGEMM test_sf_layout_kernels cases", async (t) => {
  const rng = new Prng(1);
  let n = 0;
  for (const [mn, k, withTranspose, useUe8m0, g, granK] of sfLayoutCases()) {
    // a seeded sample in the normal run (every mn, k, group count and gran appear); everything with GEMM_ORACLE_FULL=1
    if (!FULL && (n++ % 9 !== 0)) continue;
    const sfk = Math.ceil(k / granK);
    await t.step(`mn ${mn}, k ${k}, transpose ${withTranspose}, ue8m0 ${useUe8m0}, groups ${g}, gran ${granK}`, () => {
      const vals = randomSf(rng, g * mn * sfk, useUe8m0);
      let sf = Tensor.from("f32", g === 1 ? [mn, sfk] : [g, mn, sfk], vals);
      if (!withTranspose) sf = sf.transpose(-1, -2).contiguous().transpose(-1, -2);
      if (useUe8m0) {
        const packed = getMnMajorTmaAlignedPackedUe8m0Tensor(sf);
        assertSameTensor(packed, torchImplPacked(vals, g, mn, sfk, g === 1), "packed");
      } else {
        const out = getMnMajorTmaAlignedTensor(sf);
        const tma = getTmaAlignedSize(mn, 4);
        assert.deepEqual(out.shape.slice(-2), [mn, sfk]);
        assert.deepEqual(out.strides.slice(-2), [1, tma]);
        if (g > 1) assert.equal(out.strides[0], tma * sfk);
        assert.deepEqual(toFloat32(out), toFloat32(sf));
      }
    });
  }
});

Deno.test("getMnMajorTmaAlignedTensor()", async (t) => {
  await t.step("returns an already aligned MN-major tensor itself (no copy)", () => {
    const sf = Tensor.from("f32", [3, 4096], new Float32Array(3 * 4096)).transpose();
    assert.equal(getMnMajorTmaAlignedTensor(sf), sf);
    const g = Tensor.zeros("f32", [2, 3, 4096]).transpose(-1, -2);
    assert.equal(getMnMajorTmaAlignedTensor(g), g);
  });
  await t.step("rejects rank 1 and non-f32", () => {
    assert.throws(() => getMnMajorTmaAlignedTensor(Tensor.zeros("f32", [4])), TypeError);
    assert.throws(() => getMnMajorTmaAlignedTensor(Tensor.zeros("i32", [4, 4])), TypeError);
  });
});

Deno.test("getMnMajorTmaAlignedPackedUe8m0Tensor()", async (t) => {
  await t.step(
    "takes the PyTorch fallback where DeepGEMM does (mn·sfk % 4 != 0 with groups, or strided mn % 4 != 0)",
    () => {
      assert.equal(deepgemmPackPath(Tensor.zeros("f32", [2, 4097, 57])), "torch");
      assert.equal(deepgemmPackPath(Tensor.zeros("f32", [2, 4097, 56])), "kernel");
      assert.equal(deepgemmPackPath(Tensor.zeros("f32", [57, 4097]).transpose()), "torch");
      assert.equal(deepgemmPackPath(Tensor.zeros("f32", [57, 4096]).transpose()), "kernel");
    },
  );
  await t.step("a strided view DeepGEMM's pack kernel cannot read is a host-assertion error", () => {
    const v = Tensor.zeros("f32", [8, 32]).transpose().narrow(0, 0, 16); // [16, 8], strides (1, 32): MN-major, but stride(-1) != mn
    assert.throws(() => deepgemmPackPath(v), /strides \(1, mn\)/);
    assert.throws(() => getMnMajorTmaAlignedPackedUe8m0Tensor(v), RangeError);
  });
  await t.step("a non-power-of-two scale traps on the kernel path and is floored by the PyTorch fallback", () => {
    const v = new Float32Array(2 * 4097 * 57).fill(1);
    v[5] = 3;
    v[6] = -2;
    const sf = Tensor.from("f32", [2, 4097, 57], v);
    assert.throws(() => getMnMajorTmaAlignedPackedUe8m0Tensor(sf, { path: "kernel" }), /traps/);
    const p = getMnMajorTmaAlignedPackedUe8m0Tensor(sf); // auto → torch for this shape
    assert.equal(p.at(0, 0, 1), (0x7f << 24) | (0x80 << 16) | (0x80 << 8) | 0x7f);
  });
  await t.step("psum layout packs gap rows as 0", () => {
    const sf = Tensor.from("f32", [12, 4], new Float32Array(48).fill(1));
    // groups end at 3 and 10 with mk alignment 8: group 1 starts at 8 → rows 3..7 and 10..11 are gaps
    const p = getMnMajorTmaAlignedPackedUe8m0Tensor(sf, { psumLayout: [3, 10], mkAlignment: 8 });
    const rows = Array.from({ length: 12 }, (_, i) => p.at(i, 0));
    assert.deepEqual(rows, [1, 1, 1, 0, 0, 0, 0, 0, 1, 1, 0, 0].map((v) => (v ? 0x7f7f7f7f : 0)));
  });
  await t.step("psum needs one contiguous group and a non-empty layout", () => {
    assert.throws(
      () => getMnMajorTmaAlignedPackedUe8m0Tensor(Tensor.zeros("f32", [2, 4, 4]), { psumLayout: [4] }),
      RangeError,
    );
    assert.throws(
      () => getMnMajorTmaAlignedPackedUe8m0Tensor(Tensor.zeros("f32", [4, 4]), { psumLayout: [] }),
      RangeError,
    );
  });
});

/** Reference for the K-grouped packer: per group, torch_impl(sf_group.T).T, concatenated (test_layout.py). */
function kGroupedRef(vals: Float32Array, mn: number, ks: number[], granK: number): Int32Array[] {
  const out: Int32Array[] = [];
  let row = 0;
  for (const k of ks) {
    const r = Math.ceil(k / granK);
    const grp = new Float32Array(r * mn);
    for (let a = 0; a < r; a++) for (let i = 0; i < mn; i++) grp[i * r + a] = vals[(row + a) * mn + i]; // .T → [mn, r]
    const t = torchImplPacked(grp, 1, mn, r, true); // [mn, ceil(r/4)]
    for (let q = 0; q < Math.ceil(r / 4); q++) out.push(Int32Array.from({ length: mn }, (_, i) => t.get([i, q])));
    row += r;
  }
  return out;
}

Deno.test("getKGroupedMnMajorTmaAlignedPackedUe8m0Tensor()", async (t) => {
  const rng = new Prng(3);
  const cases: [number, number, number][] = FULL
    ? [[4096, 16, 2048], [4096, 8, 4096], [7168, 72, 384], [7168, 128, 256]]
    : [[256, 16, 2048], [128, 72, 384], [64, 128, 256]];
  for (const [mn, groups, avgK] of cases) {
    for (const granK of [32, 128]) {
      await t.step(`mn ${mn}, ${groups} groups of ~${avgK}, gran ${granK}, one empty group`, () => {
        const ks = Array.from(
          { length: groups },
          () => Math.ceil(((0.7 + 0.6 * rng.uniform()) * avgK) / granK) * granK,
        );
        ks[rng.int(groups)] = 0;
        const sfK = ks.reduce((s, k) => s + k / granK, 0);
        const vals = randomSf(rng, sfK * mn, true);
        const sf = Tensor.from("f32", [sfK, mn], vals);
        const got = getKGroupedMnMajorTmaAlignedPackedUe8m0Tensor(sf, ks, ks, granK, granK);
        const want = kGroupedRef(vals, mn, ks, granK);
        assert.equal(got.shape[0], want.length);
        for (let p = 0; p < want.length; p++) {
          assert.deepEqual((got.data as Int32Array).subarray(p * mn, (p + 1) * mn), want[p], `packed row ${p}`);
        }
      });
      await t.step(
        `psum variants (mn ${mn}, ${groups} groups, gran ${granK}): exact, aligned and upper-bound sizes agree`,
        () => {
          for (const kAlignment of [32, 128, 160, 224]) {
            const base = Array.from(
              { length: groups },
              () => Math.ceil(((0.7 + 0.6 * rng.uniform()) * avgK) / granK) * granK,
            );
            const real = base.map((k, i) => k + (i % 2 ? granK / 2 : 0));
            const psum: number[] = [];
            let end = 0;
            for (const k of real) {
              end = Math.ceil(end / kAlignment) * kAlignment + k;
              psum.push(end);
            }
            const sfK = real.reduce((s, k) => s + Math.ceil(k / granK), 0);
            const vals = randomSf(rng, sfK * mn, true);
            const sf = Tensor.from("f32", [sfK, mn], vals);
            const want = kGroupedRef(vals, mn, real, granK);
            const aligned = real.map((k) => Math.ceil(k / kAlignment) * kAlignment);
            for (const ks of [real, aligned, null, []]) {
              const got = getKGroupedMnMajorTmaAlignedPackedUe8m0Tensor(sf, psum, ks, granK, kAlignment, true);
              assert.ok(got.shape[0] >= want.length);
              for (let p = 0; p < want.length; p++) {
                assert.deepEqual((got.data as Int32Array).subarray(p * mn, (p + 1) * mn), want[p]);
              }
            }
          }
        },
      );
    }
  }
  await t.step("host assertions: gran, k alignment, mn % 4, ks size mismatch, missing ks without psum", () => {
    const sf = Tensor.zeros("f32", [2, 8]);
    assert.throws(() => getKGroupedMnMajorTmaAlignedPackedUe8m0Tensor(sf, [256], [256], 64, 128), RangeError);
    assert.throws(() => getKGroupedMnMajorTmaAlignedPackedUe8m0Tensor(sf, [256], [256], 128, 48), RangeError);
    assert.throws(
      () => getKGroupedMnMajorTmaAlignedPackedUe8m0Tensor(Tensor.zeros("f32", [2, 6]), [256], [256], 128, 128),
      RangeError,
    );
    assert.throws(() => getKGroupedMnMajorTmaAlignedPackedUe8m0Tensor(sf, [384], [384], 128, 128), RangeError);
    assert.throws(() => getKGroupedMnMajorTmaAlignedPackedUe8m0Tensor(sf, [256], null, 128, 128), RangeError);
  });
  await t.step("all groups empty gives a [0, mn] tensor", () => {
    const got = getKGroupedMnMajorTmaAlignedPackedUe8m0Tensor(Tensor.zeros("f32", [0, 8]), [0, 0], [0, 0], 128, 128);
    assert.deepEqual(got.shape, [0, 8]);
  });
  await t.step("a non-power-of-two scale traps", () => {
    const sf = Tensor.from("f32", [1, 4], new Float32Array([1, 1, 1.5, 1]));
    assert.throws(() => getKGroupedMnMajorTmaAlignedPackedUe8m0Tensor(sf, [128], [128], 128, 128), /traps/);
  });
});

Deno.test("checkKGroupedPackedUe8m0Tensor()", async (t) => {
  await t.step("accepts enough packed rows and rejects too few, bad strides and missing ks", () => {
    const sf = Tensor.zeros("i32", [2, 8]);
    assert.equal(checkKGroupedPackedUe8m0Tensor(sf, [512, 512], [512, 512], 128, 128), sf);
    assert.throws(() => checkKGroupedPackedUe8m0Tensor(sf, [1024, 512], [1024, 512], 128, 128), RangeError);
    assert.equal(checkKGroupedPackedUe8m0Tensor(sf, [1024, 2048], null, 128, 128, true), sf);
    assert.throws(() => checkKGroupedPackedUe8m0Tensor(sf.transpose(), [512], [512], 128, 128), RangeError);
    assert.throws(() => checkKGroupedPackedUe8m0Tensor(sf, [512], [], 128, 128), RangeError);
  });
});

Deno.test("transformSfIntoRequiredLayout()", async (t) => {
  const sfa = Tensor.from("f32", [6, 2], new Float32Array(12).fill(0.5));
  await t.step("SM90 (1, 128) fp32 → MN-major TMA-aligned fp32", () => {
    const r = transformSfIntoRequiredLayout(sfa, 6, 256, [1, 128, 128], { arch: 9, isSfa: true });
    assert.deepEqual(r.strides, [1, 8]);
  });
  await t.step("SM90 (128, 128) fp32 → returned as is, but must be row- or column-major", () => {
    const sfb = Tensor.zeros("f32", [2, 2]);
    assert.equal(transformSfIntoRequiredLayout(sfb, 256, 256, [1, 128, 128], { arch: 9, isSfa: false }), sfb);
    const bad = Tensor.zeros("f32", [2, 4]).narrow(1, 0, 2);
    assert.throws(
      () => transformSfIntoRequiredLayout(bad, 256, 256, [1, 128, 128], { arch: 9, isSfa: false }),
      /SM90 SFB/,
    );
  });
  await t.step("SM100 fp32 → packed UE8M0; SM100 int32 → validated", () => {
    const p = transformSfIntoRequiredLayout(sfa, 6, 256, [1, 128], { arch: 10 });
    assert.equal(p.dtype, "i32");
    assert.equal(p.at(5, 0), 0x7e7e);
    assert.equal(transformSfIntoRequiredLayout(p, 6, 256, [1, 128], { arch: 10 }), p);
    assert.throws(
      () => transformSfIntoRequiredLayout(Tensor.zeros("i32", [6, 1]), 6, 256, [1, 128], { arch: 10 }),
      /stride/,
    );
  });
  await t.step("grouped 3-D scales are checked against numGroups", () => {
    const g = Tensor.zeros("f32", [3, 6, 2]);
    assert.equal(transformSfIntoRequiredLayout(g, 6, 256, [1, 128], { arch: 9, numGroups: 3 }).strides[0], 16);
    assert.throws(() => transformSfIntoRequiredLayout(g, 6, 256, [1, 128], { arch: 9, numGroups: 2 }), /num_groups/);
  });
  await t.step("every error case: recipe/is_sfa mismatch, shapes, disable_ue8m0_cast on SM100, int32 on SM90", () => {
    assert.throws(() => transformSfIntoRequiredLayout(sfa, 6, 256, [1, 128, 128], { arch: 9 }), /is_sfa/);
    assert.throws(() => transformSfIntoRequiredLayout(sfa, 6, 256, [1, 128], { arch: 9, isSfa: true }), /is_sfa/);
    assert.throws(() => transformSfIntoRequiredLayout(sfa, 7, 256, [1, 128], { arch: 9 }), /size\(-2\)/);
    assert.throws(() => transformSfIntoRequiredLayout(sfa, 6, 512, [1, 128], { arch: 9 }), /size\(-1\)/);
    assert.throws(
      () =>
        transformSfIntoRequiredLayout(Tensor.zeros("f32", [6, 8]), 6, 256, [1, 32], {
          arch: 10,
          disableUe8m0Cast: true,
        }),
      /disable_ue8m0_cast/,
    );
    assert.throws(
      () => transformSfIntoRequiredLayout(Tensor.zeros("i32", [6, 1]), 6, 512, [1, 128], { arch: 9 }),
      /Unknown SF transformation/,
    );
    assert.throws(
      () => transformSfIntoRequiredLayout(Tensor.zeros("f32", [6, 4]), 6, 256, [1, 64], { arch: 10 }),
      /Unknown SF transformation/,
    );
    assert.throws(
      () => transformSfIntoRequiredLayout(Tensor.zeros("bf16", [6, 2]), 6, 256, [1, 128], { arch: 9 }),
      TypeError,
    );
    assert.throws(() => transformSfIntoRequiredLayout(sfa, 6, 256, [1, 128], {} as never), TypeError);
  });
  await t.step("disable_ue8m0_cast on SM100 with (1, 128) keeps fp32 (transposed)", () => {
    const r = transformSfIntoRequiredLayout(sfa, 6, 256, [1, 128], { arch: 10, disableUe8m0Cast: true });
    assert.equal(r.dtype, "f32");
  });
  await t.step("SM100 non-power-of-two fp32 scales trap (kernel path)", () => {
    const bad = Tensor.from("f32", [4, 1], new Float32Array([1, 1, 3, 1]));
    assert.throws(() => transformSfIntoRequiredLayout(bad, 4, 128, [1, 128], { arch: 10 }), /traps/);
  });
});

Deno.test("transformKGroupedSfIntoRequiredLayout()", async (t) => {
  await t.step("SM90 transposes, SM100 packs or validates, bad recipes fail", () => {
    const sf = Tensor.from("f32", [2, 4], new Float32Array(8).fill(1));
    assert.deepEqual(transformKGroupedSfIntoRequiredLayout(sf, [256], [256], [1, 1, 128], 128, false, 9).strides, [
      1,
      4,
    ]);
    const p = transformKGroupedSfIntoRequiredLayout(sf, [256], [256], [1, 1, 128], 128, false, 10);
    assert.equal(p.at(0, 0), 0x7f7f);
    assert.equal(transformKGroupedSfIntoRequiredLayout(p, [256], [256], [1, 1, 128], 128, false, 10), p);
    assert.throws(
      () => transformKGroupedSfIntoRequiredLayout(sf, [256], [256], [1, 128, 128], 128, false, 10),
      RangeError,
    );
    assert.throws(
      () => transformKGroupedSfIntoRequiredLayout(p, [256], [256], [1, 1, 128], 128, false, 9),
      /Unknown cases/,
    );
  });
});
