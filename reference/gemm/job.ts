/**
 * The canonical form every GEMM reference lowers to: a list of problems (one per group / batch / split of output),
 * each a set of output rows × columns over one K range, with storage offsets of K-contiguous operand codes, scale
 * rows and output elements. Plain data, so it can be posted to Workers; evaluation never depends on how tiles are
 * distributed.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Tensor } from "../tensor/tensor.ts";
 * import { packKRows } from "./job.ts";
 * const a = Tensor.from("e4m3", [2, 3], new Uint8Array([1, 2, 3, 4, 5, 6]));
 * const p = packKRows([a.transpose().transpose()]);
 * assert.deepEqual([...p.offsets[0]], [0, 3]); // already K-contiguous: no copy
 * const q = packKRows([a.transpose()]);          // [3, 2] view with K stride 3: copied
 * assert.deepEqual([...q.codes.subarray(0, 2)], [1, 4]);
 * ```
 * @module
 */
import type { ResolvedModel } from "../kernel_models/kernel_models.ts";
import type { Storage } from "../tensor/dtype.ts";
import type { Tensor } from "../tensor/tensor.ts";

/** Operand codes: e4m3/e5m2/e2m1 codes in bytes, bf16/f16 bit patterns in 16-bit words. */
export type CodeStorage = Uint8Array | Uint16Array;

/** One set of output rows × columns sharing a K range and operands. */
export interface GemmProblem {
  /** Reduction length. */
  K: number;
  /** Offset in `job.a` of each row's K codes; −1 writes the row as +0 without computing (SM90 skipped chunks). */
  aOff: Int32Array;
  /** Offset in `job.b` of each column's K codes. */
  bOff: Int32Array;
  /** Offset in `job.sfa` of each row's scale groups (null without scales). */
  sfaOff: Int32Array | null;
  /** Offset in `job.sfb` of each column's scale groups. */
  sfbOff: Int32Array | null;
  /** Storage index in D of each row's column 0. */
  dRow: Int32Array;
  /** Storage offset of each column (added to `dRow`). */
  dCol: Int32Array;
  /** Group index (for sampling that touches every group). */
  group: number;
}

/** Everything needed to evaluate a GEMM reference. */
export interface GemmJob {
  /** The resolved kernel model. */
  model: ResolvedModel;
  /** A's operand format. */
  aFormat: string;
  /** B's operand format. */
  bFormat: string;
  /** A codes. */
  a: CodeStorage;
  /** B codes. */
  b: CodeStorage;
  /** A scale values per (row, K group). */
  sfa: Float64Array | null;
  /** B scale values per (column, K group). */
  sfb: Float64Array | null;
  /** K elements per scale group. */
  granK: number;
  /** C values by D storage index (null without C). */
  c: Float64Array | null;
  /** The problems. */
  problems: GemmProblem[];
}

/** K-contiguous codes of several [R, K] views in one array, with each row's offset. */
export interface PackedRows {
  /** The codes. */
  codes: CodeStorage;
  /** Per view, per row, the offset of the row's first code. */
  offsets: Int32Array[];
}

/**
 * Packs [R, K] code views so each row's K codes are contiguous. Views over one shared storage with K stride 1 are
 * used in place; otherwise everything is copied.
 * @param views 2-D code tensors [rows, K]
 * @returns the codes and per-row offsets
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Tensor } from "../tensor/tensor.ts";
 * import { packKRows } from "./job.ts";
 * const a = Tensor.from("bf16", [2, 2], new Uint16Array([1, 2, 3, 4]));
 * const p = packKRows([a.select(0, 1).reshape([1, 2]), a]);
 * assert.deepEqual([...p.offsets[0]], [2]); // rows of one storage with K stride 1: used in place
 * assert.deepEqual([...p.offsets[1]], [0, 2]);
 * assert.equal(p.codes, a.data);
 * ```
 */
export function packKRows(views: readonly Tensor[]): PackedRows {
  if (views.length === 0) return { codes: new Uint8Array(0), offsets: [] };
  const data = views[0].data;
  const inPlace = views.every((v) => v.data === data && (v.shape[1] <= 1 || v.strides[1] === 1));
  if (inPlace && (data instanceof Uint8Array || data instanceof Uint16Array)) {
    return {
      codes: data,
      offsets: views.map((v) => Int32Array.from({ length: v.shape[0] }, (_, i) => v.offset + i * v.strides[0])),
    };
  }
  let total = 0;
  for (const v of views) total += v.shape[0] * v.shape[1];
  const wide = views.some((v) => v.data instanceof Uint16Array);
  const codes: CodeStorage = wide ? new Uint16Array(total) : new Uint8Array(total);
  const offsets: Int32Array[] = [];
  let o = 0;
  for (const v of views) {
    const [R, K] = v.shape;
    const src = v.data as Storage;
    const offs = new Int32Array(R);
    for (let i = 0; i < R; i++) {
      offs[i] = o;
      let p = v.offset + i * v.strides[0];
      for (let k = 0; k < K; k++, p += v.strides[1]) codes[o++] = Number(src[p]);
    }
    offsets.push(offs);
  }
  return { codes, offsets };
}
