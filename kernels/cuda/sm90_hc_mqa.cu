// SM90 kernels other than the GEMM families: tf32_hc_prenorm_gemm (TF32 wgmma + the SM90 square-sum order),
// fp8_mqa_logits / fp8_paged_mqa_logits (FP8 wgmma over head_dim + the SM90 head-reduction order), the paged
// metadata partition and the clean-logits kernel. Orders: docs/deepgemm-ops.md §7, §8.1, §8.3, §8.4.
#include <cuda_bf16.h>

#include <cmath>

#include "sm90_common.cuh"
#include "sm90_params.h"

namespace go_sm90 {

// ---- tf32_hc_prenorm_gemm ------------------------------------------------------------------------------------

// fp32 -> tf32 (10 fraction bits) as an fp32 bit pattern: mode 0 truncates, 1 rounds to nearest even.
__device__ __forceinline__ uint32_t to_tf32(uint32_t bits, int mode) {
  if ((bits & 0x7F800000u) == 0x7F800000u) return bits;  // Inf / NaN unchanged
  if (mode == 1) bits += 0xFFFu + ((bits >> 13) & 1u);
  return bits & 0xFFFFE000u;
}

__global__ void __launch_bounds__(kThreads) hc_prenorm_kernel(const HcParams p, int tf32_mode) {
  extern __shared__ uint8_t smem_raw[];
  uint8_t* sA = align1024(smem_raw);  // 64 rows x 32 fp32
  uint8_t* sB = sA + 64 * 128;        // 32 rows x 32 fp32
  const int tid = threadIdx.x;
  const int64_t row0 = static_cast<int64_t>(blockIdx.x) * 64;
  const int s = blockIdx.y;
  const int64_t kb_total = p.K / 64, q = kb_total / p.splits, r = kb_total % p.splits;
  const int64_t kb_begin = s * q + (s < r ? s : r), kb_count = q + (s < r ? 1 : 0);
  const int rows = static_cast<int>(p.M - row0 < 64 ? p.M - row0 : 64);
  View2 va;
  va.p = static_cast<const uint8_t*>(p.a) + row0 * p.a_s_row * 2;
  va.s_row = p.a_s_row;
  va.s_k = 1;
  va.rows = rows;
  va.k = p.K;
  float acc[16];
#pragma unroll
  for (int i = 0; i < 16; ++i) acc[i] = 0.0f;
  for (int64_t k0 = kb_begin * 64; k0 < (kb_begin + kb_count) * 64; k0 += 32) {
    load_tile_bf16_as_f32(sA, va, 64, k0);
    for (int idx = tid; idx < 32 * 8; idx += kThreads) {
      const int rr = idx >> 3, c = idx & 7;
      uint32_t w[4];
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int64_t k = k0 + c * 4 + e;
        w[e] = (rr < p.N) ? to_tf32(__float_as_uint(p.b[rr * p.b_s_row + k]), tf32_mode) : 0u;
      }
      *reinterpret_cast<uint4*>(tile_chunk(sB, rr, c)) = make_uint4(w[0], w[1], w[2], w[3]);
    }
    fence_proxy_async();
    __syncthreads();
    fence_operand(acc);
    wgmma_fence();
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      WgmmaTf32<32>::mma(acc, desc_kmajor_sw128(smem_addr(sA + j * 32)), desc_kmajor_sw128(smem_addr(sB + j * 32)),
                          1);
    }
    wgmma_commit();
    wgmma_wait0();
    fence_operand(acc);
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < 16; ++i) {
    const int rr = acc_row(tid, i), c = acc_col(tid, i);
    if (rr < rows && c < p.N) p.d[s * p.d_s_split + (row0 + rr) * p.d_s_row + c] = acc[i];
  }
  // Square sums: lanes q = 0..3 each run v_q over the split's 64-blocks; inside a block, for i = 0..7,
  // v_q = fl32(v_q + fl32(x[8i+q]^2 + x[8i+q+4]^2)); result (v0 + v2) + (v1 + v3) (deepgemm-ops.md §7, SM90).
  if (tid < rows) {
    const uint16_t* arow = static_cast<const uint16_t*>(p.a) + (row0 + tid) * p.a_s_row;
    float v[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    for (int64_t kb = kb_begin; kb < kb_begin + kb_count; ++kb) {
      const uint16_t* x = arow + kb * 64;
      for (int i = 0; i < 8; ++i) {
#pragma unroll
        for (int qq = 0; qq < 4; ++qq) {
          const float a = __uint_as_float(static_cast<uint32_t>(x[8 * i + qq]) << 16);
          const float b = __uint_as_float(static_cast<uint32_t>(x[8 * i + qq + 4]) << 16);
          v[qq] = __fadd_rn(v[qq], __fadd_rn(__fmul_rn(a, a), __fmul_rn(b, b)));
        }
      }
    }
    p.sqr_sum[s * p.sq_s_split + row0 + tid] = __fadd_rn(__fadd_rn(v[0], v[2]), __fadd_rn(v[1], v[3]));
  }
}

