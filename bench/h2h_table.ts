/**
 * Issue 26's comparison from tests/gpu/head_to_head.py: ours and DeepGEMM in one process, on the same operands,
 * timed in alternating rounds, DeepGEMM both as it launches by default and with its programmatic dependent launch on
 * (`deep_gemm.set_pdl(True)`, as ours launches) where the JSON has those times. Per shape: each side's median over the
 * rounds, the median of the per-round ratios against the faster DeepGEMM setting (DeepGEMM µs / our µs: above 1 where
 * ours is faster) with their lowest and highest, and whether the two kernels' bits were equal; per family the
 * geometric mean of the shapes' median ratios; and issue 26's targets, each met or not.
 *
 *     deno run -A bench/h2h_table.ts h2h.json [--write bench/RESULTS.md] [--out h2h.md]
 *
 * `--write` replaces the region between `<!-- h2h:begin -->` and `<!-- h2h:end -->` of the file.
 *
 * @module
 */
import { benchArgs } from "./_args.ts";
import {
  cell,
  DEEPGEMM_FAMILIES,
  type DeepGemmFamily,
  deepgemmFamily,
  f1,
  geomean,
  median,
  parseBenchJson,
  shapeLabel,
  writeRegion,
} from "./gpu_table.ts";

/** One shape of head_to_head.py's JSON. */
export interface H2hRow {
  kind: string;
  g: number;
  m: number;
  n: number;
  k: number;
  /** Our median µs per call, one per round. */
  ours_us?: number[];
  /** DeepGEMM's, one per round, as it launches by default (no programmatic dependent launch). */
  deepgemm_us?: number[];
  /** DeepGEMM's with `set_pdl(True)`, one per round (absent: no such setting, or an older script). */
  deepgemm_pdl_us?: number[];
  /** Which side each round timed first. */
  order?: string[];
  /** Whether D was bit for bit equal after one call of each on the first set, and how many elements differed. */
  bits_equal?: boolean;
  bits_differ?: number;
  elements?: number;
  /** Our kernel's configuration (go_ext_fast_last_config). */
  config?: string;
  sets?: number;
  /** Why the shape has no times. */
  error?: string;
}

/** head_to_head.py's document. */
export interface H2hDoc {
  tool?: string;
  device?: string;
  torch?: string;
  deepgemm?: string;
  date?: string;
  rounds?: number;
  samples?: number;
  complete?: boolean;
  rows: H2hRow[];
}

/** A shape's figures. */
export interface H2hStats {
  label: string;
  family: DeepGemmFamily | undefined;
  oursUs: number;
  /** DeepGEMM's median as it launches by default, and with its programmatic dependent launch where timed. */
  deepgemmUs: number;
  deepgemmPdlUs?: number;
  /** The DeepGEMM setting the ratio holds ours to: the one with the lower median (the default on a tie). */
  peer: "default" | "pdl";
  /** Median over the rounds of that setting's µs / our µs, and the lowest and highest. */
  ratio: number;
  /** The same median against DeepGEMM as it launches by default (equal to ratio where that is the peer). */
  defaultRatio: number;
  low: number;
  high: number;
  rounds: number;
}

/** Issue 26's targets on the per-shape median ratios. */
export const H2H_TARGETS = {
  /** Geometric mean per family: dense M = 4096, contiguous, masked. */
  family: 1.05,
  /** No shape of those families below this. */
  floor: 0.97,
  /** Geometric mean over dense M ∈ {64, 128}. */
  smallM: 1.15,
  /** dense 4096×7168×16384. */
  big: 1.05,
} as const;

/**
 * Parses head_to_head.py's JSON: rows as the bench JSONs (kind, g, m, n, k), and per row either an error or two
 * equally long lists of positive times.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseH2h } from "./h2h_table.ts";
 * const row = (times: string) => `{"rows":[{"kind":"dense","g":1,"m":64,"n":576,"k":7168,${times}}]}`;
 * const doc = parseH2h(row('"ours_us":[5,6],"deepgemm_us":[6,6]'));
 * assert.equal(doc.rows[0].ours_us?.length, 2);
 * assert.throws(() => parseH2h(row('"ours_us":[5]')), TypeError);
 * ```
 */
