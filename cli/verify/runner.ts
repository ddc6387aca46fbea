/**
 * Runs one `verify` case on one backend: the reference (the model the backend declares for the op's family, or
 * `--model`), the native call, and a bitwise comparison of every output (restricted to the sampled tiles when the
 * reference was sampled). Stored fixture outputs stand in for the reference where the fixture has the model, and
 * the pseudo-backend `reference` checks the stored outputs against the current reference (the regression gate).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { caseShape } from "./runner.ts";
 * import { Tensor } from "../../reference/tensor/tensor.ts";
 * assert.equal(caseShape({ a: Tensor.zeros("e4m3", [7, 256]), b: Tensor.zeros("e4m3", [64, 256]) }), "a=7x256 b=64x256");
 * ```
 * @module
 */
import type { Tensor } from "../../reference/tensor/tensor.ts";
import { Tensor as TensorClass } from "../../reference/tensor/tensor.ts";
import { compareTensors, type TensorComparison } from "../../reference/compare/compare_tensors.ts";
import { operationRunner } from "../../reference/operation_runner.ts";
import { referenceOp } from "../../reference/registry.ts";
import { backendOp, cloneTensor } from "./backend_ops.ts";
import type { HostedOutcome } from "../host/hosted_backend.ts";
import type { Executor } from "./executors.ts";
import type { CaseDiagnosis, CaseResult } from "./report.ts";
import { identifyFailure, outputMap } from "./diagnose.ts";
import { nativeReference } from "./native_reference.ts";

/** Reference outputs that say which elements are defined; they are masks, not outputs of a backend. */
const MASKS = new Set(["sample_mask", "logits_defined"]);

/** One case of a suite. */
export interface VerifyCase {
  /** Unique id. */
  readonly id: string;
  /** DeepGEMM op name. */
  readonly op: string;
  /** Layout / variant in words. */
  readonly layout: string;
  /** Which suite it comes from. */
  readonly suite: "fixtures" | "edge" | "deepseek-v3" | "deepseek-v3-full";
  /** Inputs and scalars (built lazily; large cases are built once per run). */
  build(): { inputs: Record<string, Tensor>; scalars: Record<string, unknown> };
  /** Stored outputs by model (fixtures only). */
  readonly expected?: Record<string, Record<string, Tensor>>;
  /** Fraction of output tiles to check (large shapes), or undefined for every element. */
  readonly sample?: number;
}

/** A backend as `verify` uses it: how it runs ops (null for the pseudo-backend `reference`). */
export interface VerifyBackend {
  readonly name: string;
  readonly exec: Executor | null;
}

/** `a=7x256 b=64x256`: the shapes of the inputs, for the report. */
export function caseShape(inputs: Record<string, Tensor>): string {
  return Object.keys(inputs).filter((k) => ["a", "b", "q", "kv", "x"].includes(k)).sort()
    .map((k) => `${k}=${inputs[k].shape.join("x")}`).join(" ");
}

/** Zeroes every element of `t` whose mask entry is 0 (both sides are masked the same way before a bitwise compare). */
function applyMask(t: Tensor, mask: Tensor): Tensor {
  const c = cloneTensor(t);
  const m = mask.contiguous().data;
  if (m.length !== c.data.length) throw new RangeError(`sample mask has ${m.length} elements, output ${c.data.length}`);
  // deno-lint-ignore no-explicit-any
  const d = c.data as any;
  const zero = typeof d[0] === "bigint" ? 0n : 0;
  for (let i = 0; i < m.length; i++) if (!m[i]) d[i] = zero;
  return c;
}

/** The storage of a contiguous tensor as unsigned integers of its element width (bits, not values: -0 ≠ +0). */
function bitsOf(t: Tensor): ArrayLike<number | bigint> {
  const d = t.contiguous().data;
  const n = d.length, off = d.byteOffset, buf = d.buffer;
  switch (d.BYTES_PER_ELEMENT) {
    case 1:
      return new Uint8Array(buf, off, n);
    case 2:
      return new Uint16Array(buf, off, n);
    case 4:
      return new Uint32Array(buf, off, n);
    default:
      return new BigUint64Array(buf, off, n);
  }
}

/**
 * The number of elements checked when `actual` has exactly `expected`'s bits wherever `mask` is set (everywhere
 * without a mask); null when any differs, or dtype or shape do (the full comparison then says how).
 */
function sameBitsWhere(expected: Tensor, actual: Tensor, mask: Tensor | null): number | null {
  if (expected.dtype !== actual.dtype || expected.shape.join("x") !== actual.shape.join("x")) return null;
  const e = bitsOf(expected), a = bitsOf(actual);
  if (!mask) {
    for (let i = 0; i < e.length; i++) if (e[i] !== a[i]) return null;
    return e.length;
  }
  const m = mask.contiguous().data;
  if (m.length !== e.length) return null;
  let n = 0;
  for (let i = 0; i < m.length; i++) {
    if (!m[i]) continue;
    if (e[i] !== a[i]) return null;
    n++;
  }
  return n;
}

