/**
 * The quantization recipe registry behind `oracle quantize --recipe NAME`: DeepGEMM's utility quantizers under their
 * Python names, and the MX / NVFP4 recipes. Every recipe returns `codes` and `sf` (NVFP4 also `globalSf`).
 * FP4 codes are returned unpacked (`e2m1`, one code per byte); written as safetensors `F4` (element 0 in the low
 * nibble) they are byte for byte DeepGEMM's packed int8.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Tensor } from "../tensor/tensor.ts";
 * import { QUANT_RECIPES } from "./recipes.ts";
 * const x = Tensor.zeros("bf16", [2, 128]);
 * const { codes, sf } = QUANT_RECIPES.per_token_cast_to_fp8(x, { useUe8m0: true });
 * assert.equal(codes.dtype, "e4m3");
 * assert.equal(sf.at(0, 0), 2 ** -22);
 * ```
 * @module
 */
import type { Tensor } from "../tensor/tensor.ts";
import { perBlockCastToFp8, perChannelCastToFp8, perTokenCastToFp8 } from "./fp8_casts.ts";
import { perTokenCastToFp4 } from "./fp4_casts.ts";
import { unpackFp4 } from "./fp4_packing.ts";
import { type MxElement, mxQuantize, type MxScaleRule } from "./mx.ts";
import { nvfp4QuantizeTe, nvfp4QuantizeTorchao } from "./nvfp4.ts";
import type { Semantics } from "./scalar_division.ts";

/** Options the CLI passes to every recipe (each recipe reads the ones that apply to it). */
export interface RecipeOptions {
  /** Group size along K for DeepGEMM's quantizers (default 128). */
  readonly granK?: number;
  /** `ceil_to_ue8m0` scales (default false). */
  readonly useUe8m0?: boolean;
  /** Pack UE8M0 scales into int32 (per-token recipes). */
  readonly usePackedUe8m0?: boolean;
  /** Scalar-division semantics (`gpu` default). */
  readonly semantics?: Semantics;
  /** MX scale rule (default `floor`). */
  readonly scaleRule?: MxScaleRule;
  /** E4M3 conversion profile for DeepGEMM's FP8 quantizers (default `torch_2_11`). */
  readonly e4m3Profile?: string;
}

/** What a recipe returns. */
export interface RecipeResult {
  /** Codes (`e4m3`, `e5m2` or unpacked `e2m1`). */
  readonly codes: Tensor;
  /** Scales (f32, packed i32, `ue8m0` or `e4m3`). */
  readonly sf: Tensor;
  /** Per-tensor scale (NVFP4 only). */
  readonly globalSf?: Tensor;
}

/** A recipe. */
export type QuantRecipe = (x: Tensor, opts?: RecipeOptions) => RecipeResult;

function castOpts(o: RecipeOptions) {
  return {
    useUe8m0: o.useUe8m0 ?? false,
    granK: o.granK,
    usePackedUe8m0: o.usePackedUe8m0,
    semantics: o.semantics,
    e4m3Profile: o.e4m3Profile,
  };
}

function mx(elem: MxElement): QuantRecipe {
  return (x, o = {}) => mxQuantize(x, { elem, scaleRule: o.scaleRule ?? "floor", semantics: o.semantics });
}

/** The recipes, by name. */
export const QUANT_RECIPES: Readonly<Record<string, QuantRecipe>> = Object.freeze({
  per_token_cast_to_fp8: (x: Tensor, o: RecipeOptions = {}) => {
    const r = perTokenCastToFp8(x, castOpts(o));
    return { codes: r.q, sf: r.sf };
  },
  per_channel_cast_to_fp8: (x: Tensor, o: RecipeOptions = {}) => {
    const r = perChannelCastToFp8(x, { ...castOpts(o), usePackedUe8m0: undefined });
    return { codes: r.q, sf: r.sf };
  },
  per_block_cast_to_fp8: (x: Tensor, o: RecipeOptions = {}) => {
    const r = perBlockCastToFp8(x, { ...castOpts(o), usePackedUe8m0: undefined });
    return { codes: r.q, sf: r.sf };
  },
  per_token_cast_to_fp4: (x: Tensor, o: RecipeOptions = {}) => {
    const r = perTokenCastToFp4(x, castOpts(o));
    return { codes: unpackFp4(r.q), sf: r.sf };
  },
  mxfp8_e4m3: mx("e4m3"),
  mxfp8_e5m2: mx("e5m2"),
  mxfp4: mx("e2m1"),
  nvfp4_te: (x: Tensor) => nvfp4QuantizeTe(x),
  nvfp4_torchao: (x: Tensor, o: RecipeOptions = {}) => nvfp4QuantizeTorchao(x, { semantics: o.semantics }),
});

/** The recipe names. */
export const QUANT_RECIPE_NAMES: readonly string[] = Object.freeze(Object.keys(QUANT_RECIPES));

/**
 * Looks a recipe up by name.
 *
 * @param name a recipe name
 * @returns the recipe
 * @throws {RangeError} for an unknown name, listing the valid ones
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { quantRecipe } from "./recipes.ts";
 * assert.throws(() => quantRecipe("int8"), /per_token_cast_to_fp8/);
 * ```
 */
export function quantRecipe(name: string): QuantRecipe {
  if (!Object.hasOwn(QUANT_RECIPES, name)) {
    throw new RangeError(`Unknown quantization recipe "${name}": valid recipes are ${QUANT_RECIPE_NAMES.join(", ")}`);
  }
  return QUANT_RECIPES[name];
}
