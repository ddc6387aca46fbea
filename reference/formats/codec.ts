/**
 * The generic minifloat codec: one decoder and one encoder for every format of the format table, driven by the
 * format's traits and by {@link EncodeOptions} (rounding mode, overflow policy, NaN spelling, ...). All encoding
 * is integer arithmetic on fp32 bit patterns (`numerics.md` §2 and §10): no floating-point shortcut decides a bit.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { decode, encode } from "./codec.ts";
 * assert.equal(decode("e4m3", 0x7e), 448);
 * // 464 is the tie between 448 and the non-existent 480: RNE keeps 448 (numerics.md §2)
 * assert.equal(encode("e4m3", 0x43e80000, { rounding: "rne", overflow: "nan" }), 0x7e);
 * ```
 * @module
 */

import { type FormatName, type FormatSpec, formatSpec } from "./format_table.ts";
import { pow2 } from "./_pow2.ts";
import { f32FromBits } from "../fp32.ts";
import { describeValue } from "../describe.ts";

/**
 * Rounding modes:
 * `rne` nearest, ties to even (the even significand: with no fraction bits, as in UE8M0, every significand is 1, so
 * ties round up, as ml_dtypes and torch do, numerics.md §3.4); `rna` nearest, ties away from zero (microxcaling "nearest", §7);
 * `rnz` nearest, ties toward zero (DeepGEMM's strict-greater fp4 thresholds, deepgemm-ops.md §2.8);
 * `rz` toward zero; `ru` toward +∞; `rd` toward −∞.
 */
export type Rounding = "rne" | "rna" | "rnz" | "rz" | "ru" | "rd";

/** The valid {@link Rounding} names. */
export const ROUNDINGS: readonly Rounding[] = Object.freeze(["rne", "rna", "rnz", "rz", "ru", "rd"]);

/**
 * What a result beyond the largest finite value becomes: `nan` (the all-ones code, sign kept), `inf` (±Inf; only
 * for formats that have it), `saturate` (±max finite).
 */
export type OverflowPolicy = "nan" | "inf" | "saturate";

/**
 * How NaN inputs are written.
 * - `code`: the magnitude code written (default: the format's all-ones code);
 * - `sign`: `keep` ORs the input's sign bit in, `fixed` writes `code` as is, `xor` flips `code`'s sign bit when the
 *   input is negative (ml_dtypes fp4: +NaN → 0x8, −NaN → 0x0, numerics.md §3.3);
 * - `payload`: for IEEE formats, `truncate` keeps the top fraction bits of the fp32 payload (a zero result becomes 1,
 *   as numpy's float16 cast does), `truncate_quiet` also sets the quiet bit (x86 F16C, torch CPU fp16); default: none;
 * - `custom`: a function of the fp32 bits that returns the code (a library whose NaN result depends on the payload).
 */
export interface NanOutput {
  /** The magnitude code written (default: the format's all-ones code). */
  readonly code?: number;
  /** How the sign is written: `keep`, `fixed` or `xor` (above). */
  readonly sign?: "keep" | "fixed" | "xor";
  /** For IEEE formats, what of the fp32 payload is kept (above); default none. */
  readonly payload?: "truncate" | "truncate_quiet";
  /** The code as a function of the fp32 bits (a library whose NaN result depends on the payload). */
  readonly custom?: (fp32Bits: number) => number;
}

/** Options of the generic encoder. Only `rounding` and `overflow` are required. */
export interface EncodeOptions {
  /** The rounding mode. */
  readonly rounding: Rounding;
  /**
   * Policy for finite inputs whose rounded magnitude exceeds the largest finite value. As in IEEE 754 §7.4, a
   * rounding direction toward zero for the input's sign (`rz`; `rd` for x > 0; `ru` for x < 0) gives ±max finite
   * whatever the policy.
   */
  readonly overflow: OverflowPolicy;
  /** Policy for ±Inf inputs (default: the same as `overflow`). */
  readonly infinity?: OverflowPolicy;
  /** How NaN inputs are written (default: all-ones code, sign kept; required for formats without NaN). */
  readonly nan?: NanOutput;
  /** `positive` never writes −0 (a negative input that rounds to zero gives +0). Default `keep`. */
  readonly negativeZero?: "keep" | "positive";
  /** Formats without zero (UE8M0): ±0 input gives `nan` (the NaN code) or `min` (code 0x00 = 2^-127). Default `nan`. */
  readonly zero?: "nan" | "min";
  /** Unsigned formats (UE8M0): a negative input gives `nan` or encodes `abs`(x). Default `nan`. */
  readonly negative?: "nan" | "abs";
  /**
   * Formats without zero (UE8M0), below the smallest normal fp32 2^-126: `format` rounds to the format's own values
   * (2^-127, 2^-126); `ieee_subnormal` rounds on the grid {0, 2^-126} as if exponent field 0 held IEEE subnormals,
   * then reads code 0 as 2^-127 — what ml_dtypes and torch do (any x > 2^-127 goes to 2^-126, numerics.md §3.4).
   * Default `format`.
   */
  readonly underflowGrid?: "format" | "ieee_subnormal";
}

