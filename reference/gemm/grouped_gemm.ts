/**
 * Grouped GEMMs with DeepGEMM's index rules (`deepgemm-ops.md` §5.3–5.5):
 * - `m_grouped_{fp8,bf16}_gemm_{nt,nn}_contiguous`: classic layout (row → group id, −1 padding; a BLOCK_M tile takes
 *   the group of its first row, clamped at 0; SM90 writes zeros for 64-row chunks whose first row is −1) and psum
 *   layout (cumulative ends, groups start at `align(end_{g−1}, mk_alignment)`; with `ensure_zero_padding` the tail up
 *   to the next BLOCK_M boundary is computed, otherwise gap rows are untouched);
 * - `m_grouped_{fp8,bf16}_gemm_nt_masked`: rows below `masked_m[g]` (the rest of their BLOCK_M tile is computed from
 *   A's padding; SM90 zeroes 64-row chunks starting at or after `masked_m`; rows beyond are untouched);
 * - `k_grouped_fp8_gemm_nt_contiguous` (SM90 flat K-major blocks), `k_grouped_{fp8,bf16}_gemm_tn_contiguous`
 *   (SM100, MN-major, psum allowed): `D[g] = C[g] + A_gᵀ·B_g`, empty groups leave `D[g] = C[g]`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Tensor } from "../tensor/tensor.ts";
 * import { mGroupedFp8GemmNtMasked } from "./grouped_gemm.ts";
 * const G = 2, M = 128, N = 8, K = 128;
 * const a = Tensor.from("e4m3", [G, M, K], new Uint8Array(G * M * K).fill(0x38)); // 1.0
 * const b = Tensor.from("e4m3", [G, N, K], new Uint8Array(G * N * K).fill(0x38));
 * const sfa = Tensor.from("f32", [G, M, 1], new Float32Array(G * M).fill(1));
 * const sfb = Tensor.from("f32", [G, 1, 1], new Float32Array(G).fill(1));
 * const masked_m = Tensor.from("i32", [G], new Int32Array([3, 0]));
 * const { d } = mGroupedFp8GemmNtMasked.run({ a, sfa, b, sfb, masked_m }, { expected_m: 3 }, {});
 * assert.equal(d.at(0, 2, 0), 0x4300); // 128.0
 * assert.equal(d.at(1, 0, 0), 0);       // group 1 is empty: chunk skipped, zero
 * ```
 * @module
 */
import { type ModelOptions, type ResolvedModel, resolveModel } from "../kernel_models/kernel_models.ts";
import type { DType } from "../tensor/dtype.ts";
import type { Tensor } from "../tensor/tensor.ts";
import type { GemmJob, GemmProblem, PackedRows } from "./job.ts";
import { packKRows } from "./job.ts";
import { recipeScalar } from "./normal_gemm.ts";
import { align, ceilDiv } from "../layout/tma_aligned.ts";
import type { OpSpec, Plan } from "./op_spec.ts";
import { cByDIndex, checkC, copyInto, initialOutput } from "./output.ts";
import { archScalar, boolScalar, intScalar } from "./scalar_arguments.ts";
import { decodeScales, requirePowerOfTwoScales, requireScaledModel } from "./scale_factors.ts";
import { expectShape, maybe, need, requireKMajor } from "./tensor_arguments.ts";
import { makeOp } from "./run.ts";

const SF_DTYPES: DType[] = ["f32", "i32"];

interface Common {
  op: string;
  fp8: boolean;
  arch: "sm90" | "sm100";
  model: ResolvedModel;
  granK: number;
}

