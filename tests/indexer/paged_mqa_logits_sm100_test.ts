import assert from "node:assert/strict";
import { fp8PagedMqaLogits } from "../../reference/indexer/mod.ts";
import { extraOp } from "../../reference/registry.ts";
import { Tensor } from "../../reference/tensor/tensor.ts";
import { bf16Rne, bf16ToF32 } from "../../reference/fp32.ts";
import { Prng } from "../../reference/random/prng.ts";
import { slowFp4Score, slowSm100Bf16, slowSm100Fp32 } from "./_fp4_slow.ts";
import { fp4Rows, scaleBytes } from "./_sm100_inputs.ts";
import { randomF32 } from "./_helpers.ts";

/** A paged FP4 problem: every request's tokens in shuffled pages of the FP4 page format. */
function pagedFp4(seed: number, blockKv: number, ctx: number[][], H: number, D: number, bf16W = false) {
  const rng = new Prng(seed);
  const B = ctx.length, nextN = ctx[0].length, half = D / 2, width = half + 4;
  const maxBlocks = Math.max(...ctx.map((r) => Math.ceil(r[nextN - 1] / blockKv)), 1);
  const numBlocks = B * maxBlocks + 1;
  const order = Array.from({ length: numBlocks }, (_, i) => i);
  for (let i = numBlocks - 1; i > 0; i--) {
    const j = rng.int(i + 1);
    [order[i], order[j]] = [order[j], order[i]];
  }
  const cache = new Uint8Array(numBlocks * blockKv * width).fill(0x5a); // garbage where no token lives
  const bt = new Int32Array(B * maxBlocks);
  const tokens: { bytes: Int8Array; word: number }[][] = [];
  for (let b = 0; b < B; b++) {
    const L = ctx[b][nextN - 1], kv = fp4Rows(rng, Math.max(L, 1), D);
    const kb = kv.q.data as Int8Array, ks = kv.sf.data as Int32Array;
    tokens.push([]);
    for (let p = 0; p < L; p++) {
      const blk = order[b * maxBlocks + Math.floor(p / blockKv)], slot = p % blockKv;
      bt[b * maxBlocks + Math.floor(p / blockKv)] = blk;
      const page = blk * blockKv * width;
      for (let x = 0; x < half; x++) cache[page + slot * half + x] = kb[p * half + x] & 0xff;
      new DataView(cache.buffer).setInt32(page + blockKv * half + 4 * slot, ks[p], true);
      tokens[b].push({ bytes: kb.subarray(p * half, p * half + half), word: ks[p] });
    }
  }
  const q = fp4Rows(rng, B * nextN * H, D);
  const wf = randomF32(rng, B * nextN * H, -3, 2);
  return {
    inputs: {
      q: q.q.reshape([B, nextN, H, half]),
      q_sf: q.sf.reshape([B, nextN, H]),
      kv_cache: Tensor.from("u8", [numBlocks, blockKv, 1, width], cache),
      weights: bf16W
        ? Tensor.from("bf16", [B * nextN, H], Uint16Array.from(wf, (v) => bf16Rne(v)))
        : Tensor.from("f32", [B * nextN, H], wf),
      context_lens: Tensor.from("i32", [B, nextN], Int32Array.from(ctx.flat())),
      block_table: Tensor.from("i32", [B, maxBlocks], bt),
    },
    tokens,
    maxLen: Math.max(...ctx.flat()),
  };
}

