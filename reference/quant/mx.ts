/**
 * OCP Microscaling (MX) block quantization (numerics.md §5): blocks of 32 elements along the last dimension share one
 * E8M0 scale; elements are MXFP8 (E4M3 or E5M2) or MXFP4 (E2M1). Follows torchao's `to_mx` operation by operation
 * (numerics.md §5.2), with its four scale rules:
 * - `floor` (OCP MX v1.0 Algorithm 1, torchao FLOOR): `biased_exp(amax) − 127 − emax_elem`;
 * - `ceil`: one more when amax's mantissa ≠ 0 (`2^ceil(log2 amax) / 2^emax`);
 * - `even`: amax first rounded to the element's mantissa width (`(bits + 2^(22−mbits)) & 0xFF800000`), then floor;
 * - `rceil` (NVIDIA/cuBLAS): `descale = fl32(amax · fl32(1/max_elem))`, rounded up to a power of two on its bits.
 * floor/ceil/even clamp the unbiased exponent to [−127, 128] and add 127; a non-finite amax gives 0xFF (NaN).
 * Elements: `fl32(x · 2^−scale)` (the reciprocal built exactly from the code; 0xFF → NaN), then for floor/ceil/even
 * clamped to ±max for E5M2 and for E4M3 (torchao does so before PyTorch 2.13, whose eager E4M3 cast does not
 * saturate), then `.to(float8)` (profile `torch_2_11`) or `f32_to_f4_unpacked` (profile `torchao_f4`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Tensor } from "../tensor/tensor.ts";
 * import { mxQuantize } from "./mx.ts";
 * // numerics.md §5.3: V = [7, −3.3, 0.9, 0.26, −0.24, 2.5, 1.25, 0, ...] as MXFP4
 * const v = new Float32Array(32);
 * v.set([7, -3.3, 0.9, 0.26, -0.24, 2.5, 1.25, 0]);
 * const x = Tensor.from("f32", [1, 32], v);
 * const floor = mxQuantize(x, { elem: "e2m1", scaleRule: "floor" });
 * assert.equal(floor.sf.at(0, 0), 0x7f);
 * assert.deepEqual([...(floor.codes.data as Uint8Array).subarray(0, 8)], [7, 0xd, 2, 1, 8, 4, 2, 0]);
 * const rceil = mxQuantize(x, { elem: "e2m1", scaleRule: "rceil" });
 * assert.equal(rceil.sf.at(0, 0), 0x80);
 * assert.deepEqual([...(rceil.codes.data as Uint8Array).subarray(0, 8)], [6, 0xb, 1, 0, 8, 2, 1, 0]);
 * ```
 * @module
 */
import { f32FromBits } from "../fp32.ts";
import { Tensor } from "../tensor/tensor.ts";
import { toFloat32 } from "../tensor/values.ts";
import { encodeBits, fastEncoder } from "./_fast_encode.ts";
import { productNanBits } from "./_group_quant.ts";
import { checkSemantics, type Semantics } from "./scalar_division.ts";
import { describeValue } from "../describe.ts";

/** MX element formats. */
export type MxElement = "e4m3" | "e5m2" | "e2m1";

/** MX scale rules (torchao's ScaleCalculationMode names). */
export type MxScaleRule = "floor" | "ceil" | "even" | "rceil";

/** The valid scale rules. */
export const MX_SCALE_RULES: readonly MxScaleRule[] = Object.freeze(["floor", "ceil", "even", "rceil"]);

/** Per element format: emax (exponent of the largest normal), mantissa bits, largest finite value (§5.1). */
export const MX_ELEMENTS: Readonly<Record<MxElement, { emax: number; mbits: number; max: number }>> = Object.freeze({
  e4m3: { emax: 8, mbits: 3, max: 448 },
  e5m2: { emax: 15, mbits: 2, max: 57344 },
  e2m1: { emax: 2, mbits: 1, max: 6 },
});

