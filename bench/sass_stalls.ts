/**
 * Where a kernel's warps stalled, from the SASS page of an Nsight Compute report (tests/gpu/run.sh's profile step
 * writes one per report as `<tag>.sass.csv`, ours and DeepGEMM's): the kernel's size (instructions on the page,
 * executed at all, executed at least `--hot` times), each stall reason's share of the samples, optionally the opcode
 * and reason shares of the instructions executed a given number of times, and how many instructions that band holds
 * (`--executions LO-HI`: at 4096×32768×512 with 256 × 128 tiles, 4096 tiles × 8 math warps puts the math warps'
 * per-tile code at 32768), the instructions that hold the most samples, and optionally every instruction whose text
 * matches `--grep` in page order, with its executions and samples (`--grep TRYWAIT`: each barrier wait, the
 * out-of-line retry paths among them, executed once per retry). With `--sequence`, the band's instructions in page
 * order as runs of one opcode (`FFMA×64 (875)`: 64 in a row, 875 samples), so that two kernels' loops can be read
 * side by side (at 2048×8448×32768, `--executions 135168-135168 --sequence`: ours and DeepGEMM's K loop per math warp
 * and K block). With `--wavefronts`, where the shared-memory wavefronts go: per instruction kind (the mnemonic with its
 * modifiers, `QGMMA.64x128x32.F32.E4M3.E4M3`), executions, wavefronts, wavefronts per execution and the excess over the
 * page's ideal (bank conflicts); the page must carry the SourceCounters section's wavefront columns. At 4096×7168×16384
 * it showed ours' and DeepGEMM's wgmmas reading 12 wavefronts each, with no excess anywhere (docs/performance-history.md,
 * fifteenth round). With `--reason NAME`, that stall reason's samples per opcode over the whole page, most first
 * (`--reason math`: at 4096×7168×2048 the staging moved into the K loop took the zero-chunk `FSEL`s' math-pipe
 * throttle samples from 23 to 85, docs/performance-history.md, thirty-seventh round). With `--bands N`, the N execution
 * counts that hold the most samples, each a band: its instructions, samples and leading reasons. Code that each warp of
 * a CTA runs once has the count CTAs × warps (the producer's elected thread: CTAs), so a prologue or an epilogue shows
 * as its own band beside the K loop's without knowing the grid beforehand (for the prologue's stall samples, ours
 * against DeepGEMM's, docs/performance-history.md, fortieth round; a warp waiting for its instruction to be fetched,
 * an instruction-cache miss among the causes, reads `no_instruction`: Nsight Compute's Kernel Profiling Guide, warp
 * stall reasons).
 *
 *     deno run -A bench/sass_stalls.ts ncu/p1.sass.csv [--hot 16000] [--executions 32000-34000] [--top 20]
 *       [--grep REGEX] [--sequence] [--wavefronts] [--reason math] [--bands 12]
 *
 * @module
 */
import { benchArgs } from "./_args.ts";

/** One instruction of the SASS page. */
export interface SassInstruction {
  address: string;
  /** The instruction as disassembled (predicate, opcode, operands). */
  source: string;
  /** Its opcode without predicate and modifiers (`BRA`, `WARPGROUP`, `FFMA`). */
  opcode: string;
  /** Its opcode with its modifiers, without predicate (`QGMMA.64x128x32.F32.E4M3.E4M3`, `LDS.U.128`). */
  mnemonic?: string;
  /** Shared-memory wavefronts it moved, and the page's ideal count for its accesses (absent without the columns). */
  wavefronts?: number;
  wavefrontsIdeal?: number;
  /** Warp stall samples at it, all reasons. */
  samples: number;
  /** Warp-level executions. */
  executed: number;
  /** Samples per stall reason (`barrier`, `long_sb`, ...; the page's `stall_*` columns, issued or not). */
  reasons: Record<string, number>;
}

