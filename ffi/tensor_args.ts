/**
 * Tensor arguments of native calls: the 80-byte `go_tensor` descriptor, device-resident tensors, and the staging of
 * host {@link Tensor}s into device buffers (and back, for outputs). Every check (dtype, rank, shape, strides,
 * alignment, extent inside the buffer) happens here, before any native call.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { DESCRIPTOR_BYTES, DTYPE_CODES } from "./tensor_args.ts";
 * assert.equal(DESCRIPTOR_BYTES, 80);
 * assert.equal(DTYPE_CODES.e4m3, 3);
 * ```
 * @module
 */
import { type DType, DTYPES } from "../reference/tensor/dtype.ts";
export type { DType, Storage } from "../reference/tensor/dtype.ts";
export { Tensor } from "../reference/tensor/tensor.ts";
import { Tensor } from "../reference/tensor/tensor.ts";
import { DeviceBuffer } from "./device_buffer.ts";
import type { NativeLibrary } from "./library.ts";

/** `go_dtype` values of `kernels/gemm_oracle.h`. */
export const DTYPE_CODES: Readonly<Partial<Record<DType, number>>> = {
  f32: 0,
  bf16: 1,
  f16: 2,
  e4m3: 3,
  e5m2: 4,
  ue8m0: 5,
  i32: 6,
  i64: 7,
  u8: 8,
  i8: 9,
};

/** Size of `go_tensor`: data pointer, dtype, ndim, shape[4], strides[4]. */
export const DESCRIPTOR_BYTES = 80;

/** A tensor already in device memory: a view into a {@link DeviceBuffer}. */
export interface DeviceTensor {
  /** The buffer holding the elements. */
  buffer: DeviceBuffer;
  /** Byte offset of element (0, ..., 0) in the buffer. */
  byteOffset: number;
  /** Element type. */
  dtype: DType;
  /** Extents (rank 0..4). */
  shape: readonly number[];
  /** Element strides (non-negative). */
  strides: readonly number[];
}

/** What a wrapper accepts for a tensor: a host {@link Tensor} (staged automatically) or a {@link DeviceTensor}. */
export type TensorArg = Tensor | DeviceTensor;

/** Shape/dtype facts of an argument, whichever kind it is. */
export interface TensorMeta {
  /** Element type. */
  dtype: DType;
  /** Extents. */
  shape: readonly number[];
  /** Element strides. */
  strides: readonly number[];
}

/** dtype, shape and strides of an argument. */
export function metaOf(t: TensorArg): TensorMeta {
  return { dtype: t.dtype, shape: t.shape, strides: t.strides };
}

/**
 * Checks a tensor argument's dtype and rank.
 * @throws {TypeError} for a wrong dtype or rank
 */
export function expectTensor(
  name: string,
  t: TensorArg | null | undefined,
  dtypes: readonly DType[],
  rank: number,
): void {
  if (t === null || t === undefined) throw new TypeError(`${name}: required tensor is missing`);
  if (!(t instanceof Tensor) && !isDeviceTensor(t)) {
    throw new TypeError(`${name}: expected a Tensor or a DeviceTensor`);
  }
  if (!dtypes.includes(t.dtype)) {
    throw new TypeError(`${name}: dtype "${t.dtype}" where ${dtypes.map((d) => `"${d}"`).join(" or ")} is required`);
  }
  if (t.shape.length !== rank) {
    throw new TypeError(
      `${name}: rank ${t.shape.length} (shape [${t.shape.join(", ")}]) where rank ${rank} is required`,
    );
  }
  for (const [i, s] of t.shape.entries()) {
    if (!Number.isSafeInteger(s) || s < 0) throw new RangeError(`${name}: invalid size ${s} in dimension ${i}`);
  }
  if (isDeviceTensor(t)) deviceExtent(name, t);
}

/**
 * Checks a shape exactly.
 * @throws {TypeError} naming both shapes
 */
export function expectShape(name: string, t: TensorArg, shape: readonly number[]): void {
  if (t.shape.length !== shape.length || t.shape.some((d, i) => d !== shape[i])) {
    throw new TypeError(`${name}: shape [${t.shape.join(", ")}] where [${shape.join(", ")}] is required`);
  }
}

/** True for a {@link DeviceTensor}-shaped object. */
export function isDeviceTensor(t: unknown): t is DeviceTensor {
  return typeof t === "object" && t !== null && (t as DeviceTensor).buffer instanceof DeviceBuffer;
}

