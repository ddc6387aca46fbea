/**
 * The shared engine of DeepGEMM's utility quantizers (deep_gemm/utils/math.py; deepgemm-ops.md §2.4–§2.8):
 * amax per group (exact in fp32, NaN-propagating like `torch.amax`), `clamp(1e-4)`, `amax / D` (D = 448 or 6) with
 * the device's scalar-division semantics, optional `ceil_to_ue8m0`, the reciprocal `fl32(1/sf)`, and per element
 * `code = convert(fl32(x · r))`.
 * @module
 */
import { f32FromBits } from "../fp32.ts";
import { ceilToUe8m0Bits } from "./ceil_to_ue8m0.ts";
import { encodeBits, type FastEncoder } from "./_fast_encode.ts";
import { encodeArray } from "../formats/batch.ts";
import { divideByScalar, type Semantics } from "./scalar_division.ts";

/** `1e-4` as fp32 (0x38D1B717), DeepGEMM's amax floor. */
export const AMAX_FLOOR: number = Math.fround(1e-4);

const SCRATCH = new Float32Array(1);
const SCRATCH_U = new Uint32Array(SCRATCH.buffer);

/**
 * The NaN pattern a product `x · r` gives. GPU (`mul.f32`): the canonical NaN 0x7FFFFFFF. CPU (x86 SSE/AVX,
 * [inferred]): a NaN `x` passes through quieted; else a NaN `r` (always positive here: it comes from |amax|); else
 * (±Inf · 0) the x86 default NaN 0xFFC00000.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { productNanBits } from "./_group_quant.ts";
 * assert.equal(productNanBits("gpu", 0x7f800001, false), 0x7fffffff);
 * assert.equal(productNanBits("cpu", 0x7f800001, false), 0x7fc00001); // x86: the NaN x passes through, quieted
 * assert.equal(productNanBits("cpu", 0x7f800000, false), 0xffc00000); // Inf · 0: the default NaN
 * ```
 */
export function productNanBits(semantics: Semantics, xBits: number, rIsNan: boolean): number {
  if (semantics === "gpu") return 0x7fffffff;
  if ((xBits & 0x7fffffff) > 0x7f800000) return (xBits | 0x00400000) >>> 0;
  return rIsNan ? 0x7fc00000 : 0xffc00000;
}

/**
 * Turns per-group amax values (in place) into scales; returns the reciprocals `fl32(1/sf)`.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { scalesFromAmax } from "./_group_quant.ts";
 * const amax = new Float32Array([448, 896]);
 * const r = scalesFromAmax(amax, 448, "gpu", true);
 * assert.deepEqual([...amax], [1, 2]); // scales, in place (UE8M0: powers of two)
 * assert.deepEqual([...r], [1, 0.5]);
 * ```
 */
export function scalesFromAmax(
  amaxSf: Float32Array,
  divisor: number,
  semantics: Semantics,
  useUe8m0: boolean,
): Float32Array {
  const r = new Float32Array(amaxSf.length);
  for (let g = 0; g < amaxSf.length; g++) {
    let a = amaxSf[g];
    if (a < AMAX_FLOOR) a = AMAX_FLOOR; // .clamp(1e-4): NaN stays NaN
    let s = divideByScalar(a, divisor, semantics);
    if (useUe8m0) {
      SCRATCH[0] = s;
      s = f32FromBits(ceilToUe8m0Bits(SCRATCH_U[0]));
    }
    amaxSf[g] = s;
    r[g] = 1 / s; // stored into a Float32Array: fl32(1/sf), the correctly rounded reciprocal
  }
  return r;
}

/** Max |x| with NaN propagation over x[from, to) (a running value `a` in, the new one out). */
function amaxRun(vals: Float32Array, from: number, to: number, a: number): number {
  for (let k = from; k < to; k++) {
    const v = Math.abs(vals[k]);
    if (v > a || v !== v) a = v;
    if (a !== a) return a;
  }
  return a;
}

/** Result of {@link groupQuant2d}. */
export interface GroupQuant2d {
  /** Codes, row-major `[m, n]`. */
  readonly codes: Uint8Array;
  /** Scales, row-major `[ceil(m/bm), ceil(n/bn)]`. */
  readonly sf: Float32Array;
  /** Scale rows. */
  readonly sfRows: number;
  /** Scale columns. */
  readonly sfCols: number;
}

