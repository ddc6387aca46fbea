/**
 * The GPU benchmark table for bench/RESULTS.md: joins the JSON of tests/gpu/bench.cpp (our CUDA backend) with the JSON
 * of tests/gpu/bench_torch.py (DeepGEMM, cuBLASLt block-scaled FP8 and torch BF16) by (kind, g, m, n, k) and formats a
 * markdown table with ratios, the targets of issue 8, the per-family comparison with DeepGEMM of issue 26 (where
 * bench_torch.py could import deep_gemm; otherwise one line says why not) and the JIT statistics.
 *
 * Usage:
 *   deno run -A bench/gpu_table.ts --ours ours.json --torch torch.json [--warm warm.json]
 *     [--write bench/RESULTS.md] [--out table.md] [--hbm 4.8]
 *
 * `--warm` takes the JSON of a second (warm-cache) bench run: its JIT statistics give the disk-load times.
 * `--write` replaces the region between `<!-- gpu-bench:begin -->` and `<!-- gpu-bench:end -->` of the file (the
 * markers and region are appended when absent); `--out` writes the same markdown to a file of its own.
 *
 * @module
 */
import { benchArgs } from "./_args.ts";

/** A row of tests/gpu/bench.cpp's JSON: one shape timed through our backend (or a failure: `error`). */
export interface OursRow {
  /** "dense", "contiguous", "masked" or "dense-sweep". */
  kind: string;
  g: number;
  m: number;
  n: number;
  k: number;
  /** Median microseconds per call: GPU time with the batch queued behind a spin kernel, or (timing "per-call") as the
   * host issued it. */
  us?: number;
  /** "gpu" or "per-call" (what `us` is; absent in older runs: dense "gpu", grouped "per-call"). */
  timing?: string;
  /** Median microseconds per call as the host issued the batch (includes the host's per-call cost). */
  us_call?: number;
  /** Median host time to issue one call, µs. */
  host_us?: number;
  tflops?: number;
  gbs?: number;
  /** Minimum bytes moved (A real rows, all of B, D real rows as BF16, scales). */
  bytes?: number;
  /**
   * GPU µs of bench.cpp's streaming floor, one kernel that reads and writes exactly `bytes` and nothing else,
   * launched and timed like ours (absent: not measured).
   */
  floor_us?: number;
  /** Which of the floor's variants was fastest ("U4 x16": 4 loads in flight per thread, a grid of 16 CTAs per SM). */
  floor_variant?: string;
  /**
   * Every floor variant's GPU µs by name ("U2 x4" ... "U4 x16"), how the floor depends on the loads a thread and the
   * CTAs resident an SM (the JSON's `floor_residency`); not in the table.
   */
  floor_variants_us?: Record<string, number>;
  /** The kernel configuration (go_ext_fast_last_config) or, for "dense-sweep", the swept GO_CUDA_FAST_CFG. */
  config?: string;
  /** "dense-sweep" only: the configuration the backend reported for the swept string. */
  last_config?: string;
  error?: string;
}

/** A row of tests/gpu/bench_torch.py's JSON. */
export interface TorchRow {
  kind: string;
  g: number;
  m: number;
  n: number;
  k: number;
  /** cuBLASLt block-scaled FP8 (torch._scaled_mm); for grouped shapes a loop of G calls. */
  blockfp8_us?: number;
  blockfp8_tflops?: number;
  blockfp8_method?: string;
  bf16_us?: number;
  bf16_tflops?: number;
  bf16_method?: string;
  bf16_error?: string;
  /**
   * Dense shapes: cuBLASLt FP8 with one scale per tensor (torch._scaled_mm with scalar scales), as it accumulates by
   * default, and with its fast accumulation (`tensorfp8_fast_*`: intermediate sums not promoted to higher precision):
   * the same e4m3 product with no per-block scaling work. `*_error`: the first line of a refusal.
   */
  tensorfp8_us?: number;
  tensorfp8_tflops?: number;
  tensorfp8_error?: string;
  tensorfp8_fast_us?: number;
  tensorfp8_fast_tflops?: number;
  tensorfp8_fast_error?: string;
  /** The first line of cuBLASLt's error where it refused the shape (null or absent: it ran). */
  refused?: string | null;
  error?: string;
  /**
   * DeepGEMM (deep_gemm.fp8_gemm_nt, m_grouped_fp8_gemm_nt_contiguous or m_grouped_fp8_gemm_nt_masked, one call per
   * shape): median GPU µs per call, timed like the baselines.
   */
  deepgemm_us?: number;
  /**
   * The same calls with DeepGEMM's programmatic dependent launch on (`deep_gemm.set_pdl(True)`; its default is off,
   * ours launches with it), where its deep_gemm has the setting. The DeepGEMM column takes the faster of the two.
   */
  deepgemm_pdl_us?: number;
  /** The same batch timed as Python issued it. */
  deepgemm_us_call?: number;
  /** TFLOPS over the same FLOPs as ours (the real rows). */
  deepgemm_tflops?: number;
  /** The function called and its index arguments. */
  deepgemm_method?: string;
  /** Seconds of the shape's first DeepGEMM call (its JIT compile), in bench_torch.py's prepare workers. */
  deepgemm_first_call_s?: number;
  /** The first line of DeepGEMM's error on this shape (a JIT or launch failure); the other shapes still ran. */
  deepgemm_error?: string;
}

/** JIT totals of the runtime-specialised kernels (go_ext_jit_stats), as bench.cpp writes them. */
export interface JitStats {
  compiles: number;
  compile_ms_total: number;
  compile_ms_max: number;
  compile_ms_mean?: number;
  disk_loads: number;
  load_ms_total: number;
  load_ms_max: number;
  load_ms_mean?: number;
  memory_hits?: number;
  aot_launches?: number;
}

/** A bench JSON document (either tool). */
export interface BenchDoc<R> {
  device?: string;
  date?: string;
  torch?: string;
  prepare_ms?: number | null;
  prepare_threads?: number;
  /** false while the run was still going (a timeout cut it short). */
  complete?: boolean;
  /** bench_torch.py: the deep_gemm version it timed (null: it timed none; deepgemm_error says why). */
  deepgemm?: string | null;
  /** bench_torch.py: why it timed no DeepGEMM shape (`import deep_gemm` failed, or --no-deepgemm). */
  deepgemm_error?: string | null;
  jit?: JitStats | null;
  rows: R[];
}

/** Ours and the torch baselines for one shape. */
export interface JoinedRow {
  kind: string;
  g: number;
  m: number;
  n: number;
  k: number;
  ours?: OursRow;
  torch?: TorchRow;
}

/** HBM bandwidth of an H200 in bytes per second (the "% of HBM bound" denominator). */
export const H200_HBM_BYTES_PER_S = 4.8e12;
/** Issue 8: TFLOPS wanted at 4096×7168×16384. */
export const TARGET_BIG_TFLOPS = 1450;
/** Issue 8: % of the HBM bound wanted for the dense M ∈ {64, 128} shapes. */
export const TARGET_SMALL_M_HBM_PERCENT = 70;
/** Issue 26: every dense M ∈ {64, 128} shape within this factor of its streaming floor's time. */
export const TARGET_SMALL_M_OVER_FLOOR = 1.1;

const BEGIN = "<!-- gpu-bench:begin -->";
const END = "<!-- gpu-bench:end -->";

function isObj(x: unknown): x is Record<string, unknown> {
  return typeof x === "object" && x !== null && !Array.isArray(x);
}

/**
 * Parses a bench JSON document and checks that every row has a string `kind` and integer `g`, `m`, `n`, `k`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseBenchJson } from "./gpu_table.ts";
 * const doc = parseBenchJson('{"device":"H200","rows":[{"kind":"dense","g":1,"m":64,"n":576,"k":7168,"us":5}]}');
 * assert.equal(doc.rows[0].n, 576);
 * assert.throws(() => parseBenchJson('{"rows":[{"kind":"dense"}]}'), TypeError);
 * ```
 */
