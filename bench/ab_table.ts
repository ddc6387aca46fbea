/**
 * A/B of two runs of tests/gpu/bench.cpp on the same machine: per shape, the time of run A, of run B, and B's
 * speed-up (A µs / B µs), with geometric means over all shapes both ran and per family (dense M = 4096, dense
 * M ∈ {64, 128}, grouped). tests/gpu/run.sh writes run B as bench_cfg2.json when BENCH_CFG2 names a
 * GO_CUDA_FAST_CFG for every shape, and its `ab` step times builds in turn (ab/a.1.json, ab/b1.1.json, ...). A side
 * given as a comma-separated list of runs takes each shape's mean time over them; where both sides have several runs,
 * each shape also shows each side's range over its runs, and a shape counts as faster or slower only where the two
 * ranges do not overlap. With 3 runs a side, two builds that time alike still land apart on a shape 1 time in 10 (2 of
 * the 20 equally likely orders of 6 runs), about 2 shapes in 20. Unmodified copies of the tree, timed as variants are,
 * moved a shape's mean by up to 3.6 % in 3 runs, with no shape of 6 apart, and by 0.6 % over 19 shapes with 1 apart
 * (docs/performance-history.md, issue 26, fifteenth and sixteenth rounds): a mean alone does not tell a change from
 * the call's noise.
 *
 *     deno run -A bench/ab_table.ts bench_ours.json bench_cfg2.json [--label-a heuristic] [--label-b ahead=1]
 *     deno run -A bench/ab_table.ts ab/a.1.json,ab/a.2.json ab/b1.1.json,ab/b1.2.json
 *     deno run -A bench/ab_table.ts A.json B.json --only "dense 4096x4096x7168|contiguous"
 *
 * `--only` keeps the shapes whose label matches a regular expression (written with x or ×), so that the geomeans
 * cover a subset of what the runs timed, as run.sh's AB_FILTER names shapes.
 * @module
 */
import { benchArgs } from "./_args.ts";
import {
  type BenchFamily,
  benchFamily,
  geomean,
  type OursRow,
  parseBenchJson,
  rowKey,
  shapeLabel,
} from "./gpu_table.ts";

/** A row of one side: with several runs, `us` is their mean and `runs` each run's time. */
export type RunRow = OursRow & { runs?: number[] };

/** The fastest and slowest of a side's runs, where it has several. */
const span = (r: RunRow): [number, number] | undefined =>
  r.runs && r.runs.length > 1 ? [Math.min(...r.runs), Math.max(...r.runs)] : undefined;

/** One shape both runs timed. */
export interface AbRow {
  shape: string;
  family: BenchFamily;
  a: RunRow;
  b: RunRow;
  /** A µs / B µs: above 1 where B is faster. */
  speedup: number;
  /** With several runs on both sides: B's slowest run faster than A's fastest ("faster"), B's fastest slower than A's
   * slowest ("slower"), else "overlap". */
  apart?: "faster" | "slower" | "overlap";
}

/**
 * Joins two runs' rows by shape (rows without a time in either run are left out).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { abRows } from "./ab_table.ts";
 * const row = (us: number) => ({ kind: "dense", g: 1, m: 4096, n: 2112, k: 7168, us, config: "" });
 * const [r] = abRows([row(150)], [row(120)]);
 * assert.equal(r.speedup, 1.25);
 * assert.equal(r.family, "dense M = 4096");
 * ```
 */
export function abRows(a: RunRow[], b: RunRow[]): AbRow[] {
  const byKey = new Map(b.map((r) => [rowKey(r), r]));
  const out: AbRow[] = [];
  for (const ra of a) {
    if (ra.kind === "dense-sweep") continue;
    const rb = byKey.get(rowKey(ra));
    const usA = ra.us ?? 0, usB = rb?.us ?? 0;
    if (!rb || !(usA > 0) || !(usB > 0)) continue;
    const ab: AbRow = { shape: shapeLabel(ra), family: benchFamily(ra), a: ra, b: rb, speedup: usA / usB };
    const sa = span(ra), sb = span(rb);
    if (sa && sb) ab.apart = sb[1] < sa[0] ? "faster" : sb[0] > sa[1] ? "slower" : "overlap";
    out.push(ab);
  }
  return out;
}

/**
 * Several runs of the same build as one: each shape's row from the first run that timed it, with the mean of its
 * times over the runs that timed it and those times (`runs`; sweep rows and untimed rows are left as the first run has
 * them).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { meanRuns } from "./ab_table.ts";
 * const row = (us?: number) => ({ kind: "dense", g: 1, m: 4096, n: 576, k: 7168, us, config: "bm=256" });
 * const [r] = meanRuns([[row(40)], [row(44)], [row(undefined)]]);
 * assert.deepEqual([r.us, r.runs], [42, [40, 44]]);
 * ```
 */
