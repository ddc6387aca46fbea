// Real GEMM kernels recorded on an H200 (2026-12-01, tests/gpu/record_identify.sh; tests/identify/h200/ holds their
// outputs and the H200's own identify log): `identify` names, from the outputs alone, cuBLASLt with and without fast
// accumulation, cuBLASLt block-scaled at split-K 1 and 2, DeepGEMM's 1D2D and 1D1D kernels, and this project's CUDA
// kernel. The 64×576×7168 recording takes about 15 s to search here, so it runs with GEMM_ORACLE_FULL=1 only.
import assert from "node:assert/strict";
import { readSafetensors } from "../../io/mod.ts";
import { identify } from "../../reference/identify/mod.ts";
import { referenceOp as runOp } from "../../reference/registry.ts";
import type { OpSpec } from "../../reference/gemm/op_spec.ts";
import { jobs, outputName } from "./_h200_gemm_jobs.ts";

const FULL = Deno.env.get("GEMM_ORACLE_FULL") === "1";

Deno.test("identify names the real kernels recorded on an H200 from their outputs alone", async (t) => {
  for (const j of jobs) {
    const big = j.file === "dense_64x576x7168";
    await t.step({
      name: `${j.op} ${j.file} from ${j.backend} → ${j.expect}${big && !FULL ? " (ignored: GEMM_ORACLE_FULL=1)" : ""}`,
      ignore: big && !FULL,
      fn: async () => {
        const out = await readSafetensors(new URL(`./h200/${outputName(j)}`, import.meta.url).pathname);
        const actual = { d: out.tensors.get("d")! };
        const r = identify(
          runOp(j.op) as unknown as OpSpec,
          j.inputs,
          (j.scalars ?? {}) as Record<string, unknown>,
          actual,
        );
        assert.ok(r.matches.length > 0, `no variant reproduces the ${j.backend} output`);
        assert.equal(r.matches[0].label, j.expect);
        assert.equal(r.matches[0].mismatches, 0);
        assert.equal(r.matches[0].scope, "full");
      },
    });
  }
});
