/**
 * The reference of the FP8 GEMMs `verify` checks at scale (dense `fp8_gemm_nt`, m-grouped contiguous, masked; model
 * `sm90_1d2d`), computed on the native CPU backend (`kernels/cpu`, all cores) instead of the TypeScript engine, with
 * the TypeScript reference's bits and sample mask.
 *
 * Why it is exact: under these models every output element depends only on its A row (and SFA row), its B row (its
 * group's B, and the SFB row of its 128-column block) and K. So the TypeScript plan is rebuilt here — the same row
 * rules (`reference/gemm/grouped_gemm.ts`: contiguous rows labelled −1 and SM90's 64-row zero chunks, psum layouts,
 * masked rows up to the BLOCK_M tile of `masked_m`, zero chunks past it), the same problem order, the same tiles from
 * {@link selectTiles} — and each sampled 128×128 tile is a small dense GEMM of its gathered A rows against its B
 * block: the tiles of one M block (or of several M blocks with the same sampled N blocks, all of them with `--sample
 * 1`) are one `fp8Gemm` call over the gathered rows and the concatenated B blocks (whose SFB rows stay block rows, the
 * partial last block last), scattered back into a full-size output with `sample_mask` set where the reference
 * writes. The first call of every group also recomputes one row of one block with the TypeScript engine and throws on
 * any difference (a guard against a broken native build); `tests/cli/native_reference_test.ts` checks whole outputs
 * and masks against the TypeScript reference on seeded cases.
 *
 * Anything else (another op or model, C or D given, UE8M0 or per-column scales, strided views, K = 0, arguments the
 * TypeScript reference would refuse) is `null`: the caller runs the TypeScript reference, which also reports the
 * errors. `GEMM_ORACLE_NATIVE_REFERENCE=0` turns the native path off.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Tensor } from "../../reference/tensor/tensor.ts";
 * import { planNative } from "./native_reference.ts";
 * const a = Tensor.zeros("e4m3", [300, 256]), b = Tensor.zeros("e4m3", [136, 256]);
 * const sfa = Tensor.zeros("f32", [300, 2]), sfb = Tensor.zeros("f32", [2, 2]);
 * const plan = planNative("fp8_gemm_nt", { a, sfa, b, sfb }, {}, { model: "sm90_1d2d" });
 * assert.ok(typeof plan !== "string" && plan.parts.length === 1 && plan.N === 136);
 * assert.match(planNative("fp8_gemm_nt", { a, sfa, b, sfb }, {}, { model: "exact" }) as string, /model/);
 * ```
 * @module
 */
import { type Backend, openBackend } from "../../ffi/backend.ts";
import { bf16Rne } from "../../reference/fp32.ts";
import { evaluateTiles, selectTiles, TILE } from "../../reference/gemm/engine.ts";
import type { GemmJob, GemmProblem } from "../../reference/gemm/job.ts";
import { type ModelOptions, resolveModel, type SampleOptions } from "../../reference/kernel_models/kernel_models.ts";
import { Tensor } from "../../reference/tensor/tensor.ts";

/** The ops the native reference computes, by their layout. */
export const NATIVE_REFERENCE_OPS: Readonly<Record<string, "dense" | "contiguous" | "masked">> = {
  fp8_gemm_nt: "dense",
  fp8_fp4_gemm_nt: "dense",
  m_grouped_fp8_gemm_nt_contiguous: "contiguous",
  m_grouped_fp8_fp4_gemm_nt_contiguous: "contiguous",
  m_grouped_fp8_gemm_nt_masked: "masked",
  m_grouped_fp8_fp4_gemm_nt_masked: "masked",
  fp8_m_grouped_gemm_nt_masked: "masked",
};

/** The one model computed natively. */
export const NATIVE_REFERENCE_MODEL = "sm90_1d2d";

/** One problem of the reference's plan: output rows computed against one group's B, or written as zeros. */
export interface NativePart {
  /** A row (of A flattened to `[rows, K]`) of each output row, in the reference's problem order. */
  aRows: Int32Array;
  /** D row (of D flattened to `[rows, N]`) of each output row. */
  dRows: Int32Array;
  /** B group. */
  group: number;
  /** SM90 skipped chunk: written as +0 without computing. */
  zero: boolean;
}