export function parseBenchJson<R extends { kind: string; g: number; m: number; n: number; k: number }>(
  text: string,
): BenchDoc<R> {
  const doc: unknown = JSON.parse(text);
  if (!isObj(doc) || !Array.isArray(doc.rows)) throw new TypeError("bench JSON: an object with a rows array expected");
  doc.rows.forEach((r: unknown, i: number) => {
    if (!isObj(r) || typeof r.kind !== "string") throw new TypeError(`bench JSON: row ${i} has no string kind`);
    for (const f of ["g", "m", "n", "k"]) {
      if (!Number.isInteger(r[f])) throw new TypeError(`bench JSON: row ${i} field ${f} is not an integer`);
    }
  });
  return doc as unknown as BenchDoc<R>;
}

/** The join key of a row: "kind|g|m|n|k". */
export function rowKey(r: { kind: string; g: number; m: number; n: number; k: number }): string {
  return `${r.kind}|${r.g}|${r.m}|${r.n}|${r.k}`;
}

/**
 * Floating-point operations of a shape: 2·rows·N·K with rows = M (dense) or G·m (grouped; masked: the real rows).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { problemFlops } from "./gpu_table.ts";
 * assert.equal(problemFlops({ kind: "dense", g: 1, m: 2, n: 3, k: 4 }), 48);
 * assert.equal(problemFlops({ kind: "masked", g: 2, m: 2, n: 3, k: 4 }), 96);
 * ```
 */
export function problemFlops(r: { kind: string; g: number; m: number; n: number; k: number }): number {
  const rows = r.kind.startsWith("dense") ? r.m : r.g * r.m;
  return 2 * rows * r.n * r.k;
}

/**
 * The bytes a kernel must move at least, as tests/gpu/bench.cpp counts them: real A rows (1 B each), all of B (G·N·K),
 * real D rows (BF16), f32 scales sfa [rows, ⌈K/128⌉] and sfb [G, ⌈N/128⌉, ⌈K/128⌉].
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { problemBytes } from "./gpu_table.ts";
 * // 128 x 128 x 128: A 16384 + B 16384 + D 32768 + sfa 512 + sfb 4
 * assert.equal(problemBytes({ kind: "dense", g: 1, m: 128, n: 128, k: 128 }), 66052);
 * ```
 */
export function problemBytes(r: { kind: string; g: number; m: number; n: number; k: number }): number {
  const dense = r.kind.startsWith("dense");
  const rows = dense ? r.m : r.g * r.m, g = dense ? 1 : r.g;
  const kb = Math.ceil(r.k / 128), nb = Math.ceil(r.n / 128);
  return rows * r.k + g * r.n * r.k + rows * r.n * 2 + rows * kb * 4 + g * nb * kb * 4;
}

/**
 * Joins our rows (all kinds but "dense-sweep") with the torch rows by (kind, g, m, n, k), in our order, then the torch
 * rows we lack.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { joinRows } from "./gpu_table.ts";
 * const j = joinRows(
 *   [{ kind: "dense", g: 1, m: 64, n: 4096, k: 7168, us: 10 }, { kind: "dense-sweep", g: 1, m: 64, n: 4096, k: 7168 }],
 *   [{ kind: "dense", g: 1, m: 64, n: 4096, k: 7168, blockfp8_us: 12 }, { kind: "dense", g: 1, m: 1, n: 1, k: 1 }],
 * );
 * assert.equal(j.length, 2);
 * assert.equal(j[0].torch?.blockfp8_us, 12);
 * assert.equal(j[1].ours, undefined);
 * ```
 */
export function joinRows(ours: OursRow[], torch: TorchRow[]): JoinedRow[] {
  const byKey = new Map<string, TorchRow>();
  for (const t of torch) byKey.set(rowKey(t), t);
  const out: JoinedRow[] = [];
  const seen = new Set<string>();
  for (const o of ours) {
    if (o.kind === "dense-sweep") continue;
    const key = rowKey(o);
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ kind: o.kind, g: o.g, m: o.m, n: o.n, k: o.k, ours: o, torch: byKey.get(key) });
  }
  for (const t of torch) {
    const key = rowKey(t);
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ kind: t.kind, g: t.g, m: t.m, n: t.n, k: t.k, torch: t });
  }
  return out;
}

/** Our TFLOPS for a row (from `tflops`, else from `us`), or undefined where it did not run. */
export function oursTflops(j: JoinedRow): number | undefined {
  const o = j.ours;
  if (!o || o.error || !(typeof o.us === "number" && o.us > 0)) return undefined;
  return typeof o.tflops === "number" ? o.tflops : problemFlops(j) / (o.us * 1e-6) / 1e12;
}

/** A bench_torch.py column's TFLOPS: its `*_tflops`, else from its `*_us`; undefined without a positive time. */
function columnTflops(j: JoinedRow, us: number | undefined, tflops: number | undefined): number | undefined {
  if (!(typeof us === "number" && us > 0)) return undefined;
  return typeof tflops === "number" ? tflops : problemFlops(j) / (us * 1e-6) / 1e12;
}

/** cuBLASLt block-scaled TFLOPS for a row, or undefined where it was refused or not run. */
export function blockTflops(j: JoinedRow): number | undefined {
  return columnTflops(j, j.torch?.blockfp8_us, j.torch?.blockfp8_tflops);
}

/**
 * cuBLASLt FP8 with per-tensor scales for a row (fast: its fast accumulation), or undefined where it was refused or
 * not run.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { tensorTflops } from "./gpu_table.ts";
 * const s = { kind: "dense", g: 1, m: 4096, n: 7168, k: 16384 };
 * const j = { ...s, torch: { ...s, tensorfp8_tflops: 1300, tensorfp8_us: 740, tensorfp8_fast_error: "refused" } };
 * assert.equal(tensorTflops(j), 1300);
 * assert.equal(tensorTflops(j, true), undefined);
 * ```
 */
export function tensorTflops(j: JoinedRow, fast = false): number | undefined {
  const t = j.torch;
  return fast
    ? columnTflops(j, t?.tensorfp8_fast_us, t?.tensorfp8_fast_tflops)
    : columnTflops(j, t?.tensorfp8_us, t?.tensorfp8_tflops);
}

/** torch BF16 TFLOPS for a row, or undefined. */
export function bf16Tflops(j: JoinedRow): number | undefined {
  return columnTflops(j, j.torch?.bf16_us, j.torch?.bf16_tflops);
}

/**
 * DeepGEMM's µs for a row: the faster of its default launch and its launch with programmatic dependent launch, where
 * both were timed; undefined where it failed or was not run.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { deepgemmUs } from "./gpu_table.ts";
 * const s = { kind: "dense", g: 1, m: 64, n: 576, k: 7168 };
 * assert.equal(deepgemmUs({ ...s, torch: { ...s, deepgemm_us: 10, deepgemm_pdl_us: 9 } }), 9);
 * assert.equal(deepgemmUs({ ...s, torch: { ...s, deepgemm_us: 10 } }), 10);
 * assert.equal(deepgemmUs({ ...s, torch: { ...s, deepgemm_error: "JIT failed" } }), undefined);
 * ```
 */
export function deepgemmUs(j: JoinedRow): number | undefined {
  const times = [j.torch?.deepgemm_us, j.torch?.deepgemm_pdl_us].filter((x): x is number =>
    typeof x === "number" && x > 0
  );
  return times.length ? Math.min(...times) : undefined;
}

