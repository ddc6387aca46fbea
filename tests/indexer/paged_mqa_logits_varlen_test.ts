import assert from "node:assert/strict";
import { fp8PagedMqaLogits } from "../../reference/indexer/mod.ts";
import { Tensor } from "../../reference/tensor/tensor.ts";
import { Prng } from "../../reference/random/prng.ts";
import { slowFp4Score, slowSm100Fp32 } from "./_fp4_slow.ts";
import { fp4Rows, scaleBytes } from "./_sm100_inputs.ts";
import { randomF32 } from "./_helpers.ts";

/**
 * A varlen FP4 problem (`indices` given, next_n = 1). Each maximal run of equal indices is one sequence with its own
 * KV tokens in shuffled pages; only the run's FIRST token gets the sequence's block-table row, every other token gets
 * a decoy row pointing at pages of different random data, so reading any other row changes the values.
 */
function varlenFp4(seed: number, blockKv: number, indices: number[], ctx: number[], H: number, D: number) {
  const rng = new Prng(seed);
  const T = indices.length, half = D / 2, width = half + 4;
  // Runs, found here with a separate scan (the slow path below finds them per token again).
  const runs: { first: number; last: number }[] = [];
  for (let t = 0; t < T; t++) {
    if (t > 0 && indices[t] === indices[t - 1]) runs[runs.length - 1].last = t;
    else runs.push({ first: t, last: t });
  }
  const maxBlocks = Math.max(...ctx.map((L) => Math.ceil(L / blockKv)), 1);
  const numBlocks = 2 * T * maxBlocks + 1;
  const order = Array.from({ length: numBlocks }, (_, i) => i);
  for (let i = numBlocks - 1; i > 0; i--) {
    const j = rng.int(i + 1);
    [order[i], order[j]] = [order[j], order[i]];
  }
  let nextPage = 0;
  const cache = new Uint8Array(numBlocks * blockKv * width).fill(0x5a);
  const bt = new Int32Array(T * maxBlocks);
  /** Writes `L` random FP4 tokens into fresh pages listed in row `row`; returns the tokens. */
  const fillRow = (row: number, L: number) => {
    const kv = fp4Rows(rng, Math.max(L, 1), D), kb = kv.q.data as Int8Array, ks = kv.sf.data as Int32Array;
    const toks: { bytes: Int8Array; word: number }[] = [];
    for (let pg = 0; pg < maxBlocks; pg++) bt[row * maxBlocks + pg] = order[nextPage++];
    for (let p = 0; p < L; p++) {
      const blk = bt[row * maxBlocks + Math.floor(p / blockKv)], slot = p % blockKv, page = blk * blockKv * width;
      for (let x = 0; x < half; x++) cache[page + slot * half + x] = kb[p * half + x] & 0xff;
      new DataView(cache.buffer).setInt32(page + blockKv * half + 4 * slot, ks[p], true);
      toks.push({ bytes: kb.subarray(p * half, p * half + half), word: ks[p] });
    }
    return toks;
  };
  const seqTokens = new Map<number, { bytes: Int8Array; word: number }[]>(); // by the run's first token
  for (const { first, last } of runs) {
    seqTokens.set(first, fillRow(first, ctx[last]));
    for (let t = first + 1; t <= last; t++) fillRow(t, ctx[last]); // decoy rows
  }
  const q = fp4Rows(rng, T * H, D);
  return {
    inputs: {
      q: q.q.reshape([T, 1, H, half]),
      q_sf: q.sf.reshape([T, 1, H]),
      kv_cache: Tensor.from("u8", [numBlocks, blockKv, 1, width], cache),
      weights: Tensor.from("f32", [T, H], randomF32(rng, T * H, -3, 2)),
      context_lens: Tensor.from("i32", [T, 1], Int32Array.from(ctx)),
      block_table: Tensor.from("i32", [T, maxBlocks], bt),
      indices: Tensor.from("i32", [T], Int32Array.from(indices)),
    },
    seqTokens,
    maxLen: Math.max(...ctx),
  };
}