cudaError_t launch_tf32_hc_prenorm(const HcParams& p, int tf32_mode, cudaStream_t stream) {
  if (p.M <= 0) return cudaSuccess;
  const dim3 grid(static_cast<unsigned>((p.M + 63) / 64), static_cast<unsigned>(p.splits));
  hc_prenorm_kernel<<<grid, kThreads, 64 * 128 + 32 * 128 + 1024, stream>>>(p, tf32_mode);
  return cudaGetLastError();
}

// ---- MQA logits ----------------------------------------------------------------------------------------------

constexpr int kMqaCols = 128;

__global__ void __launch_bounds__(kThreads) mqa_logits_kernel(const MqaParams p, int clean) {
  extern __shared__ uint8_t smem_raw[];
  uint8_t* sA = align1024(smem_raw);         // 64 heads x 128 bytes
  uint8_t* sB = sA + 64 * 128;               // 128 tokens x 128 bytes
  float* sP = reinterpret_cast<float*>(sB + 128 * 128);  // [64][kMqaCols + 1]
  const int tid = threadIdx.x;
  const int64_t row = blockIdx.y;
  const int64_t c0 = static_cast<int64_t>(blockIdx.x) * kMqaCols;
  // Column range [lo, hi) of positions to compute, and the position of output column c: pos = c + shift.
  int64_t lo, hi, shift = 0;
  int64_t b = 0;
  if (p.paged) {
    b = row / p.next_n;
    lo = 0;
    hi = p.context_lens[row];  // [B, next_n] contiguous row-major (validated on the host)
  } else {
    int64_t ks = p.ks[row], ke = p.ke[row];
    ks = ks < 0 ? 0 : (ks > p.cols ? p.cols : ks);
    ke = ke < 0 ? 0 : (ke > p.cols ? p.cols : ke);
    lo = ks;
    hi = ke;
    if (p.max_seqlen_k > 0) {
      shift = ks;
      lo = ks;
      hi = ke < ks + p.max_seqlen_k ? ke : ks + p.max_seqlen_k;
    }
  }
  const int64_t out_cols = p.max_seqlen_k > 0 ? p.max_seqlen_k : p.cols;
  const int64_t pos0 = c0 + shift;
  const bool any = pos0 < hi && pos0 + kMqaCols > lo && c0 < out_cols;
  if (!any) {
    if (clean) {
      const int64_t c = c0 + tid;
      if (c < out_cols) reinterpret_cast<float*>(p.logits)[row * p.l_s_row + c] = -INFINITY;
    }
    return;
  }
  // A: the query's heads [H, D]; B: 128 tokens [pos0 .. pos0 + 127], D bytes each.
  for (int idx = tid; idx < 64 * 8; idx += kThreads) {
    const int r = idx >> 3, c = idx & 7;
    uint4 v = make_uint4(0, 0, 0, 0);
    if (r < p.heads && c * 16 < p.dim) v = *reinterpret_cast<const uint4*>(p.q + row * p.q_s_row + r * p.q_s_head + c * 16);
    *reinterpret_cast<uint4*>(tile_chunk(sA, r, c)) = v;
  }
  for (int idx = tid; idx < 128 * 8; idx += kThreads) {
    const int r = idx >> 3, c = idx & 7;
    const int64_t pos = pos0 + r;
    uint4 v = make_uint4(0, 0, 0, 0);
    if (pos >= lo && pos < hi && c * 16 < p.dim) {
      const uint8_t* src;
      if (p.paged) {
        const int64_t page = p.block_table[b * p.bt_s_row + pos / p.block_kv];
        src = p.kv_cache + page * p.page_stride + (pos % p.block_kv) * p.dim;
      } else {
        src = p.kv + pos * p.kv_s_row;
      }
      v = *reinterpret_cast<const uint4*>(src + c * 16);
    }
    *reinterpret_cast<uint4*>(tile_chunk(sB, r, c)) = v;
  }
  fence_proxy_async();
  __syncthreads();
  float acc[64];
#pragma unroll
  for (int i = 0; i < 64; ++i) acc[i] = 0.0f;
  fence_operand(acc);
  wgmma_fence();
  // One chain of k32 wgmmas over head_dim, the first with scale-d = 0 (deepgemm-ops.md §8.1: no promotion).
  for (int j = 0; j < p.dim / 32; ++j) {
    WgmmaFp8<128>::mma(acc, desc_kmajor_sw128(smem_addr(sA + j * 32)), desc_kmajor_sw128(smem_addr(sB + j * 32)),
                         j);
  }
  wgmma_commit();
  wgmma_wait0();
  fence_operand(acc);
#pragma unroll
  for (int i = 0; i < 64; ++i) sP[acc_row(tid, i) * (kMqaCols + 1) + acc_col(tid, i)] = acc[i];
  __syncthreads();
  const int64_t c = c0 + tid, pos = pos0 + tid;
  if (c >= out_cols) return;
  float* lrow = reinterpret_cast<float*>(p.logits) + row * p.l_s_row;
  if (pos < lo || pos >= hi) {
    if (clean) lrow[c] = -INFINITY;
    return;
  }
  float sf;
  if (p.paged) {
    const int64_t page = p.block_table[b * p.bt_s_row + pos / p.block_kv];
    sf = *reinterpret_cast<const float*>(p.kv_cache + page * p.page_stride +
                                         static_cast<int64_t>(p.block_kv) * p.dim + (pos % p.block_kv) * 4);
  } else {
    sf = p.kv_sf[pos];
  }
  // Heads h = 8t + 2q + e. Per (q, e) a chain over t: the first two heads form fma(relu(s_h0), w_h0,
  // fl32(relu(s_h0+8) * w_h0+8)) (NVCC's contraction of p0 + p1 in DeepGEMM's kernel, probe-verified on an H200:
  // reference/indexer/head_reduction.ts), later heads fma(relu(s), w, S); P_q = fl32(fl32(S_{q,0} + S_{q,1}) * sf);
  // logit = (P_0 + P_1) + (P_2 + P_3) (the xor-1 then xor-2 shuffle adds). deepgemm-ops.md §8.1.
  const float* w = p.weights + row * p.w_s_row;
  const int groups = p.heads / 8;
  float P[4];
#pragma unroll
  for (int q = 0; q < 4; ++q) {
    float S[2];
#pragma unroll
    for (int e = 0; e < 2; ++e) {
      const int h0 = 2 * q + e;
      auto relu_at = [&](int h) {
        const float x = sP[h * (kMqaCols + 1) + tid];
        return x > 0.0f ? x : 0.0f;  // fmaxf(x, 0) semantics: -0 and NaN give +0
      };
      float acc_s;
      int t;
      if (groups >= 2) {
        acc_s = __fmaf_rn(relu_at(h0), w[h0], __fmul_rn(relu_at(h0 + 8), w[h0 + 8]));
        t = 2;
      } else {
        acc_s = __fmul_rn(relu_at(h0), w[h0]);
        t = 1;
      }
      for (; t < groups; ++t) acc_s = __fmaf_rn(relu_at(h0 + 8 * t), w[h0 + 8 * t], acc_s);
      S[e] = acc_s;
    }
    P[q] = __fmul_rn(__fadd_rn(S[0], S[1]), sf);
  }
  const float logit = __fadd_rn(__fadd_rn(P[0], P[1]), __fadd_rn(P[2], P[3]));
  if (p.logits_bf16) {
    reinterpret_cast<__nv_bfloat16*>(p.logits)[row * p.l_s_row + c] = __float2bfloat16_rn(logit);
  } else {
    lrow[c] = logit;
  }
}

