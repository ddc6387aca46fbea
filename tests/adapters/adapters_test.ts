/**
 * The Python adapters (`adapters/deepgemm.py`, `adapters/torch.py`) where there is no GPU: what they declare (their
 * `--declare` hello, which imports neither torch nor DeepGEMM, and the `DECLARED` literal it comes from) names only
 * ops the oracle knows, each with a model that op accepts; without their library they exit 2 with a message and no
 * hello; and every case of `adapters/extra_cases.ts` belongs to a declared op and is computable under its model.
 * The GPU side is `tests/gpu/run.sh` (step `adapters`). Ignored, with the reason, where python3 is absent.
 */
import assert from "node:assert/strict";
import { PYTHON, pythonMissing } from "../_python.ts";
import { extraCases } from "../../adapters/extra_cases.ts";
import { operationRunner, runnableOpNames } from "../../reference/operation_runner.ts";
import { referenceOp } from "../../reference/registry.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const ADAPTERS = ["deepgemm", "torch"] as const;

const HAS_PYTHON = pythonMissing([]) === undefined;

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

async function adapter(name: string, args: string[], pythonPath?: string): Promise<Run> {
  const env: Record<string, string> = { PYTHONDONTWRITEBYTECODE: "1" };
  if (pythonPath !== undefined) env.PYTHONPATH = pythonPath;
  const out = await new Deno.Command(PYTHON, { args: [`adapters/${name}.py`, ...args], cwd: ROOT, env }).output();
  const text = new TextDecoder();
  return { code: out.code, stdout: text.decode(out.stdout), stderr: text.decode(out.stderr) };
}

async function declared(name: string, ...flags: string[]): Promise<Record<string, string>> {
  const r = await adapter(name, ["--declare", ...flags]);
  assert.equal(r.code, 0, r.stderr);
  const hello = JSON.parse(r.stdout);
  assert.equal(hello.protocol, "gemm-oracle-backend");
  assert.equal(hello.version, 1);
  assert.equal(typeof hello.name, "string");
  return hello.ops;
}

/** The `DECLARED = { "op": "model", ... }` literal of an adapter's source. */
async function literal(name: string): Promise<Record<string, string>> {
  const src = await Deno.readTextFile(`${ROOT}adapters/${name}.py`);
  const m = /^DECLARED = \{\n([\s\S]*?)\n\}/m.exec(src);
  assert.ok(m, `adapters/${name}.py has no DECLARED literal`);
  const table: Record<string, string> = {};
  for (const line of m[1].split("\n")) {
    const e = /^\s+"([a-z0-9_]+)": "([a-z0-9_]+)",$/.exec(line);
    assert.ok(e, `adapters/${name}.py: not a plain "op": "model" entry: ${line}`);
    table[e[1]] = e[2];
  }
  return table;
}

/** The models an op accepts: the reference registry's, or a fixture op's (the quantizers' gpu / cpu semantics). */
function modelsOf(op: string): readonly string[] | undefined {
  return referenceOp(op)?.models ?? (runnableOpNames().includes(op) ? operationRunner(op).models : undefined);
}

/** A PYTHONPATH folder whose `torch` and `deep_gemm` packages are as given: "hidden" raises ImportError. */
async function fakeModules(mods: Record<string, "hidden" | "empty">): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "adapters-test-" });
  for (const [name, kind] of Object.entries(mods)) {
    await Deno.mkdir(`${dir}/${name}`);
    await Deno.writeTextFile(
      `${dir}/${name}/__init__.py`,
      kind === "hidden" ? `raise ImportError("${name} hidden by adapters_test.ts")\n` : `__version__ = "0+fake"\n`,
    );
  }
  return dir;
}

Deno.test("adapters/*.py declare", { ignore: !HAS_PYTHON }, async (t) => {
  for (const name of ADAPTERS) {
    await t.step(`${name}.py --declare prints the DECLARED table as its hello`, async () => {
      assert.deepEqual(await declared(name), await literal(name));
    });
    await t.step(`${name}.py declares only known ops, each with a model that op accepts`, async () => {
      const ops = await declared(name);
      assert.ok(Object.keys(ops).length > 0);
      for (const [op, model] of Object.entries(ops)) {
        assert.ok(referenceOp(op), `${name}.py declares ${op}, which verify has no reference for`);
        assert.ok(referenceOp(op)!.models.includes(model), `${name}.py: ${op} has no model ${model}`);
      }
    });
  }
  await t.step("deepgemm.py's opt-in tables (--fp8-fp4-names, --quantizers) name known ops and models", async () => {
    const ops = await declared("deepgemm", "--fp8-fp4-names", "--quantizers");
    for (const [op, model] of Object.entries(ops)) {
      assert.ok(modelsOf(op)?.includes(model), `deepgemm.py --quantizers: ${op} with model ${model}`);
    }
    assert.ok(Object.keys(ops).length > Object.keys(await declared("deepgemm")).length);
  });
});