/** DeepGEMM's TFLOPS for a row (deepgemmUs: the faster launch), or undefined where it failed or was not run. */
export function deepgemmTflops(j: JoinedRow): number | undefined {
  const us = deepgemmUs(j);
  // bench_torch.py's deepgemm_tflops is its default launch's
  return columnTflops(j, us, us === j.torch?.deepgemm_us ? j.torch?.deepgemm_tflops : undefined);
}

/**
 * Whether the rows carry a DeepGEMM column: some torch row has a DeepGEMM time or a DeepGEMM error.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { hasDeepGemm } from "./gpu_table.ts";
 * const s = { kind: "dense", g: 1, m: 64, n: 576, k: 7168 };
 * assert.equal(hasDeepGemm([{ ...s, torch: { ...s, blockfp8_us: 9 } }]), false);
 * assert.equal(hasDeepGemm([{ ...s, torch: { ...s, deepgemm_error: "JIT failed" } }]), true);
 * ```
 */
export function hasDeepGemm(rows: JoinedRow[]): boolean {
  return rows.some((j) => j.torch !== undefined && (j.torch.deepgemm_us !== undefined || !!j.torch.deepgemm_error));
}

/**
 * Percentage of the HBM bound reached: the time the minimum bytes take at `bytesPerS`, over the measured time.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { hbmBoundPercent } from "./gpu_table.ts";
 * assert.equal(hbmBoundPercent(4.8e6, 2, 4.8e12), 50); // 1 µs of traffic in 2 µs
 * ```
 */
export function hbmBoundPercent(bytes: number, us: number, bytesPerS = H200_HBM_BYTES_PER_S): number {
  return (bytes / bytesPerS) / (us * 1e-6) * 100;
}

/**
 * Geometric mean (NaN for an empty list).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { geomean } from "./gpu_table.ts";
 * assert.ok(Math.abs(geomean([1, 4]) - 2) < 1e-12);
 * assert.ok(Number.isNaN(geomean([])));
 * ```
 */
export function geomean(xs: number[]): number {
  if (xs.length === 0) return NaN;
  return Math.exp(xs.reduce((s, x) => s + Math.log(x), 0) / xs.length);
}

/** Median (NaN for an empty list; the mean of the two middle values for an even count). */
export function median(xs: number[]): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b), h = s.length >> 1;
  return s.length % 2 ? s[h] : (s[h - 1] + s[h]) / 2;
}

/** The benchmark families the summary averages over (issue 8's table): "other" for dense shapes outside them. */
export type BenchFamily = "dense M = 4096" | "dense M ∈ {64, 128}" | "grouped" | "other";

/**
 * The family of a shape: dense M = 4096, dense M ∈ {64, 128}, grouped (contiguous or masked), or other.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { benchFamily } from "./gpu_table.ts";
 * assert.equal(benchFamily({ kind: "dense", m: 128 }), "dense M ∈ {64, 128}");
 * assert.equal(benchFamily({ kind: "masked", m: 20 }), "grouped");
 * assert.equal(benchFamily({ kind: "dense", m: 256 }), "other");
 * ```
 */
export function benchFamily(r: { kind: string; m: number }): BenchFamily {
  if (r.kind !== "dense") return "grouped";
  return r.m === 4096 ? "dense M = 4096" : r.m === 64 || r.m === 128 ? "dense M ∈ {64, 128}" : "other";
}

/** The families of issue 26's comparison with DeepGEMM, in its table's order (the table adds "all"). */
export const DEEPGEMM_FAMILIES = [
  "dense M ∈ {64, 128}",
  "dense M = 4096",
  "m-grouped contiguous",
  "m-grouped masked",
] as const;
/** One of {@link DEEPGEMM_FAMILIES}. */
export type DeepGemmFamily = typeof DEEPGEMM_FAMILIES[number];

/**
 * The issue 26 family of a shape (undefined: a dense M outside {64, 128, 4096}, counted under "all" only).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { deepgemmFamily } from "./gpu_table.ts";
 * assert.equal(deepgemmFamily({ kind: "masked", m: 20 }), "m-grouped masked");
 * assert.equal(deepgemmFamily({ kind: "dense", m: 64 }), "dense M ∈ {64, 128}");
 * assert.equal(deepgemmFamily({ kind: "dense", m: 256 }), undefined);
 * ```
 */
export function deepgemmFamily(r: { kind: string; m: number }): DeepGemmFamily | undefined {
  if (r.kind === "contiguous") return "m-grouped contiguous";
  if (r.kind === "masked") return "m-grouped masked";
  const f = benchFamily(r);
  return f === "grouped" || f === "other" ? undefined : f;
}

/** A shape's label: "dense 64×2112×7168" (M×N×K) or "contiguous 4×8192×6144×7168" (G×m×N×K). */
export function shapeLabel(r: { kind: string; g: number; m: number; n: number; k: number }): string {
  return r.kind.startsWith("dense") ? `${r.kind} ${r.m}×${r.n}×${r.k}` : `${r.kind} ${r.g}×${r.m}×${r.n}×${r.k}`;
}

/** A number with one decimal, "—" where missing or not finite. */
export const f1 = (x: number | undefined) => x === undefined || !Number.isFinite(x) ? "—" : x.toFixed(1);
const f2 = (x: number | undefined) => x === undefined || !Number.isFinite(x) ? "—" : x.toFixed(2);
/** Text safe inside a markdown table cell. */
export const cell = (s: string) => s.replaceAll("|", "\\|").replaceAll("\n", " ");
const short = (s: string, n = 60) => s.length > n ? s.slice(0, n - 1) + "…" : s;

/** Bytes of a row: our JSON's `bytes`, else {@link problemBytes}. */
function rowBytes(j: JoinedRow): number {
  return typeof j.ours?.bytes === "number" && j.ours.bytes > 0 ? j.ours.bytes : problemBytes(j);
}

/**
 * The main markdown table: one line per joined shape with our time, TFLOPS, GB/s, % of the HBM bound, cuBLASLt
 * block-scaled TFLOPS and our ratio to it, torch BF16 TFLOPS and our ratio, and our kernel configuration.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { formatTable } from "./gpu_table.ts";
 * const t = formatTable([{
 *   kind: "dense", g: 1, m: 4096, n: 7168, k: 16384,
 *   ours: { kind: "dense", g: 1, m: 4096, n: 7168, k: 16384, us: 650, tflops: 1480, gbs: 400, config: "bn=128" },
 *   torch: { kind: "dense", g: 1, m: 4096, n: 7168, k: 16384, blockfp8_tflops: 1160, blockfp8_us: 830 },
 * }]);
 * assert.match(t, /\| dense 4096×7168×16384 \| 650\.0 \| 1480\.0 \|/);
 * assert.match(t, /1\.28×/);
 * ```
 */
