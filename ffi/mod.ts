/**
 * The `Deno.dlopen` layer: backend discovery and loading ({@link openBackend}: `cpu`, `cuda`, or a path to any
 * library implementing `kernels/gemm_oracle.h`), the {@link Backend} and its typed operations that validate every
 * argument before native code runs, device buffers, the ABI's symbol table and codes, and the errors.
 *
 * The per-operation wrappers behind the {@link Backend} methods and the descriptor and staging helpers stay
 * importable from their own modules (`./gemm_ops.ts`, `./tensor_args.ts`, ...) but are not part of this surface.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ABI_VERSION, MODEL_CODES, REQUIRED_SYMBOLS } from "./mod.ts";
 * assert.equal(ABI_VERSION, 1);
 * assert.equal(MODEL_CODES.exact, 0);
 * assert.ok(REQUIRED_SYMBOLS.includes("go_backend_info"));
 * ```
 * @module
 */

// Backends and libraries.
export { Backend, gpuPresent, openBackend } from "./backend.ts";
export { ABI_VERSION, type BackendInfo, NativeLibrary, type NativeSymbols } from "./library.ts";
export { BackendNotAvailableError, LibraryLoadError, NativeError, STATUS_NAMES } from "./errors.ts";
export { REQUIRED_SYMBOLS, type Symbols, symbols } from "./symbols.ts";
export { MODEL_CODES, type ModelName } from "./models.ts";

// Device memory and tensor arguments.
export { DeviceBuffer, type HostBytes } from "./device_buffer.ts";
export { type DeviceTensor, type DType, DTYPE_CODES, type Storage, Tensor, type TensorArg } from "./tensor_args.ts";

// The arguments of the Backend's operations.
export type {
  Bf16GemmArgs,
  CublasltAlgorithm,
  CublasltGemmArgs,
  Fp8GemmArgs,
  Fp8GemmSkipHeadMidArgs,
  KGroupedBf16GemmArgs,
  KGroupedFp8GemmArgs,
  KGroupedLayout,
  MGroupedBf16GemmContiguousArgs,
  MGroupedBf16GemmMaskedArgs,
  MGroupedFp8GemmContiguousArgs,
  MGroupedFp8GemmMaskedArgs,
  Recipe,
} from "./gemm_ops.ts";
export type {
  Fp8MqaLogitsArgs,
  Fp8PagedMqaLogitsArgs,
  PagedMqaLogitsMetadataArgs,
  Tf32HcPrenormGemmArgs,
} from "./attention_ops.ts";
export {
  MX_SCALE_RULE_CODES,
  type MxScaleRuleName,
  type OutputSpec,
  QUANT_KIND_CODES,
  type QuantizeArgs,
  type QuantKind,
  type QuantOptions,
  quantOutputSpecs,
} from "./quant_ops.ts";