Deno.test("adapters/*.py without their library", { ignore: !HAS_PYTHON }, async (t) => {
  await t.step("both exit 2 naming PyTorch when torch cannot be imported, before any hello", async () => {
    const dir = await fakeModules({ torch: "hidden", deep_gemm: "hidden" });
    try {
      for (const name of ADAPTERS) {
        const r = await adapter(name, [], dir);
        assert.equal(r.code, 2, `${name}.py: ${r.stderr}`);
        assert.equal(r.stdout, "", `${name}.py wrote to stdout: ${r.stdout}`);
        assert.match(r.stderr, new RegExp(`adapters/${name}\\.py: PyTorch is not importable here \\(`));
      }
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  });
  await t.step(
    "deepgemm.py exits 2 naming deep_gemm, torch.py naming torch._scaled_mm, with an empty torch",
    async () => {
      const dir = await fakeModules({ torch: "empty", deep_gemm: "hidden" });
      try {
        const dg = await adapter("deepgemm", [], dir);
        assert.equal(dg.code, 2, dg.stderr);
        assert.match(dg.stderr, /adapters\/deepgemm\.py: deep_gemm is not importable here .*deep_gemm hidden/);
        const tr = await adapter("torch", [], dir);
        assert.equal(tr.code, 2, tr.stderr);
        assert.match(tr.stderr, /adapters\/torch\.py: torch\._scaled_mm is not importable here/);
        assert.equal(dg.stdout + tr.stdout, "");
      } finally {
        await Deno.remove(dir, { recursive: true });
      }
    },
  );
  await t.step("torch.py turns torch._scaled_mm's refusal of a shape into Unsupported, and nothing else", async () => {
    const code = [
      "import importlib.util, sys",
      "spec = importlib.util.spec_from_file_location('torch_adapter', 'adapters/torch.py')",
      "m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)",
      "u = m._refusal('fp8_gemm_nt', '64x80x128', RuntimeError('Expected trailing dimension ... divisible by 16\\nmore'))",
      "print(type(u).__name__, u)",
      "print(m._refusal('fp8_gemm_nt', '64x80x128', RuntimeError('CUDA error: an illegal memory access')))",
    ].join("\n");
    const out = await new Deno.Command(PYTHON, { args: ["-c", code], cwd: ROOT, env: { PYTHONDONTWRITEBYTECODE: "1" } })
      .output();
    const text = new TextDecoder();
    assert.equal(out.code, 0, text.decode(out.stderr));
    assert.equal(
      text.decode(out.stdout),
      "_Unsupported fp8_gemm_nt: torch._scaled_mm refuses 64x80x128: Expected trailing dimension ... divisible by 16\n" +
        "None\n",
    );
  });
});

Deno.test("extraCases()", { ignore: !HAS_PYTHON }, async (t) => {
  const tables = Object.fromEntries(await Promise.all(ADAPTERS.map(async (n) => [n, await declared(n)] as const)));
  const cases = extraCases();
  await t.step("every case belongs to an op some adapter declares, under a unique id", () => {
    assert.equal(new Set(cases.map((c) => c.id)).size, cases.length);
    for (const c of cases) {
      assert.ok(ADAPTERS.some((n) => Object.hasOwn(tables[n], c.op)), `${c.id}: no adapter declares ${c.op}`);
    }
  });
  await t.step("the reference computes every case under each declaring adapter's model", () => {
    for (const c of cases) {
      const { inputs, scalars } = c.build();
      for (const n of ADAPTERS) {
        const model = tables[n][c.op];
        if (!model) continue;
        const out = referenceOp(c.op)!.run(inputs, scalars as never, { model });
        assert.ok(Object.keys(out).length > 0, `${c.id} under ${model}`);
      }
    }
  });
});
