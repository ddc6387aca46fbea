/**
 * The real kernels and libraries a variant is known to describe, as data: which `oracle` variant reproduces which
 * kernel's output bit for bit, with the evidence (`numerics.md` §8.2b, `bench/RESULTS.md` "Adapters on the H200").
 * `identify` prints these names next to a matching variant, so an output is named by the kernel behaviour it shows,
 * not only by the model's parameters.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { knownBehaviours } from "./behaviours.ts";
 * const names = knownBehaviours("cublaslt_gemm_nt", { model: "cublaslt", promotion: "none" }, "bf16");
 * assert.match(names[0], /fast accumulation on/);
 * ```
 * @module
 */
import type { Variant } from "./variants.ts";

/** One known behaviour: a predicate over (op, variant, output dtype) and its name. */
export interface Behaviour {
  /** Which ops it concerns. */
  readonly op: RegExp;
  /** Whether a variant is this behaviour. */
  readonly is: (v: Variant, outDtype: string) => boolean;
  /** The behaviour in words, with its evidence. */
  readonly name: string;
}

const plain = (v: Variant) =>
  v.tensorCore === undefined && v.promotion === undefined && (v.rounding ?? "rne") === "rne";

/** The table (first match first). */
export const BEHAVIOURS: readonly Behaviour[] = Object.freeze([
  {
    op: /^cublaslt_gemm_/,
    is: (v) => v.model === "cublaslt" && plain(v) && (v.splitK ?? 1) === 1,
    name: "cuBLASLt FP8 (torch._scaled_mm), tensor-wise scales, fast accumulation off: promotion to fp32 every 128 K " +
      "(verified on H200)",
  },
  {
    op: /^cublaslt_gemm_/,
    is: (v) =>
      v.model === "cublaslt" && v.tensorCore === undefined && v.promotion === "none" && (v.splitK ?? 1) === 1 &&
      (v.rounding ?? "rne") === "rne",
    name: "cuBLASLt FP8 (torch._scaled_mm), tensor-wise scales, fast accumulation on: the wgmma chain over all of K " +
      "(verified on H200)",
  },
  {
    op: /^cublaslt_gemm_/,
    is: (v) => v.model === "cublaslt" && plain(v) && (v.splitK ?? 1) > 1,
    name: "cuBLASLt FP8, tensor-wise scales, fast accumulation off, split-K (fp32 partial results added in order)",
  },
  {
    op: /^fp8_gemm_(nt|nn|tn|tt)$/,
    is: (v, out) => v.model === "sm90_1d2d" && plain(v) && (v.splitK ?? 1) === 1 && out === "bf16",
    name: "DeepGEMM SM90 FP8 1D2D kernel (verified on H200); also cuBLASLt block-scaled FP8 (1x128 / 128x128 scales, " +
      "BF16 out) without split-K",
  },
  {
    op: /^fp8_gemm_(nt|nn|tn|tt)$/,
    is: (v, out) => v.model === "sm90_1d2d" && plain(v) && v.splitK === 2 && out === "bf16",
    name: "cuBLASLt block-scaled FP8 (1x128 / 128x128 scales, BF16 out) with split-K 2 (seen on H200 at 64×576×7168)",
  },
  {
    op: /fp8_gemm|fp8_einsum/,
    is: (v, out) =>
      (v.model === "sm90_1d2d" || v.model === "sm90_1d1d") && plain(v) && (v.splitK ?? 1) === 1 &&
      out === "bf16",
    name: "DeepGEMM SM90 FP8 1D2D kernel (verified on H200)",
  },
  {
    op: /fp8_gemm|fp8_einsum/,
    is: (v, out) =>
      (v.model === "sm90_1d1d" || v.model === "sm90_1d2d") && plain(v) && (v.splitK ?? 1) === 1 &&
      out === "f32",
    name: "DeepGEMM SM90 FP8 1D1D kernel, FP32 output (verified on H200)",
  },
  {
    op: /fp8/,
    is: (v) => v.model === "sm100_1d1d" && plain(v) && (v.splitK ?? 1) === 1,
    name: "DeepGEMM SM100 FP8/FP4 kernel (block-scaled tcgen05; MMA-Sim's parameters, not verified on hardware)",
  },
  {
    op: /bf16|einsum|cublaslt/,
    is: (v) => v.model === "bf16" && plain(v) && (v.splitK ?? 1) === 1,
    name: "DeepGEMM SM90 BF16 GEMM; also cuBLAS BF16 (torch.mm) without C (verified on H200)",
  },
  {
    op: /./,
    is: (v) => v.model === "exact" || v.model === "sm100_exact",
    name: "exact: the true value rounded once (what a float64 computation rounded at the end gives)",
  },
  {
    op: /mqa_logits/,
    is: (v) => v.model === "sm90",
    name: "DeepGEMM sm90_fp8_mqa_logits / paged MQA kernels (verified on H200)",
  },
  {
    op: /mqa_logits/,
    is: (v) => v.model === "sm90_spec81",
    name: "the head-reduction order as deepgemm-ops.md §8.1 writes it (not the kernel's: 86–89 % of its logits)",
  },
  {
    op: /^tf32_hc_prenorm_gemm$/,
    is: (v) => v.model === "sm90" && (v.scalars?.tf32_rounding ?? "rne") === "rne",
    name:
      "DeepGEMM tf32_hc_prenorm_gemm on SM90: fp32 operands converted to TF32 by the TMA with RNE (verified on H200)",
  },
]);

/**
 * The known kernel behaviours a variant describes for an op.
 * @param op DeepGEMM's op name
 * @param v the variant
 * @param outDtype the output's dtype
 * @returns the most specific name (empty when the variant is no known kernel's)
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { knownBehaviours } from "./behaviours.ts";
 * assert.match(knownBehaviours("fp8_gemm_nt", { model: "sm90_1d2d", splitK: 2 }, "bf16")[0], /split-K 2/);
 * assert.deepEqual(knownBehaviours("fp8_gemm_nt", { model: "sm90_1d2d", tensorCore: "tcgen05" }, "bf16"), []);
 * ```
 */
export function knownBehaviours(op: string, v: Variant, outDtype: string): string[] {
  const b = BEHAVIOURS.find((x) => x.op.test(op) && x.is(v, outDtype));
  return b ? [b.name] : [];
}