export function parseH2h(text: string): H2hDoc {
  const doc = parseBenchJson<H2hRow>(text) as unknown as H2hDoc;
  doc.rows.forEach((r, i) => {
    if (r.error !== undefined) return;
    const o = r.ours_us, d = r.deepgemm_us, p = r.deepgemm_pdl_us;
    const ok = (xs: unknown) => Array.isArray(xs) && xs.every((x) => typeof x === "number" && x > 0);
    if (!ok(o) || !ok(d) || o!.length !== d!.length || o!.length === 0) {
      throw new TypeError(`head-to-head JSON: row ${i} needs ours_us and deepgemm_us, equally long lists of times`);
    }
    if (p !== undefined && (!ok(p) || p.length !== o!.length)) {
      throw new TypeError(`head-to-head JSON: row ${i}'s deepgemm_pdl_us must be as long a list of times as ours_us`);
    }
  });
  return doc;
}

/**
 * head_to_head.py's JSON from a file, or exit 2 naming the file and the fault (unreadable, not JSON, a bad row).
 * @param path the file
 * @returns the parsed document
 */
export async function readH2h(path: string): Promise<H2hDoc> {
  try {
    return parseH2h(await Deno.readTextFile(path));
  } catch (e) {
    console.error(`${path}: ${e instanceof Error ? e.message : e}`);
    Deno.exit(2);
  }
}

/**
 * A timed shape's figures (undefined for a row with an error).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { h2hStats } from "./h2h_table.ts";
 * const shape = { kind: "dense", g: 1, m: 4096, n: 7168, k: 16384 };
 * const s = h2hStats({ ...shape, ours_us: [100, 110, 90], deepgemm_us: [105, 110, 108] })!;
 * assert.equal(s.oursUs, 100);
 * assert.equal(s.ratio, 1.05); // rounds: 1.05, 1.00, 1.20
 * assert.deepEqual([s.low, s.high, s.rounds, s.peer], [1, 1.2, 3, "default"]);
 * // with programmatic dependent launch DeepGEMM's median is lower: the ratio holds ours to that setting
 * const p = h2hStats({ ...shape, ours_us: [100, 110, 90], deepgemm_us: [105, 110, 108], deepgemm_pdl_us: [99, 99, 99] })!;
 * assert.deepEqual([p.peer, p.deepgemmPdlUs, p.ratio, p.defaultRatio], ["pdl", 99, 0.99, 1.05]);
 * ```
 */
export function h2hStats(r: H2hRow): H2hStats | undefined {
  if (r.error !== undefined || !r.ours_us || !r.deepgemm_us) return undefined;
  const pdlUs = r.deepgemm_pdl_us ? median(r.deepgemm_pdl_us) : undefined;
  const peer = pdlUs !== undefined && pdlUs < median(r.deepgemm_us) ? "pdl" : "default";
  const against = (times: number[]) => r.ours_us!.map((o, i) => times[i] / o);
  const defaults = against(r.deepgemm_us);
  const ratios = peer === "pdl" ? against(r.deepgemm_pdl_us!) : defaults;
  return {
    label: shapeLabel(r),
    family: deepgemmFamily(r),
    oursUs: median(r.ours_us),
    deepgemmUs: median(r.deepgemm_us),
    ...(pdlUs !== undefined ? { deepgemmPdlUs: pdlUs } : {}),
    peer,
    ratio: median(ratios),
    defaultRatio: median(defaults),
    low: Math.min(...ratios),
    high: Math.max(...ratios),
    rounds: ratios.length,
  };
}

/** One family's geometric mean of median ratios, its worst shape, and the target it is held to (if any). */
export interface H2hFamily {
  family: DeepGemmFamily | "all";
  count: number;
  geomean: number;
  /** The geometric mean against DeepGEMM as it launches by default. */
  defaultGeomean: number;
  worst?: H2hStats;
  target?: number;
  met?: boolean;
}

/**
 * Per family (then "all"): the geometric mean of the shapes' median ratios, the worst shape, and issue 26's target.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { h2hFamilies } from "./h2h_table.ts";
 * const s = (m: number, ratio: number) => ({ label: `${m}`, family: m === 4096 ? "dense M = 4096" as const : undefined,
 *   oursUs: 1, deepgemmUs: ratio, peer: "default" as const, ratio, defaultRatio: ratio, low: ratio, high: ratio,
 *   rounds: 2 });
 * const f = h2hFamilies([s(4096, 1.1), s(4096, 1.0), s(256, 2)]);
 * const big = f.find((x) => x.family === "dense M = 4096")!;
 * assert.equal(big.count, 2);
 * assert.equal(big.met, false); // √1.1 < 1.05
 * assert.equal(f.at(-1)!.count, 3);
 * ```
 */
