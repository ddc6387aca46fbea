/*
 * Extra entry points of the CUDA SM90 backend that gemm_oracle.h does not declare yet (proposed additions).
 * Same conventions as gemm_oracle.h: status codes, go_last_error(), every tensor checked against the registry.
 */
#ifndef GEMM_ORACLE_CUDA_EXT_H
#define GEMM_ORACLE_CUDA_EXT_H

#include "../gemm_oracle.h"

#ifdef __cplusplus
extern "C" {
#endif

/* einsum("bmk,bnk->mn", a, b, d, c): a bf16 [s, m, k], b bf16 [s, n, k], k % 64 == 0; d bf16 (no c) or f32 with c == d.
 * Deterministic: one BF16 wgmma chain over (b, k) in order (DeepGEMM's split-K atomics are not reproduced). */
int32_t go_ext_einsum_bmk_bnk_mn(const go_tensor* a, const go_tensor* b, const go_tensor* c, const go_tensor* d);

/* get_paged_mqa_logits_metadata, SM90 partition (deepgemm-ops.md §8.3): context_lens i32 [B, next_n] contiguous,
 * schedule_meta i32 [num_sms + 1, 2] contiguous. */
int32_t go_ext_paged_mqa_logits_metadata(const go_tensor* context_lens, int32_t block_kv, int32_t num_sms,
                                         const go_tensor* schedule_meta);

/* The clean-logits kernel (deepgemm-ops.md §8.4): logits f32 [rows, width]; row i (next_n rows per request):
 * ks = ks ? ks[i / next_n] : 0, ke = ke[i / next_n] - next_n + i % next_n + 1; every column j < valid_cols outside
 * [ks, ke), and every column j >= valid_cols (row padding), becomes -inf. */
int32_t go_ext_clean_logits(const go_tensor* ks, const go_tensor* ke, const go_tensor* logits, int64_t valid_cols,
                            int32_t next_n);

#ifdef __cplusplus
}
#endif

#endif
