/**
 * DeepGEMM's `transform_sf_into_required_layout` and `transform_k_grouped_sf_into_required_layout`
 * (csrc/apis/layout.hpp, csrc/utils/layout.hpp `check_sf_layout`; deepgemm-ops.md §3): what a GEMM does to the
 * scale tensors it is given, per architecture, including every host assertion (thrown as a RangeError or TypeError).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Tensor } from "../tensor/tensor.ts";
 * import { transformSfIntoRequiredLayout } from "./transform_sf.ts";
 * // SM100 per-block (128×128) fp32 scales of B: broadcast to per-row, then packed UE8M0
 * const sfb = Tensor.from("f32", [2, 1], new Float32Array([1, 2]));
 * const t = transformSfIntoRequiredLayout(sfb, 256, 128, [1, 128, 128], { arch: 10, isSfa: false });
 * assert.deepEqual(t.shape, [256, 1]);
 * assert.equal(t.at(127, 0), 0x7f);
 * assert.equal(t.at(128, 0), 0x80);
 * ```
 * @module
 */
import { Tensor } from "../tensor/tensor.ts";
import { rowMajorData } from "../tensor/values.ts";
import {
  checkKGroupedPackedUe8m0Tensor,
  getKGroupedMnMajorTmaAlignedPackedUe8m0Tensor,
  getMnMajorTmaAlignedPackedUe8m0Tensor,
  type PackPath,
} from "./packed_ue8m0_layout.ts";
import { ceilDiv, getMnMajorTmaAlignedTensor, getTmaAlignedSize } from "./tma_aligned.ts";

/** A recipe: `(gran_m, gran_n, gran_k)` for both operands, or `(gran_mn, gran_k)` for one. */
export type Recipe = readonly [number, number, number] | readonly [number, number];

/** Options of {@link transformSfIntoRequiredLayout}. */
export interface TransformSfOptions {
  /** GPU architecture major: 9 (SM90) or 10 (SM100). Required. */
  readonly arch: 9 | 10;
  /** Number of groups (the SF has a leading group dimension). */
  readonly numGroups?: number;
  /** With a 3-tuple recipe: whether this is SFA (gran_m) or SFB (gran_n). Must be absent with a 2-tuple. */
  readonly isSfa?: boolean;
  /** `disable_ue8m0_cast` (default false). */
  readonly disableUe8m0Cast?: boolean;
  /** PSUM end offsets for SFA on SM100. */
  readonly psumLayout?: Int32Array | readonly number[];
  /** `get_mk_alignment_for_contiguous_layout()` (default 128). */
  readonly mkAlignment?: number;
  /** Packing path (see {@link getMnMajorTmaAlignedPackedUe8m0Tensor}); default `auto`. */
  readonly path?: PackPath;
}

function host(fn: string, ok: boolean, what: string): void {
  if (!ok) throw new RangeError(`${fn}: ${what} (a DeepGEMM host assertion)`);
}

/**
 * `check_sf_layout(sf, mn, k, gran_mn, gran_k, num_groups, tma_stride_check, sm90_sfb_check, type_check)`.
 *
 * @returns `sf` unchanged
 * @throws {TypeError} for a dtype other than f32/i32 (or than `typeCheck`)
 * @throws {RangeError} for a rank, shape or stride that DeepGEMM rejects
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Tensor } from "../tensor/tensor.ts";
 * import { checkSfLayout } from "./transform_sf.ts";
 * assert.throws(() => checkSfLayout(Tensor.zeros("f32", [4, 3]), 4, 512, 1, 128), /size\(-1\)/);
 * ```
 */
