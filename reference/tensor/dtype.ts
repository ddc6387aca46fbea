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
export type DType =
  | "f32"
  | "bf16"
  | "f16"
  | "e4m3"
  | "e5m2"
  | "ue8m0"
  | "e2m1"
  | "i32"
  | "i64"
  | "i16"
  | "u16"
  | "u8"
  | "i8";

/** The typed arrays a tensor's storage can be. */
export type Storage =
  | Float32Array
  | Uint16Array
  | Uint8Array
  | Int8Array
  | Int16Array
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
    | Int16ArrayConstructor
    | Int32ArrayConstructor
    | BigInt64ArrayConstructor;
  /** True for floating-point formats stored as bit patterns (everything but f32 and the integers). */
  readonly codes: boolean;
  /** True for the integer dtypes (compared, summarised and refused as float inputs by value). */
  readonly integer: boolean;
}

/** The dtype table. */
export const DTYPES: Readonly<Record<DType, DTypeInfo>> = {
  f32: { bytes: 4, storage: Float32Array, codes: false, integer: false },
  bf16: { bytes: 2, storage: Uint16Array, codes: true, integer: false },
  f16: { bytes: 2, storage: Uint16Array, codes: true, integer: false },
  e4m3: { bytes: 1, storage: Uint8Array, codes: true, integer: false },
  e5m2: { bytes: 1, storage: Uint8Array, codes: true, integer: false },
  ue8m0: { bytes: 1, storage: Uint8Array, codes: true, integer: false },
  e2m1: { bytes: 1, storage: Uint8Array, codes: true, integer: false },
  i32: { bytes: 4, storage: Int32Array, codes: false, integer: true },
  i64: { bytes: 8, storage: BigInt64Array, codes: false, integer: true },
  i16: { bytes: 2, storage: Int16Array, codes: false, integer: true },
  u16: { bytes: 2, storage: Uint16Array, codes: false, integer: true },
  u8: { bytes: 1, storage: Uint8Array, codes: false, integer: true },
  i8: { bytes: 1, storage: Int8Array, codes: false, integer: true },
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
 * Whether `dtype` is an integer dtype (`i32`, `i64`, `i16`, `u16`, `u8`, `i8`).
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { isIntegerDType } from "./dtype.ts";
 * assert.equal(isIntegerDType("i16"), true);
 * assert.equal(isIntegerDType("bf16"), false);
 * ```
 */
export function isIntegerDType(dtype: DType): boolean {
  return DTYPES[dtype].integer;
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
