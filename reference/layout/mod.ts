/**
 * Scale-factor layouts of DeepGEMM (deepgemm-ops.md §3): TMA-aligned MN-major fp32 scales, packed UE8M0 int32 scales
 * (plain, PSUM and K-grouped), and the per-architecture transformation a GEMM applies to the scales it is given.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Tensor } from "../tensor/mod.ts";
 * import { getMnMajorTmaAlignedPackedUe8m0Tensor, getTmaAlignedSize } from "./mod.ts";
 * assert.equal(getTmaAlignedSize(4097, 4), 4100);
 * const p = getMnMajorTmaAlignedPackedUe8m0Tensor(Tensor.from("f32", [1, 1], new Float32Array([1])));
 * assert.equal(p.at(0, 0), 127);
 * ```
 * @module
 */
export * from "./tma_aligned.ts";
export * from "./packed_ue8m0_layout.ts";
export * from "./transform_sf.ts";
