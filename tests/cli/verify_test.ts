import assert from "node:assert/strict";
import type { Backend } from "../../ffi/backend.ts";
import { verifyCommand } from "../../cli/verify.ts";
import { findRegressions, notExecuted, parseBaseline } from "../../cli/verify/baseline.ts";
import { type CaseResult, formatSummary, type Report, summarize, toJUnit } from "../../cli/verify/report.ts";
import { inProcessExecutor } from "../../cli/verify/executors.ts";
import { runCase, type VerifyBackend } from "../../cli/verify/runner.ts";
import { edgeSuite } from "../../cli/verify/suites.ts";
import type { Tensor } from "../../reference/tensor/tensor.ts";

function io() {
  const out = { stdout: "", stderr: "" };
  return {
    out,
    io: {
      stdout: (s: string) => void (out.stdout += s),
      stderr: (s: string) => void (out.stderr += s),
      env: () => undefined,
    },
  };
}

/** A backend whose fp8Gemm writes the right answer except one flipped bit (computed by the reference, then planted). */
function plantedBackend(flipIndex: number): VerifyBackend {
  const fake = {
    fp8Gemm(args: { d: Tensor }) {
      const d = args.d.data as Uint16Array;
      d.fill(0x3f80); // 1.0 everywhere: wrong except where the reference is exactly 1.0
      d[flipIndex] ^= 1;
    },
  } as unknown as Backend;
  const info = { name: "planted", models: { fp8_gemm: "sm90_1d2d" } };
  return { name: "planted", exec: inProcessExecutor(Object.assign(fake, { info, name: "planted" }) as Backend) };
}

Deno.test("runCase()", async (t) => {
  const m1 = edgeSuite().find((c) => c.id === "edge/fp8_nt_m7")!;

  await t.step("a planted wrong result fails with the first mismatch named", async () => {
    const [r] = await runCase(m1, [plantedBackend(0)]);
    assert.equal(r.status, "fail");
    assert.equal(r.bitExact, false);
    assert.ok(r.mismatches > 0);
    assert.match(
      r.message ?? "",
      /d: \d+\/2688 mismatches; first at \[0, 0\]: expected .* \(0x[0-9a-f]{4}\), got .* \(0x3f81\)/,
    );
  });

  await t.step("an op outside the ABI is a skip with the reason, not a pass", async () => {
    const quant = { ...m1, id: "x", op: "per_custom_dims_cast_to_fp8" };
    const [r] = await runCase(quant, [plantedBackend(0)]);
    assert.equal(r.status, "skip");
    assert.match(r.message ?? "", /no entry for per_custom_dims_cast_to_fp8/);
  });

  await t.step("a failing input builder is an error row per backend", async () => {
    const bad = {
      ...m1,
      build: () => {
        throw new RangeError("boom");
      },
    };
    const rows = await runCase(bad, [plantedBackend(0), plantedBackend(1)]);
    assert.deepEqual(rows.map((r) => r.status), ["error", "error"]);
    assert.match(rows[0].message ?? "", /building inputs: boom/);
  });
});

const row: CaseResult = {
  id: "edge/x",
  op: "fp8_gemm_nt",
  layout: "nt",
  shape: "a=1x128",
  backend: "cpu",
  model: "sm90_1d2d",
  status: "pass",
  bitExact: true,
  mismatches: 0,
  elements: 128,
  maxUlp: 0,
  calcDiff: 0,
  tolerance: "bitwise",
  ms: 10,
};

