/**
 * The bit-exact reference: number formats, conversion profiles, exact fp32 arithmetic, quantizers,
 * scale-factor layouts, tensor-core models and one reference per DeepGEMM operation (through the operation registry),
 * comparison, and the search that identifies which model variant produced an output. No I/O, no native code.
 *
 * This is the public surface; the building blocks behind it (the GEMM engine, tile models, worker pools, argument
 * checks) stay importable from their own modules (`./gemm/mod.ts`, `./parallel/mod.ts`, ...) but are not part of it.
 *
 * @example Encode, run an operation through the registry and compare
 * ```ts
 * import assert from "node:assert/strict";
 * import { bf16Rne, compareTensors, decode, referenceOp, Tensor } from "./mod.ts";
 * assert.equal(bf16Rne(1), 0x3f80);
 * assert.equal(decode("e4m3", 0x38), 1);
 * // D = A·Bᵀ, 1 × 8 × 32, A = B = 1.0 (e4m3 0x38), unit scales: every element is 32.
 * const a = Tensor.from("e4m3", [1, 32], new Uint8Array(32).fill(0x38));
 * const b = Tensor.from("e4m3", [8, 32], new Uint8Array(256).fill(0x38));
 * const sf = Tensor.from("f32", [1, 1], new Float32Array([1]));
 * const { d } = referenceOp("fp8_gemm_nt")!.run({ a, sfa: sf, b, sfb: sf }, {}, {});
 * const want = Tensor.from("bf16", [1, 8], new Uint16Array(8).fill(bf16Rne(32)));
 * assert.equal(compareTensors("d", want, d, { kind: "bitwise" }).mismatches, 0);
 * ```
 * @module
 */

// Exact fp32 (and bf16) arithmetic, seeded data.
export {
  add32,
  bf16,
  bf16Rne,
  bf16ToF32,
  div32,
  f32,
  f32Bits,
  f32FromBits,
  fma32,
  mul32,
  reciprocal32,
  sqrt32,
  sub32,
} from "./fp32.ts";
export { Prng } from "./random/prng.ts";

// Tensors.
export {
  contiguousStrides,
  type DType,
  type DTypeInfo,
  DTYPES,
  f32Tensor,
  isDType,
  numel,
  type Storage,
  Tensor,
  toFloat32,
  toFloat32Bits,
} from "./tensor/mod.ts";

// Number formats, codecs and conversion profiles.
export {
  type CodeArray,
  decode,
  decodeArray,
  decodeTable,
  encode,
  encodeArray,
  encodeArrayWith,
  type EncodeOptions,
  type Encoder,
  encoderFor,
  FORMAT_NAMES,
  type FormatName,
  type FormatRule,
  FORMATS,
  type FormatSpec,
  formatSpec,
  getConverter,
  isNanCode,
  type NanOutput,
  type NanSpelling,
  type OverflowPolicy,
  PROFILE_NAMES,
  type ProfileName,
  profileRule,
  PROFILES,
  type ProfileSpec,
  profileSpec,
  type ProfileStatus,
  type Rounding,
  ROUNDINGS,
} from "./formats/mod.ts";

// Comparison: bit for bit, ULPs, DeepGEMM's calc_diff, where the mismatches are.
export {
  type BitwiseOptions,
  type BitwiseReport,
  calcDiff,
  compareBitwise,
  type CompareMode,
  compareTensors,
  type ElementDiff,
  FORMAT_OF_DTYPE,
  formatElementDiff,
  formatMismatchMap,
  type Int16Dtype,
  int16Reading,
  MAP_TILE,
  type MapValue,
  type Mismatch,
  type MismatchKind,
  type MismatchMap,
  mismatchMap,
  type MismatchMapOptions,
  type MismatchSide,
  type NumericArray,
  type ReportedValue,
  type TensorComparison,
  type TileStat,
  ulpDistance,
} from "./compare/mod.ts";