function common(
  op: string,
  fp8: boolean,
  scalars: Record<string, unknown>,
  options: ModelOptions,
  A: Tensor,
  out: "bf16" | "f32",
): Common {
  const fp4 = A.dtype === "e2m1";
  const arch = archScalar(scalars, op, options.model === "sm100_1d1d" || fp4 ? "sm100" : "sm90");
  const fallback = !fp8 ? "bf16" : arch === "sm90" ? (out === "bf16" ? "sm90_1d2d" : "sm90_1d1d") : "sm100_1d1d";
  const model = { ...resolveModel(options, fallback), outDtype: options.outDtype ?? out };
  if (model.outDtype !== out) throw new TypeError(`${op}: output dtype must be ${out}`);
  if (fp8) requireScaledModel(model, op);
  let granK = 128;
  const rec = recipeScalar(scalars, "recipe", 3, op);
  if (rec) granK = rec[2];
  else if (fp4) granK = 32;
  if (arch === "sm90" && fp8 && granK !== 128) throw new TypeError(`${op}: SM90 needs gran_k = 128`);
  return { op, fp8, arch, model, granK };
}

/** SFB's granularity along N: 1 for packed UE8M0 (i32) or one fp32 row per column, else 128 (per-block). */
function sfbGranN(sfb: Tensor, N: number): number {
  return sfb.dtype === "i32" || (sfb.shape[1] === N && N !== ceilDiv(N, 128)) ? 1 : 128;
}

/** The job of a grouped plan: operand formats from `a` and `b`, codes from their packed rows. */
function groupedJob(
  model: ResolvedModel,
  granK: number,
  a: Tensor,
  b: Tensor,
  pa: PackedRows,
  pb: PackedRows,
  sfa: Float64Array | null,
  sfb: Float64Array | null,
  c: Float64Array | null,
  problems: GemmProblem[],
): GemmJob {
  return { model, aFormat: a.dtype, bFormat: b.dtype, a: pa.codes, b: pb.codes, sfa, sfb, granK, c, problems };
}

