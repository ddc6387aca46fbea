/**
 * One output element under a resolved kernel model: the tensor-core segments, the promotion chain, split-K and the
 * epilogue, over decoded operand rows (values and MMA-Sim exponents, K-contiguous).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { makeElement } from "./element.ts";
 * import { resolveModel } from "./kernel_models.ts";
 * // numerics.md §8.2: A = [256, 0×31, 2^-6×224], B = ones, K = 256. Chained wgmma keeps 256; promotion every 128 gives 258.
 * const K = 256, av = new Float64Array(K), bv = new Float64Array(K).fill(1);
 * av[0] = 256; for (let k = 32; k < K; k++) av[k] = 2 ** -6;
 * const ae = new Int32Array(K).fill(-6), be = new Int32Array(K);
 * ae[0] = 8; for (let k = 1; k < 32; k++) ae[k] = -126;
 * const inp = { av, ae, bv, be, sfa: null, sfaExp: null, sfb: null, sfbExp: null, granK: 128 };
 * const chained = makeElement(resolveModel({ model: "cublaslt", promotion: "none", outDtype: "f32" }), "e4m3", "e4m3");
 * const promoted = makeElement(resolveModel({ model: "cublaslt", outDtype: "f32" }), "e4m3", "e4m3");
 * assert.equal(chained(inp, 0, 0, K, 0, 0, null), 256);
 * assert.equal(promoted(inp, 0, 0, K, 0, 0, null), 258);
 * ```
 * @module
 */
import { fma32 } from "../fp32.ts";
import { bf16Rne, bf16ToF32 } from "../fp32.ts";
import { ExactSum } from "../tensor_core/exact_sum.ts";
import { fusedStep, groupScaledStep, STEP_ROUNDINGS } from "../tensor_core/fused_dot_add.ts";
import { tensorCoreProfile } from "../tensor_core/profiles.ts";
import type { ResolvedModel } from "./kernel_models.ts";

/** Decoded operands of one evaluation (rows K-contiguous; scales per row and K group). */
export interface DotInputs {
  /** A values. */
  av: Float64Array;
  /** A MMA-Sim exponents. */
  ae: Int32Array;
  /** B values. */
  bv: Float64Array;
  /** B exponents. */
  be: Int32Array;
  /** A scale values (fp32 values) per (row, K group), or null without scales. */
  sfa: Float64Array | null;
  /** A scale exponents (only for in-unit scales), parallel to `sfa`. */
  sfaExp: Int32Array | null;
  /** B scale values per (column, K group), or null. */
  sfb: Float64Array | null;
  /** B scale exponents (only for in-unit scales). */
  sfbExp: Int32Array | null;
  /** K elements per scale group. */
  granK: number;
}

/**
 * The per-element function of a model: `(inputs, aOff, bOff, K, sfaOff, sfbOff, c) → output value` (a number
 * exactly representable in the output type; NaN for NaN). `c` is the C element's value or null without C.
 */
export type ElementFn = (
  inp: DotInputs,
  aOff: number,
  bOff: number,
  K: number,
  sfaOff: number,
  sfbOff: number,
  c: number | null,
) => number;

const FAST_EXACT = new Set(["e4m3", "e2m1"]);

/**
 * Rounds a number to the output type (RNE; bf16 with the GPU NaN rule).
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { roundOut } from "./element.ts";
 * assert.equal(roundOut(1 + 2 ** -9, "bf16"), 1);
 * assert.equal(roundOut(1 + 2 ** -9, "f32"), 1 + 2 ** -9);
 * ```
 */
export function roundOut(x: number, out: "bf16" | "f32"): number {
  return out === "bf16" ? bf16ToF32(bf16Rne(x)) : Math.fround(x);
}

/**
 * Builds the element function of a resolved model for given operand formats.
 * @param model the resolved model
 * @param aFormat A's operand format
 * @param bFormat B's operand format
 * @returns the element function
 * @throws RangeError when the tensor-core profile cannot take the model's scales
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { resolveModel } from "./kernel_models.ts";
 * import { makeElement } from "./element.ts";
 * const el = makeElement(resolveModel({ model: "exact", outDtype: "f32" }), "e4m3", "e4m3");
 * const inp = {
 *   av: new Float64Array([1, 2]), ae: new Int32Array([0, 1]),
 *   bv: new Float64Array([3, 0.5]), be: new Int32Array([1, -1]),
 *   sfa: null, sfaExp: null, sfb: null, sfbExp: null, granK: 128,
 * };
 * assert.equal(el(inp, 0, 0, 2, 0, 0, null), 4); // 1·3 + 2·0.5
 * assert.equal(el(inp, 0, 0, 2, 0, 0, 0.5), 4.5); // plus C
 * ```
 */
