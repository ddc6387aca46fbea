/**
 * Device memory of a backend as a disposable object: `using buf = DeviceBuffer.alloc(lib, bytes)`.
 * Copies are bounds-checked here before the native call (and again by the backend's allocation registry).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { openBackend } from "./backend.ts";
 * using backend = await openBackend("cpu");
 * using buf = backend.alloc(16);
 * buf.copyIn(new Float32Array([1, 2, 3, 4]));
 * const back = new Float32Array(4);
 * buf.copyOut(back);
 * assert.deepEqual([...back], [1, 2, 3, 4]);
 * ```
 * @module
 */
import type { NativeLibrary } from "./library.ts";

/** Host data a copy accepts. */
export type HostBytes = ArrayBufferView<ArrayBuffer>;

function bytesOf(view: HostBytes): Uint8Array<ArrayBuffer> {
  return new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
}

function checkByteRange(what: string, offset: number, length: number, size: number): void {
  if (!Number.isSafeInteger(offset) || offset < 0) throw new RangeError(`${what}: invalid byte offset ${offset}`);
  if (!Number.isSafeInteger(length) || length < 0) throw new RangeError(`${what}: invalid byte length ${length}`);
  if (offset + length > size) {
    throw new RangeError(`${what}: ${length} bytes at offset ${offset} exceed the device buffer of ${size} bytes`);
  }
}

/** One allocation from `go_alloc`; freed by `free()` / `using`. */
export class DeviceBuffer implements Disposable {
  /** Size in bytes. */
  readonly size: number;
  readonly #lib: NativeLibrary;
  #ptr: Deno.PointerObject | null;

  private constructor(lib: NativeLibrary, ptr: Deno.PointerObject, size: number) {
    this.#lib = lib;
    this.#ptr = ptr;
    this.size = size;
  }

  /**
   * Allocates `bytes` (> 0) of zero-filled device memory.
   * @param lib the backend library
   * @param bytes size in bytes
   * @throws {RangeError} for a size that is not a positive safe integer
   */
  static alloc(lib: NativeLibrary, bytes: number): DeviceBuffer {
    if (!Number.isSafeInteger(bytes) || bytes <= 0) {
      throw new RangeError(`Device buffer size must be a positive integer, got ${bytes}`);
    }
    lib.assertOpen();
    const out = new BigUint64Array(1);
    lib.check(lib.symbols.go_alloc(BigInt(bytes), out), "go_alloc");
    const ptr = Deno.UnsafePointer.create(out[0]);
    if (ptr === null) throw new Error("go_alloc returned a null pointer with status GO_OK");
    return new DeviceBuffer(lib, ptr, bytes);
  }

  /** The library this buffer belongs to. */
  get library(): NativeLibrary {
    return this.#lib;
  }

  /** True after free(). */
  get freed(): boolean {
    return this.#ptr === null;
  }

  /** The device address of byte `offset` (bigint). */
  address(offset = 0): bigint {
    if (!this.#ptr) throw new ReferenceError("Device buffer used after free()");
    checkByteRange("address", offset, 0, this.size);
    return Deno.UnsafePointer.value(this.#ptr) + BigInt(offset);
  }

  /** Copies host bytes into the buffer at `offset`. */
  copyIn(src: HostBytes, offset = 0): void {
    const ptr = this.#pointer(offset, src.byteLength, "copyIn");
    if (src.byteLength === 0) return;
    this.#lib.check(this.#lib.symbols.go_copy_in(ptr, bytesOf(src), BigInt(src.byteLength)), "go_copy_in");
  }

  /** Copies bytes from the buffer at `offset` into host memory (fills `dst` completely). */
  copyOut(dst: HostBytes, offset = 0): void {
    const ptr = this.#pointer(offset, dst.byteLength, "copyOut");
    if (dst.byteLength === 0) return;
    this.#lib.check(this.#lib.symbols.go_copy_out(bytesOf(dst), ptr, BigInt(dst.byteLength)), "go_copy_out");
  }

  /** Frees the memory (idempotent). */
  free(): void {
    if (this.#ptr && this.#lib.open) {
      const p = this.#ptr;
      this.#ptr = null;
      this.#lib.check(this.#lib.symbols.go_free(p), "go_free");
    }
    this.#ptr = null;
  }

  /** Same as `free()`. */
  [Symbol.dispose](): void {
    this.free();
  }

  #pointer(offset: number, length: number, what: string): Deno.PointerValue {
    if (!this.#ptr) throw new ReferenceError(`${what}: device buffer used after free()`);
    this.#lib.assertOpen();
    checkByteRange(what, offset, length, this.size);
    return Deno.UnsafePointer.offset(this.#ptr, offset);
  }
}