/** The fields of one CSV line (double-quoted fields may hold commas; `""` is a quote). */
export function csvFields(line: string): string[] {
  const out: string[] = [];
  let field = "", quoted = false;
  for (let i = 0; i < line.length; ++i) {
    const ch = line[i];
    if (quoted) {
      if (ch === '"' && line[i + 1] === '"') field += '"', ++i;
      else if (ch === '"') quoted = false;
      else field += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ",") out.push(field), field = "";
    else field += ch;
  }
  out.push(field);
  return out;
}

const count = (s: string | undefined) => {
  const x = Number((s ?? "").replaceAll(",", ""));
  return Number.isFinite(x) ? x : 0;
};

/**
 * Parses `ncu --page source --print-source sass --csv`: a kernel-name line, the header, one line per instruction.
 * Throws a TypeError naming the missing column where the header is not the SASS page's.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseSassCsv } from "./sass_stalls.ts";
 * const csv = [
 *   '"Kernel Name","k",',
 *   '"Address","Source","Warp Stall Sampling (All Samples)","Instructions Executed","stall_long_sb","stall_long_sb (Not Issued)"',
 *   '"0x10","  @!P0  BRA 0x50","7","4,096","6","6"',
 * ].join("\n");
 * const [i] = parseSassCsv(csv);
 * assert.deepEqual([i.opcode, i.samples, i.executed, i.reasons.long_sb], ["BRA", 7, 4096, 6]);
 * ```
 */
export function parseSassCsv(text: string): SassInstruction[] {
  const lines = text.split("\n").filter((l) => l.trim() !== "");
  const at = lines.findIndex((l) => l.startsWith('"Address"'));
  if (at < 0) throw new TypeError('SASS page CSV: no header line starting with "Address"');
  const header = csvFields(lines[at]);
  const column = (name: string) => {
    const c = header.indexOf(name);
    if (c < 0) throw new TypeError(`SASS page CSV: no column "${name}"`);
    return c;
  };
  const address = column("Address"), source = column("Source");
  const samples = column("Warp Stall Sampling (All Samples)"), executed = column("Instructions Executed");
  const reasons = header.flatMap((h, c) =>
    h.startsWith("stall_") && !h.includes("(Not Issued)") ? [[h.slice(6), c]] : []
  );
  const wavefronts = header.indexOf("L1 Wavefronts Shared"), ideal = header.indexOf("L1 Wavefronts Shared Ideal");
  return lines.slice(at + 1).map((line) => {
    const f = csvFields(line);
    const tokens = (f[source] ?? "").trim().split(/\s+/);
    const op = tokens[0]?.startsWith("@") ? tokens[1] ?? "" : tokens[0] ?? "";
    return {
      address: f[address],
      source: (f[source] ?? "").trim(),
      opcode: op.split(".")[0],
      mnemonic: op,
      samples: count(f[samples]),
      executed: count(f[executed]),
      reasons: Object.fromEntries(reasons.map(([name, c]) => [name, count(f[c as number])])),
      ...(wavefronts >= 0 && ideal >= 0 ? { wavefronts: count(f[wavefronts]), wavefrontsIdeal: count(f[ideal]) } : {}),
    };
  });
}

/** A kernel's size and stall figures. */
export interface SassSummary {
  instructions: number;
  executed: number;
  hot: number;
  hotThreshold: number;
  samples: number;
  /** Reasons by share of all samples, largest first. */
  reasons: [string, number][];
  /** With `executions`: how many instructions were executed that many times, their samples, and the samples' shares
   * by opcode and reason, largest first. */
  band?: {
    low: number;
    high: number;
    instructions: number;
    samples: number;
    shares: [string, number][];
    /** With `sequence`: the band in page order as runs of one opcode: [opcode, instructions, samples]. */
    sequence?: [string, number, number][];
  };
  /** The instructions with the most samples, most first. */
  top: SassInstruction[];
  /** With `grep`: the instructions whose text matches, in page order. */
  matches?: SassInstruction[];
  /** With `wavefronts`: shared-memory wavefronts per mnemonic, most first, and the page's totals. */
  shared?: { total: number; ideal: number; kinds: SharedKind[] };
  /** With `reason`: that reason's samples in all, and per opcode, most first (opcodes with none left out). */
  byOpcode?: { reason: string; samples: number; opcodes: [string, number][] };
  /** With `bands`: the execution counts with the most samples, most first (executionBands). */
  bands?: ExecutionBand[];
}