Deno.test("findRegressions()", async (t) => {
  await t.step("a case that passed before and fails now is a regression", () => {
    const r = findRegressions([{ ...row, status: "fail", mismatches: 3 }], [row]);
    assert.equal(r.length, 1);
    assert.match(r[0].reason, /was pass, now fail; mismatches 0 → 3/);
  });
  await t.step("an identical run has none", () => assert.deepEqual(findRegressions([row], [row]), []));
  await t.step("timing noise below both thresholds is not a regression", () => {
    const timed = { timeFactor: 2 };
    assert.deepEqual(findRegressions([{ ...row, ms: 200 }], [row], timed), []); // 20× but only +190 ms
    assert.equal(findRegressions([{ ...row, ms: 2000 }], [row], timed).length, 1);
  });
  await t.step("without a time factor, time is not gated", () => {
    assert.deepEqual(findRegressions([{ ...row, ms: 1e6 }], [row]), []);
  });
  await t.step("pass → skip, pass → error and pass → missing are regressions, with both sides", () => {
    const skip = findRegressions([{ ...row, status: "skip" }], [row]);
    assert.match(skip[0].reason, /was pass, now skip/);
    assert.equal(skip[0].before, row);
    assert.equal(skip[0].after?.status, "skip");
    assert.match(findRegressions([{ ...row, status: "error" }], [row])[0].reason, /was pass, now error/);
    const gone = findRegressions([{ ...row, backend: "cuda" }], [row]);
    assert.match(gone[0].reason, /was pass, now missing/);
    assert.equal(gone[0].after, null);
  });
  await t.step("a baseline case this run did not execute is out of scope, not missing", () => {
    assert.deepEqual(findRegressions([], [row], { executed: new Set(["other"]) }), []);
    assert.deepEqual(notExecuted([row], new Set(["other"])), [row]);
  });
  await t.step("a case absent from the baseline is new, not worse", () => {
    assert.deepEqual(
      findRegressions([{ ...row, id: "new", status: "fail" }], [row], { executed: new Set(["new"]) }),
      [],
    );
  });
});

Deno.test("parseBaseline()", async (t) => {
  await t.step("rejects non-JSON and non-reports naming the file", () => {
    assert.throws(() => parseBaseline("{", "b.json"), /Baseline "b.json" is not JSON/);
    assert.throws(() => parseBaseline("{}", "b.json"), /no "cases" array/);
  });
  await t.step("rejects a baseline that can gate nothing or is unfinished", () => {
    assert.throws(() => parseBaseline('{"cases":[]}', "b.json"), /"b.json" has no cases: it can gate nothing/);
    const one = JSON.stringify({ cases: [row], complete: false });
    assert.throws(() => parseBaseline(one, "b.json"), /did not finish/);
    const bad = JSON.stringify({ cases: [{ ...row, mismatches: "0" }] });
    assert.throws(() => parseBaseline(bad, "b.json"), /case edge\/x has a non-numeric "mismatches"/);
  });
});

Deno.test("toJUnit()", async (t) => {
  await t.step("writes one testcase per row with failure/error/skipped elements", () => {
    const cases: CaseResult[] = [row, { ...row, id: "f", status: "fail", message: "d: 1 <mismatch>" }, {
      ...row,
      id: "s",
      status: "skip",
      message: "CUDA not available",
    }];
    const report: Report = { oracle: "0", backends: [], cases, summary: summarize(cases), complete: true };
    const xml = toJUnit(report);
    assert.match(xml, /<testsuite name="cpu" tests="3" failures="1" errors="0" skipped="1"/);
    assert.match(xml, /<failure message="d: 1 &lt;mismatch&gt;"\/>/);
    assert.match(xml, /<skipped message="CUDA not available"\/>/);
    assert.match(
      formatSummary(report),
      /3 cases, 3 checks \(case × backend\): 1 passed, 1 failed, 0 errors, 1 skipped/,
    );
  });
});

