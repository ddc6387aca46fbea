// The native CPU backend against hand-computed cases and against the slow model of ./_slow_model.ts, bit for bit,
// on seeded random cases; every family of the ABI the backend implements.
import assert from "node:assert/strict";
import { bf16Rne, bf16ToF32, f32Bits } from "../../reference/fp32.ts";
import { Tensor } from "../../reference/tensor/tensor.ts";
import { NativeError, openBackend } from "../../ffi/mod.ts";
import {
  bf16Element,
  bf16Row,
  bf16Tensor,
  bitsOf,
  e4m3Tensor,
  fp8Element,
  type Fp8Model,
  fp8Row,
  outBits,
  rngFor,
  scaleExp,
  scaleTensor,
  scaleValue,
} from "./_cases.ts";
import { e4m3Value } from "./_slow_model.ts";

const ONE = 0x38, TWO = 0x40, E4M3_256 = 0x78, E4M3_2M6 = 0x08; // e4m3 codes of 1, 2, 256, 2^-6

function f32(shape: number[], values: number[]): Tensor {
  return Tensor.from("f32", shape, Float32Array.from(values));
}

/** Expected bits of an FP8 GEMM under the slow model (A [M,K], B [N,K] views). */
function expectFp8(
  model: Fp8Model,
  a: Tensor,
  sfa: Tensor,
  b: Tensor,
  sfb: Tensor,
  c: Tensor | null,
  out: "bf16" | "f32",
  gbmn: number,
  granK = 128,
): number[] {
  const [M, K] = a.shape, N = b.shape[0];
  const bits: number[] = [];
  for (let m = 0; m < M; m++) {
    const ar = fp8Row(a, m, K);
    for (let n = 0; n < N; n++) {
      const br = fp8Row(b, n, K);
      const nb = Math.floor(n / gbmn);
      const cv = c === null ? null : c.dtype === "bf16" ? bf16ToF32(c.at(m, n)) : c.at(m, n);
      const v = fp8Element(
        model,
        ar,
        br,
        (g) => scaleValue(sfa, m, g),
        (g) => scaleValue(sfb, nb, g),
        (g) => scaleExp(sfa, m, g),
        (g) => scaleExp(sfb, nb, g),
        granK,
        cv,
        out,
      );
      bits.push(outBits(v, out));
    }
  }
  return bits;
}

