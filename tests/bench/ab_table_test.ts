// bench/ab_table.ts: the A/B of two GPU benchmark runs joins shapes, leaves out sweeps and untimed rows, and
// averages speed-ups geometrically per family.
import assert from "node:assert/strict";
import { abRows, formatAb, meanRuns } from "../../bench/ab_table.ts";
import type { OursRow } from "../../bench/gpu_table.ts";

const row = (kind: string, g: number, m: number, us: number | undefined, config = "c"): OursRow => ({
  kind,
  g,
  m,
  n: 4096,
  k: 2048,
  us,
  config,
});

Deno.test("ab_table joins by shape, skips sweep rows and shapes missing a time, and groups the geomeans", () => {
  const a = [
    row("dense", 1, 4096, 100),
    row("dense", 1, 128, 10),
    row("contiguous", 4, 8192, 400),
    row("masked", 6, 20, 30),
    row("dense-sweep", 1, 4096, 1),
    row("dense", 1, 64, undefined),
  ];
  const b = [
    row("dense", 1, 4096, 80, "ahead"),
    row("dense", 1, 128, 10),
    row("contiguous", 4, 8192, 500),
    row("dense-sweep", 1, 4096, 2),
    row("dense", 1, 64, 5),
  ];
  const rows = abRows(a, b);
  assert.deepEqual(rows.map((r) => [r.shape, r.speedup]), [
    ["dense 4096×4096×2048", 1.25],
    ["dense 128×4096×2048", 1],
    ["contiguous 4×8192×4096×2048", 0.8],
  ]);
  const text = formatAb(rows, "heuristic", "ahead=1");
  assert.match(text, /\| dense 4096×4096×2048 \| 100\.0 \| 80\.0 \| 1\.250× \| c \| ahead \|/);
  assert.match(text, /ahead=1 \/ heuristic speed-up, geomean: \*\*1\.000×\*\* over 3 shapes/);
  assert.match(text, /dense M = 4096: 1\.250× over 1; dense M ∈ \{64, 128\}: 1\.000× over 1; grouped: 0\.800× over 1/);
  assert.match(formatAb([], "A", "B"), /no shape ran in both/);
});

Deno.test("ab_table averages each shape over several runs of one build, over the runs that timed it", () => {
  const runs = [
    [row("dense", 1, 4096, 100), row("masked", 6, 20, 30)],
    [row("dense", 1, 4096, 110), row("masked", 6, 20, undefined)],
    [row("dense", 1, 4096, 120), row("contiguous", 4, 8192, 400)],
  ];
  const merged = meanRuns(runs);
  assert.deepEqual(merged.map((r) => [r.kind, r.us]), [["dense", 110], ["masked", 30], ["contiguous", 400]]);
  const rows = abRows(merged, meanRuns([[row("dense", 1, 4096, 88)], [row("dense", 1, 4096, 132)]]));
  assert.deepEqual(rows.map((r) => r.speedup), [1]);
});
