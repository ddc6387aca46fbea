// Launch parameters of the SM90 kernels (plain structs shared by the host glue and the device code).
// Every pointer is a device pointer that the host glue has already bounds-checked against its allocation
// registry; every index tensor (grouped_layout, masked_m, ks, ...) has been validated on the host.
#pragma once
#include <cuda_runtime.h>
#include <cstdint>

namespace go_sm90 {

// One strided operand; element (i, j) of batch z is at p[i*s_row + j*s_col + z*s_batch] (element strides).
struct Mat {
  const void* p;
  int64_t s_row, s_col, s_batch;
};

enum GemmMode : int {
  kModeNormal = 0,      // grid z = batch (1 for a plain GEMM); every operand offset by z*s_batch
  kModeMGroupClassic,   // grouped_layout[M]: group of a tile = grouped_layout[tile start] (clamped at 0);
                        // 64-row chunks whose first row is -1 write 0
  kModeMGroupPsum,      // grouped_layout[G]: cumulative end rows; group g = [align(end_{g-1}, mk_align), end_g)
  kModeMasked,          // grid z = group; 128-row tiles starting below masked_m[z] computed, 64-row chunks
                        // starting at or after masked_m[z] inside them written as 0
  kModeKGroupFlat,      // SM90 k_grouped_fp8_gemm_nt_contiguous: group g's A is an [M, k_g] row-major block
  kModeKGroupStrided,   // k_grouped_bf16_gemm_tn_contiguous: group g = K rows [s_g, s_g + k_g) of strided A, B
};

enum OutKind : int {
  kOutBf16 = 0,     // D = bf16_rne(acc)
  kOutF32 = 1,      // D = acc
  kOutF32AddC = 2,  // D = fl32(C + acc)   (C copied into D when the effective K is 0)
  kOutBf16AddC = 3, // D = bf16_rne(fl32(C) + fl32(bf16_rne(acc)))  (BF16 reduce-add onto C)
  kOutBf16AddCOnce = 4,  // D = bf16_rne(fl32(C + acc))  (SM90 FP8 models with a bf16 C)
};

struct GemmParams {
  int mode;
  int64_t M, N, K;      // M: rows of the (per-batch) output; K: reduction length (unused for k-grouped modes)
  int batch;            // grid z
  Mat a, b;             // a(m, k), b(n, k)
  Mat sfa, sfb;         // FP8 only: sfa(m / gran_a, kb), sfb(n / gran_b, kb) (f32, or UE8M0 codes when *_ue8m0)
  int gran_a, gran_b;   // rows (columns) per scale row
  int sfa_ue8m0, sfb_ue8m0;
  int mk_align;         // m-grouped contiguous: tile of the group lookup / group start alignment (multiple of 64)
  int psum_flags;       // psum layout: bit 1 = ensure_zero_padding (compute [end_g, align(end_g, mk_align)))
  Mat d, c;             // d(m, n), c(m, n)
  int out_kind;
  const int32_t* grouped_layout;
  int num_groups;
  const int32_t* masked_m;
  const int32_t* ks;    // k-grouped sizes (device copy)
  int head_l, head_mid, head_r;  // skip-head-mid column map; head_l + head_r == 0 means identity
  int64_t k_inner;      // > 0: the K loop runs over k_inner-long slices of consecutive batches (einsum bmk,bnk->mn)
};

cudaError_t launch_fp8_gemm(const GemmParams& p, cudaStream_t stream);
cudaError_t launch_bf16_gemm(const GemmParams& p, cudaStream_t stream);

struct HcParams {
  const void* a;  // bf16 [M, K], element (m, k) at a[m*a_s_row + k]
  int64_t a_s_row;
  const float* b;  // fp32 [N, K]
  int64_t b_s_row;
  float* d;  // fp32 [S, M, N] (S = splits; 1 when no split)
  int64_t d_s_split, d_s_row;
  float* sqr_sum;  // fp32 [S, M]
  int64_t sq_s_split;
  int64_t M, N, K;
  int splits;  // >= 1
};
// tf32_mode: 0 truncates B to TF32, 1 rounds it to nearest even (before the tensor core sees it).
cudaError_t launch_tf32_hc_prenorm(const HcParams& p, int tf32_mode, cudaStream_t stream);

struct MqaParams {
  // Non-paged: q [S, H, D] e4m3, kv [S_kv, D] e4m3, kv_sf [S_kv] fp32, weights [S, H] fp32, ks/ke [S] int32.
  // Paged: q [B*next_n, H, D], kv_cache pages of block_kv tokens (values then 4-byte scales), block_table,
  //        context_lens [B, next_n].
  int paged;
  const uint8_t* q;
  int64_t q_s_row, q_s_head;  // row = query (non-paged) or b*next_n + j (paged)
  const uint8_t* kv;
  int64_t kv_s_row;
  const float* kv_sf;
  const uint8_t* kv_cache;
  int64_t page_stride;  // bytes between pages
  int block_kv;
  const int32_t* block_table;
  int64_t bt_s_row;
  const int32_t* context_lens;  // [B, next_n]
  int next_n;
  const float* weights;
  int64_t w_s_row;
  const int32_t* ks;
  const int32_t* ke;
  void* logits;
  int logits_bf16;
  int64_t l_s_row;
  int64_t rows;     // S, or B*next_n
  int64_t cols;     // S_kv (non-paged), max_context_len (paged)
  int64_t max_seqlen_k;  // > 0: compressed output (non-paged)
  int heads, dim;
};
// clean: positions outside [ks, ke) of a row (j < S_kv) become -inf (non-paged, non-compressed only).
cudaError_t launch_mqa_logits(const MqaParams& p, int clean, cudaStream_t stream);

cudaError_t launch_paged_mqa_metadata(const int32_t* context_lens, int batch, int next_n, int block_kv, int num_sms,
                                      int32_t* out, cudaStream_t stream);

// Sets logits[i, j] = -inf for j < valid_cols outside [ks, ke) (row i, next_n rows per request) and for every
// j in [valid_cols, width); ks may be null (then 0).
cudaError_t launch_clean_logits(const int32_t* ks, const int32_t* ke, float* logits, int64_t rows, int64_t valid_cols,
                                int64_t width, int64_t row_stride, int next_n, cudaStream_t stream);

}  // namespace go_sm90
