/**
 * Two kernels' Nsight Compute profiles side by side: raw pages (tests/gpu/run.sh's profile step writes one per report
 * as `<tag>.raw.csv`: ours `p1.raw.csv`, DeepGEMM's `dg_<shape>.raw.csv`) or the CSV of a metrics run (`ncu --metrics
 * ... --csv`, one row per metric among the profiled program's own lines: the ab step's AB_PROFILE_METRICS and the
 * profile step's PROFILE_METRICS write `<tag>.metrics.csv`). A headline set of metrics (time, clock, tensor pipe,
 * instructions, TMA copies, L2 and DRAM) where both have them, then every metric whose name holds one of the `--grep`
 * substrings and whose values differ by more than `--factor` (default 1.16), largest difference first. Per-unit
 * minima and maxima and `.sum.pct` duplicates are left out of the list.
 *
 *     deno run -A bench/ncu_diff.ts ncu/p1.raw.csv ncu/dg_2048x8448x32768.raw.csv [--factor 1.16]
 *       [--grep stall,tensor,tma] [--top 60]
 *
 * @module
 */
import { benchArgs } from "./_args.ts";
import { csvFields } from "./sass_stalls.ts";

/** One metric of a raw page: its value (a number where the page's text is one) and unit. */
export interface RawMetric {
  value: number | undefined;
  text: string;
  unit: string;
}

/**
 * Parses `ncu --page raw --csv`: a header line starting with "ID", a units line, and one line per profiled launch.
 * Reads the first launch; throws a TypeError where there is no header or no launch.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseRawPage } from "./ncu_diff.ts";
 * const page = ['"ID","gpu__time_duration.sum","Kernel Name"', '"","us",""', '"0","1,234.5","k"'].join("\n");
 * const m = parseRawPage(page);
 * assert.equal(m.get("gpu__time_duration.sum")!.value, 1234.5);
 * assert.equal(m.get("gpu__time_duration.sum")!.unit, "us");
 * assert.equal(m.get("Kernel Name")!.value, undefined);
 * ```
 */
export function parseRawPage(text: string): Map<string, RawMetric> {
  const lines = text.split("\n").filter((l) => l.trim() !== "");
  const at = lines.findIndex((l) => l.startsWith('"ID"'));
  if (at < 0) throw new TypeError('raw page CSV: no header line starting with "ID"');
  if (lines.length < at + 3) throw new TypeError("raw page CSV: no profiled launch after the header and units lines");
  const names = csvFields(lines[at]), units = csvFields(lines[at + 1]), values = csvFields(lines[at + 2]);
  const out = new Map<string, RawMetric>();
  names.forEach((name, i) => {
    const t = (values[i] ?? "").trim();
    const x = Number(t.replaceAll(",", ""));
    out.set(name, { value: t !== "" && Number.isFinite(x) ? x : undefined, text: t, unit: units[i] ?? "" });
  });
  return out;
}

/**
 * Parses the CSV of a metrics run (`ncu --metrics ... --csv`): a header line starting with "ID" that names the columns
 * "Metric Name", "Metric Unit" and "Metric Value", then one line per launch and metric, among ncu's notes and the
 * profiled program's own lines. Reads the first launch; throws a TypeError where there is no such header or no row.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseMetricRows } from "./ncu_diff.ts";
 * const csv = ['==PROF== Connected', '"ID","Kernel Name","Metric Name","Metric Unit","Metric Value"',
 *   'dense 4096x4096x7168 called once', '"0","k","sm__cycles_active.avg","cycle","256,909.36"'].join("\n");
 * assert.equal(parseMetricRows(csv).get("sm__cycles_active.avg")!.value, 256909.36);
 * ```
 */
