// Device code of the fast SM90 FP8 GEMM (1D2D: A scales per 1 x 128, B scales per 128 x 128; BF16 out), templated on
// its configuration so that it can be built ahead of time or compiled at first use for one shape class
// (sm90_fp8_fast.cu writes a one-line instantiation of fp8_fast_body, and jit.cu runs nvcc on it).
//
// A persistent grid walks the tiles (sm90_fp8_fast_tiles.cuh). Each CTA has three warpgroups:
//   - the producer (fast_producer): TMA copies of A (multicast across a cluster of kMulticast CTAs that share the M
//     block, each loading BLOCK_M / kMulticast rows), B and, where its layout allows, SFA (else cp.async), into a
//     kStages-deep shared-memory ring on mbarriers; its last warp copies each tile's B scales, a window of up to 128
//     K blocks at a time, into a double buffer (fast_sfb_loader);
//   - two math warpgroups (fast_math) of 64 rows per wave (BLOCK_M 128: one wave, 256: two; BLOCK_M 64: one math
//     warpgroup, the other idles), which run the wgmmas and promote each K block's result into the f32 accumulators;
//   - whose epilogue (fast_epilogue) rounds to bf16 and stores D through shared memory (stmatrix) with TMA stores.
//     A wave whose rows nothing reads (fast_idle_waves) issues no wgmmas.
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
#include "sm90_fp8_fast_profile.cuh"
#include "sm90_fp8_fast_tiles.cuh"