/** Slow path: token t reads the KV of the sequence that starts its run, positions p < context_lens[t]. */
function checkAgainstSlow(indices: number[], ctx: number[], blockKv: number, H = 8, D = 64): number {
  const half = D / 2;
  const { inputs, seqTokens, maxLen } = varlenFp4(indices.length + blockKv, blockKv, indices, ctx, H, D);
  const r = fp8PagedMqaLogits(inputs, { maxContextLen: maxLen });
  const qb = inputs.q.data as Int8Array, qs = inputs.q_sf.data as Int32Array, w = inputs.weights.data as Float32Array;
  let n = 0;
  for (let t = 0; t < indices.length; t++) {
    let first = t;
    while (first > 0 && indices[first - 1] === indices[t]) first--;
    const kv = seqTokens.get(first)!;
    for (let p = 0; p < maxLen; p++) {
      assert.equal(r.defined.at(t, p), p < ctx[t] ? 1 : 0, `defined[${t}, ${p}]`);
      if (p >= ctx[t]) continue;
      const s: number[] = [];
      for (let h = 0; h < H; h++) {
        const qo = (t * H + h) * half;
        s.push(slowFp4Score(qb, qo, scaleBytes(qs[t * H + h]), kv[p].bytes, 0, scaleBytes(kv[p].word), D));
      }
      const want = slowSm100Fp32(s, w, t * H), got = r.logits.at(t, p);
      assert.ok(Object.is(got, want), `logit[${t}, ${p}] = ${got}, slow ${want}`);
      n++;
    }
  }
  return n;
}

Deno.test("fp8PagedMqaLogits() with varlen indices", async (t) => {
  await t.step("a run of 3 equal indices reads the first token's block-table row for all 3", () => {
    assert.equal(checkAgainstSlow([4, 4, 4], [20, 33, 41], 32), 20 + 33 + 41);
  });

  await t.step("alternating indices make one-token requests, each with its own row", () => {
    assert.equal(checkAgainstSlow([1, 2, 1, 2], [9, 40, 17, 3], 32), 9 + 40 + 17 + 3);
  });

  await t.step("a run of 2 shares the first row; a repeated value after a gap starts a new request", () => {
    assert.equal(checkAgainstSlow([5, 5, 6, 6, 6, 6, 6, 5], [12, 70, 1, 2, 30, 64, 65, 7], 64), 251);
  });

  await t.step("a run whose last token is not the run's longest is rejected", () => {
    const { inputs, maxLen } = varlenFp4(9, 32, [3, 3, 3], [10, 12, 12], 8, 64);
    const bad = { ...inputs, context_lens: Tensor.from("i32", [3, 1], new Int32Array([10, 12, 11])) };
    assert.throws(
      () => fp8PagedMqaLogits(bad, { maxContextLen: maxLen }),
      (e) => e instanceof RangeError && /context_lens\[1\] = 12 exceeds the run's last token \(2: 11\)/.test(e.message),
    );
  });

  await t.step("block-table rows of later tokens in a run are never read (even -1)", () => {
    const { inputs, maxLen } = varlenFp4(11, 32, [8, 8], [5, 36], 8, 64);
    const ref = fp8PagedMqaLogits(inputs, { maxContextLen: maxLen });
    const bt = (inputs.block_table.data as Int32Array).slice();
    bt.fill(-1, bt.length / 2);
    const r = fp8PagedMqaLogits({ ...inputs, block_table: Tensor.from("i32", [2, 2], bt) }, { maxContextLen: maxLen });
    for (let p = 0; p < 36; p++) assert.ok(Object.is(r.logits.at(1, p), ref.logits.at(1, p)));
    const noIdx = { ...inputs, indices: undefined, block_table: Tensor.from("i32", [2, 2], bt) };
    assert.throws(() => fp8PagedMqaLogits(noIdx, { maxContextLen: maxLen }), /block_table entry -1/);
  });
});