function mGrouped(layout: "nt" | "nn", fp8: boolean): OpSpec {
  const name = `m_grouped_${fp8 ? "fp8" : "bf16"}_gemm_${layout}_contiguous`;
  const opDtypes: DType[] = fp8 ? ["e4m3", "e2m1"] : ["bf16"];
  return makeOp({
    name,
    family: "m_grouped",
    inputs: fp8 ? ["a", "sfa", "b", "sfb", "d", "grouped_layout"] : ["a", "b", "d", "grouped_layout"],
    outputs: ["d"],
    scalars: {
      arch: '"sm90" (default) or "sm100"',
      use_psum_layout: "grouped_layout holds cumulative group ends (default false: a group id per row, −1 = padding)",
      ensure_zero_padding: "psum: compute the tail tile of each group up to the next BLOCK_M boundary (default true)",
      mk_alignment: "get_mk_alignment_for_contiguous_layout() = BLOCK_M (default 128)",
      expected_m_for_psum_layout: "tuning hint (ignored)",
      recipe: "[gran_m, gran_n, gran_k] (FP8)",
    },
    defaultModel: fp8 ? "sm90_1d2d" : "bf16",
    models: fp8 ? ["sm90_1d2d", "sm100_1d1d", "exact"] : ["bf16", "exact"],
    plan(inputs, scalars, options) {
      const a = need(inputs, "a", name, opDtypes, 2);
      let b = need(inputs, "b", name, opDtypes, 3);
      const layoutT = need(inputs, "grouped_layout", name, ["i32"], 1);
      const c = common(name, fp8, scalars, options, a, "bf16");
      if (layout === "nn") b = b.transpose(1, 2);
      const [M, K] = a.shape, [G, N, KB] = b.shape;
      if (KB !== K) throw new TypeError(`${name}: A has K = ${K} but B has K = ${KB}`);
      requireKMajor(a, "a", name, "M-grouped GEMMs");
      if (c.arch === "sm90") requireKMajor(b, "b", name, "SM90 M-grouped GEMMs");
      if (!fp8 && c.arch === "sm90" && K % 64 !== 0) throw new RangeError(`${name}: SM90 needs k % 64 == 0, got ${K}`);
      const psum = boolScalar(scalars, "use_psum_layout", name, false);
      const ezp = boolScalar(scalars, "ensure_zero_padding", name, true);
      const BM = intScalar(scalars, "mk_alignment", name, 128);
      if (BM <= 0) throw new RangeError(`${name}: mk_alignment must be positive`);
      const d = maybe(inputs, "d", name, ["bf16"], 2);
      const out = initialOutput(d, [M, N], "bf16", name);
      if (M === 0 || N === 0) return { job: null, d: out };
      const L = Array.from(layoutT.data as Int32Array).filter((_, i) => i < layoutT.shape[0]).map((_, i) =>
        layoutT.at(i)
      );
      // group of each row: ≥ 0 computed with that group, −1 written as zero, −2 untouched
      const rowGroup = new Int32Array(M).fill(-2);
      if (!psum) {
        if (L.length !== M) throw new TypeError(`${name}: grouped_layout must have M = ${M} entries, got ${L.length}`);
        for (const [i, g] of L.entries()) {
          if (g < -1 || g >= G) throw new RangeError(`${name}: grouped_layout[${i}] = ${g} outside [-1, ${G})`);
        }
        for (let r = 0; r < M; r++) {
          const tileGroup = Math.max(0, L[Math.floor(r / BM) * BM]); // clamped at 0 (DeepGEMM 0c88cd0)
          if (c.arch === "sm90" && L[Math.floor(r / 64) * 64] === -1) rowGroup[r] = -1;
          else rowGroup[r] = tileGroup;
        }
      } else {
        if (L.length !== G) {
          throw new TypeError(`${name}: psum grouped_layout must have G = ${G} entries, got ${L.length}`);
        }
        let prevEnd = 0;
        for (let g = 0; g < G; g++) {
          const start = align(prevEnd, BM), end = L[g];
          if (end < prevEnd || end > M) {
            throw new RangeError(`${name}: psum grouped_layout[${g}] = ${end} must be in [${prevEnd}, ${M}]`);
          }
          for (let r = start; r < end; r++) rowGroup[r] = g;
          if (ezp) { for (let r = end; r < Math.min(M, align(end, BM)) && end > start; r++) rowGroup[r] = g; }
          prevEnd = end;
        }
      }
      if (K === 0) {
        for (let r = 0; r < M; r++) {
          if (rowGroup[r] !== -2) {
            for (let j = 0; j < N; j++) out.data[out.index(r, j)] = 0;
          }
        }
        return { job: null, d: out };
      }
      const pa = packKRows([a]);
      const pb = packKRows(Array.from({ length: G }, (_, g) => b.select(0, g)));
      let sfaV: Float64Array | null = null, sfbV: Float64Array | null = null;
      const sfk = ceilDiv(K, c.granK);
      if (fp8) {
        const sfa = need(inputs, "sfa", name, SF_DTYPES, 2);
        let sfb = need(inputs, "sfb", name, SF_DTYPES, 3);
        if (layout === "nn") sfb = sfb.transpose(1, 2);
        if (sfb.shape[0] !== G) throw new RangeError(`${name}: sfb has ${sfb.shape[0]} groups, b has ${G}`);
        const granB = sfbGranN(sfb, N);
        sfaV = decodeScales(sfa, M, sfk, 1, "sfa", name);
        const parts = Array.from({ length: G }, (_, g) => decodeScales(sfb.select(0, g), N, sfk, granB, "sfb", name));
        sfbV = new Float64Array(G * N * sfk);
        parts.forEach((p, g) => sfbV!.set(p, g * N * sfk));
        if (c.arch === "sm100") {
          requirePowerOfTwoScales(sfaV, "sfa", name);
          requirePowerOfTwoScales(sfbV, "sfb", name);
        }
      }
      const problems: GemmProblem[] = [];
      const zeroRows: number[] = [];
      for (let g = 0; g < G; g++) {
        const rows: number[] = [];
        for (let r = 0; r < M; r++) if (rowGroup[r] === g) rows.push(r);
        if (rows.length === 0) continue;
        problems.push({
          K,
          aOff: Int32Array.from(rows, (r) => pa.offsets[0][r]),
          bOff: pb.offsets[g],
          sfaOff: sfaV ? Int32Array.from(rows, (r) => r * sfk) : null,
          sfbOff: sfbV ? Int32Array.from({ length: N }, (_, j) => (g * N + j) * sfk) : null,
          dRow: Int32Array.from(rows, (r) => out.offset + r * out.strides[0]),
          dCol: Int32Array.from({ length: N }, (_, j) => j * out.strides[1]),
          group: g,
        });
      }
      for (let r = 0; r < M; r++) if (rowGroup[r] === -1) zeroRows.push(r);
      if (zeroRows.length > 0) {
        problems.push({
          K,
          aOff: new Int32Array(zeroRows.length).fill(-1),
          bOff: pb.offsets[0],
          sfaOff: null,
          sfbOff: null,
          dRow: Int32Array.from(zeroRows, (r) => out.offset + r * out.strides[0]),
          dCol: Int32Array.from({ length: N }, (_, j) => j * out.strides[1]),
          group: -1,
        });
      }
      return { job: groupedJob(c.model, c.granK, a, b, pa, pb, sfaV, sfbV, null, problems), d: out };
    },
  });
}