/** An encoder: fp32 bit pattern in (any 32-bit integer, read as unsigned), code out. */
export type Encoder = (fp32Bits: number) => number;

const ROUNDING_ID: Readonly<Record<Rounding, number>> = { rne: 0, rna: 1, rnz: 2, rz: 3, ru: 4, rd: 5 };
const POLICIES: readonly OverflowPolicy[] = ["nan", "inf", "saturate"];

function checkOneOf(what: string, value: unknown, valid: readonly string[]): void {
  if (typeof value !== "string" || !valid.includes(value)) {
    throw new RangeError(`Cannot build encoder: ${what} ${describeValue(value)} is not one of ${valid.join(", ")}`);
  }
}

function checkPolicy(spec: FormatSpec, what: string, policy: OverflowPolicy): void {
  checkOneOf(what, policy, POLICIES);
  if (policy === "inf" && !spec.hasInfinity) {
    throw new RangeError(
      `Cannot build encoder: format "${spec.name}" has no infinity; ${what} must be "nan" or "saturate"`,
    );
  }
  if (policy === "nan" && spec.nan === "none") {
    throw new RangeError(`Cannot build encoder: format "${spec.name}" has no NaN; ${what} must be "saturate"`);
  }
}

/**
 * Builds a specialised encoder closure for one format and one set of options (validated once, here).
 *
 * @param format a format name
 * @param options the encoding rules
 * @returns a function from fp32 bits to the code
 * @throws {RangeError} for an unknown format, rounding mode or policy, or a policy the format cannot express
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { encoderFor } from "./codec.ts";
 * const satfinite = encoderFor("e4m3", { rounding: "rne", overflow: "saturate" });
 * assert.equal(satfinite(0x7f800000), 0x7e); // +Inf → 448 (numerics.md §3.1)
 * ```
 */
