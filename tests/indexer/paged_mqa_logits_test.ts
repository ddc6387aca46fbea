import assert from "node:assert/strict";
import { fp8MqaLogits, fp8PagedMqaLogits, getPagedMqaLogitsMetadata } from "../../reference/indexer/mod.ts";
import { Prng } from "../../reference/random/prng.ts";
import { Tensor } from "../../reference/tensor/tensor.ts";
import { randomE4m3, randomF32 } from "./_helpers.ts";

/** A paged problem: B requests, next_n tokens each, pages shuffled in a pool; also the contiguous KV of each request. */
function pagedCase(seed: number, B: number, nextN: number, H: number, D: number, ctx: number[][], blk = 64) {
  const rng = new Prng(seed);
  const maxLen = Math.max(...ctx.flat());
  const pagesPer = ctx.map((r) => Math.ceil(r[nextN - 1] / blk));
  const numBlocks = pagesPer.reduce((a, b) => a + b, 0) + 2;
  const width = D + 4;
  const cache = new Uint8Array(numBlocks * blk * width);
  const order = Array.from({ length: numBlocks }, (_, i) => numBlocks - 1 - i); // reversed pool
  const maxBlocks = Math.max(...pagesPer, 1);
  const table = new Int32Array(B * maxBlocks).fill(-1);
  const kvRows: Uint8Array[] = [], sfRows: Float32Array[] = [];
  let next = 0;
  for (let b = 0; b < B; b++) {
    const L = pagesPer[b] * blk;
    const vals = randomE4m3(rng, L * D), sfs = randomF32(rng, L, -8, -4, true);
    kvRows.push(vals), sfRows.push(sfs);
    for (let p = 0; p < pagesPer[b]; p++) {
      const page = order[next++];
      table[b * maxBlocks + p] = page;
      const base = page * blk * width;
      cache.set(vals.subarray(p * blk * D, (p + 1) * blk * D), base);
      const dv = new DataView(cache.buffer, base + blk * D, blk * 4);
      for (let s = 0; s < blk; s++) dv.setFloat32(4 * s, sfs[p * blk + s], true);
    }
  }
  return {
    inputs: {
      q: Tensor.from("e4m3", [B, nextN, H, D], randomE4m3(rng, B * nextN * H * D)),
      kv_cache: Tensor.from("u8", [numBlocks, blk, 1, width], cache),
      weights: Tensor.from("f32", [B * nextN, H], randomF32(rng, B * nextN * H)),
      context_lens: Tensor.from("i32", [B, nextN], Int32Array.from(ctx.flat())),
      block_table: Tensor.from("i32", [B, maxBlocks], table),
    },
    kvRows,
    sfRows,
    maxLen,
  };
}

Deno.test("fp8PagedMqaLogits()", async (t) => {
  const H = 32, D = 32;
  const ctx = [[70, 100], [5, 9], [0, 130]]; // context_lens varies within each request
  const c = pagedCase(5, 3, 2, H, D, ctx);

  await t.step("equals the non-paged reference on each request's gathered KV, for p < context_lens[b, j]", () => {
    const r = fp8PagedMqaLogits(c.inputs, { maxContextLen: c.maxLen });
    assert.deepEqual(r.logits.shape, [6, 130]);
    assert.equal(r.logits.strides[0], 256);
    for (let b = 0; b < 3; b++) {
      const L = c.sfRows[b].length;
      for (let j = 0; j < 2; j++) {
        const row = b * 2 + j;
        const q = Tensor.from("e4m3", [1, H, D], (c.inputs.q.data as Uint8Array).slice(row * H * D, (row + 1) * H * D));
        const ref = fp8MqaLogits({
          q,
          kv: Tensor.from("e4m3", [L, D], c.kvRows[b]),
          kv_sf: Tensor.from("f32", [L], c.sfRows[b]),
          weights: Tensor.from("f32", [1, H], (c.inputs.weights.data as Float32Array).slice(row * H, (row + 1) * H)),
          ks: Tensor.from("i32", [1], new Int32Array([0])),
          ke: Tensor.from("i32", [1], new Int32Array([ctx[b][j]])),
        }, { cleanLogits: false });
        for (let p = 0; p < 130; p++) {
          if (p < ctx[b][j]) {
            assert.ok(Object.is(r.logits.at(row, p), ref.logits.at(0, p)), `row ${row} p ${p}`);
            assert.equal(r.defined.at(row, p), 1);
          } else {
            assert.equal(r.defined.at(row, p), 0);
          }
        }
      }
    }
  });

  await t.step("states the last-entry precondition of context_lens as an error", () => {
    const bad = { ...c.inputs, context_lens: Tensor.from("i32", [3, 2], new Int32Array([70, 100, 9, 5, 0, 130])) };
    assert.throws(() => fp8PagedMqaLogits(bad, { maxContextLen: 130 }), /last entry must be the row maximum/);
  });

  await t.step("rejects a KV-cache page of the wrong width", () => {
    const kv_cache = Tensor.zeros("u8", [4, 64, 1, D]);
    assert.throws(
      () => fp8PagedMqaLogits({ ...c.inputs, kv_cache }, { maxContextLen: 130 }),
      /page width must be D \+ 4 = 36/,
    );
  });

  await t.step("raises for clean_logits = true, like DeepGEMM", () => {
    assert.throws(() => fp8PagedMqaLogits(c.inputs, { maxContextLen: 130, cleanLogits: true }), /clean_logits = true/);
  });

  await t.step("rejects next_n = 3 and block_kv = 32 on SM90 and varlen outside SM100", () => {
    const c3 = pagedCase(1, 1, 3, H, D, [[1, 2, 3]]);
    assert.throws(() => fp8PagedMqaLogits(c3.inputs, { maxContextLen: 3 }), /next_n ∈ \{1, 2\}/);
    const c32 = pagedCase(1, 1, 1, H, D, [[40]], 32);
    assert.throws(() => fp8PagedMqaLogits(c32.inputs, { maxContextLen: 40 }), /block_kv = 64/);
    assert.ok(fp8PagedMqaLogits(c32.inputs, { maxContextLen: 40, model: "sm100" }).defined.at(0, 39) === 1);
    const idx = Tensor.from("i32", [1], new Int32Array([0]));
    const c64 = pagedCase(1, 1, 1, H, D, [[40]]);
    assert.throws(() => fp8PagedMqaLogits({ ...c64.inputs, indices: idx }, { maxContextLen: 40 }), /varlen/);
  });

  await t.step("handles next_n = 3 under the sm100 model with varying lengths", () => {
    const c3 = pagedCase(2, 1, 3, H, D, [[1, 2, 3]]);
    const r = fp8PagedMqaLogits(c3.inputs, { maxContextLen: 3, model: "sm100" });
    assert.deepEqual([0, 1, 2].map((p) => r.defined.at(2, p)), [1, 1, 1]);
    assert.deepEqual([0, 1, 2].map((p) => r.defined.at(0, p)), [1, 0, 0]);
  });
});

