// The math warpgroups of the fast SM90 FP8 GEMM (sm90_fp8_fast_kernel.cuh): a stage's wgmmas, the promotion of each K
// block's result into the f32 accumulators (FastMath), the compile-time straddle point (fast_with_straddle) and the K
// loops of one, two and three accumulator sets.
#pragma once
#include <cstdint>
#include <type_traits>

#include "sm90_async.cuh"
#include "sm90_fp8_fast_config.cuh"
#include "sm90_fp8_fast_profile.cuh"

namespace go_sm90 {

/// x through a move the compiler cannot see into (FastMath::kByBox says why).
__device__ __forceinline__ uint32_t opaque_u32(uint32_t x) {
  asm volatile("mov.b32 %0, %0;" : "+r"(x));
  return x;
}

/// Scales of one stage and wave for this thread's accumulator rows (sa0: row r, sa1: row r + 8) and the tile's SFB
/// slots.
template <int kSlots>
struct FastScales {
  float sa0, sa1, sb[kSlots];
};

/// The SFB window a stretch of the K loop reads: its buffer, and the pipeline iteration of its first K block.
struct FastWindow {
  uint32_t sfb;  // shared-window address of its buffer
  uint32_t it0;
};

/// One math warpgroup: issues the wgmmas of a stage, promotes their results, releases stages, and (fast_epilogue)
/// stores its rows of each tile.
template <class C>
struct FastMath {
  static constexpr int BN = C::BN, NA = BN / 2, kStages = C::kStages, kWaves = C::kWaves, MC = C::kMulticast;
  static constexpr int kStageA = FastRing<C>::L.stage_a, kStageB = FastRing<C>::L.stage_b;
  // Scales read before the wgmmas, so that their latency overlaps them: B's before the stage's wait (from the window
  // buffer), A's right after it. Up to BLOCK_N 192 (ptxas -v: no spills at 128 x 160, 176 and 192 nor at 64 x 192,
  // with the K loop unrolled twice past 144). At 128 x 192, against scales read at promotion (H200, in one process
  // with DeepGEMM, tests/gpu/head_to_head.py, 4 rounds): 4096 x 2112 x 7168 105.5 -> 97.5 us, 4096 x 576 x 7168
  // 35.4 -> 33.1; contiguous 4 x 8192 x 6144 x 7168 2635 -> 2445 (tests/gpu/bench.cpp). Past 192 they are read at
  // promotion.
  static constexpr bool kHoist = BN <= 192;
  // Where the epilogue stages by box (4 stages of BLOCK_M 256, FastSmem::by_box) each stage index is taken from the
  // pipeline iteration after an opaque move (opaque_u32): without it ptxas (nvcc 13.0) spilled 1156 bytes at 256 x 128
  // with the K loop unrolled 8 times (372 unrolled 4 times), with it none; kernels without by_box are the same machine
  // code (.text SHA-256, tests/kernels/_fast_kernel_source.ts). A reading, not traced: the move keeps ptxas from
  // sharing one stage's addresses between unrolled iterations four apart.
  static constexpr bool kByBox = FastRing<C>::L.by_box;
  using Scales = FastScales<C::kSfbSlots>;

  const FastParams& p;
  const FastRing<C>& ring;
  int w, tid;
  // Descriptor low words of stage 0 (this warpgroup's first A row of wave 0; B) and the SFB buffers' address, through a
  // shuffle from lane 0, so that ptxas keeps them instead of rematerialising them from the CTA's shared window at the
  // K loop's top (DeepGEMM does the same for its descriptors).
  uint32_t lo_a0, lo_b0, sfb_u;
  uint32_t sfa_u;  // stage 0's SFA entry of this thread's first accumulator row (wave 0)

  __device__ __forceinline__ FastMath(const FastParams& p_, const FastRing<C>& ring_, int w_, int tid_)
      : p(p_),
        ring(ring_),
        w(w_),
        tid(tid_),
        lo_a0(__shfl_sync(0xffffffffu, desc_lo_sw128(smem_addr(ring_.a + w_ * 64 * 128)), 0)),
        lo_b0(__shfl_sync(0xffffffffu, desc_lo_sw128(smem_addr(ring_.b)), 0)),
        sfb_u(__shfl_sync(0xffffffffu, smem_addr(ring_.sfb), 0)),
        sfa_u(smem_addr(ring_.sfa) + 4 * (w_ * 64 + acc_row(tid_, 0))) {}

