// bench/k_sweep.ts: a sweep's shape names for run.sh's H2H_SHAPES (on tests/gpu/shapes.py's grid), and head_to_head.py's
// rows fitted per group of shapes that differ only in K into a fixed part and a part per K block, each side apart.
import assert from "node:assert/strict";
import { runBench } from "./_run.ts";
import { PYTHON, pythonMissing } from "../_python.ts";
import { DEFAULT_KS, fitLine, formatSweep, sweepGroups, sweepShapes } from "../../bench/k_sweep.ts";

const ROOT = new URL("../../", import.meta.url).pathname;

/** A timed row of 128 × 4096 × k whose rounds are `f(k / 128)` plus a per-round offset. */
const row = (k: number, ours: (b: number) => number, dg: (b: number) => number, config = "bm=128 bn=32") => ({
  kind: "dense",
  g: 1,
  m: 128,
  n: 4096,
  k,
  config,
  ours_us: [0, 0.2, -0.2].map((d) => ours(k / 128) + d),
  deepgemm_us: [0, 0.1, -0.1].map((d) => dg(k / 128) + d),
  deepgemm_pdl_us: [0, 0.1, -0.1].map((d) => dg(k / 128) - 1 + d),
});

Deno.test("k_sweep fits each side's fixed part and part per K block, and the fixed part's spread over the rounds", () => {
  const rows = [1024, 2048, 4096, 7168].map((k) => row(k, (b) => 2.5 + 0.18 * b, (b) => 2 + 0.19 * b));
  delete (rows[1] as { deepgemm_pdl_us?: number[] }).deepgemm_pdl_us; // a side timed at 3 of the 4 K values
  const [g] = sweepGroups({ rows });
  assert.equal(g.label, "dense 128×4096");
  assert.deepEqual(g.ks, [1024, 2048, 4096, 7168]);
  const by = new Map(g.fits.map((f) => [f.side, f]));
  assert.ok(Math.abs(by.get("ours")!.line.a - 2.5) < 1e-9);
  assert.ok(Math.abs(by.get("ours")!.line.b - 0.18) < 1e-9);
  assert.ok(Math.abs(by.get("DeepGEMM, PDL")!.line.a - 1) < 1e-9);
  // round 1 runs every shape 0.2 µs slow, round 2 0.2 µs fast: the fixed part moves by as much
  assert.ok(Math.abs(by.get("ours")!.fixedLow - 2.3) < 1e-9 && Math.abs(by.get("ours")!.fixedHigh - 2.7) < 1e-9);
  const md = formatSweep({ rows, rounds: 3, device: "NVIDIA H200", date: "2026-12-05" });
  // ours against the faster DeepGEMM setting at K = 7168 (PDL): fixed +1.50 µs, per block −10 ns
  assert.match(
    md,
    /- dense 128×4096 \(K 1024, 2048, 4096, 7168\): ours − DeepGEMM, PDL: fixed \+1\.50 µs, per K block −10\.0 ns \(at K = 7168: \+0\.94 µs\)/,
  );
  assert.match(md, /\| dense 128×4096 \| ours \| 4 \| 2\.50 \(2\.30–2\.70\) \| 180\.0 \| 0\.00 \|/);
  assert.match(md, /\| dense 128×4096 \| DeepGEMM, PDL \| 3 \| 1\.00 /);
  assert.match(md, /K sweep on NVIDIA H200, 2026-12-05: per shape the median over 3 rounds/);
});

Deno.test("k_sweep leaves out groups of fewer than 3 K values and rows with errors, and says where our kernels differ", () => {
  const f = (b: number) => 1 + b;
  const rows = [
    row(1024, f, f, "bm=128 bn=32 stages=10"),
    row(2048, f, f, "bm=128 bn=32 stages=10"),
    { kind: "dense", g: 1, m: 128, n: 4096, k: 3072, error: "JIT failed" },
    row(4096, f, f, "bm=128 bn=32 stages=10 ktma=2"),
    { ...row(1024, f, f), n: 576 },
    { ...row(2048, f, f), n: 576 },
  ];
  const groups = sweepGroups({ rows });
  assert.deepEqual(groups.map((g) => g.label), ["dense 128×4096"]);
  assert.equal(groups[0].ks.length, 3);
  assert.match(formatSweep({ rows }), /our kernels differ over the sweep: bm=128 bn=32 stages=10 \/ .* ktma=2/);
  assert.match(formatSweep({ rows: rows.slice(4) }), /- no group of at least 3 shapes that differ only in K/);
});

