/**
 * `transform_weights_for_mega_moe(l1, l2)` (`deep_gemm/mega/__init__.py`, `deepgemm-ops.md` §10): the storage
 * permutations the fused kernel expects. L1 rows (weights and scales) are interleaved with granularity 8,
 * `[gate 0..7, up 0..7, gate 8..15, up 8..15, …]` instead of `[gate | up]`; every packed-UE8M0 scale tensor (L1 after the
 * interleave, and L2) is permuted inside each 128-row group for UTCCP: new row `4b + a` holds old row `32a + b`.
 * The values are unchanged, so the mathematics (and the oracle, which takes untransformed weights) is unaffected.
 * @module
 */
import { Tensor } from "../tensor/tensor.ts";

function permuteRows(t: Tensor, newToOld: (r: number) => number, what: string): Tensor {
  if (t.ndim < 2) throw new TypeError(`${what}: needs a tensor of rank ≥ 2`);
  const c = t.contiguous();
  const G = c.shape[0], n = c.shape[1], inner = c.numel / (G * n);
  const out = Tensor.zeros(c.dtype, c.shape);
  // deno-lint-ignore no-explicit-any
  const src = c.data as any, dst = out.data as any;
  for (let g = 0; g < G; g++) {
    for (let r = 0; r < n; r++) {
      const from = c.offset + (g * n + newToOld(r)) * inner, to = (g * n + r) * inner;
      for (let i = 0; i < inner; i++) dst[to + i] = src[from + i];
    }
  }
  return out;
}

/**
 * Interleaves gate and up rows with granularity 8 along dimension 1 of `[E, 2I, …]`.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Tensor } from "../tensor/tensor.ts";
 * import { interleaveGateUp } from "./transform_weights.ts";
 * const t = Tensor.from("i32", [1, 32, 1], Int32Array.from({ length: 32 }, (_, i) => i));
 * assert.deepEqual(Array.from(interleaveGateUp(t).data as Int32Array).slice(0, 18),
 *   [0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23, 8, 9]);
 * ```
 */
export function interleaveGateUp(t: Tensor, gran = 8): Tensor {
  const n = t.shape[1], half = n / 2;
  if (!Number.isInteger(half) || half % gran !== 0) {
    throw new RangeError(`interleaveGateUp: dimension 1 (${n}) must be 2·I with I a multiple of ${gran}`);
  }
  return permuteRows(t, (r) => {
    const blk = Math.floor(r / (2 * gran)), within = r % (2 * gran);
    return (within < gran ? 0 : half) + blk * gran + (within % gran);
  }, "interleaveGateUp");
}

/**
 * The UTCCP scale permutation: inside each 128-row group, new row `4b + a` takes old row `32a + b` (packed i32 scales).
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Tensor } from "../tensor/tensor.ts";
 * import { transposeSfForUtccp } from "./transform_weights.ts";
 * const sf = Tensor.from("i32", [1, 128, 1], Int32Array.from({ length: 128 }, (_, i) => i));
 * const out = Array.from(transposeSfForUtccp(sf).data as Int32Array);
 * assert.deepEqual(out.slice(0, 6), [0, 32, 64, 96, 1, 33]);
 * ```
 */
export function transposeSfForUtccp(sf: Tensor): Tensor {
  if (sf.dtype !== "i32" || sf.ndim !== 3) {
    throw new TypeError("transposeSfForUtccp: scales must be packed i32 [G, mn, k/128]");
  }
  if (sf.shape[1] % 128 !== 0) {
    throw new RangeError(`transposeSfForUtccp: mn (${sf.shape[1]}) must be a multiple of 128`);
  }
  return permuteRows(sf, (r) => {
    const base = r - (r % 128), w = r % 128, b = w >> 2, a = w & 3;
    return base + 32 * a + b;
  }, "transposeSfForUtccp");
}

/**
 * `transform_weights_for_mega_moe`: FP8×FP4 takes `[w, sf]` pairs, BF16 plain weight tensors.
 * @returns the transformed L1 and L2 in the same form
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Tensor } from "../tensor/tensor.ts";
 * import { transformWeightsForMegaMoe } from "./transform_weights.ts";
 * // BF16: L1's gate and up rows interleaved in blocks of 8, L2 unchanged.
 * const l1 = Tensor.from("i32", [1, 32, 1], Int32Array.from({ length: 32 }, (_, i) => i));
 * const l2 = Tensor.zeros("i32", [1, 4, 1]);
 * const out = transformWeightsForMegaMoe(l1, l2);
 * assert.equal(out.l2, l2);
 * assert.deepEqual(Array.from((out.l1 as Tensor).data as Int32Array).slice(6, 10), [6, 7, 16, 17]);
 * assert.throws(() => transformWeightsForMegaMoe(l1, [l2, l2]), TypeError);
 * ```
 */
export function transformWeightsForMegaMoe(
  l1: Tensor | [Tensor, Tensor],
  l2: Tensor | [Tensor, Tensor],
): { l1: Tensor | [Tensor, Tensor]; l2: Tensor | [Tensor, Tensor] } {
  if (Array.isArray(l1) !== Array.isArray(l2)) {
    throw new TypeError("transformWeightsForMegaMoe: l1 and l2 must both be pairs or both tensors");
  }
  if (Array.isArray(l1) && Array.isArray(l2)) {
    return {
      l1: [interleaveGateUp(l1[0]), transposeSfForUtccp(interleaveGateUp(l1[1]))],
      l2: [l2[0], transposeSfForUtccp(l2[1])],
    };
  }
  return { l1: interleaveGateUp(l1 as Tensor), l2: l2 as Tensor };
}
