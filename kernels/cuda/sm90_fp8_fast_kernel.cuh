// Device code of the fast SM90 FP8 GEMM (1D2D: A scales per 1 x 128, B scales per 128 x 128; BF16 out), templated on
// its configuration so that it can be built ahead of time or compiled at first use for one shape class
// (sm90_fp8_fast.cu writes a one-line instantiation of fp8_fast_body, and jit.cu runs nvcc on it).
//
// This file holds the kernel body (fp8_fast_body) and a math warpgroup's walk over its tiles (fast_math); the parts
// have a file each: configuration, shared-memory layout and ring (sm90_fp8_fast_config.cuh), producer
// (sm90_fp8_fast_producer.cuh), math (sm90_fp8_fast_math.cuh), epilogue (sm90_fp8_fast_epilogue.cuh), tile walk
// (sm90_fp8_fast_tiles.cuh), profiling switches (sm90_fp8_fast_profile.cuh); the heuristic:
// sm90_fp8_fast_heuristic.cu.
//
// A persistent grid walks the tiles (a last round that fills at most half the grid as 128-row halves of its tiles:
// fast_split_tail). Each CTA has three warpgroups:
//   - the producer (fast_producer): TMA copies of A (multicast across a cluster of kMulticast CTAs that share the M
//     block, each loading BLOCK_M / kMulticast rows), B and, where its layout allows, SFA (else cp.async), into a
//     kStages-deep shared-memory ring on mbarriers; its last warp copies each tile's B scales, a window of up to 128
//     K blocks at a time, into a double buffer (fast_sfb_loader);
//   - two math warpgroups (fast_math) of 64 rows per wave (BLOCK_M 128: one wave, 256: two; BLOCK_M 64: one math
//     warpgroup, the other idles), which run the wgmmas and promote each K block's result into the f32 accumulators.
//     Three, at BLOCK_M 192 with one wave each (512 threads; branch bm192), gave the same bits and ran 0.87x over 5
//     dense M = 4096 and 3 masked shapes: per unit of tensor work no faster than two (Nsight Compute at 4096 x 4096 x
//     7168: the tensor pipe active 86.4 % of the SM's active cycles against 86.6 %), with more row blocks to walk
//     (docs/performance-history.md, "Issue 26, thirty-eighth round");
//   - whose epilogue (fast_epilogue) rounds to bf16 and stores D through shared memory (stmatrix) with TMA stores.
//     A wave whose rows nothing reads (fast_idle_waves) issues no wgmmas; at masked BLOCK_M 128 (and 256 where a
//     group is one row tile) its A rows are not loaded either (fast_a_by_chunk).
// With split K (kSplitK) units are (tile, K range) and each K block's raw result goes to a workspace, which
// sm90_fp8_fast.cu's second kernel promotes.
//
// Numerics are those of sm90_gemm.cu's fp8_gemm_kernel, instruction for instruction: per 128-K block a chain of
// 4 x wgmma m64nBNk32 (the first with scale-d = 0) and F = fma(fl32(sa * sb), P, F) on CUDA cores, then bf16 RNE
// (docs/numerics.md). Neither BLOCK_M nor BLOCK_N changes the bits: every output element sees the same chain whatever
// tile it is in, and a tile that straddles a 128-column scale block picks sb per 8-column chunk, the straddle column
// a compile-time constant of the K loop (fast_with_straddle). tests/gpu/check.cpp compares every configuration family
// with the CPU backend and the embedded model.
#pragma once
#include <cuda.h>
#include <cuda_bf16.h>

#include <cstdint>
#include <type_traits>

#include "sm90_async.cuh"
#include "sm90_common.cuh"
#include "sm90_fast.h"
#include "sm90_fp8_fast_config.cuh"
#include "sm90_fp8_fast_epilogue.cuh"
#include "sm90_fp8_fast_math.cuh"
#include "sm90_fp8_fast_producer.cuh"
#include "sm90_fp8_fast_profile.cuh"
#include "sm90_fp8_fast_tiles.cuh"

