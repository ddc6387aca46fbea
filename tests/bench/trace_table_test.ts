// bench/trace_table.ts: the cycle traces of the fast FP8 kernel (dbg bit 6, or its light form, bit 7) are split at
// "trace end", named by the launcher's header or a label, and summarised by medians that leave out events never
// recorded.
import assert from "node:assert/strict";
import {
  epilogueTable,
  parseTraces,
  prologueDetailTable,
  prologueTable,
  summarize,
  traceTable,
  turnSegments,
  turnTable,
} from "../../bench/trace_table.ts";

const lines = (rows: number[][]) =>
  rows.map((r, i) => `trace ${i} free ${r[0]} issued ${r[1]} full ${r[2]} released ${r[3]}`);
/** A `phase` (or with kind "phase2", a `phase2`) line of iteration i: warpgroup 0's four events, then 1's. */
const phase = (i: number, a: number[], b: number[], kind = "phase") =>
  `${kind} ${i} wg0 ${a.join(" ")} wg1 ${b.join(" ")}`;
const phase2 = (i: number, a: number[], b: number[]) => phase(i, a, b, "phase2");
/** The launcher's header of a trace: its configuration and the iterations the launch ran ("n" or "the first k of n"). */
const header = (config: string, ran: string) =>
  `fast trace (${config}): launch 30, CTA 0, ${ran} iterations, cycles from the producer's start`;
/** Two iterations' lines, where a test needs some and their values do not matter to it. */
const twoIterations = lines([[100, 400, 1500, 2400], [600, 950, 2000, 2900]]);

Deno.test("trace_table names traces by header, then label, then number, and takes medians per trace", () => {
  const log = [
    header("bm=64 bn=64 dbg=64", "3"),
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
    firstFull: 1500,
  });
  assert.equal(b.issue, undefined, "an event never recorded gives no interval");
  assert.equal(b.freeToFree, 220);
  assert.equal(b.fullToFull, 175, "the median of 120 and 230");
  assert.equal(c.freeToFree, undefined, "one iteration has no interval");
  const md = traceTable([a, b]);
  assert.match(md, /^\| trace \| iterations \| producer, free to free \(per K block\) \|/);
  assert.match(md, /\| dbg=67 \| 3 \| 220 \| — \| 175 \| 10 \| 80 \| 900 \|/);
});

Deno.test("trace_table finds no trace in a log without one", () => {
  assert.deepEqual(parseTraces("trace 0 free 1 issued 2 full 3 released 4\n"), [], "no trace end: not a trace");
});

Deno.test("trace_table summarises the first math thread's tiles, leaving out a unit it skipped", () => {
  const log = [
    header("4096x7168x2048 bm=256 dbg=64", "2"),
    ...twoIterations,
    "tile 0 top 1000 setup 1800 kloop 21000 epilogue 23000",
    "tile 1 top 23200 setup 24100 kloop 43000 epilogue 45200",
    // A unit the thread skipped (invalid): only its top was written; the rest is an earlier launch's.
    "tile 2 top 45500 setup 900 kloop 800 epilogue 700",
    "tile 3 top 45600 setup 46500 kloop 66000 epilogue 68000",
    "trace end 70000",
    ...lines([[1, 2, 3, 4]]),
    "trace end 10",
  ].join("\n");
  const [t, old] = parseTraces(log);
  assert.equal(t.tiles?.length, 4);
  assert.equal(old.tiles, undefined, "a trace without tile lines has no tiles");
  const s = summarize(t);
  assert.equal(s.tiles, 3);
  assert.equal(s.tileSetup, 900, "the median of 800, 900 and 900");
  assert.equal(s.tileKLoop, 19200, "the median of 19200, 18900 and 19500");
  assert.equal(s.tileEpilogue, 2000, "the median of 2000, 2200 and 2000");
  assert.equal(s.tileNext, 250, "tiles 0 -> 1 (200) and 1 -> 2 (300; a skipped unit has its top), not 2 -> 3");
  assert.equal(summarize(old).tiles, undefined);
  const md = traceTable([s, summarize(old)]);
  assert.match(md, /\| epilogue → next tile \|\n/);
  assert.match(md, /\| 3 \| 900 \| 19200 \| 2000 \| 250 \|\n/);
  assert.match(md, /\| — \| — \| — \| — \| — \|$/);
  assert.doesNotMatch(traceTable([summarize(old)]), /tile/, "no tile columns where no trace has tiles");
});