/** The instructions executed one number of times: their count, samples and the samples' reasons, largest first. */
export interface ExecutionBand {
  executed: number;
  instructions: number;
  samples: number;
  reasons: [string, number][];
}

/** The shared-memory wavefronts of one instruction kind (mnemonic) over a page. */
export interface SharedKind {
  mnemonic: string;
  executed: number;
  wavefronts: number;
  ideal: number;
}

const shares = (m: Map<string, number>, total: number): [string, number][] =>
  [...m].map(([k, v]): [string, number] => [k, total > 0 ? v / total : 0]).sort((a, b) => b[1] - a[1]);

const add = (m: Map<string, number>, k: string, v: number) => v && m.set(k, (m.get(k) ?? 0) + v);

/**
 * The figures of one page.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { summarizeSass } from "./sass_stalls.ts";
 * const i = (opcode: string, executed: number, barrier: number, long_sb: number) =>
 *   ({ address: "", source: opcode, opcode, executed, samples: barrier + long_sb, reasons: { barrier, long_sb } });
 * const s = summarizeSass([i("WARPGROUP", 100, 6, 0), i("BRA", 100, 0, 2), i("EXIT", 0, 0, 0), i("UCGABAR_WAIT", 1, 2, 0)],
 *   { hot: 50, executions: [100, 100], top: 1 });
 * assert.deepEqual([s.instructions, s.executed, s.hot, s.samples], [4, 3, 2, 10]);
 * assert.deepEqual(s.reasons, [["barrier", 0.8], ["long_sb", 0.2]]);
 * assert.deepEqual(s.band!.shares, [["WARPGROUP barrier", 0.75], ["BRA long_sb", 0.25]]);
 * assert.equal(s.top[0].opcode, "WARPGROUP");
 * ```
 */
export function summarizeSass(
  rows: SassInstruction[],
  options: {
    hot?: number;
    executions?: [number, number];
    top?: number;
    grep?: RegExp;
    sequence?: boolean;
    wavefronts?: boolean;
    reason?: string;
    bands?: number;
  } = {},
): SassSummary {
  const hotThreshold = options.hot ?? 16000;
  const samples = rows.reduce((s, r) => s + r.samples, 0);
  const byReason = new Map<string, number>();
  for (const r of rows) for (const [k, v] of Object.entries(r.reasons)) add(byReason, k, v);
  let band: SassSummary["band"];
  if (options.executions) {
    const [low, high] = options.executions;
    const inBand = rows.filter((r) => r.executed >= low && r.executed <= high);
    const byOp = new Map<string, number>();
    for (const r of inBand) for (const [k, v] of Object.entries(r.reasons)) add(byOp, `${r.opcode} ${k}`, v);
    const total = inBand.reduce((s, r) => s + r.samples, 0);
    band = { low, high, instructions: inBand.length, samples: total, shares: shares(byOp, total) };
    if (options.sequence) band.sequence = opcodeRuns(inBand);
  }
  return {
    instructions: rows.length,
    executed: rows.filter((r) => r.executed > 0).length,
    hot: rows.filter((r) => r.executed >= hotThreshold).length,
    hotThreshold,
    samples,
    reasons: shares(byReason, samples),
    ...(band ? { band } : {}),
    top: [...rows].sort((a, b) => b.samples - a.samples).slice(0, options.top ?? 20),
    ...(options.grep ? { matches: rows.filter((r) => options.grep!.test(r.source)) } : {}),
    ...(options.wavefronts ? { shared: sharedWavefronts(rows) } : {}),
    ...(options.reason !== undefined ? { byOpcode: reasonByOpcode(rows, options.reason) } : {}),
    ...(options.bands !== undefined ? { bands: executionBands(rows, options.bands) } : {}),
  };
}

