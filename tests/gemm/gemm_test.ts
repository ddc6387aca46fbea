import assert from "node:assert/strict";
import { GEMM_OPS } from "../../reference/registry.ts";
import { Tensor } from "../../reference/tensor/tensor.ts";
import { Prng } from "../../reference/random/prng.ts";
import { bf16Bits, bf16v, e4m3, slowExact, slowSm90 } from "./_slow.ts";

function randE4m3(r: Prng, n: number, wide = true): Uint8Array {
  return Uint8Array.from({ length: n }, () => {
    let c = wide ? r.int(256) : (r.int(2) << 7) | (0x20 + r.int(0x30));
    if ((c & 0x7f) === 0x7f) c = 0x7e;
    return c;
  });
}
function scales(r: Prng, n: number): Float32Array {
  return Float32Array.from({ length: n }, () => Math.fround((0.5 + r.uniform()) * 2 ** (r.int(9) - 4)));
}
function fp8Case(seed: number, M: number, N: number, K: number) {
  const r = new Prng(seed), sfk = Math.ceil(K / 128);
  return {
    a: Tensor.from("e4m3", [M, K], randE4m3(r, M * K)),
    b: Tensor.from("e4m3", [N, K], randE4m3(r, N * K)),
    sfa: Tensor.from("f32", [M, sfk], scales(r, M * sfk)),
    sfb: Tensor.from("f32", [Math.ceil(N / 128), sfk], scales(r, Math.ceil(N / 128) * sfk)),
  };
}
const row = (t: Tensor, i: number) => Array.from({ length: t.shape[1] }, (_, k) => t.at(i, k));

Deno.test("fp8_gemm_nt()", async (t) => {
  for (const [M, N, K] of [[7, 16, 1152], [1, 8, 200], [3, 136, 256]]) {
    await t.step(`sm90_1d2d equals the BigInt slow path at ${M}×${N}×${K}`, () => {
      const x = fp8Case(M * 1000 + K, M, N, K);
      const { d } = GEMM_OPS.fp8_gemm_nt.run(x, {}, {});
      assert.equal(d.dtype, "bf16");
      for (let i = 0; i < M; i++) {
        for (let j = 0; j < N; j++) {
          const F = slowSm90(row(x.a, i), row(x.b, j), row(x.sfa, i), row(x.sfb, j >> 7));
          assert.equal(d.at(i, j), bf16Bits(F), `element (${i}, ${j})`);
        }
      }
    });
  }
  await t.step("exact equals the BigInt true value rounded once", () => {
    const M = 3, N = 8, K = 384, x = fp8Case(5, M, N, K);
    const { d } = GEMM_OPS.fp8_gemm_nt.run(x, {}, { model: "exact", outDtype: "bf16" });
    for (let i = 0; i < M; i++) {
      for (let j = 0; j < N; j++) {
        const want = slowExact(
          row(x.a, i).map((c) => e4m3(c).v),
          row(x.b, j).map((c) => e4m3(c).v),
          row(x.sfa, i),
          row(x.sfb, j >> 7),
          0,
          7,
        );
        assert.equal(d.at(i, j), bf16Bits(want));
      }
    }
  });
  await t.step("1D1D with FP32 output adds C once: D = fl32(C + F)", () => {
    const M = 2, N = 4, K = 128, x = fp8Case(9, M, N, K);
    const sfb = Tensor.from("f32", [N, 1], new Float32Array(N).fill(1));
    const c = Tensor.from("f32", [M, N], Float32Array.from({ length: M * N }, (_, i) => i * 0.1));
    const { d } = GEMM_OPS.fp8_gemm_nt.run({ ...x, sfb, c }, { recipe: [1, 1, 128] }, { outDtype: "f32" });
    for (let i = 0; i < M; i++) {
      for (let j = 0; j < N; j++) {
        const F = slowSm90(row(x.a, i), row(x.b, j), row(x.sfa, i), [1]);
        assert.equal(d.at(i, j), Math.fround(c.at(i, j) + F));
      }
    }
  });
  await t.step("k = 0 returns C or zeros; m = 0 returns an empty D", () => {
    const x = fp8Case(1, 2, 8, 0);
    const { d } = GEMM_OPS.fp8_gemm_nt.run(
      { ...x, sfa: Tensor.zeros("f32", [2, 0]), sfb: Tensor.zeros("f32", [1, 0]) },
      {},
      {},
    );
    assert.deepEqual([...d.data], new Array(16).fill(0));
    const e = GEMM_OPS.fp8_gemm_nt.run(fp8Case(1, 0, 8, 128), {}, {});
    assert.deepEqual(e.d.shape, [0, 8]);
  });
  await t.step("rejects SM90 rule violations with clear errors", () => {
    const x = fp8Case(1, 2, 12, 128);
    assert.throws(() => GEMM_OPS.fp8_gemm_nt.run(x, {}, {}), /n % 8 == 0/);
    const y = fp8Case(1, 2, 8, 128);
    assert.throws(
      () => GEMM_OPS.fp8_gemm_nt.run({ ...y, b: y.b.transpose().contiguous().transpose() }, {}, {}),
      /K-major/,
    );
    assert.throws(() => GEMM_OPS.fp8_gemm_nt.run({ ...y, sfa: Tensor.zeros("f32", [2, 2]) }, {}, {}), /sfa.*shape/);
    const c = Tensor.zeros("bf16", [2, 8]);
    assert.throws(() => GEMM_OPS.fp8_gemm_nt.run({ ...y, c }, {}, {}), /takes no C/);
  });
});

