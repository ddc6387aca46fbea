/**
 * The `verify` report: one record per (case, backend), the JSON shape of `interfaces.md` §4, a plain-text table and
 * JUnit XML for CI systems.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { summarize } from "./report.ts";
 * assert.deepEqual(summarize([]), { pass: 0, fail: 0, skip: 0, error: 0, crashed: 0, timedOut: 0 });
 * ```
 * @module
 */

import type { MismatchMap } from "../../reference/compare/mismatch_map.ts";

/** Outcome of one case on one backend. */
export type CaseStatus = "pass" | "fail" | "skip" | "error";

/** What `identify` found for a failing case (the report's form: no tile grids). */
export interface IdentifySummary {
  /** One line: the matching variant and the kernel it describes, or the nearest and where it differs. */
  verdict: string;
  /** Variants that reproduce the output bit for bit (up to 8), simplest first. */
  matches: { label: string; behaviours: string[] }[];
  /** Further matches not listed. */
  moreMatches: number;
  /** When none matches: the nearest variants, with where they differ (one line per output). */
  nearest: { label: string; behaviours: string[]; mismatches: number; compared: number; where: string[] }[];
  /** Variants searched, and how many of them do not apply to the input. */
  searched: number;
  notApplicable: number;
  /** Milliseconds the search took. */
  ms: number;
}

/** Where and how a failing case differs (`cli/verify/diagnose.ts`). */
export interface CaseDiagnosis {
  /** Mismatch map per output with mismatches (per 128×128 tile; the one-line pattern in `classification`). */
  maps: Record<string, MismatchMap>;
  /** The identify search on the backend's output. */
  identify?: IdentifySummary;
  /** Why identify was not run (a sampled case, unusable outputs, `--no-identify`). */
  identifySkipped?: string;
}

/** One row of the report (`interfaces.md` §4). */
export interface CaseResult {
  id: string;
  op: string;
  layout: string;
  shape: string;
  backend: string;
  model: string;
  status: CaseStatus;
  bitExact: boolean;
  mismatches: number;
  elements: number;
  maxUlp: number;
  calcDiff: number;
  tolerance: string;
  ms: number;
  message?: string;
  /** For an ERROR row of a backend host: it crashed, timed out, or broke the protocol (`docs/backend-protocol.md`). */
  fault?: "crash" | "timeout" | "protocol";
  /** For a FAIL row: where the outputs differ (tile maps) and which variant the backend's output is. */
  diagnosis?: CaseDiagnosis;
}

/** Counts per status, and of the errors, how many crashed their backend host or timed out. */
export interface Summary {
  pass: number;
  fail: number;
  skip: number;
  error: number;
  crashed: number;
  timedOut: number;
}

/** One case that got worse than its baseline (`--baseline`): both sides, as the JSON report carries them. */
export interface Regression {
  id: string;
  backend: string;
  model: string;
  reason: string;
  /** The baseline's row. */
  before: CaseResult;
  /** This run's row, or null when it has none. */
  after: CaseResult | null;
}

/** The whole report as written by `--json`. */
export interface Report {
  oracle: string;
  backends: { name: string; status: "available" | "unavailable"; model?: string; info?: unknown; message?: string }[];
  cases: CaseResult[];
  summary: Summary;
  /** False while `verify` is still running (the report is rewritten after every case); true once it finished. */
  complete: boolean;
  /** With `--baseline`: every row that got worse, with the baseline's and this run's rows. */
  regressions?: Regression[];
  /** With `--baseline`: baseline rows whose case this run did not execute (`--ops`, `--shard`, `--suite`). */
  notExecuted?: { id: string; backend: string; model: string }[];
}

/** Counts the results per status. */
export function summarize(cases: readonly CaseResult[]): Summary {
  const s: Summary = { pass: 0, fail: 0, skip: 0, error: 0, crashed: 0, timedOut: 0 };
  for (const c of cases) {
    s[c.status]++;
    if (c.fault === "crash") s.crashed++;
    if (c.fault === "timeout") s.timedOut++;
  }
  return s;
}

function pad(s: string, n: number): string {
  return s.length >= n ? s : s + " ".repeat(n - s.length);
}

/**
 * A fixed-width text table of the results, one line per case, for stdout; under a row that did not pass its message
 * and, for a FAIL row, the diagnosis (`lines(diagnosis)`: where the outputs differ and what identify found).
 */
