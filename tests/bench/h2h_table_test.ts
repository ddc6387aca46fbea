// bench/h2h_table.ts: head_to_head.py's rounds become per-shape median ratios with their spread, family geomeans held
// to issue 26's targets, and a RESULTS region of its own; bad input is refused with the file and the fault.
import assert from "node:assert/strict";
import { runBench } from "./_run.ts";
import { formatH2h, h2hFamilies, h2hStats, parseH2h } from "../../bench/h2h_table.ts";

const shape = (kind: string, g: number, m: number, n: number, k: number) => ({ kind, g, m, n, k });

Deno.test("h2h_table takes each shape's median over the rounds of DeepGEMM µs / our µs, and its spread", () => {
  const s = h2hStats({
    ...shape("contiguous", 4, 8192, 4096, 2048),
    ours_us: [10, 20, 12, 11],
    deepgemm_us: [11, 20, 12, 9],
  })!;
  // per round 1.1, 1.0, 1.0, 0.818: median 1.0
  assert.equal(s.ratio, 1);
  assert.ok(Math.abs(s.low - 9 / 11) < 1e-12);
  assert.equal(s.high, 1.1);
  assert.equal(s.family, "m-grouped contiguous");
  assert.equal(h2hStats({ ...shape("dense", 1, 64, 576, 7168), error: "JIT failed" }), undefined);
});

Deno.test("h2h_table holds each family to issue 26's target and names its worst shape", () => {
  const rows = [
    { ...shape("dense", 1, 64, 2112, 7168), ours_us: [10, 10], deepgemm_us: [12, 12] },
    { ...shape("dense", 1, 128, 576, 7168), ours_us: [10, 10], deepgemm_us: [11, 11] },
    { ...shape("dense", 1, 4096, 7168, 16384), ours_us: [100, 100], deepgemm_us: [106, 106] },
    { ...shape("masked", 6, 20, 4096, 2048), ours_us: [10, 10], deepgemm_us: [9.6, 9.6] },
  ];
  const fams = h2hFamilies(rows.map((r) => h2hStats(r)!));
  const by = new Map(fams.map((f) => [f.family, f]));
  assert.ok(Math.abs(by.get("dense M ∈ {64, 128}")!.geomean - Math.sqrt(1.2 * 1.1)) < 1e-12);
  assert.equal(by.get("dense M ∈ {64, 128}")!.met, false); // √(1.2 · 1.1) = 1.149 < 1.15
  assert.equal(by.get("dense M = 4096")!.met, true);
  assert.equal(by.get("m-grouped masked")!.met, false);
  assert.equal(by.get("m-grouped masked")!.worst!.label, "masked 6×20×4096×2048");
  assert.equal(by.get("m-grouped contiguous")!.count, 0);
  const md = formatH2h({ rows, rounds: 2, samples: 10, device: "H200", date: "2026-12-01" });
  assert.match(md, /shapes of dense M = 4096, contiguous and masked below 0\.97×: masked 6×20×4096×2048 0\.960×/);
  assert.match(md, /\| dense M = 4096 \| 1 \| 1\.060× \| ≥ 1\.05: met \|/);
  assert.match(md, /4096×7168×16384: \*\*1\.060×\*\* DeepGEMM \(target ≥ 1\.05: met\)/);
});

Deno.test("h2h_table reports differing bits and an incomplete run", () => {
  const md = formatH2h({
    complete: false,
    rows: [{
      ...shape("masked", 32, 192, 4096, 4096),
      ours_us: [5, 5],
      deepgemm_us: [5, 5],
      bits_equal: false,
      bits_differ: 3,
      elements: 100,
    }],
  });
  assert.match(
    md,
    /\| masked 32×192×4096×4096 \| 5\.0 \| 5\.0 \| — \| 1\.000× \(1\.000–1\.000\) \| \*\*3 of 100 differ\*\* \|/,
  );
  assert.match(md, /- bits: \*\*1 shapes differ\*\*/);
  assert.match(md, /\*\*Incomplete run\*\*/);
});

