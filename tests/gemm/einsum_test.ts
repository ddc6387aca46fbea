import assert from "node:assert/strict";
import { GEMM_OPS } from "../../reference/registry.ts";
import { Tensor } from "../../reference/tensor/tensor.ts";
import { Prng } from "../../reference/random/prng.ts";
import { bf16Bits, slowBf16Chain, slowSm100, slowSm90 } from "./_slow.ts";

const einsum = GEMM_OPS.einsum, fp8Einsum = GEMM_OPS.fp8_einsum;

/** bf16 bit patterns with moderate exponents (values in ±[2^-7, 2^7)). */
function randBf16(r: Prng, n: number): Uint16Array {
  return Uint16Array.from({ length: n }, () => (r.int(2) << 15) | ((120 + r.int(14)) << 7) | r.int(128));
}
function randE4m3(r: Prng, n: number): Uint8Array {
  return Uint8Array.from({ length: n }, () => {
    const c = r.int(256);
    return (c & 0x7f) === 0x7f ? 0x7e : c;
  });
}
const vec = (t: Tensor, f: (k: number) => number[], n: number) => Array.from({ length: n }, (_, k) => t.at(...f(k)));
const sfVals = (r: Prng, n: number) => Float32Array.from({ length: n }, () => Math.fround((0.5 + r.uniform()) * 4));
/** Power-of-two scales 2^x, x in [-3, 3], and their exponents. */
function pow2Scales(r: Prng, n: number): { t: Float32Array; x: Int32Array } {
  const x = Int32Array.from({ length: n }, () => r.int(7) - 3);
  return { t: Float32Array.from(x, (e) => 2 ** e), x };
}

