import assert from "node:assert/strict";
import { fp8PagedMqaLogits, getPagedMqaLogitsMetadata } from "../../reference/indexer/mod.ts";
import { Tensor } from "../../reference/tensor/tensor.ts";

/**
 * DeepGEMM's own SM90 metadata + paged MQA kernels on an H200 (gpu_probe/deepgemm_paged_run.cu; DeepGEMM 54e2261,
 * CUDA 13.0, 2026-11-29): B = 5 requests, next_n = 2, H = 64, D = 128, block_kv = 64, pages taken from the end of the
 * pool, context_lens [[70, 100], [5, 9], [0, 130], [300, 301], [64, 64]].
 */
function load() {
  const buf = Deno.readFileSync(new URL("./gpu_probe/h200_deepgemm_paged.bin", import.meta.url));
  const [B, N, H, D, blocks, maxBlocks, maxCtx, stride] = new Uint32Array(buf.buffer, 0, 8);
  let o = 32;
  const take = (n: number) => buf.slice(o, o += n);
  const q = take(B * N * H * D), cache = take(blocks * 64 * (D + 4));
  const w = new Float32Array(take(B * N * H * 4).buffer);
  const ctx = new Int32Array(take(B * N * 4).buffer), table = new Int32Array(take(B * maxBlocks * 4).buffer);
  const logits = new Float32Array(take(B * N * stride * 4).buffer);
  return {
    inputs: {
      q: Tensor.from("e4m3", [B, N, H, D], q),
      kv_cache: Tensor.from("u8", [blocks, 64, 1, D + 4], cache),
      weights: Tensor.from("f32", [B * N, H], w),
      context_lens: Tensor.from("i32", [B, N], ctx),
      block_table: Tensor.from("i32", [B, maxBlocks], table),
    },
    rows: B * N,
    maxCtx,
    stride,
    ctx,
    logits,
  };
}

Deno.test("fp8PagedMqaLogits() against DeepGEMM's SM90 kernel on an H200", async (t) => {
  const c = load();
  await t.step("reproduces every logit with p < context_lens[b, j] bit for bit", () => {
    const schedule_meta = getPagedMqaLogitsMetadata(c.inputs.context_lens, 64, 132);
    const r = fp8PagedMqaLogits({ ...c.inputs, schedule_meta }, { maxContextLen: c.maxCtx });
    let n = 0;
    for (let row = 0; row < c.rows; row++) {
      for (let p = 0; p < c.ctx[row]; p++, n++) {
        assert.ok(Object.is(r.logits.at(row, p), c.logits[row * c.stride + p]), `row ${row} p ${p}`);
      }
    }
    assert.equal(n, 70 + 100 + 5 + 9 + 0 + 130 + 300 + 301 + 64 + 64);
  });
});
