/**
 * The one symbol table of the kernel C ABI (`kernels/gemm_oracle.h`). Memory and library functions are required;
 * operations are optional, so a library that implements only some operation families still loads (a missing one
 * is `null` and its wrapper throws a clear error). {@link FAMILY_ENTRIES} names the entry of each operation family of
 * the operation registry (`reference/registry.ts`, `native.family`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { FAMILY_ENTRIES, REQUIRED_SYMBOLS, symbols } from "./symbols.ts";
 * assert.equal(symbols.go_fp8_gemm.parameters.length, 11);
 * assert.equal(FAMILY_ENTRIES.paged_mqa_logits_metadata, "go_get_paged_mqa_logits_metadata");
 * assert.ok(REQUIRED_SYMBOLS.includes("go_alloc"));
 * ```
 * @module
 */
import type { AbiFamily } from "../reference/registry.ts";

/** `(a, sfa, b, sfb)`: the leading four descriptors of every FP8 family. */
const FP8_OPERANDS = ["buffer", "buffer", "buffer", "buffer"] as const;
/** `(gran_a_mn, gran_a_k, gran_b_mn, gran_b_k)`: the scale recipe of the FP8 families. */
const RECIPE = ["i32", "i32", "i32", "i32"] as const;

/** C signatures, parameter by parameter; `buffer` = `const go_tensor*` (80-byte descriptor) unless noted. */
export const symbols = {
  go_abi_version: { parameters: [], result: "i32" }, // int32_t go_abi_version(void)
  go_last_error: { parameters: [], result: "pointer" }, // const char* go_last_error(void)
  go_backend_info: { parameters: ["buffer", "u64", "buffer"], result: "i32" }, // (char* buf, uint64_t cap, uint64_t* needed)
  go_device_count: { parameters: ["buffer"], result: "i32" }, // (int32_t* count)
  go_set_device: { parameters: ["i32"], result: "i32" }, // (int32_t device)
  go_alloc: { parameters: ["u64", "buffer"], result: "i32" }, // (uint64_t bytes, void** out)
  go_free: { parameters: ["pointer"], result: "i32" }, // (void* ptr)
  go_copy_in: { parameters: ["pointer", "buffer", "u64"], result: "i32" }, // (void* dst, const void* host_src, uint64_t bytes)
  go_copy_out: { parameters: ["buffer", "pointer", "u64"], result: "i32" }, // (void* host_dst, const void* src, uint64_t bytes)
  go_synchronize: { parameters: [], result: "i32" }, // (void)
  go_set_num_threads: { parameters: ["i32"], result: "i32", optional: true }, // (int32_t threads)
  // (a, sfa, b, sfb, c, d, gran_a_mn, gran_a_k, gran_b_mn, gran_b_k, model)
  go_fp8_gemm: { parameters: [...FP8_OPERANDS, "buffer", "buffer", ...RECIPE, "i32"], result: "i32", optional: true },
  // (a, sfa, b, sfb, d, grouped_layout, gran_a_mn, gran_a_k, gran_b_mn, gran_b_k, use_psum_layout, mk_alignment, model)
  go_m_grouped_fp8_gemm_contiguous: {
    parameters: [...FP8_OPERANDS, "buffer", "buffer", ...RECIPE, "i32", "i32", "i32"],
    result: "i32",
    optional: true,
  },
  // (a, sfa, b, sfb, d, masked_m, gran_a_mn, gran_a_k, gran_b_mn, gran_b_k, model)
  go_m_grouped_fp8_gemm_masked: {
    parameters: [...FP8_OPERANDS, "buffer", "buffer", ...RECIPE, "i32"],
    result: "i32",
    optional: true,
  },
  // (a, sfa, b, sfb, c, d, ks, layout, gran_k, model)
  go_k_grouped_fp8_gemm: {
    parameters: [...FP8_OPERANDS, "buffer", "buffer", "buffer", "i32", "i32", "i32"],
    result: "i32",
    optional: true,
  },
  // (a, b, c, d, model)
  go_bf16_gemm: { parameters: ["buffer", "buffer", "buffer", "buffer", "i32"], result: "i32", optional: true },
  // (a, b, d, grouped_layout, use_psum_layout, mk_alignment, model)
  go_m_grouped_bf16_gemm_contiguous: {
    parameters: ["buffer", "buffer", "buffer", "buffer", "i32", "i32", "i32"],
    result: "i32",
    optional: true,
  },
  // (a, b, d, masked_m, model)
  go_m_grouped_bf16_gemm_masked: {
    parameters: ["buffer", "buffer", "buffer", "buffer", "i32"],
    result: "i32",
    optional: true,
  },
  // (a, b, c, d, ks, model)
  go_k_grouped_bf16_gemm: {
    parameters: ["buffer", "buffer", "buffer", "buffer", "buffer", "i32"],
    result: "i32",
    optional: true,
  },
  // (a, sfa, b, sfb, d, gran_a_mn, gran_a_k, gran_b_mn, gran_b_k, left, mid, right, model)
  go_fp8_gemm_skip_head_mid: {
    parameters: [...FP8_OPERANDS, "buffer", ...RECIPE, "i32", "i32", "i32", "i32"],
    result: "i32",
    optional: true,
  },
  // (a, b, d, sqr_sum, num_splits, tf32_rounding, model)
  go_tf32_hc_prenorm_gemm: {
    parameters: ["buffer", "buffer", "buffer", "buffer", "i32", "i32", "i32"],
    result: "i32",
    optional: true,
  },
  // (q, kv, kv_sf, weights, ks, ke, logits, clean_logits, max_seqlen_k, model)
  go_fp8_mqa_logits: {
    parameters: ["buffer", "buffer", "buffer", "buffer", "buffer", "buffer", "buffer", "i32", "i32", "i32"],
    result: "i32",
    optional: true,
  },
  // (q, kv_cache, weights, context_lens, block_table, logits, block_kv, model)
  go_fp8_paged_mqa_logits: {
    parameters: ["buffer", "buffer", "buffer", "buffer", "buffer", "buffer", "i32", "i32"],
    result: "i32",
    optional: true,
  },
  // (kind, x, q, sf, global_sf, gran_k, flags, scale_rule, model)
  go_quantize: {
    parameters: ["i32", "buffer", "buffer", "buffer", "buffer", "i32", "i32", "i32", "i32"],
    result: "i32",
    optional: true,
  },
  // (context_lens, block_kv, num_sms, schedule_meta, model)
  go_get_paged_mqa_logits_metadata: {
    parameters: ["buffer", "i32", "i32", "buffer", "i32"],
    result: "i32",
    optional: true,
  },
  // (a, b, c, d, split_k, algo, algo_len, model)
  go_cublaslt_gemm: {
    parameters: ["buffer", "buffer", "buffer", "buffer", "i32", "buffer", "i64", "i32"],
    result: "i32",
    optional: true,
  },
} as const satisfies Deno.ForeignLibraryInterface;