export function h2hFamilies(stats: H2hStats[]): H2hFamily[] {
  const families: (DeepGemmFamily | "all")[] = [...DEEPGEMM_FAMILIES, "all"];
  return families.map((family) => {
    const fam = family === "all" ? stats : stats.filter((s) => s.family === family);
    const target = family === "all"
      ? undefined
      : family === "dense M ∈ {64, 128}"
      ? H2H_TARGETS.smallM
      : H2H_TARGETS.family;
    const g = geomean(fam.map((s) => s.ratio));
    const worst = fam.reduce<H2hStats | undefined>((w, s) => (!w || s.ratio < w.ratio ? s : w), undefined);
    return {
      family,
      count: fam.length,
      geomean: g,
      defaultGeomean: geomean(fam.map((s) => s.defaultRatio)),
      ...(worst ? { worst } : {}),
      ...(target !== undefined ? { target, met: fam.length > 0 && g >= target } : {}),
    };
  });
}

/** A number with three decimals, "—" where not finite. */
export const f3 = (x: number) => Number.isFinite(x) ? x.toFixed(3) : "—";
const times = (x: number) => Number.isFinite(x) ? `${f3(x)}×` : "—";

/**
 * The report: how it was measured, the per-shape table, the family table with the targets, and the lines on the
 * shape floor and 4096×7168×16384.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { formatH2h } from "./h2h_table.ts";
 * const md = formatH2h({ device: "H200", date: "2026-12-01", rounds: 2, rows: [
 *   { kind: "dense", g: 1, m: 4096, n: 7168, k: 16384, ours_us: [700, 720], deepgemm_us: [742, 742],
 *     bits_equal: true, elements: 1, config: "bm=256" },
 *   { kind: "dense", g: 1, m: 64, n: 576, k: 7168, ours_us: [8, 8], deepgemm_us: [10, 10], deepgemm_pdl_us: [9, 9] },
 *   { kind: "masked", g: 6, m: 20, n: 4096, k: 2048, error: "boom" } ] });
 * // rounds: 742 / 700 = 1.060, 742 / 720 = 1.031; median 1.045
 * assert.match(md, /\| dense 4096×7168×16384 \| 710\.0 \| 742\.0 \| — \| 1\.045× \(1\.031–1\.060\) \| equal \| bm=256/);
 * // timed both ways: held to the faster setting, in bold
 * assert.match(md, /\| dense 64×576×7168 \| 8\.0 \| 10\.0 \| \*\*9\.0\*\* \| 1\.125× /);
 * assert.match(md, /\| dense M ∈ \{64, 128\} \| 1 \| 1\.125× \| ≥ 1\.15: not met \| .* \| 1\.250× \|/);
 * assert.match(md, /DeepGEMM with PDL had the lower median on 1 of 1 shapes timed both ways/);
 * assert.match(md, /4096×7168×16384: \*\*1\.045×\*\* DeepGEMM \(target ≥ 1\.05: not met\)/);
 * assert.match(md, /\| m-grouped masked \| 0 \| — \| — \| — \|/);
 * assert.match(md, /\| masked 6×20×4096×2048 \| — \| — \| — \| boom \|/);
 * ```
 */
