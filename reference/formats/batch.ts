/**
 * Batch conversions over typed arrays: fp32 (as `Float32Array` or its bits as `Uint32Array`) → codes
 * (`Uint8Array` for 8- and 4-bit formats, one code per byte; `Uint16Array` for bf16/fp16; `Uint32Array` for f32),
 * and codes → `Float32Array`.
 *
 * Speed: for formats of at most 8 bits the encoder is a table lookup. Every rounding threshold and every
 * representable value of such a format is an fp32 value whose low 16 bits are zero (it has at most 7 fraction bits),
 * so the code depends only on the top 16 bits of the input and on whether the low 16 bits are zero: a 2^17-entry
 * table, filled once from the exact scalar encoder, gives the same codes as the encoder for every input.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { decodeArray, encodeArray } from "./batch.ts";
 * const codes = encodeArray("cuda_satfinite", "e4m3", new Float32Array([1, 464, 1000, -0.75]));
 * assert.deepEqual(codes, new Uint8Array([0x38, 0x7e, 0x7e, 0xb4]));
 * assert.deepEqual(decodeArray("e4m3", codes), new Float32Array([1, 448, 448, -0.75]));
 * ```
 * @module
 */

import { decode, type EncodeOptions, type Encoder, encoderFor } from "./codec.ts";
import { type FormatName, type FormatSpec, formatSpec } from "./format_table.ts";
import { getConverter, profileRule } from "./profiles.ts";

/** The typed array that holds codes of a format: 8- and 4-bit formats → Uint8Array, 16 → Uint16Array, 32 → Uint32Array. */
export type CodeArray = Uint8Array | Uint16Array | Uint32Array;

function inputBits(input: unknown, what: string): Uint32Array {
  if (input instanceof Float32Array) return new Uint32Array(input.buffer, input.byteOffset, input.length);
  if (input instanceof Uint32Array) return input;
  const got = input === null ? "null" : (input as object)?.constructor?.name ?? typeof input;
  throw new TypeError(`Cannot ${what}: input must be a Float32Array or a Uint32Array of fp32 bits, got ${got}`);
}

function allocCodes(spec: FormatSpec, n: number): CodeArray {
  return spec.bits <= 8 ? new Uint8Array(n) : spec.bits <= 16 ? new Uint16Array(n) : new Uint32Array(n);
}

const TABLES = new Map<string, Uint8Array>();

function lookupTable(key: string, enc: Encoder): Uint8Array {
  let t = TABLES.get(key);
  if (!t) {
    t = new Uint8Array(1 << 17);
    for (let hi = 0; hi < 0x10000; hi++) {
      const base = (hi << 16) >>> 0;
      t[2 * hi] = enc(base);
      t[2 * hi + 1] = enc(base + 1);
    }
    TABLES.set(key, t);
  }
  return t;
}

// The hot loop, kept small and monomorphic (one element kind in, one out) so that V8 optimises it like a C loop.
function encodeByTable(src: Uint32Array, out: Uint8Array, t: Uint8Array): void {
  const n = src.length;
  for (let i = 0; i < n; i++) {
    const u = src[i];
    // index = top 16 bits · 2 + (low 16 bits ≠ 0)
    out[i] = t[((u >>> 15) & 0x1fffe) | (((u & 0xffff) + 0xffff) >>> 16)];
  }
}

function outputFor(spec: FormatSpec, n: number, out: CodeArray | undefined): CodeArray {
  if (out === undefined) return allocCodes(spec, n);
  const want = spec.bits <= 8 ? Uint8Array : spec.bits <= 16 ? Uint16Array : Uint32Array;
  if (!(out instanceof want)) {
    throw new TypeError(`Cannot encode to "${spec.name}": out must be a ${want.name}, got ${out?.constructor?.name}`);
  }
  if (out.length !== n) throw new RangeError(`Cannot encode: out holds ${out.length} codes, input has ${n} elements`);
  return out;
}

function runEncoder(
  spec: FormatSpec,
  enc: Encoder,
  key: string,
  nanIsCustom: boolean,
  src: Uint32Array,
  dst?: CodeArray,
): CodeArray {
  const n = src.length;
  const out = outputFor(spec, n, dst);
  if (spec.bits <= 8 && !nanIsCustom) {
    encodeByTable(src, out as Uint8Array, lookupTable(key, enc));
  } else if (spec.bits <= 8) {
    const t = lookupTable(key, enc);
    const o = out as Uint8Array;
    for (let i = 0; i < n; i++) {
      const u = src[i];
      o[i] = (u & 0x7fffffff) > 0x7f800000 ? enc(u) : t[((u >>> 15) & 0x1fffe) | (((u & 0xffff) + 0xffff) >>> 16)];
    }
  } else {
    for (let i = 0; i < n; i++) out[i] = enc(src[i]);
  }
  return out;
}

/**
 * Encodes every element of `input` with a named profile.
 *
 * @param profile a profile name (see `PROFILES`)
 * @param format a format the profile defines
 * @param input fp32 values, or their bit patterns
 * @param out optional destination of the right type and length (reused instead of allocating)
 * @returns the codes, one per element (`out` when given)
 * @throws {TypeError} when `input` is not a Float32Array or Uint32Array, or `out` has the wrong type
 * @throws {RangeError} for an unknown profile or format, a format the profile does not define, or a wrong `out` length
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { encodeArray } from "./batch.ts";
 * assert.deepEqual(encodeArray("deepgemm_fp4", "e2m1", new Float32Array([0.75, -0.1, 5, 5.5])), new Uint8Array([1, 0, 6, 7]));
 * ```
 */