cudaError_t launch_mqa_logits(const MqaParams& p, int clean, cudaStream_t stream) {
  const int64_t out_cols = p.max_seqlen_k > 0 ? p.max_seqlen_k : p.cols;
  if (p.rows <= 0 || out_cols <= 0) return cudaSuccess;
  if (p.rows > 65535) return cudaErrorInvalidConfiguration;
  const dim3 grid(static_cast<unsigned>((out_cols + kMqaCols - 1) / kMqaCols), static_cast<unsigned>(p.rows));
  const size_t smem = 64 * 128 + 128 * 128 + 64 * (kMqaCols + 1) * 4 + 1024;
  cudaError_t e = cudaFuncSetAttribute(mqa_logits_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                       static_cast<int>(smem));
  if (e != cudaSuccess) return e;
  mqa_logits_kernel<<<grid, kThreads, smem, stream>>>(p, clean);
  return cudaGetLastError();
}

// ---- paged MQA metadata (SM90 partition) ---------------------------------------------------------------------

__global__ void paged_mqa_metadata_kernel(const int32_t* ctx, int batch, int next_n, int num_sms, int32_t* out) {
  const int s = blockIdx.x * blockDim.x + threadIdx.x;
  if (s > num_sms) return;
  const int64_t atoms = next_n >= 2 ? (next_n + 1) / 2 : next_n;
  int64_t total = 0;
  for (int b = 0; b < batch; ++b) total += (static_cast<int64_t>(ctx[b * next_n + next_n - 1]) + 255) / 256;
  total *= atoms;
  if (s == num_sms) {
    out[2 * s] = static_cast<int32_t>(batch * atoms);
    out[2 * s + 1] = 0;
    return;
  }
  const int64_t q = total / num_sms, r = total % num_sms, pivot = num_sms - r;
  const int64_t seg = s * q + (s - pivot > 0 ? s - pivot : 0);
  int64_t prev = 0, acc = 0;
  int b = 0;
  for (; b < batch; ++b) {
    acc += (static_cast<int64_t>(ctx[b * next_n + next_n - 1]) + 255) / 256;
    if (acc * atoms > seg) break;
    prev = acc;
  }
  if (b == batch) {
    out[2 * s] = static_cast<int32_t>(batch * atoms);
    out[2 * s + 1] = 0;
    return;
  }
  const int64_t off = seg - prev * atoms;
  const int64_t nb = (static_cast<int64_t>(ctx[b * next_n + next_n - 1]) + 255) / 256;
  out[2 * s] = static_cast<int32_t>(nb == 0 ? 0 : b * atoms + off / nb);
  out[2 * s + 1] = static_cast<int32_t>(nb == 0 ? 0 : off % nb);
}

