/**
 * Where two outputs differ: a mismatch map over 128×128 output tiles (per group, batch or K-split slice for 3-D
 * outputs), each tile with its mismatch count, bounding box and worst element (largest ULP distance, both values and
 * bit patterns), plus a one-line classification of the pattern: no mismatch, NaN/Inf handling, masked rows, one tile,
 * the tail block, one row or column band, one group, every tile, or scattered tiles.
 *
 * Pure: it reads two tensors (same dtype and shape) and returns plain, JSON-serialisable data.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Tensor } from "../tensor/tensor.ts";
 * import { mismatchMap } from "./mismatch_map.ts";
 * const want = Tensor.zeros("bf16", [256, 256]);
 * const got = Tensor.zeros("bf16", [256, 256]);
 * for (let i = 40; i < 48; i++) for (let j = 128; j < 256; j++) got.data[i * 256 + j] = 0x3f80; // 1.0 in one tile
 * const map = mismatchMap(want, got);
 * assert.equal(map.mismatches, 8 * 128);
 * assert.equal(map.classification.kind, "one_tile");
 * assert.match(map.classification.text, /^one tile: rows 40–47, cols 128–255/);
 * ```
 * @module
 */
import { decode, isNanCode } from "../formats/codec.ts";
import type { DType } from "../tensor/dtype.ts";
import type { Tensor } from "../tensor/tensor.ts";
import { rowMajorData } from "../tensor/values.ts";
import { FORMAT_OF_DTYPE, hexBits, type Int16Dtype, int16Values } from "./compared_dtype.ts";
import { ulpDistance } from "./ulp.ts";

/** Output tile edge of the map (DeepGEMM's BLOCK_M = BLOCK_N = 128). */
export const MAP_TILE = 128;

/** One side of an element: its value and bit pattern (hexadecimal). JSON-safe: non-finite numbers are strings. */
export interface MapValue {
  /** The decoded value (integers as numbers; `"NaN"`, `"Infinity"`, `"-Infinity"` as strings). */
  value: number | string;
  /** The bit pattern, `0x3f80`. */
  bits: string;
}

/** One differing element. */
export interface ElementDiff {
  /** Its coordinate in the tensor's shape. */
  coordinate: number[];
  /** ULP distance (`"Infinity"` when a NaN meets a number; |difference| for integer dtypes). */
  ulp: number | string;
  /** The reference's element. */
  expected: MapValue;
  /** The element under test. */
  actual: MapValue;
}

/** One tile with mismatches. */
export interface TileStat {
  /** Group / batch / split index (0 for 2-D outputs). */
  group: number;
  /** Tile row and column. */
  tile: [number, number];
  /** Mismatching elements. */
  count: number;
  /** Elements compared in the tile. */
  compared: number;
  /** Bounding box of the mismatches, inclusive: [first row, last row]. */
  rows: [number, number];
  /** [first column, last column]. */
  cols: [number, number];
  /** The element with the largest ULP distance (first in row-major order on ties). */
  worst: ElementDiff;
}

/** The kinds of pattern {@link classify} names. */
export type MismatchKind =
  | "none"
  | "nan_inf"
  | "masked_rows"
  | "one_tile"
  | "tail_block"
  | "row_band"
  | "column_band"
  | "one_group"
  | "all_tiles"
  | "scattered";

/** A mismatch map. */
export interface MismatchMap {
  /** dtype of both tensors (the integer reading when `asInt16` was given). */
  dtype: DType;
  /** Shape of both tensors. */
  shape: number[];
  /** What the leading dimension of a 3-D output is called (`group`, `batch`, `split`). */
  groupLabel: string;
  /** Leading slices (1 for 2-D outputs; rank ≥ 4 folds every leading dimension into it). */
  groups: number;
  /** Rows of one slice. */
  rows: number;
  /** Columns of one slice. */
  cols: number;
  /** Tile edge. */
  tile: number;
  /** Tile rows per slice. */
  tileRows: number;
  /** Tile columns per slice. */
  tileCols: number;
  /** Elements compared (all, or those `defined` marks). */
  compared: number;
  /** Elements that differ. */
  mismatches: number;
  /** Mismatches with NaN or ±Inf on either side. */
  nonFinite: number;
  /** Mismatch count per tile, `[group][tileRow][tileCol]` flattened; −1 for a tile with nothing compared. */
  grid: number[];
  /** Mismatch count per group. */
  perGroup: number[];
  /** Every tile with mismatches, in (group, row, column) order. */
  tiles: TileStat[];
  /** The worst element overall. */
  worst: ElementDiff | null;
  /** The pattern in one line. */
  classification: { kind: MismatchKind; text: string };
}