/** What the native reference computes: flat operands and the reference's problems. */
export interface NativePlan {
  /** A codes, `[rows, K]` row-major. */
  a: Uint8Array;
  /** A scales `[rows, sfk]`. */
  sfa: Float32Array;
  /** B codes `[G·N, K]`. */
  b: Uint8Array;
  /** B scales `[G·ceil(N/128), sfk]`. */
  sfb: Float32Array;
  /** Columns. */
  N: number;
  /** Reduction length. */
  K: number;
  /** Scale columns, ceil(K / 128). */
  sfk: number;
  /** Output shape (`[M, N]` or `[G, Mmax, N]`). */
  outShape: number[];
  /** Problems in the reference's order (the order {@link selectTiles} numbers them by). */
  parts: NativePart[];
}

const ceilDiv = (a: number, b: number) => Math.ceil(a / b);
const align = (a: number, b: number) => ceilDiv(a, b) * b;

/** A contiguous tensor's elements (its own span of the storage), or null for a strided view or another dtype. */
function flat(t: unknown, dtype: string, shape: readonly number[]): Uint8Array | Float32Array | null {
  if (!(t instanceof Tensor) || t.dtype !== dtype || t.ndim !== shape.length) return null;
  if (t.shape.some((d, i) => d !== shape[i]) || !t.isContiguous()) return null;
  const d = t.data as Uint8Array | Float32Array;
  return d.subarray(t.offset, t.offset + t.numel);
}

function intScalar(v: unknown, dflt: number): number | null {
  const x = v ?? dflt;
  return typeof x === "number" && Number.isSafeInteger(x) ? x : null;
}

function boolScalar(v: unknown, dflt: boolean): boolean | null {
  const x = v ?? dflt;
  return typeof x === "boolean" ? x : null;
}

const range = (n: number, f: (i: number) => number) => Int32Array.from({ length: n }, (_, i) => f(i));

type Operands = Pick<NativePlan, "a" | "sfa" | "b" | "sfb">;

/**
 * A and B as contiguous e4m3 of shapes `[...aLead, K]` and `[...bLead, K]`, their scales as contiguous f32 of
 * `[...aLead, sfk]` (per token) and `[...bLead without N, ceil(N / 128), sfk]` (per block), or null.
 */
function operands(inputs: Record<string, Tensor>, aLead: number[], bLead: number[], K: number): Operands | null {
  const sfk = ceilDiv(K, 128), N = bLead[bLead.length - 1];
  const a = flat(inputs.a, "e4m3", [...aLead, K]), b = flat(inputs.b, "e4m3", [...bLead, K]);
  const sfa = flat(inputs.sfa, "f32", [...aLead, sfk]);
  const sfb = flat(inputs.sfb, "f32", [...bLead.slice(0, -1), ceilDiv(N, 128), sfk]);
  if (!a || !b || !sfa || !sfb) return null;
  return { a: a as Uint8Array, sfa: sfa as Float32Array, b: b as Uint8Array, sfb: sfb as Float32Array };
}

const OPERAND_FAULT = "operands must be contiguous e4m3 with per-token / per-block f32 scales";

/**
 * The native plan of an op, or why it is not covered (the caller then runs the TypeScript reference, which also
 * refuses what is invalid).
 * @param op DeepGEMM op name
 * @param inputs tensors by DeepGEMM's names
 * @param scalars scalars by DeepGEMM's names
 * @param options the reference's model options (`model` must be `sm90_1d2d`; `sample`, `workers` allowed)
 * @returns the plan, or the reason in words
 */
