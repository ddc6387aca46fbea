// Device code of the fast SM90 FP8 GEMM (1D2D, BF16 out), templated on its configuration so that it can be built
// ahead of time or compiled at first use for one shape class (sm90_fp8_fast.cu writes a one-line instantiation of
// fp8_fast_body, and jit.cu runs nvcc on it).
//
// Structure: a producer warpgroup (TMA for A, B and, where its layout allows, SFA: one thread issues them and the
// stage's full barrier takes one arrival per SFB slot; otherwise cp.async for SFA, from all four warps or one of them)
// and two math warpgroups of 64 rows each per wave (BLOCK_M 128: one wave, 256: two; BLOCK_M 64: one math warpgroup,
// the other idles; setmaxnreg 56/224 or 40/232), a kStages-deep shared-memory ring on mbarriers, a persistent grid
// walking the tiles in grouped rasterisation, TMA multicast of the A tile across a cluster of kMulticast CTAs that
// share the M block (each CTA loads BLOCK_M / kMulticast rows and the copy lands in every CTA of the cluster), and a
// BF16 epilogue through shared memory and TMA stores (epi=tma; or epi=smem, 16-byte stores by the math threads; or
// epi=direct, from registers). With split K (SPLIT_), units are
// (tile, K range) and each K block's raw result goes to a workspace; sm90_fp8_fast.cu's second kernel promotes.
//
// Numerics are those of sm90_gemm.cu's fp8_gemm_kernel, instruction for instruction: per 128-K block a chain of
// 4 x wgmma m64nBNk32 (the first with scale-d = 0) and F = fma(fl32(sa * sb), P, F) on CUDA cores, then bf16 RNE
// (deepgemm-ops.md §6.1). Neither BLOCK_M nor BLOCK_N changes the bits: every output element sees the same chain
// whatever tile it is in, and a tile that straddles a 128-column scale block picks sb per 8-column chunk. tests/gpu/check.cpp compares
// every configuration with the CPU backend and the embedded model.
#pragma once
#include <cuda.h>
#include <cuda_bf16.h>

#include <cstdint>
#include <type_traits>

#include "sm90_common.cuh"
#include "sm90_fast.h"

