// Fast SM90 FP8 GEMM (1D2D, BF16 out): TMA loads into a multi-stage mbarrier pipeline, one producer warpgroup and two
// math warpgroups (setmaxnreg), a persistent grid with grouped rasterisation, and a coalesced epilogue through shared
// memory. Numerics are those of sm90_gemm.cu's fp8_gemm_kernel, instruction for instruction: per 128-K block a chain
// of 4 x wgmma m64n128k32 (the first with scale-d = 0) and F = fma(fl32(sa * sb), P, F) on CUDA cores, then bf16 RNE
// (deepgemm-ops.md §6.1), so the bits do not change; tests/gpu/check.cpp compares both paths with the models.
// Used for fp8_gemm (normal), m_grouped contiguous (classic and psum, mk_alignment % 128 == 0) and masked, when A and
// B are K-major with 16-byte aligned rows and the scales are f32 with gran_a_mn = 1, gran_b_mn = 128.
#include <cuda.h>
#include <cuda_bf16.h>
#include <cudaTypedefs.h>

#include <cstdlib>

#include "sm90_common.cuh"
#include "sm90_fast.h"

namespace go_sm90 {

namespace {

constexpr int kStages = 5;
constexpr int kFBM = 128, kFBK = 128;
constexpr int kStageA = kFBM * kFBK;  // bytes
constexpr int kFastThreads = 384;

// BLOCK_N = BN (128, or 64 when there are fewer 128-wide tiles than SMs).
template <int BN>
struct SmemLayout {
  static constexpr int stage_b = BN * kFBK;
  static constexpr int pitch = BN + 8;  // bf16 elements per epilogue row (bank spread)
  static constexpr int a = 0;
  static constexpr int b = kStages * kStageA;
  static constexpr int sfa = b + kStages * stage_b;
  static constexpr int sfb = sfa + kStages * kFBM * 4;
  static constexpr int bars = (sfb + kStages * 4 + 7) / 8 * 8;
  static constexpr int epi = (bars + 2 * kStages * 8 + 15) / 16 * 16;
  static constexpr int total = epi + 2 * 64 * pitch * 2;
};

__device__ __forceinline__ void mbar_init(uint64_t* bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_addr(bar)), "r"(count) : "memory");
}
__device__ __forceinline__ void mbar_wait(uint64_t* bar, uint32_t parity) {
  asm volatile(
      "{\n.reg .pred p;\nWAIT_%=:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n"
      "@!p bra WAIT_%=;\n}\n" ::"r"(smem_addr(bar)),
      "r"(parity)
      : "memory");
}
__device__ __forceinline__ void mbar_arrive(uint64_t* bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(smem_addr(bar)) : "memory");
}
__device__ __forceinline__ void mbar_expect_tx(uint64_t* bar, uint32_t bytes) {
  asm volatile("mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], %1;\n" ::"r"(smem_addr(bar)), "r"(bytes) : "memory");
}
// 4-byte asynchronous copy global -> shared; src_size 0 writes zero (nothing is read).
__device__ __forceinline__ void cp_async4(void* dst, const void* src, bool valid) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(smem_addr(dst)), "l"(src), "r"(valid ? 4 : 0)
               : "memory");
}
// Arrives on the barrier once this thread's earlier cp.async copies have landed (counts as the thread's arrival).
__device__ __forceinline__ void cp_async_arrive(uint64_t* bar) {
  asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\n" ::"r"(smem_addr(bar)) : "memory");
}
__device__ __forceinline__ void tma_load_2d(void* dst, const CUtensorMap* map, uint64_t* bar, int x, int y) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n" ::"r"(
          smem_addr(dst)),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(x), "r"(y), "r"(smem_addr(bar))
      : "memory");
}
__device__ __forceinline__ void wgmma_wait1() { asm volatile("wgmma.wait_group.sync.aligned 1;\n" ::: "memory"); }
__device__ __forceinline__ void named_sync(int id, int threads) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

struct TileInfo {
  bool valid;
  int m0, n0;       // row (within the batch for masked) and column of the tile
  int a_row, b_row;  // TMA row coordinates
  int z, g;          // batch (masked: group) for A/D/SFA; group for B/SFB
  int sfa_rows;      // rows of SFA readable from m0 (within the batch)
  int store_rows[2];
  bool zero[2];
};

