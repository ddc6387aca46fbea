/**
 * Summary of the fast FP8 kernel's cycle traces (`GO_CUDA_FAST_CFG=dbg=N` with bit 6, 64, or its light form, bit 7,
 * 128, set; kernels/cuda/sm90_fp8_fast_profile.cuh): per trace in a log, the medians over its pipeline iterations of the
 * producer's free-to-free interval, of its issue time (free to issued), of the math warps' full-to-full interval and of
 * the time a stage is held (full to released), in SM cycles, the producer's first free stage (the prologue) and when
 * the first stage's loads had landed (the first data); and,
 * where the log has the first math thread's tiles, the medians of a tile's setup (`fast_tile`, accumulators zeroed),
 * K loop and epilogue, and of the step from one tile's epilogue to the next tile's top; and, where the log has both
 * math warpgroups' wgmma events (`phase` lines, pipeline iterations 64-95), the medians of a K block, of a batch's
 * time from issued to waited for, of a warpgroup's time from one batch waited for to its next batch issued, of the
 * interval between consecutive batches waited for (either warpgroup), and how often consecutive batches came from
 * different warpgroups.
 *
 *     deno run -A bench/trace_table.ts bench.log [--label dbg=64 --label dbg=65 ...]
 *
 * The log holds what tests/gpu/run.sh's bench step printed: a `fast trace (<M>x<N>x<K> <config>): ...` header (from the launcher)
 * before each trace, one `trace <i> free <c> issued <c> full <c> released <c>` line per iteration (the light form: the
 * first 4, its header saying `the first 4 of <n> iterations`), one
 * `tile <t> top <c> setup <c> kloop <c> epilogue <c>` line per tile, one
 * `phase <i> wg0 <c> <c> <c> <c> wg1 <c> <c> <c> <c>` line per traced iteration (per warpgroup: wave 0's wgmmas
 * issued, waited for, wave 1's issued, waited for), one `phase2 <i> wg0 <c> <c> <c> <c> wg1 <c> <c> <c> <c>` line per
 * traced iteration (per warpgroup: wave 0 promoted, wave 1 promoted, the stage full, the stage released; summarised
 * in a second table, the K block's turn by segment: `turnTable`), one `prologue top <c> synced <c> waited <c> dec <c>
 * tile <c> math top <c> inc <c> ready <c>` line (a third table, the steps from the kernel's top to the first copies
 * and data: `prologueTable`), one `prologue2 prefetched <c> inits <c> fenced <c> math at sync <c> warp1 top <c> warp11
 * top <c> producer entry <c> tile again <c>` line (a fourth, the barrier setup and the first tile split finer:
 * `prologueDetailTable`), one `epilogue entry <c> gathered <c> staged <c> fenced <c> issued <c>` line (a fifth, the
 * last tile's epilogue by step, up to its stores drained at `trace end`, the math's end: `epilogueTable`) and
 * `trace end <c>`.
 * Traces without a header (the device printf of the ninth session's first builds) are numbered, or named by --label.
 *
 * @module
 */
import { benchArgs } from "./_args.ts";

/** One pipeline iteration of CTA 0: cycles from the producer's start; 0 or less where nothing was recorded. */
export interface TraceIteration {
  free: number;
  issued: number;
  full: number;
  released: number;
}

/** One tile of the first math thread: cycles from the producer's start at its top, once set up, after its K loop and
 * after its epilogue (a unit the thread skipped, invalid, has only its top). */
export interface TraceTile {
  top: number;
  setup: number;
  kloop: number;
  epilogue: number;
}

/** The prologue of CTA 0: thread 0 at the kernel's top, once the barriers are set up, once the dependency was waited
 * for, after setmaxnreg, once the producer computed its first tile; the first math thread at the kernel's top, after
 * setmaxnreg, once FastMath is built. */
export interface TracePrologue {
  top: number;
  synced: number;
  waited: number;
  dec: number;
  tile: number;
  mathTop: number;
  inc: number;
  ready: number;
}

/** The prologue's finer steps (a `prologue2` line): thread 0 once the tensor maps are prefetched, the barriers
 * initialised and fenced; the first math thread at the barrier after them; warps 1 and 11 at the kernel's top; the
 * producer's entry; and the cycles the producer took to compute its first tile again after its loop (constants warm;
 * its own inlined copy of the code). */
