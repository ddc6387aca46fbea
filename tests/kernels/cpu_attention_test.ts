// The CPU backend's tf32_hc_prenorm_gemm and fp8_mqa_logits: hand-made cases, and bit-for-bit agreement with the
// TypeScript references (reference/hyperconnection, reference/indexer) on seeded random cases.
import assert from "node:assert/strict";
import { f32Bits, f32FromBits } from "../../reference/fp32.ts";
import { tf32HcPrenormGemm } from "../../reference/hyperconnection/mod.ts";
import { fp8MqaLogits, fp8PagedMqaLogits } from "../../reference/indexer/mod.ts";
import { Tensor } from "../../reference/tensor/tensor.ts";
import { NativeError, openBackend } from "../../ffi/mod.ts";
import { bf16Tensor, bitsOf, e4m3Tensor, rngFor } from "./_cases.ts";
import type { Prng } from "../../reference/random/prng.ts";

/** f32 values with full random mantissas (low 13 bits set, so TF32 rounding matters), about ±2^-4..2^3. */
function f32Tensor(rng: Prng, shape: number[]): Tensor {
  const n = shape.reduce((x, y) => x * y, 1);
  return Tensor.from(
    "f32",
    shape,
    Float32Array.from(
      { length: n },
      () => f32FromBits((rng.int(2) << 31) | ((123 + rng.int(8)) << 23) | rng.int(1 << 23)),
    ),
  );
}

Deno.test("tf32HcPrenormGemm()", async (t) => {
  using be = await openBackend("cpu");

  await t.step("drops the low 13 bits of B (truncate) and keeps 2·64 = 128, sqr_sum 256", () => {
    const a = Tensor.from("bf16", [1, 64], new Uint16Array(64).fill(0x4000)); // 2.0
    const b = Tensor.from("f32", [8, 64], new Float32Array(8 * 64).fill(1 + 2 ** -12));
    const d = Tensor.zeros("f32", [1, 8]), sqrSum = Tensor.zeros("f32", [1]);
    be.tf32HcPrenormGemm({ a, b, d, sqrSum });
    assert.equal(d.at(0, 3), 128);
    assert.equal(sqrSum.at(0), 256);
    be.tf32HcPrenormGemm({ a, b, d, sqrSum, tf32Rounding: "rne" }); // 1 + 2^-12 rounds down to 1 as well
    assert.equal(d.at(0, 3), 128);
  });

  for (const [splits, rounding] of [[undefined, "truncate"], [3, "rne"]] as const) {
    await t.step(`equals the reference bit for bit (num_splits ${splits ?? "none"}, ${rounding})`, () => {
      const rng = rngFor(5151);
      const M = 13, N = 24, K = 448;
      const a = bf16Tensor(rng, [M, K]), b = f32Tensor(rng, [N, K]);
      const S = splits ?? 1;
      const d = Tensor.zeros("f32", splits ? [S, M, N] : [M, N]), sqrSum = Tensor.zeros("f32", splits ? [S, M] : [M]);
      be.tf32HcPrenormGemm({ a, b, d, sqrSum, numSplits: S, tf32Rounding: rounding });
      const ref = tf32HcPrenormGemm(a, b, { numSplits: splits, tf32Rounding: rounding });
      assert.deepEqual(bitsOf(d), bitsOf(ref.d));
      assert.deepEqual(bitsOf(sqrSum), bitsOf(ref.sqr_sum));
    });
  }

  await t.step("rejects K not a multiple of 64 and splits without a split dimension", () => {
    const a = Tensor.zeros("bf16", [2, 96]), b = Tensor.zeros("f32", [8, 96]);
    assert.throws(
      () => be.tf32HcPrenormGemm({ a, b, d: Tensor.zeros("f32", [2, 8]), sqrSum: Tensor.zeros("f32", [2]) }),
      RangeError,
    );
    const a2 = Tensor.zeros("bf16", [2, 128]), b2 = Tensor.zeros("f32", [8, 128]);
    assert.throws(
      () =>
        be.tf32HcPrenormGemm({
          a: a2,
          b: b2,
          d: Tensor.zeros("f32", [2, 8]),
          sqrSum: Tensor.zeros("f32", [2]),
          numSplits: 2,
        }),
      /numSplits > 1 needs d \[S, M, N\]/,
    );
  });
});

