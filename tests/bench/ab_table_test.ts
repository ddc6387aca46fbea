// bench/ab_table.ts: the A/B of two GPU benchmark runs joins shapes, leaves out sweeps and untimed rows, averages
// speed-ups geometrically per family and, with several runs a side, says which shapes' runs do not overlap.
import assert from "node:assert/strict";
import { abRows, formatAb, meanRuns, onlyShapes } from "../../bench/ab_table.ts";
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
  assert.deepEqual(merged[0].runs, [100, 110, 120]);
  const rows = abRows(merged, meanRuns([[row("dense", 1, 4096, 88)], [row("dense", 1, 4096, 132)]]));
  assert.deepEqual(rows.map((r) => r.speedup), [1]);
});

Deno.test("ab_table counts a shape faster or slower only where every run of one side beats every run of the other, and says it judged none with one run a side", () => {
  const side = (...us: number[][]) => meanRuns(us.map((t) => t.map((x, i) => row("dense", 1, 1024 * (i + 1), x))));
  // Shapes M = 1024 .. 3072: B's runs all faster, all slower, and overlapping A's.
  const a = side([100, 100, 100], [104, 98, 101]);
  const b = side([96, 103, 99], [97, 105, 102]);
  const rows = abRows(a, b);
  assert.deepEqual(rows.map((r) => r.apart), ["faster", "slower", "overlap"]);
  const text = formatAb(rows, "A", "B");
  assert.match(
    text,
    /^\| dense 1024×4096×2048 \| 102\.0 \(100\.0–104\.0\) \| 96\.5 \(96\.0–97\.0\) \| 1\.057× \| faster \| c \| c \|$/m,
  );
  assert.match(
    text,
    /^\| dense 3072×4096×2048 \| 100\.5 \(100\.0–101\.0\) \| 100\.5 \(99\.0–102\.0\) \| 1\.000× \| {2}\| c \| c \|$/m,
  );
  assert.match(
    text,
    /runs apart \(every run of one side faster than every run of the other\): 1 faster, 1 slower, 1 overlapping/,
  );
  const one = formatAb(abRows(side([100]), side([90])), "A", "B");
  assert.doesNotMatch(one, /runs apart \|/, "one run a side: no ranges");
  // run.sh notes the line in summary.txt: with one run a side it says why there is no count.
  assert.match(one, /^- runs apart: not judged \(one run a side\)$/m);
});

Deno.test("ab_table's --only keeps the shapes a pattern names, written with x as run.sh's filters are, and the geomean covers them alone", () => {
  const a = [row("dense", 1, 4096, 100), row("dense", 1, 64, 10), row("m-grouped-contiguous", 4, 8192, 200)];
  const b = [row("dense", 1, 4096, 80), row("dense", 1, 64, 20), row("m-grouped-contiguous", 4, 8192, 100)];
  const kept = onlyShapes(abRows(a, b), "dense 4096x4096x2048|contiguous");
  assert.deepEqual(kept.map((r) => r.speedup), [1.25, 2]);
  assert.match(formatAb(kept, "A", "B"), /geomean: \*\*1\.581×\*\* over 2 shapes/);
  assert.deepEqual(onlyShapes(abRows(a, b), "dense 4096×4096").length, 1, "× matches too");
  assert.deepEqual(onlyShapes(abRows(a, b), "masked").length, 0);
});
