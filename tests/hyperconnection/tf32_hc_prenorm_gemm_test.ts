import assert from "node:assert/strict";
import { hcSplitBlocks, tf32HcPrenormGemm, toTf32 } from "../../reference/hyperconnection/mod.ts";
import { bf16Rne, bf16ToF32, f32FromBits } from "../../reference/fp32.ts";
import { Prng } from "../../reference/random/prng.ts";
import { Tensor } from "../../reference/tensor/tensor.ts";
import { fusedDotAdd } from "../../reference/tensor_core/fused_dot_add.ts";

const f = Math.fround;

function hcCase(seed: number, M: number, N: number, K: number) {
  const rng = new Prng(seed);
  const a = new Uint16Array(M * K).map(() => bf16Rne(rng.normal() * 2 ** (rng.int(6) - 3)));
  const b = new Float32Array(N * K).map(() => rng.normal() * 0.05);
  return { a: Tensor.from("bf16", [M, K], a), b: Tensor.from("f32", [N, K], b) };
}

/** Independent sqr_sum: a 4-lane simulation reading the 128B-swizzled tile through physical chunks, as the kernel does. */
function slowSqrSum(a: Uint16Array, K: number, m: number, k0: number, k1: number): number {
  const v = [0, 0, 0, 0];
  const row = m % 64; // row inside the 64-row tile; the swizzle only depends on row mod 8
  for (let kb = k0; kb < k1; kb += 64) {
    // Physical chunk p of this row holds logical chunk p xor (row mod 8) (TMA 128B swizzle).
    const phys: number[][] = [];
    for (let p = 0; p < 8; p++) {
      const logical = p ^ (row % 8);
      phys.push(Array.from({ length: 8 }, (_, e) => bf16ToF32(a[m * K + kb + logical * 8 + e])));
    }
    for (let i = 0; i < 8; i++) {
      const chunk = phys[(row ^ i) % 8];
      for (let q = 0; q < 4; q++) v[q] = f(v[q] + f(chunk[q] * chunk[q] + chunk[q + 4] * chunk[q + 4]));
    }
  }
  const x2 = v.map((x, i) => f(x + v[i ^ 2]));
  return f(x2[0] + x2[1]);
}