function masked(fp8: boolean): OpSpec {
  const name = `m_grouped_${fp8 ? "fp8" : "bf16"}_gemm_nt_masked`;
  const opDtypes: DType[] = fp8 ? ["e4m3", "e2m1"] : ["bf16"];
  return makeOp({
    name,
    family: "masked",
    inputs: fp8 ? ["a", "sfa", "b", "sfb", "d", "masked_m"] : ["a", "b", "d", "masked_m"],
    outputs: ["d"],
    scalars: {
      arch: '"sm90" (default) or "sm100"',
      expected_m: "tuning hint, must be > 0",
      block_m: "BLOCK_M of the kernel (default 128): rows up to the end of the last valid tile are computed",
      recipe: "[gran_m, gran_n, gran_k] (FP8)",
    },
    defaultModel: fp8 ? "sm90_1d2d" : "bf16",
    models: fp8 ? ["sm90_1d2d", "sm100_1d1d", "exact"] : ["bf16", "exact"],
    plan(inputs, scalars, options) {
      const a = need(inputs, "a", name, opDtypes, 3), b = need(inputs, "b", name, opDtypes, 3);
      const mm = need(inputs, "masked_m", name, ["i32"], 1);
      const c = common(name, fp8, scalars, options, a, "bf16");
      const [G, Mmax, K] = a.shape, [GB, N, KB] = b.shape;
      if (GB !== G || KB !== K) throw new TypeError(`${name}: A [${a.shape}] and B [${b.shape}] disagree on G or K`);
      expectShape(mm, [G], "masked_m", name);
      requireKMajor(a, "a", name, "masked GEMMs");
      requireKMajor(b, "b", name, "masked GEMMs");
      if (!fp8 && c.arch === "sm90" && K % 64 !== 0) throw new RangeError(`${name}: SM90 needs k % 64 == 0, got ${K}`);
      const em = intScalar(scalars, "expected_m", name, 1);
      if (em <= 0) throw new RangeError(`${name}: expected_m must be > 0`);
      const BM = intScalar(scalars, "block_m", name, 128);
      // BLOCK_M of DeepGEMM's masked kernels: 64 or 128 on SM90, 128 or 256 on SM100 (deepgemm-ops.md §5.4). Any
      // other value (0 or negative made the tile end NaN and left D half unwritten) is refused.
      if (![64, 128, 256].includes(BM)) throw new RangeError(`${name}: block_m must be 64, 128 or 256, got ${BM}`);
      const d = maybe(inputs, "d", name, ["bf16"], 3);
      const out = initialOutput(d, [G, Mmax, N], "bf16", name);
      if (Mmax === 0 || N === 0) return { job: null, d: out };
      const pa = packKRows(Array.from({ length: G }, (_, g) => a.select(0, g)));
      const pb = packKRows(Array.from({ length: G }, (_, g) => b.select(0, g)));
      const sfk = ceilDiv(K, c.granK);
      let sfaV: Float64Array | null = null, sfbV: Float64Array | null = null;
      if (fp8) {
        const sfa = need(inputs, "sfa", name, SF_DTYPES, 3), sfb = need(inputs, "sfb", name, SF_DTYPES, 3);
        for (const [n, t] of [["sfa", sfa], ["sfb", sfb]] as const) {
          if (t.shape[0] !== G) throw new RangeError(`${name}: ${n} has ${t.shape[0]} groups, b has ${G}`);
        }
        const granB = sfbGranN(sfb, N);
        sfaV = new Float64Array(G * Mmax * sfk);
        sfbV = new Float64Array(G * N * sfk);
        for (let g = 0; g < G; g++) {
          sfaV.set(decodeScales(sfa.select(0, g), Mmax, sfk, 1, "sfa", name), g * Mmax * sfk);
          sfbV.set(decodeScales(sfb.select(0, g), N, sfk, granB, "sfb", name), g * N * sfk);
        }
        if (c.arch === "sm100") {
          requirePowerOfTwoScales(sfaV, "sfa", name);
          requirePowerOfTwoScales(sfbV, "sfb", name);
        }
      }
      const problems: GemmProblem[] = [];
      for (let g = 0; g < G; g++) {
        const m = mm.at(g);
        if (m < 0 || m > Mmax) throw new RangeError(`${name}: masked_m[${g}] = ${m} outside [0, ${Mmax}]`);
        const rows: number[] = [], zero: number[] = [];
        for (let r = 0; r < Math.min(Mmax, align(m, BM)); r++) {
          if (c.arch === "sm90" && Math.floor(r / 64) * 64 >= m) zero.push(r);
          else rows.push(r);
        }
        for (const [list, isZero] of [[rows, false], [zero, true]] as const) {
          if (list.length === 0) continue;
          problems.push({
            K,
            aOff: Int32Array.from(list, (r) => (isZero || K === 0 ? -1 : pa.offsets[g][r])),
            bOff: pb.offsets[g],
            sfaOff: sfaV ? Int32Array.from(list, (r) => (g * Mmax + r) * sfk) : null,
            sfbOff: sfbV ? Int32Array.from({ length: N }, (_, j) => (g * N + j) * sfk) : null,
            dRow: Int32Array.from(list, (r) => out.offset + g * out.strides[0] + r * out.strides[1]),
            dCol: Int32Array.from({ length: N }, (_, j) => j * out.strides[2]),
            group: g,
          });
        }
      }
      return { job: groupedJob(c.model, c.granK, a, b, pa, pb, sfaV, sfbV, null, problems), d: out };
    },
  });
}