Deno.test("einsum()", async (t) => {
  const r = new Prng(41);
  await t.step("bmk,bnk->mn with BF16 D is the bf16 model over the concatenated (b, k) reduction", () => {
    const s = 3, m = 64, n = 64, k = 64;
    const a = Tensor.from("bf16", [s, m, k], randBf16(r, s * m * k));
    const b = Tensor.from("bf16", [s, n, k], randBf16(r, s * n * k));
    const { d } = einsum.run({ a, b, d: Tensor.zeros("bf16", [m, n]) }, { expr: "bmk,bnk->mn" }, {});
    assert.equal(d.dtype, "bf16");
    for (const [i, j] of [[0, 0], [5, 63], [63, 1], [31, 32], [17, 40]]) {
      const av: number[] = [], bv: number[] = [];
      for (let bb = 0; bb < s; bb++) {
        for (let kk = 0; kk < k; kk++) (av.push(a.at(bb, i, kk)), bv.push(b.at(bb, j, kk)));
      }
      assert.equal(d.at(i, j), bf16Bits(slowBf16Chain(av, bv)), `element (${i}, ${j})`);
    }
  });
  await t.step("bmk,bnk->mn with FP32 D accumulates into d = c: D = fl32(C + F)", () => {
    const s = 2, m = 64, n = 64, k = 128;
    const a = Tensor.from("bf16", [s, m, k], randBf16(r, s * m * k));
    const b = Tensor.from("bf16", [s, n, k], randBf16(r, s * n * k));
    const d = Tensor.from("f32", [m, n], Float32Array.from({ length: m * n }, () => r.uniform() * 100 - 50));
    const out = einsum.run({ a, b, c: d, d }, { expr: "bmk,bnk->mn" }, {}).d;
    for (const [i, j] of [[0, 0], [63, 63], [10, 20]]) {
      const av: number[] = [], bv: number[] = [];
      for (let bb = 0; bb < s; bb++) {
        for (let kk = 0; kk < k; kk++) (av.push(a.at(bb, i, kk)), bv.push(b.at(bb, j, kk)));
      }
      assert.equal(out.at(i, j), Math.fround(d.at(i, j) + slowBf16Chain(av, bv)));
    }
    assert.notEqual(out.data, d.data); // the caller's tensor is not modified
  });
  await t.step("bmk,bnk->mn rejects DeepGEMM's argument violations", () => {
    const a = Tensor.zeros("bf16", [2, 64, 64]), b = Tensor.zeros("bf16", [2, 64, 64]);
    const e = { expr: "bmk,bnk->mn" };
    assert.throws(() => einsum.run({ a, b, d: Tensor.zeros("f32", [64, 64]) }, e, {}), /same tensor as "d"/);
    assert.throws(
      () => einsum.run({ a, b, d: Tensor.zeros("bf16", [64, 64]), c: Tensor.zeros("bf16", [64, 64]) }, e, {}),
      /takes no "c"/,
    );
    assert.throws(
      () => einsum.run({ a: Tensor.zeros("bf16", [2, 64, 32]), b: Tensor.zeros("bf16", [2, 64, 32]) }, e, {}),
      RangeError,
    );
    assert.throws(() => einsum.run({ a: Tensor.zeros("bf16", [2, 96, 64]), b }, e, {}), /multiples of 64/);
    assert.throws(() => einsum.run({ a: a.transpose(1, 2), b }, e, {}), /contiguous/);
    assert.throws(() => einsum.run({ a, b }, { ...e, use_cublaslt: true }, {}), /use_cublaslt/);
  });
  await t.step("bhr,hdr->bhd is one bf16 GEMM per head, B may be a strided slice", () => {
    const B = 3, H = 2, R = 96, D = 5;
    const a = Tensor.from("bf16", [B, H, R], randBf16(r, B * H * R));
    const full = Tensor.from("bf16", [H, D, R + 32], randBf16(r, H * D * (R + 32)));
    const b = full.narrow(2, 0, R);
    const { d } = einsum.run({ a, b }, { expr: "bhr,hdr->bhd" }, {});
    assert.deepEqual(d.shape, [B, H, D]);
    for (let i = 0; i < B; i++) {
      for (let h = 0; h < H; h++) {
        for (let j = 0; j < D; j++) {
          const F = slowBf16Chain(vec(a, (k) => [i, h, k], R), vec(b, (k) => [h, j, k], R));
          assert.equal(d.at(i, h, j), bf16Bits(F), `element (${i}, ${h}, ${j})`);
        }
      }
    }
  });
  await t.step("bhd,hdr->bhr contracts over d with B[h] untransposed", () => {
    const B = 2, H = 2, D = 80, R = 6;
    const a = Tensor.from("bf16", [B, H, D], randBf16(r, B * H * D));
    const b = Tensor.from("bf16", [H, D, R + 2], randBf16(r, H * D * (R + 2))).narrow(2, 0, R);
    const { d } = einsum.run({ a, b, d: Tensor.zeros("bf16", [B, H, R]) }, { expr: "bhd,hdr->bhr" }, {});
    for (let i = 0; i < B; i++) {
      for (let h = 0; h < H; h++) {
        for (let j = 0; j < R; j++) {
          const F = slowBf16Chain(vec(a, (k) => [i, h, k], D), vec(b, (k) => [h, k, j], D));
          assert.equal(d.at(i, h, j), bf16Bits(F));
        }
      }
    }
  });
  await t.step("bh… expressions reject C, FP32 D and non-unit inner strides; unknown expressions are named", () => {
    const a = Tensor.zeros("bf16", [2, 2, 8]), b = Tensor.zeros("bf16", [2, 3, 8]);
    const e = { expr: "bhr,hdr->bhd" };
    assert.throws(() => einsum.run({ a, b, c: Tensor.zeros("bf16", [2, 2, 3]) }, e, {}), /takes no "c"/);
    assert.throws(() => einsum.run({ a, b, d: Tensor.zeros("f32", [2, 2, 3]) }, e, {}), /must be bf16/);
    assert.throws(() => einsum.run({ a: Tensor.zeros("bf16", [2, 8, 2]).transpose(1, 2), b }, e, {}), /stride\(2\)/);
    assert.throws(() => einsum.run({ a, b: Tensor.zeros("bf16", [2, 3, 7]) }, e, {}), /disagree/);
    assert.throws(() => einsum.run({ a, b }, { expr: "ij,jk->ik" }, {}), /unsupported einsum expression "ij,jk->ik"/);
    assert.throws(() => einsum.run({ a, b }, {}, {}), /"expr" is required/);
  });
  await t.step("runAsync gives the same bits", async () => {
    const a = Tensor.from("bf16", [130, 2, 64], randBf16(r, 130 * 2 * 64));
    const b = Tensor.from("bf16", [2, 140, 64], randBf16(r, 2 * 140 * 64));
    const one = einsum.run({ a, b }, { expr: "bhr,hdr->bhd" }, {}).d;
    const two = (await einsum.runAsync({ a, b }, { expr: "bhr,hdr->bhd" }, { workers: 2 })).d;
    assert.deepEqual(two.data, one.data);
  });
});

