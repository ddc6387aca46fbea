// The operation registry (reference/registry.ts) and the views every consumer derives from it: the references
// (GEMM_OPS, EXTRA_OPS, referenceOp), the fixtures' runners, verify's native calls and the FFI's family entries,
// which must name exactly the ABI's operation entries and the families kernels/gemm_oracle.h documents.
import assert from "node:assert/strict";
import { EXTRA_OPS, GEMM_OPS, operation, OPERATIONS, referenceOp, referenceOpNames } from "../../reference/registry.ts";
import { QUANT_RECIPES } from "../../reference/quant/recipes.ts";
import { operationRunner, runnableOpNames } from "../../reference/operation_runner.ts";
import { BACKEND_OPS, backendOp } from "../../cli/verify/backend_ops.ts";
import { FAMILY_ENTRIES, symbols } from "../../ffi/symbols.ts";
import { QUANT_KIND_CODES } from "../../ffi/quant_ops.ts";

const names = OPERATIONS.map((r) => r.name);

Deno.test("operation registry: one row per name, each either run natively or named for its architecture", () => {
  assert.equal(new Set(names).size, names.length);
  for (const r of OPERATIONS) {
    if (r.group !== "quantizer") assert.equal(r.reference.name, r.name);
    assert.ok((r.native === undefined) !== (r.arch === undefined), `${r.name}: exactly one of native and arch`);
  }
});

Deno.test("operation registry: the reference views", () => {
  assert.deepEqual(referenceOpNames(), [...Object.keys(GEMM_OPS), ...Object.keys(EXTRA_OPS)].sort());
  assert.equal(Object.keys(GEMM_OPS).length, 33);
  assert.equal(Object.keys(EXTRA_OPS).length, 8);
  assert.equal(referenceOp("fp8_gemm_nt"), GEMM_OPS.fp8_gemm_nt);
  assert.equal(referenceOp("mxfp4"), undefined);
  assert.equal(operation("mxfp4")?.group, "quantizer");
});

Deno.test("operation registry: quantizers are the recipes, the fixtures run every row", () => {
  const quantizers = OPERATIONS.filter((r) => r.group === "quantizer").map((r) => r.name);
  assert.deepEqual(quantizers, Object.keys(QUANT_RECIPES));
  assert.deepEqual(quantizers, Object.keys(QUANT_KIND_CODES));
  assert.deepEqual(runnableOpNames(), [...quantizers, ...referenceOpNames()]);
  for (const name of names) {
    const row = operation(name)!;
    assert.deepEqual(operationRunner(name).models, row.group === "quantizer" ? row.models : row.reference.models);
  }
  assert.throws(() => operationRunner("no_such_op"), RangeError);
});

Deno.test("operation registry: verify's native calls are the rows with a native call", () => {
  assert.deepEqual(Object.keys(BACKEND_OPS), OPERATIONS.filter((r) => r.native).map((r) => r.name));
  for (const r of OPERATIONS) {
    const bop = backendOp(r.name);
    if (!r.native) continue;
    assert.equal(bop?.family, r.native.family);
    assert.equal(bop?.entry, FAMILY_ENTRIES[r.native.family]);
    assert.equal(bop?.referenceModel !== undefined, r.group === "indexer" || r.group === "hyperconnection", r.name);
  }
  assert.equal(backendOp("fp8_mqa_logits")?.referenceModel?.("sm90_mqa"), "sm90");
  assert.equal(backendOp("tf32_hc_prenorm_gemm")?.referenceModel?.("tf32"), "sm90");
  assert.equal(backendOp("fp8_mqa_logits")?.referenceModel?.("exact"), "exact");
});

Deno.test("operation registry: the FFI's family entries are the ABI's operation entries and documented families", () => {
  const operationEntries = Object.entries(symbols)
    .filter(([name, s]) => "optional" in s && name !== "go_set_num_threads").map(([name]) => name).sort();
  assert.deepEqual([...new Set(Object.values(FAMILY_ENTRIES))].sort(), operationEntries);
  const header = Deno.readTextFileSync(new URL("../../kernels/gemm_oracle.h", import.meta.url));
  const doc = /Families: ([\s\S]*?)\. \*\//.exec(header)?.[1];
  assert.ok(doc, "kernels/gemm_oracle.h documents no families");
  const documented = [...doc.replace(/\s*\*\s*/g, " ").matchAll(/\b([a-z][a-z0-9_]+_[a-z0-9_]+|quantize)\b/g)]
    .map((m) => m[1]).filter((f) => !f.startsWith("go_"));
  assert.deepEqual([...new Set(documented)].sort(), Object.keys(FAMILY_ENTRIES).sort());
});
