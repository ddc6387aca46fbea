// Two independent implementations that must agree bit for bit: the native CPU backend (kernels/cpu) and the
// TypeScript GEMM reference (reference/gemm), on seeded random cases of every family both implement.
import assert from "node:assert/strict";
import { gemmOp } from "../../reference/registry.ts";
import { bf16ToF32, f32FromBits } from "../../reference/fp32.ts";
import { Tensor } from "../../reference/tensor/tensor.ts";
import { type Backend, openBackend } from "../../ffi/mod.ts";
import { bf16Tensor, bitsOf, e4m3Tensor, rngFor, scaleTensor } from "./_cases.ts";
import type { Prng } from "../../reference/random/prng.ts";

/** Power-of-two f32 scales (SM100 takes f32 powers of two). */
function pow2Scales(rng: Prng, shape: number[]): Tensor {
  const n = shape.reduce((x, y) => x * y, 1);
  return Tensor.from("f32", shape, Float32Array.from({ length: n }, () => f32FromBits((118 + rng.int(16)) << 23)));
}

function sameBits(native: Tensor, reference: Tensor, what: string): void {
  const x = bitsOf(native), y = bitsOf(reference);
  const bad = x.findIndex((v, i) => v !== y[i]);
  assert.equal(
    bad,
    -1,
    `${what}: first mismatch at flat index ${bad}: native ${x[bad]?.toString(16)}, reference ${y[bad]?.toString(16)}`,
  );
  assert.equal(x.length, y.length);
}

/** Random shapes per model: a seeded sample in the normal run, a sweep with GEMM_ORACLE_FULL=1 (`deno task test:full:kernels`). */
const TRIALS = Deno.env.get("GEMM_ORACLE_FULL") ? 40 : 3;

Deno.test("CPU backend = TypeScript reference: fp8Gemm()", async (t) => {
  using be: Backend = await openBackend("cpu");
  const rng = rngFor(4242);
  for (let trial = 0; trial < TRIALS; trial++) {
    const M = 1 + rng.int(40), N = 8 * (1 + rng.int(6)), K = 32 * (1 + rng.int(14));
    const kb = Math.ceil(K / 128);
    await t.step(`sm90_1d2d bf16, (M, N, K) = (${M}, ${N}, ${K})`, () => {
      const a = e4m3Tensor(rng, [M, K]), b = e4m3Tensor(rng, [N, K]);
      const sfa = scaleTensor(rng, [M, kb], false), sfb = scaleTensor(rng, [Math.ceil(N / 128), kb], false);
      const d = Tensor.zeros("bf16", [M, N]);
      be.fp8Gemm({ a, sfa, b, sfb, d, model: "sm90_1d2d" });
      const ref = gemmOp("fp8_gemm_nt").run({ a, sfa, b, sfb }, {}, { model: "sm90_1d2d" }).d;
      sameBits(d, ref, "sm90_1d2d");
    });
    await t.step(`sm90_1d1d f32 with C, (M, N, K) = (${M}, ${N}, ${K})`, () => {
      const a = e4m3Tensor(rng, [M, K]), b = e4m3Tensor(rng, [N, K]);
      const sfa = scaleTensor(rng, [M, kb], false), sfb = scaleTensor(rng, [N, kb], false);
      const c = scaleTensor(rng, [M, N], false);
      const d = Tensor.zeros("f32", [M, N]);
      be.fp8Gemm({ a, sfa, b, sfb, c, d, recipeB: [1, 128], model: "sm90_1d1d" });
      const ref = gemmOp("fp8_gemm_nt").run({ a, sfa, b, sfb, c }, { recipe: [1, 1, 128] }, { model: "sm90_1d1d" }).d;
      sameBits(d, ref, "sm90_1d1d");
    });
    await t.step(`sm100_1d1d bf16 with C (double rounding), tn views, (M, N, K) = (${M}, ${N}, ${K})`, () => {
      const at = e4m3Tensor(rng, [K, M]), b = e4m3Tensor(rng, [N, K]);
      const sfa = pow2Scales(rng, [M, kb]), sfb = pow2Scales(rng, [Math.ceil(N / 128), kb]);
      const c = bf16Tensor(rng, [M, N]);
      const d = Tensor.zeros("bf16", [M, N]);
      be.fp8Gemm({ a: at.transpose(), sfa, b, sfb, c, d, model: "sm100_1d1d" });
      const ref =
        gemmOp("fp8_gemm_tn").run({ a: at, sfa: sfa.transpose(), b: b.transpose(), sfb: sfb.transpose(), c }, {
          arch: "sm100",
        }, {
          model: "sm100_1d1d",
        }).d;
      sameBits(d, ref, "sm100_1d1d");
    });
    await t.step(`exact bf16, (M, N, K) = (${M}, ${N}, ${K})`, () => {
      const a = e4m3Tensor(rng, [M, K]), b = e4m3Tensor(rng, [N, K]);
      const sfa = scaleTensor(rng, [M, kb], false), sfb = scaleTensor(rng, [Math.ceil(N / 128), kb], false);
      const d = Tensor.zeros("bf16", [M, N]);
      be.fp8Gemm({ a, sfa, b, sfb, d, model: "exact" });
      const ref = gemmOp("fp8_gemm_nt").run({ a, sfa, b, sfb }, {}, { model: "exact" }).d;
      sameBits(d, ref, "exact");
    });
  }
});