export function formatTable(rows: JoinedRow[], bytesPerS = H200_HBM_BYTES_PER_S, deepgemm = hasDeepGemm(rows)): string {
  const dgHead = deepgemm ? "DeepGEMM TFLOPS | ours / DeepGEMM | " : "";
  const lines = [
    `| shape | ours µs | ours TFLOPS | ours GB/s | % of HBM bound | ${dgHead}cuBLASLt block-scaled TFLOPS | ` +
    "ours / cuBLASLt | torch BF16 TFLOPS | ours / BF16 | streaming floor µs (% of HBM bound) | " +
    "ours per call µs (host µs) | our kernel config |",
    `|---|---|---|---|---|${deepgemm ? "---|---|" : ""}---|---|---|---|---|---|---|`,
  ];
  for (const j of rows) {
    const o = j.ours, t = j.torch;
    const ot = oursTflops(j), bt = blockTflops(j), ht = bf16Tflops(j), dt = deepgemmTflops(j);
    let us = "—", tf = "—", gbs = "—", hbm = "—";
    if (o && o.error) us = `error: ${cell(short(o.error))}`;
    else if (o && ot !== undefined && o.us) {
      us = o.us.toFixed(1);
      tf = ot.toFixed(1);
      gbs = f1(typeof o.gbs === "number" ? o.gbs : rowBytes(j) / (o.us * 1e-6) / 1e9);
      hbm = `${hbmBoundPercent(rowBytes(j), o.us, bytesPerS).toFixed(1)} %`;
    } else if (!o) us = "not run";
    const loop = j.kind !== "dense" && bt !== undefined ? " (loop of G calls)" : "";
    let block = bt !== undefined ? `${bt.toFixed(1)}${loop}` : "—";
    if (t?.refused) block = `refused: ${cell(short(t.refused))}`;
    else if (t?.error && bt === undefined) block = `error: ${cell(short(t.error))}`;
    else if (!t) block = "not run";
    const bf = ht !== undefined ? f1(ht) : t?.bf16_error ? `error: ${cell(short(t.bf16_error))}` : "—";
    const r1 = ot !== undefined && bt !== undefined ? `${f2(ot / bt)}×` : "—";
    const r2 = ot !== undefined && ht !== undefined ? `${f2(ot / ht)}×` : "—";
    const floor = o && typeof o.floor_us === "number" && o.floor_us > 0
      ? `${o.floor_us.toFixed(1)} (${hbmBoundPercent(rowBytes(j), o.floor_us, bytesPerS).toFixed(1)} %)`
      : "—";
    const call = o && typeof o.us_call === "number" && o.us_call > 0
      ? `${o.us_call.toFixed(1)}${typeof o.host_us === "number" && o.host_us > 0 ? ` (${o.host_us.toFixed(1)})` : ""}`
      : "—";
    let dg = "";
    if (deepgemm) {
      const dcell = dt !== undefined
        ? dt.toFixed(1)
        : t?.deepgemm_error
        ? `error: ${cell(short(t.deepgemm_error))}`
        : t
        ? "—"
        : "not run";
      dg = `${dcell} | ${ot !== undefined && dt !== undefined ? `${f2(ot / dt)}×` : "—"} | `;
    }
    lines.push(
      `| ${
        shapeLabel(j)
      } | ${us} | ${tf} | ${gbs} | ${hbm} | ${dg}${block} | ${r1} | ${bf} | ${r2} | ${floor} | ${call} | ${
        cell(o?.config ?? "")
      } |`,
    );
  }
  return lines.join("\n");
}

/** A geometric mean of per-shape ratios, the number of shapes both sides ran, and the shape of the lowest ratio. */
export interface RatioStats {
  value: number;
  count: number;
  worst?: { ratio: number; label: string };
}

/**
 * The geometric mean of num(j) / den(j) over the rows where both are defined, their count, and the lowest ratio.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ratioStats } from "./gpu_table.ts";
 * const r = (m: number, a?: number) => ({ kind: "dense", g: 1, m, n: 8, k: 8, a });
 * const s = ratioStats([r(1, 4), r(2, 1), r(3)], (j) => j.a, () => 2);
 * assert.ok(Math.abs(s.value - 1) < 1e-12); // √(2 · 0.5)
 * assert.equal(s.count, 2);
 * assert.deepEqual(s.worst, { ratio: 0.5, label: "dense 2×8×8" });
 * ```
 */
export function ratioStats<J extends { kind: string; g: number; m: number; n: number; k: number }>(
  rows: J[],
  num: (j: J) => number | undefined,
  den: (j: J) => number | undefined,
): RatioStats {
  const xs: number[] = [];
  let worst: RatioStats["worst"];
  for (const j of rows) {
    const a = num(j), b = den(j);
    if (a === undefined || b === undefined) continue;
    xs.push(a / b);
    if (!worst || a / b < worst.ratio) worst = { ratio: a / b, label: shapeLabel(j) };
  }
  return { value: geomean(xs), count: xs.length, ...(worst ? { worst } : {}) };
}

/** Figures behind the summary lines. */
export interface Summary {
  /** Geometric mean of ours/cuBLASLt over the shapes both ran, and how many. */
  geoAll: RatioStats;
  /** Same over the dense M = 4096 shapes. */
  geoBigM: RatioStats;
  /** Same over the dense M ∈ {64, 128} shapes. */
  geoSmallM: RatioStats;
  /** Same over the grouped shapes (cuBLASLt: a loop of G calls). */
  geoGrouped: RatioStats;
  /** Our TFLOPS at dense 4096×7168×16384 (undefined: not run). */
  bigTflops?: number;
  /** DeepGEMM's and cuBLASLt's TFLOPS at the same shape (undefined: not run, or failed). */
  bigDeepGemmTflops?: number;
  bigBlockTflops?: number;
  /** Min and median % of the HBM bound over the dense M ∈ {64, 128} shapes we ran. */
  smallMHbm: { min: number; median: number; count: number };
  /**
   * The same over the streaming floor of those shapes (where measured), how many shapes' floors reach the target,
   * the median of our time over the floor's and how many shapes are within TARGET_SMALL_M_OVER_FLOOR of it; and
   * DeepGEMM's time over the floor's (median, best, how many within; count 0: no DeepGEMM column).
   */
  smallMFloor: {
    min: number;
    median: number;
    count: number;
    atTarget: number;
    oursOverFloor: number;
    oursWithin: number;
    deepGemm: { median: number; best: number; within: number; count: number };
  };
  /**
   * Our time over the streaming floor's in each other family of issue 26, over its shapes with a floor (grouped ones
   * too, where bench.cpp timed the floor after every shape): how close each family runs to moving its minimum bytes,
   * and DeepGEMM's time over the same floors (count 0: no DeepGEMM column). A family without a floor is left out.
   */
  familyFloor: FamilyFloor[];
}

/** One family's times over their streaming floors (Summary.familyFloor). */
export interface FamilyFloor {
  family: DeepGemmFamily;
  count: number;
  ours: { min: number; median: number; max: number };
  deepGemm: { min: number; median: number; count: number };
}

/** The streaming floor's GPU µs of a row (undefined: not timed). */
function floorUs(j: JoinedRow): number | undefined {
  const f = j.ours?.floor_us;
  return typeof f === "number" && f > 0 ? f : undefined;
}

/** Our time and DeepGEMM's over the streaming floor's, each over the rows that have both. */
function timesOverFloor(rows: JoinedRow[]): { ours: number[]; deepGemm: number[] } {
  const ours: number[] = [], deepGemm: number[] = [];
  for (const j of rows) {
    const f = floorUs(j), us = j.ours?.us;
    if (f === undefined || typeof us !== "number") continue;
    ours.push(us / f);
    const d = deepgemmUs(j);
    if (d !== undefined) deepGemm.push(d / f);
  }
  return { ours, deepGemm };
}

/** The row of issue 8's headline shape, dense 4096×7168×16384, where the rows have it. */
function bigRow(rows: JoinedRow[]): JoinedRow | undefined {
  return rows.find((j) => j.kind === "dense" && j.m === 4096 && j.n === 7168 && j.k === 16384);
}

/**
 * Computes the summary figures from joined rows.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { summarize } from "./gpu_table.ts";
 * const s = summarize([
 *   { kind: "dense", g: 1, m: 64, n: 128, k: 128,
 *     ours: { kind: "dense", g: 1, m: 64, n: 128, k: 128, us: 1, tflops: 2, bytes: 2.4e6 },
 *     torch: { kind: "dense", g: 1, m: 64, n: 128, k: 128, blockfp8_us: 2, blockfp8_tflops: 1 } },
 * ]);
 * assert.equal(s.geoSmallM.value, 2);
 * assert.equal(s.smallMHbm.min, 50);
 * ```
 */
