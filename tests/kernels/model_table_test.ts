// The model table (reference/kernel_models/model_table.ts) against the C side, read as text: the go_model enum of
// kernels/gemm_oracle.h and its name switch (`go_model_name`, which both backends' messages use) name every value as
// the table does. Also the table's own views: the ABI codes,
// the kernel and MQA models, the aliases, and every model an operation lists.
import assert from "node:assert/strict";
import { abiModels, MODEL_TABLE, modelRow, type OpGroup } from "../../reference/kernel_models/model_table.ts";
import { KERNEL_MODELS } from "../../reference/kernel_models/kernel_models.ts";
import { MQA_MODELS } from "../../reference/indexer/mqa_models.ts";
import { MODEL_CODES } from "../../ffi/models.ts";
import { OPERATIONS } from "../../reference/registry.ts";

const read = (path: string) => Deno.readTextFileSync(new URL(`../../${path}`, import.meta.url));

/** `GO_MODEL_<NAME>` of a model name. */
const constant = (name: string) => `GO_MODEL_${name.toUpperCase()}`;

/** The enumerators of `typedef enum go_model { ... } go_model;`: constant → value. */
function headerEnum(text: string): Map<string, number> {
  const body = /typedef enum go_model \{([\s\S]*?)\} go_model;/.exec(text)?.[1];
  assert.ok(body, "kernels/gemm_oracle.h has no go_model enum");
  const code = body.replace(/\/\*[\s\S]*?\*\//g, "");
  return new Map([...code.matchAll(/(GO_MODEL_\w+)\s*=\s*(-?\d+)/g)].map((m) => [m[1], Number(m[2])]));
}

/** The `case GO_MODEL_X: return "name";` arms of a C function's switch: constant → name. */
function nameSwitch(text: string, fn: string): Map<string, string> {
  const start = text.search(new RegExp(`const char\\* ${fn}\\(int32_t \\w+\\) \\{`));
  assert.ok(start >= 0, `no function ${fn}`);
  const body = text.slice(start, text.indexOf("\n}\n", start));
  return new Map([...body.matchAll(/case (GO_MODEL_\w+): return "(\w+)";/g)].map((m) => [m[1], m[2]]));
}

const ABI = abiModels();

Deno.test("model table: the C header's go_model enum has exactly the table's ABI names and values", () => {
  const want = new Map(ABI.map((r) => [constant(r.name), r.abi]));
  assert.deepEqual(headerEnum(read("kernels/gemm_oracle.h")), want);
});

Deno.test("model table: the C header's go_model_name() names every go_model value as the table does", () => {
  const want = new Map(ABI.map((r) => [constant(r.name), r.name]));
  assert.deepEqual(nameSwitch(read("kernels/gemm_oracle.h"), "go_model_name"), want);
});

Deno.test("model table: its views", async (t) => {
  await t.step("one row per name", () => {
    const names = MODEL_TABLE.map((r) => r.name);
    assert.equal(new Set(names).size, names.length);
  });
  await t.step("ffi MODEL_CODES are the ABI rows, by value", () => {
    assert.deepEqual(Object.entries(MODEL_CODES), ABI.map((r) => [r.name, r.abi]));
    assert.equal(MODEL_CODES.default, -1);
    assert.equal(MODEL_CODES.sm90_mqa, 7);
  });
  await t.step("KERNEL_MODELS are the rows with GEMM parameters, MQA_MODELS those with MQA parameters", () => {
    assert.deepEqual(Object.keys(KERNEL_MODELS), ["sm90_1d2d", "sm90_1d1d", "sm100_1d1d", "bf16", "cublaslt", "exact"]);
    assert.deepEqual(Object.keys(MQA_MODELS), ["sm90", "sm90_spec81", "sm100", "exact", "sm100_exact"]);
    for (const [name, m] of Object.entries(KERNEL_MODELS)) assert.ok(modelRow(name)?.groups.includes("gemm"), m.name);
    for (const name of Object.keys(MQA_MODELS)) assert.ok(modelRow(name)?.groups.includes("indexer"), name);
  });
  await t.step("an alias names a model of each of its groups", () => {
    for (const r of MODEL_TABLE) {
      if (!r.aliasOf) continue;
      assert.ok(r.abi !== undefined, `${r.name}: an alias is the ABI's name`);
      for (const g of r.aliasOf.groups) assert.ok(modelRow(r.aliasOf.model)?.groups.includes(g), `${r.name} in ${g}`);
    }
  });
  await t.step("the quantizers' models are the division semantics", () => {
    assert.deepEqual(MODEL_TABLE.filter((r) => r.groups.includes("quantizer")).map((r) => r.name), ["gpu", "cpu"]);
  });
  await t.step("every model an operation lists is a model of its group", () => {
    for (const row of OPERATIONS) {
      const models = row.group === "quantizer" ? row.models : [row.reference.defaultModel, ...row.reference.models];
      for (const m of models) {
        const groups: readonly OpGroup[] = modelRow(m)?.groups ?? [];
        assert.ok(groups.includes(row.group), `${row.name}: model ${m} is not a ${row.group} model of the table`);
      }
    }
  });
});
