/**
 * DeepGEMM's packed-UE8M0 scale layouts for SM100 (csrc/jit_kernels/impls/smxx_layout.hpp and
 * deep_gemm/include/deep_gemm/impls/smxx_layout.cuh; deepgemm-ops.md §3): fp32 power-of-two scales become their
 * exponent bytes, four K-consecutive bytes per int32 (byte j = K index 4p + j, missing ones 0), stored MN-major and
 * TMA-aligned.
 *
 * Two implementations exist in DeepGEMM and they differ on invalid input (a scale with a sign or mantissa bit):
 * - `kernel`: the CUDA pack kernels, which trap (`DG_DEVICE_ASSERT((v & 0x807fffff) == 0)`); the oracle throws a
 *   RangeError naming the scale instead;
 * - `torch`: the PyTorch fallback `get_mn_major_tma_aligned_packed_ue8m0_tensor_torch`, which silently takes
 *   `(bits >> 23)` truncated to a byte (floor to a power of two, sign dropped).
 * `path: "auto"` (default) picks the one DeepGEMM picks for the input's shape and strides.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Tensor } from "../tensor/tensor.ts";
 * import { getMnMajorTmaAlignedPackedUe8m0Tensor } from "./packed_ue8m0_layout.ts";
 * const sf = Tensor.from("f32", [1, 5], new Float32Array([1, 2, 4, 0.5, 2 ** -22]));
 * const p = getMnMajorTmaAlignedPackedUe8m0Tensor(sf);
 * assert.deepEqual(p.shape, [1, 2]);
 * assert.equal(p.at(0, 0), 0x7e81807f);
 * assert.equal(p.at(0, 1), 0x69); // byte 105; bytes beyond sfk are 0
 * ```
 * @module
 */
import { Tensor } from "../tensor/tensor.ts";
import { rowMajorData } from "../tensor/values.ts";
import { align, ceilDiv, getTmaAlignedSize, mnMajorTmaAlignedStrides, preprocessSf } from "./tma_aligned.ts";
import { describeValue } from "../describe.ts";

/** Which of DeepGEMM's two packers to reproduce. */
export type PackPath = "auto" | "kernel" | "torch";

/** Options of {@link getMnMajorTmaAlignedPackedUe8m0Tensor}. */
export interface PackedLayoutOptions {
  /** PSUM layout: int32 cumulative end rows of each group; rows in no group range are packed as 0. */
  readonly psumLayout?: Int32Array | readonly number[];
  /** `get_mk_alignment_for_contiguous_layout()` (default 128): group g starts at `align(end_{g−1}, mkAlignment)`. */
  readonly mkAlignment?: number;
  /** `auto` (default): DeepGEMM's choice; `kernel`: the CUDA kernel's semantics; `torch`: the PyTorch fallback. */
  readonly path?: PackPath;
}

function hex(b: number): string {
  return "0x" + (b >>> 0).toString(16).padStart(8, "0");
}

/** The kernel's check: the trap becomes a RangeError naming the scale. */
function checkPackable(fn: string, bits: number, where: string): void {
  if ((bits & 0x807fffff) !== 0) {
    throw new RangeError(
      `${fn}: scale ${where} has bits ${
        hex(bits)
      }, not a power of two with sign 0; DeepGEMM's pack kernel traps here ` +
        `(DG_DEVICE_ASSERT((v & 0x807fffff) == 0)); pass UE8M0-rounded scales, or path "torch" for the PyTorch fallback`,
    );
  }
}

function host(fn: string, ok: boolean, what: string): void {
  if (!ok) throw new RangeError(`${fn}: ${what} (a DeepGEMM host assertion)`);
}