export interface TracePrologueDetail {
  prefetched: number;
  inits: number;
  fenced: number;
  mathAtSync: number;
  warp1Top: number;
  warp11Top: number;
  producerEntry: number;
  tileAgain: number;
}

/** The first math thread's last epilogue by step (an `epilogue` line): fast_epilogue's entry, its warpgroup gathered
 * at the named barrier, the chunk staged in shared memory, fenced and gathered again, the TMA stores issued; and the
 * stores drained before the CTA exits (the `trace end` line: the math's end). */
export interface TraceEpilogue {
  entry: number;
  gathered: number;
  staged: number;
  fenced: number;
  issued: number;
  drained: number;
}

/** One pipeline iteration of both math warpgroups: per warpgroup, cycles from the producer's start at wave 0's
 * wgmmas issued, waited for, wave 1's issued, waited for (BLOCK_M 128 and 64 have one wave: the last two are stale). */
export interface TracePhase {
  iteration: number;
  wg: [number[], number[]];
  /** Per warpgroup, from the `phase2` line of the iteration (where the launcher printed one): wave 0's promotion
   * done, wave 1's promotion done, the stage's full barrier waited for, the stage released. */
  marks?: [number[], number[]];
}

/** One trace: its configuration (the header's, or a label), its iterations, its tiles and its phase lines (none in
 * older logs). */
export interface Trace {
  config: string;
  iterations: TraceIteration[];
  tiles?: TraceTile[];
  /** The `prologue` line (cycles from the producer's start; negative before it), where the launcher printed one. */
  prologue?: TracePrologue;
  /** The `prologue2` line, the same way. */
  prologueDetail?: TracePrologueDetail;
  /** The `epilogue` line, the same way. */
  epilogue?: TraceEpilogue;
  phases?: TracePhase[];
  /** Iterations the launch ran, where the header says (more than the lines of a light trace, which are the first). */
  ran?: number;
  /**
   * The ring wrapped: the kernel writes iteration i into slot i mod 256, so past 256 iterations `iterations` holds the
   * last ones (in order) and iteration 0's events are gone.
   */
  wrapped?: true;
}

/** The medians of one trace, in cycles (undefined where the trace lacks the events). */
export interface TraceSummary {
  config: string;
  iterations: number;
  freeToFree?: number;
  issue?: number;
  fullToFull?: number;
  held?: number;
  /** Cycles from the producer's start to its first free stage: the prologue (H200: 1.1-2.0 k). */
  firstFree?: number;
  /** Cycles from the producer's start to the first stage full in the math: when the first data had landed. */
  firstFull?: number;
  /** Tiles with all four events in order, and their medians (present only where the trace has tiles). */
  tiles?: number;
  tileSetup?: number;
  tileKLoop?: number;
  tileEpilogue?: number;
  /** From a tile's epilogue end to the next tile's top. */
  tileNext?: number;
  /** Phase lines (present only where the trace has them), and their medians: warpgroup 0's K block (wave 0 issued
   * to the next iteration's), a batch from issued to waited for, a warpgroup's batch waited for to its next issued,
   * consecutive batches waited for (both warpgroups in time order); and the share of those consecutive pairs that
   * came from different warpgroups (1: they alternate on the tensor cores). */
  phases?: number;
  phaseKBlock?: number;
  phaseBatch?: number;
  phaseGap?: number;
  phaseSpacing?: number;
  phaseAlternate?: number;
}