export function encoderFor(format: FormatName, options: EncodeOptions): Encoder {
  const spec = formatSpec(format);
  if (options === null || typeof options !== "object") {
    throw new TypeError(`Cannot build encoder for "${format}": options must be an object`);
  }
  checkOneOf("rounding mode", options.rounding, ROUNDINGS);
  const overflow = options.overflow;
  checkPolicy(spec, "overflow policy", overflow);
  const infinity = options.infinity ?? overflow;
  checkPolicy(spec, "infinity policy", infinity);
  const negativeZero = options.negativeZero ?? "keep";
  checkOneOf("negativeZero", negativeZero, ["keep", "positive"]);
  const zeroRule = options.zero ?? "nan";
  checkOneOf("zero", zeroRule, ["nan", "min"]);
  const negativeRule = options.negative ?? "nan";
  checkOneOf("negative", negativeRule, ["nan", "abs"]);
  const grid = options.underflowGrid ?? "format";
  checkOneOf("underflowGrid", grid, ["format", "ieee_subnormal"]);

  const M = spec.mantissaBits;
  const bias = spec.bias;
  const signed = spec.hasSign;
  const signBit = signed ? 2 ** (spec.bits - 1) : 0; // 2^31 for f32: combined with + below, not |
  const implicit = 2 ** M;
  const maxFinite = spec.maxFiniteCode;
  const allOnes = spec.allOnesCode;
  const emin = spec.hasZero || grid === "ieee_subnormal" ? 1 - bias : -bias;
  const mode = ROUNDING_ID[options.rounding];
  const dropNegZero = negativeZero === "positive";
  const nanOut = makeNanWriter(spec, options.nan);

  const policyCode = (policy: OverflowPolicy, s: number): number => {
    const mag = policy === "saturate" ? maxFinite : policy === "inf" ? spec.infinityCode! : allOnes;
    return s ? signBit + mag : mag;
  };
  const infPos = policyCode(infinity, 0), infNeg = policyCode(infinity, 1);
  const ovfPos = policyCode(overflow, 0), ovfNeg = policyCode(overflow, 1);
  const maxNeg = signBit + maxFinite;

  return (fp32Bits: number): number => {
    const u = fp32Bits >>> 0;
    let s = u >>> 31;
    const a = u & 0x7fffffff;
    if (a > 0x7f800000) return nanOut(u);
    if (!signed && s === 1) {
      if (a === 0 || negativeRule === "abs") s = 0;
      else return allOnes;
    }
    if (a === 0) {
      if (!spec.hasZero) return zeroRule === "min" ? 0 : allOnes;
      return s && !dropNegZero ? signBit : 0;
    }
    if (a === 0x7f800000) return s ? infNeg : infPos;

    // x = sig · 2^e0 exactly (numerics.md §2).
    let sig: number, e0: number;
    if (a >= 0x00800000) {
      sig = (a & 0x7fffff) | 0x800000;
      e0 = (a >>> 23) - 150;
    } else {
      sig = a;
      e0 = -149;
    }
    const msb = 31 - Math.clz32(sig) + e0;
    let lsb = (msb > emin ? msb : emin) - M; // weight of the target's last fraction bit
    const shift = lsb - e0; // ≥ 0 for every format of the table (none is wider than fp32)
    let q: number;
    let up = 0;
    if (shift === 0) {
      q = sig;
    } else {
      let cmp: number; // sign of (dropped part − half an ulp); 0 = exact tie
      let inexact: boolean;
      if (shift > 25) {
        q = 0;
        cmp = -1;
        inexact = true;
      } else {
        q = sig >>> shift;
        const rem = sig & ((1 << shift) - 1);
        const half = 1 << (shift - 1);
        cmp = rem > half ? 1 : rem === half ? 0 : -1;
        inexact = rem !== 0;
      }
      switch (mode) {
        case 0: // rne
          up = cmp > 0 || (cmp === 0 && (q & 1) === 1) ? 1 : 0;
          break;
        case 1: // rna
          up = cmp >= 0 ? 1 : 0;
          break;
        case 2: // rnz
          up = cmp > 0 ? 1 : 0;
          break;
        case 3: // rz
          break;
        case 4: // ru
          up = inexact && s === 0 ? 1 : 0;
          break;
        default: // rd
          up = inexact && s === 1 ? 1 : 0;
      }
      q += up;
      if (q === 2 * implicit) { // carry into the next binade
        q = implicit;
        lsb += 1;
      }
    }
    let code: number;
    if (q < implicit) {
      code = q; // subnormal or zero (for UE8M0: 0x00 = 2^-127, the smallest value)
      if (q === 0 && spec.hasZero) return s && !dropNegZero ? signBit : 0;
    } else {
      code = (lsb + M + bias) * implicit + (q - implicit);
    }
    if (code > maxFinite) {
      // IEEE 754 §7.4: rounding toward zero never overflows to infinity; it gives max finite.
      const towardZero = mode === 3 || (mode === 4 && s === 1) || (mode === 5 && s === 0);
      if (towardZero) return s ? maxNeg : maxFinite;
      return s ? ovfNeg : ovfPos;
    }
    return s ? signBit + code : code;
  };
}

function makeNanWriter(spec: FormatSpec, nan: NanOutput | undefined): Encoder {
  if (nan?.custom) {
    const f = nan.custom;
    return (u) => f(u >>> 0);
  }
  const signBit = spec.hasSign ? 2 ** (spec.bits - 1) : 0;
  if (nan === undefined && spec.nan === "none") {
    return () => {
      throw new RangeError(`Cannot encode NaN: format "${spec.name}" has no NaN code; give options.nan`);
    };
  }
  const sign = nan?.sign ?? "keep";
  checkOneOf("nan.sign", sign, ["keep", "fixed", "xor"]);
  const payload = nan?.payload ?? (spec.name === "f32" ? "truncate" : undefined);
  const M = spec.mantissaBits;
  if (payload !== undefined) {
    checkOneOf("nan.payload", payload, ["truncate", "truncate_quiet"]);
    if (spec.nan !== "ieee") {
      throw new RangeError(`Cannot build encoder: NaN payloads need an IEEE format, not "${spec.name}"`);
    }
    const expOnes = (2 ** spec.exponentBits - 1) * 2 ** M;
    const quiet = payload === "truncate_quiet" ? 2 ** (M - 1) : 0;
    return (u) => {
      let m = Math.floor((u & 0x7fffff) / 2 ** (23 - M));
      if (quiet) m |= quiet;
      else if (m === 0) m = 1; // keep it a NaN (numpy float16: 0x7F800001 → 0x7C01, numerics.md §3.5)
      const code = expOnes + m;
      return sign === "keep" && u >>> 31 ? signBit + code : code;
    };
  }
  const code = nan?.code ?? spec.allOnesCode;
  if (!Number.isInteger(code) || code < 0 || code >= 2 ** spec.bits) {
    throw new RangeError(`Cannot build encoder: NaN code ${code} does not fit format "${spec.name}"`);
  }
  if (sign === "fixed" || !spec.hasSign) return () => code;
  if (sign === "xor") return (u) => (u >>> 31 ? (code ^ signBit) >>> 0 : code);
  return (u) => (u >>> 31 ? (code | signBit) >>> 0 : code);
}