/**
 * Which path DeepGEMM takes for this input (`get_mn_major_tma_aligned_packed_ue8m0_tensor`): contiguous input uses the
 * kernel unless `(mn · sfk) % 4 != 0` with G > 1; non-contiguous input uses the PyTorch fallback when `mn % 4 != 0` or
 * G > 1, and otherwise must be exactly MN-major (`stride = (1, mn)`).
 *
 * @param sf the fp32 scale tensor
 * @returns `kernel` or `torch`
 * @throws {RangeError} for a non-contiguous input that DeepGEMM rejects
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Tensor } from "../tensor/tensor.ts";
 * import { deepgemmPackPath } from "./packed_ue8m0_layout.ts";
 * assert.equal(deepgemmPackPath(Tensor.zeros("f32", [2, 4097, 57])), "torch");
 * assert.equal(deepgemmPackPath(Tensor.zeros("f32", [4097, 57])), "kernel");
 * ```
 */
export function deepgemmPackPath(sf: Tensor): "kernel" | "torch" {
  const fn = "getMnMajorTmaAlignedPackedUe8m0Tensor";
  const { g, mn, sfk, strides } = preprocessSf(fn, sf);
  if (sf.isContiguous()) return (mn * sfk) % 4 !== 0 && g > 1 ? "torch" : "kernel";
  if (mn % 4 !== 0 || g > 1) return "torch";
  host(
    fn,
    strides[1] === 1 && strides[2] === mn,
    `a non-contiguous sf must have strides (1, mn) = (1, ${mn}), got (${strides[1]}, ${strides[2]})`,
  );
  return "kernel";
}

/**
 * `get_mn_major_tma_aligned_packed_ue8m0_tensor(sf, psum_layout=None)`: fp32 `[(G,) mn, sfk]` → int32
 * `[(G,) mn, ceil(sfk/4)]`, strides `(tma_mn · P, 1, tma_mn)` (2-D: `(1, tma_mn)`).
 *
 * @param sf fp32 scales, any strides
 * @param opts {@link PackedLayoutOptions}
 * @returns the packed int32 tensor (padding rows are zero here; uninitialised on a GPU)
 * @throws {TypeError} for a rank other than 2/3 or a dtype other than f32
 * @throws {RangeError} for DeepGEMM's host assertions (psum with G > 1 or non-contiguous input, empty psum) and, on the
 *   kernel path, for scales the device kernel would trap on
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Tensor } from "../tensor/tensor.ts";
 * import { getMnMajorTmaAlignedPackedUe8m0Tensor } from "./packed_ue8m0_layout.ts";
 * const sf = Tensor.from("f32", [2, 1], new Float32Array([3, 1])); // 3 is not a power of two
 * assert.throws(() => getMnMajorTmaAlignedPackedUe8m0Tensor(sf), /traps/);
 * assert.equal(getMnMajorTmaAlignedPackedUe8m0Tensor(sf, { path: "torch" }).at(0, 0), 0x80); // floor: 2
 * ```
 */