const LINE = /^trace (\d+) free (-?\d+) issued (-?\d+) full (-?\d+) released (-?\d+)$/;
/** A line of named cycle counts (`<kind> <label> <c> <label> <c> ...`): its labels in order and the fields they fill. */
const keyedLine = <F extends string>(kind: string, fields: [label: string, field: F][]) => ({
  re: new RegExp(`^${kind} ${fields.map(([label]) => `${label} (-?\\d+)`).join(" ")}$`),
  read: (m: RegExpExecArray) =>
    Object.fromEntries(fields.map(([, f], i) => [f, Number(m[i + 1])])) as Record<F, number>,
});
const PROLOGUE = keyedLine("prologue", [
  ["top", "top"],
  ["synced", "synced"],
  ["waited", "waited"],
  ["dec", "dec"],
  ["tile", "tile"],
  ["math top", "mathTop"],
  ["inc", "inc"],
  ["ready", "ready"],
]);
const PROLOGUE2 = keyedLine("prologue2", [
  ["prefetched", "prefetched"],
  ["inits", "inits"],
  ["fenced", "fenced"],
  ["math at sync", "mathAtSync"],
  ["warp1 top", "warp1Top"],
  ["warp11 top", "warp11Top"],
  ["producer entry", "producerEntry"],
  ["tile again", "tileAgain"],
]);
const EPILOGUE = keyedLine("epilogue", [
  ["entry", "entry"],
  ["gathered", "gathered"],
  ["staged", "staged"],
  ["fenced", "fenced"],
  ["issued", "issued"],
]);
const TILE = /^tile (\d+) top (-?\d+) setup (-?\d+) kloop (-?\d+) epilogue (-?\d+)$/;
// A `phase` line, or a `phase2` line (the same iteration's marks): the kind, the iteration and eight events.
const PHASE = /^(phase2?) (\d+) wg0 (-?\d+) (-?\d+) (-?\d+) (-?\d+) wg1 (-?\d+) (-?\d+) (-?\d+) (-?\d+)$/;
const HEADER = /^fast trace \((.*)\): launch \d+(?:, CTA \d+, (the first \d+ of )?(\d+) iterations)?/;

/**
 * The traces of a log, in order.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseTraces } from "./trace_table.ts";
 * const log = "fast trace (bm=64 dbg=64): launch 30, CTA 0, 2 iterations, cycles\n" +
 *   "trace 0 free 10 issued 20 full 90 released 95\ntrace 1 free 30 issued 45 full 110 released 120\ntrace end 500\n";
 * const [t] = parseTraces(log);
 * assert.equal(t.config, "bm=64 dbg=64");
 * assert.deepEqual(t.iterations[1], { free: 30, issued: 45, full: 110, released: 120 });
 * ```
 */
export function parseTraces(log: string, labels: string[] = []): Trace[] {
  const traces: Trace[] = [];
  let header: string | undefined;
  let ran: number | undefined;
  let light = false;
  let current: TraceIteration[] = [];
  let tiles: TraceTile[] = [];
  let phases: TracePhase[] = [];
  let prologue: TracePrologue | undefined;
  let prologueDetail: TracePrologueDetail | undefined;
  let epilogue: TraceEpilogue | undefined;
  for (const raw of log.split("\n")) {
    const line = raw.trim();
    const h = HEADER.exec(line);
    if (h) {
      header = h[1];
      light = h[2] !== undefined;
      ran = h[3] === undefined ? undefined : Number(h[3]);
      continue;
    }
    const m = LINE.exec(line);
    if (m) {
      const [free, issued, full, released] = m.slice(2).map(Number);
      current.push({ free, issued, full, released });
      continue;
    }
    const tm = TILE.exec(line);
    if (tm) {
      const [top, setup, kloop, epilogue] = tm.slice(2).map(Number);
      tiles.push({ top, setup, kloop, epilogue });
      continue;
    }
    const pm = PHASE.exec(line);
    if (pm) {
      const iteration = Number(pm[2]),
        c = pm.slice(3).map(Number),
        wg: [number[], number[]] = [c.slice(0, 4), c.slice(4)];
      if (pm[1] === "phase") phases.push({ iteration, wg });
      else {
        const at = phases.find((p) => p.iteration === iteration);
        if (at) at.marks = wg;
      }
      continue;
    }
    const pr = PROLOGUE.re.exec(line);
    if (pr) {
      prologue = PROLOGUE.read(pr);
      continue;
    }
    const p2 = PROLOGUE2.re.exec(line);
    if (p2) {
      prologueDetail = PROLOGUE2.read(p2);
      continue;
    }
    const ep = EPILOGUE.re.exec(line);
    if (ep) {
      epilogue = { ...EPILOGUE.read(ep), drained: NaN };
      continue;
    }
    if (line.startsWith("trace end")) {
      if (epilogue) epilogue.drained = Number(line.slice("trace end".length));
      const n = traces.length;
      const config = header ?? labels[n] ?? `trace ${n + 1}`;
      // A ring that wrapped: slot ran mod size holds the oldest iteration kept (a light trace keeps the first ones).
      const wrapped = !light && ran !== undefined && ran > current.length && current.length > 0;
      const s0 = wrapped ? ran! % current.length : 0;
      const iterations = [...current.slice(s0), ...current.slice(0, s0)];
      traces.push({
        config,
        iterations,
        ...(tiles.length > 0 ? { tiles } : {}),
        ...(phases.length > 0 ? { phases } : {}),
        ...(prologue ? { prologue } : {}),
        ...(prologueDetail ? { prologueDetail } : {}),
        ...(epilogue ? { epilogue } : {}),
        ...(ran !== undefined ? { ran } : {}),
        ...(wrapped ? { wrapped } : {}),
      });
      header = undefined;
      ran = undefined;
      light = false;
      current = [];
      tiles = [];
      phases = [];
      prologue = undefined;
      prologueDetail = undefined;
      epilogue = undefined;
    }
  }
  return traces;
}