Deno.test("fp8_gemm_{nn,tn,tt}()", async (t) => {
  await t.step("transposed storage gives the nt result", () => {
    const x = fp8Case(3, 4, 8, 256);
    const want = GEMM_OPS.fp8_gemm_nt.run(x, {}, { model: "exact" }).d;
    const bT = x.b.transpose().contiguous(), aT = x.a.transpose().contiguous();
    const sfbT = x.sfb.transpose().contiguous(), sfaT = x.sfa.transpose().contiguous();
    // SM100 accepts MN-major operands; scales must be powers of two there, so compare under the exact model on sm100.
    const p2 = (s: Tensor) => Tensor.from("f32", s.shape, Float32Array.from(s.data as Float32Array, () => 1));
    const nt =
      GEMM_OPS.fp8_gemm_nt.run({ ...x, sfa: p2(x.sfa), sfb: p2(x.sfb) }, { arch: "sm100" }, { model: "exact" }).d;
    const nn =
      GEMM_OPS.fp8_gemm_nn.run({ a: x.a, sfa: p2(x.sfa), b: bT, sfb: p2(sfbT) }, { arch: "sm100" }, { model: "exact" })
        .d;
    const tn =
      GEMM_OPS.fp8_gemm_tn.run({ a: aT, sfa: p2(sfaT), b: bT, sfb: p2(sfbT) }, { arch: "sm100" }, { model: "exact" }).d;
    const tt =
      GEMM_OPS.fp8_gemm_tt.run({ a: aT, sfa: p2(sfaT), b: x.b, sfb: p2(x.sfb) }, { arch: "sm100" }, { model: "exact" })
        .d;
    assert.deepEqual(nn.data, nt.data);
    assert.deepEqual(tn.data, nt.data);
    assert.deepEqual(tt.data, nt.data);
    assert.equal(want.shape[0], 4);
  });
});

Deno.test("bf16_gemm_nt()", async (t) => {
  await t.step("exact model equals the BigInt true value rounded once to fp32", () => {
    const r = new Prng(11), M = 3, N = 5, K = 96;
    const gen = (n: number) =>
      Uint16Array.from({ length: n }, () => (r.int(2) << 15) | ((120 + r.int(14)) << 7) | r.int(128));
    const a = Tensor.from("bf16", [M, K], gen(M * K)), b = Tensor.from("bf16", [N, K], gen(N * K));
    const ex = GEMM_OPS.bf16_gemm_nt.run({ a, b }, {}, { model: "exact", outDtype: "f32" }).d;
    for (let i = 0; i < M; i++) {
      for (let j = 0; j < N; j++) {
        const want = slowExact(row(a, i).map((c) => bf16v(c).v), row(b, j).map((c) => bf16v(c).v), null, null, 0, 23);
        assert.equal(ex.at(i, j), want);
      }
    }
  });
});