export function planNative(
  op: string,
  inputs: Record<string, Tensor>,
  scalars: Record<string, unknown>,
  options: ModelOptions,
): NativePlan | string {
  const kind = NATIVE_REFERENCE_OPS[op];
  if (!kind) return `${op} is not computed natively`;
  if (options.model !== NATIVE_REFERENCE_MODEL) return `model ${options.model} is not computed natively`;
  for (const k of ["tensorCore", "promotion", "splitK"] as const) {
    if (options[k] !== undefined) return `model option ${k} is not computed natively`;
  }
  if (options.outDtype !== undefined && options.outDtype !== "bf16") return "only bf16 output is computed natively";
  if (inputs.c != null || inputs.d != null) return "C / D inputs are not computed natively";
  const allowed: Record<string, string[]> = {
    dense: ["arch"],
    contiguous: ["arch", "use_psum_layout", "ensure_zero_padding", "mk_alignment", "expected_m_for_psum_layout"],
    masked: ["arch", "expected_m", "block_m"],
  };
  for (const [k, v] of Object.entries(scalars)) {
    if (v === undefined) continue;
    if (!allowed[kind].includes(k)) return `scalar ${k} is not computed natively`;
  }
  if ((scalars.arch ?? "sm90") !== "sm90") return "only SM90 rules are computed natively";
  const a0 = inputs.a, b0 = inputs.b;
  if (!(a0 instanceof Tensor) || !(b0 instanceof Tensor)) return "a and b must be tensors";
  const K = a0.shape[a0.ndim - 1];
  if (!(K > 0)) return "K = 0 is left to the TypeScript reference";
  const sfk = ceilDiv(K, 128);
  if (kind === "dense") {
    if (a0.ndim !== 2 || b0.ndim !== 2) return "dense a and b must be 2-D";
    const [M] = a0.shape, [N] = b0.shape;
    if (M === 0 || N === 0 || N % 8 !== 0) return "M = 0, N = 0 or N % 8 != 0";
    const ops = operands(inputs, [M], [N], K);
    if (!ops) return OPERAND_FAULT;
    const rows = range(M, (i) => i);
    return { ...ops, N, K, sfk, outShape: [M, N], parts: [{ aRows: rows, dRows: rows, group: 0, zero: false }] };
  }
  if (kind === "contiguous") {
    if (a0.ndim !== 2 || b0.ndim !== 3) return "contiguous a must be 2-D and b 3-D";
    const [M] = a0.shape, [G, N] = b0.shape;
    if (M === 0 || N === 0) return "M = 0 or N = 0";
    const ops = operands(inputs, [M], [G, N], K);
    if (!ops) return OPERAND_FAULT;
    const lt = inputs.grouped_layout;
    if (!(lt instanceof Tensor) || lt.dtype !== "i32" || lt.ndim !== 1) return "grouped_layout must be 1-D i32";
    const psum = boolScalar(scalars.use_psum_layout, false), ezp = boolScalar(scalars.ensure_zero_padding, true);
    const BM = intScalar(scalars.mk_alignment, 128);
    if (psum === null || ezp === null || BM === null || BM <= 0) return "invalid layout scalars";
    const L = Array.from({ length: lt.shape[0] }, (_, i) => lt.at(i));
    // grouped_gemm.ts: group of each row: ≥ 0 computed with that group, −1 written as zero, −2 untouched
    const rowGroup = new Int32Array(M).fill(-2);
    if (!psum) {
      if (L.length !== M || L.some((g) => g < -1 || g >= G)) return "invalid grouped_layout";
      for (let r = 0; r < M; r++) {
        const tileGroup = Math.max(0, L[Math.floor(r / BM) * BM]);
        rowGroup[r] = L[Math.floor(r / 64) * 64] === -1 ? -1 : tileGroup;
      }
    } else {
      if (L.length !== G) return "invalid psum grouped_layout";
      let prevEnd = 0;
      for (let g = 0; g < G; g++) {
        const start = align(prevEnd, BM), end = L[g];
        if (end < prevEnd || end > M) return "invalid psum grouped_layout";
        for (let r = start; r < end; r++) rowGroup[r] = g;
        if (ezp) { for (let r = end; r < Math.min(M, align(end, BM)) && end > start; r++) rowGroup[r] = g; }
        prevEnd = end;
      }
    }
    const parts: NativePart[] = [];
    const rowsOf = (g: number) => {
      const out: number[] = [];
      for (let r = 0; r < M; r++) if (rowGroup[r] === g) out.push(r);
      return Int32Array.from(out);
    };
    for (let g = 0; g < G; g++) {
      const rows = rowsOf(g);
      if (rows.length) parts.push({ aRows: rows, dRows: rows, group: g, zero: false });
    }
    const zero = rowsOf(-1);
    if (zero.length) parts.push({ aRows: zero, dRows: zero, group: -1, zero: true });
    return { ...ops, N, K, sfk, outShape: [M, N], parts };
  }
  // masked
  if (a0.ndim !== 3 || b0.ndim !== 3) return "masked a and b must be 3-D";
  const [G, Mmax] = a0.shape, N = b0.shape[1];
  if (Mmax === 0 || N === 0) return "Mmax = 0 or N = 0";
  const ops = operands(inputs, [G, Mmax], [G, N], K);
  if (!ops) return OPERAND_FAULT;
  const mm = inputs.masked_m;
  if (!(mm instanceof Tensor) || mm.dtype !== "i32" || mm.ndim !== 1 || mm.shape[0] !== G) return "invalid masked_m";
  const em = intScalar(scalars.expected_m, 1), BM = intScalar(scalars.block_m, 128);
  if (em === null || em <= 0 || BM === null || ![64, 128, 256].includes(BM)) return "invalid expected_m / block_m";
  const parts: NativePart[] = [];
  for (let g = 0; g < G; g++) {
    const m = mm.at(g);
    if (m < 0 || m > Mmax) return "invalid masked_m";
    const rows: number[] = [], zero: number[] = [];
    for (let r = 0; r < Math.min(Mmax, align(m, BM)); r++) (Math.floor(r / 64) * 64 >= m ? zero : rows).push(r);
    for (const [list, isZero] of [[rows, false], [zero, true]] as const) {
      if (list.length === 0) continue;
      const flatRows = Int32Array.from(list, (r) => g * Mmax + r);
      parts.push({ aRows: flatRows, dRows: flatRows, group: g, zero: isZero });
    }
  }
  return { ...ops, N, K, sfk, outShape: [G, Mmax, N], parts };
}

