/**
 * Backends by name or path: `openBackend("cpu")` builds the C++ CPU backend on demand (kernels/build.ts) and loads
 * it; `openBackend("cuda")` does the same with nvcc and fails with {@link BackendNotAvailableError} ("CUDA not
 * available") where there is no nvcc, GPU or driver; `openBackend("/abs/lib.so")` loads any library that implements
 * `kernels/gemm_oracle.h`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Tensor } from "../reference/tensor/tensor.ts";
 * import { openBackend } from "./backend.ts";
 * using backend = await openBackend("cpu");
 * assert.equal(backend.info.models.fp8_gemm, "sm90_1d2d");
 * // 1 × 8 × 32, A = 1.0 (e4m3 0x38), B = 0.5 (0x30): D = 16 (bf16 0x4180).
 * const a = Tensor.from("e4m3", [1, 32], new Uint8Array(32).fill(0x38));
 * const b = Tensor.from("e4m3", [8, 32], new Uint8Array(256).fill(0x30));
 * const one = Tensor.from("f32", [1, 1], new Float32Array([1]));
 * const d = Tensor.zeros("bf16", [1, 8]);
 * backend.fp8Gemm({ a, sfa: one, b, sfb: one, d });
 * assert.equal(d.at(0, 7), 0x4180);
 * ```
 * @module
 */
import { buildBackend, CompilerNotFoundError } from "../kernels/build.ts";
import { DeviceBuffer } from "./device_buffer.ts";
import { BackendNotAvailableError, NativeError } from "./errors.ts";
import * as attn from "./attention_ops.ts";
import * as ops from "./gemm_ops.ts";
import * as quant from "./quant_ops.ts";
import { type BackendInfo, NativeLibrary } from "./library.ts";

/** A loaded backend: its info, device memory, and the typed operations. Dispose it to unload the library. */
export class Backend implements Disposable {
  /** The library. */
  readonly library: NativeLibrary;

  /**
   * Wraps an opened library.
   * @param library an opened library
   */
  constructor(library: NativeLibrary) {
    this.library = library;
  }

  /** `go_backend_info`. */
  get info(): BackendInfo {
    return this.library.info;
  }

  /** Backend name (`cpu`, `cuda`, ...). */
  get name(): string {
    return this.library.info.name;
  }

  /** Allocates device memory (dispose it, or use `using`). */
  alloc(bytes: number): DeviceBuffer {
    return DeviceBuffer.alloc(this.library, bytes);
  }

  /** Waits for queued device work. */
  synchronize(): void {
    this.library.assertOpen();
    this.library.check(this.library.symbols.go_synchronize(), "go_synchronize");
  }

  /**
   * Sets the CPU backend's worker threads (0 = all hardware threads).
   * @throws {TypeError} when the library has no `go_set_num_threads`
   */
  setNumThreads(threads: number): void {
    this.library.assertOpen();
    const f = this.library.symbols.go_set_num_threads;
    if (!f) throw new TypeError(`Backend "${this.name}" has no go_set_num_threads`);
    if (!Number.isSafeInteger(threads) || threads < 0) throw new RangeError(`Invalid thread count ${threads}`);
    this.library.check(f(threads), "go_set_num_threads");
  }

  /** See {@link ops.fp8Gemm}. */
  fp8Gemm(args: ops.Fp8GemmArgs): void {
    ops.fp8Gemm(this.library, args);
  }
  /** See {@link ops.fp8GemmSkipHeadMid}. */
  fp8GemmSkipHeadMid(args: ops.Fp8GemmSkipHeadMidArgs): void {
    ops.fp8GemmSkipHeadMid(this.library, args);
  }
  /** See {@link ops.mGroupedFp8GemmContiguous}. */
  mGroupedFp8GemmContiguous(args: ops.MGroupedFp8GemmContiguousArgs): void {
    ops.mGroupedFp8GemmContiguous(this.library, args);
  }
  /** See {@link ops.mGroupedFp8GemmMasked}. */
  mGroupedFp8GemmMasked(args: ops.MGroupedFp8GemmMaskedArgs): void {
    ops.mGroupedFp8GemmMasked(this.library, args);
  }
  /** See {@link ops.kGroupedFp8Gemm}. */
  kGroupedFp8Gemm(args: ops.KGroupedFp8GemmArgs): void {
    ops.kGroupedFp8Gemm(this.library, args);
  }
  /** See {@link ops.bf16Gemm}. */
  bf16Gemm(args: ops.Bf16GemmArgs): void {
    ops.bf16Gemm(this.library, args);
  }
  /** See {@link ops.mGroupedBf16GemmContiguous}. */
  mGroupedBf16GemmContiguous(args: ops.MGroupedBf16GemmContiguousArgs): void {
    ops.mGroupedBf16GemmContiguous(this.library, args);
  }
  /** See {@link ops.mGroupedBf16GemmMasked}. */
  mGroupedBf16GemmMasked(args: ops.MGroupedBf16GemmMaskedArgs): void {
    ops.mGroupedBf16GemmMasked(this.library, args);
  }
  /** See {@link ops.kGroupedBf16Gemm}. */
  kGroupedBf16Gemm(args: ops.KGroupedBf16GemmArgs): void {
    ops.kGroupedBf16Gemm(this.library, args);
  }