/** The median of xs (the mean of the middle two for an even count); undefined for none. */
export function median(xs: number[]): number | undefined {
  if (xs.length === 0) return undefined;
  const s = [...xs].sort((a, b) => a - b), h = Math.floor(s.length / 2);
  return s.length % 2 ? s[h] : (s[h - 1] + s[h]) / 2;
}

/**
 * The medians of a trace. A nonsense value (an event never recorded: the buffer's stale contents, far from the
 * producer's start) leaves its interval out. With `ktma=N` in the configuration the producer copies N K blocks at a
 * time (its events repeat for each of them): its columns come from the first iteration of each group, free to free
 * divided by N (per K block) and the issue time per group of N.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { summarize } from "./trace_table.ts";
 * const it = (i: number) => ({ free: 100 * i, issued: 100 * i + 40, full: 100 * i + 300, released: 100 * i + 350 });
 * const s = summarize({ config: "x", iterations: [1, 2, 3, 4].map(it) });
 * assert.deepEqual(s, {
 *   config: "x",
 *   iterations: 4,
 *   freeToFree: 100,
 *   issue: 40,
 *   fullToFull: 100,
 *   held: 50,
 *   firstFree: 100,
 *   firstFull: 400,
 * });
 * const g = summarize({ config: "x ktma=2", iterations: [1, 1, 2, 2].map(it) });
 * assert.equal(g.freeToFree, 50);
 * ```
 */
export function summarize(t: Trace): TraceSummary {
  const ok = (c: number) => c > 0;
  const group = Number(/ ktma=(\d+)/.exec(t.config)?.[1] ?? 1);
  const starts = t.iterations.filter((_, i) => i % group === 0);
  const diffs = (xs: TraceIteration[], pick: (x: TraceIteration) => number) => {
    const out: number[] = [];
    for (let i = 1; i < xs.length; ++i) {
      const a = pick(xs[i - 1]), b = pick(xs[i]);
      if (ok(a) && ok(b)) out.push(b - a);
    }
    return out;
  };
  const spans = (xs: TraceIteration[], from: (x: TraceIteration) => number, to: (x: TraceIteration) => number) =>
    xs.filter((x) => ok(from(x)) && ok(to(x))).map((x) => to(x) - from(x));
  const perGroup = median(diffs(starts, (x) => x.free));
  const first = t.wrapped ? undefined : t.iterations[0]; // iteration 0, where the trace kept it
  const tiles = (t.tiles ?? []).filter((x) =>
    0 < x.top && x.top <= x.setup && x.setup <= x.kloop && x.kloop <= x.epilogue
  );
  const next = (t.tiles ?? []).slice(1).map((x, i) => [t.tiles![i], x]).filter(([a, b]) =>
    tiles.includes(a) && b.top >= a.epilogue
  ).map(([a, b]) => b.top - a.epilogue);
  const tileColumns = t.tiles === undefined ? {} : {
    tiles: tiles.length,
    tileSetup: median(tiles.map((x) => x.setup - x.top)),
    tileKLoop: median(tiles.map((x) => x.kloop - x.setup)),
    tileEpilogue: median(tiles.map((x) => x.epilogue - x.kloop)),
    tileNext: median(next),
  };
  return {
    config: t.config,
    iterations: t.ran ?? t.iterations.length,
    ...(t.phases === undefined ? {} : phaseColumns(t.phases)),
    freeToFree: perGroup === undefined ? undefined : perGroup / group,
    issue: median(spans(starts, (x) => x.free, (x) => x.issued)),
    fullToFull: median(diffs(t.iterations, (x) => x.full)),
    held: median(spans(t.iterations, (x) => x.full, (x) => x.released)),
    firstFree: first && ok(first.free) ? first.free : undefined,
    firstFull: first && ok(first.full) ? first.full : undefined,
    ...tileColumns,
  };
}