/** The backend of this thread (opened once; an Error when it cannot be). */
let opened: Promise<Backend | Error> | null = null;
let warned = false;

/**
 * The native CPU backend the reference runs on (built on demand), or the Error that kept it from opening.
 * @returns the backend or the error
 */
export function nativeReferenceBackend(): Promise<Backend | Error> {
  opened ??= openBackend("cpu").catch((e) => e instanceof Error ? e : new Error(String(e)));
  return opened;
}

/** Unloads the backend (tests; a process exits with it loaded). */
export async function closeNativeReference(): Promise<void> {
  const b = await opened;
  opened = null;
  if (b && !(b instanceof Error)) b.close();
}

function disabled(): boolean {
  try {
    return Deno.env.get("GEMM_ORACLE_NATIVE_REFERENCE") === "0";
  } catch {
    return false;
  }
}

/** Options of {@link nativeReference}. */
export interface NativeReferenceOptions {
  /** The reference model (only `sm90_1d2d` is computed natively). */
  model: string;
  /** Tile sample (as the TypeScript reference's `sample`); none: every element, no `sample_mask`. */
  sample?: SampleOptions;
  /** Backend threads (default 0: every hardware thread). */
  threads?: number;
}

/**
 * The reference outputs of an FP8 GEMM (`d`, and `sample_mask` when sampled) computed on the native CPU backend, bit
 * for bit the TypeScript reference's; null where the native path does not apply (the caller runs the TypeScript
 * reference) or the backend cannot be opened (said once on stderr).
 * @param op DeepGEMM op name
 * @param inputs tensors by DeepGEMM's names
 * @param scalars scalars
 * @param options model, sample and threads
 * @returns the outputs, or null
 */
export async function nativeReference(
  op: string,
  inputs: Record<string, Tensor>,
  scalars: Record<string, unknown>,
  options: NativeReferenceOptions,
): Promise<Record<string, Tensor> | null> {
  if (disabled()) return null;
  const plan = planNative(op, inputs, scalars, { model: options.model });
  if (typeof plan === "string") return null;
  const backend = await nativeReferenceBackend();
  if (backend instanceof Error) {
    if (!warned) {
      warned = true;
      console.error(`native reference unavailable (${backend.message}); the TypeScript reference runs instead`);
    }
    return null;
  }
  backend.setNumThreads(options.threads ?? 0);
  return await computeNative(backend, plan, options.sample);
}

/** Lets other work of this thread (progress, other lanes) run between native calls, which block it. */
const yieldThread = () => new Promise<void>((r) => setTimeout(r, 0));

