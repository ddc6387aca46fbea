/**
 * `get_paged_mqa_logits_metadata(context_lens, block_kv, num_sms)`: the per-SM work partition that the paged MQA
 * kernel consumes (`deepgemm-ops.md` §8.3). The SM90 algorithm is reproduced exactly from
 * `scheduler/sm90_paged_mqa_logits.cuh` (non-varlen branch; DeepGEMM `54e2261`), in unsigned 32-bit integer arithmetic;
 * the SM100 partition (tokens×splits weighted) is not modelled and raises. DeepGEMM's own metadata kernel on an H200
 * wrote the same schedule in 18 of 18 cases (B ∈ {1, 7, 256}, next_n ∈ {1, 2}, SMs ∈ {3, 78, 132}). [verified on H200]
 * @module
 */
import { Tensor } from "../tensor/tensor.ts";
import { checkTensor, intValues } from "./_checks.ts";

/** KV tokens per split of the SM90 paged kernel (`split_kv = 256`, `sm90_fp8_mqa_logits.hpp`). */
export const SM90_SPLIT_KV = 256;

/** Largest batch whose prefix sums fit in SM90 shared memory (`aligned_batch·4 bytes ≤ 232448`). */
export const SM90_METADATA_MAX_BATCH = 58112;

/**
 * The SM90 schedule: rows `(q_atom_idx, kv_split_idx)` for SM 0 … num_sms−1, then `(B·atoms, 0)`.
 *
 * With `L_b = context_lens[b, next_n−1]`, `c_b = ceil(L_b / 256)`, inclusive prefix sums `P_b`, `atoms = ceil(next_n /
 * a)` where `a = 2` if next_n ≥ 2 else 1, `total = P_{B−1}·atoms`, `q = total div S`, `r = total mod S`,
 * `pivot = S − r`: SM s starts at segment `seg = s·q + (s > pivot ? s − pivot : 0)`; a binary search finds the first b
 * with `P_b·atoms > seg` (b = B when none); `off = seg − P_{b−1}·atoms`, `n_b = P_b − P_{b−1}`, and the row is
 * `(b·atoms + off div n_b, off mod n_b)` (both parts 0 when n_b = 0). b = B happens only when every length is 0; the
 * kernel then reads the prefix slot after the last one (the running total when B is not a multiple of 32, uninitialised
 * shared memory otherwise); the oracle gives `(B·atoms, 0)` in both cases.
 * @param contextLens i32 `[B, next_n]`, contiguous
 * @param blockKv 64 on SM90
 * @param numSms number of SMs (≥ 1)
 * @returns i32 `[num_sms + 1, 2]`
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Tensor } from "../tensor/tensor.ts";
 * import { getPagedMqaLogitsMetadata } from "./paged_mqa_logits_metadata.ts";
 * const ctx = Tensor.from("i32", [2, 1], new Int32Array([300, 1000])); // 2 and 4 splits of 256
 * const m = getPagedMqaLogitsMetadata(ctx, 64, 3);
 * assert.deepEqual(Array.from(m.data as Int32Array), [0, 0, 1, 0, 1, 2, 2, 0]);
 * ```
 */
export function getPagedMqaLogitsMetadata(contextLens: Tensor, blockKv: number, numSms: number): Tensor {
  const fn = "get_paged_mqa_logits_metadata";
  const ctx = checkTensor(fn, "context_lens", contextLens, ["i32"], 2);
  if (!ctx.isContiguous()) throw new TypeError(`${fn}: context_lens must be contiguous`);
  if (blockKv !== 64) throw new RangeError(`${fn}: SM90 needs block_kv = 64, got ${blockKv}`);
  if (!Number.isSafeInteger(numSms) || numSms < 1) throw new RangeError(`${fn}: num_sms must be a positive integer`);
  const [B, nextN] = ctx.shape;
  if (nextN < 1) throw new RangeError(`${fn}: next_n must be ≥ 1`);
  if (B > SM90_METADATA_MAX_BATCH) {
    throw new RangeError(`${fn}: batch ${B} exceeds the SM90 shared-memory limit of ${SM90_METADATA_MAX_BATCH}`);
  }
  const lens = intValues(ctx);
  const aligned = Math.ceil(B / 32) * 32;
  const prefix = new Array<number>(aligned + 1).fill(0);
  let sum = 0;
  for (let b = 0; b < aligned; b++) {
    const L = b < B ? lens[b * nextN + nextN - 1] >>> 0 : 0;
    sum = (sum + Math.ceil(L / SM90_SPLIT_KV)) >>> 0;
    prefix[b] = sum;
  }
  const atom = nextN >= 2 ? 2 : 1;
  const atoms = Math.ceil(nextN / atom);
  const mul = (a: number, b: number) => Number((BigInt(a) * BigInt(b)) & 0xffffffffn); // uint32 product
  const total = mul(sum, atoms);
  const q = Math.floor(total / numSms), r = total % numSms, pivot = numSms - r;
  const out = new Int32Array((numSms + 1) * 2);
  for (let s = 0; s < numSms; s++) {
    const seg = (mul(s, q) + (s > pivot ? s - pivot : 0)) >>> 0;
    let lo = 0, hi = B;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (mul(prefix[mid], atoms) <= seg) lo = mid + 1;
      else hi = mid;
    }
    const b = lo;
    const off = b === 0 ? seg : (seg - mul(prefix[b - 1], atoms)) >>> 0;
    const nb = b === 0 ? prefix[0] : (prefix[b] - prefix[b - 1]) >>> 0;
    const atomIdx = nb > 0 ? Math.floor(off / nb) : 0;
    const split = nb > 0 ? off % nb : 0;
    out[2 * s] = (mul(b, atoms) + atomIdx) | 0;
    out[2 * s + 1] = split | 0;
  }
  out[2 * numSms] = mul(B, atoms) | 0;
  out[2 * numSms + 1] = 0;
  return Tensor.from("i32", [numSms + 1, 2], out);
}