Deno.test("trace_table puts a wrapped ring of iterations back in order and gives no prologue for it", () => {
  // 6 iterations into 4 slots (slot i mod 4): slots 2, 3 hold iterations 2, 3 and slots 0, 1 iterations 4, 5.
  const log = [
    header("bm=256 dbg=64", "6"),
    ...lines([[4000, 4100, 4500, 4900], [5000, 5100, 5500, 5900], [2000, 2100, 2500, 2900], [3000, 3100, 3500, 3900]]),
    "trace end 7000",
  ].join("\n");
  const [t] = parseTraces(log);
  assert.equal(t.ran, 6);
  assert.equal(t.wrapped, true);
  assert.deepEqual(t.iterations.map((x) => x.free), [2000, 3000, 4000, 5000]);
  const s = summarize(t);
  assert.equal(s.iterations, 6, "the iterations the launch ran, not the slots kept");
  assert.equal(s.freeToFree, 1000, "no negative step at the ring's seam");
  assert.equal(s.firstFree, undefined, "iteration 0 was overwritten");
  assert.equal(s.firstFull, undefined, "iteration 0 was overwritten");
});

Deno.test("trace_table reads a light trace's first iterations as they are, with the iterations the launch ran", () => {
  // dbg=128: the first 4 of 56 iterations and the tile line; a ring of 4 slots would have put 56 mod 4 first.
  const log = [
    header("64x576x7168 bm=64 bn=16 dbg=128", "the first 4 of 58"),
    ...lines([[1400, 1450, 3900, 3950], [1410, 1460, 3960, 4010], [1420, 1470, 4020, 4070], [1430, 1480, 4080, 4130]]),
    "tile 0 top 1200 setup 1300 kloop 9800 epilogue 10400",
    "trace end 10600",
  ].join("\n");
  const [t] = parseTraces(log);
  assert.equal(t.config, "64x576x7168 bm=64 bn=16 dbg=128");
  assert.equal(t.wrapped, undefined, "not a wrapped ring");
  assert.equal(t.ran, 58);
  assert.deepEqual(t.iterations.map((x) => x.free), [1400, 1410, 1420, 1430]);
  const s = summarize(t);
  assert.equal(s.iterations, 58);
  assert.equal(s.firstFree, 1400);
  assert.equal(s.firstFull, 3900, "the first stage landed 2500 cycles after it was free");
  assert.equal(s.fullToFull, 60);
  assert.equal(s.tileKLoop, 8500);
});

