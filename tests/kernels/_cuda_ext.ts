/**
 * The CUDA backend's test-only extension entry points (kernels/cuda/gemm_oracle_cuda_ext.h: go_ext_*), opened beside
 * `go_last_error`, for the tests that call them without a GPU.
 * @module
 */
import { buildBackend } from "../../kernels/build.ts";

/** An opened CUDA backend with the named extension symbols. */
export interface CudaExt<S extends Deno.ForeignLibraryInterface> {
  lib: Deno.DynamicLibrary<S & { go_last_error: { parameters: []; result: "pointer" } }>;
  /** The backend's `go_last_error()` text after a call that returned `status` ("" for 0). */
  lastError(status: number): string;
}

/**
 * Builds (or finds in the cache) the CUDA backend and opens it with `symbols` and `go_last_error`.
 * @param symbols the extension entry points to bind
 * @returns the library and its error text reader; close `lib` when done
 * @example
 * ```ts ignore
 * import { openCudaExt } from "./_cuda_ext.ts";
 * const { lib, lastError } = await openCudaExt({ go_ext_fast_choose: { parameters: [], result: "i32" } });
 * lib.close();
 * ```
 */
export async function openCudaExt<const S extends Deno.ForeignLibraryInterface>(symbols: S): Promise<CudaExt<S>> {
  const { path } = await buildBackend("cuda");
  const lib = Deno.dlopen(path, { ...symbols, go_last_error: { parameters: [], result: "pointer" } } as const);
  // The spread loses the symbol's type in the generic: go_last_error is `const char* (void)` (ffi/symbols.ts).
  const lastErrorPtr = (lib.symbols as unknown as { go_last_error(): Deno.PointerValue }).go_last_error;
  return {
    lib: lib as unknown as CudaExt<S>["lib"],
    lastError(status) {
      const p = lastErrorPtr();
      return status === 0 || p === null ? "" : Deno.UnsafePointerView.getCString(p);
    },
  };
}

/**
 * The NUL-terminated text at the start of `buf`.
 * @param buf bytes a native call wrote
 * @returns the text before the first NUL
 * @example
 * ```ts
 * import { cString } from "./_cuda_ext.ts";
 * if (cString(new Uint8Array([104, 105, 0, 120])) !== "hi") throw new Error();
 * ```
 */
export function cString(buf: Uint8Array): string {
  const end = buf.indexOf(0);
  return new TextDecoder().decode(end < 0 ? buf : buf.subarray(0, end));
}