/**
 * Computes a native plan's sampled tiles (every tile without `sample`) on `backend`.
 * @param backend an opened backend with `go_fp8_gemm`
 * @param plan from {@link planNative}
 * @param sample the tile sample, or undefined for every element (and no mask)
 * @returns `d` (bf16) and, when sampled, `sample_mask`
 */
export async function computeNative(
  backend: Backend,
  plan: NativePlan,
  sample: SampleOptions | undefined,
): Promise<Record<string, Tensor>> {
  const { N } = plan;
  const numel = plan.outShape.reduce((x, y) => x * y, 1);
  const out = new Uint16Array(numel);
  const mask = sample !== undefined ? new Uint8Array(numel) : null;
  const problems = plan.parts.map((p) => ({ aOff: p.aRows, bOff: { length: N } }) as unknown as GemmProblem);
  const tiles = selectTiles(problems, sample);
  // per problem, per tile row: the sampled tile columns (ascending: selectTiles sorts them)
  const byPart = plan.parts.map(() => new Map<number, number[]>());
  for (const [pi, ti, tj] of tiles) {
    const m = byPart[pi];
    const cols = m.get(ti);
    if (cols) cols.push(tj);
    else m.set(ti, [tj]);
  }
  const width = (tj: number) => Math.min(N, (tj + 1) * TILE) - tj * TILE;
  for (const [pi, part] of plan.parts.entries()) {
    // Tile rows with the same sampled columns are one call (every tile row of the problem, with every tile).
    const groups = new Map<string, { tis: number[]; cols: number[] }>();
    for (const [ti, cols] of byPart[pi]) {
      const key = cols.join(",");
      const g = groups.get(key);
      if (g) g.tis.push(ti);
      else groups.set(key, { tis: [ti], cols });
    }
    let first = true;
    for (const { tis, cols } of groups.values()) {
      const local: number[] = []; // indices into the part's row lists
      for (const ti of tis) {
        for (let i = ti * TILE; i < Math.min(part.aRows.length, (ti + 1) * TILE); i++) local.push(i);
      }
      const R = local.length;
      const Np = cols.reduce((s, tj) => s + width(tj), 0);
      let dp: Uint16Array | null = null;
      if (!part.zero) {
        dp = callGemm(backend, plan, part, local, cols, Np);
        // the call's first row, its last B block (where an N tail is)
        if (first) {
          canary(
            plan,
            part.aRows[local[0]],
            part.group,
            cols[cols.length - 1],
            dp.subarray(0, Np).subarray(Np - width(cols[cols.length - 1])),
          );
        }
        first = false;
        await yieldThread();
      }
      for (let i = 0; i < R; i++) {
        const base = part.dRows[local[i]] * N;
        let off = 0;
        for (const tj of cols) {
          const w = width(tj), at = base + tj * TILE;
          if (dp) out.set(dp.subarray(i * Np + off, i * Np + off + w), at);
          else out.fill(0, at, at + w);
          if (mask) mask.fill(1, at, at + w);
          off += w;
        }
      }
    }
  }
  const res: Record<string, Tensor> = { d: Tensor.from("bf16", plan.outShape, out) };
  if (mask) res.sample_mask = Tensor.from("u8", plan.outShape, mask);
  return res;
}

/** Whether `xs` is `xs[0], xs[0] + 1, ...`. */
function consecutive(xs: ArrayLike<number>): boolean {
  for (let i = 1; i < xs.length; i++) if (xs[i] !== xs[0] + i) return false;
  return true;
}