Deno.test("h2h_table holds each shape to DeepGEMM's faster launch setting, and gives the default's geomean beside", () => {
  // DeepGEMM with programmatic dependent launch (set_pdl) as a third side of the rounds
  const rows = [
    { ...shape("dense", 1, 64, 2112, 7168), ours_us: [10, 10], deepgemm_us: [12, 12], deepgemm_pdl_us: [11, 11] },
    { ...shape("dense", 1, 128, 576, 7168), ours_us: [10, 10], deepgemm_us: [11, 11], deepgemm_pdl_us: [11.5, 11.5] },
  ];
  const [a, b] = rows.map((r) => h2hStats(r)!);
  assert.deepEqual([a.peer, a.ratio, a.defaultRatio], ["pdl", 1.1, 1.2]);
  assert.deepEqual([b.peer, b.ratio, b.defaultRatio], ["default", 1.1, 1.1]);
  const small = h2hFamilies([a, b]).find((f) => f.family === "dense M ∈ {64, 128}")!;
  assert.ok(Math.abs(small.geomean - 1.1) < 1e-12);
  assert.ok(Math.abs(small.defaultGeomean - Math.sqrt(1.2 * 1.1)) < 1e-12);
  const md = formatH2h({ rows, rounds: 2 });
  assert.match(md, /\| dense 64×2112×7168 \| 10\.0 \| 12\.0 \| \*\*11\.0\*\* \| 1\.100× /);
  assert.match(md, /\| dense 128×576×7168 \| 10\.0 \| \*\*11\.0\*\* \| 11\.5 \| 1\.100× /);
  assert.match(md, /\| dense M ∈ \{64, 128\} \| 2 \| 1\.100× \| ≥ 1\.15: not met \| .* \| 1\.149× \|/);
  assert.match(md, /DeepGEMM with PDL had the lower median on 1 of 2 shapes timed both ways/);
  const old = formatH2h({ rows: [{ ...rows[0], deepgemm_pdl_us: undefined }] });
  assert.match(old, /DeepGEMM was timed only as it launches by default/);
});

Deno.test("h2h_table refuses rows without equal rounds on every side", () => {
  const bad = (row: object) => JSON.stringify({ rows: [{ ...shape("dense", 1, 64, 576, 7168), ...row }] });
  assert.throws(() => parseH2h(bad({ ours_us: [1, 2], deepgemm_us: [1] })), /equally long lists/);
  assert.throws(() => parseH2h(bad({ ours_us: [1, -2], deepgemm_us: [1, 1] })), /equally long lists/);
  assert.throws(() => parseH2h(bad({})), /equally long lists/);
  assert.throws(() => parseH2h(bad({ ours_us: [1, 2], deepgemm_us: [1, 1], deepgemm_pdl_us: [1] })), /as long a list/);
  assert.equal(parseH2h(bad({ error: "x" })).rows.length, 1);
});

Deno.test("h2h_table's command exits 2 naming the file on bad input, and writes its own RESULTS region", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(`${dir}/bad.json`, '{"rows":[{"kind":"dense"}]}');
    const bad = await runBench("h2h_table.ts", `${dir}/bad.json`);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /bad\.json: bench JSON: row 0 field g is not an integer/);
    const doc = { rows: [{ ...shape("dense", 1, 64, 576, 7168), ours_us: [4, 4], deepgemm_us: [5, 5] }] };
    await Deno.writeTextFile(`${dir}/h.json`, JSON.stringify(doc));
    await Deno.writeTextFile(`${dir}/R.md`, "# R\n<!-- gpu-bench:begin -->\nkeep\n<!-- gpu-bench:end -->\n");
    const ok = await runBench("h2h_table.ts", `${dir}/h.json`, "--write", `${dir}/R.md`);
    assert.equal(ok.code, 0, ok.stderr);
    const text = await Deno.readTextFile(`${dir}/R.md`);
    assert.match(text, /<!-- gpu-bench:begin -->\nkeep\n<!-- gpu-bench:end -->\n\n<!-- h2h:begin -->\n## Head-to-head/);
    assert.match(text, /\| dense 64×576×7168 \| 4\.0 \| 5\.0 \| — \| 1\.250× /);
    assert.equal((await runBench("h2h_table.ts")).code, 2);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