Deno.test("fp8Gemm()", async (t) => {
  using be = await openBackend("cpu");

  await t.step("computes a 2x2 product exactly under every model", () => {
    const a = Tensor.from("e4m3", [2, 2], new Uint8Array([ONE, TWO, 0x44, 0x48])); // [[1,2],[3,4]]
    const b = Tensor.from("e4m3", [2, 2], new Uint8Array([ONE, ONE, TWO, 0])); // [[1,1],[2,0]]
    const sfa = f32([2, 1], [1, 1]), sfb = f32([1, 1], [1]);
    for (const model of ["sm90_1d2d", "sm90_1d1d", "sm100_1d1d", "exact"] as const) {
      const d = Tensor.zeros("f32", [2, 2]);
      be.fp8Gemm({ a, sfa, b, sfb, d, model });
      assert.deepEqual([...d.data], [3, 2, 7, 6], model);
    }
  });

  await t.step("keeps 256 for 256 + 2^-6 + 2^-6 under sm90 (each term truncated) and 256.03125 exactly", () => {
    const K = 32, row = new Uint8Array(K);
    row[0] = E4M3_256;
    row[1] = E4M3_2M6;
    row[2] = E4M3_2M6;
    const a = Tensor.from("e4m3", [1, K], row), b = Tensor.from("e4m3", [1, K], new Uint8Array(K).fill(ONE));
    const sfa = f32([1, 1], [1]), sfb = f32([1, 1], [1]);
    const d = Tensor.zeros("f32", [1, 1]);
    be.fp8Gemm({ a, sfa, b, sfb, d, model: "sm90_1d1d" });
    assert.equal(d.at(0, 0), 256); // numerics.md §8.2, H200 row "256, 2^-6, 2^-6"
    be.fp8Gemm({ a, sfa, b, sfb, d, model: "exact" });
    assert.equal(d.at(0, 0), 256.03125);
  });

  await t.step("truncates 256 - 2^-6 toward zero to 256 (not floor)", () => {
    const K = 32, row = new Uint8Array(K);
    row[0] = E4M3_256;
    row[1] = E4M3_2M6 | 0x80;
    const a = Tensor.from("e4m3", [1, K], row), b = Tensor.from("e4m3", [1, K], new Uint8Array(K).fill(ONE));
    const d = Tensor.zeros("f32", [1, 1]);
    be.fp8Gemm({ a, sfa: f32([1, 1], [1]), b, sfb: f32([1, 1], [1]), d, model: "sm90_1d1d" });
    assert.equal(d.at(0, 0), 256);
  });

  await t.step("promotes every 128 K: A = [256, 0 x31, 2^-6 x224] gives 258 (numerics.md §8.2)", () => {
    const K = 256, row = new Uint8Array(K);
    row[0] = E4M3_256;
    for (let k = 32; k < K; k++) row[k] = E4M3_2M6;
    const a = Tensor.from("e4m3", [1, K], row), b = Tensor.from("e4m3", [1, K], new Uint8Array(K).fill(ONE));
    const d = Tensor.zeros("f32", [1, 1]);
    be.fp8Gemm({ a, sfa: f32([1, 2], [1, 1]), b, sfb: f32([1, 2], [1, 1]), d, model: "sm90_1d1d" });
    assert.equal(d.at(0, 0), 258);
  });

  await t.step("adds C after rounding F to bf16 (reduce-add, two roundings)", () => {
    // F = 1 + 2^-8 rounds to 1 in bf16; C = 2^-8: bf16(C + 1) = 1, a single rounding of C + F would give 1 + 2^-7.
    const a = Tensor.from("e4m3", [1, 2], new Uint8Array([ONE, 0x01])); // 1, 2^-9
    const b = Tensor.from("e4m3", [1, 2], new Uint8Array([ONE, TWO])); // 1, 2  -> F = 1 + 2^-8
    const c = Tensor.from("bf16", [1, 1], new Uint16Array([bf16Rne(2 ** -8)]));
    const d = Tensor.zeros("bf16", [1, 1]);
    be.fp8Gemm({ a, sfa: f32([1, 1], [1]), b, sfb: f32([1, 1], [1]), c, d, model: "sm90_1d2d" });
    assert.equal(bf16ToF32(d.at(0, 0)), 1);
    be.fp8Gemm({ a, sfa: f32([1, 1], [1]), b, sfb: f32([1, 1], [1]), c, d, model: "exact" });
    assert.equal(bf16ToF32(d.at(0, 0)), 1 + 2 ** -7);
  });

  await t.step("writes D = C (or 0) when K = 0", () => {
    const a = Tensor.zeros("e4m3", [2, 0]), b = Tensor.zeros("e4m3", [3, 0]);
    const c = f32([2, 3], [1, 2, 3, 4, 5, -0]);
    const d = f32([2, 3], [9, 9, 9, 9, 9, 9]);
    be.fp8Gemm({ a, sfa: Tensor.zeros("f32", [2, 0]), b, sfb: Tensor.zeros("f32", [1, 0]), c, d, model: "sm90_1d1d" });
    assert.deepEqual(bitsOf(d), bitsOf(c));
    be.fp8Gemm({ a, sfa: Tensor.zeros("f32", [2, 0]), b, sfb: Tensor.zeros("f32", [1, 0]), d, model: "sm90_1d1d" });
    assert.deepEqual([...d.data], [0, 0, 0, 0, 0, 0]);
  });

  await t.step("propagates a NaN operand as NaN", () => {
    const a = Tensor.from("e4m3", [1, 2], new Uint8Array([0x7f, ONE])),
      b = Tensor.from("e4m3", [1, 2], new Uint8Array([ONE, ONE]));
    for (const model of ["sm90_1d2d", "sm100_1d1d", "exact"] as const) {
      const d = Tensor.zeros("f32", [1, 1]);
      be.fp8Gemm({ a, sfa: f32([1, 1], [1]), b, sfb: f32([1, 1], [1]), d, model });
      assert.ok(Number.isNaN(d.at(0, 0)), model);
    }
  });

  const cases: [Fp8Model, "bf16" | "f32", boolean, number][] = [
    ["sm90_1d2d", "bf16", false, 128],
    ["sm90_1d1d", "f32", true, 1],
    ["sm100_1d1d", "bf16", true, 1],
    ["sm100_1d1d", "f32", false, 128],
    ["exact", "bf16", true, 128],
    ["exact", "f32", false, 1],
  ];
  for (const [model, out, withC, gbmn] of cases) {
    await t.step(
      `equals the slow model bit for bit: ${model}, ${out} out, ${withC ? "with" : "no"} C, B gran ${gbmn}`,
      () => {
        const rng = rngFor(1000 + cases.findIndex((x) => x[0] === model && x[1] === out));
        const M = 13, N = 24, K = 352; // M, N and K tails (K = 2.75 blocks)
        const pow2 = model === "sm100_1d1d";
        const a = e4m3Tensor(rng, [M, K]), b = e4m3Tensor(rng, [N, K]);
        const sfa = scaleTensor(rng, [M, 3], pow2), sfb = scaleTensor(rng, [Math.ceil(N / gbmn), 3], pow2);
        const c = withC ? (out === "bf16" ? bf16Tensor(rng, [M, N]) : scaleTensor(rng, [M, N], false)) : null;
        const d = Tensor.zeros(out, [M, N]);
        be.fp8Gemm({ a, sfa, b, sfb, c, d, model, recipeB: [gbmn, 128] });
        assert.deepEqual(bitsOf(d), expectFp8(model, a, sfa, b, sfb, c, out, gbmn));
      },
    );
  }

  await t.step("uses scale granularity 32 for sm100_1d1d", () => {
    const rng = rngFor(77);
    const M = 5, N = 7, K = 100;
    const a = e4m3Tensor(rng, [M, K]), b = e4m3Tensor(rng, [N, K]);
    const sfa = scaleTensor(rng, [M, 4], true), sfb = scaleTensor(rng, [N, 4], true);
    const d = Tensor.zeros("f32", [M, N]);
    be.fp8Gemm({ a, sfa, b, sfb, d, model: "sm100_1d1d", recipeA: [1, 32], recipeB: [1, 32] });
    assert.deepEqual(bitsOf(d), expectFp8("sm100_1d1d", a, sfa, b, sfb, null, "f32", 1, 32));
  });

  await t.step("gives the nt result for nn, tn and tt views (majors via strides)", () => {
    const rng = rngFor(5);
    const M = 9, N = 16, K = 256;
    const a = e4m3Tensor(rng, [M, K]), b = e4m3Tensor(rng, [N, K]);
    const sfa = scaleTensor(rng, [M, 2], false), sfb = scaleTensor(rng, [1, 2], false);
    const ref = Tensor.zeros("bf16", [M, N]);
    be.fp8Gemm({ a, sfa, b, sfb, d: ref });
    const aT = a.transpose().contiguous().transpose(), bT = b.transpose().contiguous().transpose(); // MN-major
    for (const [name, av, bv] of [["nn", a, bT], ["tn", aT, bT], ["tt", aT, b]] as const) {
      const d = Tensor.zeros("bf16", [M, N]);
      be.fp8Gemm({ a: av, sfa, b: bv, sfb, d });
      assert.deepEqual(bitsOf(d), bitsOf(ref), name);
    }
  });

  await t.step("gives the same bits on 1 and on all threads", () => {
    const rng = rngFor(9);
    const M = 32, N = 40, K = 512;
    const a = e4m3Tensor(rng, [M, K]), b = e4m3Tensor(rng, [N, K]);
    const sfa = scaleTensor(rng, [M, 4], false), sfb = scaleTensor(rng, [1, 4], false);
    const d1 = Tensor.zeros("bf16", [M, N]), d2 = Tensor.zeros("bf16", [M, N]);
    be.setNumThreads(1);
    be.fp8Gemm({ a, sfa, b, sfb, d: d1 });
    be.setNumThreads(0);
    be.fp8Gemm({ a, sfa, b, sfb, d: d2 });
    assert.deepEqual(bitsOf(d1), bitsOf(d2));
  });

  await t.step("rejects sm100_1d1d with scales that are not powers of two", () => {
    const a = Tensor.from("e4m3", [1, 1], new Uint8Array([ONE])),
      b = Tensor.from("e4m3", [1, 1], new Uint8Array([ONE]));
    assert.throws(
      () =>
        be.fp8Gemm({
          a,
          sfa: f32([1, 1], [3]),
          b,
          sfb: f32([1, 1], [1]),
          d: Tensor.zeros("f32", [1, 1]),
          model: "sm100_1d1d",
        }),
      (e: unknown) =>
        e instanceof NativeError && e.code === "GO_ERR_INVALID_ARGUMENT" && /powers of two/.test(e.message),
    );
  });
});