/**
 * The `count` execution counts whose instructions hold the most samples, most first (ties: fewer executions first);
 * instructions never executed are left out. Each band's reasons are shares of its own samples.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { executionBands } from "./sass_stalls.ts";
 * const i = (executed: number, no_instruction: number, wait: number) => ({ address: "", source: "X", opcode: "X",
 *   executed, samples: no_instruction + wait, reasons: { no_instruction, wait } });
 * const b = executionBands([i(128, 6, 2), i(1024, 1, 1), i(128, 2, 0), i(0, 0, 0), i(57344, 30, 10)], 2);
 * assert.deepEqual(b.map((x) => [x.executed, x.instructions, x.samples]), [[57344, 1, 40], [128, 2, 10]]);
 * assert.deepEqual(b[1].reasons, [["no_instruction", 0.8], ["wait", 0.2]]);
 * ```
 */
export function executionBands(rows: SassInstruction[], count: number): ExecutionBand[] {
  const bands = new Map<number, { rows: SassInstruction[]; samples: number }>();
  for (const r of rows) {
    if (r.executed === 0) continue;
    const b = bands.get(r.executed) ?? { rows: [], samples: 0 };
    b.rows.push(r), b.samples += r.samples;
    bands.set(r.executed, b);
  }
  return [...bands].sort((a, b) => b[1].samples - a[1].samples || a[0] - b[0]).slice(0, count).map(([executed, b]) => {
    const byReason = new Map<string, number>();
    for (const r of b.rows) for (const [k, v] of Object.entries(r.reasons)) add(byReason, k, v);
    return { executed, instructions: b.rows.length, samples: b.samples, reasons: shares(byReason, b.samples) };
  });
}

/**
 * One stall reason's samples per opcode, most first (ties in page order), opcodes with none left out. Throws a
 * TypeError naming the page's reasons where `reason` is not one of them.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { reasonByOpcode } from "./sass_stalls.ts";
 * const i = (opcode: string, math: number, wait: number) =>
 *   ({ address: "", source: opcode, opcode, executed: 1, samples: math + wait, reasons: { math, wait } });
 * const r = reasonByOpcode([i("FSEL", 20, 1), i("CS2R", 7, 0), i("FSEL", 3, 0), i("FFMA", 0, 9)], "math");
 * assert.deepEqual([r.samples, r.opcodes], [30, [["FSEL", 23], ["CS2R", 7]]]);
 * assert.throws(() => reasonByOpcode([i("FSEL", 1, 0)], "gmma"), /no stall reason "gmma" \(the page's: math, wait\)/);
 * ```
 */
export function reasonByOpcode(
  rows: SassInstruction[],
  reason: string,
): NonNullable<SassSummary["byOpcode"]> {
  const names = [...new Set(rows.flatMap((r) => Object.keys(r.reasons)))];
  if (!names.includes(reason)) {
    throw new TypeError(`SASS page CSV: no stall reason "${reason}" (the page's: ${names.join(", ")})`);
  }
  const byOp = new Map<string, number>();
  let samples = 0;
  for (const r of rows) {
    const v = r.reasons[reason] ?? 0;
    samples += v;
    add(byOp, r.opcode, v);
  }
  return { reason, samples, opcodes: [...byOp].sort((a, b) => b[1] - a[1]) };
}

/**
 * Shared-memory wavefronts per instruction kind (mnemonic), most first; instructions that moved none are left out.
 * Throws a TypeError where the page has no wavefront columns (a report without the SourceCounters section).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { sharedWavefronts } from "./sass_stalls.ts";
 * const i = (mnemonic: string, executed: number, wavefronts: number, wavefrontsIdeal: number) =>
 *   ({ address: "", source: mnemonic, opcode: mnemonic.split(".")[0], mnemonic, executed, samples: 0, reasons: {},
 *      wavefronts, wavefrontsIdeal });
 * const s = sharedWavefronts([i("LDS", 10, 20, 10), i("QGMMA.64x128x32", 4, 48, 48), i("LDS", 5, 5, 5), i("FFMA", 9, 0, 0)]);
 * assert.deepEqual([s.total, s.ideal], [73, 63]);
 * assert.deepEqual(s.kinds.map((k) => [k.mnemonic, k.executed, k.wavefronts, k.ideal]),
 *   [["QGMMA.64x128x32", 4, 48, 48], ["LDS", 15, 25, 15]]);
 * ```
 */