Deno.test("CPU backend = TypeScript reference: bf16Gemm()", async (t) => {
  using be = await openBackend("cpu");
  const rng = rngFor(4343);
  const combos = [["bf16", "bf16", true], ["bf16", "f32", false], ["exact", "f32", true], [
    "bf16",
    "bf16",
    false,
  ]] as const;
  for (let trial = 0; trial < TRIALS; trial++) {
    const [model, out, withC] = combos[trial % combos.length];
    const M = 1 + rng.int(20), N = 1 + rng.int(20), K = 1 + rng.int(300);
    await t.step(`${model} ${out}${withC ? " with C" : ""}, (M, N, K) = (${M}, ${N}, ${K})`, () => {
      const a = bf16Tensor(rng, [M, K]), bt = bf16Tensor(rng, [K, N]);
      const c = withC ? (out === "bf16" ? bf16Tensor(rng, [M, N]) : scaleTensor(rng, [M, N], false)) : null;
      const d = Tensor.zeros(out, [M, N]);
      be.bf16Gemm({ a, b: bt.transpose(), c, d, model });
      const inputs: Record<string, Tensor> = { a, b: bt };
      if (c) inputs.c = c;
      const ref = gemmOp("bf16_gemm_nn").run(inputs, {}, { model, outDtype: out }).d;
      sameBits(d, ref, model);
    });
  }
});

Deno.test("CPU backend = TypeScript reference: mGroupedFp8GemmContiguous()", async (t) => {
  using be = await openBackend("cpu");
  const rng = rngFor(4444);
  const G = 3, N = 16, K = 256, M = 384;
  const a = e4m3Tensor(rng, [M, K]), b = e4m3Tensor(rng, [G, N, K]);
  const sfa = scaleTensor(rng, [M, 2], false), sfb = scaleTensor(rng, [G, 1, 2], false);
  await t.step("classic layout with -1 padding chunks (sm90)", () => {
    const labels = Int32Array.from({ length: M }, (_, i) => (i < 128 ? 1 : i < 192 ? 2 : i < 256 ? -1 : 0));
    const gl = Tensor.from("i32", [M], labels);
    const d = Tensor.zeros("bf16", [M, N]);
    be.mGroupedFp8GemmContiguous({ a, sfa, b, sfb, d, groupedLayout: gl });
    const ref = gemmOp("m_grouped_fp8_gemm_nt_contiguous").run({ a, sfa, b, sfb, grouped_layout: gl }, {}, {}).d;
    sameBits(d, ref, "classic");
  });
  await t.step("psum layout with gaps and ensure_zero_padding", () => {
    const gl = Tensor.from("i32", [G], new Int32Array([100, 200, 330]));
    const d = Tensor.zeros("bf16", [M, N]);
    be.mGroupedFp8GemmContiguous({ a, sfa, b, sfb, d, groupedLayout: gl, usePsumLayout: true });
    const ref = gemmOp("m_grouped_fp8_gemm_nt_contiguous").run({ a, sfa, b, sfb, grouped_layout: gl }, {
      use_psum_layout: true,
    }, {}).d;
    sameBits(d, ref, "psum");
  });
});