/**
 * Quantizes a row-major `[m, n]` fp32 array in groups of `bm × bn` elements (zero padding of partial groups does not
 * change amax, so it is implicit). `vals` is overwritten (it must be a scratch copy); codes come from the profile's
 * batch encoder (`encodeArray`).
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { groupQuant2d } from "./_group_quant.ts";
 * // [2, 2] in 1 × 2 groups to e4m3 with UE8M0 scales: row 0 (amax 2) gets 2^-7, row 1 (amax 448) gets 1.
 * const g = groupQuant2d(new Float32Array([1, 2, 448, -448]), 2, 2, 1, 2, 448, "gpu", true, "torch_2_11", "e4m3");
 * assert.deepEqual([...g.sf], [2 ** -7, 1]);
 * assert.deepEqual([...g.codes], [0x70, 0x78, 0x7e, 0xfe]); // 128, 256, 448, −448
 * ```
 */
export function groupQuant2d(
  vals: Float32Array,
  m: number,
  n: number,
  bm: number,
  bn: number,
  divisor: number,
  semantics: Semantics,
  useUe8m0: boolean,
  profile: string,
  format: "e4m3" | "e2m1",
): GroupQuant2d {
  const sfRows = Math.ceil(m / bm), sfCols = Math.ceil(n / bn);
  const sf = new Float32Array(sfRows * sfCols);
  for (let i = 0; i < m; i++) {
    const base = i * n, g0 = Math.floor(i / bm) * sfCols;
    for (let jb = 0; jb < sfCols; jb++) {
      const j0 = jb * bn, j1 = Math.min(n, j0 + bn);
      sf[g0 + jb] = amaxRun(vals, base + j0, base + j1, sf[g0 + jb]);
    }
  }
  const r = scalesFromAmax(sf, divisor, semantics, useUe8m0);
  // products fl32(x · r), in place (vals is the caller's scratch copy), NaN spellings fixed per semantics
  const valsU = new Uint32Array(vals.buffer, vals.byteOffset, vals.length);
  for (let i = 0; i < m; i++) {
    const base = i * n, g0 = Math.floor(i / bm) * sfCols;
    for (let jb = 0; jb < sfCols; jb++) {
      const rg = r[g0 + jb];
      const k1 = base + Math.min(n, jb * bn + bn);
      for (let k = base + jb * bn; k < k1; k++) {
        const p = vals[k] * rg;
        if (p === p) vals[k] = p;
        else valsU[k] = productNanBits(semantics, valsU[k], rg !== rg);
      }
    }
  }
  const codes = encodeArray(profile, format, vals) as Uint8Array;
  return { codes, sf, sfRows, sfCols };
}

/**
 * Quantizes `vals` where element k belongs to group `groupOf[k]` (any grouping; used for `per_custom_dims`).
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { fastEncoder } from "./_fast_encode.ts";
 * import { groupQuantIndexed } from "./_group_quant.ts";
 * // The groups of the example of groupQuant2d, interleaved: element k belongs to group k % 2.
 * const enc = fastEncoder("torch_2_11", "e4m3");
 * const g = groupQuantIndexed(new Float32Array([1, 448, 2, -448]), new Int32Array([0, 1, 0, 1]), 2, 448, "gpu", true, enc);
 * assert.deepEqual([...g.sf], [2 ** -7, 1]);
 * assert.deepEqual([...g.codes], [0x70, 0x7e, 0x78, 0xfe]);
 * ```
 */
export function groupQuantIndexed(
  vals: Float32Array,
  groupOf: Int32Array,
  numGroups: number,
  divisor: number,
  semantics: Semantics,
  useUe8m0: boolean,
  enc: FastEncoder,
): { codes: Uint8Array; sf: Float32Array } {
  const sf = new Float32Array(numGroups);
  for (let k = 0; k < vals.length; k++) {
    const g = groupOf[k];
    const a = sf[g];
    if (a !== a) continue;
    const v = Math.abs(vals[k]);
    if (v > a || v !== v) sf[g] = v;
  }
  const r = scalesFromAmax(sf, divisor, semantics, useUe8m0);
  const valsU = new Uint32Array(vals.buffer, vals.byteOffset, vals.length);
  const codes = new Uint8Array(vals.length);
  for (let k = 0; k < vals.length; k++) {
    const rg = r[groupOf[k]];
    SCRATCH[0] = vals[k] * rg;
    let b = SCRATCH_U[0];
    if ((b & 0x7fffffff) > 0x7f800000) b = productNanBits(semantics, valsU[k], rg !== rg);
    codes[k] = encodeBits(enc, b);
  }
  return { codes, sf };
}