Deno.test("fp8GemmSkipHeadMid()", async (t) => {
  using be = await openBackend("cpu");
  await t.step("stores each head as [left][mid untouched][right]", () => {
    const rng = rngFor(21);
    const M = 3, K = 128, L = 2, Mid = 3, R = 2, heads = 2, N = heads * (L + R);
    const a = e4m3Tensor(rng, [M, K]), b = e4m3Tensor(rng, [N, K]);
    const sfa = scaleTensor(rng, [M, 1], false), sfb = scaleTensor(rng, [1, 1], false);
    const plain = Tensor.zeros("f32", [M, N]);
    be.fp8Gemm({ a, sfa, b, sfb, d: plain, model: "sm90_1d1d" });
    const W = N + heads * Mid;
    const d = Tensor.from("f32", [M, W], new Float32Array(M * W).fill(-7));
    be.fp8GemmSkipHeadMid({ a, sfa, b, sfb, d, headSplits: [L, Mid, R], model: "sm90_1d1d" });
    for (let m = 0; m < M; m++) {
      for (let j = 0; j < N; j++) {
        const col = j + Math.floor((j + R) / (L + R)) * Mid;
        assert.equal(d.at(m, col), plain.at(m, j));
      }
      for (let h = 0; h < heads; h++) {
        for (let x = 0; x < Mid; x++) assert.equal(d.at(m, h * (L + Mid + R) + L + x), -7);
      }
    }
  });
});