template <int BN>
__device__ __forceinline__ TileInfo decode_tile(const FastParams& p, int t) {
  TileInfo ti;
  ti.valid = true;
  ti.z = 0;
  ti.g = 0;
  const int plane = p.m_blocks * p.n_blocks;
  if (p.mode == kFastMasked) {
    ti.z = t / plane;
    t -= ti.z * plane;
  }
  // Grouped rasterisation: runs of 8 m-blocks, n-blocks within a run, so co-resident tiles share A and B panels.
  const int group = t / (8 * p.n_blocks), first_m = group * 8;
  const int gm = min(8, p.m_blocks - first_m);
  const int in = t - group * 8 * p.n_blocks;
  const int mb = first_m + in % gm, nb = in / gm;
  ti.m0 = mb * kFBM;
  ti.n0 = nb * BN;
  int rows_end = p.M;  // rows below this are stored
  switch (p.mode) {
    case kFastNormal:
      break;
    case kFastClassic: {
      const int first = p.gl[(ti.m0 / p.mk_align) * p.mk_align];
      ti.g = first < 0 ? 0 : first;
      break;
    }
    case kFastPsum: {
      int prev = 0;
      ti.valid = false;
      for (int g = 0; g < p.G; ++g) {
        const int end = p.gl[g], start = (prev + p.mk_align - 1) / p.mk_align * p.mk_align;
        const int stop = ((p.psum_flags & 2) && end > start) ? (end + p.mk_align - 1) / p.mk_align * p.mk_align : end;
        if (ti.m0 >= start && ti.m0 < stop) {
          ti.valid = true;
          ti.g = g;
          rows_end = min(stop, p.M);
          break;
        }
        prev = end;
      }
      break;
    }
    case kFastMasked:
      // Tiles starting below masked_m are computed; a 64-row chunk starting at or after masked_m is written as 0.
      ti.g = ti.z;
      if (ti.m0 >= p.masked_m[ti.z]) ti.valid = false;
      break;
  }
  ti.a_row = (p.mode == kFastMasked ? ti.z * p.M : 0) + ti.m0;
  ti.b_row = ti.g * p.N + ti.n0;
  ti.sfa_rows = p.M - ti.m0;
  for (int w = 0; w < 2; ++w) {
    const int r0 = ti.m0 + 64 * w;
    ti.store_rows[w] = max(0, min(64, rows_end - r0));
    ti.zero[w] = (p.mode == kFastClassic && r0 < p.M && p.gl[r0] < 0) ||
                 (p.mode == kFastMasked && r0 >= p.masked_m[ti.z]);
  }
  return ti;
}