function kGrouped(variant: "fp8_nt" | "fp8_tn" | "bf16_tn"): OpSpec {
  const fp8 = variant !== "bf16_tn";
  const name = variant === "fp8_nt"
    ? "k_grouped_fp8_gemm_nt_contiguous"
    : variant === "fp8_tn"
    ? "k_grouped_fp8_gemm_tn_contiguous"
    : "k_grouped_bf16_gemm_tn_contiguous";
  const opDtypes: DType[] = fp8 ? ["e4m3"] : ["bf16"];
  return makeOp({
    name,
    family: "k_grouped",
    inputs: fp8 ? ["a", "sfa", "b", "sfb", "c", "d", "grouped_layout"] : ["a", "b", "c", "d", "grouped_layout"],
    outputs: ["d"],
    scalars: {
      ks: "ks_cpu: list of the groups' K (required unless use_psum_layout)",
      use_psum_layout: "grouped_layout holds cumulative K ends (SM100 tn only)",
      mk_alignment: "K alignment of group starts in psum layout (default 128)",
      arch: variant === "fp8_nt" ? '"sm90"' : '"sm100" (default) or "sm90" (bf16: k_g % 128, no psum)',
      recipe: "(1, 1, gran_k); fp8 tn: gran_k 32 or 128",
    },
    defaultModel: variant === "fp8_nt" ? "sm90_1d1d" : variant === "fp8_tn" ? "sm100_1d1d" : "bf16",
    models: variant === "fp8_nt"
      ? ["sm90_1d1d", "exact"]
      : variant === "fp8_tn"
      ? ["sm100_1d1d", "exact"]
      : ["bf16", "exact"],
    plan(inputs, scalars, options) {
      const d = need(inputs, "d", name, ["f32"], 3);
      const cT = maybe(inputs, "c", name, ["f32"], 3);
      const [G, M, N] = d.shape;
      const a = need(inputs, "a", name, opDtypes, variant === "fp8_nt" ? 1 : 2);
      const b = need(inputs, "b", name, opDtypes, variant === "fp8_nt" ? 1 : 2);
      const gl = need(inputs, "grouped_layout", name, ["i32"], 1);
      const arch = archScalar(scalars, name, variant === "fp8_nt" ? "sm90" : "sm100");
      if (variant === "fp8_nt" && arch !== "sm90") throw new TypeError(`${name} exists on SM90 only`);
      if (variant === "fp8_tn" && arch !== "sm100") throw new TypeError(`${name} exists on SM100 only`);
      const psum = boolScalar(scalars, "use_psum_layout", name, false);
      if (psum && arch === "sm90") throw new TypeError(`${name}: SM90 K-grouped GEMMs have no psum layout`);
      const kAlign = intScalar(scalars, "mk_alignment", name, 128);
      if (fp8 && cT === null) throw new TypeError(`${name}: C is required`);
      checkC(cT, d, [G, M, N], "f32", name);
      expectShape(gl, [G], "grouped_layout", name);
      const fallback = variant === "fp8_nt" ? "sm90_1d1d" : variant === "fp8_tn" ? "sm100_1d1d" : "bf16";
      const model = { ...resolveModel(options, fallback), outDtype: "f32" as const };
      if (options.outDtype && options.outDtype !== "f32") throw new TypeError(`${name}: output is f32`);
      const rec = recipeScalar(scalars, "recipe", 3, name);
      const granK = rec ? rec[2] : 128;
      if (rec && (rec[0] !== 1 || rec[1] !== 1)) throw new TypeError(`${name}: recipe must be (1, 1, gran_k)`);
      if (arch === "sm90" && granK !== 128) throw new TypeError(`${name}: SM90 needs gran_k = 128`);
      // Group K ranges.
      const ks: number[] = [], starts: number[] = [];
      if (psum) {
        let prev = 0;
        for (let g = 0; g < G; g++) {
          const end = gl.at(g), s = align(prev, kAlign);
          if (end < prev) throw new RangeError(`${name}: psum grouped_layout must be non-decreasing at ${g}`);
          starts.push(s);
          ks.push(Math.max(0, end - s));
          prev = end;
        }
      } else {
        const kc = scalars.ks;
        if (!Array.isArray(kc) || kc.length !== G || !kc.every((k) => Number.isSafeInteger(k) && k >= 0)) {
          throw new TypeError(`${name}: scalar "ks" (ks_cpu) must list G = ${G} non-negative group K values`);
        }
        let s = 0;
        for (let g = 0; g < G; g++) {
          if (gl.at(g) !== kc[g]) {
            throw new TypeError(`${name}: grouped_layout[${g}] = ${gl.at(g)} differs from ks[${g}] = ${kc[g]}`);
          }
          const align128 = arch === "sm90" ? 128 : kAlign;
          if (kc[g] % align128 !== 0) {
            throw new RangeError(`${name}: k_${g} = ${kc[g]} must be a multiple of ${align128}`);
          }
          starts.push(s);
          ks.push(kc[g]);
          s += kc[g];
        }
      }
      const totalK = starts.length ? starts[G - 1] + ks[G - 1] : 0;
      const out = initialOutput(d, [G, M, N], "f32", name);
      if (cT !== null) copyInto(out, cT);
      if (M === 0 || N === 0) return { job: null, d: out };
      const Aviews: Tensor[] = [], Bviews: Tensor[] = [];
      if (variant === "fp8_nt") {
        if (a.shape[0] !== M * totalK) {
          throw new TypeError(`${name}: numel(A) = ${a.shape[0]} must be M·ΣK = ${M * totalK}`);
        }
        if (b.shape[0] !== N * totalK) {
          throw new TypeError(`${name}: numel(B) = ${b.shape[0]} must be N·ΣK = ${N * totalK}`);
        }
        for (let g = 0; g < G; g++) {
          Aviews.push(a.narrow(0, M * starts[g], M * ks[g]).reshape([M, ks[g]]));
          Bviews.push(b.narrow(0, N * starts[g], N * ks[g]).reshape([N, ks[g]]));
        }
      } else {
        if (a.shape[1] !== M || b.shape[1] !== N) throw new TypeError(`${name}: A must be [ΣK, M] and B [ΣK, N]`);
        if (a.shape[0] < totalK || b.shape[0] < totalK) {
          throw new TypeError(`${name}: A/B have fewer than ΣK = ${totalK} rows`);
        }
        for (let g = 0; g < G; g++) {
          Aviews.push(a.narrow(0, starts[g], ks[g]).transpose());
          Bviews.push(b.narrow(0, starts[g], ks[g]).transpose());
        }
      }
      const pa = packKRows(Aviews), pb = packKRows(Bviews);
      let sfaV: Float64Array | null = null, sfbV: Float64Array | null = null;
      const sfStart: number[] = [];
      let totalSf = 0;
      for (let g = 0; g < G; g++) {
        sfStart.push(totalSf);
        totalSf += ceilDiv(ks[g], granK);
      }
      if (fp8) {
        const sfa = need(inputs, "sfa", name, ["f32"], 2), sfb = need(inputs, "sfb", name, ["f32"], 2);
        // SM90 nt: SFA [M, Σ ceil(k_g/128)] (transposed per-channel SFs); SM100 tn: [Σ ceil(k_g/gran_k), M].
        const sa = variant === "fp8_nt" ? sfa : sfa.transpose(), sb = variant === "fp8_nt" ? sfb : sfb.transpose();
        expectShape(sa, [M, totalSf], "sfa", name);
        expectShape(sb, [N, totalSf], "sfb", name);
        sfaV = decodeScales(sa, M, totalSf, 1, "sfa", name);
        sfbV = decodeScales(sb, N, totalSf, 1, "sfb", name);
        if (arch === "sm100") {
          requirePowerOfTwoScales(sfaV, "sfa", name);
          requirePowerOfTwoScales(sfbV, "sfb", name);
        }
      }
      const problems: GemmProblem[] = [];
      for (let g = 0; g < G; g++) {
        if (ks[g] === 0) continue; // empty group: D[g] = C[g]
        problems.push({
          K: ks[g],
          aOff: pa.offsets[g],
          bOff: pb.offsets[g],
          sfaOff: sfaV ? Int32Array.from({ length: M }, (_, i) => i * totalSf + sfStart[g]) : null,
          sfbOff: sfbV ? Int32Array.from({ length: N }, (_, j) => j * totalSf + sfStart[g]) : null,
          dRow: Int32Array.from({ length: M }, (_, i) => out.offset + g * out.strides[0] + i * out.strides[1]),
          dCol: Int32Array.from({ length: N }, (_, j) => j * out.strides[2]),
          group: g,
        });
      }
      const cV = cT === null ? null : cByDIndex(cT, out);
      return { job: groupedJob(model, granK, a, b, pa, pb, sfaV, sfbV, cV, problems), d: out } satisfies Plan;
    },
  });
}