export function parseMetricRows(text: string): Map<string, RawMetric> {
  const lines = text.split("\n");
  const at = lines.findIndex(isMetricsHeader);
  if (at < 0) throw new TypeError('metrics CSV: no header line starting with "ID" that names "Metric Name"');
  const header = csvFields(lines[at]);
  const [id, name, unit, value] = ["ID", "Metric Name", "Metric Unit", "Metric Value"].map((c) => header.indexOf(c));
  if ([unit, value].includes(-1)) throw new TypeError('metrics CSV: no "Metric Unit" or "Metric Value" column');
  const rows = lines.slice(at + 1).filter((l) => /^"\d/.test(l)).map(csvFields);
  if (rows.length === 0) throw new TypeError("metrics CSV: no metric rows after the header");
  const out = new Map<string, RawMetric>();
  for (const r of rows.filter((r) => r[id] === rows[0][id])) {
    const t = (r[value] ?? "").trim(), x = Number(t.replaceAll(",", ""));
    out.set(r[name], { value: t !== "" && Number.isFinite(x) ? x : undefined, text: t, unit: r[unit] ?? "" });
  }
  return out;
}

/**
 * Either form of a profile: a metrics run's CSV where its header names "Metric Name", else a raw page.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseProfile } from "./ncu_diff.ts";
 * const page = ['"ID","gpu__time_duration.sum"', '"","us"', '"0","177.76"'].join("\n");
 * assert.equal(parseProfile(page).get("gpu__time_duration.sum")!.value, 177.76);
 * ```
 */
export function parseProfile(text: string): Map<string, RawMetric> {
  return text.split("\n").some(isMetricsHeader) ? parseMetricRows(text) : parseRawPage(text);
}

/** Whether a line is a metrics run's CSV header: it starts with "ID" and names "Metric Name". */
function isMetricsHeader(line: string): boolean {
  return line.startsWith('"ID"') && line.includes('"Metric Name"');
}

/** The headline metrics, in this order, where both pages have them. */
export const HEADLINE = [
  "gpu__time_duration.sum",
  "sm__cycles_elapsed.avg.per_second",
  "sm__cycles_active.avg",
  "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active",
  // The tensor pipe's busy cycles a SM: the same work gives the same count.
  "TPC.TriageCompute.sm__pipe_tensor_op_hmma_cycles_active_realtime.avg",
  "smsp__inst_executed.sum",
  "smsp__inst_executed_op_tma_ld.sum",
  "smsp__inst_executed_op_tma_st.sum",
  "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
  "lts__t_sector_hit_rate.pct",
  "dram__bytes_read.sum",
  "sm__warps_active.avg.pct_of_peak_sustained_active",
];

/** One compared metric: ours, theirs, the unit, and ours / theirs. */
export type MetricPair = { name: string; ours: number; theirs: number; unit: string; ratio: number };

/**
 * The headline metrics, then the metrics whose names hold one of `grep` and whose values differ by more than
 * `factor` either way, largest difference first (at most `top`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { diffRawPages } from "./ncu_diff.ts";
 * const m = (v: number) => ({ value: v, text: String(v), unit: "inst" });
 * const a = new Map([["smsp__inst_executed_op_tma_ld.sum", m(3)], ["x_stall_gmma", m(26)], ["x_stall_wait", m(10)]]);
 * const b = new Map([["smsp__inst_executed_op_tma_ld.sum", m(2)], ["x_stall_gmma", m(14)], ["x_stall_wait", m(10.5)]]);
 * const d = diffRawPages(a, b, { grep: ["stall"] });
 * assert.deepEqual(d.headline.map((p) => p.ratio), [1.5]);
 * assert.deepEqual(d.differing.map((p) => p.name), ["x_stall_gmma"]);
 * ```
 */
export function diffRawPages(
  ours: Map<string, RawMetric>,
  theirs: Map<string, RawMetric>,
  options: { factor?: number; grep?: string[]; top?: number } = {},
): { headline: MetricPair[]; differing: MetricPair[] } {
  const factor = options.factor ?? 1.16, grep = options.grep ?? ["stall", "tensor", "tma", "inst_executed", "pipe"];
  const pair = (name: string): MetricPair | undefined => {
    const a = ours.get(name)?.value, b = theirs.get(name)?.value;
    if (a === undefined || b === undefined) return undefined;
    return { name, ours: a, theirs: b, unit: ours.get(name)!.unit, ratio: b === 0 ? (a === 0 ? 1 : Infinity) : a / b };
  };
  const headline = HEADLINE.flatMap((n) => pair(n) ?? []);
  const spread = (p: MetricPair) => Math.abs(Math.log(Math.max(p.ratio, 1e-12)));
  const differing = [...ours.keys()]
    .filter((n) => grep.some((g) => n.includes(g)) && !/\.(min|max)\b|\.sum\.pct/.test(n))
    .flatMap((n) => pair(n) ?? [])
    .filter((p) => Math.max(Math.abs(p.ours), Math.abs(p.theirs)) > 1e-9 && spread(p) > Math.log(factor))
    .sort((x, y) => spread(y) - spread(x))
    .slice(0, options.top ?? 60);
  return { headline, differing };
}

const num = (x: number) =>
  Math.abs(x) >= 1e5 ? x.toExponential(3) : Number.isInteger(x) ? String(x) : x.toFixed(Math.abs(x) < 1 ? 4 : 2);
const ratioText = (r: number) => Number.isFinite(r) ? `${r.toFixed(3)}×` : "∞";

/** The comparison as two markdown tables. */
export function formatDiff(d: { headline: MetricPair[]; differing: MetricPair[] }, factor = 1.16): string {
  const rows = (ps: MetricPair[]) =>
    ps.map((p) => `| ${p.name} | ${num(p.ours)} | ${num(p.theirs)} | ${p.unit} | ${ratioText(p.ratio)} |`);
  return [
    "| headline | ours | theirs | unit | ours / theirs |",
    "|---|---|---|---|---|",
    ...rows(d.headline),
    "",
    `| differing by more than ${factor}× | ours | theirs | unit | ours / theirs |`,
    "|---|---|---|---|---|",
    ...rows(d.differing),
  ].join("\n") + "\n";
}

async function main() {
  const usage =
    "usage: deno run -A bench/ncu_diff.ts OURS.{raw,metrics}.csv THEIRS.{raw,metrics}.csv [--factor F > 1] " +
    "[--grep SUBSTR,...] [--top N]";
  const { values, positionals } = benchArgs(usage, {
    options: { factor: { type: "string" }, grep: { type: "string" }, top: { type: "string" } },
    allowPositionals: true,
  });
  const factor = values.factor === undefined ? 1.16 : Number(values.factor);
  const top = values.top === undefined ? 60 : Number(values.top);
  if (positionals.length !== 2 || !(factor > 1) || !Number.isInteger(top) || top < 0) {
    console.error(usage);
    Deno.exit(2);
  }
  const pages: Map<string, RawMetric>[] = [];
  for (const file of positionals) {
    try {
      pages.push(parseProfile(await Deno.readTextFile(file)));
    } catch (e) {
      console.error(`${file}: ${e instanceof Error ? e.message : e}`);
      Deno.exit(2);
    }
  }
  const grep = values.grep?.split(",").filter((g) => g !== "");
  console.log(formatDiff(diffRawPages(pages[0], pages[1], { factor, grep, top }), factor));
}

if (import.meta.main) await main();