template <int BN>
__global__ void __launch_bounds__(kFastThreads, 1)
    fp8_gemm_fast_kernel(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
                         const FastParams p) {
  using L = SmemLayout<BN>;
  constexpr int kStageB = L::stage_b, kEpiPitch = L::pitch, NA = BN / 2;
  extern __shared__ uint8_t smem_raw[];
  uint8_t* smem = align1024(smem_raw);
  uint8_t* sA = smem + L::a;
  uint8_t* sB = smem + L::b;
  float* sSfa = reinterpret_cast<float*>(smem + L::sfa);
  float* sSfb = reinterpret_cast<float*>(smem + L::sfb);
  uint64_t* full = reinterpret_cast<uint64_t*>(smem + L::bars);
  uint64_t* empty = full + kStages;
  __nv_bfloat16* sEpi = reinterpret_cast<__nv_bfloat16*>(smem + L::epi);
  const int wg = threadIdx.x / 128, tid = threadIdx.x % 128;
  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) {
      mbar_init(&full[s], 128);
      mbar_init(&empty[s], 256);
    }
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    fence_proxy_async();
  }
  __syncthreads();
  const int total = p.tiles;
  const int nkb = (p.K + kFBK - 1) / kFBK;
  if (wg == 0) {
    // Producer: TMA for A and B, cp.async for the scales; every thread arrives on the stage's full barrier.
    asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n" ::: "memory");
    uint32_t it = 0;
    for (int t = blockIdx.x; t < total; t += gridDim.x) {
      const TileInfo ti = decode_tile<BN>(p, t);
      if (!ti.valid) continue;
      const float* sfa_base = p.sfa + ti.z * p.sfa_s_batch + static_cast<int64_t>(ti.m0) * p.sfa_s_row;
      const float* sfb_base = p.sfb + ti.g * p.sfb_s_batch + static_cast<int64_t>(ti.n0 / 128) * p.sfb_s_row;
      for (int kb = 0; kb < nkb; ++kb, ++it) {
        const int s = it % kStages;
        mbar_wait(&empty[s], ((it / kStages) & 1) ^ 1);
        // The scales travel by cp.async and the operands by TMA, all completing on the stage's full barrier, so
        // the producer never waits on a global load.
        if (tid == 0) {
          mbar_expect_tx(&full[s], kStageA + kStageB);
          tma_load_2d(sA + s * kStageA, &map_a, &full[s], kb * kFBK, ti.a_row);
          tma_load_2d(sB + s * kStageB, &map_b, &full[s], kb * kFBK, ti.b_row);
          cp_async4(&sSfb[s], sfb_base + kb * p.sfb_s_kb, true);
        }
        const bool ok = tid < ti.sfa_rows;
        cp_async4(&sSfa[s * kFBM + tid], ok ? sfa_base + tid * p.sfa_s_row + kb * p.sfa_s_kb : sfa_base, ok);
        cp_async_arrive(&full[s]);
      }
    }
    asm volatile("cp.async.wait_all;\n" ::: "memory");  // no copy outlives its thread
  } else {
    asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n" ::: "memory");
    const int w = wg - 1;
    __nv_bfloat16* epi = sEpi + w * 64 * kEpiPitch;
    uint32_t it = 0;
    float F[NA], P[NA], P2[NA];
#pragma unroll
    for (int i = 0; i < NA; ++i) P[i] = 0.0f, P2[i] = 0.0f;
    for (int t = blockIdx.x; t < total; t += gridDim.x) {
      const TileInfo ti = decode_tile<BN>(p, t);
      if (!ti.valid) continue;
#pragma unroll
      for (int i = 0; i < NA; ++i) F[i] = 0.0f;
      // Two accumulator sets: the 4 wgmmas of block kb+1 run on the tensor cores while block kb is promoted on the
      // CUDA cores. Same instructions and the same F = fma(fl32(sa * sb), P, F) order, so the bits do not change.
      auto issue = [&](float(&acc)[NA], uint32_t at) {
        const int s = at % kStages;
        mbar_wait(&full[s], (at / kStages) & 1);
        const uint8_t* a_tile = sA + s * kStageA + w * 64 * 128;
        const uint8_t* b_tile = sB + s * kStageB;
        fence_operand(acc);
        wgmma_fence();
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          wgmma_fp8(acc, desc_kmajor_sw128(smem_addr(a_tile + j * 32)), desc_kmajor_sw128(smem_addr(b_tile + j * 32)),
                    j);
        }
        wgmma_commit();
      };
      auto promote = [&](float(&acc)[NA], uint32_t at) {
        fence_operand(acc);
        const int s = at % kStages;
        const int r0 = acc_row(tid, 0);
        const float sa0 = sSfa[s * kFBM + w * 64 + r0], sa1 = sSfa[s * kFBM + w * 64 + r0 + 8];
        const float sb = sSfb[s];
        mbar_arrive(&empty[s]);
        const float s0 = __fmul_rn(sa0, sb), s1 = __fmul_rn(sa1, sb);
#pragma unroll
        for (int i = 0; i < NA; ++i) F[i] = __fmaf_rn((i & 2) ? s1 : s0, acc[i], F[i]);
      };
      issue(P, it);
      int kb = 0;
      for (; kb + 2 < nkb; kb += 2) {  // at the top, block kb is in flight in P
        issue(P2, it + 1);
        wgmma_wait1();
        promote(P, it);
        ++it;
        issue(P, it + 1);
        wgmma_wait1();
        promote(P2, it);
        ++it;
      }
      if (nkb - kb == 2) {
        issue(P2, it + 1);
        wgmma_wait1();
        promote(P, it);
        ++it;
        wgmma_wait0();
        promote(P2, it);
        ++it;
      } else {
        wgmma_wait0();
        promote(P, it);
        ++it;
      }
      // Epilogue: bf16 RNE into shared memory, then 16-byte coalesced stores with M/N bounds.
      const bool zero = w ? ti.zero[1] : ti.zero[0];
#pragma unroll
      for (int i = 0; i < NA; i += 2) {
        const int r = acc_row(tid, i), c = acc_col(tid, i);
        __nv_bfloat162 v;
        v.x = __float2bfloat16_rn(zero ? 0.0f : F[i]);
        v.y = __float2bfloat16_rn(zero ? 0.0f : F[i + 1]);
        *reinterpret_cast<__nv_bfloat162*>(epi + r * kEpiPitch + c) = v;
      }
      named_sync(1 + w, 128);
      const int rows = w ? ti.store_rows[1] : ti.store_rows[0];
      __nv_bfloat16* dbase = p.d + ti.z * p.d_s_batch + static_cast<int64_t>(ti.m0 + 64 * w) * p.d_s_row + ti.n0;
      for (int idx = tid; idx < 64 * (BN / 8); idx += 128) {
        const int r = idx / (BN / 8), c = (idx % (BN / 8)) * 8;
        if (r >= rows) continue;
        __nv_bfloat16* dst = dbase + static_cast<int64_t>(r) * p.d_s_row + c;
        const __nv_bfloat16* src = epi + r * kEpiPitch + c;
        if (ti.n0 + c + 8 <= p.N && (reinterpret_cast<uintptr_t>(dst) & 15) == 0) {
          *reinterpret_cast<uint4*>(dst) = *reinterpret_cast<const uint4*>(src);
        } else {
          for (int e = 0; e < 8; ++e)
            if (ti.n0 + c + e < p.N) dst[e] = src[e];
        }
      }
      named_sync(1 + w, 128);
    }
  }
}

