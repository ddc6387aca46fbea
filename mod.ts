/**
 * gemm-oracle: what a low-precision GEMM kernel should have produced, bit for bit.
 *
 * Everything a user of the library needs, in one import: the reference (`./reference/mod.ts`: number formats and
 * codecs, DeepGEMM's quantizers and scale layouts, the operation registry and every operation's reference, kernel and
 * tensor-core models, comparison, `identify`), safetensors reading and writing (`./io/mod.ts`), and the native
 * backends (`./ffi/mod.ts`: {@link openBackend}). The package's subpaths `/reference`, `/io`, `/ffi` and `/cli`
 * export each part alone. The FFI's per-operand scale recipe is {@link OperandRecipe} here (`Recipe` in `/ffi`),
 * since `Recipe` is the reference's layout recipe.
 *
 * @example Quantize, run DeepGEMM's fp8_gemm_nt through the registry, store and read back
 * ```ts
 * import assert from "node:assert/strict";
 * import { f32Tensor, parseSafetensors, perBlockCastToFp8, perTokenCastToFp8 } from "./mod.ts";
 * import { referenceOp, serializeSafetensors } from "./mod.ts";
 * const x = f32Tensor([2, 128], Array.from({ length: 256 }, (_, i) => (i % 7) - 3));
 * const y = f32Tensor([8, 128], Array.from({ length: 1024 }, (_, i) => (i % 5) * 0.5));
 * const a = perTokenCastToFp8(x, { useUe8m0: false }); // e4m3 codes, an fp32 scale per row and 128 K
 * const b = perBlockCastToFp8(y, { useUe8m0: false }); // an fp32 scale per 128 × 128 block
 * const op = referenceOp("fp8_gemm_nt")!;
 * const { d } = op.run({ a: a.q, sfa: a.sf, b: b.q, sfb: b.sf }, {}, { model: op.defaultModel });
 * const back = parseSafetensors(serializeSafetensors({ d })).tensors.get("d")!;
 * assert.deepEqual(back.shape, [2, 8]);
 * assert.deepEqual([...back.data], [...d.data]);
 * ```
 * @module
 */
export * from "./reference/mod.ts";
export * from "./io/mod.ts";
export * from "./ffi/mod.ts";
export type { Recipe } from "./reference/mod.ts";
export type { Recipe as OperandRecipe } from "./ffi/mod.ts";