Deno.test("mGroupedFp8GemmContiguous()", async (t) => {
  using be = await openBackend("cpu");
  const rng = rngFor(31);
  const G = 3, N = 16, K = 256, M = 4 * 64;
  const a = e4m3Tensor(rng, [M, K]), b = e4m3Tensor(rng, [G, N, K]);
  const sfa = scaleTensor(rng, [M, 2], false), sfb = scaleTensor(rng, [G, 1, 2], false);

  await t.step("rejects rows that would read group 0 of a B with no groups (G = 0) instead of reading past it", () => {
    const gl = Tensor.from("i32", [4], new Int32Array([-1, -1, -1, -1]));
    const args = {
      a: e4m3Tensor(rng, [4, 128]),
      sfa: Tensor.from("f32", [4, 1], new Float32Array(4).fill(1)), // powers of two, as SM100 takes
      b: Tensor.zeros("e4m3", [0, 128, 128]),
      sfb: Tensor.zeros("f32", [0, 1, 1]),
      d: Tensor.zeros("bf16", [4, 128]),
      groupedLayout: gl,
    };
    // SM100's row rule computes -1 rows with group max(0, id) (deepgemm-ops.md §5.3); every other model takes SM90's.
    assert.throws(
      () => be.mGroupedFp8GemmContiguous({ ...args, model: "sm100_1d1d" }),
      (e: unknown) =>
        e instanceof NativeError && e.code === "GO_ERR_INVALID_ARGUMENT" && /b has no groups/.test(e.message),
    );
    // sm90 writes zeros for 64-row chunks labelled -1: no group is read, so G = 0 is fine there.
    const d = Tensor.from("bf16", [4, 128], new Uint16Array(4 * 128).fill(0x7777));
    be.mGroupedFp8GemmContiguous({ ...args, d, model: "sm90_1d2d" });
    assert.ok((d.data as Uint16Array).every((v) => v === 0));
  });

  await t.step("computes each row with its group and zeroes 64-row chunks labelled -1 (sm90)", () => {
    // mk_alignment 64: chunks 0,1 -> group 2, chunk 2 -> -1, chunk 3 -> group 0.
    const labels = new Int32Array(M);
    for (let i = 0; i < M; i++) labels[i] = i < 128 ? 2 : i < 192 ? -1 : 0;
    const d = Tensor.from("bf16", [M, N], new Uint16Array(M * N).fill(0x7777));
    be.mGroupedFp8GemmContiguous({
      a,
      sfa,
      b,
      sfb,
      d,
      groupedLayout: Tensor.from("i32", [M], labels),
      mkAlignment: 64,
    });
    for (const [row, g] of [[0, 2], [100, 2], [150, -1], [200, 0], [255, 0]] as const) {
      for (let n = 0; n < N; n++) {
        if (g < 0) {
          assert.equal(d.at(row, n), 0);
          continue;
        }
        const v = fp8Element(
          "sm90_1d2d",
          fp8Row(a, row, K),
          Array.from({ length: K }, (_, k) => e4m3Value(b.at(g, n, k))),
          (kb) => scaleValue(sfa, row, kb),
          (kb) => scaleValue(sfb, g, 0, kb),
          () => 0,
          () => 0,
          128,
          null,
          "bf16",
        );
        assert.equal(d.at(row, n), outBits(v, "bf16"), `row ${row} col ${n}`);
      }
    }
  });

  await t.step("writes only each group's range with the psum layout", () => {
    // ends 50, 120, 256 with alignment 64: group 1 = [64, 120), group 2 = [128, 256); rows 50..63 and 120..127 untouched.
    const d = Tensor.from("bf16", [M, N], new Uint16Array(M * N).fill(0x7777));
    const ends = Tensor.from("i32", [G], new Int32Array([50, 120, 256]));
    be.mGroupedFp8GemmContiguous({
      a,
      sfa,
      b,
      sfb,
      d,
      groupedLayout: ends,
      usePsumLayout: true,
      ensureZeroPadding: false,
      mkAlignment: 64,
    });
    const ref = Tensor.zeros("bf16", [M, N]);
    const labels = new Int32Array(M).map((_, i) => (i < 64 ? 0 : i < 128 ? 1 : 2));
    be.mGroupedFp8GemmContiguous({
      a,
      sfa,
      b,
      sfb,
      d: ref,
      groupedLayout: Tensor.from("i32", [M], labels),
      mkAlignment: 64,
    });
    for (const row of [0, 49, 64, 119, 128, 255]) assert.equal(d.at(row, 3), ref.at(row, 3), `row ${row}`);
    for (const row of [50, 63, 120, 127]) assert.equal(d.at(row, 3), 0x7777, `gap row ${row}`);
  });

  await t.step("computes each group's tail tile with ensure_zero_padding", () => {
    const d = Tensor.from("bf16", [M, N], new Uint16Array(M * N).fill(0x7777));
    const ends = Tensor.from("i32", [G], new Int32Array([50, 120, 256]));
    be.mGroupedFp8GemmContiguous({ a, sfa, b, sfb, d, groupedLayout: ends, usePsumLayout: true, mkAlignment: 64 });
    const ref = Tensor.zeros("bf16", [M, N]);
    const labels = new Int32Array(M).map((_, i) => (i < 64 ? 0 : i < 128 ? 1 : 2));
    be.mGroupedFp8GemmContiguous({
      a,
      sfa,
      b,
      sfb,
      d: ref,
      groupedLayout: Tensor.from("i32", [M], labels),
      mkAlignment: 64,
    });
    for (const row of [50, 63, 120, 127]) assert.equal(d.at(row, 3), ref.at(row, 3), `tail row ${row}`);
  });

  await t.step("rejects a label outside [-1, G)", () => {
    const labels = new Int32Array(M).fill(0);
    labels[5] = G;
    assert.throws(
      () =>
        be.mGroupedFp8GemmContiguous({
          a,
          sfa,
          b,
          sfb,
          d: Tensor.zeros("bf16", [M, N]),
          groupedLayout: Tensor.from("i32", [M], labels),
        }),
      /grouped_layout\[5\] = 3 is outside/,
    );
  });
});

