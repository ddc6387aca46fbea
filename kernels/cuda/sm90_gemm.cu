// SM90 GEMM kernels: FP8 (e4m3 wgmma, promotion every 128 K on CUDA cores) and BF16 (bf16 wgmma, one chain
// over all of K). One warpgroup per CTA computes a 64 x 128 output tile; each K step gathers the operands
// (any strides) into 128-byte-swizzled shared tiles and issues 4 wgmmas.
//
// Numerics (docs/deepgemm-ops.md §6.1, §6.2, §6.4; numerics.md §8.2b):
//  FP8:  per 128-K block b, P = chain of 4 x wgmma m64n128k32 (the first with scale-d = 0);
//        F = fma(fl32(sa * sb), P, F) from F = 0; 1D2D: sb = sfb[n / 128][b]; 1D1D: sb = sfb[n][b].
//  BF16: acc = chain of wgmma m64n128k16 over all of K (scale-d = 1 onto a zeroed accumulator).
//  Output: bf16 RNE, fp32, or fp32/bf16 reduce-add onto C (see OutKind).
#include <cuda_bf16.h>

#include "sm90_common.cuh"
#include "sm90_params.h"

namespace go_sm90 {

constexpr int kBM = 64, kBN = 128;

struct Tile {
  View2 a, b;              // at (row0, k = 0) and (n0, k = 0)
  Mat a_k, b_k;            // K-direction addressing: s_col (element stride along K), s_batch (k_inner slices)
  int64_t k;               // effective K
  int64_t kb0;             // first scale column (k-grouped)
  const uint8_t* sfa;      // at (scale row 0, kb0), batch applied (element size 4, or 1 for UE8M0)
  const uint8_t* sfb;
  int64_t row0, n0;
  int sfa_rows;            // tile rows whose scales may be read
  int64_t sfa_s_row, sfa_s_kb, sfb_s_row, sfb_s_kb;
  uint8_t* d;              // at (row0, col 0), batch applied
  const uint8_t* c;        // at (row0, col 0), batch applied
  int store_rows;
  bool zero;               // write zeros, compute nothing
  bool copy_c;             // effective K == 0 with C: D = C
};

// Resolves the CTA's tile; false = nothing to do.
template <int ES>
__device__ bool setup_tile(const GemmParams& p, int mt, int nt, int z, Tile& t) {
  const int64_t row0 = static_cast<int64_t>(mt) * kBM, n0 = static_cast<int64_t>(nt) * kBN;
  int64_t zb = z;  // batch index for A/D/C/SFA
  int64_t gb = z;  // batch index for B/SFB (group)
  int64_t rows_valid = p.M - row0;
  int64_t a_row_stride = p.a.s_row, b_row_stride = p.b.s_row;
  int64_t a_off = 0, b_off = 0;  // extra element offsets (k-grouped)
  t.k = p.K;
  t.kb0 = 0;
  t.zero = false;
  t.copy_c = false;
  if (row0 >= p.M) return false;
  switch (p.mode) {
    case kModeNormal:
      break;
    case kModeMGroupClassic: {
      zb = 0;
      const int first = p.grouped_layout[row0];
      if (first < 0) {
        t.zero = true;
        gb = 0;
      } else {
        const int g = p.grouped_layout[(row0 / p.mk_align) * p.mk_align];
        gb = g < 0 ? 0 : g;
      }
      break;
    }
    case kModeMGroupPsum: {
      zb = 0;
      int64_t prev_end = 0;
      gb = -1;
      for (int g = 0; g < p.num_groups; ++g) {
        const int64_t end = p.grouped_layout[g];
        const int64_t start = (prev_end + p.mk_align - 1) / p.mk_align * p.mk_align;
        // psum_flags bit 1 (ensure_zero_padding): a non-empty group also computes [end, align(end, mk_align)).
        const int64_t stop = ((p.psum_flags & 2) && end > start) ? (end + p.mk_align - 1) / p.mk_align * p.mk_align : end;
        if (row0 >= start && row0 < stop) {
          gb = g;
          rows_valid = (stop < p.M ? stop : p.M) - row0;
          break;
        }
        prev_end = end;
      }
      if (gb < 0) return false;
      break;
    }
    case kModeMasked: {
      // As DeepGEMM's BLOCK_M = 128 tiles: tiles starting below masked_m are computed; inside them SM90 writes 0 for a
      // 64-row chunk starting at or after masked_m (gemm_oracle.h, deepgemm-ops.md §5.4); later rows are not written.
      const int64_t mm = p.masked_m[z];
      if (row0 / 128 * 128 >= mm) return false;
      if (row0 >= mm) t.zero = true;
      break;
    }
    case kModeKGroupFlat:
    case kModeKGroupStrided: {
      int64_t s = 0, sb = 0;
      for (int h = 0; h < z; ++h) {
        s += p.ks[h];
        sb += (p.ks[h] + 127) / 128;
      }
      t.k = p.ks[z];
      t.kb0 = sb;
      gb = z;
      if (p.mode == kModeKGroupFlat) {
        a_off = p.M * s;
        b_off = p.N * s;
        a_row_stride = t.k;
        b_row_stride = t.k;
        zb = 0;
        gb = 0;
      } else {
        a_off = s * p.a.s_col;
        b_off = s * p.b.s_col;
        zb = 0;
        gb = 0;
      }
      break;
    }
    default:
      return false;
  }
  if (t.k == 0) t.copy_c = true;
  if (rows_valid > kBM) rows_valid = kBM;
  t.store_rows = static_cast<int>(rows_valid);
  const int read_rows = p.mode == kModeMGroupClassic ? static_cast<int>((p.M - row0 < kBM ? p.M - row0 : kBM))
                                                     : t.store_rows;
  t.a.p = static_cast<const uint8_t*>(p.a.p) + (a_off + row0 * a_row_stride + zb * p.a.s_batch) * ES;
  t.a.s_row = a_row_stride;
  t.a.s_k = p.a.s_col;
  t.a.rows = read_rows;
  t.a.k = t.k;
  t.b.p = static_cast<const uint8_t*>(p.b.p) + (b_off + n0 * b_row_stride + gb * p.b.s_batch) * ES;
  t.b.s_row = b_row_stride;
  t.b.s_k = p.b.s_col;
  t.b.rows = static_cast<int>((p.N - n0 < kBN ? p.N - n0 : kBN));
  t.b.k = t.k;
  t.a_k = p.a;
  t.b_k = p.b;
  if (p.mode == kModeKGroupFlat) {
    t.a_k.s_col = 1;
    t.b_k.s_col = 1;
  }
  t.row0 = row0;
  t.n0 = n0;
  if (p.sfa.p != nullptr) {
    t.sfa = static_cast<const uint8_t*>(p.sfa.p) +
            (t.kb0 * p.sfa.s_col + zb * p.sfa.s_batch) * (p.sfa_ue8m0 ? 1 : 4);
    t.sfa_s_row = p.sfa.s_row;
    t.sfa_s_kb = p.sfa.s_col;
    t.sfa_rows = read_rows;
    t.sfb = static_cast<const uint8_t*>(p.sfb.p) +
            (t.kb0 * p.sfb.s_col + gb * p.sfb.s_batch) * (p.sfb_ue8m0 ? 1 : 4);
    t.sfb_s_row = p.sfb.s_row;
    t.sfb_s_kb = p.sfb.s_col;
  }
  int64_t dz = z;
  if (p.mode == kModeMGroupClassic || p.mode == kModeMGroupPsum) dz = 0;
  const int des = (p.out_kind == kOutBf16 || p.out_kind == kOutBf16AddC || p.out_kind == kOutBf16AddCOnce) ? 2 : 4;
  t.d = static_cast<uint8_t*>(const_cast<void*>(p.d.p)) + (row0 * p.d.s_row + dz * p.d.s_batch) * des;
  t.c = p.c.p == nullptr ? nullptr
                         : static_cast<const uint8_t*>(p.c.p) + (row0 * p.c.s_row + dz * p.c.s_batch) * des;
  return true;
}

// View of the operand at K offset k0 (handles k_inner slices of consecutive batches).
__device__ __forceinline__ View2 view_at(const View2& v, const Mat& m, int64_t k_inner, int64_t k0, int es) {
  View2 r = v;
  if (k_inner > 0) {
    const int64_t bb = k0 / k_inner, kk = k0 - bb * k_inner;
    r.p = v.p + (bb * m.s_batch + kk * m.s_col) * es;
    r.k = k_inner - kk;
  } else {
    r.p = v.p + k0 * v.s_k * es;
    r.k = v.k - k0;
  }
  return r;
}

// A scale value: f32, or a UE8M0 code 2^(c-127) (0x00 = 2^-127, an fp32 subnormal; 0xFF = NaN).
__device__ __forceinline__ float load_sf(const uint8_t* base, int64_t idx, int ue8m0) {
  if (!ue8m0) return reinterpret_cast<const float*>(base)[idx];
  const uint32_t c = base[idx];
  return __uint_as_float(c == 0 ? 0x00400000u : (c == 0xFFu ? 0x7FC00000u : c << 23));
}

__device__ __forceinline__ int64_t phys_col(const GemmParams& p, int64_t j) {
  if (p.head_l + p.head_r == 0) return j;
  return j + (j + p.head_r) / (p.head_l + p.head_r) * p.head_mid;
}

__device__ __forceinline__ void store_tile(const GemmParams& p, const Tile& t, int nt, const float (&acc)[64]) {
  const int tid = threadIdx.x;
  const int64_t n0 = static_cast<int64_t>(nt) * kBN;
#pragma unroll
  for (int i = 0; i < 64; ++i) {
    const int r = acc_row(tid, i);
    const int64_t n = n0 + acc_col(tid, i);
    if (r >= t.store_rows || n >= p.N) continue;
    const int64_t off = r * p.d.s_row + phys_col(p, n) * p.d.s_col;
    const float v = t.zero ? 0.0f : acc[i];
    switch (p.out_kind) {
      case kOutBf16:
        reinterpret_cast<__nv_bfloat16*>(t.d)[off] = __float2bfloat16_rn(v);
        break;
      case kOutF32:
        reinterpret_cast<float*>(t.d)[off] = v;
        break;
      case kOutF32AddC: {
        const float cv = reinterpret_cast<const float*>(t.c)[r * p.c.s_row + n * p.c.s_col];
        reinterpret_cast<float*>(t.d)[off] = t.copy_c ? cv : __fadd_rn(cv, v);
        break;
      }
      case kOutBf16AddCOnce: {
        const __nv_bfloat16 cb = reinterpret_cast<const __nv_bfloat16*>(t.c)[r * p.c.s_row + n * p.c.s_col];
        reinterpret_cast<__nv_bfloat16*>(t.d)[off] = t.copy_c ? cb : __float2bfloat16_rn(__fadd_rn(__bfloat162float(cb), v));
        break;
      }
      case kOutBf16AddC: {
        const __nv_bfloat16 cb = reinterpret_cast<const __nv_bfloat16*>(t.c)[r * p.c.s_row + n * p.c.s_col];
        reinterpret_cast<__nv_bfloat16*>(t.d)[off] =
            t.copy_c ? cb : __float2bfloat16_rn(__fadd_rn(__bfloat162float(cb), __bfloat162float(__float2bfloat16_rn(v))));
        break;
      }
    }
  }
}

__global__ void __launch_bounds__(kThreads) fp8_gemm_kernel(const GemmParams p) {
  extern __shared__ uint8_t smem_raw[];
  uint8_t* sA = align1024(smem_raw);
  uint8_t* sB = sA + kBM * 128;
  Tile t;
  if (!setup_tile<1>(p, blockIdx.y, blockIdx.x, blockIdx.z, t)) return;
  const int tid = threadIdx.x;
  float F[64], P[64];
#pragma unroll
  for (int i = 0; i < 64; ++i) F[i] = 0.0f, P[i] = 0.0f;
  if (!t.zero && !t.copy_c) {
    const int64_t nkb = (t.k + 127) / 128;
    for (int64_t kb = 0; kb < nkb; ++kb) {
      load_tile<1>(sA, view_at(t.a, t.a_k, 0, kb * 128, 1), kBM, 0);
      load_tile<1>(sB, view_at(t.b, t.b_k, 0, kb * 128, 1), kBN, 0);
      fence_proxy_async();
      __syncthreads();
      fence_operand(P);
      wgmma_fence();
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        WgmmaFp8<128>::mma(P, desc_kmajor_sw128(smem_addr(sA + j * 32)), desc_kmajor_sw128(smem_addr(sB + j * 32)),
                             j);
      }
      wgmma_commit();
      wgmma_wait0();
      fence_operand(P);
      // Promotion on CUDA cores: F = fma(fl32(sa * sb), P, F) (deepgemm-ops.md §6.1 step 2, §6.2).
      const int r0 = acc_row(tid, 0), r1 = r0 + 8;
      const float sa0 = r0 < t.sfa_rows ? load_sf(t.sfa, ((t.row0 + r0) / p.gran_a) * t.sfa_s_row + kb * t.sfa_s_kb, p.sfa_ue8m0) : 0.0f;
      const float sa1 = r1 < t.sfa_rows ? load_sf(t.sfa, ((t.row0 + r1) / p.gran_a) * t.sfa_s_row + kb * t.sfa_s_kb, p.sfa_ue8m0) : 0.0f;
      if (p.gran_b % kBN != 0) {
#pragma unroll
        for (int i = 0; i < 64; ++i) {
          const int col = acc_col(tid, i);
          const float sb =
              col < t.b.rows ? load_sf(t.sfb, ((t.n0 + col) / p.gran_b) * t.sfb_s_row + kb * t.sfb_s_kb, p.sfb_ue8m0) : 0.0f;
          const float s = __fmul_rn((i & 2) ? sa1 : sa0, sb);
          F[i] = __fmaf_rn(s, P[i], F[i]);
        }
      } else {
        const float sb = load_sf(t.sfb, (t.n0 / p.gran_b) * t.sfb_s_row + kb * t.sfb_s_kb, p.sfb_ue8m0);
        const float s0 = __fmul_rn(sa0, sb), s1 = __fmul_rn(sa1, sb);
#pragma unroll
        for (int i = 0; i < 64; ++i) F[i] = __fmaf_rn((i & 2) ? s1 : s0, P[i], F[i]);
      }
      __syncthreads();
    }
  }
  store_tile(p, t, blockIdx.x, F);
}

