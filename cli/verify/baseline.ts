/**
 * `verify --baseline`: compares a run with a previous JSON report and names every case that got worse.
 *
 * On the same (id, backend, model), a case regressed when it passed before and does not now (fail, error, skip, or
 * no row at all); it has more mismatches; its max ULP distance or calc_diff grew; or, only with a time factor
 * (`--time-factor`), it got slower beyond noise: more than `timeFactor`× and `timeSlackMs` slower (both must hold;
 * `--repeat` makes each time the median of several calls). Baseline cases this run did not execute (other `--ops`,
 * `--shard`, `--suite`) are not regressions but are listed, and fail the gate unless `--allow-subset`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { findRegressions } from "./baseline.ts";
 * const row = { id: "x", op: "fp8_gemm_nt", layout: "nt", shape: "1x8x128", backend: "cpu", model: "sm90_1d2d",
 *   status: "pass" as const, bitExact: true, mismatches: 0, elements: 8, maxUlp: 0, calcDiff: 0, tolerance: "bitwise", ms: 1 };
 * assert.equal(findRegressions([{ ...row, status: "fail", mismatches: 1 }], [row]).length, 1);
 * assert.match(findRegressions([{ ...row, status: "skip" }], [row])[0].reason, /was pass, now skip/);
 * assert.match(findRegressions([], [row])[0].reason, /was pass, now missing/);
 * ```
 * @module
 */
import type { CaseResult, Regression, Report } from "./report.ts";

export type { Regression } from "./report.ts";

/** Thresholds of the gate. */
export interface BaselineOptions {
  /** Timing gate, off unless set: a case is slower only when `ms > timeFactor · baseline.ms` … */
  timeFactor?: number;
  /** … and `ms > baseline.ms + timeSlackMs` (default 250 ms). */
  timeSlackMs?: number;
  /**
   * The case ids this run executed. A baseline row whose case is among them but has no row now is a regression
   * ("now missing"); one whose case is not is out of scope (see {@link notExecuted}). Default: every case.
   */
  executed?: ReadonlySet<string>;
}

const key = (c: CaseResult) => `${c.id}\u0000${c.backend}\u0000${c.model}`;

/**
 * The baseline rows that got worse in `current`. Cases absent from the baseline are new, not regressions.
 * @param current this run's rows
 * @param baseline the baseline's rows
 * @param options timing thresholds and the executed case ids
 */
export function findRegressions(
  current: readonly CaseResult[],
  baseline: readonly CaseResult[],
  options: BaselineOptions = {},
): Regression[] {
  const slack = options.timeSlackMs ?? 250;
  const now = new Map(current.map((c) => [key(c), c]));
  const out: Regression[] = [];
  for (const b of baseline) {
    if (options.executed && !options.executed.has(b.id)) continue;
    const c = now.get(key(b)) ?? null;
    const reasons: string[] = [];
    if (!c) {
      if (b.status === "pass") reasons.push("was pass, now missing (no row for this backend and model)");
    } else {
      if (b.status === "pass" && c.status !== "pass") reasons.push(`was pass, now ${c.status}`);
      if (c.mismatches > b.mismatches) reasons.push(`mismatches ${b.mismatches} → ${c.mismatches}`);
      if (c.maxUlp > b.maxUlp) reasons.push(`max ULP ${b.maxUlp} → ${c.maxUlp}`);
      if (c.calcDiff > b.calcDiff) reasons.push(`calc_diff ${b.calcDiff} → ${c.calcDiff}`);
      const f = options.timeFactor;
      if (f !== undefined && c.ms > b.ms * f && c.ms > b.ms + slack) {
        reasons.push(`time ${b.ms.toFixed(1)} → ${c.ms.toFixed(1)} ms`);
      }
    }
    if (reasons.length) {
      out.push({ id: b.id, backend: b.backend, model: b.model, reason: reasons.join("; "), before: b, after: c });
    }
  }
  return out;
}

/**
 * The baseline rows whose case this run did not execute (filtered out by `--ops`, `--shard` or `--suite`).
 * @param baseline the baseline's rows
 * @param executed the case ids this run executed
 */
export function notExecuted(baseline: readonly CaseResult[], executed: ReadonlySet<string>): CaseResult[] {
  return baseline.filter((b) => !executed.has(b.id));
}

/** Parses a baseline file's text; throws a TypeError naming the fault when it is not a verify JSON report. */
export function parseBaseline(text: string, file: string): Report {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (e) {
    throw new TypeError(`Baseline "${file}" is not JSON: ${(e as Error).message}`);
  }
  const r = data as Report;
  if (!r || typeof r !== "object" || !Array.isArray(r.cases)) {
    throw new TypeError(`Baseline "${file}" is not a verify report (no "cases" array)`);
  }
  if (r.cases.length === 0) throw new TypeError(`Baseline "${file}" has no cases: it can gate nothing`);
  if (r.complete === false) {
    throw new TypeError(`Baseline "${file}" was written by a verify that did not finish ("complete": false)`);
  }
  for (const [i, c] of r.cases.entries()) {
    if (typeof c?.id !== "string" || typeof c?.backend !== "string" || typeof c?.status !== "string") {
      throw new TypeError(`Baseline "${file}": case ${i} lacks a string id, backend or status`);
    }
    if (!["pass", "fail", "skip", "error"].includes(c.status)) {
      throw new TypeError(`Baseline "${file}": case ${c.id} has status ${JSON.stringify(c.status)}`);
    }
    if (typeof c.model !== "string") throw new TypeError(`Baseline "${file}": case ${c.id} lacks a string model`);
    for (const f of ["mismatches", "maxUlp", "calcDiff", "ms"] as const) {
      if (typeof c[f] !== "number" || Number.isNaN(c[f])) {
        throw new TypeError(`Baseline "${file}": case ${c.id} has a non-numeric "${f}"`);
      }
    }
  }
  return r;
}
