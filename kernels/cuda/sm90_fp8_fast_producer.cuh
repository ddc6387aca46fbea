// The producer warpgroup of the fast SM90 FP8 GEMM (sm90_fp8_fast_kernel.cuh): the TMA loads of A, B and SFA into the
// stage ring (fast_producer, its first three warps) and the B scales per tile window (fast_sfb_loader, its last warp).
#pragma once
#include <cuda.h>

#include <cstdint>

#include "sm90_async.cuh"
#include "sm90_fp8_fast_config.cuh"
#include "sm90_fp8_fast_profile.cuh"

namespace go_sm90 {

/// Whether this kernel waits for the kernel before it on the stream (griddepcontrol.wait, fast_dependency_wait) only
/// in the threads that read global memory, each just before its first read: the producer's loading threads
/// (fast_producer) and the SFB loader. So in dense shape-class kernels (mode compiled in as normal, no split K) the
/// producer's setmaxnreg, its first tile's walk and its first stage's wait run while the kernel before still ends. The
/// other threads' only global accesses are the math's stores of D, which come after data those threads loaded, so
/// after their wait. Grouped kernels read the group layout or masked_m in every thread's tile walk, so all their
/// threads wait at the top (fp8_fast_body). The dense call path needs K > 0, so a dense tile always has a K block to
/// wait before. Against the wait at the top (H200, tests/gpu/run.sh's ab step, 3 runs a side): dense M in {64, 128}
/// 1.033x geomean over 14 shapes, 13 faster with the runs apart (64 x 32768 x 512 8.3 -> 7.8 us, 128 x 576 x 7168
/// 8.6 -> 8.1 us), 1 slower (128 x 7168 x 16384, 38.1 -> 38.3 us); an unmodified copy in the same call 0.999x, none
/// apart. At M = 4096 (1.069x, 1.026x) the copy had 1.056x and 1.003x: no gain shown there.
template <class C>
__device__ constexpr bool fast_late_wait() {
  return C::kMode == kFastNormal && !C::kSplitK;
}
__device__ __forceinline__ void fast_dependency_wait() {
  if constexpr ((kFastProfile & kProfNoDependencyWait) == 0) grid_dependency_wait();
}

/// The SFB loader, the producer's last warp: walks this CTA's tiles and, for each window of a tile's K blocks
/// (fast_windows), copies the B scales of every slot the tile touches into window buffer wn % 2 once the math threads
/// have freed it, arriving on its full barrier when the copies have landed. It runs up to two windows ahead of the
/// math, so the scales' latency is off the K loop. A slot past N's last scale block is not copied (its columns are not
/// stored). Split K promotes in its second kernel: no scales here.
template <class C>
__device__ __forceinline__ void fast_sfb_loader(const FastParams& p, const FastRing<C>& ring, int lane, int rank,
                                                int cluster, int clusters, int N) {
  const int sfb_rows = (N + 127) / 128;
  uint32_t wn = 0;
  for (int u = cluster; u < p.units; u += clusters) {
    const FastTile ti = fast_tile<C>(p, u, rank, N);
    if (!ti.valid || !ti.compute) continue;
    const float* base = p.sfb + ti.g * p.sfb_s_batch;
    const int nk = ti.kb1 - ti.kb0, nw = fast_windows(nk);
    for (int wi = 0; wi < nw; ++wi, ++wn) {
      const int w0 = fast_window_start(nk, nw, wi), w1 = fast_window_start(nk, nw, wi + 1);
      const int buf = static_cast<int>(wn & 1);
      mbar_wait(ring.sfb_empty_u + 8 * buf, ((wn >> 1) & 1) ^ 1);
      if (fast_late_wait<C>() && wn == 0) fast_dependency_wait();  // before the first window's copies
      const uint32_t dst = smem_addr(ring.sfb + buf * FastRing<C>::kSfbFloats);
#pragma unroll
      for (int j = 0; j < C::kSfbSlots; ++j) {
        const int row = ti.n0 / 128 + j;
        if (row < sfb_rows) {
          for (int k = lane; k < w1 - w0; k += 32)
            cp_async4(dst + 4 * (j * kSfbWindow + k), base + row * p.sfb_s_row + (ti.kb0 + w0 + k) * p.sfb_s_kb, true);
        }
      }
      cp_async_arrive(ring.sfb_full_u + 8 * buf);
      // The tile's zero chunks (bit c: chunk c), for the math's epilogue: contiguous rows of group -1 take a load of
      // grouped_layout each, whose latency stood before the math's K loop (about 1200 cycles a tile at 4 x 8192 x 4096
      // x 2048, H200 cycle trace). The arrival after the store releases it to the waiting math threads.
      if (lane == 0) {
        st_shared_u32(ring.zero_u + 8 * buf, (ti.zero[0] ? 1u : 0u) | (ti.zero[1] ? 2u : 0u) | (ti.zero[2] ? 4u : 0u) |
                                                 (ti.zero[3] ? 8u : 0u));
        mbar_arrive_local(ring.sfb_full_u + 8 * buf);
      }
    }
  }
  asm volatile("cp.async.wait_all;\n" ::: "memory");  // no copy outlives its thread
}

/// Whether the producer warp whose first thread is `tid` (0, 32, 64) issues loads when SFA comes by TMA: warp 0, and
/// warp 2 too with spread (B's copies). fp8_fast_body asks it of each warp: a warp that issues nothing does not walk
/// the tiles. (With SFA copied all three warps copy its rows.)
template <class C>
__device__ __forceinline__ bool fast_issues(int tid) {
  return tid == 0 || (C::kSpread && tid == 64);
}

/// B's first box into L2 (fast_late_wait kernels with SFA by TMA, by the thread that will copy it, before its
/// dependency wait): the weights' DRAM latency then runs while the kernel before ends. L2 is where every SM's writes
/// land, so a line fetched early cannot hide a later write of the kernel before (tests/gpu/pdl_check.cu, case 4).
/// Against the wait alone (H200, tests/gpu/run.sh's ab step, 3 runs a side, 19 shapes): 1.007x geomean, 8 faster and 1
/// slower with the runs apart (dense 128 x 32768 x 512 9.6 -> 9.2 us, 64 x 32768 x 512 7.8 -> 7.5 us, 128 x 4096 x 7168
/// 13.4 -> 13.1 us; 64 x 7168 x 2048 6.5 -> 6.6 us); an unmodified copy in the same call 0.999x, none faster.
/// Prefetching A's box as well lost (0.986x, 8 slower): every CTA of a row of tiles asks L2 for the same A box. So did
/// B's box 8 or 16 K blocks ahead of every load (BLOCK_M <= 128): the masked 20-row shapes took 15-25 % longer at 8
/// ahead, 26-75 % at 16 (32 x 20 x 4096 x 2048 77.0 -> 88.2 and 126.8 us), dense ones up to 30 % (128 x 7168 x 16384
/// 37.5 -> 48.9 us); docs/performance-history.md, thirty-first round.
template <class C>
__device__ __forceinline__ void fast_prefetch_b(const CUtensorMap& map_b, int b_row, int kb) {
  if constexpr (C::kKtma > 1) tma_prefetch_l2_3d(&map_b, 0, b_row, kb);
  else tma_prefetch_l2_2d(&map_b, kb * kFBK, b_row);
}

/// The producer's first three warps: for each tile of this CTA and each K block (ktma=N: each N K blocks), wait for
/// free stages and issue their loads, all completing on the first stage's full barrier. With SFA by TMA (kSfaTma) the
/// caller is one thread, elected in warp 0 (elect_one): it issues the TMA copies of A (this CTA's share, multicast), B
/// and SFA, and arrives with the bytes to expect; with spread, warp 0's thread copies SFA and A, warp 2's B (a single
/// issuing thread bounded the K loop at small M: a trace of CTA 0 at 64 x 4096 x 7168 showed about 500 cycles per K
/// block from one free stage to the next, the stages all free long before). With SFA copied (!kSfaTma) all 96 threads
/// call: warp 0's elected thread issues A and B, and every thread copies SFA rows and arrives once they have landed.
///
/// Why elected: under a per-thread condition (tid == 0) ptxas wraps each TMA copy in a loop over the active threads'
/// operand values (ELECT, R2UR, UTMALDG, BRA.U.ANY); a cycle trace at 4096 x 7168 x 16384 had 429 cycles from a free
/// stage to its copies issued. Under elect.sync it knows one thread runs and moves the operands to uniform registers
/// once. Same call, against the per-thread producer, 20 shapes: 1.038x -> 1.069x DeepGEMM (geomean; ours 0.984x the
/// time), 128 x 2112 x 7168 1.080x -> 1.175x (docs/performance-history.md, "Issue 26, tenth round").
template <class C, bool kSfaTma>
__device__ __forceinline__ void fast_producer(const CUtensorMap& map_a, const CUtensorMap& map_b,
                                              const CUtensorMap& map_sfa, const FastParams& p, const FastRing<C>& ring,
                                              int tid, int rank, int cluster, int clusters, int N, int nkb) {
  constexpr int BM = C::BM, kStages = C::kStages, kKtma = C::kKtma, MC = C::kMulticast;
  constexpr int kStageA = FastRing<C>::L.stage_a, kStageB = FastRing<C>::L.stage_b;
  // Bytes per copy (ktma=N: N stages' worth).
  constexpr int kTxA = kKtma * kStageA, kTxB = kKtma * kStageB, kTxSfa = kKtma * BM * 4;
  constexpr bool spread = C::kSpread && kSfaTma;
  const uint32_t a_u = smem_addr(ring.a), b_u = smem_addr(ring.b), sfa_u = smem_addr(ring.sfa);
  // False but for masked calls at BLOCK_M 128 and 256.
  const bool by_chunk = fast_a_by_chunk(fast_mode<C>(p), p.split_k, BM, MC, kKtma, p.M);
  uint32_t it = 0;
  GO_FAST_TRACE_AT(0, 23, clock64());
  for (int u = cluster; u < p.units; u += clusters) {
    const FastTile ti = fast_tile<C>(p, u, rank, N);
    if (it == 0) GO_FAST_TRACE_AT(0, 12, clock64());
    if (!ti.valid || !ti.compute) continue;
    // By chunk: the tile's 64-row chunks up to the last that starts below masked_m and has rows to store (nothing
    // reads the others: fast_idle_waves; a tail half has two). The first always has, or the tile would not be computed.
    int a_chunks = 1;
#pragma unroll
    for (int c = 1; c < BM / 64; ++c)
      if (by_chunk && !ti.zero[c] && ti.rows_left[c] > 0) a_chunks = c + 1;
    const int tx_a = by_chunk ? a_chunks * 64 * kFBK : kTxA;
    const float* sfa_base = p.sfa + ti.z * p.sfa_s_batch + static_cast<int64_t>(ti.m0) * p.sfa_s_row;
    for (int kb = ti.kb0; kb < ti.kb1; kb += kKtma, it += kKtma) {
      const int s = it % kStages;
#pragma unroll
      for (int q = 0; q < kKtma; ++q) {
        mbar_wait(ring.empty_u + 8 * (s + q), ((it / kStages) & 1) ^ 1);
        GO_FAST_TRACE(0, it + q);
      }
      if (fast_late_wait<C>() && it == 0) {  // before the first copy
        if (kSfaTma && (!spread || tid != 0)) fast_prefetch_b<C>(map_b, ti.b_row, kb);
        fast_dependency_wait();
      }
      const uint32_t full = ring.full_u + 8 * s;
      auto load_a = [&] {
        if constexpr (kKtma > 1) {
          tma_load_3d(a_u + s * kStageA, &map_a, full, 0, ti.a_row, kb);
        } else if constexpr (MC == 1) {
          tma_load_2d(a_u + s * kStageA, &map_a, full, kb * kFBK, ti.a_row);
#pragma unroll
          for (int c = 1; c < BM / 64; ++c)
            if (by_chunk && c < a_chunks)
              tma_load_2d(a_u + s * kStageA + c * 64 * kFBK, &map_a, full, kb * kFBK, ti.a_row + 64 * c);
        } else {
          constexpr int rows = BM / MC;
          tma_load_2d_multicast(a_u + s * kStageA + rank * rows * kFBK, &map_a, full, kb * kFBK, ti.a_row + rank * rows,
                                static_cast<uint16_t>((1 << MC) - 1));
        }
      };
      auto load_b = [&] {
        if constexpr (kKtma > 1) tma_load_3d(b_u + s * kStageB, &map_b, full, 0, ti.b_row, kb);
        else tma_load_2d(b_u + s * kStageB, &map_b, full, kb * kFBK, ti.b_row);
      };
      // SFA by TMA: a box of BM rows x ktma K blocks into stages s .. s + ktma - 1.
      auto load_sfa = [&] { tma_load_2d(sfa_u + s * BM * 4, &map_sfa, full, ti.m0, ti.z * nkb + kb); };
      if constexpr (spread) {
        if (tid == 0) {  // warp 0's elected thread; warp 2's passes 64
          mbar_arrive_expect_tx(full, tx_a + kTxSfa);
          load_sfa();
          load_a();
        } else {
          mbar_arrive_expect_tx(full, kTxB);
          load_b();
        }
      } else if constexpr (kSfaTma) {
        mbar_arrive_expect_tx(full, tx_a + kTxB + kTxSfa);
        load_sfa();
        load_a();
        load_b();
      } else {
        __syncwarp();
        if (tid < 32 && elect_one()) {  // warp 0's elected thread issues A and B (elect_one: no per-copy loop)
          mbar_expect_tx(full, tx_a + kTxB);
          load_a();
          load_b();
        }
#pragma unroll
        for (int q = 0; q < kKtma; ++q) {  // stage s + q holds K block kb + q's rows
          const uint32_t dst = sfa_u + (s + q) * BM * 4;
          const int64_t kq = static_cast<int64_t>(kb + q) * p.sfa_s_kb;
          if (p.sfa_vec) {  // MN-major, 16-byte aligned columns: 4 rows per copy (BLOCK_M / 4 <= 64 threads)
            const int r = 4 * tid, nq = max(0, min(4, ti.sfa_rows - r));
            if (r < BM) cp_async16(dst + 4 * r, nq ? sfa_base + r + kq : p.sfa, nq * 4);
          } else {
#pragma unroll 1
            for (int e = 0; e < (BM + 95) / 96; ++e) {  // unrolled, ptxas spilled at ktma=4
              const int r = tid + 96 * e;
              const bool ok = r < ti.sfa_rows;
              if (r < BM) cp_async4(dst + 4 * r, ok ? sfa_base + r * p.sfa_s_row + kq : p.sfa, ok);
            }
          }
        }
        cp_async_arrive(full);
      }
#pragma unroll
      for (int q = 0; q < kKtma; ++q) GO_FAST_TRACE(1, it + q);
    }
  }
  if constexpr ((kFastProfile & (kProfTrace | kProfTileTrace)) != 0) {
    // The first tile computed again (profiling builds only): its parameters are in the constant cache by now, but this
    // call is its own inlined copy of fast_tile, whose instructions are fetched anew.
    GO_FAST_TRACE_AT(0, 24, clock64());
    const FastTile again = fast_tile<C>(p, cluster, rank, N);
    asm volatile("" ::"r"(again.a_row), "r"(again.b_row), "r"(again.kb1), "r"(again.rows_left[0]));
    GO_FAST_TRACE_AT(0, 25, clock64());
  }
  asm volatile("cp.async.wait_all;\n" ::: "memory");  // no copy outlives its thread
}

}  // namespace go_sm90