Deno.test("trace_table summarises both math warpgroups' phase lines, leaving out stale second waves", () => {
  const log = [
    header("4096x7168x16384 bm=256 dbg=64", "2"),
    ...twoIterations,
    // Warpgroup 1 a batch behind warpgroup 0: batches waited for at 1250, 1560, 1850, 2160, 2450, ..., alternating.
    phase(64, [1000, 1250, 1600, 1850], [1300, 1560, 1900, 2160]),
    phase(65, [2200, 2450, 2800, 3050], [2500, 2760, 3100, 3360]),
    "trace end 9000",
    header("128x4096x7168 bm=128 dbg=64", "2"),
    ...twoIterations,
    // One wave: the second pair is an earlier launch's (not after the first), and ends the warpgroup's batches.
    phase(64, [1000, 1250, 900, 950], [1010, 1270, 900, 950]),
    phase(65, [1600, 1850, 900, 950], [1620, 1880, 900, 950]),
    "trace end 9000",
  ].join("\n");
  const [two, one] = parseTraces(log);
  assert.equal(two.phases?.length, 2);
  assert.deepEqual(two.phases?.[1], { iteration: 65, wg: [[2200, 2450, 2800, 3050], [2500, 2760, 3100, 3360]] });
  const s = summarize(two);
  assert.equal(s.phaseKBlock, 1200);
  assert.equal(s.phaseBatch, 255, "the median of 250 (four times) and 260 (four times)");
  assert.equal(s.phaseGap, 345, "350 wave 0 to 1 and 350 or 340 to the next block's wave 0");
  assert.equal(s.phaseSpacing, 310, "310 and 290 in turn, four of the seven 310");
  assert.equal(s.phaseAlternate, 1);
  const o = summarize(one);
  assert.equal(o.phaseBatch, 255, "the first wave only: 250, 260, 250, 260");
  assert.equal(o.phaseGap, 350, "waited for to the next iteration's issue: 350, 350");
  assert.equal(o.phaseAlternate, 1, "1250 (0), 1270 (1), 1850 (0), 1880 (1)");
  const md = traceTable([s, o, summarize(parseTraces(lines([[1, 2, 3, 4]]).join("\n") + "\ntrace end 5")[0])]);
  assert.match(md, /\| alternating \|\n/);
  assert.match(md, /\| 2 \| 1200 \| 255 \| 345 \| 310 \| 1 \|\n/);
  assert.match(md, /\| — \| — \| — \| — \| — \| — \|$/, "a trace without phase lines");
});

Deno.test("trace_table splits a K block's turn into segments from the phase2 marks, leaving out events out of order", () => {
  const log = [
    header("4096x7168x16384 bm=256 dbg=64", "2"),
    ...twoIterations,
    phase(64, [1100, 1300, 1600, 1850], [1300, 1560, 1900, 2160]),
    phase(65, [2300, 2500, 2800, 3050], [2500, 2760, 3100, 3360]),
    // per warpgroup: wave 0 promoted, wave 1 promoted, stage full, released
    phase2(64, [1450, 2050, 1000, 1900], [1700, 2300, 1200, 2200]),
    // warpgroup 1's release is stale (before its wave 1 was waited for): the two segments around it are left out
    phase2(65, [2650, 3250, 2200, 3100], [2900, 3500, 2400, 100]),
    "trace end 9000",
  ].join("\n");
  const [t] = parseTraces(log);
  assert.deepEqual(t.phases?.[0].marks, [[1450, 2050, 1000, 1900], [1700, 2300, 1200, 2200]]);
  const [w0, w1] = turnSegments(t.phases!)!;
  // full -> issued, batch 0, promotion 0, promoted -> issued, batch 1, waited -> released, released -> promoted,
  // promoted -> next full (iteration 64 only: 65 has no next)
  assert.deepEqual(w0, [100, 200, 150, 150, 250, 50, 150, 150]);
  assert.deepEqual(w1, [100, 260, 140, 200, 260, 40, 100, 100]);
  const md = turnTable([t, parseTraces(lines([[1, 2, 3, 4]]).join("\n") + "\ntrace end 5")[0]]);
  assert.match(md, /^\| trace \| full → issued \| batch 0 \|/);
  assert.match(md, /\| 100 \/ 100 \| 200 \/ 260 \| 150 \/ 140 \|/);
  assert.equal(md.split("\n").length, 3, "the trace without marks has no row");
});

Deno.test("trace_table reads the prologue line and steps from the kernel's top to the first copies and data", () => {
  const log = [
    header("64x576x7168 bm=64 dbg=128", "the first 2 of 56"),
    ...lines([[1063, 1422, 2597, 3023], [1145, 1442, 2740, 3230]]),
    "tile 0 top 638 setup 1078 kloop 14711 epilogue 15300",
    "prologue top -1065 synced -116 waited -44 dec 210 tile 815 math top -1011 inc 208 ready 328",
    "trace end 15538",
  ].join("\n");
  const [t] = parseTraces(log);
  assert.deepEqual(t.prologue, {
    top: -1065,
    synced: -116,
    waited: -44,
    dec: 210,
    tile: 815,
    mathTop: -1011,
    inc: 208,
    ready: 328,
  });
  const row = prologueTable([t]).split("\n")[2];
  // barriers 949, wait 72, launch 44, setmaxnreg 210, first tile 605, free 248, issued 359, data 1175, top -> issued
  // 2487; math: setmaxnreg 1219, FastMath 120, tile top 310, setup 440
  assert.equal(
    row,
    "| 64x576x7168 bm=64 dbg=128 | 949 | 72 | 44 | 210 | 605 | 248 | 359 | 1175 | 2487 | 1219 | 120 | 310 | 440 |",
  );
});

