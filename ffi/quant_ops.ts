/**
 * The typed wrapper of the ABI's optional `go_quantize`: DeepGEMM's utility quantizers (`per_token_cast_to_fp8`,
 * `per_channel_cast_to_fp8`, `per_block_cast_to_fp8`, `per_token_cast_to_fp4`, deepgemm-ops.md §2.4–§2.8) and the MX /
 * NVFP4 recipes (numerics.md §5–§6), under the reference's recipe names (`reference/quant/recipes.ts`). Every argument
 * is checked here before the native call (TypeError for a dtype, rank or shape, RangeError for an option); the
 * library checks them again.
 *
 * FP4 codes travel packed, two per byte with element 2j in the low nibble (DeepGEMM's int8 layout); {@link quantize}
 * takes a packed `u8`/`i8` `q` of shape `[m, n/2]` for the FP4 recipes.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { QUANT_KIND_CODES, quantOutputSpecs } from "./quant_ops.ts";
 * assert.equal(QUANT_KIND_CODES.per_token_cast_to_fp8, 0);
 * assert.deepEqual(quantOutputSpecs("per_token_cast_to_fp4", 4, 64, { granK: 32 }).q, { dtype: "u8", shape: [4, 32] });
 * assert.deepEqual(quantOutputSpecs("mxfp8_e4m3", 2, 64, {}).sf, { dtype: "ue8m0", shape: [2, 2] });
 * ```
 * @module
 */
import type { DType } from "../reference/tensor/dtype.ts";
import type { NativeLibrary } from "./library.ts";
import { modelCode } from "./models.ts";
import { callStaged, ceilDiv, expectTensorOf, int32, nativeOp } from "./_op_checks.ts";
import { expectTensor, type TensorArg } from "./tensor_args.ts";

/** `go_quant_kind` values, by recipe name. */
export const QUANT_KIND_CODES = {
  per_token_cast_to_fp8: 0,
  per_channel_cast_to_fp8: 1,
  per_block_cast_to_fp8: 2,
  per_token_cast_to_fp4: 3,
  mxfp8_e4m3: 4,
  mxfp8_e5m2: 5,
  mxfp4: 6,
  nvfp4_te: 7,
  nvfp4_torchao: 8,
} as const;

/** A recipe of `go_quantize`. */
export type QuantKind = keyof typeof QUANT_KIND_CODES;

/** `go_mx_scale_rule` values. */
export const MX_SCALE_RULE_CODES = { floor: 0, ceil: 1, even: 2, rceil: 3 } as const;

/** An MX scale rule. */
export type MxScaleRuleName = keyof typeof MX_SCALE_RULE_CODES;

/** Options of a recipe (DeepGEMM's keyword arguments; the MX scale rule). */
export interface QuantOptions {
  /** DeepGEMM recipes: group size along K (default 128). Ignored by MX (32) and NVFP4 (16). */
  granK?: number;
  /** DeepGEMM recipes: `use_ue8m0` (default false). */
  useUe8m0?: boolean;
  /** Per-token recipes: `use_packed_ue8m0` (needs useUe8m0; default false). */
  usePackedUe8m0?: boolean;
  /** MX recipes: the scale rule (default floor). */
  scaleRule?: MxScaleRuleName;
}

/** Arguments of {@link quantize}. */
export interface QuantizeArgs extends QuantOptions {
  /** The recipe. */
  recipe: QuantKind;
  /** f32, bf16 or f16 `[m, n]`. */
  x: TensorArg;
  /** Codes (written): see {@link quantOutputSpecs}. */
  q: TensorArg;
  /** Scales (written). */
  sf: TensorArg;
  /** NVFP4: the per-tensor scale f32 `[1]` (written); absent otherwise. */
  globalSf?: TensorArg | null;
  /** The division semantics: `gpu` (default, PyTorch on CUDA) or `cpu`. */
  model?: "gpu" | "cpu";
}

/** The dtype and shape of one output. */
export interface OutputSpec {
  /** Element type. */
  dtype: DType;
  /** Extents. */
  shape: number[];
}

const FP4_RECIPES: readonly QuantKind[] = ["per_token_cast_to_fp4", "mxfp4", "nvfp4_te", "nvfp4_torchao"];

function isRecipe(r: unknown): r is QuantKind {
  return typeof r === "string" && Object.hasOwn(QUANT_KIND_CODES, r);
}

/**
 * The outputs a recipe writes for an `[m, n]` input, with the options checked: `q` (packed `u8 [m, n/2]` for FP4),
 * `sf`, and for NVFP4 `global_sf`.
 * @throws {RangeError} for an unknown recipe or an option the recipe does not allow (same rules as the library)
 */