export function encodeArray(
  profile: string,
  format: string,
  input: Float32Array | Uint32Array,
  out?: CodeArray,
): CodeArray {
  const rule = profileRule(profile, format);
  const src = inputBits(input, `encode to "${format}" with profile "${profile}"`);
  const spec = formatSpec(format);
  return runEncoder(spec, getConverter(profile, format), `${profile}\u0000${format}`, !!rule.nan?.custom, src, out);
}

const OPTION_KEYS = new WeakMap<EncodeOptions, number>();
let nextOptionKey = 0;

/**
 * Encodes every element of `input` with explicit encoder options instead of a profile.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { encodeArrayWith } from "./batch.ts";
 * const rz = { rounding: "rz", overflow: "saturate" } as const;
 * assert.deepEqual(encodeArrayWith("e4m3", rz, new Float32Array([1.2, -1000])), new Uint8Array([0x39, 0xfe]));
 * ```
 */
export function encodeArrayWith(
  format: FormatName,
  options: EncodeOptions,
  input: Float32Array | Uint32Array,
): CodeArray {
  const spec = formatSpec(format);
  const enc = encoderFor(format, options);
  const src = inputBits(input, `encode to "${format}"`);
  let id = OPTION_KEYS.get(options);
  if (id === undefined) {
    id = nextOptionKey++;
    OPTION_KEYS.set(options, id);
  }
  return runEncoder(spec, enc, `#${id}\u0000${format}`, !!options.nan?.custom, src);
}

// Monomorphic hot loop of decodeArray for 8-bit formats.
function decodeByTable(codes: Uint8Array, out: Float32Array, t: Float32Array): void {
  const n = codes.length;
  for (let i = 0; i < n; i++) out[i] = t[codes[i]];
}

const DECODE_TABLES = new Map<FormatName, Float32Array>();

function cachedDecodeTable(spec: FormatSpec): Float32Array {
  let t = DECODE_TABLES.get(spec.name);
  if (!t) {
    t = new Float32Array(2 ** spec.bits);
    for (let c = 0; c < t.length; c++) t[c] = decode(spec.name, c);
    DECODE_TABLES.set(spec.name, t);
  }
  return t;
}

/**
 * The value of every code of a 4-, 8- (or 16-)bit format, indexed by code: NaN codes → NaN, UE8M0 0x00 → 2^-127.
 *
 * @param format a format of at most 16 bits
 * @returns a fresh Float32Array of 2^bits values
 * @throws {RangeError} for an unknown format or f32
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { decodeTable } from "./batch.ts";
 * assert.deepEqual(decodeTable("e2m1").subarray(0, 8), new Float32Array([0, 0.5, 1, 1.5, 2, 3, 4, 6]));
 * ```
 */
export function decodeTable(format: string): Float32Array {
  const spec = formatSpec(format);
  if (spec.bits > 16) {
    throw new RangeError(`Cannot build a decode table for "${format}": only formats of at most 16 bits`);
  }
  return cachedDecodeTable(spec).slice();
}

/**
 * Decodes codes to fp32 values. The code array type must match the format (Uint8Array for 8- and 4-bit formats,
 * Uint16Array for bf16/fp16, Uint32Array for f32, whose bits are copied unchanged).
 *
 * @param format the format of the codes
 * @param codes the codes
 * @param out optional destination Float32Array of the same length
 * @returns the values (`out` when given)
 * @throws {TypeError} for the wrong typed-array type
 * @throws {RangeError} for an unknown format or an E2M1 code above 15
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { decodeArray } from "./batch.ts";
 * assert.deepEqual(decodeArray("ue8m0", new Uint8Array([0x7f, 0x80])), new Float32Array([1, 2]));
 * ```
 */
export function decodeArray(format: string, codes: CodeArray, out?: Float32Array): Float32Array {
  const spec = formatSpec(format);
  const want = spec.bits <= 8 ? Uint8Array : spec.bits <= 16 ? Uint16Array : Uint32Array;
  if (!(codes instanceof want)) {
    const got = codes === null ? "null" : (codes as object)?.constructor?.name ?? typeof codes;
    throw new TypeError(`Cannot decode "${format}" codes: expected a ${want.name}, got ${got}`);
  }
  const n = codes.length;
  if (out !== undefined) {
    if (!(out instanceof Float32Array)) {
      throw new TypeError(`Cannot decode "${format}" codes: out must be a Float32Array`);
    }
    if (out.length !== n) throw new RangeError(`Cannot decode: out holds ${out.length} values, there are ${n} codes`);
  } else {
    out = new Float32Array(n);
  }
  if (spec.bits === 32) {
    new Uint32Array(out.buffer, out.byteOffset, n).set(codes);
    return out;
  }
  const t = cachedDecodeTable(spec);
  const limit = t.length;
  if (limit === 256 && codes instanceof Uint8Array) {
    decodeByTable(codes, out, t); // every byte is a valid code
    return out;
  }
  for (let i = 0; i < n; i++) {
    const c = codes[i];
    if (c >= limit) throw new RangeError(`Cannot decode "${format}" code ${c} at index ${i}: codes are below ${limit}`);
    out[i] = t[c];
  }
  return out;
}
