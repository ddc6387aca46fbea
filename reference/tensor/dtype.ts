/**
 * Element types of the oracle's tensors and the typed arrays that store them.
 *
 * Floating-point formats narrower than fp32 are stored as their bit patterns (codes), never as decoded
 * numbers, so NaN spellings and signed zeros survive every copy. `e2m1` is stored unpacked, one code per
 * byte (low nibble); DeepGEMM's packed FP4 (two codes per int8, element 0 in the low nibble) is `i8`/`u8`
 * data handled by the FP4 packing utilities.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { DTYPES } from "./dtype.ts";
 * assert.equal(DTYPES.bf16.bytes, 2);
 * assert.equal(DTYPES.e4m3.storage, Uint8Array);
 * ```
 * @module
 */

/** The element types of a {@link Tensor}. */
export type DType = "f32" | "bf16" | "f16" | "e4m3" | "e5m2" | "ue8m0" | "e2m1" | "i32" | "i64" | "u8" | "i8";

/** The typed arrays a tensor's storage can be. */
export type Storage =
  | Float32Array
  | Uint16Array
  | Uint8Array
  | Int8Array
  | Int32Array
  | BigInt64Array;

/** What each dtype is: bytes per stored element and its storage constructor. */
export interface DTypeInfo {
  /** Bytes per element as stored here (e2m1: one byte per code, unpacked). */
  readonly bytes: number;
  /** Typed-array constructor of the storage. */
  readonly storage:
    | Float32ArrayConstructor
    | Uint16ArrayConstructor
    | Uint8ArrayConstructor
    | Int8ArrayConstructor
    | Int32ArrayConstructor
    | BigInt64ArrayConstructor;
  /** True for floating-point formats stored as bit patterns (everything but f32 and the integers). */
  readonly codes: boolean;
}

/** The dtype table. */
export const DTYPES: Readonly<Record<DType, DTypeInfo>> = {
  f32: { bytes: 4, storage: Float32Array, codes: false },
  bf16: { bytes: 2, storage: Uint16Array, codes: true },
  f16: { bytes: 2, storage: Uint16Array, codes: true },
  e4m3: { bytes: 1, storage: Uint8Array, codes: true },
  e5m2: { bytes: 1, storage: Uint8Array, codes: true },
  ue8m0: { bytes: 1, storage: Uint8Array, codes: true },
  e2m1: { bytes: 1, storage: Uint8Array, codes: true },
  i32: { bytes: 4, storage: Int32Array, codes: false },
  i64: { bytes: 8, storage: BigInt64Array, codes: false },
  u8: { bytes: 1, storage: Uint8Array, codes: false },
  i8: { bytes: 1, storage: Int8Array, codes: false },
};

/**
 * Type guard: is `name` a known dtype?
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { isDType } from "./dtype.ts";
 * assert.equal(isDType("e4m3"), true);
 * assert.equal(isDType("fp8"), false);
 * ```
 */
export function isDType(name: string): name is DType {
  return Object.hasOwn(DTYPES, name);
}

/**
 * Allocates zeroed storage for `n` elements of `dtype`.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { allocStorage } from "./dtype.ts";
 * assert.ok(allocStorage("bf16", 3) instanceof Uint16Array);
 * assert.equal(allocStorage("f32", 4).length, 4);
 * ```
 */
export function allocStorage(dtype: DType, n: number): Storage {
  return new DTYPES[dtype].storage(n);
}

/**
 * Checks that `data` is the storage type of `dtype`; throws a TypeError naming both otherwise.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { checkStorage } from "./dtype.ts";
 * checkStorage("e4m3", new Uint8Array(2));
 * assert.throws(() => checkStorage("f32", new Uint8Array(2)), TypeError);
 * ```
 */
export function checkStorage(dtype: DType, data: Storage, what = "tensor"): void {
  const want = DTYPES[dtype].storage;
  if (!(data instanceof want)) {
    throw new TypeError(`${what}: dtype "${dtype}" needs a ${want.name}, got a ${data.constructor.name}`);
  }
}
