/**
 * A/B of two kernels through head-to-head runs (tests/gpu/head_to_head.py, each against DeepGEMM in one process): a
 * side is one or more runs of one library, timed in the same call alternately with the other side's (A, B, A, B).
 * Per shape: each run's ratio (the median over its rounds of DeepGEMM µs / our µs, DeepGEMM as it launches by
 * default), each side's geometric mean over its runs, and B's gain (B / A); over the shapes both sides timed, each
 * side's geometric mean, B's gain and how many shapes B was faster or slower on. DeepGEMM is the yardstick each round
 * carries with it, so a side's drift between runs (clocks, the other tenant of the machine) cancels in the ratio; the
 * summary also gives each kernel's own time, B's runs against A's (geomean over the shapes of the time ratios), which
 * says which of the two moved when the same library is compared across calls. The eighth and ninth rounds' tables in
 * docs/performance-history.md come from this.
 *
 *     deno run -A bench/h2h_ab.ts tree.json,tree2.json head.json,head2.json [--label-a halves] [--label-b HEAD]
 *       [--filter "dense 4096|masked 6×1024"]
 *
 * @module
 */
import { benchArgs } from "./_args.ts";
import { f3, type H2hDoc, h2hStats, parseH2h } from "./h2h_table.ts";
import { geomean } from "./gpu_table.ts";

/** One shape both sides timed. */
export interface H2hAbRow {
  shape: string;
  /** Each run's median ratio (DeepGEMM µs / our µs), side A then side B. */
  a: number[];
  b: number[];
  /** Geometric means over the side's runs. */
  aMean: number;
  bMean: number;
  /** bMean / aMean: above 1 where B is faster against DeepGEMM. */
  gain: number;
  /** Geometric means over each side's runs of our median µs and DeepGEMM's. */
  ours: [number, number];
  deepgemm: [number, number];
}

/** The comparison over the shapes both sides timed. */
export interface H2hAb {
  rows: H2hAbRow[];
  /** Geometric means over the shapes of the side means, and B's gain. */
  a: number;
  b: number;
  gain: number;
  /** Shapes where B's gain is above 1, below 1. */
  faster: number;
  slower: number;
  /** Geometric means over the shapes of B's time / A's: our kernel's and DeepGEMM's. */
  oursTime: number;
  deepgemmTime: number;
}

/**
 * Joins the runs of two sides by shape (a shape counts where every run of both sides timed it) and compares them.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { compareH2h } from "./h2h_ab.ts";
 * const run = (ratio: number) => ({ rows: [{ kind: "dense", g: 1, m: 4096, n: 7168, k: 16384,
 *   ours_us: [100, 100], deepgemm_us: [100 * ratio, 100 * ratio] }] });
 * const ab = compareH2h([run(0.9), run(1.0)], [run(0.95), run(0.95)]);
 * assert.equal(ab.rows[0].shape, "dense 4096×7168×16384");
 * assert.ok(Math.abs(ab.rows[0].aMean - Math.sqrt(0.9)) < 1e-12);
 * assert.equal(ab.faster, 1);
 * ```
 */
export function compareH2h(a: H2hDoc[], b: H2hDoc[], filter?: RegExp): H2hAb {
  if (a.length === 0 || b.length === 0) throw new TypeError("h2h A/B: each side needs at least one run");
  const stats = (doc: H2hDoc) => {
    const m = new Map<string, NonNullable<ReturnType<typeof h2hStats>>>();
    for (const r of doc.rows) {
      const s = h2hStats(r);
      if (s && (!filter || filter.test(s.label))) m.set(s.label, s);
    }
    return m;
  };
  const sa = a.map(stats), sb = b.map(stats);
  const rows: H2hAbRow[] = [];
  for (const shape of sa[0].keys()) {
    if (![...sa, ...sb].every((m) => m.has(shape))) continue;
    const side = (runs: typeof sa) => runs.map((m) => m.get(shape)!);
    const as = side(sa), bs = side(sb);
    // Against DeepGEMM as it launches by default in every run: the faster of its two settings (h2hStats' ratio) may
    // differ between runs, which would move the yardstick.
    const av = as.map((s) => s.defaultRatio), bv = bs.map((s) => s.defaultRatio);
    const aMean = geomean(av), bMean = geomean(bv);
    const us = (ss: typeof as, pick: (s: typeof as[0]) => number) => geomean(ss.map(pick));
    rows.push({
      shape,
      a: av,
      b: bv,
      aMean,
      bMean,
      gain: bMean / aMean,
      ours: [us(as, (s) => s.oursUs), us(bs, (s) => s.oursUs)],
      deepgemm: [us(as, (s) => s.deepgemmUs), us(bs, (s) => s.deepgemmUs)],
    });
  }
  const am = geomean(rows.map((r) => r.aMean)), bm = geomean(rows.map((r) => r.bMean));
  return {
    rows,
    a: am,
    b: bm,
    gain: bm / am,
    faster: rows.filter((r) => r.gain > 1).length,
    slower: rows.filter((r) => r.gain < 1).length,
    oursTime: geomean(rows.map((r) => r.ours[1] / r.ours[0])),
    deepgemmTime: geomean(rows.map((r) => r.deepgemm[1] / r.deepgemm[0])),
  };
}