/** Options of {@link mismatchMap}. */
export interface MismatchMapOptions {
  /** `bits` (default): NaN codes must match; `class`: any NaN equals any NaN. */
  nan?: "bits" | "class";
  /** 1 where an element is compared (row-major, one per element); others are ignored (MQA's garbage entries). */
  defined?: ArrayLike<number> | null;
  /** 1 for each (group, row) the kernel must not compute (rows past `masked_m`, rows labelled −1). */
  maskedRows?: ArrayLike<number> | null;
  /** What masked rows are, for the text (default "masked"). */
  maskedRowsWhy?: string;
  /** Name of the leading dimension of 3-D outputs (default `group`). */
  groupLabel?: string;
  /** Tile edge (default 128). */
  tile?: number;
  /** Compare both tensors' 16-bit storage as this integer type (their dtypes may then differ: bf16 against f16). */
  asInt16?: Int16Dtype;
}

function jsonNumber(x: number): number | string {
  return Number.isFinite(x) ? x : String(x);
}

/** Splits a shape into (groups, rows, cols): rank 1 is one row, rank ≥ 3 folds the leading dimensions. */
function sliceShape(shape: readonly number[]): [number, number, number] {
  if (shape.length === 0) return [1, 1, 1];
  if (shape.length === 1) return [1, 1, shape[0]];
  const cols = shape[shape.length - 1], rows = shape[shape.length - 2];
  let g = 1;
  for (let i = 0; i < shape.length - 2; i++) g *= shape[i];
  return [g, rows, cols];
}

function coordinateOf(shape: readonly number[], g: number, r: number, c: number): number[] {
  if (shape.length <= 1) return [c];
  const lead: number[] = [];
  let rest = g;
  for (let i = shape.length - 3; i >= 0; i--) {
    lead.unshift(rest % shape[i]);
    rest = Math.floor(rest / shape[i]);
  }
  return [...lead, r, c];
}

/**
 * Maps where `actual` differs from `expected`, bit for bit, per 128×128 tile.
 * @param expected the reference tensor
 * @param actual the tensor under test (same dtype and shape)
 * @param options NaN mode, compared elements, masked rows, labels
 * @returns the map
 * @throws {RangeError} for different dtypes or shapes, or a `defined` / `maskedRows` of the wrong length
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Tensor } from "../tensor/tensor.ts";
 * import { mismatchMap } from "./mismatch_map.ts";
 * const want = Tensor.from("f32", [2, 2], new Float32Array([1, 2, 3, 4]));
 * const got = Tensor.from("f32", [2, 2], new Float32Array([1, 2, 3, NaN]));
 * const map = mismatchMap(want, got);
 * assert.equal(map.classification.kind, "nan_inf");
 * assert.deepEqual(map.worst?.coordinate, [1, 1]);
 * assert.equal(map.worst?.ulp, "Infinity"); // JSON-safe: non-finite numbers are strings
 * ```
 */
