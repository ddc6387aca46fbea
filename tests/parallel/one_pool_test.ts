import assert from "node:assert/strict";
import { evaluateTiles, selectTiles } from "../../reference/gemm/engine.ts";
import { evaluateParallel } from "../../reference/gemm/evaluate_parallel.ts";
import { fp8MqaLogits, fp8MqaLogitsParallel } from "../../reference/indexer/mod.ts";
import { WorkerPool } from "../../reference/parallel/mod.ts";
import { mqaInputs } from "../indexer/_helpers.ts";
import { fp8Job as gemmJob } from "../gemm/_fp8_job.ts";

Deno.test("WorkerPool", async (t) => {
  const pool = new WorkerPool(2);
  try {
    await t.step("one pool runs GEMM tiles and MQA rows, each with the bits of one thread", async () => {
      const job = gemmJob(7, 260, 136, 256);
      const tiles = selectTiles(job.problems);
      const got = await evaluateParallel(job, tiles, 2, pool);
      assert.deepEqual(got.value, evaluateTiles(job, tiles).value);
      const inp = mqaInputs(3, 5, 32, 32, 24, [0, 2, 4, 4, 1], [24, 20, 4, 16, 9]);
      const want = fp8MqaLogits(inp, { cleanLogits: false });
      const par = await fp8MqaLogitsParallel(inp, { cleanLogits: false }, 2, pool);
      assert.deepEqual(
        new Uint32Array(par.logits.contiguous().data.buffer),
        new Uint32Array(want.logits.contiguous().data.buffer),
      );
      assert.deepEqual(par.defined.contiguous().data, want.defined.contiguous().data);
    });
    await t.step("refuses a worker count of 0 and stays usable", async () => {
      const inp = mqaInputs(4, 2, 32, 32, 8, [0, 0], [8, 8]);
      await assert.rejects(fp8MqaLogitsParallel(inp, {}, 0, pool), RangeError);
      const job = gemmJob(8, 130, 8, 128);
      const tiles = selectTiles(job.problems);
      assert.deepEqual((await evaluateParallel(job, tiles, 2, pool)).value, evaluateTiles(job, tiles).value);
    });
  } finally {
    pool.close();
  }
});