cudaError_t launch_paged_mqa_metadata(const int32_t* context_lens, int batch, int next_n, int block_kv, int num_sms,
                                      int32_t* out, cudaStream_t stream) {
  (void)block_kv;
  paged_mqa_metadata_kernel<<<(num_sms + 1 + 127) / 128, 128, 0, stream>>>(context_lens, batch, next_n, num_sms, out);
  return cudaGetLastError();
}

// ---- clean logits --------------------------------------------------------------------------------------------

__global__ void clean_logits_kernel(const int32_t* ks, const int32_t* ke, float* logits, int64_t valid_cols,
                                    int64_t width, int64_t row_stride, int next_n) {
  const int64_t i = blockIdx.y;
  const int64_t lo = ks ? ks[i / next_n] : 0;
  const int64_t hi = static_cast<int64_t>(ke[i / next_n]) - next_n + (i % next_n) + 1;
  for (int64_t j = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; j < width;
       j += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    if (j >= valid_cols || j < lo || j >= hi) logits[i * row_stride + j] = -INFINITY;
  }
}

cudaError_t launch_clean_logits(const int32_t* ks, const int32_t* ke, float* logits, int64_t rows, int64_t valid_cols,
                                int64_t width, int64_t row_stride, int next_n, cudaStream_t stream) {
  if (rows <= 0 || width <= 0) return cudaSuccess;
  if (rows > 65535) return cudaErrorInvalidConfiguration;
  const int64_t bx = (width + 255) / 256 < 64 ? (width + 255) / 256 : 64;
  const dim3 grid(static_cast<unsigned>(bx), static_cast<unsigned>(rows));
  clean_logits_kernel<<<grid, 256, 0, stream>>>(ks, ke, logits, valid_cols, width, row_stride, next_n);
  return cudaGetLastError();
}

}  // namespace go_sm90
