import assert from "node:assert/strict";
import { bf16, fma32 } from "../../reference/fp32.ts";
import { Prng } from "../../reference/random/prng.ts";
import { slowSm100Bf16 } from "./_fp4_slow.ts";
import { randomF32 } from "./_helpers.ts";
import { checkHeadReductionOrder, HEAD_REDUCTION_ORDERS, reduceHeads } from "../../reference/indexer/mod.ts";

const f = Math.fround;

/** Lane results of the probe kernel (tests/indexer/gpu_probe/mqa_reduce_probe.cu) on an H200, CUDA 13.0, 16 warps. */
function loadProbe(H: number) {
  const W = 16;
  const all = new Float32Array(Deno.readFileSync(new URL(`./gpu_probe/h200_reduce_h${H}.f32`, import.meta.url)).buffer);
  let o = 0;
  const take = (n: number) => all.subarray(o, o += n);
  return { W, acc: take(W * 32 * H / 2), w: take(W * H), sf: take(W * 16), lane: take(W * 64) };
}

/** Scores per head of (warp, kv row r in 0..15) from the per-lane accumulator layout of wgmma (row = lane/4 + 8·half). */
function probeCase(p: ReturnType<typeof loadProbe>, H: number, wp: number, r: number) {
  const s = new Float64Array(H), w = new Float64Array(H);
  const half = r >> 3, lr = r & 7;
  for (let q = 0; q < 4; q++) {
    const lane = lr * 4 + q;
    for (let j = 0; j < H / 2; j++) {
      if (((j >> 1) & 1) !== half) continue;
      const h = 8 * (j >> 2) + 2 * q + (j & 1);
      s[h] = p.acc[(wp * 32 + lane) * (H / 2) + j];
    }
  }
  for (let h = 0; h < H; h++) w[h] = p.w[wp * H + h];
  return { s, w, sf: p.sf[wp * 16 + r], gpu: p.lane[(wp * 32 + lr * 4) * 2 + half] };
}

Deno.test("reduceHeads()", async (t) => {
  for (const H of [32, 64]) {
    await t.step(`matches all 256 H200 probe logits for H = ${H} in the sm90 order`, () => {
      const p = loadProbe(H);
      let equal = 0, spec = 0;
      for (let wp = 0; wp < p.W; wp++) {
        for (let r = 0; r < 16; r++) {
          const c = probeCase(p, H, wp, r);
          if (Object.is(reduceHeads("sm90", c.s, 0, c.w, 0, H, c.sf), c.gpu)) equal++;
          if (Object.is(reduceHeads("sm90_spec81", c.s, 0, c.w, 0, H, c.sf), c.gpu)) spec++;
        }
      }
      assert.equal(equal, 256);
      assert.ok(spec < 256, `the §8.1 order matched all ${spec}; expected it to differ somewhere`);
    });
  }

  await t.step("fuses the left product of the first head-group pair and rounds the right one", () => {
    // Heads 0 and 8 (quad 0, e = 0): S = fma(r0, w0, fl32(r8·w8)); all other heads 0.
    const H = 32, s = new Float64Array(H), w = new Float64Array(H);
    const a = 1 + 2 ** -12;
    s[0] = a, w[0] = a, s[8] = 1, w[8] = -1;
    const kernel = reduceHeads("sm90", s, 0, w, 0, H, 1);
    assert.equal(kernel, fma32(a, a, -1)); // 2^-11 + 2^-24
    assert.equal(reduceHeads("sm90_spec81", s, 0, w, 0, H, 1), f(f(a * a) - 1)); // 2^-11
    assert.notEqual(kernel, reduceHeads("sm90_spec81", s, 0, w, 0, H, 1));
  });

  await t.step("multiplies the kv scale per lane pair before the butterfly", () => {
    const H = 32, s = new Float64Array(H), w = new Float64Array(H).fill(1);
    s[0] = 1, s[2] = 2 ** -30; // lanes 0 and 1 of the quad
    const sf = 1 + 2 ** -23;
    // P0 = fl32(1·sf) = sf, P1 = fl32(2^-30·sf); the sum rounds once more.
    assert.equal(reduceHeads("sm90", s, 0, w, 0, H, sf), f(f(sf) + f(2 ** -30 * sf)));
  });

  await t.step("drops negative scores (relu) in every order", () => {
    const H = 32, s = new Float64Array(H).fill(-3), w = new Float64Array(H).fill(1);
    for (const o of HEAD_REDUCTION_ORDERS) assert.equal(reduceHeads(o, s, 0, w, 0, H, 1), 0);
  });

  await t.step("sm100_fp32 sums four chains over heads ≡ r (mod 4) of 2·relu and halves", () => {
    const H = 8, s = new Float64Array([1, 2, 3, 4, 5, 6, 7, 8]), w = new Float64Array(H).fill(1);
    assert.equal(reduceHeads("sm100_fp32", s, 0, w, 0, H, 0.5), 18);
    assert.equal(reduceHeads("sm100_fp32", s, 0, w, 0, H, undefined), 36);
  });

  await t.step("sm100_bf16 rounds relu(s) to bf16, chains single-rounded bf16 FMAs and rounds every combine", () => {
    // 64 random score/weight sets against the direct BigInt evaluation, FP8 (with sfkv) and FP4 (without).
    const rng = new Prng(77);
    let differsFromFp32 = 0;
    for (let n = 0; n < 64; n++) {
      const H = [8, 16, 32, 64][n & 3];
      const s = Float64Array.from(randomF32(rng, H, -6, 8)), w = Float64Array.from(randomF32(rng, H, -4, 2), bf16);
      const sf = n % 2 ? undefined : bf16(randomF32(rng, 1, -10, -2, true)[0]) * (1 + 2 ** -9);
      const got = reduceHeads("sm100_bf16", s, 0, w, 0, H, sf);
      assert.ok(Object.is(got, slowSm100Bf16([...s], w, 0, sf)), `case ${n}`);
      assert.equal(bf16(got), got); // a bf16 value
      if (bf16(reduceHeads("sm100_fp32", s, 0, w, 0, H, sf)) !== got) differsFromFp32++;
    }
    assert.ok(differsFromFp32 > 4, `bf16 order should differ from the fp32 one (${differsFromFp32} of 64)`);
    // bf16(sfkv) first: a scale just above 1 rounds to 1 before the multiply.
    const one = new Float64Array(8).fill(1);
    assert.equal(reduceHeads("sm100_bf16", one, 0, one, 0, 8, 1 + 2 ** -12), 8);
  });

  await t.step("rejects unknown order names", () => {
    assert.throws(() => checkHeadReductionOrder("sm80"), RangeError);
  });
});