/**
 * The phase columns of a trace's phase lines (TraceSummary's phase fields). An event not after the one before it in
 * its warpgroup (stale, or a second wave that a one-wave kernel never records) ends that warpgroup's batches for the
 * iteration.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { phaseColumns } from "./trace_table.ts";
 * // Warpgroup 1's events 300 cycles after warpgroup 0's, 1200 a K block: the batches alternate.
 * const wg = (i: number, o: number) => [100, 350, 700, 950].map((c) => 1200 * i + o + c);
 * const p = [0, 1].map((i) => ({ iteration: 64 + i, wg: [wg(i, 0), wg(i, 300)] as [number[], number[]] }));
 * assert.deepEqual(phaseColumns(p), {
 *   phases: 2,
 *   phaseKBlock: 1200,
 *   phaseBatch: 250,
 *   phaseGap: 350,
 *   phaseSpacing: 300,
 *   phaseAlternate: 1,
 * });
 * ```
 */
export function phaseColumns(phases: TracePhase[]): Pick<
  TraceSummary,
  "phases" | "phaseKBlock" | "phaseBatch" | "phaseGap" | "phaseSpacing" | "phaseAlternate"
> {
  const kblock: number[] = [], batch: number[] = [], gap: number[] = [], done: [number, number][] = [];
  phases.forEach((p, k) => {
    const next = phases[k + 1]?.iteration === p.iteration + 1 ? phases[k + 1] : undefined;
    if (next && next.wg[0][0] > p.wg[0][0]) kblock.push(next.wg[0][0] - p.wg[0][0]);
    p.wg.forEach((ev, w) => {
      // The events recorded in order: (issued, waited for) pairs while each follows the one before it.
      let n = 0;
      while (n < ev.length && ev[n] > 0 && (n === 0 || ev[n] > ev[n - 1])) ++n;
      n -= n % 2;
      for (let v = 0; v < n; v += 2) {
        batch.push(ev[v + 1] - ev[v]);
        done.push([ev[v + 1], w]);
        if (v + 2 < n) gap.push(ev[v + 2] - ev[v + 1]);
      }
      if (n > 0 && next && next.wg[w][0] > ev[n - 1]) gap.push(next.wg[w][0] - ev[n - 1]);
    });
  });
  done.sort((a, b) => a[0] - b[0]);
  const spacing = done.slice(1).map((d, i) => d[0] - done[i][0]);
  const alternate = done.slice(1).filter((d, i) => d[1] !== done[i][1]).length;
  return {
    phases: phases.length,
    phaseKBlock: median(kblock),
    phaseBatch: median(batch),
    phaseGap: median(gap),
    phaseSpacing: median(spacing),
    phaseAlternate: spacing.length ? Math.round(100 * alternate / spacing.length) / 100 : undefined,
  };
}

/** The segments of a two-wave K block's turn (turnSegments), in the order a warpgroup runs them. */
export const TURN_SEGMENTS = [
  "full → issued",
  "batch 0",
  "promotion 0",
  "promoted → issued",
  "batch 1",
  "waited → released",
  "released → promoted",
  "promoted → next full",
] as const;

/**
 * The medians of each segment of a warpgroup's K block, per warpgroup, from phase lines with their `phase2` marks
 * (two waves): the stage's full barrier waited for → wave 0's wgmmas issued (its scales read, the wgmmas issued) →
 * waited for → promoted → wave 1's issued → waited for → the stage released → promoted → the next iteration's stage
 * full. An event not after the last one in order before it (stale, or missing) leaves out the two segments it ends
 * and starts. Undefined without marks.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { turnSegments } from "./trace_table.ts";
 * const ev = (i: number) => [100, 350, 700, 950].map((c) => 1200 * i + c);
 * const mk = (i: number) => [500, 1150, 20, 1000].map((c) => 1200 * i + c);
 * const two = (x: number[]) => [x, x] as [number[], number[]];
 * const p = [0, 1].map((i) => ({ iteration: 64 + i, wg: two(ev(i)), marks: two(mk(i)) }));
 * const s = turnSegments(p)!;
 * assert.deepEqual(s[0], [80, 250, 150, 200, 250, 50, 150, 70]);
 * ```
 */