function countMask(mask: Tensor): number {
  let n = 0;
  for (const v of mask.contiguous().data) if (v) n++;
  return n;
}

/**
 * A skipped, empty result row for one case on one backend (runCase fills in what it measures).
 * @param c the case
 * @param backend the backend's name
 * @param model the model name ("-" when none ran)
 * @param shape the shape text ("-" when unknown)
 * @returns the row, status "skip"
 * @example
 * ```ts
 * import { baseResult } from "./runner.ts";
 * const r = baseResult({ id: "x", op: "fp8_gemm", layout: "nt" } as never, "cpu", "-", "-");
 * if (r.status !== "skip" || r.bitExact) throw new Error();
 * ```
 */
export function baseResult(c: VerifyCase, backend: string, model: string, shape: string): CaseResult {
  return {
    id: c.id,
    op: c.op,
    layout: c.layout,
    shape,
    backend,
    model,
    status: "skip",
    bitExact: false,
    mismatches: 0,
    elements: 0,
    maxUlp: 0,
    calcDiff: 0,
    tolerance: "bitwise",
    ms: 0,
  };
}

function describeFirst(name: string, cmp: TensorComparison): string {
  const f = cmp.first;
  if (!f) return `${name}: ${cmp.mismatches} mismatches`;
  return `${name}: ${cmp.mismatches}/${cmp.elements} mismatches; first at [${
    f.coordinate.join(", ")
  }]: expected ${f.expected.value} (${f.expected.bits}), got ${f.actual.value} (${f.actual.bits})`;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

/** Options of {@link runCase}. */
export interface RunCaseOptions {
  /** Model override (`--model`). */
  model?: string;
  /** Reference worker count. */
  workers?: number;
  /** Run `identify` on a failing case's outputs (default true; `--no-identify`). */
  identify?: boolean;
  /** Times each backend call is made; the row's `ms` is the median (default 1). */
  repeat?: number;
}

/**
 * Runs a case on every backend; returns one result per backend.
 * @param c the case
 * @param backends the backends (the pseudo-backend `reference` has `backend: null`)
 * @param options model override, workers
 */
export async function runCase(
  c: VerifyCase,
  backends: readonly VerifyBackend[],
  options: RunCaseOptions = {},
): Promise<CaseResult[]> {
  const results: CaseResult[] = [];
  let built: { inputs: Record<string, Tensor>; scalars: Record<string, unknown> };
  try {
    built = c.build();
  } catch (e) {
    return backends.map((b) => ({
      ...baseResult(c, b.name, "-", "-"),
      status: "error",
      message: `building inputs: ${(e as Error).message}`,
    }));
  }
  const shape = caseShape(built.inputs);
  const refOp = referenceOp(c.op);
  const refCache = new Map<string, Record<string, Tensor>>();
  const reference = async (model: string): Promise<Record<string, Tensor>> => {
    const hit = refCache.get(model);
    if (hit) return hit;
    if (!refOp) throw new TypeError(`no reference for op "${c.op}"`);
    const sample = c.sample ? { fraction: c.sample, seed: 0 } : undefined;
    const opts = { model, workers: options.workers, ...(sample ? { sample } : {}) };
    // Sampled FP8 GEMMs (the DeepSeek-V3 tables) on the native CPU backend, with the TS reference's bits and mask
    // (native_reference.ts); everything else, or without the backend, on the TS engine.
    const native = sample
      ? await nativeReference(c.op, built.inputs, built.scalars, { model, sample, threads: options.workers })
      : null;
    const out: Record<string, Tensor> = native ?? await refOp.runAsync(built.inputs, built.scalars, opts);
    refCache.set(model, out);
    return out;
  };

  for (const vb of backends) {
    const t0 = performance.now();
    const bop = backendOp(c.op);
    const declared = vb.exec?.declaration(c.op);
    const declaredModel = declared && "model" in declared ? declared.model : undefined;
    // `--model` may use the ABI's spelling (tf32, sm90_mqa): the reference's name is what is compared against.
    const model = options.model !== undefined
      ? (bop?.referenceModel?.(options.model) ?? options.model)
      : declaredModel ?? refOp?.defaultModel ?? "exact";
    const r = baseResult(c, vb.name, model, shape);
    let callMs: number | null = null;
    try {
      if (vb.exec === null) {
        // The pseudo-backend: stored fixture outputs against the current reference.
        if (!c.expected) continue; // the pseudo-backend checks stored fixtures only; generated cases have none
        let checked = 0, mismatches = 0, maxUlp = 0, calc = 0;
        const notes: string[] = [];
        const maps: CaseDiagnosis["maps"] = {};
        for (const [m, outs] of Object.entries(c.expected)) {
          // Quantizers have no OpSpec reference: the fixtures' view of the registry runs every stored op.
          const fresh = operationRunner(c.op).run(built.inputs, built.scalars, m);
          for (const [name, want] of Object.entries(outs)) {
            const got = fresh[name];
            if (!got) throw new TypeError(`reference produced no "${name}" for model ${m}`);
            const cmp = compareTensors(name, want, got, { kind: "bitwise" });
            checked += cmp.elements;
            mismatches += cmp.mismatches;
            maxUlp = Math.max(maxUlp, cmp.maxUlp);
            if (Number.isFinite(cmp.calcDiff)) calc = Math.max(calc, cmp.calcDiff);
            if (cmp.mismatches) {
              notes.push(`[${m}] ${describeFirst(name, cmp)}`);
              maps[`${m}/${name}`] = outputMap(c.op, built.inputs, built.scalars, name, want, got, null);
            }
          }
        }
        if (Object.keys(maps).length) r.diagnosis = { maps };
        Object.assign(r, {
          model: Object.keys(c.expected).join(","),
          status: mismatches ? "fail" : "pass",
          bitExact: mismatches === 0,
          elements: checked,
          mismatches,
          maxUlp,
          calcDiff: calc,
        });
        if (notes.length) r.message = notes.join("; ");
      } else {
        if (declared && "skip" in declared && (declared.absent || options.model === undefined)) {
          r.message = declared.skip;
          results.push(r);
          continue;
        }
        if (refOp && !refOp.models.includes(model)) {
          // An op the model does not apply to (`--model exact` for the HC prenorm GEMM) is a skip with the reason.
          r.message = `${c.op} has no model ${model} (its models: ${refOp.models.join(", ")})`;
          results.push(r);
          continue;
        }
        const want = c.expected?.[model] ?? await reference(model);
        const initial: Record<string, Tensor> = {};
        for (const [name, t] of Object.entries(want)) {
          if (MASKS.has(name)) continue;
          initial[name] = built.inputs[name] ? cloneTensor(built.inputs[name]) : TensorClass.zeros(t.dtype, t.shape);
        }
        // The row's time is the backend call's alone (the median of --repeat calls), not the reference's.
        const times: number[] = [];
        let got!: HostedOutcome;
        for (let k = 0; k < (options.repeat ?? 1); k++) {
          const fresh = k === 0
            ? initial
            : Object.fromEntries(Object.entries(initial).map(([n, t]) => [n, cloneTensor(t)]));
          const t1 = performance.now();
          got = await vb.exec.run(c.op, built.inputs, built.scalars, model, fresh);
          times.push(performance.now() - t1);
          if (got.kind !== "ok") break;
        }
        callMs = median(times);
        if (got.kind !== "ok") {
          r.status = got.kind === "unsupported" ? "skip" : "error";
          r.message = got.message;
          if (got.kind === "crash" || got.kind === "timeout" || got.kind === "protocol") r.fault = got.kind;
          r.ms = callMs;
          results.push(r);
          continue;
        }
        const out = got.outputs;
        // Only the elements the reference defines are compared: sampled tiles, and for MQA logits the entries
        // DeepGEMM's contract specifies (the kernel leaves garbage elsewhere, deepgemm-ops.md §8.1).
        const mask = want.sample_mask ?? want.logits_defined ?? null;
        let checked = 0, mismatches = 0, maxUlp = 0, calc = 0;
        const notes: string[] = [];
        const maps: CaseDiagnosis["maps"] = {};
        for (const [name, got] of Object.entries(out)) {
          // The common case first: every checked element has the reference's bits. Only a difference pays for the
          // full comparison (masked copies, ULP and calc_diff, the first mismatch and the tile map).
          const same = sameBitsWhere(want[name], got, mask);
          if (same !== null) {
            checked += same;
            continue;
          }
          const exp = mask ? applyMask(want[name], mask) : want[name];
          const act = mask ? applyMask(got, mask) : got;
          const cmp = compareTensors(name, exp, act, { kind: "bitwise" }, "class");
          checked += mask ? countMask(mask) : cmp.elements;
          mismatches += cmp.mismatches;
          maxUlp = Math.max(maxUlp, cmp.maxUlp);
          if (Number.isFinite(cmp.calcDiff)) calc = Math.max(calc, cmp.calcDiff);
          if (cmp.mismatches) {
            notes.push(describeFirst(name, cmp));
            maps[name] = outputMap(c.op, built.inputs, built.scalars, name, exp, act, mask);
          }
        }
        // A failing case says where (tile maps) and how (identify) the backend's output differs.
        if (mismatches) {
          r.diagnosis = {
            maps,
            ...(options.identify === false
              ? { identifySkipped: "--no-identify" }
              : identifyFailure(c.op, built.inputs, built.scalars, out, c.sample !== undefined)),
          };
        }
        Object.assign(r, {
          status: mismatches ? "fail" : "pass",
          bitExact: mismatches === 0,
          elements: checked,
          mismatches,
          maxUlp,
          calcDiff: calc,
          tolerance: want.sample_mask
            ? `bitwise (sampled ${c.sample})`
            : mask
            ? "bitwise (defined entries)"
            : "bitwise",
        });
        if (notes.length) r.message = notes.join("; ");
      }
    } catch (e) {
      r.status = "error";
      r.message = (e as Error).message;
    }
    r.ms = callMs ?? performance.now() - t0;
    results.push(r);
  }
  return results;
}