export function summarize(rows: JoinedRow[], bytesPerS = H200_HBM_BYTES_PER_S): Summary {
  const ratios = (pred: (j: JoinedRow) => boolean) => ratioStats(rows.filter(pred), oursTflops, blockTflops);
  const big = bigRow(rows);
  const smallM = rows.filter((j) => benchFamily(j) === "dense M ∈ {64, 128}" && oursTflops(j) !== undefined);
  const hbm = smallM.map((j) => hbmBoundPercent(rowBytes(j), j.ours!.us!, bytesPerS));
  const floor = smallM.flatMap((j) => {
    const f = floorUs(j);
    return f === undefined ? [] : [hbmBoundPercent(rowBytes(j), f, bytesPerS)];
  });
  const { ours: over, deepGemm: dgOver } = timesOverFloor(smallM);
  const familyFloor = DEEPGEMM_FAMILIES.filter((f) => f !== "dense M ∈ {64, 128}").flatMap((family): FamilyFloor[] => {
    const { ours, deepGemm: dg } = timesOverFloor(rows.filter((j) => deepgemmFamily(j) === family));
    return ours.length
      ? [{
        family,
        count: ours.length,
        ours: { min: Math.min(...ours), median: median(ours), max: Math.max(...ours) },
        deepGemm: { min: dg.length ? Math.min(...dg) : NaN, median: median(dg), count: dg.length },
      }]
      : [];
  });
  return {
    familyFloor,
    geoAll: ratios(() => true),
    geoBigM: ratios((j) => benchFamily(j) === "dense M = 4096"),
    geoSmallM: ratios((j) => benchFamily(j) === "dense M ∈ {64, 128}"),
    geoGrouped: ratios((j) => benchFamily(j) === "grouped"),
    bigTflops: big ? oursTflops(big) : undefined,
    bigDeepGemmTflops: big ? deepgemmTflops(big) : undefined,
    bigBlockTflops: big ? blockTflops(big) : undefined,
    smallMHbm: { min: hbm.length ? Math.min(...hbm) : NaN, median: median(hbm), count: hbm.length },
    smallMFloor: {
      min: floor.length ? Math.min(...floor) : NaN,
      median: median(floor),
      count: floor.length,
      atTarget: floor.filter((p) => p >= TARGET_SMALL_M_HBM_PERCENT).length,
      oursOverFloor: median(over),
      oursWithin: over.filter((r) => r <= TARGET_SMALL_M_OVER_FLOOR).length,
      deepGemm: {
        median: median(dgOver),
        best: dgOver.length ? Math.min(...dgOver) : NaN,
        within: dgOver.filter((r) => r <= TARGET_SMALL_M_OVER_FLOOR).length,
        count: dgOver.length,
      },
    },
  };
}

/** One line of issue 26's family table. */
export interface FamilyComparison {
  family: DeepGemmFamily | "all";
  /** Shapes of the family in the joined rows (each ratio says over how many of them both sides ran). */
  shapes: number;
  oursOverDeepGemm: RatioStats;
  oursOverBlock: RatioStats;
  deepgemmOverBlock: RatioStats;
}

/**
 * Issue 26's comparison per family ({@link DEEPGEMM_FAMILIES}, then "all"): the geometric means of ours / DeepGEMM,
 * ours / cuBLASLt and DeepGEMM / cuBLASLt (TFLOPS ratios) and the worst shape of ours / DeepGEMM.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { compareFamilies } from "./gpu_table.ts";
 * const s = { kind: "masked", g: 6, m: 20, n: 4096, k: 2048 };
 * const f = compareFamilies([{ ...s, ours: { ...s, us: 1, tflops: 90 }, torch: { ...s, deepgemm_us: 1, deepgemm_tflops: 100 } }]);
 * assert.deepEqual(f.map((x) => [x.family, x.shapes]), [
 *   ["dense M ∈ {64, 128}", 0], ["dense M = 4096", 0], ["m-grouped contiguous", 0], ["m-grouped masked", 1], ["all", 1],
 * ]);
 * assert.ok(Math.abs(f[3].oursOverDeepGemm.value - 0.9) < 1e-12);
 * assert.equal(f[3].oursOverBlock.count, 0);
 * ```
 */
export function compareFamilies(rows: JoinedRow[]): FamilyComparison[] {
  const families: (DeepGemmFamily | "all")[] = [...DEEPGEMM_FAMILIES, "all"];
  return families.map((family) => {
    const fam = family === "all" ? rows : rows.filter((j) => deepgemmFamily(j) === family);
    return {
      family,
      shapes: fam.length,
      oursOverDeepGemm: ratioStats(fam, oursTflops, deepgemmTflops),
      oursOverBlock: ratioStats(fam, oursTflops, blockTflops),
      deepgemmOverBlock: ratioStats(fam, deepgemmTflops, blockTflops),
    };
  });
}

/**
 * Issue 26's table: | family | shapes | ours / DeepGEMM | ours / cuBLASLt | DeepGEMM / cuBLASLt | worst ours / DeepGEMM |,
 * geometric means with "(k of n)" where only k of the family's n shapes ran on both sides.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { formatFamilies } from "./gpu_table.ts";
 * const none = { value: NaN, count: 0 };
 * const t = formatFamilies([{
 *   family: "all", shapes: 2, oursOverBlock: none, deepgemmOverBlock: none,
 *   oursOverDeepGemm: { value: 1.25, count: 1, worst: { ratio: 1.25, label: "dense 64×576×7168" } },
 * }]);
 * assert.match(t, /\| all \| 2 \| 1\.250× \(1 of 2\) \| — \| — \| 1\.25× \(dense 64×576×7168\) \|$/);
 * ```
 */
export function formatFamilies(fams: FamilyComparison[]): string {
  const geo = (r: RatioStats, shapes: number) =>
    r.count === 0 ? "—" : `${r.value.toFixed(3)}×${r.count < shapes ? ` (${r.count} of ${shapes})` : ""}`;
  const lines = [
    "| family | shapes | ours / DeepGEMM | ours / cuBLASLt | DeepGEMM / cuBLASLt | worst ours / DeepGEMM |",
    "|---|---|---|---|---|---|",
  ];
  for (const f of fams) {
    const w = f.oursOverDeepGemm.worst;
    lines.push(
      `| ${f.family} | ${f.shapes} | ${geo(f.oursOverDeepGemm, f.shapes)} | ${geo(f.oursOverBlock, f.shapes)} | ` +
        `${geo(f.deepgemmOverBlock, f.shapes)} | ${w ? `${w.ratio.toFixed(2)}× (${w.label})` : "—"} |`,
    );
  }
  return lines.join("\n");
}

/**
 * The sweep section: for "dense-sweep" rows, a table shape × swept configuration with TFLOPS, led by the heuristic's
 * own configuration (the same run's "dense" row of the shape, where there is one), the best configuration per shape
 * in bold and named in the last column. Empty string when there are no sweep rows.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { formatSweep } from "./gpu_table.ts";
 * const r = (config: string, tflops: number) => ({ kind: "dense-sweep", g: 1, m: 64, n: 4096, k: 7168, config, tflops, us: 1 });
 * const s = formatSweep([r("bn=64", 200), r("bn=128", 250)]);
 * assert.match(s, /\| dense 64×4096×7168 \| 200\.0 \| \*\*250\.0\*\* \| bn=128 \|/);
 * const withHeuristic = formatSweep([{ ...r("", 300), kind: "dense" }, r("bn=64", 200)]);
 * assert.match(withHeuristic, /\| dense 64×4096×7168 \| \*\*300\.0\*\* \| 200\.0 \| heuristic \|/);
 * assert.equal(formatSweep([]), "");
 * ```
 */