export function formatH2h(doc: H2hDoc): string {
  const stats: H2hStats[] = [];
  const lines = [
    "## Head-to-head: ours against DeepGEMM in one process (issue 26)",
    "",
    `${doc.date ?? "?"}, ${doc.device ?? "?"}, torch ${doc.torch ?? "?"}, DeepGEMM ${doc.deepgemm ?? "?"}. ` +
    "`tests/gpu/head_to_head.py`: our CUDA backend (C ABI through ctypes) and DeepGEMM in one process, on the same " +
    "operand memory (our allocations, seen by torch through `__cuda_array_interface__`; A's scales in the MN-major " +
    "layout both load as they are), timed in alternating rounds " +
    `(${doc.rounds ?? "?"} rounds, each bench_torch.py's \`timed\`: GPU time behind a sleep, median of ` +
    `${doc.samples ?? "?"} batches). DeepGEMM is timed as it launches by default and, where the run has it, with ` +
    "its programmatic dependent launch on (`deep_gemm.set_pdl(True)`, its default off; ours launches with it), " +
    "each a side of the rotating rounds. Ratio: DeepGEMM µs / our µs per round against the DeepGEMM setting with " +
    "the lower median (in bold where both ran), the median over the rounds and (in brackets) the lowest and " +
    "highest; above 1 where ours is faster. Bits: D after one call of each on the first set (masked: the rows below " +
    "masked_m). Generated by `bench/h2h_table.ts`." +
    (doc.complete === false ? " **Incomplete run** (the script stopped before its last shape)." : ""),
    "",
    "| shape | ours µs | DeepGEMM µs | DeepGEMM µs, PDL | ours / DeepGEMM | bits | our kernel config |",
    "|---|---|---|---|---|---|---|",
  ];
  for (const r of doc.rows) {
    const s = h2hStats(r);
    if (!s) {
      lines.push(`| ${shapeLabel(r)} | — | — | — | ${cell(r.error ?? "not timed")} | — | — |`);
      continue;
    }
    const both = s.deepgemmPdlUs !== undefined;
    const us = (x: number, peer: boolean) => both && peer ? `**${f1(x)}**` : f1(x);
    stats.push(s);
    const bits = r.bits_equal === undefined
      ? "—"
      : r.bits_equal
      ? "equal"
      : `**${r.bits_differ} of ${r.elements} differ**`;
    lines.push(
      `| ${s.label} | ${f1(s.oursUs)} | ${us(s.deepgemmUs, s.peer === "default")} | ` +
        `${both ? us(s.deepgemmPdlUs!, s.peer === "pdl") : "—"} | ${times(s.ratio)} (${f3(s.low)}–${f3(s.high)}) | ` +
        `${bits} | ${cell(r.config ?? "")} |`,
    );
  }
  const fams = h2hFamilies(stats);
  lines.push(
    "",
    "| family | shapes | ours / DeepGEMM (geomean of medians) | target | worst shape | against DeepGEMM's default launch |",
    "|---|---|---|---|---|---|",
  );
  for (const f of fams) {
    const target = f.target === undefined || f.count === 0
      ? "—"
      : `≥ ${f.target.toFixed(2)}: ${f.met ? "met" : "not met"}`;
    const worst = f.worst ? `${times(f.worst.ratio)} (${f.worst.label})` : "—";
    lines.push(
      `| ${f.family} | ${f.count} | ${times(f.geomean)} | ${target} | ${worst} | ${times(f.defaultGeomean)} |`,
    );
  }
  const timedPdl = stats.filter((s) => s.deepgemmPdlUs !== undefined);
  lines.push(
    "",
    timedPdl.length
      ? `- DeepGEMM with PDL had the lower median on ${timedPdl.filter((s) => s.peer === "pdl").length} of ` +
        `${timedPdl.length} shapes timed both ways`
      : "- DeepGEMM was timed only as it launches by default (no PDL times in this run)",
  );
  const held = stats.filter((s) => s.family !== undefined && s.family !== "dense M ∈ {64, 128}");
  const below = held.filter((s) => s.ratio < H2H_TARGETS.floor);
  lines.push(
    `- shapes of dense M = 4096, contiguous and masked below ${H2H_TARGETS.floor}×: ` +
      (below.length ? below.map((s) => `${s.label} ${times(s.ratio)}`).join(", ") : "none") +
      ` (target: none; ${below.length ? "not met" : held.length ? "met" : "no shapes"})`,
  );
  const big = stats.find((s) => s.label === "dense 4096×7168×16384");
  if (big) {
    lines.push(
      `- 4096×7168×16384: **${times(big.ratio)}** DeepGEMM (target ≥ ${H2H_TARGETS.big}: ` +
        `${big.ratio >= H2H_TARGETS.big ? "met" : "not met"})`,
    );
  }
  const differ = doc.rows.filter((r) => r.bits_equal === false).length;
  lines.push(`- bits: ${differ ? `**${differ} shapes differ**` : "equal on every shape timed"}`);
  return lines.join("\n") + "\n";
}

async function main() {
  const usage = "usage: deno run -A bench/h2h_table.ts h2h.json [--write bench/RESULTS.md] [--out h2h.md]";
  const { values, positionals } = benchArgs(usage, {
    options: { write: { type: "string" }, out: { type: "string" } },
    allowPositionals: true,
  });
  if (positionals.length !== 1) {
    console.error(usage);
    Deno.exit(2);
  }
  const md = formatH2h(await readH2h(positionals[0]));
  console.log(md);
  if (values.out) await Deno.writeTextFile(values.out, md);
  if (values.write) await writeRegion(values.write, md, "<!-- h2h:begin -->", "<!-- h2h:end -->");
}

if (import.meta.main) await main();