Deno.test("CPU backend = TypeScript reference: mGroupedFp8GemmMasked()", async (t) => {
  using be = await openBackend("cpu");
  await t.step("whole tiles, zero chunks past masked_m (sm90)", () => {
    const rng = rngFor(4545);
    const G = 3, Mmax = 256, N = 8, K = 128;
    const a = e4m3Tensor(rng, [G, Mmax, K]), b = e4m3Tensor(rng, [G, N, K]);
    const sfa = scaleTensor(rng, [G, Mmax, 1], false), sfb = scaleTensor(rng, [G, 1, 1], false);
    const mm = Tensor.from("i32", [G], new Int32Array([70, 0, 129]));
    const d = Tensor.zeros("bf16", [G, Mmax, N]);
    be.mGroupedFp8GemmMasked({ a, sfa, b, sfb, d, maskedM: mm });
    const ref = gemmOp("m_grouped_fp8_gemm_nt_masked").run({ a, sfa, b, sfb, masked_m: mm }, { expected_m: 64 }, {}).d;
    sameBits(d, ref, "masked");
  });
  await t.step("under exact too, SM90's rows: zero chunks past masked_m, not values from A's padding", () => {
    // Which rows a masked kernel writes is SM90's rule whatever the arithmetic (deepgemm-ops.md §5.4); the CPU
    // backend once computed the chunks past masked_m from A's padding under `exact` (first at [2, 64, 0]).
    const rng = rngFor(4546);
    const G = 3, Mmax = 256, N = 8, K = 128;
    const a = e4m3Tensor(rng, [G, Mmax, K]), b = e4m3Tensor(rng, [G, N, K]);
    const sfa = scaleTensor(rng, [G, Mmax, 1], false), sfb = scaleTensor(rng, [G, 1, 1], false);
    const mm = Tensor.from("i32", [G], new Int32Array([70, 0, 33]));
    const d = Tensor.zeros("bf16", [G, Mmax, N]);
    be.mGroupedFp8GemmMasked({ a, sfa, b, sfb, d, maskedM: mm, model: "exact" });
    const ref = gemmOp("m_grouped_fp8_gemm_nt_masked").run({ a, sfa, b, sfb, masked_m: mm }, { expected_m: 64 }, {
      model: "exact",
    }).d;
    sameBits(d, ref, "masked exact");
    assert.equal(d.at(2, 64, 0), 0);
  });
});

Deno.test("CPU backend = TypeScript reference: kGroupedFp8Gemm()", async (t) => {
  using be = await openBackend("cpu");
  await t.step("SM90 flat blocks with an empty group", () => {
    const rng = rngFor(4646);
    const M = 5, N = 7, ks = [256, 0, 128];
    const sumK = 384, sumKb = 3;
    const a = e4m3Tensor(rng, [M * sumK]), b = e4m3Tensor(rng, [N * sumK]);
    const sfa = scaleTensor(rng, [M, sumKb], false), sfb = scaleTensor(rng, [N, sumKb], false);
    const c = scaleTensor(rng, [3, M, N], false);
    const ksT = Tensor.from("i32", [3], Int32Array.from(ks));
    const d = Tensor.zeros("f32", [3, M, N]);
    be.kGroupedFp8Gemm({ a, sfa, b, sfb, c, d, ks: ksT, ksHost: ks });
    const ref = gemmOp("k_grouped_fp8_gemm_nt_contiguous").run(
      { a, sfa, b, sfb, c, d: Tensor.zeros("f32", [3, M, N]), grouped_layout: ksT },
      { ks },
      {},
    ).d;
    sameBits(d, ref, "k-grouped");
  });
});

Deno.test("CPU backend = TypeScript reference: fp8GemmSkipHeadMid()", async (t) => {
  using be = await openBackend("cpu");
  await t.step("head splits (2, 3, 2)", () => {
    const rng = rngFor(4747);
    const M = 9, N = 16, K = 256;
    const a = e4m3Tensor(rng, [M, K]), b = e4m3Tensor(rng, [N, K]);
    const sfa = scaleTensor(rng, [M, 2], false), sfb = scaleTensor(rng, [1, 2], false);
    const d = Tensor.zeros("bf16", [M, N + 4 * 3]);
    be.fp8GemmSkipHeadMid({ a, sfa, b, sfb, d, headSplits: [2, 3, 2] });
    const ref = gemmOp("fp8_gemm_nt_skip_head_mid").run({ a, sfa, b, sfb, d: Tensor.zeros("bf16", [M, N + 12]) }, {
      head_splits: [2, 3, 2],
    }, {}).d;
    sameBits(d, ref, "skip_head_mid");
  });
});

