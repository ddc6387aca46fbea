import assert from "node:assert/strict";
import { fp8MqaLogits } from "../../reference/indexer/mod.ts";
import { Tensor } from "../../reference/tensor/tensor.ts";
import { bf16Rne } from "../../reference/fp32.ts";
import { mqaInputs, slowSm90Logit } from "./_helpers.ts";

Deno.test("fp8MqaLogits()", async (t) => {
  const S = 5, H = 32, D = 64, Skv = 40;
  const ks = [0, 3, 10, 20, 7], ke = [12, 3, 40, 50, 2]; // row 1 empty (ks = ke), row 3 ke > S_kv, row 4 ks > ke
  const inp = mqaInputs(11, S, H, D, Skv, ks, ke);

  await t.step("equals the slow lane-by-lane path in range, bit for bit", () => {
    const { logits, defined } = fp8MqaLogits(inp);
    const qc = inp.q.data as Uint8Array, kc = inp.kv.data as Uint8Array;
    const w = inp.weights.data as Float32Array, sf = inp.kv_sf.data as Float32Array;
    let n = 0;
    for (let i = 0; i < S; i++) {
      for (let j = ks[i]; j < Math.min(ke[i], Skv); j++) {
        const want = slowSm90Logit(qc, i * H * D, kc, j * D, w, i * H, H, D, sf[j]);
        assert.ok(Object.is(logits.at(i, j), want), `logit[${i}, ${j}] = ${logits.at(i, j)}, slow path ${want}`);
        assert.equal(defined.at(i, j), 1);
        n++;
      }
    }
    assert.equal(n, 12 + 0 + 30 + 20 + 0);
  });

  await t.step("sets exactly the columns outside [ks, ke) to −inf (torch.equal on the mask)", () => {
    const { logits, defined } = fp8MqaLogits(inp);
    for (let i = 0; i < S; i++) {
      for (let j = 0; j < Skv; j++) {
        const out = j < ks[i] || j >= ke[i];
        assert.equal(logits.at(i, j) === -Infinity, out, `row ${i} col ${j}`);
        assert.equal(defined.at(i, j), 1);
      }
    }
  });

  await t.step("makes rows with ks ≥ ke entirely −inf", () => {
    const { logits } = fp8MqaLogits(inp);
    for (const i of [1, 4]) for (let j = 0; j < Skv; j++) assert.equal(logits.at(i, j), -Infinity);
  });

  await t.step("leaves out-of-range entries unspecified without clean_logits", () => {
    const { logits, defined } = fp8MqaLogits(inp, { cleanLogits: false });
    assert.ok(Number.isNaN(logits.at(0, 20)));
    assert.equal(defined.at(0, 20), 0);
    assert.equal(logits.at(2, 15), fp8MqaLogits(inp).logits.at(2, 15));
  });

  await t.step("uses DeepGEMM's padded, non-contiguous layout", () => {
    const { logits } = fp8MqaLogits(inp);
    assert.deepEqual(logits.shape, [S, Skv]);
    assert.equal(logits.strides[0], 512); // align(40 + 256, 1024 / 4)
    assert.equal(logits.data.length, 8 * 512); // align(S, 128 / H) = 8 rows
    assert.equal(logits.isContiguous(), false);
  });

  await t.step("compresses rows to out[i, r] = logit[i, ks + r] with max_seqlen_k", () => {
    const full = fp8MqaLogits(inp, { cleanLogits: false });
    const c = fp8MqaLogits(inp, { cleanLogits: false, maxSeqlenK: 30 });
    assert.deepEqual(c.logits.shape, [S, 30]);
    assert.equal(c.logits.strides[0], 256);
    for (let r = 0; r < 30; r++) assert.ok(Object.is(c.logits.at(2, r), full.logits.at(2, 10 + r)));
    for (let r = 0; r < 20; r++) assert.ok(Object.is(c.logits.at(3, r), full.logits.at(3, 20 + r)));
    assert.equal(c.defined.at(3, 20), 0);
  });

  await t.step("casts to bf16 with RNE", () => {
    const f = fp8MqaLogits(inp), b = fp8MqaLogits(inp, { logitsDtype: "bf16" });
    assert.equal(b.logits.dtype, "bf16");
    assert.equal(b.logits.strides[0], 512); // align(296, 512)
    assert.equal(b.logits.at(2, 11), bf16Rne(f.logits.at(2, 11)));
    assert.equal(b.logits.at(2, 0), 0xff80);
  });

  await t.step("computes only the requested rows", () => {
    const r = fp8MqaLogits(inp, { rows: [2, 3] });
    assert.ok(Number.isNaN(r.logits.at(0, 0)));
    assert.ok(Object.is(r.logits.at(2, 13), fp8MqaLogits(inp).logits.at(2, 13)));
  });

  await t.step("the §8.1 variant and the exact model differ from sm90 only in the last bits", () => {
    const a = fp8MqaLogits(inp).logits, b = fp8MqaLogits(inp, { model: "sm90_spec81" }).logits;
    const e = fp8MqaLogits(inp, { model: "exact" }).logits;
    let diff = 0;
    for (let j = 10; j < 40; j++) {
      if (!Object.is(a.at(2, j), b.at(2, j))) diff++;
      assert.ok(Math.abs(a.at(2, j) - e.at(2, j)) <= 2 ** -8 * Math.abs(e.at(2, j)) + 1e-30);
    }
    assert.ok(diff < 30);
  });

  await t.step("rejects H, D, dtypes and scalars the host rejects, naming the rule", () => {
    const bad = (over: Partial<typeof inp>, opts = {}) => () => fp8MqaLogits({ ...inp, ...over }, opts);
    const q16 = Tensor.zeros("e4m3", [S, 16, D]);
    assert.throws(bad({ q: q16, weights: Tensor.zeros("f32", [S, 16]) }), /sm90 supports H ∈ \{32, 64\}/);
    assert.throws(
      bad({ q: Tensor.zeros("e4m3", [S, H, 96]), kv: Tensor.zeros("e4m3", [Skv, 96]) }),
      /D must be 32, 64 or 128/,
    );
    assert.throws(bad({ weights: Tensor.zeros("bf16", [S, H]) }), TypeError);
    assert.throws(bad({ kv: Tensor.zeros("bf16", [Skv, D]) }), /kv must have dtype e4m3/);
    assert.throws(bad({ ks: Tensor.zeros("i32", [S + 1]) }), TypeError);
    assert.throws(bad({}, { maxSeqlenK: 8 }), /need clean_logits = false/);
    assert.throws(bad({}, { cleanLogits: false, maxSeqlenK: 8 }), /ke − ks = 12 > max_seqlen_k = 8/);
    assert.throws(bad({}, { model: "sm80" }), RangeError);
    assert.throws(bad({ q: Tensor.zeros("i8", [S, H, D / 2]) }, { model: "sm90" }), /FP4 Q\/KV needs an SM100 model/);
  });

  await t.step("accepts H = 16 under the sm100 model", () => {
    const i16 = mqaInputs(3, 2, 16, 32, 8, [0, 0], [8, 8]);
    const r = fp8MqaLogits(i16, { model: "sm100" });
    assert.ok(Number.isFinite(r.logits.at(1, 7)));
  });
});
