/**
 * Copies of typed arrays in SharedArrayBuffers: posted to a Worker, they are shared, not copied, so every Worker of a
 * pool reads a job's operands from one place.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { sharedCopy } from "./shared_copy.ts";
 * const s = sharedCopy(new Int32Array([1, 2]));
 * assert.ok(s.buffer instanceof SharedArrayBuffer);
 * assert.deepEqual([...s], [1, 2]);
 * assert.equal(sharedCopy(s), s); // already shared: returned as it is
 * ```
 * @module
 */

/** The typed arrays {@link sharedCopy} copies. */
export type ShareableArray =
  | Uint8Array
  | Int8Array
  | Uint16Array
  | Int16Array
  | Int32Array
  | Float32Array
  | Float64Array
  | BigInt64Array;

/**
 * The array itself when it already lives in a SharedArrayBuffer, else a copy in a new one (same type and length).
 * @param a the array
 * @returns a shared array with the same elements
 */
export function sharedCopy<T extends ShareableArray>(a: T): T;
/**
 * {@link sharedCopy} of an optional array.
 * @param a the array, or null
 * @returns a shared array with the same elements, or null
 */
export function sharedCopy<T extends ShareableArray>(a: T | null): T | null;
export function sharedCopy<T extends ShareableArray>(a: T | null): T | null {
  if (a === null || a.buffer instanceof SharedArrayBuffer) return a;
  const ctor = a.constructor as new (b: SharedArrayBuffer) => T;
  const out = new ctor(new SharedArrayBuffer(a.byteLength));
  out.set(a as never);
  return out;
}