Deno.test("mGroupedFp8GemmMasked()", async (t) => {
  using be = await openBackend("cpu");
  await t.step(
    "computes rows of 128-row tiles, zeroes 64-row chunks past masked_m (sm90), leaves the rest untouched",
    () => {
      const rng = rngFor(41);
      const G = 3, Mmax = 200, N = 8, K = 128;
      const a = e4m3Tensor(rng, [G, Mmax, K]), b = e4m3Tensor(rng, [G, N, K]);
      const sfa = scaleTensor(rng, [G, Mmax, 1], false), sfb = scaleTensor(rng, [G, 1, 1], false);
      const d = Tensor.from("bf16", [G, Mmax, N], new Uint16Array(G * Mmax * N).fill(0x1234));
      const masked = [3, 0, 130];
      be.mGroupedFp8GemmMasked({ a, sfa, b, sfb, d, maskedM: Tensor.from("i32", [G], Int32Array.from(masked)) });
      for (let g = 0; g < G; g++) {
        const ref = Tensor.zeros("bf16", [Mmax, N]);
        be.fp8Gemm({ a: a.select(0, g), sfa: sfa.select(0, g), b: b.select(0, g), sfb: sfb.select(0, g), d: ref });
        const m = masked[g], tileEnd = Math.min(Mmax, Math.ceil(m / 128) * 128);
        for (let i = 0; i < Mmax; i++) {
          const want = i >= tileEnd ? 0x1234 : Math.floor(i / 64) * 64 >= m ? 0 : ref.at(i, 0);
          assert.equal(d.at(g, i, 0), want, `g ${g} row ${i}`);
        }
      }
    },
  );
});

