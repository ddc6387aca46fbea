/**
 * An operand array decoded once for the tensor-core model: every code's value and MMA-Sim exponent
 * ({@link operandTable}), flattened, so the inner loops of a dot product only index. The indexer's scores and
 * Mega MoE's GEMMs decode their operands this way.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { decodeOperand } from "./decoded_operand.ts";
 * const a = decodeOperand("e4m3", [0x38, 0x40]);
 * assert.deepEqual([...a.v], [1, 2]);
 * assert.deepEqual([...a.e], [0, 1]);
 * assert.equal(decodeOperand("e2m1", [0x7]).v[0], 6);
 * ```
 * @module
 */
import { type OperandFormat, operandTable } from "./operand_tables.ts";

/** Decoded operand elements: the value and the MMA-Sim exponent of every code, flattened. */
export interface DecodedOperand {
  /** Element values. */
  readonly v: Float64Array;
  /** MMA-Sim exponents. */
  readonly e: Int32Array;
}

/**
 * Decodes a code array of an operand format (`e4m3`, `e5m2`, `e2m1` unpacked codes, `bf16` or `f16` bits).
 * @param format the operand format
 * @param codes the codes, one per element
 * @returns values and exponents, one per code
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { decodeOperand } from "./decoded_operand.ts";
 * assert.deepEqual([...decodeOperand("bf16", new Uint16Array([0x3f80, 0xc000])).v], [1, -2]);
 * ```
 */
export function decodeOperand(format: OperandFormat, codes: ArrayLike<number>): DecodedOperand {
  const t = operandTable(format);
  const v = new Float64Array(codes.length), e = new Int32Array(codes.length);
  for (let i = 0; i < codes.length; i++) {
    v[i] = t.values[codes[i]];
    e[i] = t.exps[codes[i]];
  }
  return { v, e };
}