export function mismatchMap(expected: Tensor, actual: Tensor, options: MismatchMapOptions = {}): MismatchMap {
  const asInt16 = options.asInt16;
  if (asInt16 === undefined && expected.dtype !== actual.dtype) {
    throw new RangeError(`mismatch map: dtypes differ (expected ${expected.dtype}, actual ${actual.dtype})`);
  }
  if (expected.shape.length !== actual.shape.length || expected.shape.some((d, i) => d !== actual.shape[i])) {
    throw new RangeError(
      `mismatch map: shapes differ (expected [${expected.shape.join(", ")}], actual [${actual.shape.join(", ")}])`,
    );
  }
  const dtype: DType = asInt16 ?? expected.dtype;
  const shape = [...expected.shape];
  const n = expected.numel;
  const tile = options.tile ?? MAP_TILE;
  if (!(Number.isSafeInteger(tile) && tile > 0)) {
    throw new RangeError(`mismatch map: tile must be positive, got ${tile}`);
  }
  const [G, R, C] = sliceShape(shape);
  const TR = Math.max(1, Math.ceil(R / tile)), TC = Math.max(1, Math.ceil(C / tile));
  const defined = options.defined ?? null;
  if (defined !== null && defined.length !== n) {
    throw new RangeError(`mismatch map: "defined" has ${defined.length} entries for ${n} elements`);
  }
  const masked = options.maskedRows ?? null;
  if (masked !== null && masked.length !== G * R) {
    throw new RangeError(`mismatch map: "maskedRows" has ${masked.length} entries for ${G}×${R} rows`);
  }
  const format = asInt16 === undefined ? FORMAT_OF_DTYPE[expected.dtype] : undefined;
  const e = asInt16 === undefined ? rowMajorData(expected) : int16Values(expected, asInt16);
  const a = asInt16 === undefined ? rowMajorData(actual) : int16Values(actual, asInt16);
  const nanClass = (options.nan ?? "bits") === "class";
  const isNan = format === undefined ? () => false : (x: number) => isNanCode(format, x);
  const valueOf = (x: number | bigint): number => format === undefined ? Number(x) : decode(format, x as number);
  const codeAt = (arr: typeof e, i: number): number | bigint => {
    if (dtype === "f32") return new Uint32Array(arr.buffer, arr.byteOffset + i * 4, 1)[0];
    return arr[i];
  };
  const f32Bits = dtype === "f32"
    ? [
      new Uint32Array(e.buffer, e.byteOffset, n),
      new Uint32Array(a.buffer, a.byteOffset, n),
    ]
    : null;

  const grid = new Array<number>(G * TR * TC).fill(-1);
  const stats = new Map<number, TileStat>();
  const perGroup = new Array<number>(G).fill(0);
  let compared = 0, mismatches = 0, nonFinite = 0, inMasked = 0;
  let worst: ElementDiff | null = null, worstAll = -1;
  const worstUlp = new Map<number, number>();
  for (let g = 0; g < G; g++) {
    for (let r = 0; r < R; r++) {
      const base = (g * R + r) * C;
      const ti = Math.floor(r / tile);
      const rowMasked = masked !== null && masked[g * R + r] !== 0;
      for (let c = 0; c < C; c++) {
        const i = base + c;
        if (defined !== null && !defined[i]) continue;
        const t = (g * TR + ti) * TC + Math.floor(c / tile);
        if (grid[t] < 0) grid[t] = 0;
        compared++;
        const x = f32Bits ? f32Bits[0][i] : e[i], y = f32Bits ? f32Bits[1][i] : a[i];
        if (x === y) continue;
        if (nanClass && isNan(x as number) && isNan(y as number)) continue;
        mismatches++;
        perGroup[g]++;
        grid[t]++;
        if (rowMasked) inMasked++;
        const ulp = format === undefined
          ? Math.abs(Number(x) - Number(y))
          : ulpDistance(format, x as number, y as number);
        const ev = valueOf(x), av = valueOf(y);
        if (!Number.isFinite(ev) || !Number.isFinite(av)) nonFinite++;
        let s = stats.get(t);
        const diff = (): ElementDiff => ({
          coordinate: coordinateOf(shape, g, r, c),
          ulp: jsonNumber(ulp),
          expected: { value: jsonNumber(ev), bits: hexBits(dtype, codeAt(e, i)) },
          actual: { value: jsonNumber(av), bits: hexBits(dtype, codeAt(a, i)) },
        });
        if (s === undefined) {
          s = {
            group: g,
            tile: [ti, Math.floor(c / tile)],
            count: 0,
            compared: 0,
            rows: [r, r],
            cols: [c, c],
            worst: diff(),
          };
          stats.set(t, s);
          worstUlp.set(t, ulp);
        } else if (ulp > worstUlp.get(t)!) {
          s.worst = diff();
          worstUlp.set(t, ulp);
        }
        s.count++;
        if (r > s.rows[1]) s.rows[1] = r;
        if (c < s.cols[0]) s.cols[0] = c;
        if (c > s.cols[1]) s.cols[1] = c;
        if (worst === null || ulp > worstAll) {
          worst = s.worst;
          worstAll = ulp;
        }
      }
    }
  }
  // compared per tile with mismatches (a second pass over those tiles only)
  for (const [t, s] of stats) {
    const g = Math.floor(t / (TR * TC)), ti = s.tile[0], tj = s.tile[1];
    let k = 0;
    for (let r = ti * tile; r < Math.min(R, (ti + 1) * tile); r++) {
      for (let c = tj * tile; c < Math.min(C, (tj + 1) * tile); c++) {
        if (defined === null || defined[(g * R + r) * C + c]) k++;
      }
    }
    s.compared = k;
  }
  const tiles = [...stats.entries()].sort((x, y) => x[0] - y[0]).map(([, s]) => s);
  const map: MismatchMap = {
    dtype,
    shape,
    groupLabel: options.groupLabel ?? "group",
    groups: G,
    rows: R,
    cols: C,
    tile,
    tileRows: TR,
    tileCols: TC,
    compared,
    mismatches,
    nonFinite,
    grid,
    perGroup,
    tiles,
    worst,
    classification: { kind: "none", text: "" },
  };
  map.classification = classify(map, inMasked, options.maskedRowsWhy ?? "masked");
  return map;
}