namespace go_sm90 {

constexpr int kFastThreads = 384;
// setmaxnreg split. __launch_bounds__(384, 1) gives every thread 168 registers at launch (65536 / 384, rounded down
// to 8) and the CTA owns 384 x 168 of them: setmaxnreg.inc blocks until the producer's setmaxnreg.dec has released
// enough, so 128 x P + 256 x M must not exceed 384 x 168 (a larger M hangs every CTA at its first instruction).
// 64 / 216 (ptxas -v, nvcc 13.0): at 56 / 224 the producer spilled 16 to 48 bytes once the SFB loader warp and the
// 96-thread SFA copy joined it (multicast, ktma=4), at DeepGEMM's 40 / 232 it spilled its barrier and descriptor
// addresses; no accumulator layout of BLOCK_N <= 192 needs more than 216 (tests/kernels/cuda_jit_source_test.ts checks
// for spills).
constexpr int kProducerRegs = 64, kMathRegs = 216;
static_assert(128 * kProducerRegs + 256 * kMathRegs <= 384 * 168,
              "setmaxnreg would wait forever: the math registers exceed what the producer releases");

/// How many 128-column scale blocks of B one tile BLOCK_N wide can touch.
__host__ __device__ constexpr int fast_sfb_slots(int bn) {
  return 128 % bn == 0 ? 1 : (bn % 128 == 0 ? bn / 128 : bn / 128 + 2);
}
/// The straddle columns a tile BLOCK_N wide can have (128 - n0 % 128 for n0 a multiple of BLOCK_N) are multiples of
/// this, gcd(BLOCK_N, 128).
__host__ __device__ constexpr int fast_straddle_step(int bn) {
  return bn % 128 == 0 ? 128 : bn % 64 == 0 ? 64 : bn % 32 == 0 ? 32 : bn % 16 == 0 ? 16 : 8;
}
/// K blocks of B scales per window of the SFB double buffer: a tile's K blocks split into ceil(nk / 128) windows of
/// near-equal length (fast_window_start), so K <= 16384 is one window.
constexpr int kSfbWindow = 128;
__host__ __device__ __forceinline__ int fast_windows(int nk) { return (nk + kSfbWindow - 1) / kSfbWindow; }
/// First K block (from the tile's first) of window i of nw over nk blocks; window nw - 1 ends at nk.
__host__ __device__ __forceinline__ int fast_window_start(int nk, int nw, int i) { return i * nk / nw; }

/// Compile-time configuration (FastChoice's fields; sm90_fast.h says what each is for).
/// BM_: BLOCK_M, 64, 128 or 256 (256: each math warpgroup runs two waves of 64 rows per K block with one accumulator
/// set; 64: one math warpgroup, and a stage is half an A tile smaller, so more of them fit).
/// BN_: BLOCK_N, a multiple of 8 in [8, 256]. STAGES_: pipeline depth. MC_: CTAs per cluster sharing the A tile.
/// SETS_: accumulator sets taken in turn (1; 2: block kb + 1 runs on the tensor cores while block kb is promoted,
/// BN <= 128; 3: two blocks in flight, BN <= 64). KN_, KK_: the shape's N and K when the kernel is specialised for one
/// shape class (0: read from FastParams at run time). SPLIT_: split K. KTMA_: K blocks (stages) per TMA copy of A, B
/// and SFA (1, 2 or 4). SPREAD_: a stage's copies are issued by two producer threads side by side (A and SFA; B).
template <int BM_, int BN_, int STAGES_, int MC_, int SETS_, int KN_ = 0, int KK_ = 0, bool SPLIT_ = false,
          int KTMA_ = 1, bool SPREAD_ = false>
struct FastConfig {
  static constexpr int BM = BM_, BN = BN_, kStages = STAGES_, kMulticast = MC_, kSets = SETS_, kN = KN_, kK = KK_;
  static constexpr int kKtma = KTMA_;
  static constexpr bool kSplitK = SPLIT_, kSpread = SPREAD_;
  static constexpr int kWaves = BM >= kFBM ? BM / kFBM : 1, kMathWGs = BM == 64 ? 1 : 2;
  static constexpr int kSfbSlots = fast_sfb_slots(BN);
  static_assert(BM == 64 || BM == 128 || BM == 256, "BLOCK_M 64, 128 or 256");
  static_assert(BN % 8 == 0 && BN >= 8 && BN <= 256, "BLOCK_N must be a multiple of 8 in [8, 256]");
  static_assert(kMulticast == 1 || kMulticast == 2, "multicast over 1 or 2 CTAs");
  static_assert(kStages >= 2 && kStages <= 16, "stages");
  static_assert(kSets == 1 || (kSets == 2 && BN <= 128) || (kSets == 3 && BN <= 64),
                "accumulator sets: 1, 2 (BN <= 128) or 3 (BN <= 64) (registers)");
  static_assert(BM != 256 || (kSets == 1 && BN <= 128), "BLOCK_M 256 needs one accumulator set and BN <= 128");
  static_assert(kSets < 3 || !kSplitK, "three accumulator sets promote in the kernel: not with split K");
  static_assert(kKtma == 1 || kKtma == 2 || kKtma == 4, "ktma=1|2|4");
  // At least two groups of stages: the math holds a stage while it waits for the next one, so with one group the
  // producer would wait for that stage forever (128 x 24576 x 1536 at ktma=4 with 4 stages hung on the H200).
  static_assert(kStages % kKtma == 0 && kStages >= 2 * kKtma && kStages >= kKtma + kSets - 1,
                "ktma=N needs a multiple of N stages, at least 2N, and N + sets - 1");
  static_assert(kKtma == 1 || (kMulticast == 1 && !kSplitK), "ktma=N: not with multicast or split K");
};

/// Columns of one TMA store box of D for BLOCK_N `bn`: the widest of 64, 32, 16, 8 that divides it, so a box row is
/// 128, 64, 32 or 16 bytes and takes the swizzle of that span (none for 16). Each of a warp's 4-byte writes then
/// falls in its own bank (the 8 rows of an accumulator fragment land in 8 different 16-byte chunks).
__host__ __device__ constexpr int fast_epi_box_cols(int bn) {
  return bn % 64 == 0 ? 64 : bn % 32 == 0 ? 32 : bn % 16 == 0 ? 16 : 8;
}

/// Shared-memory layout (bytes from a 1024-aligned base) of one configuration. One function for the kernel (at compile
/// time) and the launcher (at run time, which adds 1024 for the alignment).
struct FastSmem {
  int stage_a;  // bytes of one A stage
  int stage_b;  // bytes of one B stage
  int pitch;    // bf16 elements per epilogue row of the threads' stores (BN: the TMA box layout needs no more)
  int epi_buf;  // bytes of one epilogue staging buffer (64 rows x pitch), a multiple of 1024
  int sfb_buf;  // bytes of one SFB window buffer (slots x kSfbWindow floats)
  int a, b, sfa, sfb, bars, epi, total;
};
/// Epilogue staging buffers: one per math warpgroup and wave, each rewritten a tile later, once its TMA store has
/// read it (fast_epi_pending).
__host__ __device__ constexpr int fast_epi_buffers(int bm) { return 2 * (bm >= kFBM ? bm / kFBM : 1); }
__host__ __device__ constexpr FastSmem fast_smem(int bn, int stages, int bm = kFBM) {
  FastSmem l{};
  l.stage_a = bm * kFBK;
  l.stage_b = bn * kFBK;
  l.pitch = bn;  // BN + 8 spread the threads' stores over the banks, and cost BLOCK_M 128 x BLOCK_N 96 its 7th stage
  l.a = 0;
  l.b = stages * l.stage_a;
  l.sfa = l.b + stages * l.stage_b;
  l.sfb_buf = fast_sfb_slots(bn) * kSfbWindow * 4;
  l.sfb = l.sfa + stages * bm * 4;
  l.bars = l.sfb + 2 * l.sfb_buf;
  l.epi_buf = 64 * l.pitch * 2;  // BN is a multiple of 8: 1024-byte multiples (TMA swizzle atoms)
  l.epi = (l.bars + (2 * stages + 6) * 8 + 1023) / 1024 * 1024;  // + the two zero-chunk words (FastRing::zero_u)
  l.total = l.epi + fast_epi_buffers(bm) * l.epi_buf;
  return l;
}

/// Whether a chunk of `rows` rows from row r0 (rows unclamped, as FastTile::rows_left) of a tile starting at column
/// n0 goes out by TMA store. D must have a map, the chunk must have rows, and they must end at 64 or at M (the map
/// clips rows >= M and columns >= N itself); a chunk that ends earlier, at a psum group's unpadded end, is stored by
/// the threads.
__host__ __device__ __forceinline__ bool fast_chunk_tma(const FastParams& p, int rows, int r0, int n0, int N) {
  return p.d_tma && rows > 0 && (rows >= 64 || r0 + rows == p.M) && n0 < N;
}
/// How many of a math warpgroup's bulk groups may still be reading shared memory when it rewrites the staging buffer
/// of its next chunk (one buffer per wave). After a chunk stored by TMA, whose group reads the other wave's buffer:
/// that one (waves - 1). After a chunk stored by the threads, which commits no group, the most recent group may be
/// this buffer's own: none.
__host__ __device__ constexpr int fast_epi_pending(bool prev_chunk_tma, int waves) {
  return prev_chunk_tma ? waves - 1 : 0;
}

/// The shared-memory ring of one CTA: stages of A, B and SFA with their full and empty barriers, and the two SFB
/// window buffers with theirs (barrier s at byte + 8 * s of the *_u shared-window addresses, converted once: each
/// generic -> shared conversion costs an S2R and a LEA inside the K loop).
template <class C>
struct FastRing {
  static constexpr FastSmem L = fast_smem(C::BN, C::kStages, C::BM);
  static constexpr int kSfbFloats = L.sfb_buf / 4;  // one window buffer: slot j's K blocks at [j * kSfbWindow, ...)
  uint8_t* a;
  uint8_t* b;
  float* sfa;  // BM floats per stage
  float* sfb;  // two window buffers of kSfbFloats
  uint64_t* full;
  uint64_t* empty;
  __nv_bfloat16* epi;
  uint32_t full_u, empty_u, sfb_full_u, sfb_empty_u;
  uint32_t zero_u;  // per window buffer, 8 bytes apart: the zero chunks of the window's tile (fast_sfb_loader)
  __device__ __forceinline__ explicit FastRing(uint8_t* smem)
      : a(smem + L.a),
        b(smem + L.b),
        sfa(reinterpret_cast<float*>(smem + L.sfa)),
        sfb(reinterpret_cast<float*>(smem + L.sfb)),
        full(reinterpret_cast<uint64_t*>(smem + L.bars)),
        empty(full + C::kStages),
        epi(reinterpret_cast<__nv_bfloat16*>(smem + L.epi)),
        full_u(smem_addr(full)),
        empty_u(smem_addr(empty)),
        sfb_full_u(smem_addr(full + 2 * C::kStages)),
        sfb_empty_u(smem_addr(full + 2 * C::kStages + 2)),
        zero_u(smem_addr(full + 2 * C::kStages + 4)) {}
  /// Arrivals that complete a stage's full barrier: with SFA by TMA, thread 0 (with spread, threads 0 and 64); with
  /// SFA copied, the 96 threads of fast_producer.
  static __device__ __forceinline__ uint32_t full_arrivals(const FastParams& p) {
    return p.sfa_tma ? (C::kSpread ? 2 : 1) : 96;
  }
  /// Arrivals that free a stage: every math thread of every CTA of the cluster (one per warp with multicast).
  static constexpr uint32_t kEmptyArrivals = (C::kMulticast > 1 ? 4 : 128) * C::kMathWGs * C::kMulticast;
  /// An SFB window buffer is full once the loader warp's copies have landed and its lane 0 has written the tile's zero
  /// chunks, free once every math thread has read it.
  static constexpr uint32_t kSfbFullArrivals = 33, kSfbEmptyArrivals = 128 * C::kMathWGs;
};

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

/// The producer's first three warps: for each tile of this CTA and each K block (ktma=N: each N K blocks), wait for
/// free stages and issue their loads, all completing on the first stage's full barrier. Thread 0 issues the TMA copies
/// of A (this CTA's share, multicast), B and, by TMA, SFA, and arrives with the bytes to expect; with SFA copied, the
/// 96 threads copy its rows and arrive once they have landed. With spread (SFA by TMA), thread 0 copies SFA and A,
/// thread 64 B: the single issuing thread bounded the K loop at small M (a trace of CTA 0 at 64 x 4096 x 7168 showed
/// about 500 cycles per K block from one free stage to the next, the stages all free long before).
template <class C>
__device__ __forceinline__ void fast_producer(const CUtensorMap& map_a, const CUtensorMap& map_b,
                                              const CUtensorMap& map_sfa, const FastParams& p, const FastRing<C>& ring,
                                              int tid, int rank, int cluster, int clusters, int N, int nkb) {
  constexpr int BM = C::BM, kStages = C::kStages, kKtma = C::kKtma, MC = C::kMulticast;
  constexpr int kStageA = FastRing<C>::L.stage_a, kStageB = FastRing<C>::L.stage_b;
  // Bytes per copy (ktma=N: N stages' worth).
  constexpr int kTxA = kKtma * kStageA, kTxB = kKtma * kStageB, kTxSfa = kKtma * BM * 4;
  const bool spread = C::kSpread && p.sfa_tma;
  // Only the issuing threads load. Each arrives on every stage's full barrier: one that waited for free stages without
  // arriving could be lapped by the others (a parity wait tells only two phases apart). The others walk the tiles
  // without loading (returning here instead made ptxas spill 60 bytes at BLOCK_M 256 with multicast).
  const bool idle = spread ? !(tid == 0 || tid == 64) : (p.sfa_tma && tid != 0);
  const uint32_t a_u = smem_addr(ring.a), b_u = smem_addr(ring.b), sfa_u = smem_addr(ring.sfa);
  uint32_t it = 0;
  for (int u = cluster; u < p.units; u += clusters) {
    const FastTile ti = fast_tile<C>(p, u, rank, N);
    if (!ti.valid || !ti.compute || idle) continue;
    const float* sfa_base = p.sfa + ti.z * p.sfa_s_batch + static_cast<int64_t>(ti.m0) * p.sfa_s_row;
    for (int kb = ti.kb0; kb < ti.kb1; kb += kKtma, it += kKtma) {
      const int s = it % kStages;
#pragma unroll
      for (int q = 0; q < kKtma; ++q) {
        mbar_wait(ring.empty_u + 8 * (s + q), ((it / kStages) & 1) ^ 1);
        GO_FAST_TRACE(0, it + q);
      }
      const uint32_t full = ring.full_u + 8 * s;
      auto load_a = [&] {
        if constexpr (kKtma > 1) {
          tma_load_3d(a_u + s * kStageA, &map_a, full, 0, ti.a_row, kb);
        } else if constexpr (MC == 1) {
          tma_load_2d(a_u + s * kStageA, &map_a, full, kb * kFBK, ti.a_row);
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
      if (spread) {
        if (tid == 0) {
          mbar_arrive_expect_tx(full, kTxA + kTxSfa);
          load_sfa();
          load_a();
        } else {
          mbar_arrive_expect_tx(full, kTxB);
          load_b();
        }
      } else if (p.sfa_tma) {
        mbar_arrive_expect_tx(full, kTxA + kTxB + kTxSfa);
        load_sfa();
        load_a();
        load_b();
      } else {
        if (tid == 0) {
          mbar_expect_tx(full, kTxA + kTxB);
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
  asm volatile("cp.async.wait_all;\n" ::: "memory");  // no copy outlives its thread
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
  // buffer), A's right after it (past BLOCK_N 144 the registers they would hold across the wgmmas are not there: read
  // at promotion).
  static constexpr bool kHoist = BN <= 144;
  using Scales = FastScales<C::kSfbSlots>;

  const FastParams& p;
  const FastRing<C>& ring;
  int w, tid, lane;
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
        lane(tid_ % 32),
        lo_a0(__shfl_sync(0xffffffffu, desc_lo_sw128(smem_addr(ring_.a + w_ * 64 * 128)), 0)),
        lo_b0(__shfl_sync(0xffffffffu, desc_lo_sw128(smem_addr(ring_.b)), 0)),
        sfb_u(__shfl_sync(0xffffffffu, smem_addr(ring_.sfb), 0)),
        sfa_u(smem_addr(ring_.sfa) + 4 * (w_ * 64 + acc_row(tid_, 0))) {}

  /// Waits until the loads of pipeline iteration `at` have landed: on its stage's full barrier, or with ktma=N on the
  /// barrier of the first stage of its group of N, where the group's copies complete.
  __device__ __forceinline__ void wait_full(uint32_t at) const {
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
    const int s = at % kStages;
    Scales sc{};
    if constexpr (kHoist && !C::kSplitK) read_sb(sc, win, at);
    if (wave == 0) {
      wait_full(at);
      GO_FAST_TRACE(2, at);
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
  /// Frees stage s in every CTA of the cluster: one arrival per thread (each orders its own reads of the stage), or
  /// with multicast one per warp and CTA after __syncwarp, which keeps the remote arrivals to 4 per warpgroup and CTA.
  /// One arrival per warp without multicast measured level with one per thread over the 45 benchmark shapes (ours /
  /// DeepGEMM 0.919 against 0.923, H200), and compute-sanitizer's racecheck reported the scale reads of the other lanes
  /// as racing with the next copies into the stage; it reports the same of the multicast release (6 hazards at
  /// bm=256,bn=96,mc=2, none at mc=1), which the bits of every multicast configuration do not show.
  __device__ __forceinline__ void release(int s) const {
    if constexpr (MC == 1) {
      mbar_arrive_local(ring.empty_u + 8 * s);
    } else {
      __syncwarp();
      if (lane < MC) mbar_arrive_cluster(ring.empty_u + 8 * s, static_cast<uint32_t>(lane));
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
/// this one's promotion. Unrolled 4 times (with the B scales read before the stage's wait; H200 same run, us, not
/// unrolled -> 4: 4096 x 2112 x 7168 123.9 -> 109.1, 4096 x 7168 x 16384 830.9 -> 793.4, 4096 x 4096 x 7168 216.1 ->
/// 202.2, masked 6 x 1024 x 7168 x 3072 259.4 -> 230.9; 4096 x 32768 x 512, 4 K blocks, 167.9 -> 173.6; 2 times gained
/// less, 8 times lost 4096 x 576 x 7168, 35.1 -> 44.2). Not unrolled past BLOCK_N 144 (scales read at promotion) nor in
/// kernels of run-time K: ptxas spilled 868 bytes at 128 x 176 and 954 at 256 x 112 (generic).
/// kIdleLast: the last wave's rows are all idle (fast_idle_waves): it waits for nothing and issues nothing, and the
/// stage is released after the first wave's wgmmas.
template <int kB1, bool kIdleLast = false, class C>
__device__ __forceinline__ void fast_mainloop_one_set(const FastMath<C>& m, const FastTile& ti, float* F,
                                                      float (&P)[C::BN / 2], uint32_t& it, int nk,
                                                      const FastWindow& win) {
  constexpr int kUnroll = FastMath<C>::kHoist && C::kK != 0 ? 4 : 1;
  constexpr int kRun = kIdleLast ? C::kWaves - 1 : C::kWaves;
  static_assert(kRun >= 1, "an idle last wave needs a wave before it");
#pragma unroll kUnroll
  for (int kb = 0; kb < nk; ++kb, ++it) {
#pragma unroll
    for (int v = 0; v < kRun; ++v) {
      const auto sc = m.issue(P, it, win, v);
      wgmma_wait0();
      m.template promote<kB1>(P, F, it, sc, ti, win, v);
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

// bf16 RNE of the accumulator pair (i, i + 1), or two zeros (a chunk written as zeros).
__device__ __forceinline__ __nv_bfloat162 bf16_pair(const float* f, int i, bool zero) {
  __nv_bfloat162 v;
  v.x = __float2bfloat16_rn(zero ? 0.0f : f[i]);
  v.y = __float2bfloat16_rn(zero ? 0.0f : f[i + 1]);
  return v;
}

/// Box j of a TMA-stored chunk holds columns [j * kBox, (j + 1) * kBox), rows of kBox * 2 bytes, the 16-byte chunks of
/// each row XOR-swizzled by the row as the TMA map's swizzle mode reads them.
template <int BN>
struct FastEpiBox {
  static constexpr int kBox = fast_epi_box_cols(BN), kRowBytes = kBox * 2, kSwz = kRowBytes / 16 - 1;
};

/// bf16 RNE of one wave's accumulators (zeros where `zero`) into staging buffer eb in the box layout, with stmatrix: an
/// 8-column block of a warp's 16 rows is two 8 x 8 matrices (rows 0-7, 8-15), whose pairs are accumulators 4b, 4b + 1
/// and 4b + 2, 4b + 3; x4 stores blocks b and b + 1 (one box: kBox is a multiple of 16 where there is a block b + 1).
/// Lane t gives the address of row t % 8 of matrix t / 8.
template <int BN>
__device__ __forceinline__ void fast_stage_chunk(uint8_t* eb, const float* Fw, bool zero, int tid) {
  using Box = FastEpiBox<BN>;
  constexpr int kBox = Box::kBox, kRowBytes = Box::kRowBytes, kSwz = Box::kSwz, kBlocks = BN / 8;
  const uint32_t eb_u = smem_addr(eb);
  const int lane = tid % 32, row = 16 * (tid / 32) + ((lane >> 3) & 1) * 8 + (lane & 7);
  auto addr = [&](int b) {
    const int c = 8 * b;
    const uint32_t lin = static_cast<uint32_t>(row * kRowBytes + (c % kBox) * 2);
    const uint32_t sw = kRowBytes >= 32 ? lin ^ (((lin >> 7) & kSwz) << 4) : lin;
    return eb_u + static_cast<uint32_t>((c / kBox) * 64 * kRowBytes) + sw;
  };
  auto pair = [&](int i) {
    const __nv_bfloat162 v = bf16_pair(Fw, i, zero);
    return *reinterpret_cast<const uint32_t*>(&v);
  };
#pragma unroll
  for (int b = 0; b + 1 < kBlocks; b += 2)
    stmatrix_x4(addr(b + (lane >> 4)), pair(4 * b), pair(4 * b + 2), pair(4 * b + 4), pair(4 * b + 6));
  if constexpr (kBlocks % 2 == 1) stmatrix_x2(addr(kBlocks - 1), pair(4 * kBlocks - 4), pair(4 * kBlocks - 2));
}

/// The TMA stores of one staged chunk (rows r0 .. r0 + 63 of batch z from column n0), by one thread; boxes past N are
/// not stored.
template <int BN>
__device__ __forceinline__ void fast_store_chunk(const CUtensorMap& map_d, uint8_t* eb, int n0, int r0, int z, int N) {
  using Box = FastEpiBox<BN>;
#pragma unroll
  for (int j = 0; j < BN / Box::kBox; ++j) {
    if (n0 + j * Box::kBox < N) tma_store_3d(&map_d, eb + j * 64 * Box::kRowBytes, n0 + j * Box::kBox, r0, z);
  }
}

/// The epilogue of one tile, per wave (64-row chunk 2 * wave + w of the tile): bf16 RNE of F (zeros for the chunks in
/// zero_chunks, bit c: chunk c) into this warpgroup's staging buffer for the wave in the TMA box layout
/// (fast_stage_chunk), then one thread stores it with TMA (cp.async.bulk.tensor), so the math warps go on to the next
/// tile while the copy engine writes D; at BLOCK_M 256 both waves at once where both go by TMA. A chunk that TMA
/// cannot store (fast_chunk_tma) goes out as 16-byte stores by the threads, with M/N bounds. The chunk's facts are
/// picked by w with a select: an index computed from w would put the whole FastTile in local memory.
template <class C>
__device__ __forceinline__ void fast_epilogue(const CUtensorMap& map_d, const FastParams& p, const FastRing<C>& ring,
                                              const FastTile& ti, const float* F, int w, int tid,
                                              uint32_t zero_chunks, bool& prev_chunk_tma, int N) {
  constexpr int BN = C::BN, NA = BN / 2, kWaves = C::kWaves;
  constexpr FastSmem L = FastRing<C>::L;
  const bool w1 = C::kMathWGs == 2 && w == 1;
  // Two waves (BLOCK_M 256), both stored by TMA (every tile but one that ends inside a psum group): both chunks staged
  // between one pair of barriers and one fence, and stored as one bulk group, which the next tile's epilogue waits
  // for whole (as after a chunk stored by the threads).
  if constexpr (kWaves == 2) {
    const int rows0 = w1 ? ti.rows_left[1] : ti.rows_left[0], rows1 = w1 ? ti.rows_left[3] : ti.rows_left[2];
    const int r00 = ti.m0 + 64 * w, r01 = ti.m0 + 64 * (2 + w);
    if (fast_chunk_tma(p, rows0, r00, ti.n0, N) && fast_chunk_tma(p, rows1, r01, ti.n0, N)) {
      uint8_t* eb0 = reinterpret_cast<uint8_t*>(ring.epi + (w * kWaves) * (L.epi_buf / 2));
      uint8_t* eb1 = eb0 + L.epi_buf;
      if (tid == 0) bulk_wait_read<0>();
      named_sync(1 + w, 128);
      fast_stage_chunk<BN>(eb0, F, (zero_chunks >> w) & 1, tid);
      fast_stage_chunk<BN>(eb1, F + NA, (zero_chunks >> (2 + w)) & 1, tid);
      fence_proxy_async();
      named_sync(1 + w, 128);
      if (tid == 0) {
        fast_store_chunk<BN>(map_d, eb0, ti.n0, r00, ti.z, N);
        fast_store_chunk<BN>(map_d, eb1, ti.n0, r01, ti.z, N);
        bulk_commit();
      }
      prev_chunk_tma = false;
      return;
    }
  }
#pragma unroll
  for (int wave = 0; wave < kWaves; ++wave) {
    const int rows = w1 ? ti.rows_left[2 * wave + 1] : ti.rows_left[2 * wave];  // unclamped: see fast_tile
    const bool zero = (zero_chunks >> (2 * wave + w)) & 1;
    const float* Fw = F + wave * NA;
    const int r0 = ti.m0 + 64 * (2 * wave + w);
    // This warpgroup's buffer for this wave, last read by a TMA store of the same wave a tile or more ago, waited for
    // as fast_epi_pending says (tests/kernels/fast_tiles_check.cu replays it).
    __nv_bfloat16* epi = ring.epi + (w * kWaves + wave) * (L.epi_buf / 2);
    if (tid == 0) {
      if (fast_epi_pending(prev_chunk_tma, kWaves) == kWaves - 1) bulk_wait_read<kWaves - 1>();
      else bulk_wait_read<0>();
    }
    named_sync(1 + w, 128);
    const bool tma = fast_chunk_tma(p, rows, r0, ti.n0, N);
    prev_chunk_tma = tma;
    if (tma) {
      uint8_t* eb = reinterpret_cast<uint8_t*>(epi);
      fast_stage_chunk<BN>(eb, Fw, zero, tid);
      fence_proxy_async();
      named_sync(1 + w, 128);
      if (tid == 0) {
        fast_store_chunk<BN>(map_d, eb, ti.n0, r0, ti.z, N);
        bulk_commit();
      }
    } else {
      __nv_bfloat16* dbase = p.d + ti.z * p.d_s_batch + static_cast<int64_t>(r0) * p.d_s_row + ti.n0;
#pragma unroll
      for (int i = 0; i < NA; i += 2) {
        const int r = acc_row(tid, i), c = acc_col(tid, i);
        *reinterpret_cast<__nv_bfloat162*>(epi + r * L.pitch + c) = bf16_pair(Fw, i, zero);
      }
      named_sync(1 + w, 128);
      for (int idx = tid; idx < 64 * (BN / 8); idx += 128) {
        const int r = idx / (BN / 8), c = (idx % (BN / 8)) * 8;
        if (r >= rows) continue;
        __nv_bfloat16* dst = dbase + static_cast<int64_t>(r) * p.d_s_row + c;
        const __nv_bfloat16* src = epi + r * L.pitch + c;
        if (ti.n0 + c + 8 <= N && (reinterpret_cast<uintptr_t>(dst) & 15) == 0) {
          *reinterpret_cast<uint4*>(dst) = *reinterpret_cast<const uint4*>(src);
        } else {
          for (int e = 0; e < 8; ++e)
            if (ti.n0 + c + e < N) dst[e] = src[e];
        }
      }
      named_sync(1 + w, 128);
    }
  }
}

/// The waves of warpgroup w's rows in tile ti whose results nothing reads, as a bit mask (bit v: wave v): chunks of
/// which the epilogue stores no row (past M, past a psum group's end) or that it writes as zeros because they start at
/// or past masked_m. Their wgmmas and promotions are skipped (masked 32 x 192 x 6144 x 7168 at BLOCK_M 256, the second
/// warpgroup's last wave: 645.4 -> 611.0 us; masked 32 x 20 x 6144 x 7168 at BLOCK_M 128, the whole second
/// warpgroup, as DeepGEMM's is_computation_valid skips: 423.2 -> 372.8 us; H200, each against DeepGEMM in its own
/// call). Contiguous rows of group -1 are computed: their flags come with the tile's first SFB window
/// (FastMath::zero_chunks), after this choice. Split K keeps every wave: its workspace is read whole. The chunk's
/// facts are picked by w with a select (an index computed from w would put the FastTile in local memory).
template <class C>
__device__ __forceinline__ int fast_idle_waves(const FastParams& p, const FastTile& ti, int w) {
  if constexpr (C::kSplitK) return 0;
  const bool w1 = C::kMathWGs == 2 && w == 1;
  const int masked_m = p.mode == kFastMasked ? p.masked_m[ti.z] : p.M;  // fast_tile read it
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
  uint32_t it = 0;
  bool prev_chunk_tma = false;  // the last chunk this warpgroup stored went by TMA (one bulk group)
  float F[kWaves * NA];
  float P[C::kSets][NA];
#pragma unroll
  for (int j = 0; j < C::kSets; ++j)
#pragma unroll
    for (int i = 0; i < NA; ++i) P[j][i] = 0.0f;
  uint32_t wn = 0;  // SFB windows run, as the loader counts them
  for (int u = cluster; u < p.units; u += clusters) {
    // Without the zero chunks, which the loader hands over with the tile's first window (FastMath::zero_chunks).
    const FastTile ti = fast_tile<C, false>(p, u, rank, N);
    if (!ti.valid) continue;
#pragma unroll
    for (int i = 0; i < kWaves * NA; ++i) F[i] = 0.0f;
    uint32_t zero_chunks = ti.compute ? 0u : 0xFu;
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
    // Split K has no epilogue here (the second kernel writes D).
    if constexpr (!C::kSplitK && (kFastProfile & kProfNoEpilogue) == 0)
      fast_epilogue(map_d, p, ring, ti, F, w, tid, zero_chunks, prev_chunk_tma, N);
  }
  // The TMA stores this thread issued finish (reading shared memory and writing D) before the CTA exits.
  if (tid == 0) bulk_wait_all();
  GO_FAST_TRACE_AT(128, 1, it);
  GO_FAST_TRACE_AT(128, 2, clock64());
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
  // The warpgroup index through a shuffle from lane 0: the compiler then knows it is warp-uniform and keeps what
  // derives from it (the wgmma descriptors) in uniform registers (DeepGEMM does the same).
  const int wg = __shfl_sync(0xffffffffu, static_cast<int>(threadIdx.x / 128), 0), tid = threadIdx.x % 128;
  const int rank = MC > 1 ? static_cast<int>(cluster_cta_rank()) : 0;
  // Until grid_dependency_wait below nothing touches global memory: launched with programmatic dependent launch, this
  // CTA may start while the kernel before it on the stream still runs, and sets up its barriers and tensor maps.
  if (threadIdx.x == 0) {
    // The maps are kernel parameters (__grid_constant__), which no earlier kernel writes.
    tma_prefetch_map(&map_a);
    tma_prefetch_map(&map_b);
    if (p.sfa_tma) tma_prefetch_map(&map_sfa);
    if (p.d_tma) tma_prefetch_map(&map_d);
    for (int s = 0; s < C::kStages; ++s) {
      mbar_init(&ring.full[s], FastRing<C>::full_arrivals(p));
      mbar_init(&ring.empty[s], FastRing<C>::kEmptyArrivals);
    }
    for (int b = 0; b < 2; ++b) {
      mbar_init(&ring.full[2 * C::kStages + b], FastRing<C>::kSfbFullArrivals);
      mbar_init(&ring.full[2 * C::kStages + 2 + b], FastRing<C>::kSfbEmptyArrivals);
    }
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    fence_proxy_async();
  }
  if (MC > 1) cluster_sync();
  else __syncthreads();
  if constexpr ((kFastProfile & kProfNoDependencyWait) == 0) grid_dependency_wait();
  // The next launch may be scheduled now: its CTAs take SMs as this grid's CTAs exit (each CTA fills its SM) and wait
  // above until this grid has completed.
  grid_launch_dependents();
  GO_FAST_TRACE_AT(0, 0, clock64());
  // Grouped calls: the gate kernel (grouped_gate.h) ran first on this stream. A bad layout, or groups that this
  // kernel's tile height was not launched for, and the whole grid returns here (every CTA of a cluster alike).
  if (p.gate != nullptr) {
    const bool bad = p.gate[kGateBad] != 0, fits = p.gate[kGateFits256] != 0;
    if (bad || (p.gate_want == kWantFits256 && !fits) || (p.gate_want == kWantNot256 && fits)) return;
  }
  const int nkb = (K + kFBK - 1) / kFBK;
  const int cluster = blockIdx.x / MC, clusters = gridDim.x / MC;
  if (wg == 0) {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(kProducerRegs) : "memory");
    if (tid < 96) {
      fast_producer<C>(map_a, map_b, map_sfa, p, ring, tid, rank, cluster, clusters, N, nkb);
    } else if constexpr (!C::kSplitK) {
      fast_sfb_loader<C>(p, ring, tid - 96, rank, cluster, clusters, N);
    }
  } else {
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(kMathRegs) : "memory");
    // With BLOCK_M 64 the second math warpgroup has no rows: it walks no tiles and issues nothing.
    if (wg - 1 < C::kMathWGs) fast_math<C>(map_d, p, ring, wg - 1, tid, rank, cluster, clusters, N);
  }
  // No CTA of a cluster leaves while a peer may still multicast into it or arrive on its barriers.
  if (MC > 1) cluster_sync();
}

}  // namespace go_sm90
