/**
 * What `verify` says about a failing case besides the first mismatch: where the outputs differ (a mismatch map per
 * output, `reference/compare/mismatch_map.ts`) and how (the `identify` search: which variant of the model space the
 * backend's output reproduces, or the nearest ones). Attached to the row as `diagnosis`, printed under it, written
 * to the JSON report and drawn in the HTML report.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { diagnosisLines } from "./diagnose.ts";
 * const lines = diagnosisLines({
 *   maps: {},
 *   identify: { verdict: "bit for bit: exact", matches: [{ label: "exact", behaviours: [] }], moreMatches: 0,
 *     nearest: [], searched: 9, notApplicable: 0, ms: 5 },
 * });
 * assert.deepEqual(lines, ["identify: bit for bit: exact"]);
 * ```
 * @module
 */
import { formatMismatchMap, type MismatchMap, mismatchMap } from "../../reference/compare/mismatch_map.ts";
import { mapContext } from "../../reference/identify/map_context.ts";
import type { IdentifyResult } from "../../reference/identify/identify.ts";
import type { Tensor } from "../../reference/tensor/tensor.ts";
import { identifyOutputs } from "../identify.ts";
import type { CaseDiagnosis, IdentifySummary } from "./report.ts";

/** Largest (output elements × K) a failing case is identified for inside `verify` (about 10 s on one core). */
export const IDENTIFY_BUDGET = 2 ** 30;

/**
 * The mismatch map of one output of a case (compared where `mask` is 1, NaN equal to NaN, with the op's masked rows
 * and group label).
 * @param op DeepGEMM's op name
 * @param inputs the case's inputs
 * @param scalars its scalars
 * @param name the output's name
 * @param expected the reference's output
 * @param actual the backend's output
 * @param mask the reference's `sample_mask` / `logits_defined`, or null
 * @returns the map
 */
export function outputMap(
  op: string,
  inputs: Record<string, Tensor>,
  scalars: Record<string, unknown>,
  name: string,
  expected: Tensor,
  actual: Tensor,
  mask: Tensor | null,
): MismatchMap {
  const defined = mask !== null && mask.numel === expected.numel ? mask.contiguous().data as Uint8Array : null;
  return mismatchMap(expected, actual, {
    ...mapContext(op, inputs, scalars, name, expected.shape),
    nan: "class",
    defined,
  });
}

/**
 * The identify result as the report keeps it: the verdict, up to 8 matches and the nearest variants with where they
 * differ (one line per output), without the tile grids.
 * @param r the result
 * @returns the summary
 */
export function summarizeIdentify(r: IdentifyResult): IdentifySummary {
  return {
    verdict: r.verdict,
    matches: r.matches.slice(0, 8).map((m) => ({ label: m.label, behaviours: m.behaviours })),
    moreMatches: Math.max(0, r.matches.length - 8),
    nearest: r.nearest.map((n) => ({
      label: n.label,
      behaviours: n.behaviours,
      mismatches: n.mismatches,
      compared: n.compared,
      where: Object.entries(n.maps ?? {}).filter(([, m]) => m.mismatches > 0)
        .map(([name, m]) => `${name}: ${m.classification.text}`),
    })),
    searched: r.searched,
    notApplicable: r.notApplicable.length,
    ms: Math.round(r.ms),
  };
}

/**
 * Runs `identify` on a failing case's outputs, or says why not: sampled cases (the DeepSeek-V3 shapes) and cases
 * beyond {@link IDENTIFY_BUDGET} are not searched, since candidates would have to run on the whole, large output.
 * @param op DeepGEMM's op name
 * @param inputs the case's inputs
 * @param scalars its scalars
 * @param outputs the backend's outputs
 * @param sampled whether the case is checked on a tile sample
 * @returns the summary, or the reason it was skipped
 */
export function identifyFailure(
  op: string,
  inputs: Record<string, Tensor>,
  scalars: Record<string, unknown>,
  outputs: Record<string, Tensor>,
  sampled: boolean,
): Pick<CaseDiagnosis, "identify" | "identifySkipped"> {
  if (sampled) {
    return { identifySkipped: "a sampled case: run `oracle identify` on its inputs and the kernel's output" };
  }
  // A whole output times its reduction length bounds what one candidate costs in full.
  const K = Math.max(1, ...["a", "b", "q", "x"].map((n) => inputs[n]?.shape.at(-1) ?? 1));
  const elements = Object.values(outputs).reduce((n, t) => n + t.numel, 0);
  if (elements * K > IDENTIFY_BUDGET) {
    return {
      identifySkipped: `a large case (${elements} output elements × K ${K}): run \`oracle identify\` on its inputs ` +
        "and the kernel's output",
    };
  }
  try {
    return { identify: summarizeIdentify(identifyOutputs(op, inputs, scalars, outputs)) };
  } catch (e) {
    return { identifySkipped: (e as Error).message };
  }
}

/**
 * The diagnosis as text lines for the table under a failing row (indented by the caller).
 * @param d the diagnosis
 * @param tiles tiles listed per map (default 2)
 * @returns lines
 */
export function diagnosisLines(d: CaseDiagnosis, tiles = 2): string[] {
  const lines: string[] = [];
  for (const [name, map] of Object.entries(d.maps)) {
    const [head, ...rest] = formatMismatchMap(name, map, tiles);
    lines.push(`where: ${head}`, ...rest);
  }
  if (d.identify) {
    lines.push(`identify: ${d.identify.verdict}`);
    for (const n of d.identify.nearest.slice(1, 3)) {
      lines.push(`  then ${n.label}: ${n.mismatches}/${n.compared} mismatches`);
    }
  } else if (d.identifySkipped) {
    lines.push(`identify: not run (${d.identifySkipped})`);
  }
  return lines;
}