export function turnSegments(phases: TracePhase[]): [(number | undefined)[], (number | undefined)[]] | undefined {
  if (!phases.some((p) => p.marks)) return undefined;
  const per = (w: number) => {
    const seg: number[][] = TURN_SEGMENTS.map(() => []);
    phases.forEach((p, k) => {
      if (!p.marks) return;
      const [iss0, done0, iss1, done1] = p.wg[w], [pro0, pro1, full, rel] = p.marks[w];
      const next = phases[k + 1]?.iteration === p.iteration + 1 ? phases[k + 1].marks?.[w][2] : undefined;
      const chain = [full, iss0, done0, pro0, iss1, done1, rel, pro1, next ?? 0];
      // An event is in order when recorded and not before the last event in order ahead of it.
      let last = 0;
      const inOrder = chain.map((c) => c > 0 && c >= last ? (last = c, true) : false);
      for (let j = 0; j < TURN_SEGMENTS.length; ++j) {
        if (inOrder[j] && inOrder[j + 1]) seg[j].push(chain[j + 1] - chain[j]);
      }
    });
    return seg.map(median);
  };
  return [per(0), per(1)];
}

/**
 * The markdown table of each trace's turn segments (turnSegments), "warpgroup 0 / warpgroup 1" per cell; the traces
 * without `phase2` marks are left out, and with none the table is empty.
 *
 * @example
 * ```ts
 * import { turnTable } from "./trace_table.ts";
 * const md = turnTable([{ config: "x", iterations: [] }]);
 * if (md !== "") throw new Error(md);
 * ```
 */
export function turnTable(traces: Trace[]): string {
  const rows = traces.flatMap((t) => {
    const s = t.phases && turnSegments(t.phases);
    return s ? [[t.config, ...s[0].map((v, j) => `${v ?? "—"} / ${s[1][j] ?? "—"}`)]] : [];
  });
  return markdownRows(["trace", ...TURN_SEGMENTS], rows);
}

/**
 * The markdown table of the traces' prologues: the producer's steps from the kernel's top to its first copies issued
 * and the first data landed, and the first math thread's to its first tile set up (cycles each step; the trace's
 * first iteration and tile where it kept them). Traces without a `prologue` line are left out; with none the table is
 * empty.
 *
 * @example
 * ```ts
 * import { prologueTable } from "./trace_table.ts";
 * const prologue = { top: -1000, synced: -100, waited: -40, dec: 200, tile: 800, mathTop: -990, inc: 210, ready: 330 };
 * const t = { config: "x", iterations: [{ free: 1000, issued: 1400, full: 2600, released: 3000 }], prologue };
 * const md = prologueTable([t, { config: "y", iterations: [] }]);
 * if (!md.endsWith("| x | 900 | 60 | 40 | 200 | 600 | 200 | 400 | 1200 | 2400 | 1200 | 120 | — | — |")) throw new Error(md);
 * ```
 */
export function prologueTable(traces: Trace[]): string {
  const rows = traces.flatMap((t) => {
    const p = t.prologue;
    if (!p) return [];
    const first = t.wrapped ? undefined : t.iterations[0], tile = t.tiles?.[0];
    const step = (a?: number, b?: number) => a === undefined || b === undefined ? "—" : String(b - a);
    const cells = [
      step(p.top, p.synced),
      step(p.synced, p.waited),
      step(p.waited, 0),
      step(0, p.dec),
      step(p.dec, p.tile),
      step(p.tile, first?.free),
      step(first?.free, first?.issued),
      step(first?.issued, first?.full),
      step(p.top, first?.issued),
      step(p.mathTop, p.inc),
      step(p.inc, p.ready),
      step(p.ready, tile?.top),
      step(tile?.top, tile?.setup),
    ];
    return [[t.config, ...cells]];
  });
  return markdownRows(
    [
      "trace",
      "top → barriers set up",
      "→ top's dependency wait (none in dense shape-class kernels)",
      "→ producer's start",
      "→ setmaxnreg",
      "→ first tile",
      "→ first stage free",
      "→ first copies issued",
      "→ first data landed",
      "top → first copies issued",
      "math: top → setmaxnreg",
      "→ FastMath built",
      "→ first tile's top",
      "→ tile set up",
    ],
    rows,
  );
}