export function formatSweep(rows: OursRow[]): string {
  const sweep = rows.filter((r) => r.kind === "dense-sweep");
  if (sweep.length === 0) return "";
  const HEURISTIC = "heuristic";
  const dense = new Map(rows.filter((r) => r.kind === "dense").map((r) => [rowKey(r), r]));
  const sweptKeys = new Set(sweep.map((r) => rowKey({ ...r, kind: "dense" })));
  const configs: string[] = [...sweptKeys].some((k) => dense.has(k)) ? [HEURISTIC] : [];
  const shapes = new Map<string, Map<string, OursRow>>();
  const labels = new Map<string, string>();
  for (const r of sweep) {
    const c = r.config ?? "";
    if (!configs.includes(c)) configs.push(c);
    const key = rowKey({ ...r, kind: "dense" });
    if (!shapes.has(key)) {
      shapes.set(key, new Map());
      labels.set(key, shapeLabel({ ...r, kind: "dense" }));
      const own = dense.get(key);
      if (own) shapes.get(key)!.set(HEURISTIC, own);
    }
    shapes.get(key)!.set(c, r);
  }
  const tf = (r: OursRow | undefined) =>
    r && !r.error && typeof r.us === "number" && r.us > 0
      ? (typeof r.tflops === "number" ? r.tflops : problemFlops(r) / (r.us * 1e-6) / 1e12)
      : undefined;
  const lines = [
    `| shape | ${configs.map((c) => c === HEURISTIC ? c : `\`${cell(c)}\``).join(" | ")} | best |`,
    `|---|${configs.map(() => "---|").join("")}---|`,
  ];
  for (const [key, byCfg] of shapes) {
    let best: string | undefined, bestTf = -Infinity;
    for (const c of configs) {
      const v = tf(byCfg.get(c));
      if (v !== undefined && v > bestTf) [best, bestTf] = [c, v];
    }
    const cells = configs.map((c) => {
      const r = byCfg.get(c), v = tf(r);
      if (v === undefined) return r?.error ? `error: ${cell(short(r.error, 40))}` : "—";
      return c === best ? `**${v.toFixed(1)}**` : v.toFixed(1);
    });
    lines.push(`| ${labels.get(key)} | ${cells.join(" | ")} | ${best === undefined ? "—" : cell(best)} |`);
  }
  return lines.join("\n");
}

/** Inputs of {@link formatReport}. */
export interface ReportInput {
  ours: BenchDoc<OursRow>;
  torch?: BenchDoc<TorchRow>;
  /** A warm-cache run of bench.cpp: its JIT disk loads give the warm load times. */
  warm?: BenchDoc<OursRow>;
  /** Date line (default: the ours document's date, else today). */
  date?: string;
  bytesPerS?: number;
}

const ms = (x: number | undefined) => x === undefined || !Number.isFinite(x) ? "—" : `${x.toFixed(1)} ms`;
const jitMean = (total: number, n: number, given?: number) => given ?? (n > 0 ? total / n : NaN);

/**
 * The whole markdown region: heading, table, summary lines, sweep section.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { formatReport } from "./gpu_table.ts";
 * const md = formatReport({
 *   ours: { device: "NVIDIA H200", date: "2026-11-30", rows: [{ kind: "dense", g: 1, m: 64, n: 4096, k: 7168, us: 20 }] },
 * });
 * assert.match(md, /NVIDIA H200/);
 * assert.match(md, /\| dense 64×4096×7168 \| 20\.0 \|/);
 * ```
 */