Deno.test("kGroupedFp8Gemm()", async (t) => {
  using be = await openBackend("cpu");
  const rng = rngFor(51);
  const M = 6, N = 8, ks = [128, 0, 256];
  const G = ks.length, sumK = 384, sumKb = 3;

  await t.step("computes D[g] = C[g] + A_g·B_gᵀ on SM90 flat blocks, D[g] = C[g] for an empty group", () => {
    const a = e4m3Tensor(rng, [M * sumK]), b = e4m3Tensor(rng, [N * sumK]);
    const sfa = scaleTensor(rng, [M, sumKb], false), sfb = scaleTensor(rng, [N, sumKb], false);
    const c = scaleTensor(rng, [G, M, N], false);
    const d = Tensor.zeros("f32", [G, M, N]);
    be.kGroupedFp8Gemm({ a, sfa, b, sfb, c, d, ks: Tensor.from("i32", [G], Int32Array.from(ks)), ksHost: ks });
    let s = 0, kb0 = 0;
    for (let g = 0; g < G; g++) {
      const k = ks[g];
      const ag = a.narrow(0, M * s, M * k).reshape([M, k]), bg = b.narrow(0, N * s, N * k).reshape([N, k]);
      for (let m = 0; m < M; m++) {
        for (let n = 0; n < N; n++) {
          const v = k === 0 ? c.at(g, m, n) : fp8Element(
            "sm90_1d1d",
            fp8Row(ag, m, k),
            fp8Row(bg, n, k),
            (kb) => scaleValue(sfa, m, kb0 + kb),
            (kb) => scaleValue(sfb, n, kb0 + kb),
            () => 0,
            () => 0,
            128,
            c.at(g, m, n),
            "f32",
          );
          assert.equal(f32Bits(d.at(g, m, n)), f32Bits(v), `g ${g} (${m}, ${n})`);
        }
      }
      s += k;
      kb0 += k / 128;
    }
  });

  await t.step("gives the flat-block result for the same data in the SM100 tn layout", () => {
    const aFlat = e4m3Tensor(rng, [M * sumK]), bFlat = e4m3Tensor(rng, [N * sumK]);
    const sfa = scaleTensor(rng, [M, sumKb], false), sfb = scaleTensor(rng, [N, sumKb], false);
    const ksT = Tensor.from("i32", [G], Int32Array.from(ks));
    const d1 = Tensor.zeros("f32", [G, M, N]), d2 = Tensor.zeros("f32", [G, M, N]);
    be.kGroupedFp8Gemm({ a: aFlat, sfa, b: bFlat, sfb, d: d1, ks: ksT, ksHost: ks, model: "exact" });
    // tn: A [ΣK, M] with group g's rows [s, s+k) = A_gᵀ.
    const aT = Tensor.zeros("e4m3", [sumK, M]), bT = Tensor.zeros("e4m3", [sumK, N]);
    let s = 0;
    for (const k of ks) {
      for (let kk = 0; kk < k; kk++) {
        for (let m = 0; m < M; m++) aT.data[(s + kk) * M + m] = aFlat.data[M * s + m * k + kk];
        for (let n = 0; n < N; n++) bT.data[(s + kk) * N + n] = bFlat.data[N * s + n * k + kk];
      }
      s += k;
    }
    be.kGroupedFp8Gemm({
      a: aT,
      sfa: sfa.transpose().contiguous(),
      b: bT,
      sfb: sfb.transpose().contiguous(),
      d: d2,
      ks: ksT,
      ksHost: ks,
      layout: "sm100_tn",
      model: "exact",
    });
    assert.deepEqual(bitsOf(d2), bitsOf(d1));
  });
});

