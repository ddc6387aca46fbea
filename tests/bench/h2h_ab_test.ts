// bench/h2h_ab.ts: two kernels compared through head-to-head runs, each side one or more alternating runs: per shape
// the runs' ratios, the side means and B's gain; shapes missing from a run are left out; bad input exits 2 naming the
// file, and a filter that leaves nothing exits 1.
import assert from "node:assert/strict";
import { runBench } from "./_run.ts";
import { compareH2h, formatH2hAb } from "../../bench/h2h_ab.ts";
import type { H2hDoc } from "../../bench/h2h_table.ts";

const shape = (m: number, n: number, k: number, ratio: number, kind = "dense", g = 1) => ({
  kind,
  g,
  m,
  n,
  k,
  ours_us: [100, 100, 100],
  deepgemm_us: [100 * ratio, 100 * ratio, 90 * ratio],
});
const run = (...rows: ReturnType<typeof shape>[]): H2hDoc => ({ rows });

Deno.test("h2h_ab takes each run's median ratio, the side's geomean over its runs and B's gain per shape", () => {
  const a = [run(shape(4096, 7168, 16384, 0.9), shape(4096, 32768, 512, 0.9)), run(shape(4096, 7168, 16384, 1.0))];
  const b = [run(shape(4096, 7168, 16384, 1.0), shape(4096, 32768, 512, 1.2)), run(shape(4096, 7168, 16384, 1.0))];
  const ab = compareH2h(a, b);
  assert.deepEqual(ab.rows.map((r) => r.shape), ["dense 4096×7168×16384"], "a shape one run lacks is left out");
  const r = ab.rows[0];
  assert.deepEqual([r.a, r.b], [[0.9, 1.0], [1.0, 1.0]], "the median of the rounds (0.9 × 100/90 is an outlier)");
  assert.ok(Math.abs(r.gain - 1 / Math.sqrt(0.9)) < 1e-12);
  assert.deepEqual([ab.faster, ab.slower], [1, 0]);
  // Times: ours 100 µs in every run; DeepGEMM's median 100 x ratio, so B's runs against A's: sqrt(1 / 0.9).
  assert.equal(ab.oursTime, 1);
  assert.ok(Math.abs(ab.deepgemmTime - 1 / Math.sqrt(0.9)) < 1e-12);
  const md = formatH2hAb(ab, "HEAD", "halves");
  assert.match(
    md,
    /^\| dense 4096×7168×16384 \| 0\.900 \/ 1\.000 \(0\.949\) \| 1\.000 \/ 1\.000 \(1\.000\) \| \+5\.4 % \|$/m,
  );
  assert.match(
    md,
    /^1 shapes: HEAD 0\.949×, halves 1\.000× DeepGEMM \(geomean\), halves \+5\.4 %; faster on 1, slower on 0\.$/m,
  );
  assert.match(md, /^Time, halves's runs against HEAD's \(geomean of the ratios\): ours 1\.000×, DeepGEMM 1\.054×\.$/m);
});

Deno.test("h2h_ab's filter picks shapes by label, and a slower B shows as a loss", () => {
  const a = [run(shape(4096, 7168, 16384, 1.0), shape(6, 1024, 7168, 1.0, "masked", 3))];
  const b = [run(shape(4096, 7168, 16384, 0.9), shape(6, 1024, 7168, 1.1, "masked", 3))];
  const ab = compareH2h(a, b, /^dense/);
  assert.equal(ab.rows.length, 1);
  assert.equal(ab.slower, 1);
  assert.match(formatH2hAb(ab), /\| −10\.0 % \|/);
  assert.throws(() => compareH2h([], b), /each side needs at least one run/);
});

Deno.test("h2h_ab's command exits 2 naming a bad file, 1 when nothing is left to compare", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const good = `${dir}/a.json`, bad = `${dir}/bad.json`;
    await Deno.writeTextFile(good, JSON.stringify(run(shape(4096, 7168, 16384, 1.0))));
    await Deno.writeTextFile(bad, '{"rows":[{"kind":"dense","g":1,"m":64,"n":576,"k":7168,"ours_us":[5]}]}');
    const refused = await runBench("h2h_ab.ts", good, `${good},${bad}`);
    assert.equal(refused.code, 2);
    assert.match(refused.stderr, /bad\.json: head-to-head JSON: row 0 needs ours_us/);
    const empty = await runBench("h2h_ab.ts", good, good, "--filter", "masked");
    assert.equal(empty.code, 1);
    assert.match(empty.stderr, /no shape that every run of both sides timed/);
    const ok = await runBench("h2h_ab.ts", good, good, "--label-a", "x");
    assert.equal(ok.code, 0);
    assert.match(ok.stdout, /\| dense 4096×7168×16384 \| 1\.000 \| 1\.000 \| \+0\.0 % \|/);
    assert.equal((await runBench("h2h_ab.ts", good)).code, 2, "one side only");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
