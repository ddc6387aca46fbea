// identify names the arithmetic of this project's own native kernels from their outputs alone: the CPU backend
// (kernels/cpu, built on demand) computing fp8_gemm_nt and bf16_gemm_nt under the models it implements.
import assert from "node:assert/strict";
import { bf16Dense, fp8Dense } from "../../reference/cases/gemm_builders.ts";
import { openBackend } from "../../ffi/backend.ts";
import type { ModelName } from "../../ffi/models.ts";
import { GEMM_OPS } from "../../reference/registry.ts";
import { identify } from "../../reference/identify/identify.ts";
import { Prng } from "../../reference/random/prng.ts";
import { Tensor } from "../../reference/tensor/tensor.ts";

Deno.test("identify() names the CPU backend's model from its output", async (t) => {
  using cpu = await openBackend("cpu");
  const fp8 = fp8Dense(64, 256, 512)(new Prng(31)).inputs;
  const fp8Cases: [ModelName, string][] = [["sm90_1d2d", "sm90_1d2d"], ["exact", "exact"]];
  for (const [model, label] of fp8Cases) {
    await t.step(`fp8_gemm_nt under ${model}: ${label}`, () => {
      const d = Tensor.zeros("bf16", [64, 256]);
      cpu.fp8Gemm({ a: fp8.a, sfa: fp8.sfa, b: fp8.b, sfb: fp8.sfb, d, model });
      const r = identify(GEMM_OPS.fp8_gemm_nt, fp8, {}, { d });
      assert.equal(r.matches[0]?.label, label, r.verdict);
    });
  }
  const bf = bf16Dense(64, 256, 256)(new Prng(32)).inputs;
  const bfCases: [ModelName, string][] = [["bf16", "bf16"], ["fp32_sequential", "bf16 --tensor-core fp32_sequential"]];
  for (const [model, label] of bfCases) {
    await t.step(`bf16_gemm_nt under ${model}: ${label}`, () => {
      const d = Tensor.zeros("bf16", [64, 256]);
      cpu.bf16Gemm({ a: bf.a, b: bf.b, d, model });
      const r = identify(GEMM_OPS.bf16_gemm_nt, bf, {}, { d });
      assert.equal(r.matches[0]?.label, label, r.verdict);
    });
  }
});
