/**
 * The `exact` model (`D = round_out(C + Σ a·sa·b·sb)`, one rounding of the true value) for e4m3 / e2m1 operands,
 * evaluated a whole output tile at a time. Same values as the generic per-element path (`element.ts`): the sum is
 * exact either way, so only speed differs. Operands are decoded once per tile; four columns share each A load;
 * each scale group's dot product is exact in binary64 (e4m3 products are multiples of 2^-18 below 2^18, e2m1 ones
 * multiples of 2^-2, so ≤ 2^16 of them sum exactly) and enters an {@link ExactSum} once, times its scale product.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { exactTile, exactTileApplies } from "./exact_tile.ts";
 * import { TileScratch } from "./sm90_fp8_tile.ts";
 * // 1 × 1 × 2: (1.0·1.0 + 0.5·1.0) with scales 2 and 3 → 9, rounded once to bf16.
 * const a = new Uint8Array([0x38, 0x30]), b = new Uint8Array([0x38, 0x38]);
 * const out = new Float64Array(1);
 * exactTile("e4m3", "e4m3", a, new Int32Array([0]), b, new Int32Array([0]), 2, new Float64Array([2]),
 *   new Int32Array([0]), new Float64Array([3]), new Int32Array([0]), 128, null, "bf16", out, new TileScratch());
 * assert.equal(out[0], 9);
 * assert.equal(exactTileApplies("e2m1", "e4m3", true, 1 << 20), true);
 * ```
 * @module
 */
import { ExactSum } from "../tensor_core/exact_sum.ts";
import { type OperandFormat, operandTable } from "../tensor_core/operand_tables.ts";
import type { TileScratch } from "./sm90_fp8_tile.ts";

const FORMATS = new Set(["e4m3", "e2m1"]);
/** Largest exact binary64 dot product of e4m3/e2m1 codes (products < 2^18 at a 2^-18 grid: 2^16 terms < 2^52). */
const MAX_EXACT_TERMS = 65536;

/**
 * Whether {@link exactTile} takes a job: e4m3/e2m1 operands, and either scales (groups of at most 2^16) or
 * K ≤ 2^16 without scales.
 * @param aFormat A's format
 * @param bFormat B's format
 * @param scaled whether scale factors are applied
 * @param K the reduction length (or, with scales, any value)
 * @returns true when the tile kernel applies
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { exactTileApplies } from "./exact_tile.ts";
 * assert.equal(exactTileApplies("e4m3", "e2m1", false, 4096), true);
 * assert.equal(exactTileApplies("bf16", "bf16", false, 4096), false);
 * assert.equal(exactTileApplies("e4m3", "e4m3", false, 2 ** 17), false); // too long without scales
 * ```
 */
export function exactTileApplies(aFormat: string, bFormat: string, scaled: boolean, K: number): boolean {
  return FORMATS.has(aFormat) && FORMATS.has(bFormat) && (scaled || K <= MAX_EXACT_TERMS);
}

const SUMS = [new ExactSum(), new ExactSum(), new ExactSum(), new ExactSum()];

function decode(codes: ArrayLike<number>, offs: Int32Array, K: number, values: Float64Array, v: Float64Array): void {
  for (let i = 0; i < offs.length; i++) {
    const src = offs[i], o = i * K;
    if (src < 0) {
      v.fill(0, o, o + K);
      continue;
    }
    for (let k = 0; k < K; k++) v[o + k] = values[codes[src + k]];
  }
}

/**
 * Output values (already rounded to `out`) of every element of a tile, row-major `[rows, cols]`.
 * @param aFormat A's format (e4m3 or e2m1)
 * @param bFormat B's format
 * @param a A codes
 * @param aOff offset of each tile row's K codes (−1: zero row)
 * @param b B codes
 * @param bOff offset of each tile column's K codes
 * @param K reduction length
 * @param sfa A scale values per (row, group), or null
 * @param sfaOff offset in `sfa` of each tile row
 * @param sfb B scale values per (column, group), or null
 * @param sfbOff offset in `sfb` of each tile column
 * @param granK K elements per scale group
 * @param c C value of each tile element (row-major), or null
 * @param out output type
 * @param res output values, `rows·cols`
 * @param scratch reusable buffers
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { TileScratch } from "./sm90_fp8_tile.ts";
 * import { exactTile } from "./exact_tile.ts";
 * // One element, K = 2: 1.0·1.0 + 1.0·2.0 (e4m3 0x38 = 1, 0x40 = 2), fp32 output, C = 0.5.
 * const a = new Uint8Array([0x38, 0x38]), b = new Uint8Array([0x38, 0x40]);
 * const res = new Float64Array(1);
 * exactTile("e4m3", "e4m3", a, new Int32Array([0]), b, new Int32Array([0]), 2, null, null, null, null, 128,
 *   new Float64Array([0.5]), "f32", res, new TileScratch());
 * assert.equal(res[0], 3.5);
 * ```
 */
