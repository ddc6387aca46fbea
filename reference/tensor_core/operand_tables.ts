/**
 * Operands as the fused dot-add sees them: each code's value and its MMA-Sim exponent.
 *
 * MMA-Sim (`arithmetic.py`, `extract_significand_exponent`; `numerics.md` §8.1) writes an operand as `s·2^e` with
 * `1 ≤ |s| < 2`, clamps `e` to the format's minimum normal exponent (subnormals get `|s| < 1`) and gives **zero the
 * exponent −126 whatever the format**. A product term's exponent is `e_a + e_b`; its value is exactly `v_a·v_b`.
 * Tables are built once per format from the decode table of `reference/formats/` and cached.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { mmaExponent, operandTable } from "./operand_tables.ts";
 * const t = operandTable("e4m3");
 * assert.equal(t.values[0x01], 2 ** -9); // smallest subnormal
 * assert.equal(t.exps[0x01], -6);        // clamped to the minimum normal exponent
 * assert.equal(t.exps[0x00], -126);      // zero
 * assert.equal(mmaExponent(2 ** -130, -126), -126);
 * ```
 * @module
 */
import { decodeTable } from "../formats/batch.ts";

/** Operand formats a tensor-core step understands (tensor dtype spelling; `f32` is decomposed on the fly). */
export type OperandFormat = "e4m3" | "e5m2" | "e2m1" | "bf16" | "f16";

/** Per-code value and exponent of one operand format. */
export interface OperandTable {
  /** The format. */
  readonly format: OperandFormat;
  /** Value of every code (NaN codes → NaN, infinities → ±Infinity). */
  readonly values: Float64Array;
  /** MMA-Sim exponent of every code (zero → −126; non-finite codes → 0, never used by the finite path). */
  readonly exps: Int32Array;
  /** Minimum normal exponent (the clamp). */
  readonly minExp: number;
  /** Whether some code is NaN or infinite. */
  readonly hasSpecials: boolean;
}

/** Minimum normal exponent per format (`numerics.md` §1; MMA-Sim `dtype_min_exponent`). */
export const MIN_NORMAL_EXPONENT: Readonly<Record<OperandFormat | "f32", number>> = Object.freeze({
  e4m3: -6,
  e5m2: -14,
  e2m1: 0,
  bf16: -126,
  f16: -14,
  f32: -126,
});

const F64 = new Float64Array(1);
const U32 = new Uint32Array(F64.buffer);

/**
 * The exponent MMA-Sim assigns to a finite value: `floor(log2|x|)` from the binary64 bits, clamped below at
 * `minExp`; zero gets −126 (MMA-Sim's rule for every format).
 * @param x a finite value
 * @param minExp the format's minimum normal exponent
 * @returns the exponent
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { mmaExponent } from "./operand_tables.ts";
 * assert.equal(mmaExponent(3, -126), 1);
 * assert.equal(mmaExponent(-0.75, -126), -1);
 * assert.equal(mmaExponent(0, -6), -126);
 * ```
 */
export function mmaExponent(x: number, minExp: number): number {
  if (x === 0) return -126;
  F64[0] = x;
  const e = ((U32[1] >>> 20) & 0x7ff) - 1023; // a binary64 subnormal (never an operand here) gives −1023, below every clamp
  return e < minExp ? minExp : e;
}

const FORMAT_OF: Record<OperandFormat, string> = {
  e4m3: "e4m3",
  e5m2: "e5m2",
  e2m1: "e2m1",
  bf16: "bf16",
  f16: "fp16",
};
const cache = new Map<OperandFormat, OperandTable>();

/**
 * The cached operand table of a format.
 * @param format an operand format
 * @returns values and exponents of every code
 * @throws RangeError for a format the tensor-core layer does not take as a table
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { operandTable } from "./operand_tables.ts";
 * assert.equal(operandTable("e2m1").values[0xf], -6);
 * assert.equal(operandTable("bf16").exps[0x3f80], 0);
 * ```
 */
export function operandTable(format: OperandFormat): OperandTable {
  const hit = cache.get(format);
  if (hit) return hit;
  if (!Object.hasOwn(FORMAT_OF, format)) {
    throw new RangeError(`No operand table for "${format}"; known: ${Object.keys(FORMAT_OF).join(", ")}`);
  }
  const dec = decodeTable(FORMAT_OF[format]);
  const minExp = MIN_NORMAL_EXPONENT[format];
  const values = new Float64Array(dec.length);
  const exps = new Int32Array(dec.length);
  let hasSpecials = false;
  for (let c = 0; c < dec.length; c++) {
    const v = dec[c];
    values[c] = v;
    if (Number.isFinite(v)) exps[c] = mmaExponent(v, minExp);
    else hasSpecials = true;
  }
  const t: OperandTable = Object.freeze({ format, values, exps, minExp, hasSpecials });
  cache.set(format, t);
  return t;
}
