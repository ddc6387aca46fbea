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

/* get_paged_mqa_logits_metadata, SM90 partition (deepgemm-ops.md §8.3): gemm_oracle.h's
 * go_get_paged_mqa_logits_metadata with GO_MODEL_SM90_MQA (kept under this name for existing callers). */
int32_t go_ext_paged_mqa_logits_metadata(const go_tensor* context_lens, int32_t block_kv, int32_t num_sms,
                                         const go_tensor* schedule_meta);

/* The clean-logits kernel (deepgemm-ops.md §8.4): logits f32 [rows, width]; row i (next_n rows per request):
 * ks = ks ? ks[i / next_n] : 0, ke = ke[i / next_n] - next_n + i % next_n + 1; every column j < valid_cols outside
 * [ks, ke), and every column j >= valid_cols (row padding), becomes -inf. */
int32_t go_ext_clean_logits(const go_tensor* ks, const go_tensor* ke, const go_tensor* logits, int64_t valid_cols,
                            int32_t next_n);

/* Runtime specialisation of the fast FP8 GEMM (kernels/cuda/jit.h): process-wide counters. compiles: cold calls that
 * ran nvcc (compile_ms_*: nvcc wall time); disk_loads: kernels found in the on-disk cache (load_ms_*: read + module
 * load); memory_hits: kernels already loaded in this process; aot_launches: launches of the ahead-of-time kernels. */
typedef struct go_cuda_jit_stats {
  int64_t compiles;
  double compile_ms_total, compile_ms_max;
  int64_t disk_loads;
  double load_ms_total, load_ms_max;
  int64_t memory_hits;
  int64_t aot_launches;
} go_cuda_jit_stats;
int32_t go_ext_jit_stats(go_cuda_jit_stats* out);

/* The configuration of this thread's last fast FP8 GEMM launch, e.g. "bn=128 stages=5 multicast=2 acc=double
 * jit=shape", NUL-terminated and truncated to len bytes. */
int32_t go_ext_fast_last_config(char* buf, int64_t len);

/* Compiles a .cu text (which may include the kernels/cuda headers) to an sm_90a cubin through the JIT's on-disk cache,
 * without loading it: needs nvcc, not a GPU. Writes the cubin's path (NUL-terminated) into cubin_path and sets
 * *compiled to 1 when nvcc ran, 0 on a cache hit. GO_ERR_NOT_AVAILABLE when the JIT is off or nvcc is missing,
 * GO_ERR_INVALID_ARGUMENT with nvcc's first lines when the text does not compile. */
int32_t go_ext_jit_compile(const char* source, char* cubin_path, int64_t len, int32_t* compiled);

/* Compiles and loads (or finds) the fast kernel that a call of this class would use, without running it; thread-safe.
 * mode: 0 dense fp8_gemm, 1 m-grouped contiguous, 2 masked (m = rows per group). GO_ERR_UNSUPPORTED when the JIT is
 * unavailable (the message says why). */
int32_t go_ext_fast_prepare(int32_t mode, int64_t m, int64_t n, int64_t k, int64_t g);

/* The configuration the fast FP8 GEMM's heuristic picks for a call of this class on a GPU of `sms` SMs, without
 * compiling or launching anything (needs no GPU): mode 0 dense, 1 contiguous (classic), 2 masked (m = Mmax), 3
 * contiguous (psum); tiles256: the contiguous groups fit 256-row tiles (a call launches the choices for both, and
 * its device check of grouped_layout picks the one that runs). override_text: a
 * GO_CUDA_FAST_CFG string, or NULL for none (the environment variable is not read). Writes e.g. "bm=256 bn=128
 * stages=3 multicast=1 acc=single prod=4 rel=thread regs=56 sfa=tma epi=tma jit=shape", with " split=S" where K is
 * split (sfa=tma: wanted; the launch falls back to copies when the SFA layout does not allow TMA).
 * GO_ERR_INVALID_ARGUMENT with the reason for a bad override. */
int32_t go_ext_fast_choose(int32_t mode, int64_t m, int64_t n, int64_t k, int64_t g, int32_t sms, int32_t tiles256,
                           const char* override_text, char* buf, int64_t len);

/* Runs the device check of a grouped index tensor (grouped_gate.h) that the fast FP8 GEMM runs ahead of its kernels,
 * and waits for it: index i32 [n] contiguous on this device; kind 1: classic contiguous layout (n = m entries, -1 or
 * a group in [0, g)), 2: psum layout (g non-decreasing ends <= m; mk: mk_alignment), 3: masked_m (g counts in
 * [0, m]). *fits256: whether 256-row tiles fit the groups (kinds 1 and 2). Returns GO_ERR_INVALID_ARGUMENT with the
 * first bad entry in the GEMM's words; like go_synchronize, it reports an error an earlier asynchronous call left. */
int32_t go_ext_grouped_gate(const go_tensor* index, int32_t kind, int64_t m, int64_t g, int32_t mk, int32_t* fits256);

#ifdef __cplusplus
}
#endif

#endif
