/**
 * A shape's time taken apart by K, ours against DeepGEMM (issue 26): at small M each call runs about one tile per SM,
 * so its time is a fixed part (launch, prologue, first data landed, epilogue, exit) and a part that grows with the K
 * blocks each CTA walks. Fitting time = fixed + per-block × K / 128 over a sweep of K, in one head-to-head run
 * (tests/gpu/head_to_head.py: both kernels in one process, the same operands, alternating rounds), says which part
 * holds a gap: a prologue or epilogue longer than DeepGEMM's shows in the fixed part, a slower feed in the per-block
 * one. The traces that measured the prologue so far watched a profiling build of ours and a patched copy of DeepGEMM's
 * (docs/performance-history.md, thirty-ninth round); the sweep times the kernels the benchmark times.
 *
 * Two uses:
 *
 *     deno run -A bench/k_sweep.ts --shapes "dense 128x4096;dense 64x576" [--k 1024,2048,...]
 *       prints the shapes as run.sh's H2H_SHAPES value (one per K, ';'-separated)
 *     deno run -A bench/k_sweep.ts h2h.json [--out k_sweep.md]
 *       fits each group of shapes that differ only in K (at least 3 K values) and prints the table
 *
 * run.sh's h2h step with H2H_SHAPES runs the sweep and writes k_sweep.md itself (see its comment).
 *
 * @module
 */
import { benchArgs } from "./_args.ts";
import { cell, median, shapeLabel } from "./gpu_table.ts";
import { type H2hDoc, type H2hRow, readH2h } from "./h2h_table.ts";

/** K values of the default sweep: multiples of 512 (8 to 56 K blocks), so that boxes 2 or 4 K blocks deep and the
 * heuristic's one-row-block rules (at least 8 K blocks) hold at every point. */
export const DEFAULT_KS = [1024, 2048, 3072, 4096, 5120, 6144, 7168] as const;

/**
 * The shape names of a sweep: each prefix ("dense MxN", "masked GxMxN", "contiguous GxMxN") with each K appended, as
 * tests/gpu/shapes.py names shapes, on its grid (`parse_shape_name`: M a multiple of 4, N of 64, K of 128, a contiguous
 * group's rows of 128), so that a name refused there is refused here, before a device call. Throws a TypeError naming
 * a prefix or a K it cannot use.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { sweepShapes } from "./k_sweep.ts";
 * assert.deepEqual(sweepShapes(["dense 128x4096"], [1024, 2048]), ["dense 128x4096x1024", "dense 128x4096x2048"]);
 * assert.throws(() => sweepShapes(["dense 128x4096x7168"], [1024]), TypeError); // a prefix names no K
 * ```
 */
export function sweepShapes(prefixes: string[], ks: readonly number[]): string[] {
  for (const k of ks) {
    if (!Number.isInteger(k) || k <= 0 || k % 128 !== 0) {
      throw new TypeError(`K ${k}: a positive multiple of 128 expected (whole K blocks)`);
    }
  }
  const out: string[] = [];
  for (const raw of prefixes) {
    const p = raw.trim();
    const m = /^(dense|masked|contiguous) (\d+(?:x\d+)*)$/.exec(p);
    const dims = m ? m[2].split("x").length : 0;
    if (!m || dims !== (m[1] === "dense" ? 2 : 3) || m[2].split("x").some((d) => Number(d) <= 0)) {
      throw new TypeError(
        `"${p}": a shape without its K expected ("dense MxN", "masked GxMxN" or "contiguous GxMxN", positive)`,
      );
    }
    const [rows, n] = m[2].split("x").slice(-2).map(Number);
    if (rows % 4 !== 0 || n % 64 !== 0 || (m[1] === "contiguous" && rows % 128 !== 0)) {
      throw new TypeError(
        `"${p}": M must be a multiple of 4 (a contiguous group's rows of 128) and N of 64 (tests/gpu/shapes.py)`,
      );
    }
    for (const k of ks) out.push(`${p}x${k}`);
  }
  return out;
}

/** A least-squares line y = a + b·x and its worst residual. */
export interface Line {
  a: number;
  b: number;
  worst: number;
}

/**
 * The least-squares line through the points (x, y); at least two distinct x.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { fitLine } from "./k_sweep.ts";
 * assert.deepEqual(fitLine([8, 16, 24], [3, 5, 7]), { a: 1, b: 0.25, worst: 0 });
 * ```
 */