namespace go_sm90 {

/// The waves of warpgroup w's rows in tile ti whose results nothing reads, as a bit mask (bit v: wave v): chunks of
/// which the epilogue stores no row (past M, past a psum group's end) or that it writes as zeros because they start at
/// or past masked_m. Their wgmmas and promotions are skipped (masked 32 x 192 x 6144 x 7168 at BLOCK_M 256, the second
/// warpgroup's last wave: 645.4 -> 611.0 us; masked 32 x 20 x 6144 x 7168 at BLOCK_M 128, the whole second
/// warpgroup, as DeepGEMM's is_computation_valid skips: 423.2 -> 372.8 us; H200, each against DeepGEMM in its own
/// call). Contiguous rows of group -1 are computed: their flags come with the tile's first SFB window
/// (FastMath::zero_chunks), after this choice. Split K keeps every wave: its workspace is read whole. The chunk's
/// facts are picked by w with a select (an index computed from w would put the FastTile in local memory).
/// Host-callable: tests/kernels/fast_tiles_check.cu checks that the producer loads every chunk of A a computed wave
/// reads.
template <class C>
__host__ __device__ __forceinline__ int fast_idle_waves(const FastParams& p, const FastTile& ti, int w) {
  if constexpr (C::kSplitK) return 0;
  const bool w1 = C::kMathWGs == 2 && w == 1;
  const int masked_m = fast_mode<C>(p) == kFastMasked ? p.masked_m[ti.z] : p.M;  // fast_tile read it
  int idle = 0;
#pragma unroll
  for (int v = 0; v < C::kWaves; ++v) {
    const int rows = w1 ? ti.rows_left[2 * v + 1] : ti.rows_left[2 * v];
    const int r0 = ti.m0 + 64 * (2 * v + (w1 ? 1 : 0));
    if (rows <= 0 || r0 >= masked_m) idle |= 1 << v;
  }
  return idle;
}

/// A math warpgroup's walk over this CTA's tiles: for each, the K loop into F, then the epilogue.
template <class C>
__device__ __forceinline__ void fast_math(const CUtensorMap& map_d, const FastParams& p, const FastRing<C>& ring, int w,
                                          int tid, int rank, int cluster, int clusters, int N) {
  constexpr int NA = C::BN / 2, kWaves = C::kWaves;
  const FastMath<C> m(p, ring, w, tid);
  GO_FAST_TRACE_AT(128, 15, clock64());
  uint32_t it = 0;
  // The last chunk this warpgroup stored went by TMA in a bulk group of its own (false after a chunk stored by the
  // threads, and after both waves stored as one group): fast_epi_pending.
  bool prev_chunk_tma = false;
  float F[kWaves * NA];
  float P[C::kSets][NA];
#pragma unroll
  for (int j = 0; j < C::kSets; ++j)
#pragma unroll
    for (int i = 0; i < NA; ++i) P[j][i] = 0.0f;
  uint32_t wn = 0;  // SFB windows run, as the loader counts them
  for (int u = cluster; u < p.units; u += clusters) {
    GO_FAST_TILE_TRACE((u - cluster) / clusters, 0);
    // Without the zero chunks, which the loader hands over with the tile's first window (FastMath::zero_chunks).
    const FastTile ti = fast_tile<C, false>(p, u, rank, N);
    if (!ti.valid) continue;
#pragma unroll
    for (int i = 0; i < kWaves * NA; ++i) F[i] = 0.0f;
    uint32_t zero_chunks = ti.compute ? 0u : 0xFu;
    GO_FAST_TILE_TRACE((u - cluster) / clusters, 1);
    // Zero tile (!compute): nothing was loaded for it; the epilogue writes its zeros.
    if (ti.compute) {
      // The tile's K blocks, window by window of B scales (one window with split K, which reads none).
      auto windows = [&](auto&& body) {
        const int nk = ti.kb1 - ti.kb0, nw = C::kSplitK ? 1 : fast_windows(nk);
        for (int wi = 0; wi < nw; ++wi, ++wn) {
          const int n = fast_window_start(nk, nw, wi + 1) - fast_window_start(nk, nw, wi);
          if constexpr (!C::kSplitK) {
            m.wait_sfb(wn);
            if (wi == 0) zero_chunks = m.zero_chunks(wn);
          }
          body(n, m.window(wn, it));
          if constexpr (!C::kSplitK) m.free_sfb(wn);
        }
      };
      const int idle = fast_idle_waves<C>(p, ti, w);
      if ((kFastProfile & kProfNoMath) != 0 || idle == (1 << kWaves) - 1) {
        windows([&](int n, const FastWindow&) { fast_mainloop_idle(m, it, n); });
      } else {
        fast_with_straddle<C>(ti.n0, [&](auto b1) {
          constexpr int kB1 = decltype(b1)::value;
          windows([&](int n, const FastWindow& win) {
            if constexpr (C::kSets == 1) {
              // The variant without the last wave only where BLOCK_N divides 128 (one straddle point): with 8 of
              // them (BLOCK_M 256 x BLOCK_N 80) it doubled the compile time and ptxas spilled 258 bytes.
              constexpr bool kIdleVariant = kWaves == 2 && C::kSfbSlots == 1;
              if (kIdleVariant && idle == 2) fast_mainloop_one_set<kB1, kIdleVariant>(m, ti, F, P[0], it, n, win);
              else fast_mainloop_one_set<kB1>(m, ti, F, P[0], it, n, win);
            } else if constexpr (C::kSets == 2) {
              fast_mainloop_two_sets<kB1>(m, ti, F, P, it, n, win);
            } else {
              fast_mainloop_sets<kB1>(m, ti, F, P, it, n, win);
            }
          });
        });
      }
    }
    GO_FAST_TILE_TRACE((u - cluster) / clusters, 2);
    // Split K has no epilogue here (the second kernel writes D).
    if constexpr (!C::kSplitK && (kFastProfile & kProfNoEpilogue) == 0)
      fast_epilogue(map_d, p, ring, ti, F, w, tid, zero_chunks, prev_chunk_tma, N);
    GO_FAST_TILE_TRACE((u - cluster) / clusters, 3);
  }
  // The TMA stores this thread issued finish (reading shared memory and writing D) before the CTA exits.
  if (tid == 0) bulk_wait_all();
  GO_FAST_TRACE_AT(128, 1, it);
  GO_FAST_TRACE_AT(128, 2, clock64());
  GO_FAST_TRACE_AT(128, 3, (p.units - cluster + clusters - 1) / clusters);  // units walked: row 5's tiles
}

/// Whether masked_m holds a count outside [0, Mmax] (grouped_gate.h's rule), checked by every CTA of a masked call
/// after the grid dependency wait, in place of a gate kernel: that one-CTA kernel sat on each call's critical path (it
/// could start only when the kernel before it had completed, and this grid waited for it). The G counts are loaded
/// once here (the tile walk reads them again); with a bad one the whole grid returns. In CTA 0 the thread holding the
/// first bad entry records it in the gate block, unless an earlier error waits there for the host (gate_take_error).
/// The record sits inside the check's loop: the same code after the loop, even a single store, made ptxas spill 352
/// bytes at 256 x 128, 3 stages, mc=2, K = 16384; here it spills nothing (5528 -> 5624 instructions with the check).
/// Against the gate kernel (H200, tests/gpu/head_to_head.py, alternating twice, 6 rounds each, the 16 masked shapes):
/// ours / DeepGEMM 0.985 -> 1.005 geomean, faster on all 16 (32 x 192 x 7168 x 3072 1.014 -> 1.062, 6 x 20 x 4096 x
/// 2048 0.961 -> 1.002, 32 x 192 x 6144 x 7168 0.999 -> 1.000).
__device__ __forceinline__ bool fast_masked_bad(const FastParams& p) {
  bool bad = false;
  for (int g = threadIdx.x; g < p.G; g += blockDim.x) {
    const int32_t x = p.masked_m[g];
    if (gate_entry_bad(kGateMasked, x, 0, p.M, p.G)) {
      bad = true;
      if (blockIdx.x == 0) {
        int h = 0;
        while (h < g && !gate_entry_bad(kGateMasked, p.masked_m[h], 0, p.M, p.G)) ++h;
        if (h == g && atomicCAS(p.gate + kGateErrKind, 0, kGateMasked) == 0) {
          p.gate[kGateErrIndex] = g;
          p.gate[kGateErrValue] = x;
          p.gate[kGateErrBound] = static_cast<int32_t>(gate_bound(kGateMasked, p.M, p.G));
        }
      }
    }
  }
  return __syncthreads_or(bad) != 0;
}

/// The kernel body; map_a's box is BM / kMulticast rows x 128 K, map_b's BN rows x 128 K (both 128B-swizzled; with
/// ktma=N both are 3D maps of [K / 128][rows][128] with boxes N K blocks deep), map_sfa's (p.sfa_tma only) BM rows x
/// ktma K blocks of f32 over [M rows, batches x K blocks], map_d's (p.d_tma only) fast_epi_box_cols(BN) columns x 64
/// rows x 1 batch of bf16 over [N, M, batches], swizzled to the box row's span.
template <class C>
__device__ __forceinline__ void fp8_fast_body(const CUtensorMap& map_a, const CUtensorMap& map_b,
                                              const CUtensorMap& map_sfa, const CUtensorMap& map_d,
                                              const FastParams& p) {
  constexpr int MC = C::kMulticast;
  const int N = C::kN ? C::kN : p.N;
  const int K = C::kK ? C::kK : p.K;
  extern __shared__ uint8_t smem_raw[];
  const FastRing<C> ring(align1024(smem_raw));
  GO_FAST_TRACE_WARM();
  GO_FAST_TRACE_AT(0, 8, clock64());
  GO_FAST_TRACE_AT(128, 13, clock64());
  GO_FAST_TRACE_AT(32, 20, clock64());
  GO_FAST_TRACE_AT(kFastThreads - 1, 21, clock64());
  // The warpgroup index through a shuffle from lane 0: the compiler then knows it is warp-uniform and keeps what
  // derives from it (the wgmma descriptors) in uniform registers (DeepGEMM does the same).
  const int wg = __shfl_sync(0xffffffffu, static_cast<int>(threadIdx.x / 128), 0), tid = threadIdx.x % 128;
  const int rank = MC > 1 ? static_cast<int>(cluster_cta_rank()) : 0;
  // Until the dependency wait nothing touches global memory: launched with programmatic dependent launch, this CTA may
  // start while the kernel before it on the stream still runs, and sets up its barriers and tensor maps. The wait is
  // below, for every thread, or, in dense shape-class kernels (fast_late_wait), in the producer's loading threads
  // just before their first read.
  // Thread 0's setup is the first step of the prologue at small M (kernel top to first copies 1765-2480 cycles in the
  // light trace of CTA 0 at 64 x 576 / 64 x 7168 / 128 x 2112 / 128 x 4096, whether the inputs rotate or not). The
  // parameter block's cold constant lines are not what makes it long: with FastParams's lines loaded by the idle math
  // warps at the top the prologue took what it took and the 14 small-M shapes timed level (1.000x), and prefetchu of
  // the block's lines lost (0.953x) (docs/performance-history.md, "Issue 26, thirty-ninth round").
  if (threadIdx.x == 0) {
    // The maps are kernel parameters (__grid_constant__), which no earlier kernel writes.
    tma_prefetch_map(&map_a);
    tma_prefetch_map(&map_b);
    if (fast_sfa_tma<C>(p)) tma_prefetch_map(&map_sfa);
    if (p.d_tma) tma_prefetch_map(&map_d);
    GO_FAST_TRACE_AT(0, 16, clock64());
    for (int s = 0; s < C::kStages; ++s) {
      mbar_init(&ring.full[s], FastRing<C>::full_arrivals(p));
      mbar_init(&ring.empty[s], FastRing<C>::kEmptyArrivals);
    }
    for (int b = 0; b < 2; ++b) {
      mbar_init(&ring.full[2 * C::kStages + b], FastRing<C>::kSfbFullArrivals);
      mbar_init(&ring.full[2 * C::kStages + 2 + b], FastRing<C>::kSfbEmptyArrivals);
    }
    GO_FAST_TRACE_AT(0, 17, clock64());
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    fence_proxy_async();
    GO_FAST_TRACE_AT(0, 18, clock64());
  }
  GO_FAST_TRACE_AT(128, 19, clock64());
  if (MC > 1) cluster_sync();
  else __syncthreads();
  GO_FAST_TRACE_AT(0, 9, clock64());
  if constexpr (!fast_late_wait<C>()) fast_dependency_wait();
  GO_FAST_TRACE_AT(0, 10, clock64());
  // The next launch may be scheduled now: its CTAs take SMs as this grid's CTAs exit (each CTA fills its SM) and wait
  // for this grid to complete before their first global read.
  grid_launch_dependents();
  GO_FAST_TRACE_AT(0, 0, clock64());
  // Grouped calls: a bad masked_m (fast_masked_bad), or, after the gate kernel (grouped_gate.h) ran on this stream, a
  // bad contiguous layout or groups that this kernel's tile height was not launched for, and the whole grid returns
  // here (every CTA of a cluster alike). Dense calls have no gate; a dense kernel with its mode compiled in, no test.
  if (C::kMode != kFastNormal && p.gate != nullptr) {
    if (p.gate_kind == kGateMasked) {
      if (fast_masked_bad(p)) return;
    } else {
      const bool bad = p.gate[kGateBad] != 0, fits = p.gate[kGateFits256] != 0;
      if (bad || (p.gate_want == kWantFits256 && !fits) || (p.gate_want == kWantNot256 && fits)) return;
    }
  }
  const int nkb = (K + kFBK - 1) / kFBK;
  const int cluster = blockIdx.x / MC, clusters = gridDim.x / MC;
  // The producer is warpgroup 0. Placed last, as DeepGEMM places its, it timed level (H200, tests/gpu/run.sh's ab
  // step, 3 runs a side, 8 shapes of 256 x 128: 1.004x, an unmodified copy 1.002x, none apart).
  if (wg == 0) {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(kProducerRegs) : "memory");
    GO_FAST_TRACE_AT(0, 11, clock64());
    if (tid < 96) {
      // Each SFA path is its own instance. With SFA by TMA a warp that issues no loads (fast_issues: warp 1, and warp
      // 2 without spread) would walk every tile for nothing. Skipping the walk, same call, two runs each (13 shapes):
      // geomean 1.013x; contiguous 4 x 8192 x 4096 x 2048 520.5 -> 490.2 us, 4096 x 24576 x 1536 293.1 -> 282.0 us.
      // One elected thread of each issuing warp walks the tiles and loads (fast_producer says why elected), passing
      // its warp's first thread index. With SFA copied all 96 threads walk them.
      if (fast_sfa_tma<C>(p)) {
        if (fast_issues<C>(tid & ~31) && elect_one())
          fast_producer<C, true>(map_a, map_b, map_sfa, p, ring, tid & ~31, rank, cluster, clusters, N, nkb);
      } else {
        fast_producer<C, false>(map_a, map_b, map_sfa, p, ring, tid, rank, cluster, clusters, N, nkb);
      }
    } else if constexpr (!C::kSplitK) {
      fast_sfb_loader<C>(p, ring, tid - 96, rank, cluster, clusters, N);
    }
  } else {
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(kMathRegs) : "memory");
    GO_FAST_TRACE_AT(128, 14, clock64());
    // With BLOCK_M 64 the second math warpgroup has no rows: it walks no tiles and issues nothing.
    if (wg - 1 < C::kMathWGs) fast_math<C>(map_d, p, ring, wg - 1, tid, rank, cluster, clusters, N);
  }
  // No CTA of a cluster leaves while a peer may still multicast into it or arrive on its barriers.
  if (MC > 1) cluster_sync();
}

}  // namespace go_sm90