/**
 * The markdown table of the prologues' finer steps (traces with both a `prologue` and a `prologue2` line): thread 0
 * from the kernel's top to the maps prefetched, the barriers initialised, fenced and the barrier passed; when the first
 * math thread reached that barrier and warps 1 and 11 started (cycles after thread 0's top); from the producer's start
 * to its entry and on to its first tile; and that tile computed again after the loop.
 *
 * @example
 * ```ts
 * import { prologueDetailTable } from "./trace_table.ts";
 * const prologue = { top: -1000, synced: -100, waited: -40, dec: 200, tile: 800, mathTop: -990, inc: 210, ready: 330 };
 * const prologueDetail = {
 *   prefetched: -400, inits: -200, fenced: -150, mathAtSync: -700, warp1Top: -950, warp11Top: -900,
 *   producerEntry: 350, tileAgain: 300,
 * };
 * const md = prologueDetailTable([{ config: "x", iterations: [], prologue, prologueDetail }]);
 * if (!md.endsWith("| x | 600 | 200 | 50 | 50 | 300 | 50 | 100 | 350 | 450 | 300 |")) throw new Error(md);
 * ```
 */
export function prologueDetailTable(traces: Trace[]): string {
  const rows = traces.flatMap((t) => {
    const p = t.prologue, d = t.prologueDetail;
    if (!p || !d) return [];
    const cells = [
      d.prefetched - p.top,
      d.inits - d.prefetched,
      d.fenced - d.inits,
      p.synced - d.fenced,
      d.mathAtSync - p.top,
      d.warp1Top - p.top,
      d.warp11Top - p.top,
      d.producerEntry,
      p.tile - d.producerEntry,
      d.tileAgain,
    ];
    return [[t.config, ...cells.map(String)]];
  });
  return markdownRows(
    [
      "trace",
      "top → maps prefetched",
      "→ barriers initialised",
      "→ fenced",
      "→ barrier passed",
      "math thread at the barrier (from top)",
      "warp 1 starts",
      "warp 11 starts",
      "producer's start → entry",
      "→ first tile",
      "first tile again",
    ],
    rows,
  );
}

/**
 * The markdown table of the last tiles' epilogues (traces with an `epilogue` line): the first math thread's steps from
 * its K loop's end (the trace's last kept tile) through fast_epilogue's entry, its warpgroup gathered, the chunk
 * staged, fenced and gathered again, the TMA stores issued, to the stores drained. A step out of order (its tile
 * stored the chunk by the threads, so the slot kept an older clock) is "—".
 *
 * @example
 * ```ts
 * import { epilogueTable } from "./trace_table.ts";
 * const epilogue = { entry: 5010, gathered: 5100, staged: 5180, fenced: 5300, issued: 5340, drained: 5900 };
 * const tiles = [{ top: 100, setup: 400, kloop: 5000, epilogue: 5350 }];
 * const md = epilogueTable([{ config: "x", iterations: [], tiles, epilogue }]);
 * if (!md.endsWith("| x | 10 | 90 | 80 | 120 | 40 | 560 | 340 |")) throw new Error(md);
 * ```
 */
export function epilogueTable(traces: Trace[]): string {
  const rows = traces.flatMap((t) => {
    const e = t.epilogue;
    if (!e) return [];
    const kloop = t.tiles?.at(-1)?.kloop;
    // A clock counts where it follows every earlier clock that counted; a step needs both its ends to count.
    let last = kloop ?? -Infinity;
    const counts = [e.entry, e.gathered, e.staged, e.fenced, e.issued, e.drained].map((c) => {
      const ok = c >= last;
      if (ok) last = c;
      return ok ? c : undefined;
    });
    const ends = [kloop, ...counts];
    const step = (a?: number, b?: number) => a === undefined || b === undefined ? "—" : String(b - a);
    const cells = counts.map((b, i) => step(ends[i], b));
    return [[t.config, ...cells, step(kloop, counts[4])]];
  });
  return markdownRows(
    [
      "trace",
      "K loop's end → epilogue entry",
      "→ warpgroup gathered",
      "→ staged",
      "→ fenced and gathered",
      "→ stores issued",
      "→ stores drained",
      "K loop's end → stores issued",
    ],
    rows,
  );
}