export function fitLine(xs: number[], ys: number[]): Line {
  const n = xs.length;
  const mx = xs.reduce((s, x) => s + x, 0) / n, my = ys.reduce((s, y) => s + y, 0) / n;
  let sxx = 0, sxy = 0;
  for (let i = 0; i < n; ++i) sxx += (xs[i] - mx) ** 2, sxy += (xs[i] - mx) * (ys[i] - my);
  if (!(sxx > 0)) throw new TypeError("a line needs at least two distinct x");
  const b = sxy / sxx, a = my - b * mx;
  return { a, b, worst: Math.max(...xs.map((x, i) => Math.abs(ys[i] - (a + b * x)))) };
}

/** The sides head_to_head.py times: ours, DeepGEMM as it launches by default, and with its programmatic dependent
 * launch. */
export const SIDES = [
  { key: "ours_us", label: "ours" },
  { key: "deepgemm_us", label: "DeepGEMM" },
  { key: "deepgemm_pdl_us", label: "DeepGEMM, PDL" },
] as const;

/** One side's fit over a group. */
export interface SideFit {
  side: string;
  /** The K values the side has times for. */
  points: number;
  /** On the medians over the rounds: fixed µs, µs per K block, worst residual µs. */
  line: Line;
  /** The fixed part fitted round by round (round r of every shape): lowest and highest. */
  fixedLow: number;
  fixedHigh: number;
}

/** A group of shapes that differ only in K, and its fits. */
export interface SweepGroup {
  /** The shape without its K: "dense 128×4096". */
  label: string;
  ks: number[];
  /** Our kernel configurations over the group's shapes (more than one: the fit spans different kernels). */
  configs: string[];
  fits: SideFit[];
}

/**
 * Groups the timed rows by everything but K and fits each side where a group has at least 3 K values (a row with an
 * error, or a side it lacks, leaves the side out of the group).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { sweepGroups } from "./k_sweep.ts";
 * // ours: 2 µs + 0.1 µs a K block; DeepGEMM: 1 µs + 0.11
 * const row = (k: number) => ({ kind: "dense", g: 1, m: 128, n: 4096, k,
 *   ours_us: [2 + 0.1 * k / 128, 2 + 0.1 * k / 128], deepgemm_us: [1 + 0.11 * k / 128, 1 + 0.11 * k / 128] });
 * const [g] = sweepGroups({ rows: [row(1024), row(2048), row(4096)] });
 * assert.equal(g.label, "dense 128×4096");
 * assert.ok(Math.abs(g.fits[0].line.a - 2) < 1e-9 && Math.abs(g.fits[1].line.b - 0.11) < 1e-9);
 * ```
 */
export function sweepGroups(doc: H2hDoc): SweepGroup[] {
  const groups = new Map<string, H2hRow[]>();
  for (const r of doc.rows) {
    if (r.error !== undefined) continue;
    const key = shapeLabel({ ...r, k: 0 }).replace(/×0$/, "");
    groups.set(key, [...(groups.get(key) ?? []), r]);
  }
  const out: SweepGroup[] = [];
  for (const [label, rows] of groups) {
    rows.sort((x, y) => x.k - y.k);
    const ks = [...new Set(rows.map((r) => r.k))];
    if (ks.length < 3) continue;
    const fits: SideFit[] = [];
    for (const { key, label: side } of SIDES) {
      const have = rows.filter((r) => (r[key] ?? []).length > 0);
      if (new Set(have.map((r) => r.k)).size < 3) continue;
      const xs = have.map((r) => r.k / 128);
      const times = have.map((r) => r[key]!);
      const line = fitLine(xs, times.map(median));
      const rounds = Math.min(...times.map((t) => t.length));
      const fixed = Array.from({ length: rounds }, (_, i) => fitLine(xs, times.map((t) => t[i])).a);
      fits.push({ side, points: have.length, line, fixedLow: Math.min(...fixed), fixedHigh: Math.max(...fixed) });
    }
    const configs = [...new Set(rows.map((r) => r.config ?? "?"))];
    out.push({ label, ks, configs, fits });
  }
  return out;
}

const us = (x: number) => x.toFixed(2);
const ns = (x: number) => (1000 * x).toFixed(1);

