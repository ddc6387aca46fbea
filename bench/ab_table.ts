/**
 * A/B of two runs of tests/gpu/bench.cpp on the same machine: per shape, the time of run A, of run B, and B's
 * speed-up (A µs / B µs), with geometric means over all shapes both ran and per family (dense M = 4096, dense
 * M ∈ {64, 128}, grouped). tests/gpu/run.sh writes run B as bench_cfg2.json when BENCH_CFG2 names a
 * GO_CUDA_FAST_CFG for every shape, and its `ab` step times builds in turn (ab/a.1.json, ab/b1.1.json, ...). A side
 * given as a comma-separated list of runs takes each shape's mean time over them.
 *
 *     deno run -A bench/ab_table.ts bench_ours.json bench_cfg2.json [--label-a heuristic] [--label-b ahead=1]
 *     deno run -A bench/ab_table.ts ab/a.1.json,ab/a.2.json ab/b1.1.json,ab/b1.2.json
 *
 * @module
 */
import { parseArgs } from "node:util";
import {
  type BenchFamily,
  benchFamily,
  geomean,
  type OursRow,
  parseBenchJson,
  rowKey,
  shapeLabel,
} from "./gpu_table.ts";

/** One shape both runs timed. */
export interface AbRow {
  shape: string;
  family: BenchFamily;
  a: OursRow;
  b: OursRow;
  /** A µs / B µs: above 1 where B is faster. */
  speedup: number;
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
export function abRows(a: OursRow[], b: OursRow[]): AbRow[] {
  const byKey = new Map(b.map((r) => [rowKey(r), r]));
  const out: AbRow[] = [];
  for (const ra of a) {
    if (ra.kind === "dense-sweep") continue;
    const rb = byKey.get(rowKey(ra));
    const usA = ra.us ?? 0, usB = rb?.us ?? 0;
    if (!rb || !(usA > 0) || !(usB > 0)) continue;
    out.push({ shape: shapeLabel(ra), family: benchFamily(ra), a: ra, b: rb, speedup: usA / usB });
  }
  return out;
}

/**
 * Several runs of the same build as one: each shape's row from the first run that timed it, with the mean of its
 * times over the runs that timed it (sweep rows and untimed rows are left as the first run has them).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { meanRuns } from "./ab_table.ts";
 * const row = (us?: number) => ({ kind: "dense", g: 1, m: 4096, n: 576, k: 7168, us, config: "bm=256" });
 * assert.equal(meanRuns([[row(40)], [row(44)], [row(undefined)]])[0].us, 42);
 * ```
 */
export function meanRuns(runs: OursRow[][]): OursRow[] {
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
    return ts ? { ...r, us: ts.reduce((x, y) => x + y, 0) / ts.length } : r;
  });
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
  const lines = [
    `| shape | ${labelA} µs | ${labelB} µs | speed-up | ${labelA} config | ${labelB} config |`,
    "|---|---|---|---|---|---|",
    ...rows.map((r) =>
      `| ${r.shape} | ${f1(r.a.us!)} | ${f1(r.b.us!)} | ${r.speedup.toFixed(3)}× | ${r.a.config ?? ""} | ${
        r.b.config ?? ""
      } |`
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
  return lines.join("\n") + "\n";
}

if (import.meta.main) {
  const { values, positionals } = parseArgs({
    args: Deno.args,
    allowPositionals: true,
    options: { "label-a": { type: "string", default: "A" }, "label-b": { type: "string", default: "B" } },
  });
  if (positionals.length !== 2) {
    console.error("usage: deno run -A bench/ab_table.ts A.json B.json [--label-a A] [--label-b B]");
    Deno.exit(2);
  }
  const [a, b] = positionals.map((list) =>
    meanRuns(list.split(",").map((p) => parseBenchJson<OursRow>(Deno.readTextFileSync(p)).rows))
  );
  const runs = positionals.map((list) => list.split(",").length);
  console.log(formatAb(abRows(a, b), values["label-a"]!, values["label-b"]!));
  if (runs.some((n) => n > 1)) console.log(`(means over ${runs[0]} run(s) of A and ${runs[1]} of B)`);
}