export function sharedWavefronts(rows: SassInstruction[]): NonNullable<SassSummary["shared"]> {
  if (rows.length > 0 && rows.every((r) => r.wavefronts === undefined)) {
    throw new TypeError('SASS page CSV: no column "L1 Wavefronts Shared" (profile with the SourceCounters section)');
  }
  const kinds = new Map<string, SharedKind>();
  let total = 0, ideal = 0;
  for (const r of rows) {
    const w = r.wavefronts ?? 0, i = r.wavefrontsIdeal ?? 0;
    if (w === 0 && i === 0) continue;
    const key = r.mnemonic ?? r.opcode;
    const k = kinds.get(key) ?? { mnemonic: key, executed: 0, wavefronts: 0, ideal: 0 };
    k.executed += r.executed, k.wavefronts += w, k.ideal += i, total += w, ideal += i;
    kinds.set(key, k);
  }
  return { total, ideal, kinds: [...kinds.values()].sort((a, b) => b.wavefronts - a.wavefronts) };
}

/**
 * Instructions in page order as runs of one opcode: [opcode, instructions, samples].
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { opcodeRuns } from "./sass_stalls.ts";
 * const i = (opcode: string, samples: number) => ({ address: "", source: opcode, opcode, executed: 1, samples, reasons: {} });
 * assert.deepEqual(opcodeRuns([i("FFMA", 2), i("FFMA", 3), i("LDS", 1), i("FFMA", 0)]),
 *   [["FFMA", 2, 5], ["LDS", 1, 1], ["FFMA", 1, 0]]);
 * ```
 */
export function opcodeRuns(rows: SassInstruction[]): [string, number, number][] {
  const runs: [string, number, number][] = [];
  for (const r of rows) {
    const last = runs[runs.length - 1];
    if (last && last[0] === r.opcode) last[1] += 1, last[2] += r.samples;
    else runs.push([r.opcode, 1, r.samples]);
  }
  return runs;
}

const pct = (x: number) => `${(100 * x).toFixed(1)} %`;

/** The summary as text. */
export function formatSass(s: SassSummary): string {
  const lines = [
    `instructions: ${s.instructions} on the page, ${s.executed} executed, ${s.hot} executed at least ` +
    `${s.hotThreshold} times`,
    `samples: ${s.samples}; by reason: ${s.reasons.slice(0, 10).map(([k, v]) => `${k} ${pct(v)}`).join(", ")}`,
  ];
  if (s.band) {
    lines.push(
      `instructions executed ${s.band.low}-${s.band.high} times: ${s.band.instructions}, ${s.band.samples} samples; ` +
        "by opcode and reason: " +
        s.band.shares.slice(0, 18).map(([k, v]) => `${k} ${pct(v)}`).join(", "),
    );
    if (s.band.sequence) {
      lines.push(
        "in page order (opcode×run (samples)): " +
          s.band.sequence.map(([op, n, k]) => `${op}${n > 1 ? `×${n}` : ""} (${k})`).join(" "),
      );
    }
  }
  lines.push("", "| samples | share | executed | instruction | leading reasons |", "|---|---|---|---|---|");
  for (const r of s.top) {
    const lead = Object.entries(r.reasons).filter(([, v]) => v > 0).sort((a, b) => b[1] - a[1]).slice(0, 3);
    lines.push(
      `| ${r.samples} | ${pct(s.samples ? r.samples / s.samples : 0)} | ${r.executed} | \`${r.source}\` | ` +
        `${lead.map(([k, v]) => `${k} ${v}`).join(", ")} |`,
    );
  }
  if (s.matches) {
    lines.push("", "| address | executed | samples | instruction |", "|---|---|---|---|");
    for (const r of s.matches) lines.push(`| ${r.address} | ${r.executed} | ${r.samples} | \`${r.source}\` |`);
  }
  if (s.byOpcode) {
    const b = s.byOpcode;
    lines.push(
      "",
      `samples of ${b.reason} by opcode (${b.samples}): ` +
        (b.opcodes.length ? b.opcodes.slice(0, 12).map(([op, v]) => `${op} ${v}`).join(", ") : "none"),
    );
  }
  if (s.bands) {
    lines.push("", "| executed | instructions | samples | share | leading reasons |", "|---|---|---|---|---|");
    for (const b of s.bands) {
      lines.push(
        `| ${b.executed} | ${b.instructions} | ${b.samples} | ${pct(s.samples ? b.samples / s.samples : 0)} | ` +
          `${b.reasons.slice(0, 4).map(([k, v]) => `${k} ${pct(v)}`).join(", ")} |`,
      );
    }
  }
  if (s.shared) {
    const sci = (x: number) => x.toExponential(3);
    lines.push(
      "",
      `shared-memory wavefronts: ${sci(s.shared.total)} (ideal ${sci(s.shared.ideal)}, excess ` +
        `${sci(s.shared.total - s.shared.ideal)})`,
      "| instruction | executed | wavefronts | per execution | excess over ideal |",
      "|---|---|---|---|---|",
    );
    for (const k of s.shared.kinds) {
      lines.push(
        `| \`${k.mnemonic}\` | ${sci(k.executed)} | ${sci(k.wavefronts)} | ` +
          `${k.executed ? (k.wavefronts / k.executed).toFixed(2) : "—"} | ${sci(k.wavefronts - k.ideal)} |`,
      );
    }
  }
  return lines.join("\n") + "\n";
}