function checkElement(fn: string, elem: unknown): MxElement {
  if (elem !== "e4m3" && elem !== "e5m2" && elem !== "e2m1") {
    throw new RangeError(`${fn}: element format ${describeValue(elem)} is not e4m3, e5m2 or e2m1`);
  }
  return elem;
}

function checkRule(fn: string, rule: unknown): MxScaleRule {
  if (!MX_SCALE_RULES.includes(rule as MxScaleRule)) {
    throw new RangeError(`${fn}: scale rule ${describeValue(rule)} is not one of ${MX_SCALE_RULES.join(", ")}`);
  }
  return rule as MxScaleRule;
}

const F = new Float32Array(1);
const U = new Uint32Array(F.buffer);

/**
 * The E8M0 scale code of one block from its amax (fp32 bits), by torchao's rule.
 *
 * @param amaxBits fp32 bits of max |x| over the block (NaN if the block has a NaN)
 * @param elem element format
 * @param rule scale rule
 * @returns the biased E8M0 code (0xFF = NaN)
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { mxScaleCode } from "./mx.ts";
 * // numerics.md §5.3: amax 448 with E4M3 → FLOOR 0x7F, CEIL 0x80, EVEN 0x7F, RCEIL 0x7F
 * assert.deepEqual(["floor", "ceil", "even", "rceil"].map((r) => mxScaleCode(0x43e00000, "e4m3", r as "floor")), [0x7f, 0x80, 0x7f, 0x7f]);
 * ```
 */
export function mxScaleCode(amaxBits: number, elem: MxElement, rule: MxScaleRule): number {
  const fn = "mxScaleCode";
  const e = MX_ELEMENTS[checkElement(fn, elem)];
  checkRule(fn, rule);
  amaxBits >>>= 0;
  if (rule === "rceil") {
    // _to_mx_rceil: descale = max_abs * (1.0 / max_pos), then _f32_to_e8m0_rceil
    F[0] = f32FromBits(amaxBits) * Math.fround(1 / e.max);
    const b = U[0];
    if ((b & 0x7f800000) === 0x7f800000) return 0xff; // NaN, Inf
    const exp = (b >>> 23) & 0xff, man = b & 0x7fffff;
    const up = exp === 0 ? man > 0x400000 : man !== 0;
    return exp + (up ? 1 : 0);
  }
  let bits = amaxBits;
  if (rule === "even") {
    // (max_abs + (1 << (23 - mbits - 1))) & 0xFF800000 on the int32 view; a NaN amax stays NaN
    if ((bits & 0x7fffffff) <= 0x7f800000) bits = ((bits + (1 << (22 - e.mbits))) & 0xff800000) >>> 0;
  }
  if ((bits & 0x7f800000) === 0x7f800000) return 0xff; // not finite (checked on the possibly rounded amax)
  let exp = ((bits >>> 23) & 0xff) - 127;
  if (rule === "ceil" && (bits & 0x7fffff) !== 0) exp += 1;
  let unbiased = exp - e.emax;
  if (unbiased < -127) unbiased = -127;
  else if (unbiased > 128) unbiased = 128;
  return (unbiased + 127) & 0xff;
}

/**
 * The fp32 reciprocal torchao multiplies by (`_e8m0_scale_to_reciprocal_fp32`): bits `(254 − code) << 23`, code 254 →
 * 2^-127 (0x00400000), code 255 → NaN.
 *
 * @param code E8M0 code
 * @returns 2^(127 − code) as fp32 (NaN for 0xFF)
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { mxReciprocal } from "./mx.ts";
 * assert.equal(mxReciprocal(0x7f), 1);
 * assert.equal(mxReciprocal(254), 2 ** -127);
 * assert.equal(mxReciprocal(0), 2 ** 127);
 * ```
 */
export function mxReciprocal(code: number): number {
  const r = (254 - code) & 0xff;
  if (r === 255) return NaN;
  return f32FromBits(r === 0 ? 0x00400000 : r << 23);
}

