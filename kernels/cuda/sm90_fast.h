// Parameters of the fast SM90 FP8 GEMM (sm90_fp8_fast.cu): K-major A/B through TMA, f32 scales (gran 1 x 128 for A,
// 128 x 128 for B), BF16 output without C.
#pragma once
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace go_sm90 {

enum FastMode : int { kFastNormal = 0, kFastClassic, kFastPsum, kFastMasked };

struct FastParams {
  int mode;
  int M, N, K;  // M: rows of A/D (masked: Mmax per group)
  int G;        // groups (masked: batches; grouped: number of B groups)
  int m_blocks, n_blocks, tiles;  // filled by the launcher
  const float* sfa;
  int64_t sfa_s_row, sfa_s_kb, sfa_s_batch;
  const float* sfb;
  int64_t sfb_s_row, sfb_s_kb, sfb_s_batch;
  __nv_bfloat16* d;
  int64_t d_s_row, d_s_batch;
  const int32_t* gl;
  const int32_t* masked_m;
  int mk_align;
  int psum_flags;  // bit 1: ensure_zero_padding
};

// a: 2-D TMA view [a_rows, K] (masked: G * Mmax rows), b: [b_rows, K] (grouped: G * N rows); row strides in bytes.
// Sets *used = false (and launches nothing) when the tensor maps cannot be built; the caller then uses the simple path.
cudaError_t launch_fp8_gemm_fast(FastParams p, const void* a, int64_t a_rows, int64_t a_row_stride, const void* b,
                                 int64_t b_rows, int64_t b_row_stride, cudaStream_t stream, bool* used);

}  // namespace go_sm90