export function getMnMajorTmaAlignedPackedUe8m0Tensor(sf: Tensor, opts: PackedLayoutOptions = {}): Tensor {
  const fn = "getMnMajorTmaAlignedPackedUe8m0Tensor";
  const { g, mn, sfk } = preprocessSf(fn, sf);
  const path = opts.path ?? "auto";
  if (path !== "auto" && path !== "kernel" && path !== "torch") {
    throw new RangeError(`${fn}: path ${describeValue(path)} is not "auto", "kernel" or "torch"`);
  }
  const psum = opts.psumLayout;
  const mkAlignment = opts.mkAlignment ?? 128;
  if (psum !== undefined) {
    host(
      fn,
      g === 1 && sf.isContiguous(),
      "psum_layout needs a single, contiguous sf (num_sf_batches == 1 and is_contiguous)",
    );
    host(fn, psum.length > 0, "psum_layout must not be empty");
    if (!Number.isSafeInteger(mkAlignment) || mkAlignment <= 0) {
      throw new RangeError(`${fn}: mkAlignment must be a positive integer`);
    }
  }
  const chosen = path === "auto" ? deepgemmPackPath(sf) : path;
  if (chosen === "torch" && psum !== undefined) {
    throw new RangeError(`${fn}: the PyTorch fallback has no psum_layout support (DeepGEMM never takes it with psum)`);
  }
  const P = ceilDiv(sfk, 4);
  const tma = getTmaAlignedSize(mn, 4);
  const src = new Uint32Array((rowMajorData(sf) as Float32Array).slice().buffer);
  const out = new Int32Array(g * tma * P);
  // PSUM: valid rows are [align(end_{g-1}, mk), end_g) (transpose_and_pack_fp32_into_ue8m0's is_valid_mn)
  let valid: Uint8Array | null = null;
  if (psum !== undefined) {
    valid = new Uint8Array(mn);
    for (let q = 0; q < psum.length; q++) {
      const start = q === 0 ? 0 : align(psum[q - 1] >>> 0, mkAlignment);
      const end = Math.min(psum[q] >>> 0, mn);
      for (let i = start; i < end; i++) valid[i] = 1;
    }
  }
  for (let b = 0; b < g; b++) {
    for (let i = 0; i < mn; i++) {
      const rowValid = valid === null || valid[i] === 1;
      const s0 = (b * mn + i) * sfk, d0 = b * tma * P + i;
      for (let p = 0; p < P; p++) {
        let word = 0;
        for (let j = 0; j < 4; j++) {
          const k = 4 * p + j;
          if (!rowValid || k >= sfk) continue;
          const bits = src[s0 + k];
          if (chosen === "kernel") checkPackable(fn, bits, sf.ndim === 3 ? `[${b}, ${i}, ${k}]` : `[${i}, ${k}]`);
          word |= ((bits >>> 23) & 0xff) << (8 * j); // torch: (bits >> 23).to(uint8) = the low byte
        }
        out[d0 + p * tma] = word;
      }
    }
  }
  const shape = sf.ndim === 2 ? [mn, P] : [g, mn, P];
  return new Tensor("i32", shape, out, mnMajorTmaAlignedStrides(shape, 4));
}

/** Group K extents from `grouped_layout` (ks, or psum end offsets), as the pack kernel reads them. */
function groupKs(fn: string, layout: ArrayLike<number>, usePsum: boolean, kAlignment: number): number[] {
  const ks: number[] = [];
  let prevEnd = 0;
  for (let q = 0; q < layout.length; q++) {
    const v = layout[q];
    const k = usePsum ? v - align(prevEnd, kAlignment) : v;
    if (!Number.isSafeInteger(k) || k < 0) {
      throw new RangeError(
        `${fn}: group ${q} has K = ${k} (grouped_layout ${
          usePsum ? "end offsets must not decrease" : "entries must be ≥ 0"
        })`,
      );
    }
    ks.push(k);
    if (usePsum) prevEnd = v;
  }
  return ks;
}

function checkKGroupedArgs(fn: string, granK: number, kAlignment: number): void {
  host(fn, granK === 32 || granK === 128, `gran_k must be 32 or 128, got ${granK}`);
  host(
    fn,
    Number.isSafeInteger(kAlignment) && kAlignment % 32 === 0,
    `k_alignment must be a multiple of 32, got ${kAlignment}`,
  );
}

