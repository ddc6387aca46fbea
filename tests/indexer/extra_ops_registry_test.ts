import assert from "node:assert/strict";
import { EXTRA_OPS, extraOp } from "../../reference/registry.ts";
import { fp8MqaLogits } from "../../reference/indexer/mod.ts";
import { Tensor } from "../../reference/tensor/tensor.ts";
import { mqaInputs } from "./_helpers.ts";
import { moeFp8Case as fp8Case } from "../../reference/cases/moe_builders.ts";
import { megaMoe } from "../../reference/mega_moe/mod.ts";

Deno.test("extraOp()", async (t) => {
  const inp = mqaInputs(9, 4, 32, 32, 20, [0, 2, 5, 19], [20, 9, 5, 20]);
  const named = {
    q: inp.q,
    kv: inp.kv,
    kv_sf: inp.kv_sf,
    weights: inp.weights,
    cu_seq_len_k_start: inp.ks,
    cu_seq_len_k_end: inp.ke,
  };

  await t.step("runs fp8_mqa_logits by DeepGEMM's argument names, contiguous output plus the defined mask", () => {
    const out = extraOp("fp8_mqa_logits").run(named, {}, {});
    const direct = fp8MqaLogits(inp);
    assert.deepEqual(out.logits.shape, [4, 20]);
    assert.ok(out.logits.isContiguous());
    for (let i = 0; i < 4; i++) {
      for (let j = 0; j < 20; j++) assert.ok(Object.is(out.logits.at(i, j), direct.logits.at(i, j)));
    }
    assert.equal(out.logits_defined.at(2, 3), 1); // ks = ke: cleaned
  });

  await t.step("runAsync on 2 Workers gives the same bits as run", async () => {
    const a = extraOp("fp8_mqa_logits").run(named, { clean_logits: false }, {});
    const b = await extraOp("fp8_mqa_logits").runAsync(named, { clean_logits: false }, { workers: 2 });
    assert.deepEqual(new Uint32Array(b.logits.data.buffer), new Uint32Array(a.logits.data.buffer));
    assert.deepEqual(b.logits_defined.data, a.logits_defined.data);
  });

  await t.step("passes the reduction scalar and the model through", () => {
    const a = extraOp("fp8_mqa_logits").run(named, { reduction: "sm90_spec81" }, {});
    const b = fp8MqaLogits(inp, { reduction: "sm90_spec81" });
    assert.ok(Object.is(a.logits.at(0, 7), b.logits.at(0, 7)));
    assert.throws(() => extraOp("fp8_mqa_logits").run(named, {}, { model: "sm75" }), RangeError);
  });

  await t.step("runs the metadata, HC and Mega MoE entries", () => {
    const meta = extraOp("get_paged_mqa_logits_metadata").run(
      { context_lens: Tensor.from("i32", [1, 1], new Int32Array([600])) },
      { num_sms: 2 },
      {},
    );
    assert.deepEqual(Array.from(meta.schedule_meta.data as Int32Array), [0, 0, 0, 1, 1, 0]);
    const hc = extraOp("tf32_hc_prenorm_gemm").run(
      {
        a: Tensor.from("bf16", [1, 64], new Uint16Array(64).fill(0x3f80)),
        b: Tensor.from("f32", [8, 64], new Float32Array(512).fill(2)),
      },
      { num_splits: 2 },
      {},
    );
    assert.deepEqual(hc.d.shape, [2, 1, 8]);
    assert.equal(hc.d.at(0, 0, 0), 128);
    const c = fp8Case(4, 2, 2, 2, [0, 1, -1, 1]);
    const moe = extraOp("fp8_fp4_mega_moe").run(c as unknown as Record<string, Tensor>, { activation_clamp: 10 }, {});
    assert.deepEqual(moe.y.data, megaMoe(c, { clamp: 10 }).y.data);
    assert.throws(() => extraOp("bf16_mega_moe").run(c as unknown as Record<string, Tensor>, {}, {}), /x must be bf16/);
  });

  await t.step("names missing arguments and unknown ops", () => {
    assert.throws(() => extraOp("fp8_mqa_logits").run({ q: inp.q }, {}, {}), /missing tensor argument "kv"/);
    assert.throws(() => extraOp("mqa_logits"), RangeError);
    assert.equal(Object.keys(EXTRA_OPS).length, 8);
  });
});