Deno.test("tf32HcPrenormGemm()", async (t) => {
  const M = 13, N = 24, K = 448;
  const c = hcCase(4, M, N, K);

  await t.step("equals the readable tensor-core API over each split and the swizzled 4-lane square sum", () => {
    for (const splits of [undefined, 1, 3, 16]) {
      const S = splits ?? 1;
      const { d, sqr_sum } = tf32HcPrenormGemm(c.a, c.b, { numSplits: splits, tf32Rounding: "truncate" });
      for (let s = 0; s < S; s++) {
        const [b0, nb] = hcSplitBlocks(K / 64, S, s);
        for (const m of [0, 7, 12]) {
          for (const n of [0, 5, 23]) {
            const av: number[] = [], bv: number[] = [];
            for (let k = b0 * 64; k < (b0 + nb) * 64; k++) {
              av.push(bf16ToF32((c.a.data as Uint16Array)[m * K + k]));
              bv.push((c.b.data as Float32Array)[n * K + k]); // the profile truncates to TF32 itself
            }
            const want = fusedDotAdd("hopper_wgmma_tf32", av, bv, 0, { aFormat: "f32", bFormat: "f32" });
            // (the profile truncates fp32 operands to TF32; the reference run below uses the truncate variant)
            const got = splits === undefined ? d.at(m, n) : d.at(s, m, n);
            assert.ok(Object.is(got, want), `split ${s} (${m}, ${n}): ${got} vs ${want}`);
          }
          const ss = splits === undefined ? sqr_sum.at(m) : sqr_sum.at(s, m);
          assert.equal(ss, slowSqrSum(c.a.data as Uint16Array, K, m, b0 * 64, (b0 + nb) * 64));
        }
      }
    }
  });

  await t.step("gives empty splits zero partial results when num_splits exceeds K/64", () => {
    const { d, sqr_sum } = tf32HcPrenormGemm(c.a, c.b, { numSplits: 16 });
    assert.equal(d.at(15, 3, 3), 0);
    assert.equal(sqr_sum.at(15, 3), 0);
  });

  await t.step("treats the fp32 → TF32 rounding as a model parameter", () => {
    const a = Tensor.from("bf16", [1, 64], new Uint16Array(64).fill(0x3f80));
    const b = Tensor.from("f32", [8, 64], new Float32Array(8 * 64).fill(1 + 2 ** -10 + 2 ** -11));
    assert.equal(tf32HcPrenormGemm(a, b, { tf32Rounding: "truncate" }).d.at(0, 0), 64 * (1 + 2 ** -10));
    assert.equal(tf32HcPrenormGemm(a, b).d.at(0, 0), 64 * (1 + 2 ** -9)); // default: RNE
    assert.equal(toTf32(f32FromBits(0x7f7fffff), "rne"), Infinity);
    assert.ok(Number.isNaN(toTf32(NaN, "truncate")));
  });

  await t.step("partitions K blocks contiguously with the remainder first", () => {
    const parts = [0, 1, 2, 3].map((s) => hcSplitBlocks(10, 4, s));
    assert.deepEqual(parts, [[0, 3], [3, 3], [6, 2], [8, 2]]);
  });

  await t.step("rejects shapes and dtypes the host rejects, naming the rule", () => {
    assert.throws(
      () => tf32HcPrenormGemm(Tensor.zeros("bf16", [2, 96]), Tensor.zeros("f32", [8, 96])),
      /multiple of 64/,
    );
    assert.throws(
      () => tf32HcPrenormGemm(Tensor.zeros("bf16", [2, 64]), Tensor.zeros("f32", [12, 64])),
      /multiple of 8/,
    );
    assert.throws(() => tf32HcPrenormGemm(Tensor.zeros("bf16", [2, 64]), Tensor.zeros("f32", [40, 64])), /n ≤ 32/);
    assert.throws(() => tf32HcPrenormGemm(Tensor.zeros("f32", [2, 64]), Tensor.zeros("f32", [8, 64])), TypeError);
    assert.throws(() => tf32HcPrenormGemm(Tensor.zeros("bf16", [2, 64]), Tensor.zeros("bf16", [8, 64])), TypeError);
    assert.throws(() => tf32HcPrenormGemm(c.a, c.b, { numSplits: 0 }), RangeError);
    assert.throws(() => tf32HcPrenormGemm(c.a, c.b, { arch: "sm100" }), /SM90/);
  });
});

Deno.test("tf32HcPrenormGemm() against DeepGEMM's SM90 kernel on an H200", async (t) => {
  // gpu_probe/deepgemm_hc_run.cu (DeepGEMM 54e2261, CUDA 13.0, 2026-11-29): M = 64, N = 32, K = 256, a quarter of the
  // B values exact TF32 ties.
  const buf = Deno.readFileSync(new URL("./gpu_probe/h200_deepgemm_hc.bin", import.meta.url));
  const [M, N, K] = new Uint32Array(buf.buffer, 0, 3);
  let o = 12;
  const take = (n: number) => buf.slice(o, o += n);
  const a = Tensor.from("bf16", [M, K], new Uint16Array(take(M * K * 2).buffer));
  const b = Tensor.from("f32", [N, K], new Float32Array(take(N * K * 4).buffer));
  const d = new Float32Array(take(M * N * 4).buffer), s = new Float32Array(take(M * 4).buffer);

  await t.step("reproduces D and sqr_sum bit for bit with the TMA's RNE conversion", () => {
    const r = tf32HcPrenormGemm(a, b);
    assert.deepEqual(new Uint32Array((r.d.data as Float32Array).buffer), new Uint32Array(d.buffer));
    assert.deepEqual(new Uint32Array((r.sqr_sum.data as Float32Array).buffer), new Uint32Array(s.buffer));
  });

  await t.step("the truncating variant misses every output", () => {
    const r = tf32HcPrenormGemm(a, b, { tf32Rounding: "truncate" });
    let eq = 0;
    for (let i = 0; i < M * N; i++) if (Object.is((r.d.data as Float32Array)[i], d[i])) eq++;
    assert.equal(eq, 0);
  });
});