/**
 * The markdown table of a comparison: per shape each side's runs and mean, and B's gain in percent.
 *
 * @example
 * ```ts
 * import { formatH2hAb } from "./h2h_ab.ts";
 * const row = { shape: "dense 1×64×576×7168", a: [1.1], b: [1.21], aMean: 1.1, bMean: 1.21, gain: 1.1,
 *   ours: [10, 9] as [number, number], deepgemm: [11, 10.9] as [number, number] };
 * const ab = { rows: [row], a: 1.1, b: 1.21, gain: 1.1, faster: 1, slower: 0, oursTime: 0.9, deepgemmTime: 0.991 };
 * const md = formatH2hAb(ab, "tree", "head");
 * if (!md.includes("| dense 1×64×576×7168 | 1.100 | 1.210 | +10.0 % |")) throw new Error(md);
 * if (!md.includes("ours 0.900×, DeepGEMM 0.991×")) throw new Error(md);
 * ```
 */
export function formatH2hAb(ab: H2hAb, labelA = "A", labelB = "B"): string {
  const pct = (g: number) => `${g >= 1 ? "+" : "−"}${Math.abs(100 * (g - 1)).toFixed(1)} %`;
  const side = (v: number[], mean: number) => v.length === 1 ? f3(mean) : `${v.map(f3).join(" / ")} (${f3(mean)})`;
  return [
    `| shape | ${labelA} (ours / DeepGEMM) | ${labelB} | ${labelB} against ${labelA} |`,
    "|---|---|---|---|",
    ...ab.rows.map((r) => `| ${r.shape} | ${side(r.a, r.aMean)} | ${side(r.b, r.bMean)} | ${pct(r.gain)} |`),
    "",
    `${ab.rows.length} shapes: ${labelA} ${f3(ab.a)}×, ${labelB} ${f3(ab.b)}× DeepGEMM (geomean), ${labelB} ${
      pct(ab.gain)
    }; faster on ${ab.faster}, slower on ${ab.slower}.`,
    `Time, ${labelB}'s runs against ${labelA}'s (geomean of the ratios): ours ${f3(ab.oursTime)}×, DeepGEMM ${
      f3(ab.deepgemmTime)
    }×.`,
  ].join("\n") + "\n";
}

async function main(): Promise<number> {
  const usage = "usage: deno run -A bench/h2h_ab.ts A.json[,A2.json...] B.json[,B2.json...] [--label-a A] " +
    "[--label-b B] [--filter REGEX]";
  const { values, positionals } = benchArgs(usage, {
    allowPositionals: true,
    options: { "label-a": { type: "string" }, "label-b": { type: "string" }, filter: { type: "string" } },
  });
  if (positionals.length !== 2) {
    console.error(usage);
    return 2;
  }
  let filter: RegExp | undefined;
  try {
    filter = values.filter === undefined ? undefined : new RegExp(values.filter);
  } catch (e) {
    console.error(`--filter: ${e instanceof Error ? e.message : e}`);
    return 2;
  }
  const sides: H2hDoc[][] = [];
  for (const list of positionals) {
    const docs: H2hDoc[] = [];
    for (const path of list.split(",").filter((p) => p !== "")) {
      try {
        docs.push(parseH2h(await Deno.readTextFile(path)));
      } catch (e) {
        console.error(`${path}: ${e instanceof Error ? e.message : e}`);
        return 2;
      }
    }
    sides.push(docs);
  }
  let ab: H2hAb;
  try {
    ab = compareH2h(sides[0], sides[1], filter);
  } catch (e) {
    console.error(`${e instanceof Error ? e.message : e}`);
    return 2;
  }
  if (ab.rows.length === 0) {
    console.error("h2h A/B: no shape that every run of both sides timed" + (filter ? ` (--filter ${filter})` : ""));
    return 1;
  }
  console.log(formatH2hAb(ab, values["label-a"] ?? "A", values["label-b"] ?? "B"));
  return 0;
}

if (import.meta.main) Deno.exit(await main());