/** `m_grouped_fp8_gemm_nt_contiguous(a, b, d, grouped_layout, ...)` (alias `m_grouped_fp8_fp4_gemm_nt_contiguous`). */
export const mGroupedFp8GemmNtContiguous: OpSpec = mGrouped("nt", true);
/** `m_grouped_fp8_gemm_nn_contiguous`: B stored [G, K, N]. */
export const mGroupedFp8GemmNnContiguous: OpSpec = mGrouped("nn", true);
/**
 * `m_grouped_bf16_gemm_nt_contiguous`.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Tensor } from "../tensor/tensor.ts";
 * import { mGroupedBf16GemmNtContiguous } from "./grouped_gemm.ts";
 * // 128 rows of group 1 (one BLOCK_M tile); B[1] = 2·B[0], so D doubles.
 * const M = 128, N = 2, K = 64;
 * const a = Tensor.from("bf16", [M, K], new Uint16Array(M * K).fill(0x3f80));
 * const b = Tensor.from("bf16", [2, N, K], new Uint16Array(2 * N * K).fill(0x3f80).fill(0x4000, N * K));
 * const grouped_layout = Tensor.from("i32", [M], new Int32Array(M).fill(1));
 * const { d } = mGroupedBf16GemmNtContiguous.run({ a, b, grouped_layout }, {}, {});
 * assert.equal(d.at(5, 1), 0x4300); // 64 × 2 = 128
 * ```
 */