Deno.test("m_grouped_fp8_gemm_nt_contiguous()", async (t) => {
  const G = 3, N = 8, K = 128, M = 384;
  const r = new Prng(21);
  const b = Tensor.from("e4m3", [G, N, K], randE4m3(r, G * N * K));
  const sfb = Tensor.from("f32", [G, 1, 1], new Float32Array([1, 2, 4]));
  const a = Tensor.from("e4m3", [M, K], randE4m3(r, M * K));
  const sfa = Tensor.from("f32", [M, 1], new Float32Array(M).fill(1));
  const single = (g: number, i: number) =>
    GEMM_OPS.fp8_gemm_nt.run(
      { a: a.narrow(0, i, 1), sfa: sfa.narrow(0, i, 1), b: b.select(0, g), sfb: sfb.select(0, g) },
      {},
      {},
    ).d.data;
  await t.step("classic layout: rows use their tile's group; SM90 zeroes 64-row chunks starting with −1", () => {
    const layout = new Int32Array(M);
    for (let i = 0; i < M; i++) layout[i] = i < 128 ? 0 : i < 200 ? 2 : i < 256 ? -1 : -1;
    const { d } = GEMM_OPS.m_grouped_fp8_gemm_nt_contiguous.run(
      { a, sfa, b, sfb, grouped_layout: Tensor.from("i32", [M], layout) },
      {},
      {},
    );
    assert.deepEqual([...d.data.subarray(5 * N, 6 * N)], [...single(0, 5)]);
    assert.deepEqual([...d.data.subarray(130 * N, 131 * N)], [...single(2, 130)]);
    assert.deepEqual([...d.data.subarray(250 * N, 251 * N)], [...single(2, 250)]); // −1 row inside a valid chunk: computed
    assert.deepEqual([...d.data.subarray(300 * N, 301 * N)], new Array(N).fill(0)); // chunk starting with −1: zero
  });
  await t.step("psum layout: gaps untouched, ensure_zero_padding computes the tail tile", () => {
    const ends = Tensor.from("i32", [G], new Int32Array([100, 100, 300]));
    const d0 = Tensor.from("bf16", [M, N], new Uint16Array(M * N).fill(0x7777));
    const on = GEMM_OPS.m_grouped_fp8_gemm_nt_contiguous.run(
      { a, sfa, b, sfb, grouped_layout: ends, d: d0 },
      { use_psum_layout: true, ensure_zero_padding: true },
      {},
    ).d;
    const off = GEMM_OPS.m_grouped_fp8_gemm_nt_contiguous.run(
      { a, sfa, b, sfb, grouped_layout: ends, d: d0 },
      { use_psum_layout: true, ensure_zero_padding: false },
      {},
    ).d;
    assert.deepEqual([...on.data.subarray(50 * N, 51 * N)], [...single(0, 50)]);
    assert.deepEqual([...on.data.subarray(110 * N, 111 * N)], [...single(0, 110)]); // tail of group 0's tile
    assert.deepEqual([...off.data.subarray(110 * N, 111 * N)], new Array(N).fill(0x7777)); // gap untouched
    assert.deepEqual([...on.data.subarray(200 * N, 201 * N)], [...single(2, 200)]); // group 1 is empty, group 2 starts at 128
    assert.deepEqual([...on.data.subarray(310 * N, 311 * N)], [...single(2, 310)]);
    assert.deepEqual([...on.data.subarray(383 * N, 384 * N)], [...single(2, 383)]);
  });
  await t.step("layout entries outside [-1, G) are rejected", () => {
    const bad = Tensor.from("i32", [M], new Int32Array(M).fill(3));
    assert.throws(
      () => GEMM_OPS.m_grouped_fp8_gemm_nt_contiguous.run({ a, sfa, b, sfb, grouped_layout: bad }, {}, {}),
      RangeError,
    );
  });
});

Deno.test("m_grouped_fp8_gemm_nt_masked()", async (t) => {
  await t.step(
    "rows below masked_m computed, rest of the 64-row chunk computed, later chunks zero, beyond untouched",
    () => {
      const G = 2, Mm = 256, N = 8, K = 128, r = new Prng(5);
      const a = Tensor.from("e4m3", [G, Mm, K], randE4m3(r, G * Mm * K));
      const b = Tensor.from("e4m3", [G, N, K], randE4m3(r, G * N * K));
      const sfa = Tensor.from("f32", [G, Mm, 1], new Float32Array(G * Mm).fill(1));
      const sfb = Tensor.from("f32", [G, 1, 1], new Float32Array(G).fill(1));
      const d0 = Tensor.from("bf16", [G, Mm, N], new Uint16Array(G * Mm * N).fill(0x1234));
      const { d } = GEMM_OPS.m_grouped_fp8_gemm_nt_masked.run(
        { a, sfa, b, sfb, d: d0, masked_m: Tensor.from("i32", [G], new Int32Array([7, 0])) },
        { expected_m: 7 },
        {},
      );
      const want = GEMM_OPS.fp8_gemm_nt.run(
        { a: a.select(0, 0), sfa: sfa.select(0, 0), b: b.select(0, 0), sfb: sfb.select(0, 0) },
        {},
        {},
      ).d;
      for (const i of [0, 6, 63]) assert.equal(d.at(0, i, 3), want.at(i, 3));
      assert.equal(d.at(0, 64, 3), 0);
      assert.equal(d.at(0, 200, 3), 0x1234);
      assert.equal(d.at(1, 0, 0), 0x1234); // empty group: no tile at all
    },
  );
});

