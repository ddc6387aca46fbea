/**
 * Opening a kernel library: `Deno.dlopen` on an absolute path, the ABI-version check, the backend-info JSON, and
 * the conversion of every non-zero status into a {@link NativeError} with the library's `go_last_error()` text.
 *
 * @example
 * ```ts ignore
 * import { NativeLibrary } from "./library.ts";
 * using lib = NativeLibrary.open("/abs/path/libgemm_oracle_cpu.so");
 * console.log(lib.info.name);
 * ```
 * @module
 */
import { LibraryLoadError, NativeError } from "./errors.ts";
import { REQUIRED_SYMBOLS, type Symbols, symbols } from "./symbols.ts";

/** The ABI version this TypeScript layer speaks (`GO_ABI_VERSION` of `kernels/gemm_oracle.h`). */
export const ABI_VERSION = 1;

/** What `go_backend_info` reports. */
export interface BackendInfo {
  /** Backend name, e.g. `"cpu"`, `"cuda"`. */
  name: string;
  /** ABI version of the library. */
  abi: number;
  /** Device description. */
  device: string;
  /** Architecture (`x86_64`, `sm_90a`, ...). */
  arch: string;
  /** Default kernel model per operation family: the model whose bits the results must equal. */
  models: Record<string, string>;
  /** Models the backend can compute, per family (optional). */
  supported_models?: Record<string, string[]>;
  /** Other keys (threads, devices, compiler, ...). */
  [key: string]: unknown;
}

/** The opened symbols. */
export type NativeSymbols = Deno.DynamicLibrary<Symbols>["symbols"];

/** A loaded kernel library. Close it with `close()` or `using`. */
export class NativeLibrary implements Disposable {
  /** Absolute path it was loaded from. */
  readonly path: string;
  /** The raw symbols (optional operations are `null` when absent). Prefer the typed wrappers. */
  readonly symbols: NativeSymbols;
  /** Parsed `go_backend_info` JSON. */
  readonly info: BackendInfo;
  #lib: Deno.DynamicLibrary<Symbols> | null;

  private constructor(path: string, lib: Deno.DynamicLibrary<Symbols>) {
    this.path = path;
    this.#lib = lib;
    this.symbols = lib.symbols;
    this.info = this.#readInfo();
  }

  /**
   * Opens a library by absolute path and checks it is a gemm-oracle backend of this ABI version.
   * @param path absolute path of the shared library
   * @throws {TypeError} for a relative path
   * @throws {LibraryLoadError} for a missing file, a missing required symbol or another ABI version
   */
  static open(path: string): NativeLibrary {
    if (typeof path !== "string" || !path.startsWith("/")) {
      throw new TypeError(`Library path must be absolute, got "${path}"`);
    }
    try {
      Deno.statSync(path);
    } catch (e) {
      throw new LibraryLoadError(`Cannot open kernel library "${path}": file not found`, { cause: e });
    }
    let lib: Deno.DynamicLibrary<Symbols>;
    try {
      lib = Deno.dlopen(path, symbols);
    } catch (e) {
      const text = e instanceof Error ? e.message : String(e);
      const missing = REQUIRED_SYMBOLS.find((s) => text.includes(s));
      if (missing) {
        throw new LibraryLoadError(
          `Kernel library "${path}" lacks the required symbol ${missing}: it does not implement gemm_oracle.h`,
          { cause: e },
        );
      }
      throw new LibraryLoadError(`Cannot open kernel library "${path}": ${text}`, { cause: e });
    }
    const abi = lib.symbols.go_abi_version();
    if (abi !== ABI_VERSION) {
      lib.close();
      throw new LibraryLoadError(
        `Kernel library "${path}" implements ABI version ${abi}, this gemm-oracle needs version ${ABI_VERSION}`,
      );
    }
    try {
      return new NativeLibrary(path, lib);
    } catch (e) {
      lib.close();
      throw e;
    }
  }

  /** True until closed. */
  get open(): boolean {
    return this.#lib !== null;
  }

  /** Unloads the library (idempotent). */
  close(): void {
    if (this.#lib) {
      this.#lib.close();
      this.#lib = null;
    }
  }

  /** Same as `close()`. */
  [Symbol.dispose](): void {
    this.close();
  }

  /** Throws if the library was closed. */
  assertOpen(): void {
    if (!this.#lib) throw new ReferenceError(`Kernel library "${this.path}" is closed`);
  }

  /** The thread-local last error message of the library. */
  lastError(): string {
    this.assertOpen(); // a closed library's code may be unmapped: never call into it
    const p = this.symbols.go_last_error();
    return p === null ? "" : Deno.UnsafePointerView.getCString(p);
  }

  /**
   * Turns a status into an exception carrying the library's message.
   * @param status a returned status
   * @param fn the C function name (for the message)
   * @throws {NativeError} when status is not 0
   * @throws {ReferenceError} when the library was closed (its code may be unmapped)
   */
  check(status: number, fn: string): void {
    this.assertOpen();
    if (status !== 0) throw new NativeError(status, this.lastError(), fn);
  }

  #readInfo(): BackendInfo {
    const needed = new BigUint64Array(1);
    this.check(this.symbols.go_backend_info(null, 0n, needed), "go_backend_info");
    if (needed[0] > 1_000_000n) throw new LibraryLoadError(`Backend info of ${needed[0]} bytes is implausible`);
    const buf = new Uint8Array(Number(needed[0]));
    this.check(this.symbols.go_backend_info(buf, BigInt(buf.length), needed), "go_backend_info");
    const text = new TextDecoder().decode(buf.subarray(0, Math.max(0, buf.length - 1)));
    let info: BackendInfo;
    try {
      info = JSON.parse(text);
    } catch (e) {
      throw new LibraryLoadError(`Kernel library "${this.path}" returned backend info that is not JSON: ${text}`, {
        cause: e,
      });
    }
    if (typeof info.name !== "string" || typeof info.models !== "object" || info.models === null) {
      throw new LibraryLoadError(`Kernel library "${this.path}" backend info lacks "name" or "models": ${text}`);
    }
    return info;
  }
}