/**
 * The sweep as markdown: per group and side the fixed part and the part per K block, then ours against the DeepGEMM
 * setting that the fits make faster at the group's largest K.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { formatSweep } from "./k_sweep.ts";
 * const row = (k: number) => ({ kind: "dense", g: 1, m: 64, n: 576, k, config: "bm=64 bn=16",
 *   ours_us: [3 + 0.08 * k / 128, 3 + 0.08 * k / 128], deepgemm_us: [4 + 0.09 * k / 128, 4 + 0.09 * k / 128] });
 * const md = formatSweep({ rows: [row(1024), row(4096), row(7168)] });
 * assert.match(md, /\| dense 64×576 \| ours \| 3 \| 3\.00 \(3\.00–3\.00\) \| 80\.0 \| 0\.00 \|/);
 * assert.match(md, /ours − DeepGEMM: fixed −1\.00 µs, per K block −10\.0 ns/);
 * ```
 */
export function formatSweep(doc: H2hDoc): string {
  const groups = sweepGroups(doc);
  const lines = [
    "| shapes | side | K values | fixed µs (per round: lowest–highest) | per K block ns | worst residual µs |",
    "|---|---|---|---|---|---|",
  ];
  const notes: string[] = [];
  for (const g of groups) {
    for (const f of g.fits) {
      lines.push(
        `| ${cell(g.label)} | ${f.side} | ${f.points} | ${us(f.line.a)} (${us(f.fixedLow)}–${us(f.fixedHigh)}) | ` +
          `${ns(f.line.b)} | ${us(f.line.worst)} |`,
      );
    }
    const ours = g.fits.find((f) => f.side === "ours");
    const peers = g.fits.filter((f) => f.side !== "ours");
    const blocks = g.ks[g.ks.length - 1] / 128, kMax = g.ks[g.ks.length - 1];
    const at = (f: SideFit) => f.line.a + f.line.b * blocks;
    const peer = peers.length ? peers.reduce((x, y) => (at(y) < at(x) ? y : x)) : undefined;
    const signed = (x: number, f: (x: number) => string) => (x < 0 ? "−" : "+") + f(Math.abs(x));
    if (ours && peer) {
      const da = ours.line.a - peer.line.a, db = ours.line.b - peer.line.b;
      notes.push(
        `- ${g.label} (K ${g.ks.join(", ")}): ours − ${peer.side}: fixed ${signed(da, us)} µs, ` +
          `per K block ${signed(db, ns)} ns (at K = ${kMax}: ${signed(da + blocks * db, us)} µs)` +
          (g.configs.length > 1 ? `; our kernels differ over the sweep: ${g.configs.map(cell).join(" / ")}` : ""),
      );
    } else if (g.configs.length > 1) {
      notes.push(`- ${g.label}: our kernels differ over the sweep: ${g.configs.map(cell).join(" / ")}`);
    }
  }
  if (groups.length === 0) notes.push("- no group of at least 3 shapes that differ only in K");
  const head = [
    `K sweep${doc.device ? ` on ${doc.device}` : ""}${doc.date ? `, ${doc.date}` : ""}` +
    `${doc.complete === false ? " (incomplete run)" : ""}: per shape the median over ${doc.rounds ?? "the"} rounds, ` +
    "fitted as fixed µs + µs per K block × K / 128 (least squares); the fixed part fitted round by round gives its " +
    "spread. Generated by `bench/k_sweep.ts`.",
    "",
  ];
  return [...head, ...lines, "", ...notes].join("\n") + "\n";
}

async function main() {
  const usage = 'usage: deno run -A bench/k_sweep.ts --shapes "dense 128x4096;dense 64x576" [--k 1024,2048,...]\n' +
    "       deno run -A bench/k_sweep.ts h2h.json [--out k_sweep.md]";
  const { values, positionals } = benchArgs(usage, {
    options: { shapes: { type: "string" }, k: { type: "string" }, out: { type: "string" } },
    allowPositionals: true,
  });
  if (values.shapes !== undefined) {
    if (positionals.length || values.out !== undefined) {
      console.error(`--shapes takes no input file and no --out\n${usage}`);
      Deno.exit(2);
    }
    try {
      const ks = values.k === undefined ? DEFAULT_KS : values.k.split(",").map((s) => Number(s.trim()));
      console.log(sweepShapes(values.shapes.split(";").filter((s) => s.trim()), ks).join(";"));
    } catch (e) {
      console.error(`k_sweep: ${e instanceof Error ? e.message : e}`);
      Deno.exit(2);
    }
    return;
  }
  if (positionals.length !== 1 || values.k !== undefined) {
    console.error(usage);
    Deno.exit(2);
  }
  const md = formatSweep(await readH2h(positionals[0]));
  console.log(md);
  if (values.out) await Deno.writeTextFile(values.out, md);
}

if (import.meta.main) await main();
