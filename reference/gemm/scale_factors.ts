/**
 * Scale factors of the GEMM references: decoding fp32 or packed UE8M0 scale tensors to per-row values
 * (`deepgemm-ops.md` §3), SM100's power-of-two rule, and refusing a model that would ignore them.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Tensor } from "../tensor/tensor.ts";
 * import { decodeScales } from "./scale_factors.ts";
 * const sf = Tensor.from("f32", [1, 1], new Float32Array([4]));
 * assert.deepEqual([...decodeScales(sf, 2, 1, 128, "sfa", "demo")], [4, 4]); // two rows of one 128-row block
 * ```
 * @module
 */
import { pow2 } from "../formats/_pow2.ts";
import { f32Bits } from "../fp32.ts";
import { ceilDiv } from "../layout/tma_aligned.ts";
import { KERNEL_MODELS, type ResolvedModel } from "../kernel_models/kernel_models.ts";
import type { Tensor } from "../tensor/tensor.ts";
import { expectShape } from "./tensor_arguments.ts";

/**
 * Decodes a scale-factor tensor into per-row values: `out[r·sfk + g]` = the scale of row r (row r reads SF row
 * `floor(r / granMN)`) and K group g. fp32 tensors are read as values; int32 tensors as packed UE8M0 (byte j of word p
 * = group 4p + j, `deepgemm-ops.md` §3).
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Tensor } from "../tensor/tensor.ts";
 * import { decodeScales } from "./scale_factors.ts";
 * // 256 rows in 128-row blocks, one K group: rows 0–127 read SF row 0, rows 128–255 SF row 1.
 * const sf = Tensor.from("f32", [2, 1], new Float32Array([2, 0.5]));
 * const v = decodeScales(sf, 256, 1, 128, "sfb", "demo");
 * assert.deepEqual([v[0], v[127], v[128]], [2, 2, 0.5]);
 * // packed UE8M0: byte j of word p is K group 4p + j (0x7f = 1.0, 0x80 = 2.0)
 * const p = Tensor.from("i32", [1, 1], new Int32Array([0x807f]));
 * assert.deepEqual([...decodeScales(p, 1, 2, 1, "sfa", "demo")], [1, 2]);
 * ```
 */
export function decodeScales(
  sf: Tensor,
  rows: number,
  sfk: number,
  granMN: number,
  name: string,
  op: string,
): Float64Array {
  const out = new Float64Array(rows * sfk);
  const sfRows = ceilDiv(rows, granMN);
  if (sf.dtype === "f32") {
    expectShape(sf, [sfRows, sfk], name, op);
    for (let r = 0; r < rows; r++) {
      const sr = Math.floor(r / granMN);
      for (let g = 0; g < sfk; g++) out[r * sfk + g] = sf.at(sr, g);
    }
  } else if (sf.dtype === "i32") {
    if (granMN !== 1) throw new TypeError(`${op}: packed UE8M0 "${name}" needs a per-row recipe (gran_mn = 1)`);
    expectShape(sf, [rows, ceilDiv(sfk, 4)], name, op);
    for (let r = 0; r < rows; r++) {
      for (let g = 0; g < sfk; g++) {
        const byte = (sf.at(r, g >> 2) >>> (8 * (g & 3))) & 0xff;
        out[r * sfk + g] = byte === 0xff ? NaN : pow2(byte - 127);
      }
    }
  } else {
    throw new TypeError(`${op}: "${name}" must be f32 or packed UE8M0 i32, got ${sf.dtype}`);
  }
  return out;
}

/**
 * SM100 scales must be UE8M0 powers of two (the pack kernel traps otherwise, `deepgemm-ops.md` §3).
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { requirePowerOfTwoScales } from "./scale_factors.ts";
 * requirePowerOfTwoScales(new Float64Array([1, 0.25, 2 ** -127]), "sfa", "demo");
 * assert.throws(() => requirePowerOfTwoScales(new Float64Array([3]), "sfa", "demo"), RangeError);
 * ```
 */
export function requirePowerOfTwoScales(s: Float64Array, name: string, op: string): void {
  for (let i = 0; i < s.length; i++) {
    const v = s[i];
    if (v !== v) continue;
    const b = f32Bits(v);
    if ((b & 0x807fffff) !== 0 && v !== 2 ** -127) {
      throw new RangeError(`${op}: "${name}" value ${v} is not a positive power of two (SM100 needs UE8M0 scales)`);
    }
  }
}

/**
 * Refuses a model that applies no scale factors (`cublaslt`, `bf16`: `scales: "none"`) for an op given fine-grained
 * scales: it would return unscaled products while the scale tensors are silently ignored.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { resolveModel } from "../kernel_models/kernel_models.ts";
 * import { requireScaledModel } from "./scale_factors.ts";
 * requireScaledModel(resolveModel({ model: "sm90_1d2d" }), "fp8_gemm_nt");
 * assert.throws(() => requireScaledModel(resolveModel({ model: "cublaslt" }), "fp8_gemm_nt"), /applies no scale factors/);
 * ```
 */
export function requireScaledModel(model: ResolvedModel, op: string): void {
  if (model.scales === "none") {
    throw new TypeError(
      `${op}: model ${model.name} applies no scale factors, so sfa and sfb would be ignored; use a model with ` +
        `fine-grained scales (${
          Object.values(KERNEL_MODELS).filter((m) => m.scales !== "none").map((m) => m.name).join(", ")
        })`,
    );
  }
}