// DeepGEMM's quantizers, MX and NVFP4, UE8M0 and FP4 packing.
export {
  castBackFromFp4,
  castBackFromFp8,
  type CastOptions,
  type CastResult,
  ceilToUe8m0,
  ceilToUe8m0Bits,
  ceilToUe8m0Value,
  divideByScalar,
  MX_ELEMENTS,
  MX_SCALE_RULES,
  type MxElement,
  type MxOptions,
  mxQuantize,
  type MxResult,
  type MxScaleRule,
  NVFP4_BLOCK,
  nvfp4QuantizeTe,
  nvfp4QuantizeTorchao,
  type Nvfp4Result,
  type Nvfp4TeOptions,
  type Nvfp4TorchaoOptions,
  packFp4,
  packUe8m0ToInt,
  perBlockCastToFp8,
  perChannelCastToFp8,
  perCustomDimsCastToFp8,
  perTokenCastToFp4,
  perTokenCastToFp8,
  QUANT_RECIPE_NAMES,
  QUANT_RECIPES,
  type QuantRecipe,
  quantRecipe,
  type RecipeOptions,
  type RecipeResult,
  SEMANTICS,
  type Semantics,
  stochasticRound,
  stochasticRoundFp4Te,
  transposePackedFp4,
  unpackFp4,
  unpackUe8m0FromInt,
} from "./quant/mod.ts";

// Scale-factor layouts (DeepGEMM's utils).
export {
  align,
  ceilDiv,
  checkKGroupedPackedUe8m0Tensor,
  getKGroupedMnMajorTmaAlignedPackedUe8m0Tensor,
  getMnMajorTmaAlignedPackedUe8m0Tensor,
  getMnMajorTmaAlignedTensor,
  getTmaAlignedSize,
  type PackedLayoutOptions,
  type PackPath,
  type Recipe,
  transformKGroupedSfIntoRequiredLayout,
  transformSfIntoRequiredLayout,
  type TransformSfOptions,
} from "./layout/mod.ts";

// The tensor-core model.
export {
  type BlockScaleKind,
  type DecodedOperand,
  decodeOperand,
  ExactSum,
  fusedDotAdd,
  type FusedDotAddOptions,
  type OperandFormat,
  STEP_ROUNDINGS,
  type StepOutput,
  type StepRounding,
  TENSOR_CORE_PROFILES,
  type TensorCoreProfile,
  tensorCoreProfile,
  type TensorCoreProfileStatus,
} from "./tensor_core/mod.ts";

// Kernel models and the model table.
export {
  type AbiModelName,
  type Epilogue,
  KERNEL_MODELS,
  type KernelModel,
  type KernelParameters,
  MODEL_TABLE,
  type ModelOptions,
  type ModelRow,
  modelRow,
  type MqaParameters,
  type OpGroup,
  type OutDtype,
  type ResolvedModel,
  resolveModel,
  type SampleOptions,
  type ScaleApplication,
} from "./kernel_models/mod.ts";

// The operation registry: every DeepGEMM operation, its reference (an OpSpec) or its quantizer recipe.
export {
  type AbiFamily,
  type ArchRequirement,
  EXTRA_OPS,
  extraOp,
  GEMM_OPS,
  type GemmLayout,
  gemmOp,
  type NativeCall,
  type Operation,
  operation,
  type OperationRow,
  OPERATIONS,
  type OpSpec,
  type QuantizerOperation,
  referenceOp,
  type ReferenceOperation,
  referenceOpNames,
} from "./registry.ts";

// The non-GEMM references as functions: the MQA indexer, HyperConnection, Mega MoE.
export {
  fp8MqaLogits,
  fp8PagedMqaLogits,
  getPagedMqaLogitsMetadata,
  HEAD_REDUCTION_ORDERS,
  type HeadReductionOrder,
  MQA_MODELS,
  type MqaArch,
  type MqaLogitsInputs,
  type MqaLogitsOptions,
  type MqaLogitsResult,
  type MqaModel,
  type MqaModelOptions,
  type PagedMqaLogitsInputs,
  type PagedMqaLogitsOptions,
  resolveMqaModel,
  SM90_METADATA_MAX_BATCH,
  SM90_SPLIT_KV,
} from "./indexer/mod.ts";
export {
  type HcPrenormOptions,
  TF32_ROUNDINGS,
  tf32HcPrenormGemm,
  type Tf32Rounding,
  toTf32,
} from "./hyperconnection/mod.ts";
export {
  CORRECTLY_ROUNDED_SILU_MATH,
  megaMoe,
  type MegaMoeInputs,
  type MegaMoeOptions,
  type MegaMoeResult,
  megaMoeUnfused,
  silu,
  type SiluMath,
  type SiluSource,
  type SiluVariant,
  swiglu,
  type SwigluOptions,
  transformWeightsForMegaMoe,
} from "./mega_moe/mod.ts";

// Which model variant produced an output.
export {
  type Behaviour,
  BEHAVIOURS,
  identify,
  type IdentifyOptions,
  type IdentifyResult,
  knownBehaviours,
  type OutputRounding,
  type RankedVariant,
  type Scope,
  type Variant,
  variantLabel,
} from "./identify/mod.ts";
