// The fast SM90 FP8 GEMM's configuration (FastConfig), its shared-memory layout (fast_smem) and ring of stages and
// barriers (FastRing), and the epilogue's rules for which chunks go by TMA and when a staging buffer is free: what
// the producer (sm90_fp8_fast_producer.cuh), the math (sm90_fp8_fast_math.cuh), the epilogue
// (sm90_fp8_fast_epilogue.cuh) and the launcher (sm90_fp8_fast.cu) agree on.
#pragma once
#include <cuda.h>

#include <cstdint>

#include "sm90_common.cuh"
#include "sm90_fast.h"
#include "sm90_fp8_fast_tiles.cuh"

namespace go_sm90 {

constexpr int kFastThreads = 384;
/// The deepest ring: 20 stages, five groups of ktma=4 at BLOCK_M 64 x BLOCK_N 16 (10 KB a stage; 21 fit in 227 KB).
/// stages_that_fit in sm90_fp8_fast_heuristic.cu says where the heuristic goes past 16.
constexpr int kFastMaxStages = 20;
// setmaxnreg split. __launch_bounds__(384, 1) gives every thread 168 registers at launch (65536 / 384, rounded down
// to 8) and the CTA owns 384 x 168 of them: setmaxnreg.inc blocks until the producer's setmaxnreg.dec has released
// enough, so 128 x P + 256 x M must not exceed 384 x 168 (a larger M hangs every CTA at its first instruction).
// 64 / 216 (ptxas -v, nvcc 13.0): at 56 / 224 the producer spilled 16 to 48 bytes once the SFB loader warp and the
// 96-thread SFA copy joined it (multicast, ktma=4), at DeepGEMM's 40 / 232 it spilled its barrier and descriptor
// addresses; no accumulator layout of BLOCK_N <= 200 needs more than 216 (tests/kernels/cuda_jit_source_test.ts checks
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
/// MODE_: the call's FastMode where the kernel is specialised for one shape class (-1: read from FastParams at run
/// time), so that a dense kernel carries no grouped path (fast_mode). SFA_TMA_: there, whether SFA comes by TMA (1) or
/// by the producer warps' copies (0) (-1: FastParams::sfa_tma at run time; fast_sfa_tma).
template <int BM_, int BN_, int STAGES_, int MC_, int SETS_, int KN_ = 0, int KK_ = 0, bool SPLIT_ = false,
          int KTMA_ = 1, bool SPREAD_ = false, int MODE_ = -1, int SFA_TMA_ = -1>
struct FastConfig {
  static constexpr int BM = BM_, BN = BN_, kStages = STAGES_, kMulticast = MC_, kSets = SETS_, kN = KN_, kK = KK_;
  static constexpr int kKtma = KTMA_, kMode = MODE_, kSfaTma = SFA_TMA_;
  static constexpr bool kSplitK = SPLIT_, kSpread = SPREAD_;
  static constexpr int kWaves = BM >= kFBM ? BM / kFBM : 1, kMathWGs = BM == 64 ? 1 : 2;
  static constexpr int kSfbSlots = fast_sfb_slots(BN);
  static_assert(BM == 64 || BM == 128 || BM == 256, "BLOCK_M 64, 128 or 256");
  static_assert(BN % 8 == 0 && BN >= 8 && BN <= 256, "BLOCK_N must be a multiple of 8 in [8, 256]");
  static_assert(kMulticast == 1 || kMulticast == 2, "multicast over 1 or 2 CTAs");
  static_assert(kStages >= 2 && kStages <= kFastMaxStages, "stages");
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
  static_assert(kMode >= -1 && kMode <= kFastMasked, "mode: -1 (run time) or a FastMode");
};

/// Whether A is loaded by 64-row chunk (a TMA box of 64 rows; else BLOCK_M / multicast rows): masked GEMMs without
/// multicast, deep boxes or split K, at BLOCK_M 128, and at BLOCK_M 256 where a group is one row tile (Mmax <= 256).
/// The producer leaves out the chunks that start at or past masked_m. No math warpgroup reads those rows
/// (fast_idle_waves skips their wgmmas) and the epilogue writes them as zeros, so the bits are unchanged. H200:
/// - BLOCK_M 128, masked_m 20 (Mmax 128): a stage's A bytes halve; in one process with DeepGEMM, alternating, the
///   eight 20-row masked shapes 0.940x -> 0.957x DeepGEMM, 32 x 20 x 6144 x 7168 383.4 -> 373.2 us.
/// - BLOCK_M 256, masked_m 192 (Mmax 256): three chunks of four, 24 KB of A a stage against 32 (tests/gpu/run.sh's ab
///   step, two calls, 3 runs a side, us): 32 x 192 x 7168 x 3072 304.2 -> 278.2 and 285.2 -> 279.4, x 4096 x 2048
///   115.4 -> 113.0 and 114.5 -> 111.6, x 4096 x 4096 221.8 -> 215.7 and 216.4 -> 212.2, x 6144 x 7168 595.3 -> 589.8
///   and 576.7 -> 561.1; against DeepGEMM in one process the four 1.035x -> 1.060x (geomean). Where a group has several
///   row tiles (6 x 1024, Mmax 1024) four copies a stage in place of one lost on 6 x 1024 x 6144 x 7168 (428.7 -> 457.4
///   us) and saved only the last tile's chunks: there the box stays whole.
/// The launcher (the map's box) and the producer (the copies and the bytes to expect) both ask this.
__host__ __device__ constexpr bool fast_a_by_chunk(int mode, int split_k, int bm, int mc, int ktma, int M) {
  return mode == kFastMasked && split_k <= 1 && (bm == kFBM || (bm == 256 && M <= 256)) && mc == 1 && ktma == 1;
}

/// Whether the launcher may split the last round's tiles in halves (fast_split_tail): BLOCK_M 256 tiles whose K loop
/// issues nothing for an idle second wave (one B scale slot: fast_mainloop_one_set's kIdleLast), without split K, so a
/// half's K loop runs half the wgmmas of a tile. H200, in one process with DeepGEMM, alternating against the whole last
/// round: the six shapes it splits 0.943x -> 0.952x DeepGEMM (masked 6 x 1024 x 7168 x 3072, 24 tiles in the last of
/// 11 rounds: 0.904x -> 0.921x), none slower.
__host__ __device__ constexpr bool fast_tail_halves(int bm, int bn, int split_k) {
  return bm == 256 && fast_sfb_slots(bn) == 1 && split_k <= 1;
}

/// Columns of one TMA store box of D for BLOCK_N `bn`: the widest of 64, 32, 16, 8 that divides it, so a box row is
/// 128, 64, 32 or 16 bytes and takes the swizzle of that span (none for 16). Each of a warp's 4-byte writes then
/// falls in its own bank (the 8 rows of an accumulator fragment land in 8 different 16-byte chunks).
__host__ __device__ constexpr int fast_epi_box_cols(int bn) {
  return bn % 64 == 0 ? 64 : bn % 32 == 0 ? 32 : bn % 16 == 0 ? 16 : 8;
}

/// Dynamic shared memory one CTA may take on an H100 / H200: 227 KB, opted into at launch.
constexpr int kFastMaxSmem = 232448;
/// What the launcher asks beyond a layout's total: room to align the dynamic shared memory's base to 1024 bytes.
constexpr int kFastSmemAlignSlack = 1024;

/// Shared-memory layout (bytes from a 1024-aligned base) of one configuration. One function for the kernel (at compile
/// time) and the launcher (at run time, which adds kFastSmemAlignSlack for the alignment).
struct FastSmem {
  int stage_a;  // bytes of one A stage
  int stage_b;  // bytes of one B stage
  int pitch;    // bf16 elements per epilogue row of the threads' stores (BN: the TMA box layout needs no more)
  int epi_buf;  // bytes of one epilogue staging buffer (64 rows x pitch), a multiple of 1024
  int sfb_buf;  // bytes of one SFB window buffer (slots x kSfbWindow floats)
  int a, b, sfa, sfb, bars, epi, total;
  // BLOCK_M 256 with more stages than fit beside a staging buffer a wave: one buffer of one TMA box a math warpgroup,
  // the boxes staged and stored in turn, each once the store before it has read the buffer (fast_epilogue). It lets a
  // fourth stage fit at 256 x 128 (220,160 bytes); the heuristic takes it where a rule says (stages_that_fit).
  // Staging three of a warpgroup's four boxes at once, two of them in its A rows of the tile's last stage kept from the
  // K loop, timed level with this: H200, tests/gpu/run.sh's ab step, 3 runs a side, the 8 shapes that rule takes and
  // two 16-K-block controls, one at a time / kept 0.991x geomean (0.988-1.002x on the 8), an unmodified copy 0.995x
  // (docs/performance-history.md, "Issue 26, thirty-fifth round").
  bool by_box;
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
  l.by_box = bm == 256 && l.total + kFastSmemAlignSlack > kFastMaxSmem;
  if (l.by_box) {
    l.epi_buf = 64 * fast_epi_box_cols(bn) * 2;
    l.total = l.epi + 2 * l.epi_buf;
  }
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
/// this buffer's own: none; likewise after both waves stored as one group (fast_epilogue at BLOCK_M 256), which reads
/// this buffer too.
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
    return fast_sfa_tma<C>(p) ? (C::kSpread ? 2 : 1) : 96;
  }
  /// Arrivals that free a stage: every math thread of every CTA of the cluster (FastMath::release).
  static constexpr uint32_t kEmptyArrivals = 128 * C::kMathWGs * C::kMulticast;
  /// An SFB window buffer is full once the loader warp's copies have landed and its lane 0 has written the tile's zero
  /// chunks, free once every math thread has read it.
  static constexpr uint32_t kSfbFullArrivals = 33, kSfbEmptyArrivals = 128 * C::kMathWGs;
};

}  // namespace go_sm90
