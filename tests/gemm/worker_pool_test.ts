import assert from "node:assert/strict";
import { evaluateTiles, selectTiles } from "../../reference/gemm/engine.ts";
import { planNormal } from "../../reference/gemm/normal_gemm.ts";
import { resolveModel } from "../../reference/kernel_models/kernel_models.ts";
import { evaluateParallel, GemmWorkerPool, MIN_PARALLEL_MACS } from "../../reference/parallel/mod.ts";
import { Prng } from "../../reference/random/prng.ts";
import { Tensor } from "../../reference/tensor/tensor.ts";

function job(seed: number, M: number, N: number, K: number) {
  const r = new Prng(seed), sfk = Math.ceil(K / 128);
  const codes = (n: number) => Uint8Array.from({ length: n }, () => r.int(0x7f) | (r.int(2) << 7));
  const sc = (n: number) => Float32Array.from({ length: n }, () => Math.fround(0.5 + r.uniform()));
  const p = planNormal({
    op: "fp8_gemm_nt",
    A: Tensor.from("e4m3", [M, K], codes(M * K)),
    B: Tensor.from("e4m3", [N, K], codes(N * K)),
    sfa: Tensor.from("f32", [M, sfk], sc(M * sfk)),
    sfb: Tensor.from("f32", [Math.ceil(N / 128), sfk], sc(Math.ceil(N / 128) * sfk)),
    c: null,
    d: null,
    scalars: {},
    options: {},
    kind: "fp8",
  });
  return p.job!;
}

Deno.test("GemmWorkerPool", async (t) => {
  const pool = new GemmWorkerPool(2);
  try {
    await t.step("one pool evaluates two jobs with the bits of one thread", async () => {
      for (const j of [job(1, 260, 136, 256), job(2, 130, 400, 384)]) {
        const tiles = selectTiles(j.problems);
        const got = await pool.evaluate(j, tiles, 3);
        const want = evaluateTiles(j, tiles);
        assert.deepEqual(got.index, want.index);
        assert.deepEqual(got.value, want.value);
      }
    });
    await t.step("a failure inside a Worker rejects with its message and leaves the pool usable", async () => {
      const bad = {
        ...job(3, 130, 8, 128),
        model: resolveModel({ model: "sm100_1d1d", tensorCore: "hopper_wgmma_fp8" }),
      };
      await assert.rejects(
        pool.evaluate(bad, selectTiles(bad.problems)),
        /GEMM worker failed: .*takes no block scales/,
      );
      const ok = job(4, 130, 8, 128);
      const tiles = selectTiles(ok.problems);
      assert.deepEqual((await pool.evaluate(ok, tiles)).value, evaluateTiles(ok, tiles).value);
    });
  } finally {
    pool.close();
  }
  await t.step("a closed pool refuses work; sizes must be positive integers", async () => {
    const j = job(5, 8, 8, 128);
    await assert.rejects(pool.evaluate(j, selectTiles(j.problems)), /closed/);
    assert.throws(() => new GemmWorkerPool(1.5), RangeError);
  });
});

Deno.test("evaluateParallel()", async (t) => {
  await t.step("small jobs stay on this thread unless Workers are asked for", async () => {
    const j = job(6, 130, 16, 128); // 0.27 M multiply-adds, far below MIN_PARALLEL_MACS
    assert.ok(130 * 16 * 128 < MIN_PARALLEL_MACS);
    const tiles = selectTiles(j.problems);
    assert.deepEqual((await evaluateParallel(j, tiles)).value, evaluateTiles(j, tiles).value);
    assert.deepEqual((await evaluateParallel(j, tiles, 2)).value, evaluateTiles(j, tiles).value);
    await assert.rejects(evaluateParallel(j, tiles, 0), RangeError);
  });
});