PFN_cuTensorMapEncodeTiled_v12000 encode_fn() {
  static PFN_cuTensorMapEncodeTiled_v12000 fn = [] {
    void* f = nullptr;
    cudaDriverEntryPointQueryResult q;
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &f, 12000, cudaEnableDefault, &q) != cudaSuccess ||
        q != cudaDriverEntryPointSuccess) {
      cudaGetLastError();
      return static_cast<PFN_cuTensorMapEncodeTiled_v12000>(nullptr);
    }
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(f);
  }();
  return fn;
}

bool make_map(CUtensorMap* map, const void* base, uint64_t rows, uint64_t k, uint64_t row_stride_bytes, uint32_t box_rows) {
  auto fn = encode_fn();
  if (!fn) return false;
  const cuuint64_t dims[2] = {k, rows};
  const cuuint64_t strides[1] = {row_stride_bytes};
  const cuuint32_t box[2] = {kFBK, box_rows};
  const cuuint32_t estr[2] = {1, 1};
  return fn(map, CU_TENSOR_MAP_DATA_TYPE_UINT8, 2, const_cast<void*>(base), dims, strides, box, estr,
            CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
            CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

}  // namespace

template <int BN>
cudaError_t launch_bn(FastParams p, const CUtensorMap& ma, const CUtensorMap& mb, int sms, cudaStream_t stream) {
  p.n_blocks = (p.N + BN - 1) / BN;
  p.tiles = p.m_blocks * p.n_blocks * (p.mode == kFastMasked ? p.G : 1);
  if (p.tiles == 0) return cudaSuccess;
  const size_t smem = SmemLayout<BN>::total + 1024;
  cudaError_t e = cudaFuncSetAttribute(fp8_gemm_fast_kernel<BN>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                       static_cast<int>(smem));
  if (e != cudaSuccess) return e;
  const int grid = p.tiles < sms ? p.tiles : sms;
  fp8_gemm_fast_kernel<BN><<<grid, kFastThreads, smem, stream>>>(ma, mb, p);
  return cudaGetLastError();
}

cudaError_t launch_fp8_gemm_fast(FastParams p, const void* a, int64_t a_rows, int64_t a_row_stride, const void* b,
                                 int64_t b_rows, int64_t b_row_stride, cudaStream_t stream, bool* used) {
  *used = false;
  int dev = 0, sms = 132;
  cudaGetDevice(&dev);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
  p.m_blocks = (p.M + kFBM - 1) / kFBM;
  // Per-shape BLOCK_N: 64 when 128-wide tiles would leave SMs idle (small M), else 128. GO_CUDA_BLOCK_N forces one.
  const int64_t tiles128 = static_cast<int64_t>(p.m_blocks) * ((p.N + 127) / 128) * (p.mode == kFastMasked ? p.G : 1);
  int bn = tiles128 < sms ? 64 : 128;
  if (const char* f = std::getenv("GO_CUDA_BLOCK_N")) bn = std::atoi(f) == 64 ? 64 : 128;
  CUtensorMap ma, mb;
  if (!make_map(&ma, a, a_rows, p.K, a_row_stride, kFBM) || !make_map(&mb, b, b_rows, p.K, b_row_stride, bn))
    return cudaSuccess;
  *used = true;
  return bn == 64 ? launch_bn<64>(p, ma, mb, sms, stream) : launch_bn<128>(p, ma, mb, sms, stream);
}

}  // namespace go_sm90
