// A failing verify case says where and how it differs: in the text table, the JSON report and the HTML page (the
// page also loaded in a real headless Chromium: no console errors, and the screenshot shows the heat map).
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { fp8Dense } from "../../reference/cases/gemm_builders.ts";
import { GEMM_OPS } from "../../reference/registry.ts";
import { Prng } from "../../reference/random/prng.ts";
import type { Tensor } from "../../reference/tensor/tensor.ts";
import { diagnosisLines } from "../../cli/verify/diagnose.ts";
import type { Executor } from "../../cli/verify/executors.ts";
import { renderHtml } from "../../cli/verify/html_report.ts";
import { formatTable, type Report, summarize, toJUnit } from "../../cli/verify/report.ts";
import { runCase, type VerifyCase } from "../../cli/verify/runner.ts";
import { PYTHON, pythonMissing } from "../_python.ts";
import { runCli, withTempDir } from "../cli/_run.ts";
import { chromium, countPixels, decodePng, loadPage } from "./_browser.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const ADAPTER = `${ROOT}tests/identify/numpy_adapter.py`;

/** A case of 256×256×512 and an executor whose "kernel" is the reference with an 8×128 block of flipped bits. */
function faultyCase(): { c: VerifyCase; exec: Executor } {
  const built = fp8Dense(256, 256, 512)(new Prng(11));
  const c: VerifyCase = { id: "demo/fp8_256", op: "fp8_gemm_nt", layout: "nt", suite: "edge", build: () => built };
  const exec: Executor = {
    declaration: () => ({ model: "sm90_1d2d" }),
    run(op, inputs, scalars, model) {
      const d = GEMM_OPS[op].run(inputs, scalars, { model }).d;
      for (let i = 40; i < 48; i++) for (let j = 128; j < 256; j++) (d.data as Uint16Array)[i * 256 + j] ^= 1;
      return Promise.resolve({ kind: "ok", outputs: { d } as Record<string, Tensor> });
    },
  };
  return { c, exec };
}

function report(cases: Report["cases"]): Report {
  return {
    oracle: "test",
    backends: [{ name: "faulty", status: "available" }],
    cases,
    summary: summarize(cases),
    complete: true,
  };
}

Deno.test("a failing verify row carries its mismatch map and the identify result", async () => {
  const { c, exec } = faultyCase();
  const [row] = await runCase(c, [{ name: "faulty", exec }]);
  assert.equal(row.status, "fail");
  assert.match(row.message!, /^d: 1024\/65536 mismatches; first at \[40, 128\]/);
  const d = row.diagnosis!;
  assert.equal(d.maps.d.classification.kind, "one_tile");
  assert.equal(d.identify!.matches.length, 0);
  assert.equal(d.identify!.nearest[0].label, "sm90_1d2d");
  assert.match(d.identify!.nearest[0].where[0], /^d: one tile: rows 40–47, cols 128–255/);
  const table = formatTable([row], diagnosisLines);
  assert.match(table, /\n {4}where: d: 1024\/65536 mismatches in 1 of 4 tiles \(128×128\); one tile: rows 40–47/);
  assert.match(table, /\n {4}identify: no variant reproduces it; nearest: sm90_1d2d with 1024\/65536 mismatches/);
  assert.match(toJUnit(report([row])), /where: d: one tile: rows 40–47, cols 128–255 .*\| identify: no variant/);
  const [quiet] = await runCase(c, [{ name: "faulty", exec }], { identify: false });
  assert.equal(quiet.diagnosis?.identifySkipped, "--no-identify");
  assert.equal(quiet.diagnosis?.maps.d.mismatches, 1024);
});

const browser = await chromium();
const noBrowser = "reason" in browser ? browser.reason : undefined;