const ENCODER_CACHE = new WeakMap<EncodeOptions, Map<FormatName, Encoder>>();

/**
 * Encodes one fp32 bit pattern into `format` under `options` (the encoder closure is cached per options object).
 *
 * @param format a format name
 * @param fp32Bits the input as fp32 bits (read as an unsigned 32-bit integer)
 * @param options the rounding mode, overflow policy and special-value rules
 * @returns the code
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { encode } from "./codec.ts";
 * assert.equal(encode("e2m1", 0x3f400000, { rounding: "rne", overflow: "saturate" }), 0x2); // 0.75 → 1.0
 * assert.equal(encode("e2m1", 0x3f400000, { rounding: "rz", overflow: "saturate" }), 0x1); // 0.75 → 0.5
 * ```
 */
export function encode(format: FormatName, fp32Bits: number, options: EncodeOptions): number {
  if (typeof fp32Bits !== "number" || !Number.isInteger(fp32Bits)) {
    throw new TypeError(`Cannot encode: fp32 bits must be an integer, got ${describeValue(fp32Bits)}`);
  }
  let byFormat = ENCODER_CACHE.get(options);
  if (!byFormat) {
    byFormat = new Map();
    if (options !== null && typeof options === "object") ENCODER_CACHE.set(options, byFormat);
  }
  let enc = byFormat.get(format);
  if (!enc) {
    enc = encoderFor(format, options);
    byFormat.set(format, enc);
  }
  return enc(fp32Bits);
}

function checkCode(spec: FormatSpec, code: number): void {
  if (typeof code !== "number") throw new TypeError(`Cannot decode: code must be a number, got ${typeof code}`);
  if (!Number.isInteger(code) || code < 0 || code >= 2 ** spec.bits) {
    throw new RangeError(
      `Cannot decode ${code}: format "${spec.name}" codes are integers in [0, ${2 ** spec.bits - 1}]`,
    );
  }
}

/**
 * Whether `code` is a NaN code of `format`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { isNanCode } from "./codec.ts";
 * assert.equal(isNanCode("e4m3", 0xff), true);
 * assert.equal(isNanCode("e5m2", 0x7c), false); // +Inf
 * ```
 */
export function isNanCode(format: FormatName, code: number): boolean {
  const spec = formatSpec(format);
  checkCode(spec, code);
  const mag = spec.hasSign ? code % 2 ** (spec.bits - 1) : code;
  if (spec.nan === "none") return false;
  if (spec.nan === "all_ones") return mag === spec.allOnesCode;
  return mag > spec.infinityCode!;
}

/**
 * The exact value of a code: `e == 0 ? m·2^(1−bias−M) : (1 + m/2^M)·2^(e−bias)` (numerics.md §1), with NaN for NaN
 * codes, ±Infinity for infinities and 2^(c−127) for UE8M0 (whose 0x00 is 2^-127, not zero).
 *
 * @param format a format name
 * @param code an integer in [0, 2^bits)
 * @returns the value as a JavaScript number (every value of every format is exact in binary64)
 * @throws {RangeError} for an unknown format or a code out of range
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { decode } from "./codec.ts";
 * assert.equal(decode("e2m1", 0xf), -6);
 * assert.equal(decode("ue8m0", 0x00), 2 ** -127);
 * assert.ok(Number.isNaN(decode("ue8m0", 0xff)));
 * ```
 */
export function decode(format: FormatName, code: number): number {
  const spec = formatSpec(format);
  checkCode(spec, code);
  if (spec.name === "f32") return f32FromBits(code);
  const M = spec.mantissaBits;
  const magBits = spec.exponentBits + M;
  const negative = spec.hasSign && code >= 2 ** magBits;
  const mag = negative ? code - 2 ** magBits : code;
  const e = Math.floor(mag / 2 ** M);
  const m = mag % 2 ** M;
  const eMax = 2 ** spec.exponentBits - 1;
  let v: number;
  if (spec.nan === "all_ones" && mag === spec.allOnesCode) return NaN;
  if (spec.nan === "ieee" && e === eMax) {
    if (m !== 0) return NaN;
    v = Infinity;
  } else if (e === 0 && spec.hasZero) {
    v = m * pow2(1 - spec.bias - M);
  } else {
    v = (2 ** M + m) * pow2(e - spec.bias - M);
  }
  return negative ? -v : v;
}