function span(a: number, b: number): string {
  return a === b ? `${a}` : `${a}–${b}`;
}

function pct(k: number, n: number): string {
  if (n === 0) return "0 %";
  const p = (100 * k) / n;
  return `${p >= 10 ? p.toFixed(0) : p >= 1 ? p.toFixed(1) : p.toPrecision(1)} %`;
}

/**
 * The one-line classification of a map (also stored in `map.classification`).
 * @param map the map (its `tiles`, `grid` and counts)
 * @param inMasked mismatches in masked rows
 * @param why what masked rows are
 * @returns kind and text
 */
function classify(map: MismatchMap, inMasked: number, why: string): { kind: MismatchKind; text: string } {
  const { mismatches: k, compared, tiles, groups: G, tileRows: TR, tileCols: TC, rows: R, cols: C, tile } = map;
  const of = `${k} of ${compared} elements`;
  if (k === 0) return { kind: "none", text: `no mismatches (${compared} elements compared)` };
  const gl = map.groupLabel;
  const inGroup = (g: number) => (G > 1 ? `${gl} ${g}, ` : "");
  if (inMasked === k) {
    const gs = [...new Set(tiles.map((t) => t.group))];
    return {
      kind: "masked_rows",
      text: `masked rows: every mismatch is in rows ${why}${
        G > 1 ? ` (${gl}${gs.length > 1 ? "s" : ""} ${gs.join(", ")})` : ""
      }; ${of}`,
    };
  }
  if (map.nonFinite === k) {
    return { kind: "nan_inf", text: `NaN/Inf handling: every mismatch has NaN or ±Inf on one side; ${of}` };
  }
  const tailRow = R % tile !== 0 && TR > 1 ? TR - 1 : -1, tailCol = C % tile !== 0 && TC > 1 ? TC - 1 : -1;
  const withTiles = map.grid.filter((x) => x >= 0).length;
  if (tiles.length === 1) {
    const t = tiles[0];
    const tail = t.tile[0] === tailRow || t.tile[1] === tailCol ? ", the tail block" : "";
    return {
      kind: "one_tile",
      text: `one tile: ${inGroup(t.group)}rows ${span(t.rows[0], t.rows[1])}, cols ${span(t.cols[0], t.cols[1])} ` +
        `(tile [${t.tile.join(", ")}] of ${TR}×${TC}${tail}); ${of}`,
    };
  }
  const sameGroup = tiles.every((t) => t.group === tiles[0].group);
  const bbox = (sel: TileStat[]) => {
    const r0 = Math.min(...sel.map((t) => t.rows[0])), r1 = Math.max(...sel.map((t) => t.rows[1]));
    const c0 = Math.min(...sel.map((t) => t.cols[0])), c1 = Math.max(...sel.map((t) => t.cols[1]));
    return { r0, r1, c0, c1 };
  };
  const b = bbox(tiles);
  const g0 = sameGroup ? inGroup(tiles[0].group) : "";
  if (tailCol >= 0 && tiles.every((t) => t.tile[1] === tailCol)) {
    return {
      kind: "tail_block",
      text:
        `tail block: only the last N block (cols ${
          span(tailCol * tile, C - 1)
        }, N = ${C} is not a multiple of ${tile}); ` +
        `${g0}${tiles.length} tiles; ${of}`,
    };
  }
  if (tailRow >= 0 && tiles.every((t) => t.tile[0] === tailRow)) {
    return {
      kind: "tail_block",
      text:
        `tail block: only the last M block (rows ${
          span(tailRow * tile, R - 1)
        }, M = ${R} is not a multiple of ${tile}); ` +
        `${g0}${tiles.length} tiles; ${of}`,
    };
  }
  if (TR > 1 && sameGroup && tiles.every((t) => t.tile[0] === tiles[0].tile[0])) {
    return {
      kind: "row_band",
      text:
        `one row band: ${g0}rows ${span(b.r0, b.r1)} (tile row ${tiles[0].tile[0]}), ${tiles.length} of ${TC} tiles ` +
        `across cols ${span(b.c0, b.c1)}; ${of}`,
    };
  }
  if (TC > 1 && sameGroup && tiles.every((t) => t.tile[1] === tiles[0].tile[1])) {
    return {
      kind: "column_band",
      text:
        `one column band: ${g0}cols ${span(b.c0, b.c1)} (tile column ${tiles[0].tile[1]}), ${tiles.length} of ${TR} ` +
        `tiles across rows ${span(b.r0, b.r1)}; ${of}`,
    };
  }
  if (G > 1 && sameGroup) {
    return { kind: "one_group", text: `one ${gl}: ${gl} ${tiles[0].group} only, ${tiles.length} tiles; ${of}` };
  }
  if (tiles.length === withTiles) {
    return {
      kind: "all_tiles",
      text: `all tiles: every one of the ${withTiles} tiles differs; ${of} (${pct(k, compared)})`,
    };
  }
  return {
    kind: "scattered",
    text: `scattered: ${tiles.length} of ${withTiles} tiles differ (no single tile, band or tail); ${of} (${
      pct(k, compared)
    })`,
  };
}