export function formatReport(input: ReportInput): string {
  const bw = input.bytesPerS ?? H200_HBM_BYTES_PER_S;
  const joined = joinRows(input.ours.rows, input.torch?.rows ?? []);
  const s = summarize(joined, bw);
  const date = input.date ?? (input.ours.date ? input.ours.date.slice(0, 10) : new Date().toISOString().slice(0, 10));
  const device = input.ours.device ?? input.torch?.device ?? "unknown device";
  const geo = (g: { value: number; count: number }) =>
    g.count ? `**${g.value.toFixed(3)}×** over ${g.count} shapes` : "— (no shape ran on both)";
  const dg = hasDeepGemm(joined);
  const out: string[] = [];
  out.push(
    dg
      ? "## GPU benchmark: fast FP8 GEMM vs DeepGEMM, cuBLASLt block-scaled FP8 and torch BF16 (issues 8, 26)"
      : "## GPU benchmark: fast FP8 GEMM vs cuBLASLt block-scaled FP8 and torch BF16 (issue 8)",
  );
  out.push("");
  out.push(
    `${date}, ${device}${input.torch?.torch ? `, torch ${input.torch.torch}` : ""}. ` +
      "Ours: `tests/gpu/bench.cpp` (C ABI by dlopen, GO_CUDA_ASYNC=1, CUDA events on the default stream, median of " +
      "≥ 20 batches, inputs rotated over > 200 MB). Dense shapes, ours and the baselines: GPU time, the batch queued " +
      "behind a spin kernel (bench.cpp) or torch.cuda._sleep (bench_torch.py) so that the events time the kernels " +
      'back to back; "per call" is the same batch timed as the host issues it, with the host\'s issue time per call. ' +
      groupedTiming(input.ours.rows) +
      "Baselines: `tests/gpu/bench_torch.py` (`torch._scaled_mm` 1×128 / 128×128 scales; grouped " +
      "shapes as a loop of G calls; BF16 `a @ b.t()` or `torch._grouped_mm`" +
      (joined.some((j) => tensorTflops(j) !== undefined || tensorTflops(j, true) !== undefined)
        ? "; dense shapes also `torch._scaled_mm` with one f32 scale per tensor, cuBLASLt's default accumulation and " +
          "its fast accumulation (`CUBLASLT_MATMUL_DESC_FAST_ACCUM`), in the per-tensor line below the table"
        : "") +
      "). " +
      (dg ? deepgemmMethod(input.torch?.deepgemm, joined.some((j) => j.torch?.deepgemm_pdl_us !== undefined)) : "") +
      "Masked: masked_m = m in every group, " +
      "FLOPs and bytes of the real rows. % of HBM bound = minimum bytes / " +
      `${(bw / 1e12).toFixed(1)} TB/s over our time. Streaming floor: bench.cpp's \`stream_floor_kernel\`, ` +
      "one kernel that reads and writes exactly the minimum bytes and nothing else (masked: the real rows of A, its " +
      "scales and D as one run from each tensor's start), launched (programmatic dependent " +
      "launch) and timed like ours on the same rotating inputs, the fastest of its six variants (2 or 4 16-byte loads " +
      "in flight per thread, a grid of 4, 8 or 16 CTAs of 256 threads per SM): what moving those bytes costs with one " +
      "kernel per call, and the % of the HBM bound that leaves within reach. Generated by `bench/gpu_table.ts`.",
  );
  if (input.ours.complete === false) {
    out.push("");
    out.push(`**Incomplete:** the bench.cpp run stopped early (timeout?) after ${input.ours.rows.length} rows.`);
  }
  if (input.torch?.complete === false) {
    out.push("");
    out.push(`**Incomplete:** the bench_torch.py run stopped early (timeout?) after ${input.torch.rows.length} rows.`);
  }
  out.push("");
  out.push(formatTable(joined, bw, dg));
  out.push("");
  const fams = compareFamilies(joined);
  if (dg) {
    out.push(
      "By family (issue 26): geometric means of the per-shape TFLOPS ratios over the shapes both sides ran; worst: " +
        "the shape with the lowest ours / DeepGEMM.",
    );
    out.push("");
    out.push(formatFamilies(fams));
    out.push("");
  }
  out.push(
    `- geometric mean ours / cuBLASLt block-scaled: ${geo(s.geoAll)}; dense M = 4096: ${geo(s.geoBigM)}; ` +
      `dense M ∈ {64, 128}: ${geo(s.geoSmallM)}; grouped (cuBLASLt as a loop of G calls): ${geo(s.geoGrouped)}`,
  );
  out.push(dg ? deepgemmLine(fams, joined, geo) : `- ours / DeepGEMM: not measured (${noDeepGemmReason(input.torch)})`);
  const tensorLine = tensorScaledLine(joined);
  if (tensorLine) out.push(tensorLine);
  const tf = (x: number | undefined) => x === undefined ? "—" : `**${x.toFixed(1)} TFLOPS**`;
  out.push(
    `- 4096×7168×16384: ${s.bigTflops === undefined ? "not run" : tf(s.bigTflops)} ` +
      `(target ≥ ${TARGET_BIG_TFLOPS}: ${
        s.bigTflops === undefined ? "—" : s.bigTflops >= TARGET_BIG_TFLOPS ? "met" : "not met"
      })` +
      (dg ? `; DeepGEMM ${tf(s.bigDeepGemmTflops)}, cuBLASLt ${tf(s.bigBlockTflops)}` : ""),
  );
  out.push(
    `- % of HBM bound over the dense M ∈ {64, 128} shapes: ${
      s.smallMHbm.count
        ? `min **${s.smallMHbm.min.toFixed(1)} %**, median **${
          s.smallMHbm.median.toFixed(1)
        } %** over ${s.smallMHbm.count}`
        : "—"
    } (target ≥ ${TARGET_SMALL_M_HBM_PERCENT} %: ${
      s.smallMHbm.count === 0
        ? "—"
        : s.smallMHbm.min >= TARGET_SMALL_M_HBM_PERCENT
        ? "met by every shape"
        : s.smallMHbm.median >= TARGET_SMALL_M_HBM_PERCENT
        ? "met by the median, not by every shape"
        : "not met"
    })`,
  );
  if (s.smallMFloor.count) {
    const f = s.smallMFloor;
    out.push(
      `- the streaming floor of the same ${f.count} shapes (one kernel moving exactly the minimum bytes, launched and ` +
        `timed like ours): min **${f.min.toFixed(1)} %**, median **${f.median.toFixed(1)} %** of the HBM bound; ` +
        `${f.atTarget} of ${f.count} reach ${TARGET_SMALL_M_HBM_PERCENT} %; our time over the floor's, median ` +
        `**${f.oursOverFloor.toFixed(2)}×**, ${f.oursWithin} of ${f.count} within ${TARGET_SMALL_M_OVER_FLOOR}× ` +
        `(issue 26's target)` +
        (f.deepGemm.count
          ? `; DeepGEMM's time over the floor's, median **${f.deepGemm.median.toFixed(2)}×**, best ` +
            `**${f.deepGemm.best.toFixed(2)}×**, ${f.deepGemm.within} of ${f.deepGemm.count} within ` +
            `${TARGET_SMALL_M_OVER_FLOOR}×`
          : ""),
    );
  }
  for (const f of s.familyFloor) {
    out.push(
      `- ${f.family}, our time over the streaming floor's: median **${f.ours.median.toFixed(2)}×** ` +
        `(${f.ours.min.toFixed(2)}–${f.ours.max.toFixed(2)}×) over ${f.count}` +
        (f.deepGemm.count
          ? `; DeepGEMM's median **${f.deepGemm.median.toFixed(2)}×** (best ${f.deepGemm.min.toFixed(2)}×) over ` +
            `${f.deepGemm.count}`
          : ""),
    );
  }
  const j = input.ours.jit, w = input.warm?.jit;
  if (j) {
    const loads = w && w.disk_loads > 0 ? w : j.disk_loads > 0 ? j : undefined;
    // A first run that compiled nothing found every kernel in a disk cache an earlier run on the machine had filled:
    // it has no cold compile times to report.
    const first = j.compiles === 0
      ? `- JIT (first run): nothing compiled, ${j.disk_loads} kernels loaded from a disk cache an earlier run filled`
      : `- JIT (cold run): ${j.compiles} compiles, mean ${
        ms(jitMean(j.compile_ms_total, j.compiles, j.compile_ms_mean))
      }, max ${ms(j.compile_ms_max)}`;
    out.push(
      first +
        (typeof input.ours.prepare_ms === "number"
          ? `; parallel prepare ${ms(input.ours.prepare_ms)} wall on ${input.ours.prepare_threads ?? "?"} threads`
          : "") +
        `; warm loads from the disk cache${loads === w && w ? " (second run)" : loads ? " (same run)" : ""}: ` +
        (loads
          ? `${loads.disk_loads}, mean ${ms(jitMean(loads.load_ms_total, loads.disk_loads, loads.load_ms_mean))}, max ${
            ms(loads.load_ms_max)
          }`
          : "none recorded") +
        (w ? `; warm run: ${w.compiles} compiles, ${w.memory_hits ?? 0} memory hits` : ""),
    );
  } else {
    out.push("- JIT: no statistics (go_ext_jit_stats not exported by this backend)");
  }
  out.push(`- device: ${device}; date: ${date}`);
  const sweep = formatSweep(input.ours.rows);
  if (sweep) {
    out.push("");
    out.push("### Configuration sweep (GO_CUDA_FAST_CFG, dense shapes, TFLOPS; best per shape in bold)");
    out.push("");
    out.push(sweep);
  }
  return out.join("\n") + "\n";
}

/**
 * Replaces the text between the `<!-- gpu-bench:begin -->` and `<!-- gpu-bench:end -->` lines (or the markers given;
 * markers kept) by `region`; appends the markers and region at the end when the markers are absent.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { replaceRegion } from "./gpu_table.ts";
 * const doc = "# R\n<!-- gpu-bench:begin -->\nold\n<!-- gpu-bench:end -->\ntail\n";
 * assert.equal(replaceRegion(doc, "new\n"), "# R\n<!-- gpu-bench:begin -->\nnew\n<!-- gpu-bench:end -->\ntail\n");
 * assert.equal(replaceRegion("# R\n", "x\n"), "# R\n\n<!-- gpu-bench:begin -->\nx\n<!-- gpu-bench:end -->\n");
 * ```
 */
export function replaceRegion(text: string, region: string, begin = BEGIN, end = END): string {
  const body = region.endsWith("\n") ? region : region + "\n";
  const b = text.indexOf(begin), e = b < 0 ? -1 : text.indexOf(end, b + begin.length);
  if (b >= 0 && e >= 0) {
    const start = text.indexOf("\n", b);
    return text.slice(0, start + 1) + body + text.slice(e);
  }
  const base = text.length === 0 || text.endsWith("\n") ? text : text + "\n";
  return `${base}${base.length ? "\n" : ""}${begin}\n${body}${end}\n`;
}

/**
 * Writes `region` into the file at `path` between its markers ({@link replaceRegion}; a missing file is created),
 * and says so on stderr.
 */
export async function writeRegion(path: string, region: string, begin = BEGIN, end = END): Promise<void> {
  let text = "";
  try {
    text = await Deno.readTextFile(path);
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
  }
  await Deno.writeTextFile(path, replaceRegion(text, region, begin, end));
  console.error(`updated ${path}`);
}

async function readDoc<R extends { kind: string; g: number; m: number; n: number; k: number }>(
  path: string | undefined,
  what: string,
): Promise<BenchDoc<R> | undefined> {
  if (!path) return undefined;
  try {
    return parseBenchJson<R>(await Deno.readTextFile(path));
  } catch (e) {
    console.error(`${what} ${path}: ${e instanceof Error ? e.message : e} (ignored)`);
    return undefined;
  }
}