  /// Waits until the loads of pipeline iteration `at` have landed: on its stage's full barrier, or with ktma=N on the
  /// barrier of the first stage of its group of N, where the group's copies complete.
  __device__ __forceinline__ void wait_full(uint32_t at) const {
    if constexpr (kByBox) at = opaque_u32(at);
    const int s = at % kStages;
    mbar_wait(ring.full_u + 8 * (s - s % C::kKtma), (at / kStages) & 1);
  }
  /// Waits until the loader has filled the buffer of window `wn`.
  __device__ __forceinline__ void wait_sfb(uint32_t wn) const {
    mbar_wait(ring.sfb_full_u + 8 * (wn & 1), (wn >> 1) & 1);
  }
  /// The zero chunks of window `wn`'s tile (bit c: chunk c), as the loader wrote them; read once the window is full.
  __device__ __forceinline__ uint32_t zero_chunks(uint32_t wn) const {
    return ld_shared_u32(ring.zero_u + 8 * (wn & 1));
  }
  /// Frees the buffer of window `wn` (this thread has read every scale of it it needs).
  __device__ __forceinline__ void free_sfb(uint32_t wn) const { mbar_arrive_local(ring.sfb_empty_u + 8 * (wn & 1)); }
  /// The window buffer of window `wn`, whose first K block is pipeline iteration it0.
  __device__ __forceinline__ FastWindow window(uint32_t wn, uint32_t it0) const {
    return {sfb_u + (wn & 1) * FastRing<C>::kSfbFloats * 4, it0};
  }
  /// B scales of K block `at`, from its window buffer (full before the window's first block: readable before the
  /// stage is).
  __device__ __forceinline__ void read_sb(Scales& sc, const FastWindow& win, uint32_t at) const {
#pragma unroll
    for (int j = 0; j < C::kSfbSlots; ++j) sc.sb[j] = ld_shared_f32(win.sfb + 4 * (j * kSfbWindow + (at - win.it0)));
  }
  /// A scales of stage s and wave `wave` for this thread's two rows.
  __device__ __forceinline__ void read_sa(Scales& sc, int s, int wave) const {
    sc.sa0 = ld_shared_f32(sfa_u + 4 * (s * C::BM + wave * kFBM));
    sc.sa1 = ld_shared_f32(sfa_u + 4 * (s * C::BM + wave * kFBM + 8));
  }
  __device__ __forceinline__ Scales read_scales(int s, int wave, const FastWindow& win, uint32_t at) const {
    Scales sc;
    read_sb(sc, win, at);
    read_sa(sc, s, wave);
    return sc;
  }
  /// Issues the 4 wgmmas (k32 steps) of stage `at`'s K block for one wave into acc (waiting for the stage first).
  __device__ __forceinline__ Scales issue(float (&acc)[NA], uint32_t at, const FastWindow& win, int wave = 0) const {
    if constexpr (kByBox) at = opaque_u32(at);
    const int s = at % kStages;
    Scales sc{};
    if constexpr (kHoist && !C::kSplitK) read_sb(sc, win, at);
    if (wave == 0) {
      wait_full(at);
      GO_FAST_TRACE(2, at);
      GO_FAST_PHASE_TRACE2(w, at, 2);
    }
    if constexpr (kHoist && !C::kSplitK) read_sa(sc, s, wave);
    // This warpgroup's A rows of the wave, and B, in stage s; k32 step j is 32 bytes further along each row.
    const uint32_t lo_a = lo_a0 + static_cast<uint32_t>(s * kStageA + wave * kFBM * 128) / 16;
    const uint32_t lo_b = lo_b0 + static_cast<uint32_t>(s * kStageB) / 16;
    fence_operand(acc);
    wgmma_fence();
#pragma unroll
    for (int j = 0; j < 4; ++j) WgmmaFp8<BN>::mma(acc, desc_from_lo(lo_a + 2 * j), desc_from_lo(lo_b + 2 * j), j);
    wgmma_commit();
    return sc;
  }
  /// Frees stage s in every CTA of the cluster: every math thread arrives on each CTA's empty barrier, after its own
  /// reads of the stage (the wgmmas' and its scale loads). Measured against one arrival per warp (H200):
  /// - with multicast, one per warp and CTA after __syncwarp (4 remote arrivals a warpgroup): compute-sanitizer's
  ///   racecheck reported the other lanes' scale loads as racing with the producer's next copies into the stage (4
  ///   hazards at bm=256,mc=2, 2 at bm=128,mc=2; __syncwarp orders them, racecheck does not follow it); one per thread
  ///   gives 0 and timed level (tests/gpu/run.sh's ab step: over the 15 dense M = 4096 and contiguous shapes, 3 runs a
  ///   side, 0.996x where an unmodified copy gave 0.996x; over 6 of them, 4 runs a side, the per-warp release 0.999x);
  /// - without multicast, one per warp timed level over the 45 benchmark shapes (ours / DeepGEMM 0.919 against 0.923)
  ///   and racecheck reported the same pattern.
  __device__ __forceinline__ void release(int s) const {
    if constexpr (MC == 1) {
      mbar_arrive_local(ring.empty_u + 8 * s);
    } else {
#pragma unroll
      for (int c = 0; c < MC; ++c) mbar_arrive_cluster(ring.empty_u + 8 * s, static_cast<uint32_t>(c));
    }
  }
  /// F = fma(fl32(sa * sb), P, F) per element of one wave's accumulators; the stage is released once the last wave's
  /// wgmmas have completed (the caller waited for them). kB1: the column where the tile enters the next 128-column
  /// scale block of B (fast_with_straddle). Split K: the raw result goes to the workspace instead.
  template <int kB1>
  __device__ __forceinline__ void promote(float (&acc)[NA], float* F, uint32_t at, const Scales& hoisted,
                                          const FastTile& ti, const FastWindow& win, int wave = 0) const {
    const bool last = wave == kWaves - 1;
    fence_operand(acc);
    if constexpr (kByBox) at = opaque_u32(at);
    const int s = at % kStages;
    if constexpr (C::kSplitK) {
      if (last) release(s);
      const int kb = ti.kb0 + static_cast<int>(at - win.it0);  // split K: one window per unit
      float* dst = p.ws + kb * p.ws_plane + static_cast<int64_t>(ti.m0 + 64 * (2 * wave + w)) * p.ws_pitch + ti.n0;
#pragma unroll
      for (int i = 0; i < NA; i += 2) {
        *reinterpret_cast<float2*>(dst + acc_row(tid, i) * p.ws_pitch + acc_col(tid, i)) =
            make_float2(acc[i], acc[i + 1]);
      }
      return;
    }
    const Scales sc = kHoist ? hoisted : read_scales(s, wave, win, at);
    float* Fw = F + wave * NA;
    if (last) {
      release(s);
      GO_FAST_TRACE(3, at);
      GO_FAST_PHASE_TRACE2(w, at, 3);
    }
    constexpr int kSlots = C::kSfbSlots;
    if constexpr (kSlots == 1) {
      const float s0 = __fmul_rn(sc.sa0, sc.sb[0]), s1 = __fmul_rn(sc.sa1, sc.sb[0]);
#pragma unroll
      for (int i = 0; i < NA; ++i) Fw[i] = __fmaf_rn((i & 2) ? s1 : s0, acc[i], Fw[i]);
    } else {
      // The slots the tile touches (a slot past N's last scale block was not loaded, and its columns are not stored).
      constexpr int kUsed = kSlots == 2 ? 2 : 1 + (BN > kB1) + (BN > kB1 + 128);
      float s0[kUsed], s1[kUsed];
#pragma unroll
      for (int j = 0; j < kUsed; ++j) s0[j] = __fmul_rn(sc.sa0, sc.sb[j]), s1[j] = __fmul_rn(sc.sa1, sc.sb[j]);
#pragma unroll
      for (int c = 0; c < NA / 4; ++c) {  // 8-column chunk c: columns 8c .. 8c + 7 share one scale block
        const int slot = (8 * c >= kB1) + (8 * c >= kB1 + 128);  // a constant after unrolling
#pragma unroll
        for (int q = 0; q < 4; ++q) {
          const int i = 4 * c + q;
          Fw[i] = __fmaf_rn((i & 2) ? s1[slot] : s0[slot], acc[i], Fw[i]);
        }
      }
    }
  }
};

/// The column where a tile starting at column n0 enters the next 128-column scale block of B, as a compile-time
/// constant: f(std::integral_constant<int, b1>) for b1 = 128 - n0 % 128, one instantiation per value n0 can give (a
/// multiple of gcd(BLOCK_N, 128)), so the promotion picks each 8-column chunk's scale without a run-time test (picking
/// it at run time cost 1.73x the instructions at 4096 x 2112 x 7168, BLOCK_N 96: docs/performance-history.md).
template <class C, int kB1 = 128, class Fn>
__device__ __forceinline__ void fast_with_straddle(int n0, Fn&& f) {
  constexpr int kStep = fast_straddle_step(C::BN);
  if constexpr (C::kSfbSlots == 1 || kB1 <= kStep) {
    f(std::integral_constant<int, kB1>{});
  } else {
    if (128 - n0 % 128 == kB1) f(std::integral_constant<int, kB1>{});
    else fast_with_straddle<C, kB1 - kStep>(n0, f);
  }
}

/// A window's K blocks into F, with one accumulator set: the other math warpgroup keeps the tensor cores busy during
/// this one's promotion. The loop is unrolled, with the B scales read before the stage's wait (H200, same run, us):
/// - 4 times: not unrolled -> 4, 4096 x 2112 x 7168 123.9 -> 109.1, 4096 x 7168 x 16384 830.9 -> 793.4, 4096 x 4096 x
///   7168 216.1 -> 202.2, masked 6 x 1024 x 7168 x 3072 259.4 -> 230.9 (4096 x 32768 x 512, 4 K blocks, 167.9 ->
///   173.6 in that run; in one process with DeepGEMM, not unrolled where a tile has at most 4 K blocks ran 0.875x
///   DeepGEMM against 0.905x / 0.923x unrolled, with 2856 instructions against 3800); 2 times gained less (also
///   twice up to 24 K blocks: 11-shape geomean 0.975x against 0.985x / 0.990x).
/// - 8 times where BLOCK_N divides 128 (one straddle instantiation) and the K blocks are a multiple of 8: BLOCK_M 256 x
///   BLOCK_N 128, two runs each, 4 -> 8, 4096 x 7168 x 16384 769.0 -> 750.9, 4096 x 7168 x 2048 99.9 -> 97.6,
///   contiguous 8 x 4096 x 7168 x 3072 1202.6 -> 1203.9, masked 6 x 1024 x 7168 x 3072 230.9 -> 228.5. Elsewhere 8
///   lost: 4096 x 576 x 7168 (BLOCK_N 80, one loop per straddle point) 35.1 -> 44.2, and with 4 K blocks (4096 x 32768
///   x 512) only the loop's remainder runs, 156.2 -> 163.2 over two calls.
/// - 2 times past BLOCK_N 144, for the hoisted scales' registers (ptxas -v, nvcc 13.0, shape kernels: unrolled 4
///   times, 128 x 192 spilled 244 bytes and 128 x 176 848; twice, none).
/// Not unrolled where the scales are read at promotion nor in kernels of run-time K: ptxas spilled 868 bytes at
/// 128 x 176 and 954 at 256 x 112 (generic).
/// kIdleLast: the last wave's rows are all idle (fast_idle_waves): it waits for nothing and issues nothing, and the
/// stage is released after the first wave's wgmmas.
template <int kB1, bool kIdleLast = false, class C>
__device__ __forceinline__ void fast_mainloop_one_set(const FastMath<C>& m, const FastTile& ti, float* F,
                                                      float (&P)[C::BN / 2], uint32_t& it, int nk,
                                                      const FastWindow& win) {
  constexpr int kBlocks = (C::kK + kFBK - 1) / kFBK;  // the tile's K blocks: one window up to K = 16384
  constexpr int kUnroll = !FastMath<C>::kHoist || C::kK == 0 ? 1
                          : C::BN > 144                         ? 2
                          : C::kSfbSlots == 1 && kBlocks % 8 == 0 ? 8
                                                                  : 4;
  constexpr int kRun = kIdleLast ? C::kWaves - 1 : C::kWaves;
  static_assert(kRun >= 1, "an idle last wave needs a wave before it");
#pragma unroll kUnroll
  for (int kb = 0; kb < nk; ++kb, ++it) {
#pragma unroll
    for (int v = 0; v < kRun; ++v) {
      const auto sc = m.issue(P, it, win, v);
      GO_FAST_PHASE_TRACE(m.w, it, 2 * v);
      wgmma_wait0();
      GO_FAST_PHASE_TRACE(m.w, it, 2 * v + 1);
      m.template promote<kB1>(P, F, it, sc, ti, win, v);
      GO_FAST_PHASE_TRACE2(m.w, it, v);
    }
    if constexpr (kIdleLast) m.release(it % C::kStages);
  }
}

/// A warpgroup whose rows of a tile are all idle: per K block it waits for the stage, so that its release counts in the
/// same phase as the other warpgroup's, and releases it.
template <class C>
__device__ __forceinline__ void fast_mainloop_idle(const FastMath<C>& m, uint32_t& it, int nk) {
  for (int kb = 0; kb < nk; ++kb, ++it) {
    m.wait_full(it);
    GO_FAST_TRACE(2, it);
    m.release(it % C::kStages);
    GO_FAST_TRACE(3, it);
  }
}

/// Two accumulator sets: the 4 wgmmas of block kb + 1 run on the tensor cores while block kb is promoted. The shape
/// (a loop to nk - 2, then two blocks or one) keeps ptxas (CUDA 13.0) from serialising the wgmmas, which it did for
/// the same schedule written as a loop to nk - 1 and one last block ("C7514 ... non wgmma instructions reading
/// accumulator registers"; tests/kernels/cuda_jit_source_test.ts checks).
template <int kB1, class C>
__device__ __forceinline__ void fast_mainloop_two_sets(const FastMath<C>& m, const FastTile& ti, float* F,
                                                       float (&P)[2][C::BN / 2], uint32_t& it, int nk,
                                                       const FastWindow& win) {
  auto sc0 = m.issue(P[0], it, win), sc1 = sc0;
  int kb = 0;
  for (; kb + 2 < nk; kb += 2) {  // at the top, block kb is in flight in P[0]
    sc1 = m.issue(P[1], it + 1, win);
    wgmma_wait1();
    m.template promote<kB1>(P[0], F, it, sc0, ti, win);
    ++it;
    sc0 = m.issue(P[0], it + 1, win);
    wgmma_wait1();
    m.template promote<kB1>(P[1], F, it, sc1, ti, win);
    ++it;
  }
  if (nk - kb == 2) {
    sc1 = m.issue(P[1], it + 1, win);
    wgmma_wait1();
    m.template promote<kB1>(P[0], F, it, sc0, ti, win);
    ++it;
    wgmma_wait0();
    m.template promote<kB1>(P[1], F, it, sc1, ti, win);
    ++it;
  } else {
    wgmma_wait0();
    m.template promote<kB1>(P[0], F, it, sc0, ti, win);
    ++it;
  }
}

/// S accumulator sets (S = 3) taken in turn, block b in set b % S: at the top of each step the S - 1 blocks after the
/// one promoted are in flight (fewer in the last S - 1 steps). Steps run in groups of S, so that every set index is a
/// constant after unrolling (registers, not local memory), while a whole group still issues its next blocks; the r
/// blocks left (S - 1 <= r <= 2S - 2) run in an unrolled tail chosen at run time (with the tail fixed at compile time,
/// a constant K, ptxas (CUDA 13.0) serialised every wgmma: C7514). The host guarantees nk >= S for the tile, and every
/// window of it is at least 64 blocks long or the whole tile.
template <int kB1, class C>
__device__ __forceinline__ void fast_mainloop_sets(const FastMath<C>& m, const FastTile& ti, float* F,
                                                   float (&Q)[C::kSets][C::BN / 2], uint32_t& it, int nk,
                                                   const FastWindow& win) {
  constexpr int S = C::kSets;
  static_assert(S == 3, "the tails below are written for three sets");
  typename FastMath<C>::Scales sq[S];
#pragma unroll
  for (int j = 0; j < S - 1; ++j) sq[j] = m.issue(Q[j], it + j, win);
  int c = 0;
  for (; c + 2 * S - 1 <= nk; c += S) {
#pragma unroll
    for (int j = 0; j < S; ++j) {
      sq[(j + S - 1) % S] = m.issue(Q[(j + S - 1) % S], it + S - 1, win);
      wgmma_wait<S - 1>();
      m.template promote<kB1>(Q[j], F, it, sq[j], ti, win);
      ++it;
    }
  }
  auto tail = [&](auto blocks) {  // c is a multiple of S: step t's block is in set t % S
    constexpr int R = decltype(blocks)::value;
#pragma unroll
    for (int t = 0; t < R; ++t) {
      if (t + S - 1 < R) sq[(t + S - 1) % S] = m.issue(Q[(t + S - 1) % S], it + S - 1, win);
      const int pending = R - 1 - t < S - 1 ? R - 1 - t : S - 1;  // a constant after unrolling
      if (pending == 2) wgmma_wait<2>();
      else if (pending == 1) wgmma_wait<1>();
      else wgmma_wait<0>();
      m.template promote<kB1>(Q[t % S], F, it, sq[t % S], ti, win);
      ++it;
    }
  };
  const int r = nk - c;
  if (r == S - 1) tail(std::integral_constant<int, S - 1>{});
  else if (r == S) tail(std::integral_constant<int, S>{});
  else tail(std::integral_constant<int, S + 1>{});
}

}  // namespace go_sm90
