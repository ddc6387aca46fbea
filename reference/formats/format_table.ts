/**
 * The number formats of the oracle as data: one record per format, read by the generic codec
 * ({@link ./codec.ts}). Adding a format is adding a row here (the ml_dtypes `float8.h` traits idea).
 *
 * Source of every row: `numerics.md` §1 (decoding is the same in every reference, verified on H200).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { FORMATS } from "./format_table.ts";
 * assert.equal(FORMATS.e4m3.maxFiniteCode, 0x7e);
 * assert.equal(FORMATS.ue8m0.hasZero, false);
 * ```
 * @module
 */
import { lookUp } from "./_look_up.ts";

/** Names of the formats the oracle knows. `e2m1` codes are 4 bits (one code per byte when unpacked). */
export type FormatName = "e4m3" | "e5m2" | "e2m1" | "ue8m0" | "bf16" | "fp16" | "f32";

/**
 * How a format spells NaN:
 * - `"ieee"`: exponent field all ones and fraction ≠ 0 (fraction 0 is ±Inf) — E5M2, BF16, FP16, FP32;
 * - `"all_ones"`: only exponent and fraction all ones, no infinities (the "fn" formats E4M3 and UE8M0, whose 0xFF is NaN);
 * - `"none"`: no NaN code at all (E2M1).
 */
export type NanSpelling = "ieee" | "all_ones" | "none";

/** The traits of one binary floating-point format. */
export interface FormatSpec {
  /** The format's name (the key of {@link FORMATS}). */
  readonly name: FormatName;
  /** Storage width of one code in bits (sign + exponent + fraction). */
  readonly bits: number;
  /** Width of the exponent field. */
  readonly exponentBits: number;
  /** Width of the fraction (explicit mantissa) field. */
  readonly mantissaBits: number;
  /** Exponent bias: a normal code with exponent field e has the value (1 + m/2^M)·2^(e − bias). */
  readonly bias: number;
  /** Whether the top bit of a code is a sign bit (false for UE8M0). */
  readonly hasSign: boolean;
  /** Whether the format has ±Inf codes. */
  readonly hasInfinity: boolean;
  /** How NaN is spelled. */
  readonly nan: NanSpelling;
  /**
   * Whether the format has zero (and subnormals). When false, exponent field 0 is an ordinary binade:
   * UE8M0 0x00 is 2^-127, not 0.
   */
  readonly hasZero: boolean;
  /** The largest finite magnitude code (sign bit clear). */
  readonly maxFiniteCode: number;
  /** The positive code with every exponent and fraction bit set (NaN in all_ones formats, NaN in IEEE ones too). */
  readonly allOnesCode: number;
  /** The +Inf code, or null when the format has no infinity. */
  readonly infinityCode: number | null;
}

/** Every format, by name (data only). */
export const FORMATS: Readonly<Record<FormatName, FormatSpec>> = Object.freeze({
  // E4M3 "fn": s.eeee.mmm, bias 7, max 448 = 0x7E, NaN 0x7F/0xFF only, no Inf (numerics.md §1).
  e4m3: Object.freeze({
    name: "e4m3",
    bits: 8,
    exponentBits: 4,
    mantissaBits: 3,
    bias: 7,
    hasSign: true,
    hasInfinity: false,
    nan: "all_ones",
    hasZero: true,
    maxFiniteCode: 0x7e,
    allOnesCode: 0x7f,
    infinityCode: null,
  }),
  // E5M2: IEEE-like, bias 15, max 57344 = 0x7B, Inf 0x7C, NaN 0x7D–0x7F (numerics.md §1).
  e5m2: Object.freeze({
    name: "e5m2",
    bits: 8,
    exponentBits: 5,
    mantissaBits: 2,
    bias: 15,
    hasSign: true,
    hasInfinity: true,
    nan: "ieee",
    hasZero: true,
    maxFiniteCode: 0x7b,
    allOnesCode: 0x7f,
    infinityCode: 0x7c,
  }),
  // E2M1 (fp4): s.ee.m, bias 1, magnitudes 0, 0.5, 1, 1.5, 2, 3, 4, 6; no Inf, no NaN (numerics.md §1).
  e2m1: Object.freeze({
    name: "e2m1",
    bits: 4,
    exponentBits: 2,
    mantissaBits: 1,
    bias: 1,
    hasSign: true,
    hasInfinity: false,
    nan: "none",
    hasZero: true,
    maxFiniteCode: 0x7,
    allOnesCode: 0x7,
    infinityCode: null,
  }),
  // UE8M0 (E8M0 "fnu"): 2^(c−127), 0x00 = 2^-127, 0xFF NaN, no sign, no zero (numerics.md §1).
  ue8m0: Object.freeze({
    name: "ue8m0",
    bits: 8,
    exponentBits: 8,
    mantissaBits: 0,
    bias: 127,
    hasSign: false,
    hasInfinity: false,
    nan: "all_ones",
    hasZero: false,
    maxFiniteCode: 0xfe,
    allOnesCode: 0xff,
    infinityCode: null,
  }),
  // BF16: the top half of fp32 (numerics.md §1).
  bf16: Object.freeze({
    name: "bf16",
    bits: 16,
    exponentBits: 8,
    mantissaBits: 7,
    bias: 127,
    hasSign: true,
    hasInfinity: true,
    nan: "ieee",
    hasZero: true,
    maxFiniteCode: 0x7f7f,
    allOnesCode: 0x7fff,
    infinityCode: 0x7f80,
  }),
  // FP16: IEEE binary16 (numerics.md §1).
  fp16: Object.freeze({
    name: "fp16",
    bits: 16,
    exponentBits: 5,
    mantissaBits: 10,
    bias: 15,
    hasSign: true,
    hasInfinity: true,
    nan: "ieee",
    hasZero: true,
    maxFiniteCode: 0x7bff,
    allOnesCode: 0x7fff,
    infinityCode: 0x7c00,
  }),
  // FP32: IEEE binary32, the input format of every encoder.
  f32: Object.freeze({
    name: "f32",
    bits: 32,
    exponentBits: 8,
    mantissaBits: 23,
    bias: 127,
    hasSign: true,
    hasInfinity: true,
    nan: "ieee",
    hasZero: true,
    maxFiniteCode: 0x7f7fffff,
    allOnesCode: 0x7fffffff,
    infinityCode: 0x7f800000,
  }),
});

/** The format names, in table order. */
export const FORMAT_NAMES: readonly FormatName[] = Object.freeze(Object.keys(FORMATS) as FormatName[]);

/**
 * Looks a format up by name.
 *
 * @param name a format name such as `"e4m3"`
 * @returns its {@link FormatSpec}
 * @throws {TypeError} when `name` is not a string
 * @throws {RangeError} when the name is unknown; the message lists the valid names
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { formatSpec } from "./format_table.ts";
 * assert.equal(formatSpec("e5m2").bias, 15);
 * assert.throws(() => formatSpec("e3m4"), RangeError);
 * ```
 */
export function formatSpec(name: string): FormatSpec {
  return lookUp(FORMATS, FORMAT_NAMES, "format", name);
}