Deno.test("fp8_einsum()", async (t) => {
  const r = new Prng(43);
  await t.step("bhr,hdr->bhd on SM90 is the 1D2D model per head (per-token SFA, 128×128 block SFB)", () => {
    const B = 3, H = 2, R = 256, D = 136, sfk = 2;
    const x = Tensor.from("e4m3", [B, H, R], randE4m3(r, B * H * R));
    const y = Tensor.from("e4m3", [H, D, R], randE4m3(r, H * D * R));
    const sfx = Tensor.from("f32", [B, H, sfk], sfVals(r, B * H * sfk));
    const sfy = Tensor.from("f32", [H, 2, sfk], sfVals(r, H * 2 * sfk));
    const { d } = fp8Einsum.run({ a: x, sfa: sfx, b: y, sfb: sfy }, { expr: "bhr,hdr->bhd" }, {});
    assert.equal(d.dtype, "bf16");
    for (let i = 0; i < B; i++) {
      for (let h = 0; h < H; h++) {
        for (const j of [0, 7, 127, 128, 135]) {
          const F = slowSm90(
            vec(x, (k) => [i, h, k], R),
            vec(y, (k) => [h, j, k], R),
            vec(sfx, (g) => [i, h, g], sfk),
            vec(sfy, (g) => [h, j >> 7, g], sfk),
          );
          assert.equal(d.at(i, h, j), bf16Bits(F), `element (${i}, ${h}, ${j})`);
        }
      }
    }
  });
  await t.step("bhr,hdr->bhd on SM100 with FP32 D and C: D = fl32(C + acc), scales in the unit", () => {
    const B = 2, H = 2, R = 160, D = 8, sfk = 2;
    const x = Tensor.from("e4m3", [B, H, R], randE4m3(r, B * H * R));
    const y = Tensor.from("e4m3", [H, D, R], randE4m3(r, H * D * R));
    const sx = pow2Scales(r, B * H * sfk), sy = pow2Scales(r, H * sfk);
    const c = Tensor.from("f32", [B, H, D], Float32Array.from({ length: B * H * D }, () => r.uniform() * 10));
    const { d } = fp8Einsum.run(
      {
        a: x,
        sfa: Tensor.from("f32", [B, H, sfk], sx.t),
        b: y,
        sfb: Tensor.from("f32", [H, 1, sfk], sy.t),
        c,
        d: Tensor.zeros("f32", [B, H, D]),
      },
      { expr: "bhr,hdr->bhd", arch: "sm100" },
      {},
    );
    for (let i = 0; i < B; i++) {
      for (let h = 0; h < H; h++) {
        for (let j = 0; j < D; j++) {
          const xa = [0, 1].map((g) => sx.x[(i * H + h) * sfk + g]), xb = [0, 1].map((g) => sy.x[h * sfk + g]);
          const F = slowSm100(vec(x, (k) => [i, h, k], R), vec(y, (k) => [h, j, k], R), xa, xb, 128);
          assert.equal(d.at(i, h, j), Math.fround(c.at(i, h, j) + F));
        }
      }
    }
  });
  await t.step("bhd,hdr->bhr on SM100 uses y transposed per head", () => {
    const B = 2, H = 2, Dd = 128, R = 6;
    const x = Tensor.from("e4m3", [B, H, Dd], randE4m3(r, B * H * Dd));
    const y = Tensor.from("e4m3", [H, Dd, R], randE4m3(r, H * Dd * R));
    const sx = pow2Scales(r, B * H), sy = pow2Scales(r, H);
    const { d } = fp8Einsum.run(
      { a: x, sfa: Tensor.from("f32", [B, H, 1], sx.t), b: y, sfb: Tensor.from("f32", [H, 1, 1], sy.t) },
      { expr: "bhd,hdr->bhr", arch: "sm100" },
      {},
    );
    assert.deepEqual(d.shape, [B, H, R]);
    for (let i = 0; i < B; i++) {
      for (let h = 0; h < H; h++) {
        for (let j = 0; j < R; j++) {
          const F = slowSm100(
            vec(x, (k) => [i, h, k], Dd),
            vec(y, (k) => [h, k, j], Dd),
            [sx.x[i * H + h]],
            [sy.x[h]],
            128,
          );
          assert.equal(d.at(i, h, j), bf16Bits(F));
        }
      }
    }
  });
  await t.step("bhd,bhr->hdr on SM100 reduces over b with per-channel SFs and C = D (K tail at b = 200)", () => {
    const B = 200, H = 2, Dd = 3, R = 4, sfk = 2;
    const x = Tensor.from("e4m3", [B, H, Dd], randE4m3(r, B * H * Dd));
    const y = Tensor.from("e4m3", [B, H, R], randE4m3(r, B * H * R));
    const sx = pow2Scales(r, sfk * H * Dd), sy = pow2Scales(r, sfk * H * R);
    const z = Tensor.from("f32", [H, Dd, R], Float32Array.from({ length: H * Dd * R }, () => (r.uniform() - 0.5) * 20));
    const { d } = fp8Einsum.run(
      {
        a: x,
        sfa: Tensor.from("f32", [sfk, H, Dd], sx.t),
        b: y,
        sfb: Tensor.from("f32", [sfk, H, R], sy.t),
        c: z,
        d: z,
      },
      { expr: "bhd,bhr->hdr", arch: "sm100", recipe: [1, 1, 128] },
      {},
    );
    for (let h = 0; h < H; h++) {
      for (let i = 0; i < Dd; i++) {
        for (let j = 0; j < R; j++) {
          const xa = [0, 1].map((g) => sx.x[(g * H + h) * Dd + i]), xb = [0, 1].map((g) => sy.x[(g * H + h) * R + j]);
          const F = slowSm100(vec(x, (k) => [k, h, i], B), vec(y, (k) => [k, h, j], B), xa, xb, 128);
          assert.equal(d.at(h, i, j), Math.fround(z.at(h, i, j) + F), `element (${h}, ${i}, ${j})`);
        }
      }
    }
  });
  await t.step("arch and recipe rules are clear errors", () => {
    const x = Tensor.zeros("e4m3", [2, 2, 128]), y = Tensor.zeros("e4m3", [2, 8, 128]);
    const sfa = Tensor.from("f32", [2, 2, 1], new Float32Array(4).fill(1));
    const sfb = Tensor.from("f32", [2, 1, 1], new Float32Array(2).fill(1));
    const args = { a: x, sfa, b: y, sfb };
    assert.throws(() => fp8Einsum.run(args, { expr: "bhd,hdr->bhr" }, {}), /SM100 only/);
    assert.throws(
      () => fp8Einsum.run({ ...args, c: Tensor.zeros("bf16", [2, 2, 8]) }, { expr: "bhr,hdr->bhd" }, {}),
      /no C/,
    );
    assert.throws(() => fp8Einsum.run(args, { expr: "bhr,hdr->bhd", recipe: [1, 1, 128] }, {}), /1, 128, 128/);
    assert.throws(
      () => fp8Einsum.run({ ...args, sfa: Tensor.zeros("f32", [2, 2, 2]) }, { expr: "bhr,hdr->bhd" }, {}),
      /"sfa".*shape/,
    );
    const bad = Tensor.from("f32", [2, 2, 1], new Float32Array([1, 1.5, 1, 1]));
    assert.throws(
      () => fp8Einsum.run({ ...args, sfa: bad }, { expr: "bhr,hdr->bhd", arch: "sm100" }, {}),
      /power of two/,
    );
    assert.throws(() => fp8Einsum.run(args, { expr: "bhd,bhr->hdr", arch: "sm100" }, {}), TypeError);
  });
  await t.step("k = 0 leaves D = C; an empty batch leaves D untouched", () => {
    const c = Tensor.from("f32", [1, 2, 8], Float32Array.from({ length: 16 }, (_, i) => i));
    const out = fp8Einsum.run(
      {
        a: Tensor.zeros("e4m3", [1, 2, 0]),
        sfa: Tensor.zeros("f32", [1, 2, 0]),
        b: Tensor.zeros("e4m3", [2, 8, 0]),
        sfb: Tensor.zeros("f32", [2, 1, 0]),
        c,
        d: Tensor.zeros("f32", [1, 2, 8]),
      },
      { expr: "bhr,hdr->bhd", arch: "sm100" },
      {},
    ).d;
    assert.deepEqual([...out.data], [...c.data]);
  });
});
