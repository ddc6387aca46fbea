import assert from "node:assert/strict";
import { fp8Dense } from "../../reference/cases/gemm_builders.ts";
import type { Built } from "../../reference/cases/case_spec.ts";
import { GEMM_OPS } from "../../reference/registry.ts";
import type { OpSpec } from "../../reference/gemm/op_spec.ts";
import { codesTensor, tensorCodes } from "../../reference/identify/codes.ts";
import { makeEvaluator } from "../../reference/identify/evaluate.ts";
import { identify, type IdentifyResult } from "../../reference/identify/identify.ts";
import { type Variant, variantOptions } from "../../reference/identify/variants.ts";
import { referenceOp } from "../../reference/registry.ts";
import { Prng } from "../../reference/random/prng.ts";
import { Tensor } from "../../reference/tensor/tensor.ts";
import { hcRecording, mqaRecording, pagedRecording } from "./_h200_recordings.ts";

/** Raw e4m3 operands without scales (cuBLASLt's tensor-scaled path with scales 1), finite values of both signs. */
function rawFp8(m: number, n: number, k: number, seed: number): Built {
  const p = new Prng(seed);
  const codes = (count: number) => Uint8Array.from({ length: count }, () => p.int(0x7f) | (p.int(2) << 7));
  return {
    inputs: { a: Tensor.from("e4m3", [m, k], codes(m * k)), b: Tensor.from("e4m3", [n, k], codes(n * k)) },
    scalars: {},
  };
}

/** The op's output under a variant (through op.run; RZ output through the evaluator, the only way to make one). */
function produce(op: OpSpec, c: Built, v: Variant): Record<string, Tensor> {
  if (v.rounding !== "rz") return op.run(c.inputs, c.scalars, variantOptions(v));
  const d = op.run(c.inputs, c.scalars, variantOptions(v)).d;
  const got = makeEvaluator(op.name, c.inputs, c.scalars, ["d"]).evaluate(v, "full").d;
  return { d: codesTensor(got, tensorCodes(d)).tensor };
}

function first(r: IdentifyResult): string {
  assert.ok(r.matches.length > 0, r.verdict);
  return r.matches[0].label;
}

Deno.test("identify() recovers the variant that produced an output", async (t) => {
  const dense = fp8Dense(64, 256, 512)(new Prng(7));
  const fp8 = GEMM_OPS.fp8_gemm_nt;
  const cases: [string, OpSpec, Built, Variant, RegExp | null][] = [
    ["DeepGEMM SM90 1D2D", fp8, dense, { model: "sm90_1d2d" }, /DeepGEMM SM90 FP8 1D2D kernel/],
    ["cuBLASLt block-scaled with split-K 2", fp8, dense, { model: "sm90_1d2d", splitK: 2 }, /split-K 2/],
    ["the exact model", fp8, dense, { model: "exact" }, /the true value rounded once/],
    ["an Ada-style 16-product unit", fp8, dense, { model: "sm90_1d2d", tensorCore: "ada_mma_fp8" }, null],
    ["an RZ output rounding", fp8, dense, { model: "sm90_1d2d", rounding: "rz" }, null],
    [
      "DeepGEMM SM90 1D1D (FP32 output with C)",
      fp8,
      fp8Dense(64, 256, 512, "nt", true)(new Prng(8)),
      { model: "sm90_1d1d" },
      /DeepGEMM SM90 FP8 1D1D kernel, FP32 output/,
    ],
    [
      "cuBLASLt tensor-scaled, fast accumulation off",
      GEMM_OPS.cublaslt_gemm_nt,
      rawFp8(64, 256, 512, 3),
      { model: "cublaslt" },
      /fast accumulation off/,
    ],
    [
      "cuBLASLt tensor-scaled, fast accumulation on",
      GEMM_OPS.cublaslt_gemm_nt,
      rawFp8(64, 256, 512, 3),
      { model: "cublaslt", promotion: "none" },
      /fast accumulation on/,
    ],
  ];
  for (const [what, op, c, v, behaviour] of cases) {
    await t.step(`names ${what}`, () => {
      const r = identify(op, c.inputs, c.scalars, produce(op, c, v));
      // The first (simplest) match is the variant itself; equivalent spellings may follow it.
      assert.equal(first(r), r.matches.find((m) => JSON.stringify(m.variant) === JSON.stringify(v))?.label, r.verdict);
      if (behaviour) assert.match(r.verdict, behaviour);
      assert.deepEqual(r.nearest, []);
    });
  }

  await t.step("says which variants the input cannot tell apart, and prunes by a sample first", () => {
    const c = rawFp8(64, 256, 512, 3);
    const r = identify(
      GEMM_OPS.cublaslt_gemm_nt,
      c.inputs,
      c.scalars,
      produce(GEMM_OPS.cublaslt_gemm_nt, c, { model: "cublaslt" }),
    );
    assert.ok(r.searched > 50, `${r.searched}`);
    assert.ok(r.survivors.sample < 20, JSON.stringify(r.survivors));
    // Without scales the fp32 partial sums of a split add exactly here: split-K gives the same bits.
    assert.ok(r.matches.some((m) => m.label === "cublaslt --split-k 2"));
    assert.match(r.verdict, /more variant\(s\) give the same bits here/);
  });
});