Deno.test("CPU backend = TypeScript reference: BF16 grouped GEMMs", async (t) => {
  using be = await openBackend("cpu");
  const rng = rngFor(4848);
  await t.step("m-grouped contiguous, classic layout with -1 chunks (SM90)", () => {
    const G = 2, N = 8, K = 64, M = 256;
    const a = bf16Tensor(rng, [M, K]), b = bf16Tensor(rng, [G, N, K]);
    const gl = Tensor.from("i32", [M], Int32Array.from({ length: M }, (_, i) => (i < 128 ? 1 : i < 192 ? -1 : 0)));
    const d = Tensor.zeros("bf16", [M, N]);
    be.mGroupedBf16GemmContiguous({ a, b, d, groupedLayout: gl });
    const ref = gemmOp("m_grouped_bf16_gemm_nt_contiguous").run({ a, b, grouped_layout: gl }, { arch: "sm90" }, {}).d;
    sameBits(d, ref, "bf16 contiguous");
  });
  await t.step("masked, whole tiles (SM90)", () => {
    const G = 2, Mmax = 192, N = 8, K = 64;
    const a = bf16Tensor(rng, [G, Mmax, K]), b = bf16Tensor(rng, [G, N, K]);
    const mm = Tensor.from("i32", [G], new Int32Array([65, 130]));
    const d = Tensor.zeros("bf16", [G, Mmax, N]);
    be.mGroupedBf16GemmMasked({ a, b, d, maskedM: mm });
    const ref =
      gemmOp("m_grouped_bf16_gemm_nt_masked").run({ a, b, masked_m: mm }, { expected_m: 64, arch: "sm90" }, {})
        .d;
    sameBits(d, ref, "bf16 masked");
  });
  await t.step("k-grouped tn with C and an empty group", () => {
    const M = 6, N = 5, ks = [128, 0, 256];
    const a = bf16Tensor(rng, [384, M]), b = bf16Tensor(rng, [384, N]);
    const c = scaleTensor(rng, [3, M, N], false);
    const ksT = Tensor.from("i32", [3], Int32Array.from(ks));
    const d = Tensor.zeros("f32", [3, M, N]);
    be.kGroupedBf16Gemm({ a, b, c, d, ks: ksT, ksHost: ks });
    const ref = gemmOp("k_grouped_bf16_gemm_tn_contiguous").run(
      { a, b, c, d: Tensor.zeros("f32", [3, M, N]), grouped_layout: ksT },
      { ks },
      {},
    ).d;
    sameBits(d, ref, "bf16 k-grouped");
  });
});

/** Any bf16 pattern, NaN and Inf included when `specials` (subnormals and the full exponent range always). */
function wildBf16(rng: Prng, shape: number[], specials: boolean): Tensor {
  const n = shape.reduce((x, y) => x * y, 1);
  return Tensor.from(
    "bf16",
    shape,
    Uint16Array.from({ length: n }, () => {
      for (;;) {
        const v = rng.int(65536);
        if (specials || (v & 0x7f80) !== 0x7f80) return v;
      }
    }),
  );
}

/** Bits with every NaN mapped to one pattern (NaN payloads differ between implementations; NaN-ness must not). */
function nanFolded(t: Tensor): number[] {
  return bitsOf(t).map((b) =>
    t.dtype === "bf16" ? ((b & 0x7fff) > 0x7f80 ? 0x7fff : b) : ((b & 0x7fffffff) >>> 0 > 0x7f800000 ? 0x7fffffff : b)
  );
}

Deno.test("CPU backend = TypeScript reference: extreme operands", async (t) => {
  using be = await openBackend("cpu");
  const rng = rngFor(4949);
  for (const [model, specials] of [["bf16", false], ["exact", false], ["bf16", true]] as const) {
    await t.step(`bf16Gemm ${model} over the whole bf16 range${specials ? " with NaN and Inf" : ""}`, () => {
      const M = 9, N = 11, K = 150;
      const a = wildBf16(rng, [M, K], specials), b = wildBf16(rng, [N, K], specials);
      const d = Tensor.zeros("f32", [M, N]);
      be.bf16Gemm({ a, b, d, model });
      const ref = gemmOp("bf16_gemm_nt").run({ a, b }, {}, { model, outDtype: "f32" }).d;
      assert.deepEqual(nanFolded(d), nanFolded(ref));
    });
  }
  await t.step("fp8Gemm sm90_1d2d with NaN codes and subnormal-only rows", () => {
    const M = 8, N = 16, K = 256;
    const a = e4m3Tensor(rng, [M, K]), b = e4m3Tensor(rng, [N, K]);
    (a.data as Uint8Array)[3 * K + 17] = 0x7f; // a NaN in row 3
    for (let k = 0; k < K; k++) (b.data as Uint8Array)[5 * K + k] = rng.int(8) | (rng.int(2) << 7); // subnormals only
    const sfa = scaleTensor(rng, [M, 2], false), sfb = scaleTensor(rng, [1, 2], false);
    const d = Tensor.zeros("bf16", [M, N]);
    be.fp8Gemm({ a, sfa, b, sfb, d });
    const ref = gemmOp("fp8_gemm_nt").run({ a, sfa, b, sfb }, {}, {}).d;
    assert.deepEqual(nanFolded(d), nanFolded(ref));
    assert.ok(Number.isNaN(bf16ToF32(d.at(3, 0))));
  });
});