Deno.test("k_sweep's line needs two distinct x, and its residual is the worst point's", () => {
  assert.throws(() => fitLine([8, 8], [1, 2]), /two distinct x/);
  const l = fitLine([0, 1, 2], [0, 2, 2]);
  assert.ok(Math.abs(l.b - 1) < 1e-12 && Math.abs(l.a - 1 / 3) < 1e-12);
  assert.ok(Math.abs(l.worst - 2 / 3) < 1e-12);
});

Deno.test("k_sweep's shape names follow tests/gpu/shapes.py's grid, and refuse what it refuses with the prefix named", () => {
  assert.deepEqual(sweepShapes(["masked 32x20x4096"], [2048]), ["masked 32x20x4096x2048"]);
  assert.equal(sweepShapes(["dense 64x576"], DEFAULT_KS).length, 7);
  for (
    const [bad, fault] of [
      ["dense 64x576x7168", /without its K/],
      ["dense 64x500", /N of 64/],
      ["dense 66x576", /multiple of 4/],
      ["contiguous 4x100x4096", /rows of 128/],
      ["grouped 4x128x4096", /without its K/],
    ] as const
  ) assert.throws(() => sweepShapes([bad], [1024]), (e: Error) => fault.test(e.message) && e.message.includes(bad));
  assert.throws(() => sweepShapes(["dense 64x576"], [1000]), /K 1000/);
});

Deno.test({
  name: "k_sweep's names parse in tests/gpu/shapes.py as the shapes they name",
  ignore: pythonMissing([]) !== undefined,
  fn: async () => {
    const names = sweepShapes(["dense 128x4096", "masked 6x20x4096", "contiguous 4x8192x4096"], [1024, 7168]);
    const code = `import sys; sys.path.insert(0, "${ROOT}tests/gpu"); import shapes\n` +
      `for n in ${JSON.stringify(names)}: print(shapes.parse_shape_name(n))`;
    const out = await new Deno.Command(PYTHON, { args: ["-c", code], stdout: "piped", stderr: "piped" }).output();
    assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
    const lines = new TextDecoder().decode(out.stdout).trim().split("\n");
    assert.deepEqual(lines.slice(0, 2), ["('dense', 1, 128, 4096, 1024)", "('dense', 1, 128, 4096, 7168)"]);
    assert.equal(lines[2], "('masked', 6, 20, 4096, 1024)");
    assert.equal(lines.length, 6);
  },
});

Deno.test("k_sweep's command line: --shapes prints H2H_SHAPES; bad names, bad K and bad files end with status 2", async () => {
  const ok = await runBench("k_sweep.ts", "--shapes", "dense 128x4096;dense 64x576", "--k", "1024,2048");
  assert.equal(ok.code, 0, ok.stderr);
  assert.equal(ok.stdout.trim(), "dense 128x4096x1024;dense 128x4096x2048;dense 64x576x1024;dense 64x576x2048");
  const bad = await runBench("k_sweep.ts", "--shapes", "dense 64x500");
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /"dense 64x500": .*N of 64/);
  assert.equal((await runBench("k_sweep.ts", "--shapes", "dense 64x576", "--k", "1024,x")).code, 2);
  const missing = await runBench("k_sweep.ts", "/nonexistent/h2h.json");
  assert.equal(missing.code, 2);
  assert.match(missing.stderr, /\/nonexistent\/h2h\.json: /);
  const dir = await Deno.makeTempDir({ prefix: "go-k-sweep-" });
  try {
    await Deno.writeTextFile(
      `${dir}/h2h.json`,
      '{"rows":[{"kind":"dense","g":1,"m":64,"n":576,"k":1024,"ours_us":[1]}]}',
    );
    const malformed = await runBench("k_sweep.ts", `${dir}/h2h.json`);
    assert.equal(malformed.code, 2);
    assert.match(malformed.stderr, /h2h\.json: .*row 0 needs ours_us and deepgemm_us/);
    const rows = [1024, 2048, 4096].map((k) => row(k, (b) => 2 + b, (b) => 1 + b));
    await Deno.writeTextFile(`${dir}/h2h.json`, JSON.stringify({ rows }));
    const good = await runBench("k_sweep.ts", `${dir}/h2h.json`, "--out", `${dir}/k_sweep.md`);
    assert.equal(good.code, 0, good.stderr);
    assert.match(await Deno.readTextFile(`${dir}/k_sweep.md`), /ours − DeepGEMM, PDL: fixed \+2\.00 µs/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
