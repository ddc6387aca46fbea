// bench/trace_table.ts: the cycle traces of the fast FP8 kernel (dbg bit 6) are split at "trace end", named by the
// launcher's header or a label, and summarised by medians that leave out events never recorded.
import assert from "node:assert/strict";
import { parseTraces, summarize, traceTable } from "../../bench/trace_table.ts";

const lines = (rows: number[][]) =>
  rows.map((r, i) => `trace ${i} free ${r[0]} issued ${r[1]} full ${r[2]} released ${r[3]}`);

Deno.test("trace_table names traces by header, then label, then number, and takes medians per trace", () => {
  const log = [
    "fast trace (bm=64 bn=64 dbg=64): launch 30, CTA 0, 3 iterations, cycles from the producer's start",
    ...lines([[100, 400, 1500, 2400], [600, 950, 2000, 2900], [1100, 1480, 2540, 3400]]),
    "trace end 5000",
    "unrelated output",
    // The first builds' device printf: no header, and no "issued" event in a build without it (stale contents).
    ...lines([[80, -56792185705, 900, 910], [300, -56792185705, 1020, 1030], [520, -56792185705, 1250, 1260]]),
    "trace end 4000",
    ...lines([[1, 2, 3, 4]]),
    "trace end 10",
  ].join("\n");
  const traces = parseTraces(log, ["", "dbg=67"]);
  assert.deepEqual(traces.map((t) => t.config), ["bm=64 bn=64 dbg=64", "dbg=67", "trace 3"]);
  const [a, b, c] = traces.map(summarize);
  assert.deepEqual(a, {
    config: "bm=64 bn=64 dbg=64",
    iterations: 3,
    freeToFree: 500,
    issue: 350,
    fullToFull: 520,
    held: 900,
    firstFree: 100,
  });
  assert.equal(b.issue, undefined, "an event never recorded gives no interval");
  assert.equal(b.freeToFree, 220);
  assert.equal(b.fullToFull, 175, "the median of 120 and 230");
  assert.equal(c.freeToFree, undefined, "one iteration has no interval");
  const md = traceTable([a, b]);
  assert.match(md, /^\| trace \| iterations \| producer, free to free \(per K block\) \|/);
  assert.match(md, /\| dbg=67 \| 3 \| 220 \| — \| 175 \| 10 \| 80 \|/);
});

Deno.test("trace_table finds no trace in a log without one", () => {
  assert.deepEqual(parseTraces("trace 0 free 1 issued 2 full 3 released 4\n"), [], "no trace end: not a trace");
});