Deno.test("verify", async (t) => {
  const dir = await Deno.makeTempDir();
  await t.step("writes a JSON report of the contract's shape and exits 0 when every case passes", async () => {
    const { io: cio, out } = io();
    const json = `${dir}/r.json`;
    const status = await verifyCommand.run(
      [
        "--backend",
        "cpu",
        "--suite",
        "edge",
        "--ops",
        "fp8_gemm_nt",
        "--shard",
        "1/3",
        "--json",
        json,
        "--junit",
        `${dir}/r.xml`,
      ],
      cio,
    );
    assert.equal(status, 0, out.stdout + out.stderr);
    const report = JSON.parse(await Deno.readTextFile(json)) as Report;
    assert.equal(typeof report.oracle, "string");
    assert.equal(report.backends[0].name, "cpu");
    assert.ok(report.cases.length >= 2);
    for (const c of report.cases) {
      for (
        const k of [
          "id",
          "op",
          "layout",
          "shape",
          "backend",
          "model",
          "status",
          "bitExact",
          "mismatches",
          "elements",
          "maxUlp",
          "calcDiff",
          "tolerance",
          "ms",
        ]
      ) {
        assert.ok(k in c, `case lacks "${k}"`);
      }
      assert.equal(c.status, "pass");
      assert.ok(c.elements > 0);
    }
    assert.deepEqual(report.summary, {
      pass: report.cases.length,
      fail: 0,
      skip: 0,
      error: 0,
      crashed: 0,
      timedOut: 0,
    });
    assert.equal(report.complete, true);
    assert.match(
      out.stdout,
      /verify: \d+ cases, \d+ checks \(case × backend\): \d+ passed, 0 failed, 0 errors, 0 skipped/,
    );
    assert.match(await Deno.readTextFile(`${dir}/r.xml`), /<testsuites/);
  });

  // (A baseline with fewer failures against a backend with a planted fault: tests/cli/verify_planted_test.ts.)
  await t.step("fails as a timing regression against a baseline that was far faster", async () => {
    const report = JSON.parse(await Deno.readTextFile(`${dir}/r.json`)) as Report;
    // A negative baseline time: any real time is both > 2× it and > 250 ms above it, so every case is "slower".
    for (const c of report.cases) c.ms = -1e9;
    await Deno.writeTextFile(`${dir}/base.json`, JSON.stringify(report));
    const { io: cio, out } = io();
    const status = await verifyCommand.run(
      [
        "--backend",
        "cpu",
        "--suite",
        "edge",
        "--ops",
        "fp8_gemm_nt",
        "--shard",
        "1/3",
        "--baseline",
        `${dir}/base.json`,
        "--time-factor",
        "2",
        "--allow-subset",
        "--json",
        `${dir}/gated.json`,
        "--junit",
        `${dir}/gated.xml`,
      ],
      cio,
    );
    assert.equal(status, 1);
    assert.match(out.stdout, /REGRESSION cpu edge\/fp8_nt_m1 \[sm90_1d2d\]: time/);
    const gated = JSON.parse(await Deno.readTextFile(`${dir}/gated.json`)) as Report;
    assert.ok(gated.regressions!.length > 0);
    assert.ok(gated.regressions!.every((r) => r.before.ms === -1e9 && r.after !== null));
    assert.deepEqual(gated.notExecuted, []);
    assert.match(
      await Deno.readTextFile(`${dir}/gated.xml`),
      /<testsuite name="regressions" tests="\d+" failures="\d+"/,
    );
  });

  await t.step("a subset of the baseline fails the gate unless --allow-subset", async () => {
    const { io: cio, out } = io();
    // Shard 1/6 of the same list is a strict subset of the baseline's shard 1/3.
    const args = ["--backend", "cpu", "--suite", "edge", "--ops", "fp8_gemm_nt", "--shard", "1/6"];
    const status = await verifyCommand.run([...args, "--baseline", `${dir}/r.json`], cio);
    assert.equal(status, 1);
    assert.match(out.stdout, /the gate fails \(pass --allow-subset to gate a subset\)/);
    const allowed = io();
    assert.equal(await verifyCommand.run([...args, "--baseline", `${dir}/r.json`, "--allow-subset"], allowed.io), 0);
    assert.match(
      allowed.out.stdout,
      /baseline: 1 of its cases \(1 rows\) were not executed .*; allowed by --allow-subset/,
    );
  });

  await t.step("a --model no baseline case has is exit 2, and so are gate flags without a baseline", async () => {
    const { io: cio } = io();
    await assert.rejects(
      () => verifyCommand.run(["--backend", "cpu", "--baseline", `${dir}/r.json`, "--model", "exact"], cio),
      /--model exact matches no case of baseline/,
    );
    await assert.rejects(
      () => verifyCommand.run(["--allow-subset"], cio),
      /--allow-subset applies only with --baseline/,
    );
  });

  await t.step("an unknown suite or an explicit unavailable backend is exit 2", async () => {
    const { io: cio } = io();
    await assert.rejects(() => verifyCommand.run(["--suite", "nope"], cio), /--suite must be/);
    const r = await verifyCommand.run(["--backend", "/no/such/lib.so", "--suite", "edge", "--ops", "fp8_gemm_nt"], cio);
    assert.equal(r, 2);
  });

  await t.step("a stray positional argument is exit 2, not silently ignored", async () => {
    const { io: cio } = io();
    await assert.rejects(
      () => verifyCommand.run(["--backend", "reference", "--ops", "fp8_gemm_nt", "fixtures"], cio),
      /verify takes no file arguments, got "fixtures"/,
    );
  });

  await t.step("an unknown --model is exit 2 before any case runs, listing the known models", async () => {
    const { io: cio, out } = io();
    await assert.rejects(
      () => verifyCommand.run(["--backend", "reference", "--ops", "fp8_gemm_nt", "--model", "nope"], cio),
      /--model "nope" is not a known model; known: .*sm90_1d2d.*sm90_mqa/,
    );
    assert.equal(out.stdout, "");
  });
  await Deno.remove(dir, { recursive: true });
});
