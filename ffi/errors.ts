/**
 * Errors of the FFI layer: native status codes become {@link NativeError}s carrying the library's message;
 * loading problems are {@link LibraryLoadError}s; a backend that cannot run here is {@link BackendNotAvailableError}.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { NativeError, STATUS_NAMES } from "./errors.ts";
 * const e = new NativeError(2, "d: 16 bytes exceed the allocation", "go_fp8_gemm");
 * assert.equal(e.code, "GO_ERR_OUT_OF_BOUNDS");
 * assert.equal(STATUS_NAMES[0], "GO_OK");
 * ```
 * @module
 */

/** Status codes of `kernels/gemm_oracle.h`, by value. */
export const STATUS_NAMES: Readonly<Record<number, string>> = {
  0: "GO_OK",
  1: "GO_ERR_INVALID_ARGUMENT",
  2: "GO_ERR_OUT_OF_BOUNDS",
  3: "GO_ERR_UNSUPPORTED",
  4: "GO_ERR_OUT_OF_MEMORY",
  5: "GO_ERR_DEVICE",
  6: "GO_ERR_NOT_AVAILABLE",
  7: "GO_ERR_INTERNAL",
};

/** A native call returned a non-zero status. */
export class NativeError extends Error {
  /** The status value. */
  readonly status: number;
  /** Its name (`GO_ERR_...`). */
  readonly code: string;
  /** The C function that failed. */
  readonly fn: string;
  /**
   * An error for a failed native call.
   * @param status the returned status
   * @param message `go_last_error()` text
   * @param fn the C function name
   */
  constructor(status: number, message: string, fn: string) {
    const code = STATUS_NAMES[status] ?? `status ${status}`;
    super(`${fn} failed with ${code}: ${message}`);
    this.name = "NativeError";
    this.status = status;
    this.code = code;
    this.fn = fn;
  }
}

/** A library could not be opened or is not a usable backend (missing file, symbol, wrong ABI version). */
export class LibraryLoadError extends Error {
  /**
   * A load failure.
   * @param message what went wrong
   * @param options the underlying error
   */
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "LibraryLoadError";
  }
}

/** A backend cannot run on this machine (e.g. "CUDA not available": no nvcc, no GPU or no driver). */
export class BackendNotAvailableError extends Error {
  /**
   * A backend that cannot run here.
   * @param message why
   * @param options the underlying error
   */
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "BackendNotAvailableError";
  }
}