/**
 * `get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor(sf, grouped_layout, ks_cpu, gran_k, k_alignment,
 * use_psum_layout=False)`: K-grouped (wgrad) scales `[Σ_g ceil(k_g/gran_k), mn]` → int32 `[P, mn]` row-major. Each
 * group's SF rows are packed four at a time, never across groups (a group's last word is zero-filled).
 * `P = Σ ceil(k_g / (4 gran_k))` when `ksCpu` is given; otherwise (psum only) the upper bound `(sfK + 3G) / 4`, whose
 * trailing rows DeepGEMM leaves unwritten (zero here). Group K extents come from `groupedLayout` (ks, or psum end
 * offsets with `k_g = end_g − align(end_{g−1}, kAlignment)`), as in the kernel.
 *
 * @param sf contiguous fp32 `[sfK, mn]`, `mn % 4 == 0`
 * @param groupedLayout int32 per group: K (non-psum) or cumulative end offset (psum); at most 128 groups
 * @param ksCpu host copy of the K sizes, or null/[] (psum only)
 * @param granK 32 or 128
 * @param kAlignment multiple of 32
 * @param usePsumLayout whether `groupedLayout` holds end offsets
 * @returns int32 `[P, mn]`
 * @throws {TypeError} for a wrong rank or dtype
 * @throws {RangeError} for DeepGEMM's host assertions, K sizes that disagree with `sf`, and scales the kernel traps on
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Tensor } from "../tensor/tensor.ts";
 * import { getKGroupedMnMajorTmaAlignedPackedUe8m0Tensor } from "./packed_ue8m0_layout.ts";
 * // groups of K 256 and 128 at gran 128: 2 + 1 SF rows → one packed row each
 * const sf = Tensor.from("f32", [3, 4], new Float32Array(12).fill(1));
 * const p = getKGroupedMnMajorTmaAlignedPackedUe8m0Tensor(sf, [256, 128], [256, 128], 128, 128);
 * assert.deepEqual(p.shape, [2, 4]);
 * assert.equal(p.at(0, 0), 0x7f7f);
 * assert.equal(p.at(1, 3), 0x7f);
 * ```
 */
export function getKGroupedMnMajorTmaAlignedPackedUe8m0Tensor(
  sf: Tensor,
  groupedLayout: Int32Array | readonly number[],
  ksCpu: readonly number[] | null | undefined,
  granK: number,
  kAlignment: number,
  usePsumLayout = false,
): Tensor {
  const fn = "getKGroupedMnMajorTmaAlignedPackedUe8m0Tensor";
  checkKGroupedArgs(fn, granK, kAlignment);
  if (!(sf instanceof Tensor) || sf.ndim !== 2) throw new TypeError(`${fn}: sf must be a tensor of rank 2 [sf_k, mn]`);
  if (sf.dtype !== "f32") throw new TypeError(`${fn}: sf must be f32, got ${sf.dtype}`);
  const [sfK, mn] = sf.shape;
  const G = groupedLayout.length;
  host(fn, sf.isContiguous(), "sf must be contiguous");
  host(fn, G <= 128 && mn % 4 === 0, `needs num_groups ≤ 128 and mn % 4 == 0, got ${G} groups and mn = ${mn}`);
  const synced = ksCpu !== null && ksCpu !== undefined && ksCpu.length > 0;
  let P = 0;
  if (synced) {
    host(fn, ksCpu!.length === G, `ks_cpu has ${ksCpu!.length} entries for ${G} groups`);
    let refSfK = 0;
    for (const k of ksCpu!) {
      refSfK += ceilDiv(k, granK);
      P += ceilDiv(k, granK * 4);
    }
    host(fn, usePsumLayout || refSfK === sfK, `Σ ceil(k/gran_k) = ${refSfK} does not match sf's ${sfK} rows`);
  } else {
    host(fn, usePsumLayout, "ks_cpu is required unless use_psum_layout");
    P = Math.floor((sfK + G * 3) / 4);
  }
  const out = new Int32Array(P * mn);
  if (P === 0) return Tensor.from("i32", [0, mn], out);
  const src = new Uint32Array((rowMajorData(sf) as Float32Array).slice().buffer);
  // pack_fp32_into_ue8m0: per packed row, find the owner group and its SF row range
  const ks = G > 1 || usePsumLayout ? groupKs(fn, groupedLayout, usePsumLayout, kAlignment) : null;
  for (let p = 0; p < P; p++) {
    let start = 0, end = sfK, padding = 0;
    if (ks !== null) {
      let prefixRows = 0, prefixPacked = 0, found = false;
      for (const k of ks) {
        const rows = ceilDiv(k, granK);
        start = prefixRows;
        end = start + rows;
        prefixRows += rows;
        prefixPacked += ceilDiv(rows, 4);
        if (p < prefixPacked) {
          found = true;
          break;
        }
        if (rows % 4 > 0) padding += 4 - (rows % 4);
      }
      if (!found) continue; // the kernel's warp returns: row left unwritten
    }
    for (let j = 0; j < 4; j++) {
      const row = 4 * p + j - padding;
      if (row < start || row >= end) continue;
      if (row >= sfK) throw new RangeError(`${fn}: grouped_layout needs SF row ${row}, but sf has ${sfK} rows`);
      for (let i = 0; i < mn; i++) {
        const bits = src[row * mn + i];
        checkPackable(fn, bits, `[${row}, ${i}]`);
        out[p * mn + i] |= (bits >>> 23) << (8 * j);
      }
    }
  }
  return Tensor.from("i32", [P, mn], out);
}