export function formatTable(
  cases: readonly CaseResult[],
  lines: (d: CaseDiagnosis) => string[] = () => [],
): string {
  const head = ["status", "backend", "op", "layout", "shape", "model", "checked", "mismatch", "maxUlp", "ms"];
  const rows = cases.map((c) => [
    c.status.toUpperCase(),
    c.backend,
    c.op,
    c.layout,
    c.shape,
    c.model,
    String(c.elements),
    String(c.mismatches),
    String(c.maxUlp),
    c.ms.toFixed(1),
  ]);
  const widths = head.map((h, i) => Math.min(48, Math.max(h.length, ...rows.map((r) => r[i].length))));
  const line = (r: string[]) => r.map((x, i) => pad(x, widths[i])).join("  ").trimEnd();
  const out = [line(head), line(widths.map((w) => "-".repeat(w)))];
  for (let i = 0; i < rows.length; i++) {
    out.push(line(rows[i]));
    const msg = cases[i].message;
    if (msg && cases[i].status !== "pass") out.push(`    ${msg}`);
    const d = cases[i].diagnosis;
    if (d && cases[i].status === "fail") { for (const l of lines(d)) out.push(`    ${l}`); }
  }
  return out.join("\n");
}

/** The one-line summary printed last on stdout. */
export function formatSummary(report: Report): string {
  const s = report.summary;
  const total = s.pass + s.fail + s.skip + s.error;
  const ids = new Set(report.cases.map((c) => c.id)).size;
  const unavailable = report.backends.filter((b) => b.status === "unavailable").map((b) => `${b.name} (${b.message})`);
  const tail = unavailable.length ? `; not available: ${unavailable.join(", ")}` : "";
  const faults = s.crashed + s.timedOut ? ` (${s.crashed} crashed, ${s.timedOut} timed out)` : "";
  return `verify: ${ids} cases, ${total} checks (case × backend): ${s.pass} passed, ${s.fail} failed, ${s.error} errors${faults}, ${s.skip} skipped${tail}`;
}

/**
 * Text as an XML attribute value: markup escaped, and what XML 1.0 cannot hold at all (C0 controls other than tab,
 * newline and return; lone surrogates; U+FFFE, U+FFFF; a crashed host's stderr may carry any of them) replaced by
 * U+FFFD, after terminal colour sequences are dropped.
 */
function xmlEscape(s: string): string {
  return s
    // deno-lint-ignore no-control-regex
    .replace(/\x1b\[[0-9;?]*[A-Za-z]/g, "")
    .replace(
      // deno-lint-ignore no-control-regex
      /[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g,
      "\ufffd",
    )
    .replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;")
    .replace(/\n/g, "&#10;").replace(/\r/g, "&#13;").replace(/\t/g, "&#9;");
}

/** JUnit XML: one testsuite per backend, one testcase per case (failure / error / skipped elements as JUnit expects). */
export function toJUnit(report: Report): string {
  const byBackend = new Map<string, CaseResult[]>();
  for (const c of report.cases) {
    if (!byBackend.has(c.backend)) byBackend.set(c.backend, []);
    byBackend.get(c.backend)!.push(c);
  }
  const lines = [`<?xml version="1.0" encoding="UTF-8"?>`, `<testsuites name="gemm-oracle verify">`];
  for (const [backend, cases] of byBackend) {
    const s = summarize(cases);
    const secs = cases.reduce((t, c) => t + c.ms, 0) / 1000;
    lines.push(
      `  <testsuite name="${
        xmlEscape(backend)
      }" tests="${cases.length}" failures="${s.fail}" errors="${s.error}" skipped="${s.skip}" time="${
        secs.toFixed(3)
      }">`,
    );
    for (const c of cases) {
      const name = xmlEscape(`${c.id} [${c.model}]`);
      const open = `    <testcase classname="${xmlEscape(`${backend}.${c.op}`)}" name="${name}" time="${
        (c.ms / 1000).toFixed(3)
      }"`;
      const where = Object.entries(c.diagnosis?.maps ?? {}).map(([n, m]) => `${n}: ${m.classification.text}`);
      const how = c.diagnosis?.identify ? [`identify: ${c.diagnosis.identify.verdict}`] : [];
      const msg = xmlEscape([c.message ?? "", ...where.map((w) => `where: ${w}`), ...how].filter(Boolean).join(" | "));
      if (c.status === "pass") lines.push(`${open}/>`);
      else if (c.status === "fail") lines.push(`${open}><failure message="${msg}"/></testcase>`);
      else if (c.status === "error") lines.push(`${open}><error message="${msg}"/></testcase>`);
      else lines.push(`${open}><skipped message="${msg}"/></testcase>`);
    }
    lines.push(`  </testsuite>`);
  }
  const regressions = report.regressions ?? [];
  if (regressions.length) {
    // A CI test reporter shows the gate's verdict only if it is a testcase: one failing testcase per regression.
    lines.push(
      `  <testsuite name="regressions" tests="${regressions.length}" failures="${regressions.length}" errors="0" skipped="0">`,
    );
    for (const r of regressions) {
      const name = xmlEscape(`${r.id} [${r.model}]`);
      lines.push(
        `    <testcase classname="${xmlEscape(`regressions.${r.backend}`)}" name="${name}"><failure message="${
          xmlEscape(r.reason)
        }"/></testcase>`,
      );
    }
    lines.push(`  </testsuite>`);
  }
  lines.push(`</testsuites>`, "");
  return lines.join("\n");
}