Deno.test("bf16Gemm()", async (t) => {
  using be = await openBackend("cpu");
  for (
    const [model, out, withC] of [["bf16", "bf16", false], ["bf16", "f32", true], ["exact", "bf16", true], [
      "bf16",
      "bf16",
      true,
    ]] as const
  ) {
    await t.step(`equals the slow model bit for bit: ${model}, ${out} out, ${withC ? "with" : "no"} C`, () => {
      const rng = rngFor(61);
      const M = 7, N = 9, K = 200;
      const a = bf16Tensor(rng, [M, K]), b = bf16Tensor(rng, [N, K]);
      const c = withC ? (out === "bf16" ? bf16Tensor(rng, [M, N]) : scaleTensor(rng, [M, N], false)) : null;
      const d = Tensor.zeros(out, [M, N]);
      be.bf16Gemm({ a, b, c, d, model });
      const want: number[] = [];
      for (let m = 0; m < M; m++) {
        for (let n = 0; n < N; n++) {
          const cv = c === null ? null : c.dtype === "bf16" ? bf16ToF32(c.at(m, n)) : c.at(m, n);
          want.push(outBits(bf16Element(model, bf16Row(a, m, K), bf16Row(b, n, K), cv, out), out));
        }
      }
      assert.deepEqual(bitsOf(d), want);
    });
  }

  await t.step("keeps 2^-24 + 2^-24 at 25 fraction bits and truncates 1 + 2^-24 to 1 (RZ)", () => {
    const a = Tensor.from("bf16", [1, 3], new Uint16Array([bf16Rne(1), bf16Rne(2 ** -24), bf16Rne(2 ** -24)]));
    const b = Tensor.from("bf16", [1, 3], new Uint16Array([bf16Rne(1), bf16Rne(1), bf16Rne(1)]));
    const d = Tensor.zeros("f32", [1, 1]);
    be.bf16Gemm({ a, b, d, model: "bf16" });
    assert.equal(d.at(0, 0), 1 + 2 ** -23); // 2^-24 + 2^-24 keep their bits at 25 fraction bits, then RZ to 23
    const a2 = Tensor.from("bf16", [1, 2], new Uint16Array([bf16Rne(1), bf16Rne(2 ** -24)]));
    const b2 = Tensor.from("bf16", [1, 2], new Uint16Array([bf16Rne(1), bf16Rne(1)]));
    be.bf16Gemm({ a: a2, b: b2, d, model: "bf16" });
    assert.equal(d.at(0, 0), 1); // 1 + 2^-24 truncated to 23 fraction bits
    be.bf16Gemm({ a: a2, b: b2, d, model: "fp32_sequential" });
    assert.equal(d.at(0, 0), 1); // RNE tie to even
  });
});