/**
 * `check_k_grouped_packed_ue8m0_tensor(sf, grouped_layout, ks_cpu, gran_k, k_alignment, use_psum_layout)`: validates
 * user-supplied packed K-grouped scales and returns them unchanged.
 *
 * @param sf int32 `[P, mn]`, contiguous, `mn % 4 == 0`, P > 0
 * @param groupedLayout per-group K or end offsets (only its length is used)
 * @param ksCpu host K sizes, or null/[] (psum only)
 * @param granK 32 or 128
 * @param kAlignment multiple of 32
 * @param usePsumLayout psum mode
 * @returns `sf`
 * @throws {TypeError} for a wrong rank or dtype
 * @throws {RangeError} for DeepGEMM's host assertions (too few packed rows when not psum, ...)
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Tensor } from "../tensor/tensor.ts";
 * import { checkKGroupedPackedUe8m0Tensor } from "./packed_ue8m0_layout.ts";
 * const sf = Tensor.zeros("i32", [1, 8]);
 * assert.equal(checkKGroupedPackedUe8m0Tensor(sf, [512], [512], 128, 128), sf);
 * assert.throws(() => checkKGroupedPackedUe8m0Tensor(sf, [1024], [1024], 128, 128), RangeError);
 * ```
 */
export function checkKGroupedPackedUe8m0Tensor(
  sf: Tensor,
  groupedLayout: Int32Array | readonly number[],
  ksCpu: readonly number[] | null | undefined,
  granK: number,
  kAlignment: number,
  usePsumLayout = false,
): Tensor {
  const fn = "checkKGroupedPackedUe8m0Tensor";
  checkKGroupedArgs(fn, granK, kAlignment);
  if (!(sf instanceof Tensor) || sf.dtype !== "i32") throw new TypeError(`${fn}: sf must be an i32 tensor`);
  if (sf.ndim !== 2) throw new TypeError(`${fn}: sf must have rank 2, got shape [${sf.shape.join(", ")}]`);
  host(fn, sf.isContiguous(), "sf must be contiguous");
  const [P, mn] = sf.shape;
  const G = groupedLayout.length;
  host(fn, mn % 4 === 0, `mn = ${mn} must be a multiple of 4`);
  host(fn, sf.strides[0] === mn && sf.strides[1] === 1, `sf strides must be (mn, 1) = (${mn}, 1)`);
  host(fn, P > 0, "sf must have at least one packed row");
  const synced = ksCpu !== null && ksCpu !== undefined && ksCpu.length > 0;
  if (synced) {
    host(fn, ksCpu!.length === G, `ks_cpu has ${ksCpu!.length} entries for ${G} groups`);
    if (!usePsumLayout) {
      let need = 0;
      for (const k of ksCpu!) need += ceilDiv(k, granK * 4);
      host(fn, P >= need, `sf has ${P} packed rows, the groups need ${need}`);
    }
  } else host(fn, usePsumLayout, "ks_cpu is required unless use_psum_layout");
  return sf;
}