/** Independent definition of the SM90 schedule: enumerate every (atom row, split) work item, take item seg_s. */
function slowMetadata(ctx: number[][], numSms: number): number[] {
  const nextN = ctx[0]?.length ?? 1;
  const atoms = Math.ceil(nextN / (nextN >= 2 ? 2 : 1));
  const items: [number, number][] = [];
  ctx.forEach((row, b) => {
    const c = Math.ceil(row[nextN - 1] / 256);
    for (let a = 0; a < atoms; a++) for (let k = 0; k < c; k++) items.push([b * atoms + a, k]);
  });
  const total = items.length, q = Math.floor(total / numSms), r = total % numSms;
  const out: number[] = [];
  for (let s = 0; s < numSms; s++) {
    const seg = s * q + Math.max(0, s - (numSms - r));
    out.push(...(seg < total ? items[seg] : [ctx.length * atoms, 0]));
  }
  out.push(ctx.length * atoms, 0);
  return out;
}

Deno.test("getPagedMqaLogitsMetadata()", async (t) => {
  const rng = new Prng(77);
  for (const B of [1, 7, 256]) {
    for (const nextN of [1, 2]) {
      await t.step(`equals the work-item enumeration for B = ${B}, next_n = ${nextN}, SMs ∈ {1, 3, 78, 132}`, () => {
        const ctx = Array.from({ length: B }, () => {
          const last = rng.int(3) === 0 ? rng.int(300) : rng.int(9000);
          return nextN === 1 ? [last] : [Math.max(0, last - 1), last];
        });
        const t2 = Tensor.from("i32", [B, nextN], Int32Array.from(ctx.flat()));
        for (const sms of [1, 3, 78, 132]) {
          const m = getPagedMqaLogitsMetadata(t2, 64, sms);
          assert.deepEqual(m.shape, [sms + 1, 2]);
          assert.deepEqual(Array.from(m.data as Int32Array), slowMetadata(ctx, sms), `B ${B} SMs ${sms}`);
        }
      });
    }
  }

  await t.step("gives every SM (B·atoms, 0) when all lengths are 0", () => {
    const m = getPagedMqaLogitsMetadata(Tensor.from("i32", [7, 2], new Int32Array(14)), 64, 4);
    assert.deepEqual(Array.from(m.data as Int32Array), [7, 0, 7, 0, 7, 0, 7, 0, 7, 0]);
  });

  await t.step("rejects block_kv ≠ 64 and 1-D context_lens", () => {
    assert.throws(() => getPagedMqaLogitsMetadata(Tensor.zeros("i32", [2, 1]), 32, 4), /block_kv = 64/);
    assert.throws(() => getPagedMqaLogitsMetadata(Tensor.zeros("i32", [2]), 64, 4), TypeError);
  });
});