namespace go_sm90 {

constexpr int kFBM = 128, kFBK = 128;  // kFBM: rows of one wave (two math warpgroups of 64)
constexpr int kFastThreads = 384;
// setmaxnreg split. __launch_bounds__(384, 1) gives every thread 168 registers at launch (65536 / 384, rounded down
// to 8) and the CTA owns 384 x 168 of them: setmaxnreg.inc blocks until the producer's setmaxnreg.dec has released
// enough, so 128 x P + 256 x M must not exceed 384 x 168 (a larger M hangs every CTA at its first instruction).
// Default 56 / 224: at DeepGEMM's 40 / 232 the producer spills (ptxas -v: 8 to 24 bytes at BLOCK_N 64 to 144, once
// the barrier and descriptor addresses are kept in registers), while no accumulator layout of BLOCK_N <= 176 needs
// more than 224. The JIT writes both numbers into each instantiation (GO_CUDA_FAST_CFG regs=40 asks for 40 / 232).
#ifndef GO_FAST_PRODUCER_REGS
#define GO_FAST_PRODUCER_REGS 56
#define GO_FAST_MATH_REGS 224
#endif
// Profiling switches (GO_CUDA_FAST_CFG dbg=N; the results are WRONG, for timing only): bit 0, the math warps wait
// for each stage and release it without wgmma or promotion; bit 1, the producer's thread 0 alone arrives on the full
// barrier (TMA of A and B only, no scale copies); bit 2, no epilogue (nothing is stored, and with the results dead
// the compiler drops the promotion too: it times the wgmmas and the feed without any CUDA-core work); bit 3, no
// griddepcontrol.wait (a pdl=1 launch may then read its inputs before the kernel ahead of it wrote them:
// tests/gpu/pdl_check.cu shows that its check sees this); bit 4, no TMA load of A; bit 5, no TMA load of B (with
// bits 0 and 1 these split the feed's time between the operands).
#ifndef GO_FAST_DBG
#define GO_FAST_DBG 0
#endif
// dbg bit 6 (64) traces CTA 0: clock64 of the producer's thread 0 once a stage is free and once its loads are issued,
// and of the first math thread once a stage is full and once it released it, per pipeline iteration (rows 0-3 of
// go_fast_trace, the first 256 iterations), with the producer's start clock, the iteration count, the end and the
// prologue marks (GO_FAST_MARK, slots 3-6) in row 4. Every
// launch overwrites it; the launcher reads it after a module's 30th launch and prints it on stderr
// (print_fast_trace in sm90_fp8_fast.cu), so the kernel needs no printf, which would serialise its wgmmas (C7510).
// C linkage keeps the symbol's name unmangled inside namespace go_sm90, so cuModuleGetGlobal finds "go_fast_trace"
// (with C++ linkage it is _ZN7go_sm9013go_fast_traceE: the H200's first try answered CUresult 500, not found).
#if GO_FAST_DBG & 64
extern "C" {
__device__ long long go_fast_trace[5][256];
}
#define GO_FAST_TRACE(ev, i)                                            \
  do {                                                                  \
    if (blockIdx.x == 0 && (threadIdx.x == 0 || threadIdx.x == 128))    \
      go_fast_trace[ev][(i) & 255] = clock64();                         \
  } while (0)
// Prologue marks in row 4 (slot 3 on: see print_fast_trace), by thread `t` of CTA 0.
#define GO_FAST_MARK(slot, t)                                 \
  do {                                                        \
    if (blockIdx.x == 0 && threadIdx.x == (t)) go_fast_trace[4][slot] = clock64(); \
  } while (0)
#else
#define GO_FAST_TRACE(ev, i) \
  do {                       \
  } while (0)
#define GO_FAST_MARK(slot, t) \
  do {                        \
  } while (0)
#endif
// group=N (FastChoice::load_group): the producer waits until the stages of N consecutive K blocks are all free before
// issuing the first, so their loads leave together (adjacent 128-byte segments of each B row reach DRAM at once).
#ifndef GO_FAST_LOAD_GROUP
#define GO_FAST_LOAD_GROUP 1
#endif
// spread=1 (FastChoice::spread; with SFA by TMA): a stage's copies are issued by three producer threads side by side,
// thread 0 (SFA and A), thread 64 (B) and threads 32 .. 32 + kSfbSlots - 1 (the SFB values), each arriving for its
// own part; spread=2 moves SFA to thread 96 of its own (four issuing threads). A trace of CTA 0 (dbg bit 6, H200,
// 64 x 4096 x 7168) showed the single issuing thread as the bound at small M: about 500 cycles per K block from one
// free stage to the next, the stages all free long before (bench/RESULTS.md, ninth session).
#ifndef GO_FAST_SPREAD
#define GO_FAST_SPREAD 0
#endif
// ktma=N (FastChoice::ktma, 2 or 4; mc=1): the TMA copies of A, B and SFA are boxes N K blocks deep (A and B by a 3D
// map of [K / 128][rows][128], SFA by a box of N K-block rows), each filling N consecutive stages (the stage count is
// a multiple of N) and completing on the first one's full barrier, which the math waits on for all N; the SFB values
// stay one cp.async per stage and slot. N times fewer TMA instructions per K block: the trace of the tenth session
// (H200) showed about 100 cycles of the issuing thread per TMA instruction, whatever its bytes. The stages, their
// contents and the math are the same, so the bits are too.
#ifndef GO_FAST_KTMA
#define GO_FAST_KTMA 1
#endif
// acc=triple|quad (FastChoice::acc_sets 3 or 4, with two-set kernels' kDoubleAcc): that many accumulator sets taken
// in turn, K block b in set b % S, so S - 1 blocks' wgmma groups are on the tensor cores while the oldest is promoted
// (acc=double keeps one in flight). Promotion order, and so the bits, are acc=double's. Built for narrow tiles at
// small M, where the trace of the tenth session (H200, BLOCK_N 16, ktma=2) put the math at 230-240 cycles per K block
// with two sets; alone it measured level there (eleventh session), with ktma=4 at BLOCK_M 64 x BLOCK_N 16 faster
// (the heuristic's choice, sm90_fp8_fast.cu). Unsplit, without ahead=1, with at least as many K blocks as sets (the
// launcher runs two sets otherwise).
#ifndef GO_FAST_ACC_SETS
#define GO_FAST_ACC_SETS 2
#endif
static_assert(128 * GO_FAST_PRODUCER_REGS + 256 * GO_FAST_MATH_REGS <= 384 * 168,
              "setmaxnreg would wait forever: the math registers exceed what the producer releases");

/// Compile-time configuration. BN: BLOCK_N (multiple of 8, <= 256); kStages: pipeline depth; kMulticast: CTAs per
/// cluster sharing the A tile (1 or 2); kDoubleAcc: two wgmma accumulator sets, so block kb + 1 runs on the tensor
/// cores while block kb is promoted (needs 3 * BN / 2 registers: BN <= 128); kN, kK: the shape's N and K when the
/// kernel is specialised for one shape class (0: read from FastParams at run time); kProducerWarps: warps that load
/// (1: one warp, 4 SFA rows per lane; 4: the whole producer warpgroup, one SFA row per thread); kReleasePerWarp: a
/// math warp releases a stage with one arrival (after __syncwarp) instead of one per thread; BM: BLOCK_M, 64, 128 or
/// 256 (256: each math warpgroup runs two waves of 64 rows per K block, one accumulator set and two sets of final
/// accumulators; the A tile is twice as tall for the same B tile, which halves B's share of the L2 traffic, the
/// layout DeepGEMM's SM90 heuristic offers as block_m 256 for BF16 output; 64: one math warpgroup, the second idles,
/// and a stage is half an A tile smaller, so more of them fit: for M <= 64, where the kernel waits on memory);
/// EPI_: the epilogue (FastEpi): kEpiTma stages each 64-row chunk in its own shared buffer (per math warpgroup and
/// wave) in the TMA box layout and one thread stores it with TMA (cp.async.bulk.tensor), so the math warps go on to
/// the next tile while the copy engine writes D; kEpiSmem stages it for 16-byte stores by the math threads; kEpiDirect
/// stores each thread's bf16 pairs straight from registers, which frees the staging buffers for one more stage;
/// SPLIT_: split K (FastParams::split_k): each unit stores its K blocks' raw wgmma results instead of promoting them;
/// HALVES_ (acc=halves): one accumulator set issued as two wgmma groups of BN / 2 columns each, so that one half is
/// promoted while the other is still on the tensor cores (the same registers as one set; each K block reads the A
/// tile from shared memory twice); AHEAD_ (ahead=1): before a tile's epilogue each math warpgroup issues the 4
/// wgmmas of the next tile's first K block, so the tensor cores work while the warpgroup converts and stores D;
/// KALT_ (kalt=1, BLOCK_M 64 only): the K blocks of a tile alternate between the two math warpgroups (at BLOCK_M 64
/// the second would idle), so two blocks' chains of dependent wgmmas run at once; the second warpgroup passes its raw
/// block results through shared memory and the first promotes every block in K order (the same bits).
template <int BN_, int STAGES_, int MC_, bool DACC_, int KN_ = 0, int KK_ = 0, int PW_ = 4, bool RPW_ = false,
          int BM_ = 128, int EPI_ = kEpiSmem, bool SPLIT_ = false, bool HALVES_ = false, bool AHEAD_ = false,
          bool KALT_ = false>
struct FastConfig {
  static constexpr int BN = BN_, kStages = STAGES_, kMulticast = MC_, kN = KN_, kK = KK_, kProducerWarps = PW_;
  static constexpr int kEpi = EPI_;
  static constexpr bool kDirectEpi = EPI_ == kEpiDirect, kSplitK = SPLIT_;
  static constexpr int BM = BM_, kWaves = BM_ >= kFBM ? BM_ / kFBM : 1, kMathWGs = BM_ == 64 ? 1 : 2;
  static constexpr bool kDoubleAcc = DACC_, kReleasePerWarp = RPW_, kHalves = HALVES_, kAhead = AHEAD_, kKAlt = KALT_;
  static_assert(!KALT_ || (BM_ == 64 && !DACC_ && !SPLIT_ && !HALVES_ && !AHEAD_),
                "kalt=1: BLOCK_M 64, one accumulator set per warpgroup, no split K, acc=halves or ahead=1");
  static_assert(!AHEAD_ || !HALVES_, "ahead=1 issues into the one-set or two-set loop's P");
  static_assert(!HALVES_ || (!DACC_ && !SPLIT_ && BN_ % 16 == 0),
                "acc=halves: one accumulator set, no split K, BN a multiple of 16 (whole 8-row swizzle atoms of B)");
  static_assert(PW_ == 1 || PW_ == 4, "one producer warp or four");
  static_assert(BM_ == 64 || BM_ == 128 || BM_ == 256, "BLOCK_M 64, 128 or 256");
  static_assert(BM_ != 256 || (!DACC_ && BN_ <= 128), "BLOCK_M 256 needs one accumulator set and BN <= 128 (registers)");
  // How many 128-column scale blocks of B one tile can touch.
  static constexpr int kSfbSlots = 128 % BN == 0 ? 1 : (BN % 128 == 0 ? BN / 128 : BN / 128 + 2);
  static_assert(BN % 8 == 0 && BN >= 8 && BN <= 256, "BLOCK_N must be a multiple of 8 in [8, 256]");
  static_assert(kMulticast == 1 || kMulticast == 2, "multicast over 1 or 2 CTAs");
  static_assert(!kDoubleAcc || BN <= 128, "two accumulator sets need BN <= 128 (registers)");
  static_assert(kStages >= 2 && kStages <= 16, "stages");
  static_assert(EPI_ == kEpiSmem || EPI_ == kEpiDirect || EPI_ == kEpiTma, "epilogue");
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
  int pitch;    // bf16 elements per epilogue row (BN + 8: bank spread)
  int epi_buf;  // bytes of one epilogue staging buffer (64 rows x pitch), a multiple of 1024
  int a, b, sfa, sfb, bars, epi, total;
  int xchg;  // kalt=1: the two exchange buffers (after the epilogue's)
};
/// Epilogue staging buffers: one per math warpgroup (epi=smem), one per warpgroup and wave (epi=tma: a buffer is
/// rewritten a tile later, once its TMA store has read it, see fast_epi_pending), none (epi=direct).
__host__ __device__ constexpr int fast_epi_buffers(int epi, int bm) {
  return epi == kEpiDirect ? 0 : epi == kEpiTma ? 2 * (bm >= kFBM ? bm / kFBM : 1) : 2;
}
/// kalt: two exchange buffers of one 64-row block result (64 x bn f32, one float per thread and register: the
/// thread of the second math warpgroup writes what the same thread of the first reads) and their four barriers.
__host__ __device__ constexpr FastSmem fast_smem(int bn, int stages, int bm = kFBM, int epi = kEpiSmem,
                                                 bool kalt = false) {
  FastSmem l{};
  l.stage_a = bm * kFBK;
  l.stage_b = bn * kFBK;
  l.pitch = bn + 8;
  l.a = 0;
  l.b = stages * l.stage_a;
  l.sfa = l.b + stages * l.stage_b;
  l.sfb = l.sfa + stages * bm * 4;
  l.bars = (l.sfb + stages * 16 + 7) / 8 * 8;
  l.epi_buf = 64 * l.pitch * 2;  // pitch is a multiple of 8: 1024-byte multiples (TMA swizzle atoms)
  l.epi = (l.bars + (2 * stages + (kalt ? 4 : 0)) * 8 + 1023) / 1024 * 1024;
  l.xchg = l.epi + fast_epi_buffers(epi, bm) * l.epi_buf;
  l.total = l.xchg + (kalt ? 2 * 64 * bn * 4 : 0);
  return l;
}

// ---- mbarrier, TMA, cp.async and cluster helpers (PTX ISA 8.x; sm_90a) ----
__device__ __forceinline__ void mbar_init(uint64_t* bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_addr(bar)), "r"(count) : "memory");
}
// The barrier helpers take the barrier's shared-window address: the kernel converts its base once (each generic ->
// shared conversion costs an S2R and a LEA inside the K loop).
__device__ __forceinline__ void mbar_wait(uint32_t bar, uint32_t parity) {
  asm volatile(
      "{\n.reg .pred p;\nWAIT_%=:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n"
      "@!p bra WAIT_%=;\n}\n" ::"r"(bar),
      "r"(parity)
      : "memory");
}
__device__ __forceinline__ void mbar_expect_tx(uint64_t* bar, uint32_t bytes) {
  asm volatile("mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], %1;\n" ::"r"(smem_addr(bar)), "r"(bytes) : "memory");
}
// Arrives on the barrier at the same offset in CTA `cta` of the cluster (this CTA included).
__device__ __forceinline__ void mbar_arrive_cluster(uint32_t bar, uint32_t cta) {
  asm volatile(
      "{\n.reg .b32 remote;\nmapa.shared::cluster.u32 remote, %0, %1;\n"
      "mbarrier.arrive.shared::cluster.b64 _, [remote];\n}\n" ::"r"(bar),
      "r"(cta)
      : "memory");
}
// Adds `bytes` to the barrier's expected transaction count and arrives, in one operation (PTX ISA 8.0,
// "mbarrier.arrive.expect_tx"); copies that complete before it leave the count transiently below zero, which the
// phase tolerates while this arrival is pending.
__device__ __forceinline__ void mbar_arrive_expect_tx(uint32_t bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}
__device__ __forceinline__ void mbar_arrive_local(uint32_t bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}
// 4-byte asynchronous copy global -> shared; valid = false writes zero (nothing is read).
__device__ __forceinline__ void cp_async4(void* dst, const void* src, bool valid) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(smem_addr(dst)), "l"(src), "r"(valid ? 4 : 0)
               : "memory");
}
// 16-byte asynchronous copy that reads `bytes` (0..16) and zero-fills the rest; both addresses 16-byte aligned.
__device__ __forceinline__ void cp_async16(void* dst, const void* src, int bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_addr(dst)), "l"(src), "r"(bytes)
               : "memory");
}
// Arrives on the barrier once this thread's earlier cp.async copies have landed (counts as the thread's arrival).
__device__ __forceinline__ void cp_async_arrive(uint64_t* bar) {
  asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\n" ::"r"(smem_addr(bar)) : "memory");
}
// Fetches a tensor map into the TMA unit's descriptor cache ahead of its first copy (PTX ISA, "prefetch.tensormap").
__device__ __forceinline__ void tma_prefetch_map(const CUtensorMap* map) {
  asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(map)) : "memory");
}
// A box of a 3D map (ktma=N: {128 bytes of K, rows, N K blocks}) at coordinates (x, y, z).
__device__ __forceinline__ void tma_load_3d(void* dst, const CUtensorMap* map, uint64_t* bar, int x, int y, int z) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5];\n" ::"r"(
          smem_addr(dst)),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(x), "r"(y), "r"(z), "r"(smem_addr(bar))
      : "memory");
}
__device__ __forceinline__ void tma_load_2d(void* dst, const CUtensorMap* map, uint64_t* bar, int x, int y) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n" ::"r"(
          smem_addr(dst)),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(x), "r"(y), "r"(smem_addr(bar))
      : "memory");
}
// The box lands at the same offset in every CTA of `mask`, each CTA's barrier at that offset receiving the bytes.
__device__ __forceinline__ void tma_load_2d_multicast(void* dst, const CUtensorMap* map, uint64_t* bar, int x, int y,
                                                      uint16_t mask) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
      " [%0], [%1, {%2, %3}], [%4], %5;\n" ::"r"(smem_addr(dst)),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(x), "r"(y), "r"(smem_addr(bar)), "h"(mask)
      : "memory");
}
// TMA store of a box of D from shared memory (box {cols, 64 rows, 1 batch} of map_d), in this thread's bulk group.
__device__ __forceinline__ void tma_store_3d(const CUtensorMap* map, const void* src, int x, int y, int z) {
  asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [%0, {%1, %2, %3}], [%4];\n" ::"l"(
                   reinterpret_cast<uint64_t>(map)),
               "r"(x), "r"(y), "r"(z), "r"(smem_addr(src))
               : "memory");
}
__device__ __forceinline__ void bulk_commit() { asm volatile("cp.async.bulk.commit_group;\n" ::: "memory"); }
// Waits until at most N of this thread's bulk groups still read shared memory.
template <int N>
__device__ __forceinline__ void bulk_wait_read() {
  asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(N) : "memory");
}
__device__ __forceinline__ void bulk_wait_all() { asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory"); }
__device__ __forceinline__ uint32_t cluster_cta_rank() {
  uint32_t r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
  return r;
}
__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void wgmma_wait1() { asm volatile("wgmma.wait_group.sync.aligned 1;\n" ::: "memory"); }
/// Waits until at most N wgmma groups of this warpgroup are pending (N a constant of the instruction).
template <int N>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
__device__ __forceinline__ void named_sync(int id, int threads) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

/// epi=tma: whether a chunk of `rows` rows from row r0 (rows unclamped, as FastTile::rows_left) of a tile starting at
/// column n0 goes out by TMA store. D must have a map, the chunk must have rows, and they must end at 64 or at M (the
/// map clips rows >= M and columns >= N itself); a chunk that ends earlier, at a psum group's unpadded end, is stored
/// by the threads.
__host__ __device__ __forceinline__ bool fast_chunk_tma(const FastParams& p, int rows, int r0, int n0, int N) {
  return p.d_tma && rows > 0 && (rows >= 64 || r0 + rows == p.M) && n0 < N;
}
/// epi=tma: how many of a math warpgroup's bulk groups may still be reading shared memory when it rewrites the
/// staging buffer of its next chunk (one buffer per wave). After a chunk stored by TMA, whose group reads the other
/// wave's buffer: that one (waves - 1). After a chunk stored by the threads, which commits no group, the most recent
/// group may be this buffer's own: none.
__host__ __device__ constexpr int fast_epi_pending(bool prev_chunk_tma, int waves) {
  return prev_chunk_tma ? waves - 1 : 0;
}

// bf16 RNE of the accumulator pair (i, i + 1), or two zeros (a chunk written as zeros).
__device__ __forceinline__ __nv_bfloat162 bf16_pair(const float* f, int i, bool zero) {
  __nv_bfloat162 v;
  v.x = __float2bfloat16_rn(zero ? 0.0f : f[i]);
  v.y = __float2bfloat16_rn(zero ? 0.0f : f[i + 1]);
  return v;
}

/// Where one CTA's tile lies. A cluster walks units of (batch, M block, group of kMulticast N blocks); CTA `rank`
/// takes N block group * kMulticast + rank. A tile whose N block lies past N still runs (its A half feeds the peer)
/// but stores nothing.
struct FastTile {
  bool valid;
  bool compute;      // false: every row of the tile is written as zeros, nothing is loaded (masked, BLOCK_M 64)
  int m0, n0;        // row (within the batch for masked) and column of the tile
  int a_row, b_row;  // TMA row coordinates
  int z, g;          // batch (masked: group) for A/D/SFA; group for B/SFB
  int sfa_rows;      // rows of SFA readable from m0 (within the batch)
  int kb0, kb1;      // the K blocks this unit runs (all of them unless K is split)
  // Per 64-row chunk of the tile: rows from the chunk's first to the end of what is stored (its group's end, or M),
  // unclamped (<= 0: none of its rows; >= 64: all of them), and whether they are written as zeros.
  int rows_left[4];
  bool zero[4];
};

template <class C>
__host__ __device__ __forceinline__ FastTile fast_tile(const FastParams& p, int u, int rank, int N) {
  FastTile ti;
  ti.valid = true;
  ti.compute = true;
  ti.z = 0;
  ti.g = 0;
  const int ngroups = (p.n_blocks + C::kMulticast - 1) / C::kMulticast;
  const int plane = p.m_blocks * ngroups;
  const int nkb = ((C::kK ? C::kK : p.K) + kFBK - 1) / kFBK;  // a constant in shape-specialised kernels
  ti.kb0 = 0;
  ti.kb1 = nkb;
  if (p.mode == kFastMasked) {
    ti.z = u / plane;
    u -= ti.z * plane;
  } else if (C::kSplitK && p.split_k > 1) {  // dense only: the split index is the outermost coordinate
    const int ks = u / plane;
    u -= ks * plane;
    ti.kb0 = ks * nkb / p.split_k;
    ti.kb1 = (ks + 1) * nkb / p.split_k;
  }
  // Grouped rasterisation: runs of 8 M blocks, N groups within a run, so co-resident tiles share A and B panels.
  const int run = u / (8 * ngroups), first_m = run * 8;
  const int gm = min(8, p.m_blocks - first_m);
  const int in = u - run * 8 * ngroups;
  const int mb = first_m + in % gm, ng = in / gm;
  ti.m0 = mb * C::BM;
  ti.n0 = (ng * C::kMulticast + rank) * C::BN;
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
      // Rows from align(masked_m, 128) on are not written (gemm_oracle.h), which a 256-row tile must respect too.
      // A 64-row tile at or past masked_m below that bound is written as zeros without being computed.
      ti.g = ti.z;
      rows_end = min(p.M, (p.masked_m[ti.z] + kFBM - 1) / kFBM * kFBM);
      if (ti.m0 >= rows_end) ti.valid = false;
      else if (ti.m0 >= p.masked_m[ti.z]) ti.compute = false;
      break;
  }
  ti.a_row = (p.mode == kFastMasked ? ti.z * p.M : 0) + ti.m0;
  ti.b_row = ti.g * N + ti.n0;
  ti.sfa_rows = p.M - ti.m0;
  // Unclamped on purpose: ptxas (CUDA 13.0) fused the TMA epilogue's test of a clamped count,
  // min(max(rows_end - r0, 0), 64) == 64, into a VIMNMX.RELU whose predicate branched the wrong way, so chunks
  // that end inside a psum group at BLOCK_M 64 were stored whole (tests/gpu/check.cpp, rows 100-127 of
  // psum G4 m=[100,0,1,257]; the SASS of the JIT kernel shows the fused compare). Every slot is set.
  for (int w = 0; w < 4; ++w) {
    const int r0 = ti.m0 + 64 * w;
    ti.rows_left[w] = w < C::BM / 64 ? rows_end - r0 : 0;
    ti.zero[w] = w < C::BM / 64 && ((p.mode == kFastClassic && r0 < p.M && p.gl[r0] < 0) ||
                                    (p.mode == kFastMasked && r0 >= p.masked_m[ti.z]));
  }
  return ti;
}