export const mGroupedBf16GemmNtContiguous: OpSpec = mGrouped("nt", false);
/** `m_grouped_bf16_gemm_nn_contiguous`. */
export const mGroupedBf16GemmNnContiguous: OpSpec = mGrouped("nn", false);
/** `m_grouped_fp8_gemm_nt_masked(a, b, d, masked_m, expected_m)`. */
export const mGroupedFp8GemmNtMasked: OpSpec = masked(true);
/** `m_grouped_bf16_gemm_nt_masked`. */
export const mGroupedBf16GemmNtMasked: OpSpec = masked(false);
/** `k_grouped_fp8_gemm_nt_contiguous` (SM90). */
export const kGroupedFp8GemmNtContiguous: OpSpec = kGrouped("fp8_nt");
/** `k_grouped_fp8_gemm_tn_contiguous` (SM100). */
export const kGroupedFp8GemmTnContiguous: OpSpec = kGrouped("fp8_tn");
/**
 * `k_grouped_bf16_gemm_tn_contiguous`.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Tensor } from "../tensor/tensor.ts";
 * import { kGroupedBf16GemmTnContiguous } from "./grouped_gemm.ts";
 * // Two groups of K = 128 and 0: D[0] = C[0] + A_0ᵀ·B_0, D[1] = C[1] (empty group).
 * const M = 1, N = 1;
 * const a = Tensor.from("bf16", [128, M], new Uint16Array(128).fill(0x3f80));
 * const b = Tensor.from("bf16", [128, N], new Uint16Array(128).fill(0x3f80));
 * const c = Tensor.from("f32", [2, M, N], new Float32Array([1, 7]));
 * const d = Tensor.zeros("f32", [2, M, N]);
 * const grouped_layout = Tensor.from("i32", [2], new Int32Array([128, 0]));
 * const out = kGroupedBf16GemmTnContiguous.run({ a, b, c, d, grouped_layout }, { ks: [128, 0] }, {}).d;
 * assert.deepEqual([...out.data], [129, 7]);
 * ```
 */