function mqaCase(seed: number, S: number, H: number, D: number, Skv: number) {
  const rng = rngFor(seed);
  const q = e4m3Tensor(rng, [S, H, D]), kv = e4m3Tensor(rng, [Skv, D]);
  const kvSf = Tensor.from(
    "f32",
    [Skv],
    Float32Array.from({ length: Skv }, () => f32FromBits(((120 + rng.int(8)) << 23) | rng.int(1 << 23))),
  );
  const weights = Tensor.from(
    "f32",
    [S, H],
    Float32Array.from(
      { length: S * H },
      () => f32FromBits((rng.int(2) << 31) | ((122 + rng.int(6)) << 23) | rng.int(1 << 23)),
    ),
  );
  const ks = Int32Array.from({ length: S }, () => rng.int(Skv));
  const ke = Int32Array.from(ks, (x) => Math.min(Skv + 3, x + 1 + rng.int(Skv)));
  return { q, kv, kv_sf: kvSf, weights, ks: Tensor.from("i32", [S], ks), ke: Tensor.from("i32", [S], ke) };
}

Deno.test("fp8MqaLogits()", async (t) => {
  using be = await openBackend("cpu");
  for (const [model, refModel] of [["sm90_mqa", "sm90"], ["exact", "exact"]] as const) {
    await t.step(`equals the reference bit for bit with clean_logits (${model})`, () => {
      const S = 6, H = 32, D = 64, Skv = 40;
      const x = mqaCase(6161, S, H, D, Skv);
      const logits = Tensor.zeros("f32", [S, Skv]);
      be.fp8MqaLogits({ ...x, kvSf: x.kv_sf, logits, model });
      const ref = fp8MqaLogits(x, { model: refModel });
      let checked = 0;
      for (let i = 0; i < S; i++) {
        for (let j = 0; j < Skv; j++) {
          if (ref.defined.at(i, j) !== 1) continue;
          assert.equal(f32Bits(logits.at(i, j)), f32Bits(ref.logits.at(i, j)), `(${i}, ${j})`);
          checked++;
        }
      }
      assert.equal(checked, S * Skv); // with clean_logits every entry is defined
    });
  }

  await t.step("writes the compressed layout out[i, j - ks[i]] and leaves the rest", () => {
    const S = 4, H = 64, D = 32, Skv = 24;
    const x = mqaCase(7171, S, H, D, Skv);
    const ke = Int32Array.from({ length: S }, (_, i) => Math.min(Skv, x.ks.at(i) + 5));
    const keT = Tensor.from("i32", [S], ke);
    const logits = Tensor.from("f32", [S, 8], new Float32Array(S * 8).fill(7));
    be.fp8MqaLogits({ ...x, ke: keT, kvSf: x.kv_sf, logits, cleanLogits: false, maxSeqlenK: 8 });
    const ref = fp8MqaLogits({ ...x, ke: keT }, { cleanLogits: false, maxSeqlenK: 8 });
    for (let i = 0; i < S; i++) {
      const n = Math.min(ke[i], Skv) - Math.min(x.ks.at(i), Skv);
      for (let c = 0; c < 8; c++) {
        if (c < n) assert.equal(f32Bits(logits.at(i, c)), f32Bits(ref.logits.at(i, c)), `(${i}, ${c})`);
        else assert.equal(logits.at(i, c), 7);
      }
    }
  });

  await t.step("rejects a head count the SM90 reduction cannot take, and an unsupported model", () => {
    const x = mqaCase(1, 2, 12, 32, 4);
    assert.throws(
      () => be.fp8MqaLogits({ ...x, kvSf: x.kv_sf, logits: Tensor.zeros("f32", [2, 4]) }),
      (e: unknown) => e instanceof NativeError && /multiple of 8/.test(e.message),
    );
    const y = mqaCase(1, 2, 8, 32, 4);
    assert.throws(
      () => be.fp8MqaLogits({ ...y, kvSf: y.kv_sf, logits: Tensor.zeros("f32", [2, 4]), model: "bf16" }),
      (e: unknown) => e instanceof NativeError && e.code === "GO_ERR_UNSUPPORTED",
    );
  });
});