export function makeElement(model: ResolvedModel, aFormat: string, bFormat: string): ElementFn {
  const out = model.outDtype;
  if (model.epilogue === "exact") return makeExact(out, FAST_EXACT.has(aFormat) && FAST_EXACT.has(bFormat));
  const prof = tensorCoreProfile(model.tensorCore);
  const T = prof.termsPerStep;
  const n = prof.fractionBits;
  const inUnit = model.scales === "in_unit";
  if (inUnit && prof.blockScale === "none") {
    throw new RangeError(
      `Tensor-core profile "${prof.name}" takes no block scales; model "${model.name}" applies scales inside the unit`,
    );
  }
  const exactSeg = new ExactSum();
  // P of K range [k0, k1) from a zero accumulator.
  let segment: (inp: DotInputs, aOff: number, bOff: number, k0: number, k1: number, so: number, sb: number) => number;
  if (prof.output === "exact") {
    segment = (inp, aOff, bOff, k0, k1, sao, sbo) => {
      exactSeg.reset();
      for (let k = k0; k < k1; k++) {
        let p = inp.av[aOff + k] * inp.bv[bOff + k];
        if (inUnit && inp.sfa && inp.sfb) {
          const g = Math.floor(k / inp.granK);
          p *= inp.sfa[sao + g] * inp.sfb[sbo + g];
        }
        exactSeg.add(p);
      }
      return exactSeg.round(23, -126, 127);
    };
  } else if (prof.output === "fma_rne_f32") {
    segment = (inp, aOff, bOff, k0, k1) => {
      let acc = 0;
      for (let k = k0; k < k1; k++) acc = fma32(inp.av[aOff + k], inp.bv[bOff + k], acc);
      return acc;
    };
  } else if (prof.blockScale === "group16" && inUnit) {
    const sa = new Float64Array(4), sea = new Int32Array(4), sbv = new Float64Array(4), seb = new Int32Array(4);
    segment = (inp, aOff, bOff, k0, k1, sao, sbo) => {
      let acc = 0;
      for (let k = k0; k < k1; k += T) {
        const len = Math.min(T, k1 - k);
        for (let g = 0; g * 16 < len; g++) {
          const sg = Math.floor((k + g * 16) / inp.granK);
          sa[g] = inp.sfa![sao + sg];
          sea[g] = inp.sfaExp![sao + sg];
          sbv[g] = inp.sfb![sbo + sg];
          seb[g] = inp.sfbExp![sbo + sg];
        }
        acc = groupScaledStep(inp.av, aOff + k, inp.bv, bOff + k, len, acc, sa, sea, sbv, seb, n);
      }
      return acc;
    };
  } else {
    const r = STEP_ROUNDINGS[prof.output as "rz_f32" | "rz_e8m13" | "rne_f16"];
    segment = (inp, aOff, bOff, k0, k1, sao, sbo) => {
      let acc = 0;
      const { av, ae, bv, be } = inp;
      for (let k = k0; k < k1; k += T) {
        const len = k1 - k < T ? k1 - k : T;
        let xs = 0;
        if (inUnit && inp.sfaExp && inp.sfbExp) {
          const g = Math.floor(k / inp.granK);
          xs = inp.sfaExp[sao + g] + inp.sfbExp[sbo + g];
        }
        acc = fusedStep(av, ae, aOff + k, bv, be, bOff + k, len, acc, xs, n, r);
      }
      return acc;
    };
  }

  const promote = model.promotion;
  const scalesAtPromotion = model.scales === "promotion";
  const S = model.splitK;
  const part = (inp: DotInputs, aOff: number, bOff: number, k0: number, k1: number, sao: number, sbo: number) => {
    const hasScales = scalesAtPromotion && inp.sfa !== null && inp.sfb !== null;
    if (promote === 0) {
      const P = segment(inp, aOff, bOff, k0, k1, sao, sbo);
      if (!hasScales) return P;
      const g0 = Math.floor(k0 / inp.granK), g1 = Math.floor((k1 - 1) / inp.granK);
      const s = Math.fround(inp.sfa![sao + g0] * inp.sfb![sbo + g0]);
      for (let g = g0 + 1; g <= g1; g++) {
        if (Math.fround(inp.sfa![sao + g] * inp.sfb![sbo + g]) !== s) {
          throw new RangeError('Promotion "none" with scales applied at promotion needs one scale product across K');
        }
      }
      return fma32(s, P, 0);
    }
    let F = 0;
    for (let k = k0; k < k1; k += promote) {
      const e = k1 - k < promote ? k1 : k + promote;
      const P = segment(inp, aOff, bOff, k, e, sao, sbo);
      if (hasScales) {
        const g = Math.floor(k / inp.granK);
        F = fma32(Math.fround(inp.sfa![sao + g] * inp.sfb![sbo + g]), P, F); // deepgemm-ops §6.1: s = fl32(sa·sb); F = fma(s, P, F)
      } else {
        F = Math.fround(F + P); // cuBLASLt promotion: plain fp32 add (numerics.md §8.2b)
      }
    }
    return F;
  };
  const finish = makeEpilogue(model);
  return (inp, aOff, bOff, K, sao, sbo, c) => {
    if (scalesAtPromotion && inp.sfa && inp.granK !== 128 && promote !== 0) {
      throw new RangeError(`Scales applied at promotion need gran_k = 128, got ${inp.granK}`);
    }
    let F: number;
    if (S === 1 || K === 0) {
      F = K === 0 ? 0 : part(inp, aOff, bOff, 0, K, sao, sbo);
    } else {
      // Split-K: ceil(K/128) blocks of 128 split contiguously, part s gets nb div S (+1 for s < nb mod S) blocks;
      // the fp32 partials are added in ascending part order (numerics.md §8.2b: cuBLASLt's 2 halves).
      const nb = Math.ceil(K / 128), q = Math.floor(nb / S), rem = nb % S;
      F = 0;
      let b0 = 0;
      for (let s = 0; s < S; s++) {
        const cnt = q + (s < rem ? 1 : 0);
        const k0 = b0 * 128, k1 = Math.min((b0 + cnt) * 128, K);
        b0 += cnt;
        const Fs = k1 > k0 ? part(inp, aOff, bOff, k0, k1, sao, sbo) : 0;
        F = s === 0 ? Fs : Math.fround(F + Fs);
      }
    }
    return finish(F, c);
  };
}

