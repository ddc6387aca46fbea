/**
 * Summary of the fast FP8 kernel's cycle traces (`GO_CUDA_FAST_CFG=dbg=N` with bit 6, 64, set;
 * kernels/cuda/sm90_fp8_fast_profile.cuh): per trace in a log, the medians over its pipeline iterations of the
 * producer's free-to-free interval, of its issue time (free to issued), of the math warps' full-to-full interval and of
 * the time a stage is held (full to released), in SM cycles, and the producer's first free stage (the prologue); and,
 * where the log has the first math thread's tiles, the medians of a tile's setup (`fast_tile`, accumulators zeroed),
 * K loop and epilogue, and of the step from one tile's epilogue to the next tile's top.
 *
 *     deno run -A bench/trace_table.ts bench.log [--label dbg=64 --label dbg=65 ...]
 *
 * The log holds what tests/gpu/run.sh's bench step printed: a `fast trace (<M>x<N>x<K> <config>): ...` header (from the launcher)
 * before each trace, one `trace <i> free <c> issued <c> full <c> released <c>` line per iteration, one
 * `tile <t> top <c> setup <c> kloop <c> epilogue <c>` line per tile and `trace end <c>`.
 * Traces without a header (the device printf of the ninth session's first builds) are numbered, or named by --label.
 *
 * @module
 */
import { parseArgs } from "node:util";

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

/** One trace: its configuration (the header's, or a label), its iterations and its tiles (none in older logs). */
export interface Trace {
  config: string;
  iterations: TraceIteration[];
  tiles?: TraceTile[];
  /**
   * Iterations the launch ran, where the header says and it is more than the lines: the kernel writes iteration i into
   * slot i mod 256, so `iterations` then holds the last ones (in order) and iteration 0's events are gone.
   */
  ran?: number;
}

/** The medians of one trace, in cycles (undefined where the trace lacks the events). */
export interface TraceSummary {
  config: string;
  iterations: number;
  freeToFree?: number;
  issue?: number;
  fullToFull?: number;
  held?: number;
  /** Cycles from the producer's start to its first free stage: the prologue (H200: 1400-2000). */
  firstFree?: number;
  /** Tiles with all four events in order, and their medians (present only where the trace has tiles). */
  tiles?: number;
  tileSetup?: number;
  tileKLoop?: number;
  tileEpilogue?: number;
  /** From a tile's epilogue end to the next tile's top. */
  tileNext?: number;
}

const LINE = /^trace (\d+) free (-?\d+) issued (-?\d+) full (-?\d+) released (-?\d+)$/;
const TILE = /^tile (\d+) top (-?\d+) setup (-?\d+) kloop (-?\d+) epilogue (-?\d+)$/;
const HEADER = /^fast trace \((.*)\): launch \d+(?:, CTA \d+, (\d+) iterations)?/;

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
  let current: TraceIteration[] = [];
  let tiles: TraceTile[] = [];
  for (const raw of log.split("\n")) {
    const line = raw.trim();
    const h = HEADER.exec(line);
    if (h) {
      header = h[1];
      ran = h[2] === undefined ? undefined : Number(h[2]);
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
    if (line.startsWith("trace end")) {
      const n = traces.length;
      const config = header ?? labels[n] ?? `trace ${n + 1}`;
      // A ring that wrapped: slot ran mod size holds the oldest iteration kept.
      const wrapped = ran !== undefined && ran > current.length && current.length > 0;
      const s0 = wrapped ? ran! % current.length : 0;
      const iterations = [...current.slice(s0), ...current.slice(0, s0)];
      traces.push({
        config,
        iterations,
        ...(tiles.length > 0 ? { tiles } : {}),
        ...(wrapped ? { ran } : {}),
      });
      header = undefined;
      ran = undefined;
      current = [];
      tiles = [];
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
    freeToFree: perGroup === undefined ? undefined : perGroup / group,
    issue: median(spans(starts, (x) => x.free, (x) => x.issued)),
    fullToFull: median(diffs(t.iterations, (x) => x.full)),
    held: median(spans(t.iterations, (x) => x.full, (x) => x.released)),
    firstFree: t.ran === undefined && t.iterations.length > 0 && ok(t.iterations[0].free)
      ? t.iterations[0].free
      : undefined,
    ...tileColumns,
  };
}

/**
 * The markdown table of the summaries.
 *
 * @example
 * ```ts
 * import { traceTable } from "./trace_table.ts";
 * const md = traceTable([{ config: "x", iterations: 4, freeToFree: 100 }]);
 * if (!md.includes("| x | 4 | 100 | — | — | — | — |")) throw new Error(md);
 * ```
 */
export function traceTable(rows: TraceSummary[]): string {
  const cell = (v?: number) => v === undefined ? "—" : String(v);
  // The tile columns only where some trace has tiles (logs of the launcher before it printed them have none).
  const withTiles = rows.some((r) => r.tiles !== undefined);
  const tileHead = withTiles ? " tiles | tile setup | tile K loop | tile epilogue | epilogue → next tile |" : "";
  return [
    "| trace | iterations | producer, free to free (per K block) | issue (free → issued; ktma=N: per N K blocks) | math, full to full | stage held (full → released) | first free (prologue) |" +
    tileHead,
    "|---|---|---|---|---|---|---|" + (withTiles ? "---|---|---|---|---|" : ""),
    ...rows.map((r) =>
      `| ${r.config} | ${r.iterations} | ${cell(r.freeToFree)} | ${cell(r.issue)} | ${cell(r.fullToFull)} | ${
        cell(r.held)
      } | ${cell(r.firstFree)} |` +
      (withTiles
        ? ` ${cell(r.tiles)} | ${cell(r.tileSetup)} | ${cell(r.tileKLoop)} | ${cell(r.tileEpilogue)} | ${
          cell(r.tileNext)
        } |`
        : "")
    ),
  ].join("\n");
}

if (import.meta.main) {
  const { values, positionals } = parseArgs({
    args: Deno.args,
    allowPositionals: true,
    options: { label: { type: "string", multiple: true } },
  });
  if (positionals.length !== 1) {
    console.error("usage: deno run -A bench/trace_table.ts bench.log [--label NAME ...]");
    Deno.exit(2);
  }
  const traces = parseTraces(await Deno.readTextFile(positionals[0]), values.label ?? []);
  if (traces.length === 0) {
    console.error(`${positionals[0]}: no trace (lines "trace <i> free ..." ended by "trace end")`);
    Deno.exit(1);
  }
  console.log(traceTable(traces.map(summarize)));
}