Deno.test("fp8PagedMqaLogits()", async (t) => {
  using be = await openBackend("cpu");
  await t.step("accepts next_n = 0 (no rows) without reading context_lens[b, -1]", () => {
    const B = 2, H = 8, D = 32;
    be.fp8PagedMqaLogits({
      q: Tensor.zeros("e4m3", [B, 0, H, D]),
      kvCache: Tensor.zeros("u8", [1, 64, 1, D + 4]),
      weights: Tensor.zeros("f32", [0, H]),
      contextLens: Tensor.zeros("i32", [B, 0]),
      blockTable: Tensor.zeros("i32", [B, 1]),
      logits: Tensor.zeros("f32", [0, 8]),
    });
    // The empty context_lens view starts right after an i32 holding 99999: reading [b, -1] would see it.
    using buf = be.alloc(8);
    buf.copyIn(new Int32Array([99999, 0]));
    be.fp8PagedMqaLogits({
      q: Tensor.zeros("e4m3", [B, 0, H, D]),
      kvCache: Tensor.zeros("u8", [1, 64, 1, D + 4]),
      weights: Tensor.zeros("f32", [0, H]),
      contextLens: { buffer: buf, byteOffset: 4, dtype: "i32", shape: [B, 0], strides: [0, 1] },
      blockTable: Tensor.zeros("i32", [B, 1]),
      logits: Tensor.zeros("f32", [0, 8]),
    });
  });
  await t.step("equals the reference bit for bit on the positions below context_lens", () => {
    const rng = rngFor(8181);
    const B = 3, nextN = 2, H = 32, D = 32, blockKv = 64, numBlocks = 5, maxLen = 150;
    const q = e4m3Tensor(rng, [B, nextN, H, D]);
    const cache = Tensor.zeros("u8", [numBlocks, blockKv, 1, D + 4]);
    const bytes = cache.data as Uint8Array, view = new DataView(bytes.buffer);
    for (let blk = 0; blk < numBlocks; blk++) {
      const base = blk * blockKv * (D + 4);
      for (let i = 0; i < blockKv * D; i++) bytes[base + i] = e4m3Tensor(rng, [1]).at(0);
      for (let sl = 0; sl < blockKv; sl++) {
        view.setUint32(base + blockKv * D + 4 * sl, ((120 + rng.int(8)) << 23) | rng.int(1 << 23), true);
      }
    }
    const weights = Tensor.from(
      "f32",
      [B * nextN, H],
      Float32Array.from(
        { length: B * nextN * H },
        () => f32FromBits((rng.int(2) << 31) | ((122 + rng.int(6)) << 23) | rng.int(1 << 23)),
      ),
    );
    const ctx = Tensor.from("i32", [B, nextN], new Int32Array([10, 70, 0, 0, 149, 150]));
    const table = Tensor.from("i32", [B, 3], new Int32Array([4, 1, 0, 2, 2, 2, 3, 0, 1]));
    const logits = Tensor.from("f32", [B * nextN, maxLen], new Float32Array(B * nextN * maxLen).fill(7));
    be.fp8PagedMqaLogits({ q, kvCache: cache, weights, contextLens: ctx, blockTable: table, logits });
    const ref = fp8PagedMqaLogits({ q, kv_cache: cache, weights, context_lens: ctx, block_table: table }, {
      maxContextLen: maxLen,
    });
    let checked = 0;
    for (let r = 0; r < B * nextN; r++) {
      for (let p = 0; p < maxLen; p++) {
        if (ref.defined.at(r, p) === 1) {
          assert.equal(f32Bits(logits.at(r, p)), f32Bits(ref.logits.at(r, p)), `(${r}, ${p})`);
          checked++;
        } else {
          assert.equal(logits.at(r, p), 7, `untouched (${r}, ${p})`);
        }
      }
    }
    assert.equal(checked, 10 + 70 + 149 + 150);
  });

  await t.step("rejects a block_table entry outside the cache", () => {
    const q = Tensor.zeros("e4m3", [1, 1, 8, 32]);
    assert.throws(
      () =>
        be.fp8PagedMqaLogits({
          q,
          kvCache: Tensor.zeros("u8", [2, 64, 1, 36]),
          weights: Tensor.zeros("f32", [1, 8]),
          contextLens: Tensor.from("i32", [1, 1], new Int32Array([5])),
          blockTable: Tensor.from("i32", [1, 1], new Int32Array([2])),
          logits: Tensor.zeros("f32", [1, 8]),
        }),
      (e: unknown) => e instanceof NativeError && /block_table\[0, 0\] = 2 is outside \[0, 2\)/.test(e.message),
    );
  });
});
