// tests/gpu/verify_coverage.ts: the ops step's criterion on a verify report (every case passes or is skipped because
// its operation needs another architecture).
import assert from "node:assert/strict";
import { coverage } from "./verify_coverage.ts";

Deno.test("coverage()", async (t) => {
  await t.step("passes and architecture skips meet the criterion; any other skip, failure or error does not", () => {
    const ok = coverage([
      { op: "fp8_gemm_nt", id: "a", status: "pass" },
      { op: "bf16_mega_moe", id: "b", status: "skip", message: "bf16_mega_moe needs SM100 (Blackwell): tcgen05" },
    ]);
    assert.deepEqual(ok.offending, []);
    assert.equal(ok.lines.length, 2);
    const bad = coverage([
      { op: "einsum", id: "c", status: "skip", message: "cuda does not declare einsum" },
      { op: "fp8_gemm_nt", id: "d", status: "fail", message: "d: 1/8 mismatches" },
      { op: "fp8_gemm_nt", id: "e", status: "error", message: "boom" },
    ]);
    assert.deepEqual(bad.offending.map((r) => r.id), ["c", "d", "e"]);
  });
});