export function meanRuns(runs: OursRow[][]): RunRow[] {
  const times = new Map<string, number[]>();
  const first = new Map<string, OursRow>();
  for (const run of runs) {
    for (const r of run) {
      const key = `${rowKey(r)}|${r.kind === "dense-sweep" ? r.config ?? "" : ""}`;
      if (!first.has(key)) first.set(key, r);
      if ((r.us ?? 0) > 0) times.set(key, [...(times.get(key) ?? []), r.us!]);
    }
  }
  return [...first].map(([key, r]) => {
    const ts = times.get(key);
    return ts ? { ...r, us: ts.reduce((x, y) => x + y, 0) / ts.length, runs: ts } : r;
  });
}

/**
 * The rows whose shape label matches `pattern` (a regular expression; the label's × read as x too, as run.sh's filters
 * write shapes).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { abRows, onlyShapes } from "./ab_table.ts";
 * const row = (m: number) => ({ kind: "dense", g: 1, m, n: 576, k: 7168, us: 10, config: "" });
 * const rows = abRows([row(64), row(4096)], [row(64), row(4096)]);
 * assert.deepEqual(onlyShapes(rows, "dense 4096x").map((r) => r.shape), ["dense 4096×576×7168"]);
 * ```
 */
export function onlyShapes(rows: AbRow[], pattern: string): AbRow[] {
  const re = new RegExp(pattern);
  return rows.filter((r) => re.test(r.shape) || re.test(r.shape.replaceAll("×", "x")));
}

/**
 * The markdown table and the geometric-mean lines.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { abRows, formatAb } from "./ab_table.ts";
 * const row = (m: number, us: number) => ({ kind: "dense", g: 1, m, n: 576, k: 7168, us, config: "bm=256" });
 * const text = formatAb(abRows([row(64, 20), row(4096, 44)], [row(64, 20), row(4096, 40)]), "A", "B");
 * assert.match(text, /B \/ A speed-up, geomean: \*\*1\.049×\*\* over 2 shapes/);
 * assert.match(text, /dense M = 4096: 1\.100× over 1/);
 * ```
 */
export function formatAb(rows: AbRow[], labelA: string, labelB: string): string {
  const f1 = (x: number) => x.toFixed(1);
  const spread = rows.some((r) => r.apart !== undefined);
  const range = (r: RunRow) => {
    const s = span(r);
    return s ? ` (${f1(s[0])}–${f1(s[1])})` : "";
  };
  const lines = [
    `| shape | ${labelA} µs | ${labelB} µs | speed-up |${
      spread ? " runs apart |" : ""
    } ${labelA} config | ${labelB} config |`,
    `|---|---|---|---|${spread ? "---|" : ""}---|---|`,
    ...rows.map((r) =>
      `| ${r.shape} | ${f1(r.a.us!)}${range(r.a)} | ${f1(r.b.us!)}${range(r.b)} | ${r.speedup.toFixed(3)}× |${
        spread ? ` ${r.apart === "overlap" || r.apart === undefined ? "" : r.apart} |` : ""
      } ${r.a.config ?? ""} | ${r.b.config ?? ""} |`
    ),
    "",
  ];
  if (rows.length === 0) return lines.join("\n") + "no shape ran in both\n";
  const families = (["dense M = 4096", "dense M ∈ {64, 128}", "grouped", "other"] as const)
    .map((fam) => rows.filter((r) => r.family === fam))
    .filter((rs) => rs.length > 0)
    .map((rs) => `${rs[0].family}: ${geomean(rs.map((r) => r.speedup)).toFixed(3)}× over ${rs.length}`);
  lines.push(
    `- ${labelB} / ${labelA} speed-up, geomean: **${
      geomean(rows.map((r) => r.speedup)).toFixed(3)
    }×** over ${rows.length} shapes; ${families.join("; ")}`,
  );
  if (spread) {
    const n = (side: string) => rows.filter((r) => r.apart === side).length;
    lines.push(
      `- runs apart (every run of one side faster than every run of the other): ${n("faster")} faster, ` +
        `${n("slower")} slower, ${n("overlap")} overlapping`,
    );
  } else {
    lines.push("- runs apart: not judged (one run a side)");
  }
  return lines.join("\n") + "\n";
}

if (import.meta.main) {
  const usage = "usage: deno run -A bench/ab_table.ts A.json B.json [--label-a A] [--label-b B] [--only REGEX]";
  const { values, positionals } = benchArgs(usage, {
    allowPositionals: true,
    options: {
      "label-a": { type: "string", default: "A" },
      "label-b": { type: "string", default: "B" },
      only: { type: "string" },
    },
  });
  if (positionals.length !== 2) {
    console.error(usage);
    Deno.exit(2);
  }
  const [a, b] = positionals.map((list) =>
    meanRuns(list.split(",").map((p) => parseBenchJson<OursRow>(Deno.readTextFileSync(p)).rows))
  );
  const runs = positionals.map((list) => list.split(",").length);
  const rows = abRows(a, b);
  console.log(formatAb(values.only ? onlyShapes(rows, values.only) : rows, values["label-a"]!, values["label-b"]!));
  if (runs.some((n) => n > 1)) console.log(`(means over ${runs[0]} run(s) of A and ${runs[1]} of B)`);
}