async function main() {
  const usage = "usage: deno run -A bench/sass_stalls.ts PAGE.sass.csv [--hot N] [--executions LO-HI] [--top N] " +
    "[--grep REGEX] [--sequence (with --executions)] [--wavefronts] [--reason NAME] [--bands N]";
  const { values, positionals } = benchArgs(usage, {
    options: {
      hot: { type: "string" },
      executions: { type: "string" },
      top: { type: "string" },
      grep: { type: "string" },
      sequence: { type: "boolean" },
      wavefronts: { type: "boolean" },
      reason: { type: "string" },
      bands: { type: "string" },
    },
    allowPositionals: true,
  });
  const band = values.executions?.match(/^(\d+)-(\d+)$/);
  const hot = values.hot === undefined ? undefined : Number(values.hot);
  const top = values.top === undefined ? undefined : Number(values.top);
  const bands = values.bands === undefined ? undefined : Number(values.bands);
  if (
    positionals.length !== 1 || (values.executions !== undefined && !band) ||
    (hot !== undefined && !Number.isInteger(hot)) || (top !== undefined && !Number.isInteger(top)) ||
    (bands !== undefined && !(Number.isInteger(bands) && bands >= 1)) ||
    (values.sequence && !band)
  ) {
    console.error(usage);
    Deno.exit(2);
  }
  let grep: RegExp | undefined;
  try {
    grep = values.grep === undefined ? undefined : new RegExp(values.grep);
  } catch (e) {
    console.error(`--grep: ${e instanceof Error ? e.message : e}`);
    Deno.exit(2);
  }
  let rows: SassInstruction[];
  try {
    rows = parseSassCsv(await Deno.readTextFile(positionals[0]));
  } catch (e) {
    console.error(`${positionals[0]}: ${e instanceof Error ? e.message : e}`);
    Deno.exit(2);
  }
  const executions: [number, number] | undefined = band ? [Number(band[1]), Number(band[2])] : undefined;
  let summary: SassSummary;
  try {
    summary = summarizeSass(rows, {
      hot,
      executions,
      top,
      grep,
      sequence: values.sequence,
      wavefronts: values.wavefronts,
      reason: values.reason,
      bands,
    });
  } catch (e) {
    console.error(`${positionals[0]}: ${e instanceof Error ? e.message : e}`);
    Deno.exit(2);
  }
  console.log(formatSass(summary));
}

if (import.meta.main) await main();