Deno.test("mGroupedBf16GemmContiguous()", async (t) => {
  using be = await openBackend("cpu");
  await t.step("rejects rows that would read group 0 of a B with no groups (G = 0)", () => {
    const gl = Tensor.from("i32", [2], new Int32Array([-1, -1]));
    assert.throws(
      () =>
        be.mGroupedBf16GemmContiguous({
          a: Tensor.zeros("bf16", [2, 64]),
          b: Tensor.zeros("bf16", [0, 8, 64]),
          d: Tensor.zeros("bf16", [2, 8]),
          groupedLayout: gl,
          model: "fp32_sequential", // computes -1 rows (only bf16 and exact take SM90's zero chunks)
        }),
      (e: unknown) => e instanceof NativeError && /b has no groups/.test(e.message),
    );
  });
  await t.step("matches per-group bf16Gemm rows", () => {
    const rng = rngFor(71);
    const G = 2, N = 8, K = 64, M = 128;
    const a = bf16Tensor(rng, [M, K]), b = bf16Tensor(rng, [G, N, K]);
    const labels = new Int32Array(M).map((_, i) => (i < 64 ? 1 : 0));
    const d = Tensor.zeros("bf16", [M, N]);
    be.mGroupedBf16GemmContiguous({ a, b, d, groupedLayout: Tensor.from("i32", [M], labels), mkAlignment: 64 });
    for (const [g, rows] of [[1, [0, 63]], [0, [64, 127]]] as const) {
      const ref = Tensor.zeros("bf16", [M, N]);
      be.bf16Gemm({ a, b: b.select(0, g), d: ref });
      for (const r of rows) for (let n = 0; n < N; n++) assert.equal(d.at(r, n), ref.at(r, n));
    }
  });
});

Deno.test("mGroupedBf16GemmMasked()", async (t) => {
  using be = await openBackend("cpu");
  await t.step("computes the rows of a group with masked_m > 0 and leaves an empty group untouched", () => {
    const rng = rngFor(81);
    const a = bf16Tensor(rng, [2, 4, 32]), b = bf16Tensor(rng, [2, 4, 32]);
    const d = Tensor.from("f32", [2, 4, 4], new Float32Array(32).fill(5));
    be.mGroupedBf16GemmMasked({ a, b, d, maskedM: Tensor.from("i32", [2], new Int32Array([0, 4])) });
    const ref = Tensor.zeros("f32", [4, 4]);
    be.bf16Gemm({ a: a.select(0, 1), b: b.select(0, 1), d: ref });
    assert.deepEqual(bitsOf(d.select(0, 1)), bitsOf(ref));
    assert.deepEqual(bitsOf(d.select(0, 0)), bitsOf(Tensor.from("f32", [4, 4], new Float32Array(16).fill(5))));
  });
});

Deno.test("kGroupedBf16Gemm()", async (t) => {
  using be = await openBackend("cpu");
  await t.step("equals C[g] + A_gᵀ·B_g from bf16Gemm on each group's views", () => {
    const rng = rngFor(91);
    const M = 4, N = 5, ks = [32, 0, 48];
    const a = bf16Tensor(rng, [80, M]), b = bf16Tensor(rng, [80, N]);
    const c = scaleTensor(rng, [3, M, N], false);
    const d = Tensor.zeros("f32", [3, M, N]);
    be.kGroupedBf16Gemm({ a, b, c, d, ks: Tensor.from("i32", [3], Int32Array.from(ks)), ksHost: ks });
    let s = 0;
    for (let g = 0; g < 3; g++) {
      const k = ks[g];
      if (k === 0) {
        assert.deepEqual(bitsOf(d.select(0, g)), bitsOf(c.select(0, g)));
        continue;
      }
      const ref = Tensor.zeros("f32", [M, N]);
      be.bf16Gemm({ a: a.narrow(0, s, k).transpose(), b: b.narrow(0, s, k).transpose(), c: c.select(0, g), d: ref });
      assert.deepEqual(bitsOf(d.select(0, g)), bitsOf(ref));
      s += k;
    }
  });
});