__global__ void __launch_bounds__(kThreads) bf16_gemm_kernel(const GemmParams p) {
  extern __shared__ uint8_t smem_raw[];
  uint8_t* sA = align1024(smem_raw);
  uint8_t* sB = sA + kBM * 128;
  Tile t;
  if (!setup_tile<2>(p, blockIdx.y, blockIdx.x, blockIdx.z, t)) return;
  float acc[64];
#pragma unroll
  for (int i = 0; i < 64; ++i) acc[i] = 0.0f;
  if (!t.zero && !t.copy_c) {
    const int64_t ktot = t.k;  // with k_inner the host sets K = slices * k_inner
    const int64_t nkt = (ktot + 63) / 64;
    for (int64_t kt = 0; kt < nkt; ++kt) {
      load_tile<2>(sA, view_at(t.a, t.a_k, p.k_inner, kt * 64, 2), kBM, 0);
      load_tile<2>(sB, view_at(t.b, t.b_k, p.k_inner, kt * 64, 2), kBN, 0);
      fence_proxy_async();
      __syncthreads();
      fence_operand(acc);
      wgmma_fence();
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        WgmmaBf16<128>::mma(acc, desc_kmajor_sw128(smem_addr(sA + j * 32)),
                              desc_kmajor_sw128(smem_addr(sB + j * 32)), 1);
      }
      wgmma_commit();
      wgmma_wait0();
      fence_operand(acc);
      __syncthreads();
    }
  }
  store_tile(p, t, blockIdx.x, acc);
}

static cudaError_t launch(const GemmParams& p, cudaStream_t stream, bool fp8) {
  if (p.M <= 0 || p.N <= 0 || p.batch <= 0) return cudaSuccess;
  const int64_t mt = (p.M + kBM - 1) / kBM, nt = (p.N + kBN - 1) / kBN;
  if (mt > 65535 || nt > 2147483647LL || p.batch > 65535) return cudaErrorInvalidConfiguration;
  const dim3 grid(static_cast<unsigned>(nt), static_cast<unsigned>(mt), static_cast<unsigned>(p.batch));
  const size_t smem = (kBM + kBN) * 128 + 1024;
  if (fp8) {
    fp8_gemm_kernel<<<grid, kThreads, smem, stream>>>(p);
  } else {
    bf16_gemm_kernel<<<grid, kThreads, smem, stream>>>(p);
  }
  return cudaGetLastError();
}

cudaError_t launch_fp8_gemm(const GemmParams& p, cudaStream_t stream) { return launch(p, stream, true); }
cudaError_t launch_bf16_gemm(const GemmParams& p, cudaStream_t stream) { return launch(p, stream, false); }

}  // namespace go_sm90