Deno.test("trace_table reads the prologue2 line and splits the barrier setup and the producer's first tile", () => {
  const log = [
    header("64x7168x2048 bm=64 dbg=128", "the first 1 of 16"),
    ...lines([[966, 1065, 3560, 3700]]),
    "prologue top -1255 synced -120 waited -44 dec 215 tile 789 math top -1205 inc 235 ready 351",
    "prologue2 prefetched -569 inits -338 fenced -247 math at sync -799 warp1 top -1192 warp11 top -1137 " +
    "producer entry 373 tile again 340",
    "trace end 12000",
  ].join("\n");
  const [t] = parseTraces(log);
  assert.deepEqual(t.prologueDetail, {
    prefetched: -569,
    inits: -338,
    fenced: -247,
    mathAtSync: -799,
    warp1Top: -1192,
    warp11Top: -1137,
    producerEntry: 373,
    tileAgain: 340,
  });
  // prefetched 686 after the top, initialised 231, fenced 91, barrier 127; the math thread there 456 after the top;
  // warps 1 and 11 63 and 118 after it; entry 373, first tile 416, again 340
  assert.equal(
    prologueDetailTable([t]).split("\n")[2],
    "| 64x7168x2048 bm=64 dbg=128 | 686 | 231 | 91 | 127 | 456 | 63 | 118 | 373 | 416 | 340 |",
  );
  assert.equal(prologueDetailTable(parseTraces(log.replace(/prologue2.*\n/, ""))), "", "no prologue2 line, no row");
});

Deno.test("trace_table reads the epilogue line and splits the last tile's epilogue from its K loop's end", () => {
  const log = [
    header("128x4096x7168 bm=128 bn=32 dbg=128", "the first 1 of 56"),
    ...lines([[1200, 1380, 2900, 3100]]),
    "tile 0 top 300 setup 800 kloop 24000 epilogue 24600",
    "epilogue entry 24020 gathered 24150 staged 24230 fenced 24420 issued 24580",
    "trace end 25300", // the math's end: its stores drained
    header("bm=128 bn=32 dbg=128", "the first 1 of 56"),
    ...lines([[1200, 1380, 2900, 3100]]),
    "tile 0 top 300 setup 800 kloop 24000 epilogue 24600",
    // the last tile's chunk went out by the threads: staged, fenced and issued kept an earlier launch's clocks
    "epilogue entry 24020 gathered 24150 staged -900 fenced -800 issued -700",
    "trace end 25300",
  ].join("\n");
  const [t, threads] = parseTraces(log);
  assert.deepEqual(t.epilogue, {
    entry: 24020,
    gathered: 24150,
    staged: 24230,
    fenced: 24420,
    issued: 24580,
    drained: 25300,
  });
  const rows = epilogueTable([t, threads, { config: "none", iterations: [] }]).split("\n");
  assert.equal(rows.length, 4, "a trace without the line has no row");
  // entry 20 after the K loop, gathered 130, staged 80, fenced 190, issued 160, drained 720; K loop -> issued 580
  assert.equal(rows[2], "| 128x4096x7168 bm=128 bn=32 dbg=128 | 20 | 130 | 80 | 190 | 160 | 720 | 580 |");
  assert.equal(rows[3], "| bm=128 bn=32 dbg=128 | 20 | 130 | — | — | — | — | — |");
});