export const kGroupedBf16GemmTnContiguous: OpSpec = kGrouped("bf16_tn");

function alias(op: OpSpec, name: string): OpSpec {
  return Object.freeze({ ...op, name });
}

/** The grouped ops (with DeepGEMM's aliases). */
export const GROUPED_OPS: OpSpec[] = [
  mGroupedFp8GemmNtContiguous,
  mGroupedFp8GemmNnContiguous,
  alias(mGroupedFp8GemmNtContiguous, "m_grouped_fp8_fp4_gemm_nt_contiguous"),
  alias(mGroupedFp8GemmNnContiguous, "m_grouped_fp8_fp4_gemm_nn_contiguous"),
  mGroupedBf16GemmNtContiguous,
  mGroupedBf16GemmNnContiguous,
  mGroupedFp8GemmNtMasked,
  alias(mGroupedFp8GemmNtMasked, "m_grouped_fp8_fp4_gemm_nt_masked"),
  alias(mGroupedFp8GemmNtMasked, "fp8_m_grouped_gemm_nt_masked"),
  mGroupedBf16GemmNtMasked,
  alias(mGroupedBf16GemmNtMasked, "bf16_m_grouped_gemm_nt_masked"),
  kGroupedFp8GemmNtContiguous,
  kGroupedFp8GemmTnContiguous,
  kGroupedBf16GemmTnContiguous,
];
