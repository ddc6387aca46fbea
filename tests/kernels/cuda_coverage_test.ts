// What `verify --backend cuda` will do with every operation, decided here without a GPU: the CUDA backend's library
// (it loads without a device) declares a model for every operation SM90 can run, through an entry it exports, under a
// model the reference computes; every other operation is one that needs another architecture and is skipped with
// that architecture named. So on the H200 the only skips left are SM100 operations (issue 28's "done when").
import assert from "node:assert/strict";
import { buildBackend } from "../../kernels/build.ts";
import { archSkip, backendOp, hasEntry } from "../../cli/verify/backend_ops.ts";
import { abiModelFor } from "../../cli/host/abi_host.ts";
import { Backend } from "../../ffi/backend.ts";
import { NativeLibrary } from "../../ffi/library.ts";
import { MODEL_CODES } from "../../ffi/models.ts";
import { referenceOp as runOp, referenceOpNames as runOpNames } from "../../reference/registry.ts";
import { operationRunner } from "../../reference/operation_runner.ts";
import { FIXTURE_SPECS } from "../../reference/cases/all_specs.ts";
import { hasNvcc } from "./_nvcc.ts";

Deno.test({
  name: "cuda backend: every operation is declared or skipped for its architecture",
  ignore: !(await hasNvcc()),
  async fn(t) {
    const backend = new Backend(NativeLibrary.open((await buildBackend("cuda")).path));
    try {
      const models = backend.info.models;
      const ops = [...new Set([...runOpNames(), ...FIXTURE_SPECS.map((s) => s.op)])].sort();
      const arch: string[] = [];
      for (const op of ops) {
        await t.step(op, () => {
          const skip = archSkip(op, backend.name, backend.info.arch);
          if (skip) {
            assert.match(skip, /^\S+ needs SM100 \(Blackwell\): .+; cuda-sm90 is sm_90a$/);
            arch.push(op);
            return;
          }
          const bop = backendOp(op);
          assert.ok(bop, `${op}: no row in cli/verify/backend_ops.ts`);
          assert.ok(hasEntry(backend, bop), `${op}: the CUDA library does not export ${String(bop.entry)}`);
          const abiModel = models[bop.family];
          assert.ok(abiModel, `${op}: go_backend_info declares no model for ${bop.family}`);
          assert.ok(Object.hasOwn(MODEL_CODES, abiModel), `${op}: ${abiModel} has no go_model value`);
          const ref = bop.referenceModel?.(abiModel) ?? abiModel;
          const refModels = runOp(op)?.models ?? operationRunner(op).models;
          assert.ok(refModels.includes(ref), `${op}: the reference has no model ${ref} (${refModels.join(", ")})`);
          assert.equal(abiModelFor(op, ref), abiModel);
          const supported = backend.info.supported_models?.[bop.family] ?? [];
          assert.ok(supported.includes(abiModel), `${op}: ${abiModel} is not among ${bop.family}'s supported models`);
        });
      }
      await t.step("the architecture skips are exactly the SM100-only operations", () => {
        assert.deepEqual(arch, [
          "bf16_mega_moe",
          "fp8_fp4_gemm_nn",
          "fp8_fp4_gemm_nt",
          "fp8_fp4_gemm_tn",
          "fp8_fp4_gemm_tt",
          "fp8_fp4_mega_moe",
          "fp8_fp4_mqa_logits",
          "fp8_fp4_paged_mqa_logits",
          "k_grouped_fp8_gemm_tn_contiguous",
          "m_grouped_fp8_fp4_gemm_nn_contiguous",
          "m_grouped_fp8_fp4_gemm_nt_contiguous",
          "m_grouped_fp8_fp4_gemm_nt_masked",
        ]);
      });
    } finally {
      backend.close();
    }
  },
});