export function checkSfLayout(
  sf: Tensor,
  mn: number,
  k: number,
  granMn: number,
  granK: number,
  numGroups?: number,
  tmaStrideCheck = false,
  sm90SfbCheck = false,
  typeCheck?: "f32" | "i32",
): Tensor {
  const fn = "checkSfLayout";
  if (!(sf instanceof Tensor)) throw new TypeError(`${fn}: sf must be a Tensor`);
  if (typeCheck !== undefined && sf.dtype !== typeCheck) {
    throw new TypeError(`${fn}: sf must be ${typeCheck}, got ${sf.dtype}`);
  }
  if (sf.dtype !== "f32" && sf.dtype !== "i32") throw new TypeError(`${fn}: sf must be f32 or i32, got ${sf.dtype}`);
  const grouped = numGroups !== undefined;
  host(fn, sf.ndim === (grouped ? 3 : 2), `sf must have rank ${grouped ? 3 : 2}, got shape [${sf.shape.join(", ")}]`);
  const d = sf.ndim, sh = sf.shape, st = sf.strides;
  if (grouped) host(fn, sh[0] === numGroups, `size(-3) = ${sh[0]} must equal num_groups = ${numGroups}`);
  host(
    fn,
    sh[d - 2] === ceilDiv(mn, granMn),
    `size(-2) = ${sh[d - 2]} must be ceil(${mn}/${granMn}) = ${ceilDiv(mn, granMn)}`,
  );
  const kPer = granK * (sf.dtype === "f32" ? 1 : 4);
  host(fn, sh[d - 1] === ceilDiv(k, kPer), `size(-1) = ${sh[d - 1]} must be ceil(${k}/${kPer}) = ${ceilDiv(k, kPer)}`);
  if (tmaStrideCheck) {
    if (grouped) host(fn, st[0] === st[d - 1] * sh[d - 1], "stride(-3) must equal stride(-1) · size(-1)");
    host(fn, st[d - 2] === 1 || mn === 1, "stride(-2) must be 1 (MN-major)");
    const tma = getTmaAlignedSize(mn, 4);
    host(fn, st[d - 1] === tma, `stride(-1) = ${st[d - 1]} must be the TMA-aligned mn ${tma}`);
  }
  if (sm90SfbCheck) {
    if (grouped) host(fn, st[0] === sh[d - 2] * sh[d - 1], "stride(-3) must equal size(-2) · size(-1)");
    const rowMajor = st[d - 1] === 1 && st[d - 2] === sh[d - 1];
    const colMajor = st[d - 1] === sh[d - 2] && st[d - 2] === 1;
    host(
      fn,
      rowMajor || colMajor,
      "SM90 SFB must be contiguous, or contiguous after transposing the last two dimensions",
    );
  }
  return sf;
}

/** `sf.index_select(-2, arange(mn) // gran_mn)`: per-row scales from per-block ones (a contiguous copy). */
function broadcastRows(sf: Tensor, mn: number, granMn: number): Tensor {
  const src = rowMajorData(sf) as Float32Array;
  const d = sf.ndim, rows = sf.shape[d - 2], sfk = sf.shape[d - 1], g = d === 3 ? sf.shape[0] : 1;
  const out = new Float32Array(g * mn * sfk);
  for (let b = 0; b < g; b++) {
    for (let i = 0; i < mn; i++) {
      const s = (b * rows + Math.floor(i / granMn)) * sfk;
      out.set(src.subarray(s, s + sfk), (b * mn + i) * sfk);
    }
  }
  return Tensor.from("f32", d === 3 ? [g, mn, sfk] : [mn, sfk], out);
}

/**
 * `transform_sf_into_required_layout(sf, mn, k, recipe, num_groups, is_sfa, disable_ue8m0_cast, psum_layout)`:
 * 1. fp32, (1, 128), SM90 or `disableUe8m0Cast` → {@link getMnMajorTmaAlignedTensor};
 * 2. fp32, (128, 128), SM90 or `disableUe8m0Cast` → returned as is after the SM90 SFB stride check;
 * 3. fp32, gran_k ∈ {32, 128}, SM100 → rows broadcast when gran_mn ≠ 1, then packed UE8M0 (with psum);
 * 4. int32, gran_mn = 1, gran_k ∈ {32, 128}, SM100 → validated (TMA-aligned MN-major strides) and returned;
 * otherwise "Unknown SF transformation".
 *
 * @param sf the scale tensor
 * @param mn rows of the operand (M or N)
 * @param k the K extent
 * @param recipe `[gran_m, gran_n, gran_k]` (needs `isSfa`) or `[gran_mn, gran_k]` (forbids `isSfa`)
 * @param opts {@link TransformSfOptions}
 * @returns the scales in the layout the kernels read
 * @throws {TypeError} for wrong dtypes or a missing `arch`
 * @throws {RangeError} for every DeepGEMM host assertion and for the unknown-transformation case
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Tensor } from "../tensor/tensor.ts";
 * import { transformSfIntoRequiredLayout } from "./transform_sf.ts";
 * const sfa = Tensor.zeros("f32", [5, 2]);
 * assert.deepEqual(transformSfIntoRequiredLayout(sfa, 5, 256, [1, 128], { arch: 9 }).strides, [1, 8]);
 * assert.throws(() => transformSfIntoRequiredLayout(sfa, 5, 256, [1, 128], { arch: 9, isSfa: true }), RangeError);
 * ```
 */