/** Byte extent [first byte, one past the last) of a device tensor relative to its buffer start; validates it. */
export function deviceExtent(name: string, t: DeviceTensor): { lo: number; hi: number } {
  const info = DTYPES[t.dtype];
  if (!info || DTYPE_CODES[t.dtype] === undefined) throw new TypeError(`${name}: dtype "${t.dtype}" has no ABI code`);
  if (t.shape.length > 4) throw new TypeError(`${name}: rank ${t.shape.length} exceeds the ABI's 4`);
  if (t.strides.length !== t.shape.length) {
    throw new TypeError(`${name}: ${t.strides.length} strides for rank ${t.shape.length}`);
  }
  let last = 0n, empty = false;
  for (let i = 0; i < t.shape.length; i++) {
    const s = t.shape[i], st = t.strides[i];
    if (!Number.isSafeInteger(s) || s < 0) throw new RangeError(`${name}: invalid size ${s} in dimension ${i}`);
    if (!Number.isSafeInteger(st) || st < 0) throw new RangeError(`${name}: invalid stride ${st} in dimension ${i}`);
    if (s === 0) empty = true;
    last += BigInt(Math.max(0, s - 1)) * BigInt(st);
  }
  if (!Number.isSafeInteger(t.byteOffset) || t.byteOffset < 0) {
    throw new RangeError(`${name}: invalid byte offset ${t.byteOffset}`);
  }
  if (t.byteOffset % info.bytes !== 0) {
    throw new RangeError(`${name}: byte offset ${t.byteOffset} is not aligned to ${info.bytes}-byte elements`);
  }
  if (empty) return { lo: t.byteOffset, hi: t.byteOffset };
  const bytes = (last + 1n) * BigInt(info.bytes);
  const end = BigInt(t.byteOffset) + bytes;
  if (end > BigInt(t.buffer.size)) {
    throw new RangeError(
      `${name}: view of shape [${t.shape.join(", ")}] strides [${t.strides.join(", ")}] needs ${end} bytes, ` +
        `the device buffer has ${t.buffer.size}`,
    );
  }
  return { lo: t.byteOffset, hi: Number(end) };
}

/** Writes the `go_tensor` descriptor of a device tensor. */
export function encodeDescriptor(name: string, t: DeviceTensor): Uint8Array<ArrayBuffer> {
  deviceExtent(name, t);
  const out = new Uint8Array(DESCRIPTOR_BYTES);
  const v = new DataView(out.buffer);
  v.setBigUint64(0, t.buffer.address(t.byteOffset), true);
  v.setInt32(8, DTYPE_CODES[t.dtype]!, true);
  v.setInt32(12, t.shape.length, true);
  for (let i = 0; i < t.shape.length; i++) {
    v.setBigInt64(16 + 8 * i, BigInt(t.shape[i]), true);
    v.setBigInt64(48 + 8 * i, BigInt(t.strides[i]), true);
  }
  return out;
}

/**
 * Stages host tensors into device buffers for one native call and copies outputs back afterwards.
 * Use with `using`: every staged buffer is freed when the scope ends.
 */
export class Staging implements Disposable {
  readonly #lib: NativeLibrary;
  readonly #buffers: DeviceBuffer[] = [];
  readonly #outputs: { host: Tensor; dev: DeviceTensor; lo: number; count: number }[] = [];

  /**
   * A staging area for one call.
   * @param lib the backend library
   */
  constructor(lib: NativeLibrary) {
    this.#lib = lib;
  }

  /**
   * The descriptor for an argument (null for an absent optional tensor).
   * @param name argument name (for messages)
   * @param t the tensor
   * @param output copy the device contents back into a host tensor after the call
   */
  descriptor(name: string, t: TensorArg | null | undefined, output = false): Uint8Array<ArrayBuffer> | null {
    if (t === null || t === undefined) return null;
    if (isDeviceTensor(t)) {
      if (t.buffer.library !== this.#lib) throw new TypeError(`${name}: device buffer belongs to another backend`);
      return encodeDescriptor(name, t);
    }
    if (!(t instanceof Tensor)) throw new TypeError(`${name}: expected a Tensor or a DeviceTensor`);
    let host = t;
    if (host.strides.some((s) => s < 0)) {
      if (output) throw new RangeError(`${name}: output views with negative strides are not supported`);
      host = host.contiguous();
    }
    const esize = DTYPES[host.dtype].bytes;
    let count = 1;
    if (host.numel > 0) {
      for (let i = 0; i < host.ndim; i++) count += (host.shape[i] - 1) * host.strides[i];
    }
    const lo = host.offset;
    const buf = DeviceBuffer.alloc(this.#lib, count * esize);
    this.#buffers.push(buf);
    const data = host.data;
    const span = new Uint8Array(
      data.buffer as ArrayBuffer,
      data.byteOffset + lo * esize,
      Math.min(count, data.length - lo) * esize,
    );
    buf.copyIn(span);
    const dev: DeviceTensor = {
      buffer: buf,
      byteOffset: 0,
      dtype: host.dtype,
      shape: host.shape,
      strides: host.strides,
    };
    if (output) this.#outputs.push({ host, dev, lo, count });
    return encodeDescriptor(name, dev);
  }

  /** Copies every output back into its host tensor's storage. */
  finish(): void {
    for (const o of this.#outputs) {
      const esize = DTYPES[o.host.dtype].bytes;
      const data = o.host.data;
      const span = new Uint8Array(
        data.buffer as ArrayBuffer,
        data.byteOffset + o.lo * esize,
        Math.min(o.count, data.length - o.lo) * esize,
      );
      o.dev.buffer.copyOut(span);
    }
  }

  /** Frees the staged buffers. */
  [Symbol.dispose](): void {
    for (const b of this.#buffers) b.free();
    this.#buffers.length = 0;
  }
}
