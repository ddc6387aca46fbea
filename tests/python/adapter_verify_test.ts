// A Python adapter, through the whole chain a user's goes through (gemm_oracle.serve, the protocol, tensor files,
// verify's comparison), with the oracle's own reference as its "kernel": every case it declares passes, and the
// JSON report names the adapter's host. Ignored, with the reason, where python3 with numpy is missing.
import assert from "node:assert/strict";
import { PYTHON, pythonMissing } from "../_python.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const missing = pythonMissing(["numpy"]);

Deno.test({
  name: missing
    ? `a Python adapter passes verify on every case it declares (ignored: ${missing})`
    : "a Python adapter passes verify on every case it declares",
  ignore: missing !== undefined,
  async fn() {
    const dir = await Deno.makeTempDir();
    const out = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "-A",
        `${ROOT}cli.ts`,
        "verify",
        "--backend",
        `cmd:${PYTHON} tests/python/reference_adapter.py`,
        "--ops",
        "*_gemm_nt*",
        "--json",
        `${dir}/r.json`,
      ],
      cwd: ROOT,
      env: { GEMM_ORACLE_DENO: Deno.execPath() },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
    assert.equal(out.code, 0, text);
    const report = JSON.parse(await Deno.readTextFile(`${dir}/r.json`));
    assert.equal(report.backends[0].info.host, "reference-adapter");
    const byOp = new Map<string, string[]>();
    for (const c of report.cases) byOp.set(c.op, [...(byOp.get(c.op) ?? []), c.status]);
    for (const op of ["fp8_gemm_nt", "m_grouped_fp8_gemm_nt_masked", "bf16_gemm_nt"]) {
      assert.ok((byOp.get(op) ?? []).length > 0, `${op} has cases`);
      assert.ok(byOp.get(op)!.every((s) => s === "pass"), `${op}: ${byOp.get(op)}`);
    }
    // Ops the adapter does not declare are skipped with the reason, never passed.
    const other = report.cases.filter((c: { op: string }) =>
      !byOp.has(c.op) || !["fp8_gemm_nt", "m_grouped_fp8_gemm_nt_masked", "bf16_gemm_nt"].includes(c.op)
    );
    for (const c of other) {
      assert.equal(c.status, "skip");
      assert.match(c.message, /does not declare|needs SM100 \(Blackwell\)/);
    }
    await Deno.remove(dir, { recursive: true });
  },
});
