/**
 * `verify --baseline`: compares a run with a previous JSON report and names every case that got worse.
 *
 * A case regressed when, on the same (id, backend, model): it passed before and does not now; it has more mismatches;
 * its max ULP distance or calc_diff grew; or it got slower beyond noise (more than `slowFactor`× and `slowMarginMs`
 * slower; small cases jitter, so both conditions must hold).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { findRegressions } from "./baseline.ts";
 * const row = { id: "x", op: "fp8_gemm_nt", layout: "nt", shape: "1x8x128", backend: "cpu", model: "sm90_1d2d",
 *   status: "pass" as const, bitExact: true, mismatches: 0, elements: 8, maxUlp: 0, calcDiff: 0, tolerance: "bitwise", ms: 1 };
 * assert.equal(findRegressions([{ ...row, status: "fail", mismatches: 1 }], [row]).length, 1);
 * ```
 * @module
 */
import type { CaseResult, Report } from "./report.ts";

/** One case that got worse than its baseline. */
export interface Regression {
  id: string;
  backend: string;
  model: string;
  reason: string;
}

/** Thresholds for the timing comparison. */
export interface BaselineOptions {
  /** A case is slower only when `ms > slowFactor · baseline.ms` … (default 2) */
  slowFactor?: number;
  /** … and `ms > baseline.ms + slowMarginMs` (default 250 ms). */
  slowMarginMs?: number;
}

const key = (c: CaseResult) => `${c.id}\u0000${c.backend}\u0000${c.model}`;

/** The cases of `current` that are worse than the same case in `baseline`. Cases absent from the baseline are new, not regressions. */
export function findRegressions(
  current: readonly CaseResult[],
  baseline: readonly CaseResult[],
  options: BaselineOptions = {},
): Regression[] {
  const slowFactor = options.slowFactor ?? 2, slowMarginMs = options.slowMarginMs ?? 250;
  const before = new Map(baseline.map((c) => [key(c), c]));
  const out: Regression[] = [];
  for (const c of current) {
    const b = before.get(key(c));
    if (!b) continue;
    const reasons: string[] = [];
    if (b.status === "pass" && c.status !== "pass" && c.status !== "skip") reasons.push(`was pass, now ${c.status}`);
    if (c.mismatches > b.mismatches) reasons.push(`mismatches ${b.mismatches} → ${c.mismatches}`);
    if (c.maxUlp > b.maxUlp) reasons.push(`max ULP ${b.maxUlp} → ${c.maxUlp}`);
    if (c.calcDiff > b.calcDiff) reasons.push(`calc_diff ${b.calcDiff} → ${c.calcDiff}`);
    if (c.ms > b.ms * slowFactor && c.ms > b.ms + slowMarginMs) {
      reasons.push(`time ${b.ms.toFixed(1)} → ${c.ms.toFixed(1)} ms`);
    }
    if (reasons.length) out.push({ id: c.id, backend: c.backend, model: c.model, reason: reasons.join("; ") });
  }
  return out;
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
  for (const c of r.cases) {
    if (typeof c?.id !== "string" || typeof c?.backend !== "string" || typeof c?.status !== "string") {
      throw new TypeError(`Baseline "${file}" has a case without id/backend/status`);
    }
  }
  return r;
}
