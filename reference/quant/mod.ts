/**
 * Quantizers: DeepGEMM's utility quantizers bit for bit (`deep_gemm/utils/math.py`), UE8M0 scale rounding and
 * packing, FP4 packing, FP8/FP4 dequantization, MX (MXFP8/MXFP4) and NVFP4 block quantization, stochastic rounding
 * with caller-supplied random bits, and the recipe registry used by the CLI.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Tensor } from "../tensor/mod.ts";
 * import { ceilToUe8m0Value, perTokenCastToFp8 } from "./mod.ts";
 * assert.equal(ceilToUe8m0Value(0.3), 0.5);
 * const { q } = perTokenCastToFp8(Tensor.from("f32", [1, 2], new Float32Array([464, 448])), {
 *   useUe8m0: false,
 *   semantics: "cpu",
 * });
 * assert.deepEqual([...(q.data as Uint8Array)], [0x7e, 0x7e]); // sf = 464/448; 448/sf = 432.55 rounds to 448
 * ```
 * @module
 */
export * from "./scalar_division.ts";
export * from "./ceil_to_ue8m0.ts";
export * from "./pack_ue8m0.ts";
export * from "./fp8_casts.ts";
export * from "./fp8_dequant.ts";
export * from "./fp4_packing.ts";
export * from "./fp4_casts.ts";
export * from "./mx.ts";
export * from "./nvfp4.ts";
export * from "./stochastic_rounding.ts";
export * from "./recipes.ts";