/// The kernel body; map_a's box is BM / kMulticast rows x 128 K, map_b's BN rows x 128 K (both 128B-swizzled; with
/// ktma=N both are 3D maps of [K / 128][rows][128] with boxes N K blocks deep), map_sfa's (p.sfa_tma only) BM rows x 1
/// K block (ktma=N: N K blocks) of f32 over [M rows, batches x K blocks], map_d's (p.d_tma only)
/// fast_epi_box_cols(BN) columns x 64 rows x 1 batch of bf16 over [N, M, batches], swizzled to the box row's span.
template <class C>
__device__ __forceinline__ void fp8_fast_body(const CUtensorMap& map_a, const CUtensorMap& map_b,
                                              const CUtensorMap& map_sfa, const CUtensorMap& map_d,
                                              const FastParams& p) {
  constexpr int BN = C::BN, BM = C::BM, kWaves = C::kWaves, kStages = C::kStages, MC = C::kMulticast, NA = BN / 2,
                kSlots = C::kSfbSlots;
  constexpr FastSmem L = fast_smem(BN, kStages, BM, C::kEpi, C::kKAlt);
  constexpr bool kSpread = GO_FAST_SPREAD && (GO_FAST_DBG & 2) == 0;
  static_assert(!kSpread || C::kProducerWarps == 4, "spread=1|2 issues from several producer warps");
  constexpr int kKtma = GO_FAST_KTMA;  // K blocks (stages) per TMA copy
  static_assert(kKtma == 1 || kKtma == 2 || kKtma == 4, "ktma=1|2|4");
  // At least two groups of stages: the math holds a stage while it waits for the next one (acc=double issues block
  // kb + 1 before it releases kb), so with one group the producer would wait for that stage forever (H200, tenth
  // session: 128 x 24576 x 1536 at ktma=4 with 4 stages hung).
  static_assert(kStages % kKtma == 0 && kStages >= 2 * kKtma, "ktma=N needs a multiple of N stages, at least 2N");
  static_assert(kKtma == 1 || (MC == 1 && !C::kSplitK && GO_FAST_LOAD_GROUP == 1),
                "ktma=N: not with multicast, split K or group=N");
  constexpr int kSets = C::kDoubleAcc ? GO_FAST_ACC_SETS : 1;  // accumulator sets per math warpgroup
  static_assert(kSets == 1 || kSets == 2 || ((kSets == 3 || kSets == 4) && !C::kSplitK && !C::kAhead),
                "acc=triple|quad: no split K, no ahead=1");
  // The math holds kSets - 1 stages while it waits for the next: the group of kKtma stages after them must fit too.
  static_assert(kStages >= kKtma + kSets - 1, "stages: at least ktma + accumulator sets - 1");
  constexpr int kStageA = L.stage_a, kStageB = L.stage_b, kEpiPitch = L.pitch;
  const int N = C::kN ? C::kN : p.N;
  const int K = C::kK ? C::kK : p.K;
  extern __shared__ uint8_t smem_raw[];
  uint8_t* smem = align1024(smem_raw);
  uint8_t* sA = smem + L.a;
  uint8_t* sB = smem + L.b;
  float* sSfa = reinterpret_cast<float*>(smem + L.sfa);
  float* sSfb = reinterpret_cast<float*>(smem + L.sfb);  // 4 slots per stage
  uint64_t* full = reinterpret_cast<uint64_t*>(smem + L.bars);
  uint64_t* empty = full + kStages;
  uint64_t* xfull = empty + kStages;  // kalt=1: exchange buffer j holds a result (xfull[j]) or is free (xempty[j])
  uint64_t* xempty = xfull + 2;
  float* sX = reinterpret_cast<float*>(smem + L.xchg);
  __nv_bfloat16* sEpi = reinterpret_cast<__nv_bfloat16*>(smem + L.epi);
  // The warpgroup index through a shuffle from lane 0: the compiler then knows it is warp-uniform and keeps what
  // derives from it (the wgmma descriptors) in uniform registers (DeepGEMM does the same).
  const int wg = __shfl_sync(0xffffffffu, static_cast<int>(threadIdx.x / 128), 0), tid = threadIdx.x % 128,
            warp = tid / 32, lane = tid % 32;
  const uint32_t full_u = smem_addr(full), empty_u = smem_addr(empty);  // barrier s lies at + 8 * s
  const int rank = MC > 1 ? static_cast<int>(cluster_cta_rank()) : 0;
  // Until grid_dependency_wait below nothing touches global memory: with pdl=1 (FastChoice::pdl) this CTA may start
  // while the kernel before it on the stream still runs, and sets up its barriers and tensor maps meanwhile.
  if (threadIdx.x == 0) {
    // The maps are kernel parameters (__grid_constant__), which no earlier kernel writes.
    tma_prefetch_map(&map_a);
    tma_prefetch_map(&map_b);
    if (p.sfa_tma) tma_prefetch_map(&map_sfa);
    if (p.d_tma) tma_prefetch_map(&map_d);
    for (int s = 0; s < kStages; ++s) {
      // Arrivals: every producer thread, or with SFA by TMA the threads that copy an SFB slot (thread 0 among them).
      // spread=1: threads 0 and 64 and the SFB threads; spread=2: thread 96 too.
      mbar_init(&full[s], (GO_FAST_DBG & 2) ? 1
                          : p.sfa_tma    ? kSlots + (kSpread ? GO_FAST_SPREAD + 1 : 0)
                                         : 32 * C::kProducerWarps);
      // Every math warp (or thread) of the cluster.
      mbar_init(&empty[s], (C::kReleasePerWarp ? 4 : 128) * C::kMathWGs * MC);
    }
    if constexpr (C::kKAlt) {
      for (int j = 0; j < 2; ++j) mbar_init(&xfull[j], 128), mbar_init(&xempty[j], 128);
    }
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    fence_proxy_async();
  }
  if (MC > 1) cluster_sync();
  else __syncthreads();
  if constexpr ((GO_FAST_DBG & 8) == 0) grid_dependency_wait();
  // The next pdl=1 launch may be scheduled now: its CTAs take SMs as this grid's CTAs exit (each CTA fills its SM)
  // and wait above until this grid has completed.
  grid_launch_dependents();
#if GO_FAST_DBG & 64
  if (blockIdx.x == 0 && threadIdx.x == 0) go_fast_trace[4][0] = clock64();
#endif
  // Grouped calls: the gate kernel (grouped_gate.h) ran first on this stream. A bad layout, or groups that this
  // kernel's tile height was not launched for, and the whole grid returns here (every CTA of a cluster alike).
  if (p.gate != nullptr) {
    const bool bad = p.gate[kGateBad] != 0, fits = p.gate[kGateFits256] != 0;
    if (bad || (p.gate_want == kWantFits256 && !fits) || (p.gate_want == kWantNot256 && fits)) return;
  }
  const int nkb = (K + kFBK - 1) / kFBK;
  const int cluster = blockIdx.x / MC, clusters = gridDim.x / MC;
  const int sfb_rows = (N + 127) / 128;
  if (wg == 0) {
    GO_FAST_MARK(3, 0);
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(GO_FAST_PRODUCER_REGS) : "memory");
    GO_FAST_MARK(4, 0);
    if (warp < C::kProducerWarps) {
      // Producer: thread 0 issues the TMA copies of A (this CTA's share, multicast) and B; every producer thread
      // copies its SFA rows and threads < kSlots one SFB value by cp.async; all complete on the stage's full barrier.
      uint32_t it = 0;
      for (int u = cluster; u < p.units; u += clusters) {
        const FastTile ti = fast_tile<C>(p, u, rank, N);
        if (it == 0) GO_FAST_MARK(5, 0);
        if (!ti.valid || !ti.compute) continue;
        const float* sfa_base = p.sfa + ti.z * p.sfa_s_batch + static_cast<int64_t>(ti.m0) * p.sfa_s_row;
        const float* sfb_base = p.sfb + ti.g * p.sfb_s_batch;
        // kRowsPer consecutive SFA rows per producer thread (one warp, BM 128: lane l copies rows 4l .. 4l + 3).
        constexpr int kRowsPer = BM >= 32 * C::kProducerWarps ? BM / (32 * C::kProducerWarps) : 1;
        const int r0 = kRowsPer * tid, nv = max(0, min(kRowsPer, ti.sfa_rows - r0));
        // spread=1 (with SFA by TMA): thread 0 copies SFA and A, thread 64 B, threads 32 + j SFB slot j (spread=2:
        // thread 96 SFA, thread 0 A alone). Otherwise thread 0 copies A and B (and SFA by TMA), threads j < kSlots
        // SFB slot j, and, SFA copied, every thread SFA rows.
        const bool spread = kSpread && p.sfa_tma;
        const int slot = spread ? tid - 32 : tid;
        const int sfb_idx = ti.n0 / 128 + slot;
        const bool sfb_ok = slot >= 0 && slot < kSlots && sfb_idx < sfb_rows;
        constexpr bool kSfaAlone = GO_FAST_SPREAD == 2;
        // Every thread that stays in the loop below arrives on each stage's full barrier: one that waited for free
        // stages without arriving could be lapped by the others (a parity wait tells only two phases apart) and wait
        // forever once they stop. dbg bit 1 (thread 0 alone arrives) keeps thread 0 alone: with SFA copied, the
        // other 127 threads hung the profiling build that way (bench/RESULTS.md, ninth session, run 5).
        if ((GO_FAST_DBG & 2) ? tid != 0
            : spread          ? (tid != 0 && tid != 64 && !(kSfaAlone && tid == 96) && (slot < 0 || slot >= kSlots))
                              : (p.sfa_tma && tid >= kSlots))
          continue;
        // ktma=N: one pass per N K blocks (the launcher made the tile's K blocks a multiple of N), whose N stages
        // s .. s + N - 1 are all in the same lap of the ring.
        for (int kb = ti.kb0; kb < ti.kb1; kb += kKtma, it += kKtma) {
          const int s = it % kStages;
#pragma unroll
          for (int q = 0; q < kKtma; ++q) {
            mbar_wait(empty_u + 8 * (s + q), ((it / kStages) & 1) ^ 1);
            GO_FAST_TRACE(0, it + q);
          }
          if constexpr (GO_FAST_LOAD_GROUP > 1) {
            // The group's later stages are freed after this one (in order), by blocks already issued: no deadlock.
            if ((kb - ti.kb0) % GO_FAST_LOAD_GROUP == 0) {
              for (int j = 1; j < GO_FAST_LOAD_GROUP && kb + j < ti.kb1; ++j) {
                const uint32_t jt = it + j;
                mbar_wait(empty_u + 8 * (jt % kStages), ((jt / kStages) & 1) ^ 1);
              }
            }
          }
          // Bytes per copy (ktma=N: N stages' worth).
          constexpr int kTxA = (GO_FAST_DBG & 16) ? 0 : kKtma * kStageA, kTxB = (GO_FAST_DBG & 32) ? 0 : kKtma * kStageB,
                        kTxSfa = kKtma * BM * 4;
          // This CTA's share of the A tile (multicast to the cluster), and the B tile, into stage s (ktma=N: into
          // stages s .. s + N - 1, one plane of the 3D box each).
          auto load_a = [&] {
            if (GO_FAST_DBG & 16) {
            } else if (kKtma > 1) {
              tma_load_3d(sA + s * kStageA, &map_a, &full[s], 0, ti.a_row, kb);
            } else if (MC == 1) {
              tma_load_2d(sA + s * kStageA, &map_a, &full[s], kb * kFBK, ti.a_row);
            } else {
              constexpr int rows = BM / MC;
              tma_load_2d_multicast(sA + s * kStageA + rank * rows * kFBK, &map_a, &full[s], kb * kFBK,
                                    ti.a_row + rank * rows, static_cast<uint16_t>((1 << MC) - 1));
            }
          };
          auto load_b = [&] {
            if (GO_FAST_DBG & 32) {
            } else if (kKtma > 1) {
              tma_load_3d(sB + s * kStageB, &map_b, &full[s], 0, ti.b_row, kb);
            } else {
              tma_load_2d(sB + s * kStageB, &map_b, &full[s], kb * kFBK, ti.b_row);
            }
          };
          // SFA by TMA: a box of BM rows x N K blocks (ktma=N) into stages s .. s + N - 1.
          auto load_sfa = [&] { tma_load_2d(&sSfa[s * BM], &map_sfa, &full[s], ti.m0, ti.z * nkb + kb); };
          auto load_sfb = [&] {
#pragma unroll
            for (int q = 0; q < kKtma; ++q) {
              cp_async4(&sSfb[(s + q) * 4 + slot], sfb_ok ? sfb_base + sfb_idx * p.sfb_s_row + (kb + q) * p.sfb_s_kb : p.sfb,
                        sfb_ok);
            }
          };
          if (spread) {
            if (tid == 0) {
              if (!kSfaAlone) load_sfa();
              load_a();
              mbar_arrive_expect_tx(full_u + 8 * s, kTxA + (kSfaAlone ? 0 : kTxSfa));
            } else if (kSfaAlone && tid == 96) {
              load_sfa();
              mbar_arrive_expect_tx(full_u + 8 * s, kTxSfa);
            } else if (tid == 64) {
              load_b();
              mbar_arrive_expect_tx(full_u + 8 * s, kTxB);
            } else {
              load_sfb();
              cp_async_arrive(&full[s]);
            }
            for (int q = 0; q < kKtma; ++q) GO_FAST_TRACE(1, it + q);
            continue;
          }
          if (tid == 0) {
            mbar_expect_tx(&full[s], kTxA + kTxB + (p.sfa_tma ? kTxSfa : 0));
            if (p.sfa_tma) load_sfa();
            load_a();
            load_b();
            if (GO_FAST_DBG & 2) mbar_arrive_local(full_u + 8 * s);
          }
          if (GO_FAST_DBG & 2) continue;
          if (tid < kSlots) load_sfb();  // slot == tid here
          if (p.sfa_tma) {
            cp_async_arrive(&full[s]);
            for (int q = 0; q < kKtma; ++q) GO_FAST_TRACE(1, it + q);
            continue;
          }
#pragma unroll
          for (int q = 0; q < kKtma; ++q) {  // SFA copied: stage s + q holds K block kb + q's rows
            float* dst = &sSfa[(s + q) * BM + r0];
            const int64_t kq = static_cast<int64_t>(kb + q) * p.sfa_s_kb;
            if (r0 >= BM) {
              // BLOCK_M 64 with four producer warps: threads 64 .. 127 copy nothing (but arrive).
            } else if (kRowsPer % 4 == 0 && p.sfa_vec) {
#pragma unroll
              for (int e = 0; e < kRowsPer; e += 4) {
                const int nq = max(0, min(4, nv - e));
                cp_async16(dst + e, nq ? sfa_base + r0 + e + kq : p.sfa, nq * 4);
              }
            } else {
#pragma unroll
              for (int e = 0; e < kRowsPer; ++e) {
                const bool ok = e < nv;
                cp_async4(dst + e, ok ? sfa_base + (r0 + e) * p.sfa_s_row + kq : p.sfa, ok);
              }
            }
          }
          cp_async_arrive(&full[s]);
        }
      }
      asm volatile("cp.async.wait_all;\n" ::: "memory");  // no copy outlives its thread
    }
  } else {
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(GO_FAST_MATH_REGS) : "memory");
    GO_FAST_MARK(6, 128);
    const int w = wg - 1;
    // With BLOCK_M 64 the second math warpgroup has no rows: it walks no tiles and issues nothing (kalt=1: it takes
    // every other K block).
    if (w >= C::kMathWGs && !C::kKAlt) {
      if (MC > 1) cluster_sync();
      return;
    }
    uint32_t it = 0;
    uint32_t xi = 0;  // kalt=1: exchanges so far (odd K blocks); buffer xi % 2, phase (xi / 2) % 2
    const uint32_t xfull_u = smem_addr(xfull), xempty_u = smem_addr(xempty);
    bool prev_chunk_tma = false;  // epi=tma: the last chunk this warpgroup stored went by TMA (one bulk group)
    float F[kWaves * NA], P[C::kHalves ? 1 : NA], P2[kSets == 2 ? NA : 1];
    float Q[kSets > 2 ? kSets : 1][kSets > 2 ? NA : 1];  // acc=triple|quad: the sets, indexed by constants only