/**
 * The epilogue of a (non-exact) model: the output value from the fp32 accumulator F and the C element (or null).
 * @param model the resolved model
 * @returns `(F, c) → output value` (exact in the output type)
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { makeEpilogue } from "./element.ts";
 * import { resolveModel } from "./kernel_models.ts";
 * // BF16 output with C rounds twice on DeepGEMM (reduce-add of the rounded output): bf16(1 + bf16(2^-8 + 2^-16)).
 * const e = makeEpilogue(resolveModel({ model: "sm100_1d1d" }));
 * assert.equal(e(2 ** -8 + 2 ** -16, 1), 1);
 * ```
 */
export function makeEpilogue(model: ResolvedModel): (F: number, c: number | null) => number {
  const out = model.outDtype;
  if (model.epilogue === "fp32_then_cast") {
    // Without split-K cuBLASLt rounds the product to the output type before it adds C in fp32 (numerics.md §8.2c: at
    // 33×72×384 tn, BF16 output with C, its split-K 1 kernel differed from a single cast in 34 of 2376 elements, and
    // this rule gives those 34 and the first one's bits, 0xc87c); its split-K kernels add C to the fp32 sum.
    if (model.splitK === 1) {
      return (F, c) => c === null ? roundOut(F, out) : roundOut(Math.fround(roundOut(F, out) + c), out);
    }
    return (F, c) => roundOut(c === null ? F : Math.fround(F + c), out);
  }
  // D pre-filled with C, reduce-add of the rounded output (deepgemm-ops §6.3)
  return (F, c) => {
    const o = roundOut(F, out);
    return c === null ? o : roundOut(c + o, out);
  };
}

function makeExact(out: "bf16" | "f32", fast: boolean): ElementFn {
  const es = new ExactSum();
  const frac = out === "bf16" ? 7 : 23;
  return (inp, aOff, bOff, K, sao, sbo, c) => {
    es.reset();
    if (c !== null) es.add(c);
    const { av, bv, sfa, sfb, granK } = inp;
    if (sfa && sfb) {
      const ng = Math.ceil(K / granK);
      for (let g = 0; g < ng; g++) {
        const k0 = g * granK, k1 = Math.min(K, k0 + granK);
        const s = sfa[sao + g] * sfb[sbo + g]; // two fp32 values: the product is exact in binary64
        if (fast) {
          // e4m3/e2m1 products are multiples of 2^-18 below 2^18: a group of ≤ 2^16 of them sums exactly in binary64.
          let P = 0;
          for (let k = k0; k < k1; k++) P += av[aOff + k] * bv[bOff + k];
          es.addProduct(s, P);
        } else {
          for (let k = k0; k < k1; k++) es.addProduct(av[aOff + k] * bv[bOff + k], s);
        }
      }
    } else if (fast && K <= 65536) {
      let P = 0;
      for (let k = 0; k < K; k++) P += av[aOff + k] * bv[bOff + k];
      es.add(P);
    } else {
      for (let k = 0; k < K; k++) es.add(av[aOff + k] * bv[bOff + k]); // bf16/f16 products are exact in binary64
    }
    return es.round(frac, -126, 127);
  };
}