function showValue(v: number | string): string {
  return Object.is(v, -0) ? "-0" : String(v);
}

/**
 * One element as text: `[3, 200]: 12 ULP, expected 1.5 (0x3fc0), got 1.75 (0x3fe0)`.
 * @param d the element
 * @returns the text
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { formatElementDiff } from "./mismatch_map.ts";
 * const d = { coordinate: [0, 1], ulp: 1, expected: { value: 1, bits: "0x3f80" }, actual: { value: 1.0078125, bits: "0x3f81" } };
 * assert.equal(formatElementDiff(d), "[0, 1]: 1 ULP, expected 1 (0x3f80), got 1.0078125 (0x3f81)");
 * ```
 */
export function formatElementDiff(d: ElementDiff): string {
  return `[${d.coordinate.join(", ")}]: ${d.ulp} ULP, expected ${showValue(d.expected.value)} (${d.expected.bits}), ` +
    `got ${showValue(d.actual.value)} (${d.actual.bits})`;
}

/**
 * The map as indented text lines: the classification, then the tiles with the most mismatches (count, bounding box,
 * worst element) and the per-group counts.
 * @param name the tensor's name
 * @param map the map
 * @param maxTiles how many tiles to list (default 4)
 * @returns lines without newlines
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Tensor } from "../tensor/tensor.ts";
 * import { formatMismatchMap, mismatchMap } from "./mismatch_map.ts";
 * const want = Tensor.zeros("bf16", [8, 8]), got = Tensor.zeros("bf16", [8, 8]);
 * got.data[9] = 0x3f80;
 * const lines = formatMismatchMap("d", mismatchMap(want, got));
 * assert.match(lines[0], /^d: 1\/64 mismatches in 1 of 1 tiles \(128×128\); one tile: rows 1, cols 1/);
 * assert.match(lines[1], /tile \[0, 0\] rows 1, cols 1: 1\/64, worst \[1, 1\]/);
 * ```
 */
export function formatMismatchMap(name: string, map: MismatchMap, maxTiles = 4): string[] {
  const withTiles = map.grid.filter((x) => x >= 0).length;
  const lines = [
    `${name}: ${map.mismatches}/${map.compared} mismatches in ${map.tiles.length} of ${withTiles} tiles ` +
    `(${map.tile}×${map.tile}); ${map.classification.text}`,
  ];
  const top = [...map.tiles].sort((x, y) => y.count - x.count || 0).slice(0, maxTiles);
  for (const t of top) {
    const g = map.groups > 1 ? `${map.groupLabel} ${t.group} ` : "";
    lines.push(
      `  ${g}tile [${t.tile.join(", ")}] rows ${span(t.rows[0], t.rows[1])}, cols ${span(t.cols[0], t.cols[1])}: ` +
        `${t.count}/${t.compared}, worst ${formatElementDiff(t.worst)}`,
    );
  }
  if (map.tiles.length > top.length) lines.push(`  ... and ${map.tiles.length - top.length} more tiles`);
  if (map.groups > 1 && map.mismatches > 0) {
    const parts = map.perGroup.map((c, g) => [g, c]).filter(([, c]) => c > 0).slice(0, 16);
    lines.push(`  per ${map.groupLabel}: ${parts.map(([g, c]) => `${g}: ${c}`).join(", ")}`);
  }
  return lines;
}