Deno.test("fp8PagedMqaLogits() on SM100: the FP4 page format", async (t) => {
  const ctx = [[5, 30, 40], [0, 9, 17]];
  for (const [blockKv, bf16W] of [[32, false], [64, true]] as const) {
    await t.step(
      `equals the BigInt path on every p < context_lens (block_kv = ${blockKv}, ${bf16W ? "bf16" : "f32"} weights)`,
      () => {
        const H = 8, D = 64, half = 32;
        const { inputs, tokens, maxLen } = pagedFp4(blockKv + 1, blockKv, ctx, H, D, bf16W);
        const r = fp8PagedMqaLogits(inputs, { maxContextLen: maxLen, logitsDtype: bf16W ? "bf16" : "f32" });
        const qb = inputs.q.data as Int8Array, qs = inputs.q_sf.data as Int32Array;
        const w = bf16W
          ? Array.from(inputs.weights.data as Uint16Array, bf16ToF32)
          : inputs.weights.data as Float32Array;
        let n = 0;
        for (let b = 0; b < 2; b++) {
          for (let j = 0; j < 3; j++) {
            const row = b * 3 + j;
            for (let p = 0; p < maxLen; p++) {
              assert.equal(r.defined.at(row, p), p < ctx[b][j] ? 1 : 0);
              if (p >= ctx[b][j]) continue;
              const tok = tokens[b][p], s: number[] = [];
              for (let h = 0; h < H; h++) {
                s.push(
                  slowFp4Score(
                    qb,
                    (row * H + h) * half,
                    scaleBytes(qs[row * H + h]),
                    tok.bytes,
                    0,
                    scaleBytes(tok.word),
                    D,
                  ),
                );
              }
              const want = bf16W ? slowSm100Bf16(s, w, row * H) : slowSm100Fp32(s, w, row * H);
              const got = bf16W ? bf16ToF32(r.logits.at(row, p)) : r.logits.at(row, p);
              assert.ok(Object.is(got, want), `logit[${row}, ${p}] = ${got}, slow ${want}`);
              n++;
            }
          }
        }
        assert.equal(n, 5 + 30 + 40 + 0 + 9 + 17);
      },
    );
  }

  await t.step("runs through the registry (fp8_fp4_paged_mqa_logits, model auto)", () => {
    const { inputs, maxLen } = pagedFp4(3, 32, [[3, 12]], 16, 128);
    const out = extraOp("fp8_fp4_paged_mqa_logits").run(inputs, { max_context_len: maxLen }, { model: "auto" });
    const direct = fp8PagedMqaLogits(inputs, { maxContextLen: maxLen });
    assert.ok(Object.is(out.logits.at(1, 11), direct.logits.at(1, 11)));
    assert.ok(Number.isFinite(direct.logits.at(1, 11)));
  });

  await t.step("rejects page widths, block_kv, models and dtypes the FP4 path does not take", () => {
    const { inputs, maxLen } = pagedFp4(4, 32, [[3, 12]], 8, 64);
    const o = { maxContextLen: maxLen };
    const wide = Tensor.zeros("u8", [3, 32, 1, 68]);
    assert.throws(() => fp8PagedMqaLogits({ ...inputs, kv_cache: wide }, o), /page width must be D\/2 \+ 4 = 36 bytes/);
    const b16 = Tensor.zeros("u8", [3, 16, 1, 36]);
    assert.throws(() => fp8PagedMqaLogits({ ...inputs, kv_cache: b16 }, o), /sm100 supports block_kv ∈ \{32, 64\}/);
    assert.throws(() => fp8PagedMqaLogits(inputs, { ...o, model: "sm90" }), /FP4 Q\/KV needs an SM100 model/);
    assert.throws(() => fp8PagedMqaLogits({ ...inputs, q_sf: undefined }, o), /FP4 q needs q_sf/);
    assert.throws(
      () => fp8PagedMqaLogits({ ...inputs, q_sf: Tensor.zeros("i32", [1, 2, 4]) }, o),
      /q_sf must have shape \[1, 2, 8\]/,
    );
    const wb = Tensor.zeros("bf16", [2, 8]);
    assert.throws(() => fp8PagedMqaLogits({ ...inputs, weights: wb }, o), /bf16 weights need bf16 logits/);
    assert.throws(() => fp8PagedMqaLogits(inputs, { ...o, cleanLogits: true }), /clean_logits = true is rejected/);
  });
});
