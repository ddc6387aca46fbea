/**
 * `identify`: which rounding behaviour produced an output. The search runs over the model space of the op
 * ({@link ./variants.ts}: every named kernel model, tensor-core profile, promotion interval, split-K factor, output
 * rounding, op-specific variants) and reports every variant that reproduces the actual output bit for bit, or, when
 * none does, the nearest ones ranked by mismatch count, each with a mismatch map saying where it differs.
 *
 * It is fast because it prunes: every candidate is first evaluated on a small sample of output elements (sampled rows ×
 * columns of a normal GEMM, the covering tile diagonal otherwise); only those with no mismatch there (or, when none
 * has, the fewest) are evaluated on a wider sample and then on the whole output. The true variant always survives the
 * pruning (it has no mismatch anywhere). Deterministic: the samples are seeded.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Tensor } from "../tensor/tensor.ts";
 * import { GEMM_OPS } from "../registry.ts";
 * import { identify } from "./identify.ts";
 * // A raw-FP8 GEMM computed with fast accumulation (the wgmma chain over all of K) is named as such.
 * const K = 256, a = new Uint8Array(8 * K), b = new Uint8Array(8 * K);
 * for (let i = 0; i < a.length; i++) { a[i] = (i * 37 + 11) % 120; b[i] = (i * 53 + 5) % 120 | (i % 3 ? 0 : 0x80); }
 * const inputs = { a: Tensor.from("e4m3", [8, K], a), b: Tensor.from("e4m3", [8, K], b) };
 * const op = GEMM_OPS.cublaslt_gemm_nt;
 * const actual = op.run(inputs, {}, { model: "cublaslt", promotion: "none" });
 * const r = identify(op, inputs, {}, actual);
 * assert.ok(r.matches.some((m) => m.label === "cublaslt --promote none"));
 * assert.match(r.verdict, /fast accumulation on/);
 * ```
 * @module
 */
import { type MismatchMap, mismatchMap, type MismatchMapOptions } from "../compare/mismatch_map.ts";
import type { OpSpec } from "../gemm/op_spec.ts";
import type { OutDtype } from "../kernel_models/kernel_models.ts";
import type { Tensor } from "../tensor/tensor.ts";
import { knownBehaviours } from "./behaviours.ts";
import { codesTensor, countMismatches, type ElementCodes, type TensorCodes, tensorCodes } from "./codes.ts";
import { type Evaluator, makeEvaluator, type Scope } from "./evaluate.ts";
import { type Candidate, gemmVariants, opVariants, type Variant, variantComplexity, variantLabel } from "./variants.ts";

/** Options of {@link identify}. */
export interface IdentifyOptions {
  /** Nearest variants reported when none matches (default 5). */
  top?: number;
  /** Candidates that matched the samples run on the whole output: at least this many, and on until one matches
   * (default 6; every one for an output of at most 4096 elements). */
  maxFull?: number;
  /** Sampling seed (default 0). */
  seed?: number;
  /** Largest split-K factor searched (default 8). */
  maxSplitK?: number;
  /** Context for the mismatch maps of the nearest variants (masked rows, group label), per output name. */
  mapOptions?: Readonly<Record<string, MismatchMapOptions>>;
}

/** One evaluated variant. */
export interface RankedVariant {
  /** The `oracle run` flags that reproduce it. */
  label: string;
  /** The variant. */
  variant: Variant;
  /** Other spellings of the same arithmetic. */
  aliases: string[];
  /** Real kernels it is known to describe. */
  behaviours: string[];
  /** Mismatching elements over the scope. */
  mismatches: number;
  /** Elements compared. */
  compared: number;
  /** `full`: every output element; `sample`/`wide`: only a sample (not confirmed). */
  scope: Scope;
  /** Where it differs, per output (nearest variants only). */
  maps?: Record<string, MismatchMap>;
}

/** What {@link identify} found. */
export interface IdentifyResult {
  /** DeepGEMM's op name. */
  op: string;
  /** The outputs compared. */
  outputs: { name: string; dtype: string; shape: number[] }[];
  /** `elements` (sampled rows × columns) or `tiles` (tile-sampled or whole op). */
  strategy: "elements" | "tiles";
  /** Distinct variants searched. */
  searched: number;
  /** Variants that do not apply to this input (an SM100 model on non-power-of-two scales...), with the reason. */
  notApplicable: { label: string; reason: string }[];
  /** Candidates left after the small sample and after the wide one. */
  survivors: { sample: number; wide: number | null };
  /** Every variant that reproduces the output bit for bit, simplest first. */
  matches: RankedVariant[];
  /** Variants that matched every sampled element but were not run on the whole output (beyond `maxFull`). */
  unconfirmed: RankedVariant[];
  /** When nothing matches: the nearest variants, fewest mismatches first, with their maps. */
  nearest: RankedVariant[];
  /** One line: what the output is. */
  verdict: string;
  /** Milliseconds spent. */
  ms: number;
}