#pragma unroll
    for (int j = 0; j < (kSets > 2 ? kSets : 1); ++j)
#pragma unroll
      for (int i = 0; i < (kSets > 2 ? NA : 1); ++i) Q[j][i] = 0.0f;
    float Ph0[C::kHalves ? NA / 2 : 1], Ph1[C::kHalves ? NA / 2 : 1];  // acc=halves: the set as two halves of BN / 2 columns
#pragma unroll
    for (int i = 0; i < (C::kHalves ? 1 : NA); ++i) P[i] = 0.0f;
#pragma unroll
    for (int i = 0; i < (kSets == 2 ? NA : 1); ++i) P2[i] = 0.0f;
#pragma unroll
    for (int i = 0; i < (C::kHalves ? NA / 2 : 1); ++i) Ph0[i] = Ph1[i] = 0.0f;
    const int r_lo = acc_row(tid, 0);
    // Waits until the loads of pipeline iteration `at` have landed: on its stage's full barrier, or with ktma=N on the
    // barrier of the first stage of its group of N, where the group's copies complete.
    auto wait_full = [&](uint32_t at) {
      const int s = at % kStages;
      mbar_wait(full_u + 8 * (s - s % kKtma), (at / kStages) & 1);
    };
    // Descriptor low words of stage 0: this warpgroup's first A row (wave 0), and B.
    const uint32_t lo_a0 = desc_lo_sw128(smem_addr(sA + (C::kKAlt ? 0 : w) * 64 * 128)),
                   lo_b0 = desc_lo_sw128(smem_addr(sB));
    // Scales of one stage and wave, read right after its full barrier so that their latency overlaps the wgmmas
    // (kHoist; past BLOCK_N 144 the registers they would hold across the wgmmas are not there: read at promotion).
    struct Scales {
      float sa0, sa1, sb[kSlots];
    };
    constexpr bool kHoist = BN <= 144;
    auto read_scales = [&](int s, int wave) {
      Scales sc;
      const int wr = C::kKAlt ? 0 : w;  // kalt=1: both warpgroups work on the same 64 rows
      sc.sa0 = sSfa[s * BM + wave * kFBM + wr * 64 + r_lo];
      sc.sa1 = sSfa[s * BM + wave * kFBM + wr * 64 + r_lo + 8];
#pragma unroll
      for (int j = 0; j < kSlots; ++j) sc.sb[j] = sSfb[s * 4 + j];
      return sc;
    };
    // Issues the 4 wgmmas (k32 steps) of stage `at`'s K block for one wave into acc: all BN columns, or (acc=halves,
    // acc of NA / 2 registers) the BN / 2 columns of half h, whose B rows start (BN / 2) * 128 bytes further on.
    // `loaded` false (ahead=1 only): a stand-in group on whatever stage `at` holds, without waiting (see below).
    auto issue = [&](auto& acc, uint32_t at, int wave = 0, int h = 0, bool loaded = true) -> Scales {
      constexpr int NW = 2 * static_cast<int>(sizeof(acc) / sizeof(float));  // columns of this wgmma group
      const int s = at % kStages;
      if (wave == 0 && h == 0 && loaded) {
        wait_full(at);
        GO_FAST_TRACE(2, at);
      }
      Scales sc{};
      if constexpr (kHoist) {
        if (h == 0) sc = read_scales(s, wave);
      }
      // This warpgroup's A rows of the wave, and B, in stage s; k32 step j is 32 bytes further along each row.
      const uint32_t lo_a = lo_a0 + static_cast<uint32_t>(s * kStageA + wave * kFBM * 128) / 16;
      const uint32_t lo_b = lo_b0 + static_cast<uint32_t>(s * kStageB + h * NW * 128) / 16;
      fence_operand(acc);
      wgmma_fence();
#pragma unroll
      for (int j = 0; j < 4; ++j) WgmmaFp8<NW>::mma(acc, desc_from_lo(lo_a + 2 * j), desc_from_lo(lo_b + 2 * j), j);
      wgmma_commit();
      return sc;
    };
    // ahead=1: the first K block of the next tile this warpgroup computes is issued into P before the epilogue of
    // the tile before it (the producer loads the same tiles in the same order), so the tensor cores work while the
    // warpgroup converts and stores D. ptxas (CUDA 13.0) injects a wgmma wait wherever paths with and without a
    // group in flight meet (C7517), so a group is always in flight at the top of the tile loop: the real one, or,
    // past the last tile that computes, a stand-in on a stage whose loads are all done (this CTA and its cluster
    // peers load nothing more), whose result is never read and which is waited for after the loop.
    constexpr bool kAhead = C::kAhead && (GO_FAST_DBG & 1) == 0;
    auto next_compute = [&](int u) {  // the first unit from u on that loads and computes (p.units: none)
      for (; u < p.units; u += clusters) {
        const FastTile t = fast_tile<C>(p, u, rank, N);
        if (t.valid && t.compute) break;
      }
      return u;
    };
    Scales sc_ahead{};
    if constexpr (kAhead) sc_ahead = issue(P, it, 0, 0, next_compute(cluster) < p.units);
    for (int u = cluster; u < p.units; u += clusters) {
      const FastTile ti = fast_tile<C>(p, u, rank, N);
      if (!ti.valid) continue;
      const int nk = ti.kb1 - ti.kb0;  // K blocks of this unit
      const uint32_t it0 = it;         // pipeline iteration of its first K block
#pragma unroll
      for (int i = 0; i < kWaves * NA; ++i) F[i] = 0.0f;
      // Column where the tile enters the next 128-column scale block of B (only for straddling BLOCK_N).
      const int b1 = 128 - ti.n0 % 128;
      // One arrival per thread (or per warp) on stage s's empty barrier in every CTA of the cluster.
      auto release = [&](int s) {
        if constexpr (C::kReleasePerWarp) {
          __syncwarp();
          if (MC == 1) {
            if (lane == 0) mbar_arrive_local(empty_u + 8 * s);
          } else if (lane < MC) {
            mbar_arrive_cluster(empty_u + 8 * s, static_cast<uint32_t>(lane));
          }
        } else if (MC == 1) {
          mbar_arrive_local(empty_u + 8 * s);
        } else {
#pragma unroll
          for (int c = 0; c < MC; ++c) mbar_arrive_cluster(empty_u + 8 * s, static_cast<uint32_t>(c));
        }
      };
      // F = fma(fl32(sa * sb), P, F) per element (acc=halves: the columns of half h); the stage is released (one
      // arrival per warp and CTA) once this warp's wgmmas of the last wave (and half) have completed (its lanes read
      // the scales before the wgmmas were issued).
      auto promote = [&](auto& acc, uint32_t at, const Scales& hoisted, int wave = 0, int h = 0) {
        constexpr int NH = static_cast<int>(sizeof(acc) / sizeof(float));  // registers of this group: NA or NA / 2
        const bool last = wave == kWaves - 1 && (NH == NA || h == 1);
        fence_operand(acc);
        const int s = at % kStages;
        if constexpr (C::kSplitK) {
          // Split K: the block's raw result goes to the workspace (f32 pairs); fp8_fast_splitk_promote promotes.
          if (last) release(s);
          const int kb = ti.kb0 + static_cast<int>(at - it0);
          float* dst = p.ws + kb * p.ws_plane + static_cast<int64_t>(ti.m0 + 64 * (2 * wave + w)) * p.ws_pitch + ti.n0;
#pragma unroll
          for (int i = 0; i < NA; i += 2) {
            *reinterpret_cast<float2*>(dst + acc_row(tid, i) * p.ws_pitch + acc_col(tid, i)) = make_float2(acc[i], acc[i + 1]);
          }
          return;
        }
        const Scales sc = kHoist ? hoisted : read_scales(s, wave);
        const float sa0 = sc.sa0, sa1 = sc.sa1;
        const float* sb = sc.sb;
        float* Fw = F + wave * NA + h * NH;  // half h's registers are the set's NH * h .. NH * h + NH - 1
        if (last) {
          release(s);
          GO_FAST_TRACE(3, at);
        }
        if constexpr (kSlots == 1) {
          const float s0 = __fmul_rn(sa0, sb[0]), s1 = __fmul_rn(sa1, sb[0]);
#pragma unroll
          for (int i = 0; i < NH; ++i) Fw[i] = __fmaf_rn((i & 2) ? s1 : s0, acc[i], Fw[i]);
        } else {
          float s0[kSlots], s1[kSlots];
#pragma unroll
          for (int j = 0; j < kSlots; ++j) s0[j] = __fmul_rn(sa0, sb[j]), s1[j] = __fmul_rn(sa1, sb[j]);
#pragma unroll
          for (int c = 0; c < NH / 4; ++c) {  // 8-column chunk c: columns 8c .. 8c + 7 share one scale block
            const int col = 8 * c + h * 2 * NH;  // the chunk's first column in the tile
            int slot = 0;
            if constexpr (kSlots > 1) slot += (col >= b1);
            if constexpr (kSlots > 2) slot += (col >= b1 + 128);
            float t0 = s0[0], t1 = s1[0];
#pragma unroll
            for (int j = 1; j < kSlots; ++j) {
              if (slot == j) t0 = s0[j], t1 = s1[j];
            }
#pragma unroll
            for (int q = 0; q < 4; ++q) {
              const int i = 4 * c + q;
              Fw[i] = __fmaf_rn((i & 2) ? t1 : t0, acc[i], Fw[i]);
            }
          }
        }
      };
      if (!ti.compute) {
        // Zero tile: nothing was loaded for it; the epilogue writes its zeros.
      } else if constexpr ((GO_FAST_DBG & 1) != 0) {
        for (int kb = 0; kb < nk; ++kb, ++it) {
          if (C::kKAlt && w == 1) continue;  // kalt=1: warpgroup 0 releases every stage
          wait_full(it);
          GO_FAST_TRACE(2, it);
          release(it % kStages);
          GO_FAST_TRACE(3, it);
        }
      } else if constexpr (C::kKAlt) {
        // kalt=1: warpgroup 1 computes the odd K blocks of the tile and warpgroup 0 the even ones, each into its own
        // P, so two blocks' chains of 4 dependent wgmmas run at once. Warpgroup 1 puts its raw result in exchange
        // buffer xi % 2 (thread t's register i at float i * 128 + t, read by thread t of warpgroup 0) and warpgroup 0
        // promotes every block in K order, taking an odd block's scales from its stage, which only warpgroup 0
        // releases: the bits of the unsplit kernel.
        for (int kb = 0; kb < nk; ++kb, ++it) {
          const bool even = (kb & 1) == 0;
          if (w == 0 && even) {
            const Scales sc = issue(P, it);
            wgmma_wait0();
            promote(P, it, sc);
          } else if (w == 0) {
            const int j = static_cast<int>(xi & 1);
            mbar_wait(xfull_u + 8 * j, (xi >> 1) & 1);
            // The stage's loads are complete (warpgroup 1 waited for them): this wait returns at once and makes
            // the scales the TMA and cp.async wrote visible to this warpgroup.
            wait_full(it);
            const float* x = sX + j * 64 * BN;
#pragma unroll
            for (int i = 0; i < NA; ++i) P[i] = x[i * 128 + tid];
            mbar_arrive_local(xempty_u + 8 * j);
            ++xi;
            promote(P, it, read_scales(static_cast<int>(it % kStages), 0));
          } else if (!even) {
            issue(P, it);
            wgmma_wait0();
            const int j = static_cast<int>(xi & 1);
            mbar_wait(xempty_u + 8 * j, ((xi >> 1) & 1) ^ 1);
            float* x = sX + j * 64 * BN;
#pragma unroll
            for (int i = 0; i < NA; ++i) x[i * 128 + tid] = P[i];
            mbar_arrive_local(xfull_u + 8 * j);
            ++xi;
          }
        }
      } else if constexpr (kSets > 2) {
        // acc=triple|quad: block b in set b % S; at the top of each step the S - 1 blocks after the one promoted are
        // in flight (fewer in the last S - 1 steps). Steps run in groups of S, so that every set index is a constant
        // after unrolling (registers, not local memory), while a whole group still issues its next blocks; the r
        // blocks left (S - 1 <= r <= 2S - 2) run in one of S unrolled tails. The host guarantees nk >= S. Like the
        // two-set loop, the loop's bound is the run-time nk and the tail is chosen at run time: with the tail fixed
        // at compile time (a constant K), ptxas (CUDA 13.0) serialised every wgmma, in this loop and in the two-set
        // one ("C7514 ... non wgmma instructions reading accumulator registers"; the JIT source test checks).
        constexpr int S = kSets;
        Scales sq[S];
#pragma unroll
        for (int j = 0; j < S - 1; ++j) sq[j] = issue(Q[j], it + j);
        int c = 0;
        for (; c + 2 * S - 1 <= nk; c += S) {
#pragma unroll
          for (int j = 0; j < S; ++j) {
            sq[(j + S - 1) % S] = issue(Q[(j + S - 1) % S], it + S - 1);
            wgmma_wait<S - 1>();
            promote(Q[j], it, sq[j]);
            ++it;
          }
        }
        auto tail = [&](auto blocks) {  // c is a multiple of S: step t's block is in set t % S
          constexpr int R = decltype(blocks)::value;
#pragma unroll
          for (int t = 0; t < R; ++t) {
            if (t + S - 1 < R) sq[(t + S - 1) % S] = issue(Q[(t + S - 1) % S], it + S - 1);
            const int pending = R - 1 - t < S - 1 ? R - 1 - t : S - 1;  // a constant after unrolling
            if (pending == 3) wgmma_wait<3>();
            else if (pending == 2) wgmma_wait<2>();
            else if (pending == 1) wgmma_wait<1>();
            else wgmma_wait<0>();
            promote(Q[t % S], it, sq[t % S]);
            ++it;
          }
        };
        const int r = nk - c;
        if (r == S - 1) tail(std::integral_constant<int, S - 1>{});
        else if (r == S) tail(std::integral_constant<int, S>{});
        else if (r == S + 1) tail(std::integral_constant<int, S + 1>{});
        else tail(std::integral_constant<int, 2 * S - 2 >= S + 1 ? 2 * S - 2 : S + 1>{});  // S = 4: r = 6
      } else if constexpr (C::kDoubleAcc) {
        // Two accumulator sets: the 4 wgmmas of block kb + 1 run on the tensor cores while block kb is promoted.
        // ahead=1: block 0 ran in P during the epilogue. Waiting for it here, before block 1 goes into P2, costs
        // nothing once the epilogue outlasted it; without the wait ptxas (CUDA 13.0) serialises every wgmma (C7514).
        if constexpr (kAhead) wgmma_wait0();
        Scales scP = kAhead ? sc_ahead : issue(P, it), scP2;
        int kb = 0;
        for (; kb + 2 < nk; kb += 2) {  // at the top, block kb is in flight in P
          scP2 = issue(P2, it + 1);
          wgmma_wait1();
          promote(P, it, scP);
          ++it;
          scP = issue(P, it + 1);
          wgmma_wait1();
          promote(P2, it, scP2);
          ++it;
        }
        if (nk - kb == 2) {
          scP2 = issue(P2, it + 1);
          wgmma_wait1();
          promote(P, it, scP);
          ++it;
          wgmma_wait0();
          promote(P2, it, scP2);
          ++it;
        } else {
          wgmma_wait0();
          promote(P, it, scP);
          ++it;
        }
      } else if constexpr (C::kHalves) {
        // One accumulator set as two halves of BN / 2 columns, Ph0 and Ph1. The steps (K block, wave) run in order;
        // at the top of each, its half 0 is in flight in Ph0: half 1 is issued, half 0 promoted while half 1 runs,
        // the next step's half 0 issued, half 1 promoted while that runs. Groups complete in issue order, so
        // wait_group 1 leaves only the newest pending, and this warpgroup always has a half on the tensor cores.
        // The shape (a loop to nk - 2, then two blocks or one) is the double-accumulator loop's: ptxas (CUDA 13.0)
        // serialised the wgmmas of the same schedule written as a loop to nk - 1 and one last block ("C7514 ...
        // non wgmma instructions reading accumulator registers"; tests/kernels/cuda_jit_source_test.ts checks).
        Scales sc = issue(Ph0, it, 0, 0);
        auto block = [&](auto last) {  // all steps of block `it`; the last block issues no next step
#pragma unroll
          for (int v = 0; v < kWaves; ++v) {
            const bool next = !decltype(last)::value || v + 1 < kWaves;
            const uint32_t at1 = v + 1 < kWaves ? it : it + 1;
            const int v1 = v + 1 < kWaves ? v + 1 : 0;
            issue(Ph1, it, v, 1);
            wgmma_wait1();
            promote(Ph0, it, sc, v, 0);
            if (next) {
              const Scales sc1 = issue(Ph0, at1, v1, 0);
              wgmma_wait1();
              promote(Ph1, it, sc, v, 1);
              sc = sc1;
            } else {
              wgmma_wait0();
              promote(Ph1, it, sc, v, 1);
            }
          }
          ++it;
        };
        int kb = 0;
        for (; kb + 2 < nk; ++kb) block(std::false_type{});
        if (nk - kb == 2) {
          block(std::false_type{});
          block(std::true_type{});
        } else {
          block(std::true_type{});
        }
      } else {
        // One accumulator set: the other math warpgroup keeps the tensor cores busy during this one's promotion.
        for (int kb = 0; kb < nk; ++kb, ++it) {
#pragma unroll
          for (int v = 0; v < kWaves; ++v) {
            const Scales sc = (kAhead && v == 0 && kb == 0) ? sc_ahead : issue(P, it, v);
            wgmma_wait0();
            promote(P, it, sc, v);
          }
        }
      }
      // ahead=1: every block of this tile is promoted into F, so P takes the next computing tile's first block.
      if constexpr (kAhead) {
        if (ti.compute) sc_ahead = issue(P, it, 0, 0, next_compute(u + clusters) < p.units);
      }
      // Epilogue, per wave (64-row chunk 2 * wave + w of the tile). The chunk's facts are picked by w with a select:
      // an index computed from w would put the whole FastTile in local memory. Split K has none (the second kernel
      // writes D); dbg bit 2 skips it (timing the tile end); with kalt=1 warpgroup 1 holds no F.
      const bool stores = !C::kSplitK && (GO_FAST_DBG & 4) == 0 && !(C::kKAlt && w == 1);
#pragma unroll
      for (int wave = 0; wave < (stores ? kWaves : 0); ++wave) {
        const bool w1 = C::kMathWGs == 2 && w == 1;
        const int rows = w1 ? ti.rows_left[2 * wave + 1] : ti.rows_left[2 * wave];  // unclamped: see fast_tile
        const bool zero = (w1 ? ti.zero[2 * wave + 1] : ti.zero[2 * wave]) || !ti.compute;
        const float* Fw = F + wave * NA;
        const int r0 = ti.m0 + 64 * (2 * wave + w);
        __nv_bfloat16* dbase = p.d + ti.z * p.d_s_batch + static_cast<int64_t>(r0) * p.d_s_row + ti.n0;
        if constexpr (C::kDirectEpi) {
          // bf16 RNE pairs straight to global memory: 4-byte stores where the pair is inside N and 4-byte aligned.
          const bool pairs = (p.d_s_row % 2 == 0) && (reinterpret_cast<uintptr_t>(p.d) & 3) == 0;
#pragma unroll
          for (int i = 0; i < NA; i += 2) {
            const int r = acc_row(tid, i), c = acc_col(tid, i);
            if (r >= rows) continue;
            const __nv_bfloat162 v = bf16_pair(Fw, i, zero);
            __nv_bfloat16* dst = dbase + static_cast<int64_t>(r) * p.d_s_row + c;
            if (pairs && ti.n0 + c + 2 <= N) {
              *reinterpret_cast<__nv_bfloat162*>(dst) = v;
            } else {
              if (ti.n0 + c < N) dst[0] = v.x;
              if (ti.n0 + c + 1 < N) dst[1] = v.y;
            }
          }
        } else {
          constexpr bool kTma = C::kEpi == kEpiTma;
          // epi=tma: this warpgroup's buffer for this wave, last read by a TMA store of the same wave a tile or more
          // ago, waited for as fast_epi_pending says (tests/kernels/fast_tiles_check.cu replays it); epi=smem: one
          // buffer per warpgroup.
          __nv_bfloat16* epi = sEpi + (kTma ? w * kWaves + wave : w) * (L.epi_buf / 2);
          if constexpr (kTma) {
            if (tid == 0) {
              if (fast_epi_pending(prev_chunk_tma, kWaves) == kWaves - 1) bulk_wait_read<kWaves - 1>();
              else bulk_wait_read<0>();
            }
            named_sync(1 + w, 128);
          }
          const bool tma = kTma && fast_chunk_tma(p, rows, r0, ti.n0, N);
          prev_chunk_tma = tma;
          if (tma) {
            // bf16 RNE into the box layout: box j holds columns [j * kBox, (j + 1) * kBox), rows of kBox * 2 bytes,
            // the 16-byte chunks of each row XOR-swizzled by the row as the TMA map's swizzle mode reads them.
            constexpr int kBox = fast_epi_box_cols(BN), kRowBytes = kBox * 2, kSwz = kRowBytes / 16 - 1;
            uint8_t* eb = reinterpret_cast<uint8_t*>(epi);
#pragma unroll
            for (int i = 0; i < NA; i += 2) {
              const int r = acc_row(tid, i), c = acc_col(tid, i);
              const __nv_bfloat162 v = bf16_pair(Fw, i, zero);
              const uint32_t lin = static_cast<uint32_t>(r * kRowBytes + (c % kBox) * 2);
              const uint32_t sw = kRowBytes >= 32 ? lin ^ (((lin >> 7) & kSwz) << 4) : lin;
              *reinterpret_cast<__nv_bfloat162*>(eb + (c / kBox) * 64 * kRowBytes + sw) = v;
            }
            fence_proxy_async();
            named_sync(1 + w, 128);
            if (tid == 0) {
#pragma unroll
              for (int j = 0; j < BN / kBox; ++j) {
                if (ti.n0 + j * kBox < N) tma_store_3d(&map_d, eb + j * 64 * kRowBytes, ti.n0 + j * kBox, r0, ti.z);
              }
              bulk_commit();
            }
          } else {
            // Through shared memory: bf16 RNE into the staging buffer, then 16-byte coalesced stores with M/N bounds.
#pragma unroll
            for (int i = 0; i < NA; i += 2) {
              const int r = acc_row(tid, i), c = acc_col(tid, i);
              const __nv_bfloat162 v = bf16_pair(Fw, i, zero);
              *reinterpret_cast<__nv_bfloat162*>(epi + r * kEpiPitch + c) = v;
            }
            named_sync(1 + w, 128);
            for (int idx = tid; idx < 64 * (BN / 8); idx += 128) {
              const int r = idx / (BN / 8), c = (idx % (BN / 8)) * 8;
              if (r >= rows) continue;
              __nv_bfloat16* dst = dbase + static_cast<int64_t>(r) * p.d_s_row + c;
              const __nv_bfloat16* src = epi + r * kEpiPitch + c;
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
    }
    if constexpr (kAhead) wgmma_wait0();  // the stand-in group
    // The TMA stores this thread issued finish (reading shared memory and writing D) before the CTA exits.
    if (C::kEpi == kEpiTma && tid == 0) bulk_wait_all();
#if GO_FAST_DBG & 64
    if (blockIdx.x == 0 && threadIdx.x == 128) go_fast_trace[4][1] = it, go_fast_trace[4][2] = clock64();
#endif
  }
  // No CTA of a cluster leaves while a peer may still multicast into it or arrive on its barriers.
  if (MC > 1) cluster_sync();
}

}  // namespace go_sm90