export function quantOutputSpecs(
  recipe: QuantKind,
  m: number,
  n: number,
  opts: QuantOptions,
): { q: OutputSpec; sf: OutputSpec; global_sf?: OutputSpec } {
  if (!isRecipe(recipe)) {
    throw new RangeError(`Unknown quantization recipe "${recipe}" (${Object.keys(QUANT_KIND_CODES).join(", ")})`);
  }
  const deepgemm = QUANT_KIND_CODES[recipe] <= 3;
  const mx = recipe.startsWith("mx"), nvfp4 = recipe.startsWith("nvfp4");
  const fp4 = FP4_RECIPES.includes(recipe);
  const perToken = recipe === "per_token_cast_to_fp8" || recipe === "per_token_cast_to_fp4";
  const ue8m0 = opts.useUe8m0 ?? false, packed = opts.usePackedUe8m0 ?? false;
  if (!deepgemm && (ue8m0 || packed)) throw new RangeError(`${recipe}: useUe8m0 / usePackedUe8m0 are DeepGEMM options`);
  if (packed && !perToken) throw new RangeError(`${recipe}: usePackedUe8m0 applies to the per-token casts only`);
  if (packed && !ue8m0) throw new RangeError(`${recipe}: usePackedUe8m0 requires useUe8m0`);
  if (opts.scaleRule !== undefined && (!mx || !Object.hasOwn(MX_SCALE_RULE_CODES, opts.scaleRule))) {
    throw new RangeError(`${recipe}: scale rule ${JSON.stringify(opts.scaleRule)} (MX only: floor, ceil, even, rceil)`);
  }
  const block = mx ? 32 : nvfp4 ? 16 : int32("granK", opts.granK ?? 128, 1);
  if (recipe === "per_token_cast_to_fp4" && block % 2 !== 0) {
    throw new RangeError(`${recipe}: an odd granK ${block} is not supported (a packed byte would straddle two groups)`);
  }
  if (fp4 && n % 2 !== 0) throw new RangeError(`${recipe}: n = ${n} is odd; FP4 packs two codes per byte`);
  if ((mx || nvfp4) && n % block !== 0) throw new RangeError(`${recipe}: n = ${n} is not a multiple of ${block}`);
  if (recipe === "per_channel_cast_to_fp8" && m % block !== 0) {
    throw new RangeError(`${recipe}: m = ${m} is not a multiple of granK = ${block}`);
  }
  const [bm, bn] = recipe === "per_channel_cast_to_fp8"
    ? [block, 1]
    : recipe === "per_block_cast_to_fp8"
    ? [block, block]
    : [1, block];
  const gr = ceilDiv(m, bm), gc = ceilDiv(n, bn);
  const q: OutputSpec = fp4
    ? { dtype: "u8", shape: [m, n / 2] }
    : { dtype: recipe === "mxfp8_e5m2" ? "e5m2" : "e4m3", shape: [m, n] };
  let sf: OutputSpec;
  if (packed) {
    if (recipe === "per_token_cast_to_fp8" && gc % 4 !== 0) {
      throw new RangeError(`${recipe}: packed UE8M0 needs the group count ${gc} per row to be a multiple of 4`);
    }
    sf = { dtype: "i32", shape: [m, ceilDiv(gc, 4)] };
  } else sf = { dtype: deepgemm ? "f32" : mx ? "ue8m0" : "e4m3", shape: [gr, gc] };
  return nvfp4 ? { q, sf, global_sf: { dtype: "f32", shape: [1] } } : { q, sf };
}

/** `go_quantize`: quantizes `x` by a recipe into `q`, `sf` (and NVFP4's `globalSf`). */
export function quantize(lib: NativeLibrary, args: QuantizeArgs): void {
  const f = nativeOp(lib, "go_quantize");
  const { recipe, x, q, sf } = args;
  if (!isRecipe(recipe)) {
    throw new RangeError(`Unknown quantization recipe "${recipe}" (${Object.keys(QUANT_KIND_CODES).join(", ")})`);
  }
  expectTensor("x", x, ["f32", "bf16", "f16"], 2);
  const [m, n] = x.shape;
  const spec = quantOutputSpecs(recipe, m, n, args);
  const fp4 = FP4_RECIPES.includes(recipe);
  expectTensorOf("q", q, fp4 ? ["u8", "i8"] : [spec.q.dtype], spec.q.shape);
  const sfTypes: DType[] = spec.sf.dtype === "ue8m0" || spec.sf.dtype === "e4m3"
    ? [spec.sf.dtype, "u8"]
    : [spec.sf.dtype];
  expectTensorOf("sf", sf, sfTypes, spec.sf.shape);
  if (spec.global_sf) {
    if (!args.globalSf) throw new TypeError(`${recipe}: globalSf (f32 [1]) is required`);
    expectTensorOf("global_sf", args.globalSf, ["f32"], [1]);
  } else if (args.globalSf) throw new TypeError(`${recipe}: globalSf is an output of the NVFP4 recipes only`);
  const model = args.model ?? "gpu";
  if (model !== "gpu" && model !== "cpu") throw new RangeError(`Unknown quantizer model "${model}" (gpu, cpu)`);
  const flags = (args.useUe8m0 ? 1 : 0) | (args.usePackedUe8m0 ? 2 : 0);
  const granK = recipe.startsWith("mx") ? 32 : recipe.startsWith("nvfp4") ? 16 : args.granK ?? 128;
  const rule = recipe.startsWith("mx") ? MX_SCALE_RULE_CODES[args.scaleRule ?? "floor"] : 0;
  callStaged(lib, "go_quantize", (s) =>
    f(
      QUANT_KIND_CODES[recipe],
      s.descriptor("x", x),
      s.descriptor("q", q, true),
      s.descriptor("sf", sf, true),
      s.descriptor("global_sf", args.globalSf ?? null, true),
      granK,
      flags,
      rule,
      modelCode(model),
    ));
}