/** The symbol table's type. */
export type Symbols = typeof symbols;

/** Symbols every backend library must export. */
export const REQUIRED_SYMBOLS: readonly (keyof Symbols)[] = (Object.keys(symbols) as (keyof Symbols)[]).filter(
  (k) => !("optional" in symbols[k]),
);

/** The entry each operation family calls (`go_backend_info` "models" keys; the registry's `native.family`). */
export const FAMILY_ENTRIES: { readonly [F in AbiFamily]: keyof Symbols } = Object.freeze({
  fp8_gemm: "go_fp8_gemm",
  m_grouped_fp8_gemm_contiguous: "go_m_grouped_fp8_gemm_contiguous",
  m_grouped_fp8_gemm_masked: "go_m_grouped_fp8_gemm_masked",
  k_grouped_fp8_gemm: "go_k_grouped_fp8_gemm",
  bf16_gemm: "go_bf16_gemm",
  m_grouped_bf16_gemm_contiguous: "go_m_grouped_bf16_gemm_contiguous",
  m_grouped_bf16_gemm_masked: "go_m_grouped_bf16_gemm_masked",
  k_grouped_bf16_gemm: "go_k_grouped_bf16_gemm",
  fp8_gemm_skip_head_mid: "go_fp8_gemm_skip_head_mid",
  tf32_hc_prenorm_gemm: "go_tf32_hc_prenorm_gemm",
  fp8_mqa_logits: "go_fp8_mqa_logits",
  fp8_paged_mqa_logits: "go_fp8_paged_mqa_logits",
  quantize: "go_quantize",
  paged_mqa_logits_metadata: "go_get_paged_mqa_logits_metadata",
  cublaslt_gemm: "go_cublaslt_gemm",
});