Deno.test({
  name: `verify --html: the page loads in headless Chromium without console errors and shows the heat map${
    noBrowser ? ` (ignored: ${noBrowser})` : ""
  }`,
  ignore: noBrowser !== undefined,
  async fn() {
    const path = (browser as { path: string }).path;
    const { c, exec } = faultyCase();
    const rows = await runCase(c, [{ name: "faulty", exec }], { identify: false });
    await withTempDir(async (dir) => {
      const page = `${dir}/report.html`;
      await Deno.writeTextFile(page, renderHtml(report(rows)));
      const run = await loadPage(path, page);
      assert.deepEqual(run.console, []);
      assert.match(run.dom, /<title>ok: gemm-oracle verify<\/title>/);
      assert.match(run.dom, /<p id="status">rendered: 1 heat maps, 1 tiles with mismatches<\/p>/);
      // The console capture works: a page with a script error is caught.
      await Deno.writeTextFile(`${dir}/bad.html`, "<!DOCTYPE html><title>x</title><script>missing();</script>");
      const bad = await loadPage(path, `${dir}/bad.html`);
      assert.match(bad.console.join("\n"), /Uncaught ReferenceError: missing is not defined/);
      // The screenshot shows the heat map: the faulty tile (orange-red) beside the clean ones (pale green).
      await loadPage(path, page, { file: `${dir}/shot.png`, width: 1000, height: 1200 });
      const img = await decodePng(await Deno.readFile(`${dir}/shot.png`));
      assert.equal(img.width, 1000);
      const hot = countPixels(img, (r, g, b) => r >= 240 && g >= 40 && g <= 190 && b <= 90);
      const clean = countPixels(img, (r, g, b) => r === 0xf4 && g === 0xfb && b === 0xf4);
      assert.ok(hot > 5000, `${hot} heat-map pixels`);
      assert.ok(clean > 3 * hot, `${clean} clean-tile pixels`);
    });
  },
});

const noPython = pythonMissing(["numpy"]);

Deno.test({
  name: `verify on a float64 numpy kernel: text, JSON and a self-contained HTML page say where and how${
    noPython ? ` (ignored: ${noPython})` : ""
  }`,
  ignore: noPython !== undefined,
  async fn() {
    await withTempDir(async (dir) => {
      const r = await runCli([
        "verify",
        "--backend",
        `cmd:${PYTHON} ${ADAPTER} float64`,
        "--backend",
        `cmd:${PYTHON} ${ADAPTER} tile_bug`,
        "--suite",
        "edge",
        "--ops",
        "fp8_gemm_nt",
        "--shard",
        "3/7", // edge/fp8_nt_k1152: 64×256×1152
        "--json",
        `${dir}/r.json`,
        "--html",
        `${dir}/r.html`,
      ]);
      assert.equal(r.code, 1, r.stdout + r.stderr);
      // The float64 kernel, declared as sm90_1d2d: every tile differs, and it is the exact model.
      assert.match(r.stdout, /where: d: \d+\/16384 mismatches in 2 of 2 tiles \(128×128\); all tiles/);
      assert.match(r.stdout, /identify: bit for bit: exact = exact: the true value rounded once/);
      // The declared-exact kernel with a fault in one 8×128 block: one tile, nearest = exact.
      assert.match(
        r.stdout,
        /where: d: 1024\/16384 mismatches in 1 of 2 tiles \(128×128\); one tile: rows 40–47, cols 128–255/,
      );
      assert.match(r.stdout, /identify: no variant reproduces it; nearest: exact with 1024\/16384 mismatches/);
      const json = JSON.parse(await Deno.readTextFile(`${dir}/r.json`)) as Report;
      const [f64, bug] = json.cases;
      assert.equal(f64.diagnosis!.identify!.matches[0].label, "exact");
      assert.equal(f64.diagnosis!.maps.d.classification.kind, "all_tiles");
      assert.equal(bug.diagnosis!.maps.d.classification.kind, "one_tile");
      assert.deepEqual(bug.diagnosis!.maps.d.grid, [0, 1024]);
      const html = await Deno.readTextFile(`${dir}/r.html`);
      assert.equal(html.match(/<svg class="heat"/g)?.length, 2);
      assert.match(html, /bit for bit: exact = exact/);
      // Self-contained: no external resource of any kind.
      assert.doesNotMatch(html, /(src|href)\s*=\s*["']?(https?:|\/\/)/i);
      assert.doesNotMatch(html, /<link|@import|url\(/i);
    });
  },
});