  /** See {@link attn.tf32HcPrenormGemm}. */
  tf32HcPrenormGemm(args: attn.Tf32HcPrenormGemmArgs): void {
    attn.tf32HcPrenormGemm(this.library, args);
  }
  /** See {@link attn.fp8MqaLogits}. */
  fp8MqaLogits(args: attn.Fp8MqaLogitsArgs): void {
    attn.fp8MqaLogits(this.library, args);
  }

  /** See {@link attn.fp8PagedMqaLogits}. */
  fp8PagedMqaLogits(args: attn.Fp8PagedMqaLogitsArgs): void {
    attn.fp8PagedMqaLogits(this.library, args);
  }

  /** See {@link ops.cublasltGemm} (optional entry `go_cublaslt_gemm`). */
  cublasltGemm(args: ops.CublasltGemmArgs): ops.CublasltAlgorithm {
    return ops.cublasltGemm(this.library, args);
  }

  /** See {@link attn.getPagedMqaLogitsMetadata} (optional entry `go_get_paged_mqa_logits_metadata`). */
  getPagedMqaLogitsMetadata(args: attn.PagedMqaLogitsMetadataArgs): void {
    attn.getPagedMqaLogitsMetadata(this.library, args);
  }

  /** See {@link quant.quantize} (optional entry `go_quantize`). */
  quantize(args: quant.QuantizeArgs): void {
    quant.quantize(this.library, args);
  }

  /** Unloads the library. */
  close(): void {
    this.library.close();
  }

  /** Same as `close()`. */
  [Symbol.dispose](): void {
    this.close();
  }
}

/**
 * Whether an NVIDIA driver with a GPU is present (`/dev/nvidiactl` or `/dev/nvidia0` exists). `openBackend("cuda")`
 * checks it before building, so a machine without a GPU never compiles the CUDA backend just to report "CUDA not
 * available" (`deno task build` and the tests still compile it wherever nvcc exists).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { gpuPresent } from "./backend.ts";
 * assert.equal(typeof gpuPresent(), "boolean");
 * ```
 */
export function gpuPresent(): boolean {
  for (const p of ["/dev/nvidiactl", "/dev/nvidia0"]) {
    try {
      Deno.statSync(p);
      return true;
    } catch { /* absent */ }
  }
  return false;
}

/**
 * Opens a backend by name (`"cpu"`, `"cuda"`) or by absolute/relative path of a library implementing the header.
 * @param spec name or path
 * @throws {BackendNotAvailableError} for cuda without nvcc, GPU or driver
 * @throws {LibraryLoadError} for a missing library, a missing required symbol or another ABI version
 */
export async function openBackend(spec: string): Promise<Backend> {
  if (typeof spec !== "string" || spec.length === 0) throw new TypeError('Backend must be "cpu", "cuda" or a path');
  if (spec === "cpu" || spec === "cuda") {
    if (spec === "cuda" && !gpuPresent()) {
      throw new BackendNotAvailableError("CUDA not available: no NVIDIA GPU or driver (/dev/nvidiactl absent)");
    }
    let path: string;
    try {
      path = (await buildBackend(spec)).path;
    } catch (e) {
      if (spec === "cuda" && e instanceof CompilerNotFoundError) {
        throw new BackendNotAvailableError("CUDA not available: nvcc not found", { cause: e });
      }
      throw e;
    }
    const lib = NativeLibrary.open(path);
    if (spec === "cuda") {
      const count = new Int32Array(1);
      const st = lib.symbols.go_device_count(count);
      if (st !== 0 || count[0] < 1) {
        const why = st !== 0 ? new NativeError(st, lib.lastError(), "go_device_count").message : "no CUDA device";
        lib.close();
        throw new BackendNotAvailableError(`CUDA not available: ${why}`);
      }
    }
    return new Backend(lib);
  }
  const abs = spec.startsWith("/") ? spec : `${Deno.cwd()}/${spec}`;
  return new Backend(NativeLibrary.open(abs));
}