export function exactTile(
  aFormat: string,
  bFormat: string,
  a: ArrayLike<number>,
  aOff: Int32Array,
  b: ArrayLike<number>,
  bOff: Int32Array,
  K: number,
  sfa: Float64Array | null,
  sfaOff: Int32Array | null,
  sfb: Float64Array | null,
  sfbOff: Int32Array | null,
  granK: number,
  c: Float64Array | null,
  out: "bf16" | "f32",
  res: Float64Array,
  scratch: TileScratch,
): void {
  const R = aOff.length, C = bOff.length;
  scratch.reserve(R * K, C * K);
  const av = scratch.av, bv = scratch.bv;
  decode(a, aOff, K, operandTable(aFormat as OperandFormat).values, av);
  decode(b, bOff, K, operandTable(bFormat as OperandFormat).values, bv);
  const scaled = sfa !== null && sfb !== null && sfaOff !== null && sfbOff !== null;
  const G = scaled ? Math.ceil(K / granK) : 1, len = scaled ? granK : K;
  const frac = out === "bf16" ? 7 : 23;
  for (let i = 0; i < R; i++) {
    exactRow(av, bv, K, C, i, G, len, scaled ? sfa : null, sfaOff, sfb, sfbOff, c, frac, res);
  }
}

/** One tile row (a function of its own so that V8 optimises it as a whole, see `sm90_fp8_tile.ts`). */
function exactRow(
  av: Float64Array,
  bv: Float64Array,
  K: number,
  C: number,
  i: number,
  G: number,
  len: number,
  sfa: Float64Array | null,
  sfaOff: Int32Array | null,
  sfb: Float64Array | null,
  sfbOff: Int32Array | null,
  c: Float64Array | null,
  frac: number,
  res: Float64Array,
): void {
  const scaled = sfa !== null && sfb !== null && sfaOff !== null && sfbOff !== null;
  const [s0, s1, s2, s3] = SUMS;
  const ao = i * K, fo = i * C;
  let j = 0;
  for (; j + 4 <= C; j += 4) {
    const o0 = j * K, o1 = o0 + K, o2 = o1 + K, o3 = o2 + K;
    s0.reset(), s1.reset(), s2.reset(), s3.reset();
    if (c !== null) s0.add(c[fo + j]), s1.add(c[fo + j + 1]), s2.add(c[fo + j + 2]), s3.add(c[fo + j + 3]);
    for (let g = 0; g < G; g++) {
      const k0 = g * len, k1 = K - k0 < len ? K : k0 + len;
      let p0 = 0, p1 = 0, p2 = 0, p3 = 0;
      for (let k = k0; k < k1; k++) {
        const v = av[ao + k];
        p0 += v * bv[o0 + k];
        p1 += v * bv[o1 + k];
        p2 += v * bv[o2 + k];
        p3 += v * bv[o3 + k];
      }
      if (scaled) {
        const sa = sfa[sfaOff[i] + g]; // two fp32 values: their product is exact in binary64
        s0.addProduct(sa * sfb[sfbOff[j] + g], p0);
        s1.addProduct(sa * sfb[sfbOff[j + 1] + g], p1);
        s2.addProduct(sa * sfb[sfbOff[j + 2] + g], p2);
        s3.addProduct(sa * sfb[sfbOff[j + 3] + g], p3);
      } else {
        s0.add(p0), s1.add(p1), s2.add(p2), s3.add(p3);
      }
    }
    res[fo + j] = s0.round(frac, -126, 127);
    res[fo + j + 1] = s1.round(frac, -126, 127);
    res[fo + j + 2] = s2.round(frac, -126, 127);
    res[fo + j + 3] = s3.round(frac, -126, 127);
  }
  for (; j < C; j++) {
    const o0 = j * K;
    s0.reset();
    if (c !== null) s0.add(c[fo + j]);
    for (let g = 0; g < G; g++) {
      const k0 = g * len, k1 = K - k0 < len ? K : k0 + len;
      let p0 = 0;
      for (let k = k0; k < k1; k++) p0 += av[ao + k] * bv[o0 + k];
      if (scaled) s0.addProduct(sfa[sfaOff[i] + g] * sfb[sfbOff[j] + g], p0);
      else s0.add(p0);
    }
    res[fo + j] = s0.round(frac, -126, 127);
  }
}