/** Options of {@link mxQuantize}. */
export interface MxOptions {
  /** Element format. */
  readonly elem: MxElement;
  /** Scale rule (default `floor`, torchao's default and the OCP algorithm). */
  readonly scaleRule?: MxScaleRule;
  /** Block size along the last dimension (default 32). */
  readonly blockSize?: number;
  /** Element conversion profile (default `torch_2_11` for E4M3/E5M2, `torchao_f4` for E2M1). */
  readonly elementProfile?: string;
  /** NaN spelling of products (`gpu` default). */
  readonly semantics?: Semantics;
}

/** Codes and E8M0 scales. */
export interface MxResult {
  /** Element codes (`e4m3`, `e5m2` or unpacked `e2m1`), the shape of the input. */
  readonly codes: Tensor;
  /** E8M0 scale codes `[..., n / blockSize]` (dtype `ue8m0`). */
  readonly sf: Tensor;
}

/**
 * MX block quantization of a float tensor along its last dimension.
 *
 * @param x float tensor, last dimension a multiple of the block size
 * @param opts {@link MxOptions}
 * @returns {@link MxResult}
 * @throws {TypeError} for a non-tensor or rank 0
 * @throws {RangeError} for an unknown element format / rule or a last dimension not divisible by the block size
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Tensor } from "../tensor/tensor.ts";
 * import { mxQuantize } from "./mx.ts";
 * const r = mxQuantize(Tensor.zeros("bf16", [2, 64]), { elem: "e4m3" });
 * assert.deepEqual(r.sf.shape, [2, 2]);
 * assert.equal(r.sf.at(1, 1), 0); // amax 0 → code 0x00 under every rule (numerics.md §5.3)
 * ```
 */
export function mxQuantize(x: Tensor, opts: MxOptions): MxResult {
  const fn = "mxQuantize";
  if (!(x instanceof Tensor) || x.ndim < 1) throw new TypeError(`${fn}: x must be a tensor of rank ≥ 1`);
  if (opts === null || typeof opts !== "object") throw new TypeError(`${fn}: options { elem, scaleRule } are required`);
  const elem = checkElement(fn, opts.elem);
  const rule = checkRule(fn, opts.scaleRule ?? "floor");
  const bs = opts.blockSize ?? 32;
  if (!Number.isSafeInteger(bs) || bs <= 0) throw new RangeError(`${fn}: blockSize ${bs} must be a positive integer`);
  const n = x.shape[x.ndim - 1];
  if (n % bs !== 0) throw new RangeError(`${fn}: the last dimension ${n} is not a multiple of the block size ${bs}`);
  const semantics = checkSemantics(opts.semantics, fn);
  const profile = opts.elementProfile ?? (elem === "e2m1" ? "torchao_f4" : "torch_2_11");
  const enc = fastEncoder(profile, elem);
  const { max } = MX_ELEMENTS[elem];
  const clampFirst = rule !== "rceil" && elem !== "e2m1"; // torchao: E5M2 always, E4M3 before torch 2.13
  const vals = toFloat32(x);
  const valsU = new Uint32Array(vals.buffer);
  const nb = vals.length / bs;
  const sf = new Uint8Array(nb);
  const codes = new Uint8Array(vals.length);
  for (let b = 0; b < nb; b++) {
    let a = 0;
    for (let k = b * bs; k < (b + 1) * bs; k++) {
      const v = Math.abs(vals[k]);
      if (v > a || v !== v) a = v;
      if (a !== a) break;
    }
    F[0] = a;
    const code = mxScaleCode(U[0], elem, rule);
    sf[b] = code;
    const r = mxReciprocal(code);
    for (let k = b * bs; k < (b + 1) * bs; k++) {
      let p = Math.fround(vals[k] * r);
      if (clampFirst) p = p > max ? max : p < -max ? -max : p; // torch.clamp keeps NaN
      F[0] = p;
      let bits = U[0];
      if (p !== p) bits = productNanBits(semantics, valsU[k], r !== r);
      codes[k] = encodeBits(enc, bits);
    }
  }
  return {
    codes: Tensor.from(elem, x.shape, codes),
    sf: Tensor.from("ue8m0", [...x.shape.slice(0, -1), n / bs], sf),
  };
}