const MASKS = new Set(["sample_mask", "logits_defined"]);
/** Outputs of at most this many elements are checked in full for every candidate that matched the first sample. */
const FULL_CHEAP = 4096;

interface State {
  candidate: Candidate;
  label: string;
  counts: Partial<Record<Scope, { mismatches: number; compared: number }>>;
  /** The whole-output evaluation, kept for the mismatch maps. */
  full?: Record<string, ElementCodes>;
  error?: string;
}

function evaluate(ev: Evaluator, s: State, scope: Scope, actual: Record<string, TensorCodes>): void {
  if (s.error !== undefined || s.counts[scope]) return;
  try {
    const got = ev.evaluate(s.candidate.variant, scope);
    let mismatches = 0, compared = 0;
    for (const [name, codes] of Object.entries(got)) {
      mismatches += countMismatches(codes, actual[name]);
      compared += codes.index.length;
    }
    s.counts[scope] = { mismatches, compared };
    if (scope === "full") s.full = got;
  } catch (e) {
    if (!(e instanceof RangeError || e instanceof TypeError)) throw e;
    s.error = e.message;
  }
}

/**
 * Searches the model space for the variants that reproduce `actual`.
 * @param op the op (from the registry)
 * @param inputs its tensors
 * @param scalars its scalars
 * @param actual the outputs to explain, by name (the op's outputs; masks are ignored)
 * @param options ranking and sampling options
 * @returns the matches, or the nearest variants with their mismatch maps
 * @throws RangeError when `actual` holds none of the op's outputs, or one of the wrong dtype or shape
 */