Deno.test("identify() on a fault confined to one tile: no variant matches, the nearest is the true one", () => {
  const c = fp8Dense(256, 256, 512)(new Prng(11));
  const op = GEMM_OPS.fp8_gemm_nt;
  const d = op.run(c.inputs, c.scalars, { model: "sm90_1d2d" }).d;
  for (let i = 40; i < 48; i++) for (let j = 128; j < 256; j++) (d.data as Uint16Array)[i * 256 + j] ^= 1;
  const r = identify(op, c.inputs, c.scalars, { d }, { top: 3 });
  assert.deepEqual(r.matches, []);
  assert.equal(r.nearest.length, 3);
  const n = r.nearest[0];
  assert.equal(n.label, "sm90_1d2d");
  assert.equal(n.mismatches, 8 * 128);
  assert.equal(n.maps!.d.classification.kind, "one_tile");
  assert.match(n.maps!.d.classification.text, /^one tile: rows 40–47, cols 128–255 \(tile \[0, 1\] of 2×2\)/);
  assert.ok(r.nearest[1].mismatches > n.mismatches);
  assert.match(r.verdict, /^no variant reproduces it; nearest: sm90_1d2d with 1024\/65536 mismatches \(d: one tile/);
});

/** The larger recordings (about 11 s on two cores) run with GEMM_ORACLE_FULL=1 deno test -A tests/identify/. */
const FULL = Deno.env.get("GEMM_ORACLE_FULL") === "1";

Deno.test("identify() names DeepGEMM's own kernels from outputs recorded on an H200", async (t) => {
  const recordings = FULL
    ? [mqaRecording("mqa_h32_d64"), mqaRecording("mqa_h64_d128"), pagedRecording()]
    : [mqaRecording("mqa_h32_d64")];
  for (const rec of recordings) {
    await t.step(`${rec.op}: the sm90 model, not the §8.1 head-reduction order (${rec.recorded} logits)`, () => {
      const r = identify(referenceOp(rec.op)!, rec.inputs, rec.scalars, rec.actual);
      assert.deepEqual(r.matches.map((m) => m.label), ["sm90"]);
      assert.match(r.verdict, /DeepGEMM sm90_fp8_mqa_logits \/ paged MQA kernels \(verified on H200\)/);
    });
  }
  await t.step("tf32_hc_prenorm_gemm: the TMA's RNE conversion to TF32, not truncation", () => {
    const rec = hcRecording();
    const r = identify(referenceOp(rec.op)!, rec.inputs, { tf32_rounding: "truncate" }, rec.actual);
    assert.deepEqual(r.matches.map((m) => m.label), ["sm90 --tf32-rounding rne"]);
    assert.equal(r.searched, 2);
  });
});

Deno.test("the elements strategy computes exactly what op.run computes", async (t) => {
  const p = new Prng(21);
  for (const letters of ["nt", "nn", "tn", "tt"]) {
    const c = fp8Dense(40, 136, 384, letters)(p);
    for (const v of [{ model: "sm90_1d2d" }, { model: "sm90_1d2d", splitK: 2 }, { model: "exact" }] as Variant[]) {
      await t.step(`fp8_gemm_${letters} ${JSON.stringify(v)}`, () => {
        const op = GEMM_OPS[`fp8_gemm_${letters}`];
        const ev = makeEvaluator(op.name, c.inputs, c.scalars, ["d"]);
        assert.equal(ev.strategy, "elements");
        const want = tensorCodes(op.run(c.inputs, c.scalars, variantOptions(v)).d);
        const got = ev.evaluate(v, "full").d;
        assert.equal(got.index.length, want.codes.length);
        for (let i = 0; i < got.index.length; i++) assert.equal(got.codes[i], want.codes[got.index[i]]);
        const sample = ev.evaluate(v, "sample").d;
        assert.ok(sample.index.length < want.codes.length);
        for (let i = 0; i < sample.index.length; i++) assert.equal(sample.codes[i], want.codes[sample.index[i]]);
      });
    }
  }
  await t.step("grouped ops take the tiles strategy", () => {
    const ev = makeEvaluator("m_grouped_fp8_gemm_nt_masked", {}, {}, ["d"]);
    assert.equal(ev.strategy, "tiles");
  });
});