/** A markdown table of `head` over `rows` ("" without rows). */
function markdownRows(head: string[], rows: string[][]): string {
  if (rows.length === 0) return "";
  return [head, head.map(() => "---"), ...rows].map((r) => `| ${r.join(" | ")} |`).join("\n");
}

/**
 * The markdown table of the summaries.
 *
 * @example
 * ```ts
 * import { traceTable } from "./trace_table.ts";
 * const md = traceTable([{ config: "x", iterations: 4, freeToFree: 100 }]);
 * if (!md.includes("| x | 4 | 100 | — | — | — | — | — |")) throw new Error(md);
 * ```
 */
export function traceTable(rows: TraceSummary[]): string {
  const cell = (v?: number) => v === undefined ? "—" : String(v);
  // The tile columns only where some trace has tiles (logs of the launcher before it printed them have none).
  const withTiles = rows.some((r) => r.tiles !== undefined);
  const tileHead = withTiles ? " tiles | tile setup | tile K loop | tile epilogue | epilogue → next tile |" : "";
  // The phase columns only where some trace has phase lines.
  const withPhases = rows.some((r) => r.phases !== undefined);
  const phaseHead = withPhases
    ? " phase iterations | K block | batch, issued → waited | warpgroup, waited → next issued | batches waited, apart | alternating |"
    : "";
  return [
    "| trace | iterations | producer, free to free (per K block) | issue (free → issued; ktma=N: per N K blocks) | math, full to full | stage held (full → released) | first free (prologue) | first full (first data) |" +
    tileHead + phaseHead,
    "|---|---|---|---|---|---|---|---|" + (withTiles ? "---|---|---|---|---|" : "") +
    (withPhases ? "---|---|---|---|---|---|" : ""),
    ...rows.map((r) =>
      `| ${r.config} | ${r.iterations} | ${cell(r.freeToFree)} | ${cell(r.issue)} | ${cell(r.fullToFull)} | ${
        cell(r.held)
      } | ${cell(r.firstFree)} | ${cell(r.firstFull)} |` +
      (withTiles
        ? ` ${cell(r.tiles)} | ${cell(r.tileSetup)} | ${cell(r.tileKLoop)} | ${cell(r.tileEpilogue)} | ${
          cell(r.tileNext)
        } |`
        : "") +
      (withPhases
        ? ` ${cell(r.phases)} | ${cell(r.phaseKBlock)} | ${cell(r.phaseBatch)} | ${cell(r.phaseGap)} | ${
          cell(r.phaseSpacing)
        } | ${cell(r.phaseAlternate)} |`
        : "")
    ),
  ].join("\n");
}

if (import.meta.main) {
  const usage = "usage: deno run -A bench/trace_table.ts bench.log [--label NAME ...]";
  const { values, positionals } = benchArgs(usage, {
    allowPositionals: true,
    options: { label: { type: "string", multiple: true } },
  });
  if (positionals.length !== 1) {
    console.error(usage);
    Deno.exit(2);
  }
  const traces = parseTraces(await Deno.readTextFile(positionals[0]), values.label ?? []);
  if (traces.length === 0) {
    console.error(`${positionals[0]}: no trace (lines "trace <i> free ..." ended by "trace end")`);
    Deno.exit(1);
  }
  console.log(traceTable(traces.map(summarize)));
  const turns = turnTable(traces);
  if (turns) console.log(`\nA K block's turn, per segment (median cycles, warpgroup 0 / warpgroup 1):\n\n${turns}`);
  const prologues = prologueTable(traces);
  if (prologues) console.log(`\nThe prologue of CTA 0 (cycles each step):\n\n${prologues}`);
  const details = prologueDetailTable(traces);
  if (details) console.log(`\nThe prologue's finer steps (cycles):\n\n${details}`);
  const epilogues = epilogueTable(traces);
  if (epilogues) console.log(`\nThe last tile's epilogue, the first math thread (cycles each step):\n\n${epilogues}`);
}