Deno.test("k_grouped_fp8_gemm_nt_contiguous()", async (t) => {
  await t.step("N = 768 with many groups and an empty group: D[g] = C[g] + A_g·B_gᵀ", () => {
    const G = 5, M = 2, N = 768, ks = [128, 0, 256, 128, 128], r = new Prng(8);
    const tot = ks.reduce((x, y) => x + y, 0), sft = ks.reduce((x, k) => x + k / 128, 0);
    const a = Tensor.from("e4m3", [M * tot], randE4m3(r, M * tot)),
      b = Tensor.from("e4m3", [N * tot], randE4m3(r, N * tot));
    const sfa = Tensor.from("f32", [M, sft], scales(r, M * sft)),
      sfb = Tensor.from("f32", [N, sft], scales(r, N * sft));
    const c = Tensor.from("f32", [G, M, N], Float32Array.from({ length: G * M * N }, () => r.uniform()));
    const d = Tensor.zeros("f32", [G, M, N]);
    const out = GEMM_OPS.k_grouped_fp8_gemm_nt_contiguous.run(
      { a, sfa, b, sfb, c, d, grouped_layout: Tensor.from("i32", [G], Int32Array.from(ks)) },
      { ks },
      {},
    ).d;
    let start = 0, sf0 = 0;
    for (let g = 0; g < G; g++) {
      for (const [i, j] of [[0, 0], [1, 767], [1, 300]]) {
        const ar = Array.from({ length: ks[g] }, (_, k) => a.at(M * start + i * ks[g] + k));
        const br = Array.from({ length: ks[g] }, (_, k) => b.at(N * start + j * ks[g] + k));
        const sa = Array.from({ length: ks[g] / 128 }, (_, q) => sfa.at(i, sf0 + q));
        const sb = Array.from({ length: ks[g] / 128 }, (_, q) => sfb.at(j, sf0 + q));
        const F = ks[g] === 0 ? null : slowSm90(ar, br, sa, sb);
        assert.equal(out.at(g, i, j), F === null ? c.at(g, i, j) : Math.fround(c.at(g, i, j) + F), `group ${g}`);
      }
      start += ks[g];
      sf0 += ks[g] / 128;
    }
  });
});

Deno.test("fp8_gemm_nt_skip_head_mid()", async (t) => {
  await t.step("maps logical column j to j + floor((j + R)/(L + R))·Mid and never writes Mid columns", () => {
    const x = fp8Case(4, 2, 16, 128);
    const [L, Mid, R] = [4, 2, 4];
    const d0 = Tensor.from("bf16", [2, 20], new Uint16Array(40).fill(0xabcd));
    const full = GEMM_OPS.fp8_gemm_nt.run(x, {}, {}).d;
    const { d } = GEMM_OPS.fp8_gemm_nt_skip_head_mid.run({ ...x, d: d0 }, { head_splits: [L, Mid, R] }, {});
    for (let j = 0; j < 16; j++) assert.equal(d.at(1, j + Math.floor((j + R) / (L + R)) * Mid), full.at(1, j));
    for (const p of [4, 5, 14, 15]) assert.equal(d.at(0, p), 0xabcd);
  });
});

Deno.test("runAsync()", async (t) => {
  const x = fp8Case(12, 300, 264, 256);
  const one = GEMM_OPS.fp8_gemm_nt.run(x, {}, {}).d;
  await t.step("two Workers give the bits of one thread", async () => {
    const two = (await GEMM_OPS.fp8_gemm_nt.runAsync(x, {}, { workers: 2 })).d;
    assert.deepEqual(two.data, one.data);
  });
  await t.step("a tile sample equals the same elements of the full evaluation and touches every block", () => {
    const s = GEMM_OPS.fp8_gemm_nt.run(x, {}, { sample: { fraction: 0.2, seed: 3 } });
    const mask = s.sample_mask.data as Uint8Array;
    let n = 0;
    for (let i = 0; i < mask.length; i++) if (mask[i]) (n++, assert.equal(s.d.data[i], one.data[i]));
    assert.ok(n > 0 && n < mask.length);
    for (let bi = 0; bi < 3; bi++) {
      assert.ok(mask.subarray(bi * 128 * 264, Math.min(300, bi * 128 + 128) * 264).some((v) => v === 1));
    }
  });
});