/** One `fp8Gemm` call: the part's rows `local` (gathered) against the B blocks `cols` of its group; D' `[R, Np]`. */
function callGemm(
  backend: Backend,
  plan: NativePlan,
  part: NativePart,
  local: number[],
  cols: number[],
  Np: number,
): Uint16Array {
  const { K, sfk, N } = plan;
  const R = local.length;
  const aRows = local.map((i) => part.aRows[i]);
  let a: Uint8Array, sfa: Float32Array;
  if (consecutive(aRows)) {
    a = plan.a.subarray(aRows[0] * K, (aRows[0] + R) * K);
    sfa = plan.sfa.subarray(aRows[0] * sfk, (aRows[0] + R) * sfk);
  } else {
    a = new Uint8Array(R * K);
    sfa = new Float32Array(R * sfk);
    aRows.forEach((r, i) => {
      a.set(plan.a.subarray(r * K, (r + 1) * K), i * K);
      sfa.set(plan.sfa.subarray(r * sfk, (r + 1) * sfk), i * sfk);
    });
  }
  const g = part.group, nBlocks = ceilDiv(N, TILE);
  const bBase = g * N * K, sBase = g * nBlocks * sfk;
  let b: Uint8Array, sfb: Float32Array;
  if (consecutive(cols)) {
    const r0 = cols[0] * TILE;
    b = plan.b.subarray(bBase + r0 * K, bBase + (r0 + Np) * K);
    sfb = plan.sfb.subarray(sBase + cols[0] * sfk, sBase + (cols[0] + cols.length) * sfk);
  } else {
    b = new Uint8Array(Np * K);
    sfb = new Float32Array(cols.length * sfk);
    let row = 0;
    cols.forEach((tj, i) => {
      const w = Math.min(N, (tj + 1) * TILE) - tj * TILE;
      b.set(plan.b.subarray(bBase + tj * TILE * K, bBase + (tj * TILE + w) * K), row * K);
      sfb.set(plan.sfb.subarray(sBase + tj * sfk, sBase + (tj + 1) * sfk), i * sfk);
      row += w;
    });
  }
  const d = Tensor.zeros("bf16", [R, Np]);
  backend.fp8Gemm({
    a: Tensor.from("e4m3", [R, K], a),
    sfa: Tensor.from("f32", [R, sfk], sfa),
    b: Tensor.from("e4m3", [Np, K], b),
    sfb: Tensor.from("f32", [cols.length, sfk], sfb),
    d,
    model: NATIVE_REFERENCE_MODEL,
  });
  const out = d.data as Uint16Array;
  // NaN as the reference writes it (writeValue: bf16Rne gives 0x7FFF for every NaN)
  for (let i = 0; i < out.length; i++) if ((out[i] & 0x7fff) > 0x7f80) out[i] = 0x7fff;
  return out;
}

/**
 * Recomputes one output row of one B block of a native call with the TypeScript engine and throws on any difference
 * (the native backend is a separate build; this keeps a broken one from passing as the reference).
 */
function canary(plan: NativePlan, r: number, g: number, tj: number, got: Uint16Array): void {
  const { K, N, sfk } = plan;
  const w = Math.min(N, (tj + 1) * TILE) - tj * TILE;
  const nBlocks = ceilDiv(N, TILE);
  const bRow0 = g * N + tj * TILE;
  const sfbRow = Float64Array.from(plan.sfb.subarray((g * nBlocks + tj) * sfk, (g * nBlocks + tj + 1) * sfk));
  const sfbV = new Float64Array(w * sfk);
  for (let j = 0; j < w; j++) sfbV.set(sfbRow, j * sfk);
  const job: GemmJob = {
    model: { ...resolveModel({ model: NATIVE_REFERENCE_MODEL }), outDtype: "bf16" },
    aFormat: "e4m3",
    bFormat: "e4m3",
    a: plan.a.subarray(r * K, (r + 1) * K),
    b: plan.b.subarray(bRow0 * K, (bRow0 + w) * K),
    sfa: Float64Array.from(plan.sfa.subarray(r * sfk, (r + 1) * sfk)),
    sfb: sfbV,
    granK: 128,
    c: null,
    problems: [{
      K,
      aOff: new Int32Array(1),
      bOff: range(w, (j) => j * K),
      sfaOff: new Int32Array(1),
      sfbOff: range(w, (j) => j * sfk),
      dRow: new Int32Array(1),
      dCol: range(w, (j) => j),
      group: 0,
    }],
  };
  const res = evaluateTiles(job, [[0, 0, 0]]);
  for (let j = 0; j < w; j++) {
    const want = bf16Rne(res.value[j]);
    if (want !== got[j]) {
      throw new Error(
        `native reference disagrees with the TypeScript reference at A row ${r}, column ${tj * TILE + j}: ` +
          `TS 0x${want.toString(16)}, native 0x${got[j].toString(16)} (the CPU backend build is broken; ` +
          `GEMM_ORACLE_NATIVE_REFERENCE=0 runs the TypeScript reference)`,
      );
    }
  }
}
