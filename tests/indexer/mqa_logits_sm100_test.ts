import assert from "node:assert/strict";
import { fp8MqaLogits, fp8MqaLogitsParallel } from "../../reference/indexer/mod.ts";
import { extraOp } from "../../reference/registry.ts";
import { Tensor } from "../../reference/tensor/tensor.ts";
import { bf16ToF32 } from "../../reference/fp32.ts";
import { slowFp4Score, slowSm100Bf16, slowSm100Fp32 } from "./_fp4_slow.ts";
import { fp4MqaInputs, scaleBytes } from "./_sm100_inputs.ts";
import { mqaInputs } from "./_helpers.ts";
import { Prng } from "../../reference/random/prng.ts";

type Inputs = ReturnType<typeof fp4MqaInputs>;

/** The slow FP4 logit of (i, j): BigInt scores, then the reduction by direct evaluation. */
function slowLogit(inp: Inputs, i: number, j: number, bf16: boolean): number {
  const [S, H, half] = inp.q.shape, D = 2 * half;
  void S;
  const qb = inp.q.data as Int8Array, kb = inp.kv.data as Int8Array;
  const qsf = inp.q_sf.data as Int32Array, ksf = inp.kv_sf.data as Int32Array;
  const s: number[] = [];
  for (let h = 0; h < H; h++) {
    s.push(slowFp4Score(qb, (i * H + h) * half, scaleBytes(qsf[i * H + h]), kb, j * half, scaleBytes(ksf[j]), D));
  }
  if (!bf16) return slowSm100Fp32(s, inp.weights.data as Float32Array, i * H);
  const w = Array.from(inp.weights.data as Uint16Array, bf16ToF32);
  return slowSm100Bf16(s, w, i * H);
}

