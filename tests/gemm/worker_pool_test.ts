import assert from "node:assert/strict";
import { evaluateTiles, selectTiles } from "../../reference/gemm/engine.ts";
import { resolveModel } from "../../reference/kernel_models/kernel_models.ts";
import { evaluateParallel, GemmWorkerPool, MIN_PARALLEL_MACS } from "../../reference/gemm/evaluate_parallel.ts";
import { fp8Job as job } from "./_fp8_job.ts";

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