export function identify(
  op: OpSpec,
  inputs: Record<string, Tensor>,
  scalars: Record<string, unknown>,
  actual: Record<string, Tensor>,
  options: IdentifyOptions = {},
): IdentifyResult {
  const t0 = performance.now();
  const names = op.outputs.filter((n) => !MASKS.has(n) && actual[n] !== undefined);
  if (names.length === 0) {
    throw new RangeError(
      `the actual outputs (${Object.keys(actual).join(", ") || "none"}) include none of ${op.name}'s outputs ` +
        `(${op.outputs.filter((n) => !MASKS.has(n)).join(", ")})`,
    );
  }
  const codes: Record<string, TensorCodes> = {};
  for (const n of names) codes[n] = tensorCodes(actual[n]);
  const ev = makeEvaluator(op.name, inputs, scalars, names, options.seed ?? 0);
  const outDtype = actual[names[0]].dtype;
  const candidates = ev.operands && (outDtype === "bf16" || outDtype === "f32")
    ? gemmVariants({
      models: op.models,
      ...ev.operands,
      outDtype: outDtype as OutDtype,
      rz: ev.rz,
      maxSplitK: options.maxSplitK,
    })
    : opVariants(op.name, op.models);
  const states: State[] = candidates.map((c) => ({ candidate: c, label: variantLabel(c.variant), counts: {} }));
  const maxFull = options.maxFull ?? 6, top = options.top ?? 5;
  const rate = (s: State, scope: Scope) => {
    const c = s.counts[scope];
    return c === undefined ? Infinity : c.compared === 0 ? 0 : c.mismatches / c.compared;
  };
  const byRate = (scope: Scope) => (x: State, y: State) => rate(x, scope) - rate(y, scope);

  // 1. The small sample, for every candidate (RNE and RZ twins side by side: they share one evaluation).
  const core = (s: State) => variantLabel({ ...s.candidate.variant, rounding: undefined });
  const twins = states.map((s, i) => ({ s, i, k: core(s) }));
  twins.sort((x, y) => (x.k < y.k ? -1 : x.k > y.k ? 1 : x.i - y.i));
  for (const { s } of twins) evaluate(ev, s, "sample", codes);
  const live = states.filter((s) => s.error === undefined);
  let zero = live.filter((s) => s.counts.sample!.mismatches === 0);
  const survivors: IdentifyResult["survivors"] = { sample: zero.length, wide: null };
  // 2. The wide sample, when too many candidates agree on the small one (unless the whole output is that small).
  const fullCheap = ev.sampleSize.full <= FULL_CHEAP;
  if (zero.length > maxFull && ev.strategy === "elements" && !fullCheap) {
    for (const s of zero) evaluate(ev, s, "wide", codes);
    zero = zero.filter((s) => s.error === undefined && s.counts.wide!.mismatches === 0);
    survivors.wide = zero.length;
  }
  // Simplest first; among equally simple ones the exact model first (a correctly rounded output is the strongest
  // statement), then the op's order.
  const exactFirst = (s: State) => (s.candidate.variant.model === "exact" ? 0 : 1);
  const simplest = (x: State, y: State) =>
    variantComplexity(x.candidate.variant) - variantComplexity(y.candidate.variant) ||
    exactFirst(x) - exactFirst(y) || states.indexOf(x) - states.indexOf(y);
  zero.sort(simplest);
  // 3. The whole output: the survivors, simplest first, at least `maxFull` of them and on until one matches (all of
  // them for a small output); when none survived the samples, the nearest by sample.
  let matches: State[] = [];
  let checked = 0;
  for (const s of zero) {
    if (checked >= maxFull && matches.length > 0 && !fullCheap) break;
    evaluate(ev, s, "full", codes);
    checked++;
    if (s.error === undefined && s.counts.full!.mismatches === 0) matches.push(s);
  }
  const confirmed = zero.slice(0, checked);
  let nearestPool: State[] = [];
  if (matches.length === 0) {
    // No candidate agreed with the samples, or their agreement did not hold everywhere (a local fault): rank the
    // nearest by sample in full.
    const more = [...live].filter((s) => !confirmed.includes(s)).sort(byRate("sample"))
      .slice(0, Math.max(0, top - Math.min(confirmed.length, 1)));
    for (const s of more) evaluate(ev, s, "full", codes);
    nearestPool = [...confirmed, ...more].filter((s) => s.counts.full !== undefined)
      .sort((x, y) => byRate("full")(x, y) || byRate("sample")(x, y)).slice(0, top);
    // (a variant that differs from a sample cannot match in full; kept as a guard of that invariant)
    matches = nearestPool.filter((s) => s.counts.full!.mismatches === 0);
    if (matches.length) nearestPool = [];
  }
  matches = matches.sort(simplest);
  const ranked = (s: State, scope: Scope, withMaps: boolean): RankedVariant => {
    const r: RankedVariant = {
      label: s.label,
      variant: s.candidate.variant,
      aliases: [...s.candidate.aliases],
      behaviours: knownBehaviours(op.name, s.candidate.variant, outDtype),
      mismatches: s.counts[scope]!.mismatches,
      compared: s.counts[scope]!.compared,
      scope,
    };
    if (withMaps) {
      r.maps = {};
      for (const [name, g] of Object.entries(s.full!)) {
        const { tensor, defined } = codesTensor(g, codes[name]);
        const full = defined.every((x) => x === 1);
        r.maps[name] = mismatchMap(tensor, actual[name], {
          nan: "class",
          ...(options.mapOptions?.[name] ?? {}),
          defined: full ? null : defined,
        });
      }
    }
    return r;
  };
  const result: IdentifyResult = {
    op: op.name,
    outputs: names.map((n) => ({ name: n, dtype: actual[n].dtype, shape: [...actual[n].shape] })),
    strategy: ev.strategy,
    searched: states.length,
    notApplicable: states.filter((s) => s.error !== undefined).map((s) => ({ label: s.label, reason: s.error! })),
    survivors,
    matches: matches.map((s) => ranked(s, "full", false)),
    unconfirmed: zero.slice(checked).map((s) => ranked(s, survivors.wide === null ? "sample" : "wide", false)),
    nearest: nearestPool.map((s) => ranked(s, "full", true)),
    verdict: "",
    ms: 0,
  };
  result.verdict = verdictOf(result);
  result.ms = performance.now() - t0;
  return result;
}

/**
 * The one-line verdict of a result.
 * @param r the result (matches, nearest)
 * @returns `bit for bit: sm90_1d2d (DeepGEMM SM90 FP8 1D2D kernel ...)` or `no variant matches; nearest: ...`
 */
export function verdictOf(r: Pick<IdentifyResult, "matches" | "nearest" | "searched" | "notApplicable">): string {
  if (r.matches.length > 0) {
    const m = r.matches[0];
    const what = m.behaviours.length ? ` = ${m.behaviours[0]}` : "";
    const others = r.matches.length > 1 ? `; ${r.matches.length - 1} more variant(s) give the same bits here` : "";
    return `bit for bit: ${m.label}${what}${others}`;
  }
  if (r.nearest.length === 0) {
    return `no variant applies to this input (${r.notApplicable.length} of ${r.searched} refused it)`;
  }
  const n = r.nearest[0];
  const where = Object.entries(n.maps ?? {}).filter(([, m]) => m.mismatches > 0)
    .map(([name, m]) => `${name}: ${m.classification.text}`).join("; ");
  return `no variant reproduces it; nearest: ${n.label} with ${n.mismatches}/${n.compared} mismatches` +
    (where ? ` (${where})` : "");
}