Deno.test("fp8MqaLogits() on SM100: FP4 Q/KV and bf16 weights", async (t) => {
  const ks = [0, 5, 9], ke = [20, 5, 30]; // row 1 empty, row 2 ke > S_kv
  for (const [H, D] of [[8, 64], [16, 128]]) {
    await t.step(`equals the BigInt block-scaled path bit for bit (H = ${H}, D = ${D}, fp32 weights)`, () => {
      const inp = fp4MqaInputs(100 + D, 3, H, D, 24, ks, ke);
      const { logits, defined } = fp8MqaLogits(inp); // model defaults to sm100 for FP4 inputs
      let n = 0, nonzero = 0;
      for (let i = 0; i < 3; i++) {
        for (let j = ks[i]; j < Math.min(ke[i], 24); j++) {
          const want = slowLogit(inp, i, j, false);
          assert.ok(Object.is(logits.at(i, j), want), `logit[${i}, ${j}] = ${logits.at(i, j)}, slow ${want}`);
          assert.equal(defined.at(i, j), 1);
          n++;
          if (want !== 0) nonzero++;
        }
      }
      assert.equal(n, 20 + 0 + 15);
      assert.ok(nonzero > 25, `only ${nonzero} nonzero logits`);
    });
  }

  await t.step("truncates like mxf4nvf4 (35 fraction bits, RZ) when a row's scales span many binades", () => {
    const inp = fp4MqaInputs(55, 2, 8, 128, 16, [0, 0], [16, 16]);
    const rng = new Prng(56);
    const word = () => rng.int(96) + 80 | (rng.int(96) + 80) << 8 | (rng.int(96) + 80) << 16 | (rng.int(96) + 80) << 24;
    const wide = {
      ...inp,
      q_sf: Tensor.from("i32", [2, 8], Int32Array.from({ length: 16 }, word)),
      kv_sf: Tensor.from("i32", [16], Int32Array.from({ length: 16 }, word)),
    };
    const got = fp8MqaLogits(wide, { cleanLogits: false }), exact = fp8MqaLogits(wide, { model: "sm100_exact" });
    let differ = 0;
    for (let i = 0; i < 2; i++) {
      for (let j = 0; j < 16; j++) {
        const want = slowLogit(wide, i, j, false);
        assert.ok(Object.is(got.logits.at(i, j), want), `logit[${i}, ${j}] = ${got.logits.at(i, j)}, slow ${want}`);
        if (!Object.is(want, exact.logits.at(i, j))) differ++;
      }
    }
    assert.ok(differ >= 4, `the truncating unit should differ from the exact one (${differ} of 32 differ)`);
  });

  await t.step("reads only scale bytes 0 and 1 for D = 64 (the 127 pads are ignored)", () => {
    const inp = fp4MqaInputs(7, 1, 8, 64, 4, [0], [4]);
    assert.equal((inp.kv_sf.data as Int32Array)[0] >>> 16, 0x7f7f); // per_token_cast_to_fp4's pads
    const a = fp8MqaLogits(inp);
    const kvSf = Int32Array.from(inp.kv_sf.data as Int32Array, (w) => (w & 0xffff) | 0x12340000);
    const b = fp8MqaLogits({ ...inp, kv_sf: Tensor.from("i32", [4], kvSf) });
    for (let j = 0; j < 4; j++) assert.ok(Object.is(a.logits.at(0, j), b.logits.at(0, j)));
  });

  await t.step("applies no sfkv multiply: scaling a KV row by 2^k scales its logits by 2^k", () => {
    const inp = fp4MqaInputs(8, 1, 8, 128, 2, [0], [2]);
    const base = fp8MqaLogits(inp).logits.at(0, 1);
    const sf = Int32Array.from(inp.kv_sf.data as Int32Array);
    sf[1] = sf[1] + 0x03030303; // every scale byte + 3
    const up = fp8MqaLogits({ ...inp, kv_sf: Tensor.from("i32", [2], sf) }).logits.at(0, 1);
    assert.notEqual(base, 0);
    assert.equal(up, base * 8);
  });

  await t.step("sets exactly the columns outside [ks, ke) to −inf", () => {
    const inp = fp4MqaInputs(9, 3, 8, 64, 24, ks, ke);
    const { logits, defined } = fp8MqaLogits(inp);
    for (let i = 0; i < 3; i++) {
      for (let j = 0; j < 24; j++) {
        assert.equal(logits.at(i, j) === -Infinity, j < ks[i] || j >= ke[i], `row ${i} col ${j}`);
        assert.equal(defined.at(i, j), 1);
      }
    }
    const c = fp8MqaLogits(inp, { cleanLogits: false, maxSeqlenK: 24 });
    assert.ok(Object.is(c.logits.at(2, 3), logits.at(2, 12)));
    assert.equal(c.defined.at(1, 0), 0);
  });

  await t.step("reduces bf16 weights with sm100_bf16 into bf16 logits, bit for bit", () => {
    const inp = fp4MqaInputs(21, 3, 16, 64, 24, ks, ke, "bf16");
    const { logits } = fp8MqaLogits(inp, { logitsDtype: "bf16" });
    assert.equal(logits.dtype, "bf16");
    let diff = 0;
    const f32 = fp8MqaLogits({
      ...inp,
      weights: Tensor.from("f32", [3, 16], Float32Array.from(inp.weights.data as Uint16Array, bf16ToF32)),
    }, { logitsDtype: "bf16" });
    for (let i = 0; i < 3; i++) {
      for (let j = ks[i]; j < Math.min(ke[i], 24); j++) {
        const want = slowLogit(inp, i, j, true);
        assert.ok(
          Object.is(bf16ToF32(logits.at(i, j)), want),
          `logit[${i}, ${j}]: ${bf16ToF32(logits.at(i, j))} vs ${want}`,
        );
        if (logits.at(i, j) !== f32.logits.at(i, j)) diff++;
      }
    }
    assert.ok(diff > 0, "the bf16 reduction should differ from the fp32 one somewhere");
    assert.equal(logits.at(0, 22), 0xff80); // cleaned: −inf in bf16
  });

  await t.step("uses sm100_bf16 on the FP8 path too: bf16(reduced · bf16(sfkv))", () => {
    const inp = mqaInputs(5, 2, 16, 32, 6, [0, 0], [6, 6]);
    const wb = Uint16Array.from(
      inp.weights.data as Float32Array,
      (v) => (new Uint32Array(new Float32Array([v]).buffer)[0] >>> 16),
    );
    const w = Tensor.from("bf16", [2, 16], wb);
    const r = fp8MqaLogits({ ...inp, weights: w }, { logitsDtype: "bf16" });
    const viaOrder = fp8MqaLogits({ ...inp, weights: w }, {
      logitsDtype: "bf16",
      model: "sm100",
      reduction: "sm100_bf16",
    });
    assert.equal(r.logits.at(1, 4), viaOrder.logits.at(1, 4));
    const fp32 = fp8MqaLogits({ ...inp, weights: Tensor.from("f32", [2, 16], Float32Array.from(wb, bf16ToF32)) }, {
      model: "sm100",
    });
    let same = 0;
    for (let j = 0; j < 6; j++) {
      if (Math.abs(bf16ToF32(r.logits.at(1, j)) - fp32.logits.at(1, j)) <= Math.abs(fp32.logits.at(1, j)) / 16) same++;
    }
    assert.equal(same, 6); // close to the fp32 reduction, as the kernel's bf16 path is
  });

  await t.step("evaluates FP4 on Workers with the same bits", async () => {
    const inp = fp4MqaInputs(31, 4, 8, 64, 12, [0, 0, 3, 1], [12, 12, 9, 7]);
    const a = fp8MqaLogits(inp, { cleanLogits: false });
    const b = await fp8MqaLogitsParallel(inp, { cleanLogits: false }, 2);
    assert.deepEqual(
      new Uint32Array(b.logits.contiguous().data.buffer),
      new Uint32Array(a.logits.contiguous().data.buffer),
    );
  });

  await t.step("runs through the registry (fp8_fp4_mqa_logits, model auto)", () => {
    const inp = fp4MqaInputs(3, 2, 8, 64, 10, [0, 2], [10, 7]);
    const op = extraOp("fp8_fp4_mqa_logits");
    assert.equal(op.defaultModel, "auto");
    assert.ok(op.inputs.includes("q_sf"));
    const out = op.run(
      {
        q: inp.q,
        q_sf: inp.q_sf,
        kv: inp.kv,
        kv_sf: inp.kv_sf,
        weights: inp.weights,
        cu_seq_len_k_start: inp.ks,
        cu_seq_len_k_end: inp.ke,
      },
      {},
      { model: "auto" },
    );
    assert.ok(Object.is(out.logits.at(1, 5), fp8MqaLogits(inp).logits.at(1, 5)));
  });

  await t.step("rejects FP4 and bf16-weight combinations the host rejects, naming the rule", () => {
    const inp = fp4MqaInputs(4, 2, 8, 64, 6, [0, 0], [6, 6]);
    const bad = (over: Partial<Inputs>, opts = {}) => () => fp8MqaLogits({ ...inp, ...over } as Inputs, opts);
    assert.throws(bad({}, { model: "sm90" }), /FP4 Q\/KV needs an SM100 model/);
    assert.throws(
      bad({ q: Tensor.zeros("i8", [2, 8, 16]), kv: Tensor.zeros("i8", [6, 16]) }),
      /FP4 head dim D must be 64 or 128, got D = 32/,
    );
    assert.throws(bad({ q_sf: undefined }), /FP4 q needs q_sf/);
    assert.throws(bad({ kv_sf: Tensor.zeros("f32", [6]) }), /kv_sf must have dtype i32/);
    assert.throws(bad({ kv: Tensor.zeros("e4m3", [6, 64]) }), /kv must have dtype i8/);
    assert.throws(bad({ q: Tensor.zeros("u8", [2, 8, 32]) }), TypeError);
    assert.throws(bad({ q_sf: Tensor.zeros("i32", [2, 4]) }), /q_sf must have shape \[2, 8\]/);
    assert.throws(
      bad({
        q: Tensor.zeros("i8", [2, 4, 32]),
        q_sf: Tensor.zeros("i32", [2, 4]),
        weights: Tensor.zeros("f32", [2, 4]),
      }),
      /sm100 supports H ∈ \{8, 16, 32, 64\}/,
    );
    const wb = Tensor.zeros("bf16", [2, 8]);
    assert.throws(bad({ weights: wb }), /bf16 weights need bf16 logits/);
    assert.throws(bad({ weights: wb }, { logitsDtype: "f32" }), TypeError);
    assert.throws(bad({}, { reduction: "sm100_bf16" }), /sm100_bf16 reduction takes bf16 weights/);
    const fp8 = mqaInputs(5, 2, 32, 32, 6, [0, 0], [6, 6]);
    assert.throws(
      () => fp8MqaLogits({ ...fp8, weights: Tensor.zeros("bf16", [2, 32]) }, { model: "sm90", logitsDtype: "bf16" }),
      /weights must be f32 on SM90/,
    );
    assert.throws(() => fp8MqaLogits({ ...fp8, q_sf: inp.q_sf }), /q_sf is only taken with FP4 q/);
  });
});