async function main() {
  const usage = "usage: deno run -A bench/gpu_table.ts --ours ours.json [--torch torch.json] [--warm warm.json] " +
    "[--write bench/RESULTS.md] [--out table.md] [--hbm TB/s]";
  const { values } = benchArgs(usage, {
    options: {
      ours: { type: "string" },
      torch: { type: "string" },
      warm: { type: "string" },
      write: { type: "string" },
      out: { type: "string" },
      hbm: { type: "string", default: "4.8" },
    },
  });
  if (!values.ours) {
    console.error(usage);
    Deno.exit(2);
  }
  const ours = await readDoc<OursRow>(values.ours, "--ours");
  if (!ours) Deno.exit(1);
  const torch = await readDoc<TorchRow>(values.torch, "--torch");
  const warm = await readDoc<OursRow>(values.warm, "--warm");
  const bytesPerS = Number(values.hbm) * 1e12;
  if (!(bytesPerS > 0)) {
    console.error(`--hbm ${values.hbm}: a positive number of TB/s expected`);
    Deno.exit(2);
  }
  const md = formatReport({ ours, torch, warm, bytesPerS });
  console.log(md);
  if (values.out) await Deno.writeTextFile(values.out, md);
  if (values.write) await writeRegion(values.write, md);
}

if (import.meta.main) await main();

/** How the table's grouped rows were timed, from the rows' `timing` (older runs: grouped calls per call). */
function groupedTiming(rows: OursRow[]): string {
  const grouped = rows.filter((r) => (r.kind === "contiguous" || r.kind === "masked") && r.us !== undefined);
  const perCall = grouped.filter((r) => (r.timing ?? "per-call") === "per-call").length;
  const baselines = "the baselines GPU time like the dense ones (the loop of G calls queued behind the sleep, so " +
    "Python's per-call cost is not counted against them). ";
  if (grouped.length > 0 && perCall === 0) {
    return "Grouped shapes: ours GPU time like the dense ones (each call checks its index tensor on the device and " +
      "does not wait for the GPU); " + baselines;
  }
  return `Grouped shapes: ours per call as issued where timed so (${perCall} of ${grouped.length}; each such call ` +
    "copied its index tensor to the host for validation, which waits for the previous call); " + baselines;
}

/**
 * The report's sentence on how DeepGEMM was called and timed (bench_torch.py; `version`: its deep_gemm; `pdl`: some
 * row has its time with programmatic dependent launch).
 */
function deepgemmMethod(version: string | null | undefined, pdl: boolean): string {
  const name = version ? `DeepGEMM ${version}` : "DeepGEMM";
  return `${name} (bench_torch.py, timed like the baselines): \`deep_gemm.fp8_gemm_nt\`, ` +
    "`m_grouped_fp8_gemm_nt_contiguous` (m_indices, the group of each row) and `m_grouped_fp8_gemm_nt_masked` " +
    "(masked_m = expected_m = m), one call per shape on bench.cpp's operand layouts, FP32 scales (A 1×128, put into " +
    "DeepGEMM's MN-major TMA-aligned layout once per input set, so the timed call is the GEMM kernel alone; B " +
    "128×128), BF16 out, recipe (1, 128, 128), each kernel JIT-compiled before timing; " +
    (pdl
      ? "timed as DeepGEMM launches by default (without programmatic dependent launch) and with it on " +
        "(`deep_gemm.set_pdl(True)`), as ours launches: its cells give the faster of the two. "
      : "timed only as DeepGEMM launches by default, without programmatic dependent launch (`deep_gemm.set_pdl`, " +
        "off unless set), where ours launches with it. ");
}

/** The `- ours / DeepGEMM` summary line: the geometric mean overall and per family, the worst shape, the failures. */
function deepgemmLine(
  fams: FamilyComparison[],
  rows: JoinedRow[],
  geo: (g: { value: number; count: number }) => string,
): string {
  const all = fams.find((f) => f.family === "all")!.oursOverDeepGemm;
  const parts = fams.filter((f) => f.family !== "all" && f.shapes > 0).map((f) =>
    `${f.family}: ${geo(f.oursOverDeepGemm)}`
  );
  const failed = rows.filter((j) => j.torch?.deepgemm_error).length;
  return `- ours / DeepGEMM (geometric mean of per-shape TFLOPS ratios): ${geo(all)}` +
    (parts.length ? `; ${parts.join("; ")}` : "") +
    (all.worst ? `; worst **${all.worst.ratio.toFixed(2)}×** at ${all.worst.label}` : "") +
    (failed ? `; DeepGEMM failed on ${failed} shape${failed === 1 ? "" : "s"} (see the table)` : "");
}

/** One dense family against cuBLASLt's per-tensor-scaled FP8 (default accumulation, then fast accumulation). */
export interface TensorScaledComparison {
  family: DeepGemmFamily;
  oursOver: [RatioStats, RatioStats];
  deepgemmOver: [RatioStats, RatioStats];
}

/**
 * Ours and DeepGEMM against cuBLASLt FP8 with one scale per tensor, per dense family (geometric means of TFLOPS
 * ratios): how much of the unscaled product's speed each keeps while doing the 1×128 / 128×128 promotion. Families
 * where no shape has the per-tensor time are left out.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { tensorScaledComparison } from "./gpu_table.ts";
 * const s = { kind: "dense", g: 1, m: 4096, n: 7168, k: 16384 };
 * const [c] = tensorScaledComparison([{ ...s, ours: { ...s, us: 1, tflops: 1200 },
 *   torch: { ...s, deepgemm_us: 1, deepgemm_tflops: 1250, tensorfp8_us: 1, tensorfp8_tflops: 1500,
 *     tensorfp8_fast_us: 1, tensorfp8_fast_tflops: 1600 } }]);
 * assert.equal(c.family, "dense M = 4096");
 * assert.equal(c.oursOver[0].value, 0.8);
 * assert.equal(c.deepgemmOver[1].value, 1250 / 1600);
 * ```
 */
export function tensorScaledComparison(rows: JoinedRow[]): TensorScaledComparison[] {
  return DEEPGEMM_FAMILIES.filter((f) => f.startsWith("dense")).flatMap((family): TensorScaledComparison[] => {
    const fam = rows.filter((j) => deepgemmFamily(j) === family);
    const over = (num: (j: JoinedRow) => number | undefined): [RatioStats, RatioStats] => [
      ratioStats(fam, num, (j) => tensorTflops(j)),
      ratioStats(fam, num, (j) => tensorTflops(j, true)),
    ];
    const c = { family, oursOver: over(oursTflops), deepgemmOver: over(deepgemmTflops) };
    return c.oursOver[0].count + c.oursOver[1].count > 0 ? [c] : [];
  });
}

/** The report's line for {@link tensorScaledComparison}, with the per-tensor TFLOPS at 4096×7168×16384. */
function tensorScaledLine(rows: JoinedRow[]): string | undefined {
  const cmp = tensorScaledComparison(rows);
  if (!cmp.length) return undefined;
  const one = (r: RatioStats) => r.count ? `**${r.value.toFixed(3)}×**` : "—";
  const pair = (p: [RatioStats, RatioStats]) => `${one(p[0])} / ${one(p[1])}`;
  const big = bigRow(rows);
  const tf = (x: number | undefined) => x === undefined ? "—" : `**${x.toFixed(1)}**`;
  return "- cuBLASLt FP8 with one scale per tensor (the same product with no per-block scaling work; its default " +
    "accumulation / its fast accumulation): " +
    cmp.map((c) =>
      `${c.family} (${Math.max(c.oursOver[0].count, c.oursOver[1].count)} shapes): ours / per-tensor ` +
      `${pair(c.oursOver)}, DeepGEMM / per-tensor ${pair(c.deepgemmOver)}`
    ).join("; ") +
    (big ? `; 4096×7168×16384 ${tf(tensorTflops(big))} / ${tf(tensorTflops(big, true))} TFLOPS` : "");
}

/** Why the report has no DeepGEMM column. */
function noDeepGemmReason(torch: BenchDoc<TorchRow> | undefined): string {
  if (!torch) return "no bench_torch.py JSON";
  if (torch.deepgemm_error) return `bench_torch.py: ${torch.deepgemm_error}`;
  return "the bench_torch.py JSON has no DeepGEMM result";
}