export function transformSfIntoRequiredLayout(
  sf: Tensor,
  mn: number,
  k: number,
  recipe: Recipe,
  opts: TransformSfOptions,
): Tensor {
  const fn = "transformSfIntoRequiredLayout";
  if (opts === null || typeof opts !== "object" || (opts.arch !== 9 && opts.arch !== 10)) {
    throw new TypeError(`${fn}: opts.arch must be 9 (SM90) or 10 (SM100)`);
  }
  const arch = opts.arch, disable = opts.disableUe8m0Cast ?? false;
  let granMn: number, granK: number;
  if (recipe.length === 3) {
    host(fn, opts.isSfa !== undefined, "a (gran_m, gran_n, gran_k) recipe needs is_sfa");
    granMn = opts.isSfa ? recipe[0] : recipe[1];
    granK = recipe[2];
  } else if (recipe.length === 2) {
    host(fn, opts.isSfa === undefined, "a (gran_mn, gran_k) recipe must not be given is_sfa");
    [granMn, granK] = recipe;
  } else throw new RangeError(`${fn}: Invalid recipe [${(recipe as number[]).join(", ")}]`);
  checkSfLayout(sf, mn, k, granMn, granK, opts.numGroups);
  const f32 = sf.dtype === "f32";
  if (f32 && granMn === 1 && granK === 128 && (arch === 9 || disable)) return getMnMajorTmaAlignedTensor(sf);
  if (f32 && granMn === 128 && granK === 128 && (arch === 9 || disable)) {
    return checkSfLayout(sf, mn, k, granMn, granK, opts.numGroups, false, true, "f32");
  }
  if (f32 && (granK === 32 || granK === 128) && arch === 10) {
    host(fn, !disable, "disable_ue8m0_cast is not supported for SM100 fp32 scales with this recipe");
    const b = granMn === 1 ? sf : broadcastRows(sf, mn, granMn);
    return getMnMajorTmaAlignedPackedUe8m0Tensor(b, {
      psumLayout: opts.psumLayout,
      mkAlignment: opts.mkAlignment,
      path: opts.path,
    });
  }
  if (!f32 && granMn === 1 && (granK === 32 || granK === 128) && arch === 10) {
    return checkSfLayout(sf, mn, k, granMn, granK, opts.numGroups, true, false, "i32");
  }
  throw new RangeError(
    `${fn}: Unknown SF transformation (dtype ${sf.dtype}, gran_mn ${granMn}, gran_k ${granK}, SM${arch}0, disable_ue8m0_cast ${disable})`,
  );
}

/**
 * `transform_k_grouped_sf_into_required_layout(sf, ks_cpu, grouped_layout, recipe, k_alignment, use_psum_layout)`:
 * SM90 fp32 → {@link getMnMajorTmaAlignedTensor}; SM100 fp32 → K-grouped packed UE8M0; SM100 int32 → validated.
 *
 * @param sf fp32 `[Σ ceil(k_g/gran_k), mn]` or packed int32
 * @param ksCpu host K sizes (or null/[] with psum)
 * @param groupedLayout per-group K or psum end offsets
 * @param recipe `[1, 1, gran_k]`
 * @param kAlignment multiple of 32
 * @param usePsumLayout psum mode
 * @param arch 9 or 10
 * @returns the transformed scales
 * @throws {RangeError} for DeepGEMM's host assertions and "Unknown cases"
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Tensor } from "../tensor/tensor.ts";
 * import { transformKGroupedSfIntoRequiredLayout } from "./transform_sf.ts";
 * const sf = Tensor.zeros("f32", [2, 4]);
 * assert.throws(() => transformKGroupedSfIntoRequiredLayout(sf, [256], [256], [1, 128, 128], 128, false, 10), RangeError);
 * ```
 */
export function transformKGroupedSfIntoRequiredLayout(
  sf: Tensor,
  ksCpu: readonly number[] | null | undefined,
  groupedLayout: Int32Array | readonly number[],
  recipe: readonly [number, number, number],
  kAlignment: number,
  usePsumLayout: boolean,
  arch: 9 | 10,
): Tensor {
  const fn = "transformKGroupedSfIntoRequiredLayout";
  if (!(sf instanceof Tensor)) throw new TypeError(`${fn}: sf must be a Tensor`);
  host(fn, sf.ndim === 2, "sf must have rank 2");
  host(fn, recipe[0] === 1 && recipe[1] === 1, "recipe must be (1, 1, gran_k)");
  const granK = recipe[2];
  host(fn, granK === 32 || granK === 128, `gran_k must be 32 or 128, got ${granK}`);
  host(fn, kAlignment % 32 === 0, `k_alignment must be a multiple of 32, got ${kAlignment}`);
  if (sf.dtype === "f32" && arch === 9) return getMnMajorTmaAlignedTensor(sf);
  if (sf.dtype === "f32" && arch === 10) {
    return getKGroupedMnMajorTmaAlignedPackedUe8m0Tensor(sf, groupedLayout, ksCpu, granK, kAlignment, usePsumLayout);
  }
  if (sf.dtype === "i32" && arch === 10) {
    return checkKGroupedPackedUe8m0Tensor(sf, groupedLayout, ksCpu, granK, kAlignment, usePsumLayout);
  }
  throw new RangeError(`${fn}: Unknown cases (dtype ${sf.dtype}, SM${arch}0)`);
}
