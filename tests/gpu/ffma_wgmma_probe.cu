// What the promotion's FMAs cost the tensor cores (issue 26): the fast kernel's K loop at BLOCK_M 256 x BLOCK_N 128
// taken apart. One CTA per SM, two math warpgroups; each runs K blocks of two waves, a wave being 4 x wgmma
// m64n128k32 (e4m3, operands in shared memory, 128B-swizzled descriptors as the kernel's), a wait, then the wave's work
// as its row of kVariants says. The kernel's promotion is `ffma_acc` at 64 with `scales`: F = fma(sa * sb, P, F) per
// accumulator. Without `pipe` the operands stay resident (one stage, no barriers); with it a producer warp streams each
// K block's A (32 KB), B (16 KB) and, with `scales`, SFA (1 KB) into a 3-stage ring with bulk copies on mbarriers, as
// the kernel's does, from a 25 MB buffer that stays in L2, and the math warpgroups wait for each stage and free it.
// Tensor work of a K block: 2 warpgroups x 2 waves x 4 wgmmas = 1024 cycles at 8192 FP8 FLOP per cycle and SM
// (docs/performance-history.md, sixteenth round: the kernel's K loop takes about 1160). The `one wave` rows give each
// math warpgroup one 64-row slab a K block instead (three warpgroups: a 192 x 128 tile, tensor work 768), so that a
// warpgroup's promotion has two other warpgroups' wgmmas to hide behind instead of one. The `timeline` rows record
// the clock at each wave's events (TlEvent), to tell the two steady states of the resident loop apart (its CTAs at 1024
// or about 1205 cycles a K block: the warpgroups' batches taking turns, or running together) and to split a
// warpgroup's turn (from a wave's completion to its next wave's issue) into its release, promotion, stage wait and
// scale loads, and issue.
//
//   ffma_wgmma_probe [--blocks N] [--only TEXT]
//       prints one line per variant (with --only, those whose name contains TEXT): cycles per K block (median over
//       the CTAs of the CTA's slowest math warpgroup), their range, and the ratio to the tensor work; then one line
//       per timeline row.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "../../kernels/cuda/sm90_async.cuh"
#include "../../kernels/cuda/sm90_common.cuh"
#include "../../kernels/cuda/sm90_wgmma.cuh"

using namespace go_sm90;

namespace {

// What a math warpgroup does after each wave's wgmmas have completed, n instructions a thread (past 64, a second pass
// over the accumulators). Every variant reads the accumulators (at least one FADD a wave), so that ptxas keeps every
// wgmma.
enum Work {
  kNone,        // F[0] += P[0]: the tensor cores' own rate with two warpgroups taking turns
  kFfmaAcc,     // F[i] = fma(s, P[i], F[i]): the kernel's promotion
  kFfmaOther,   // F[i] = fma(s, G[i], F[i]) with G independent of the wgmmas (and F[0] += P[0])
  kFmulAcc      // F[i] = F[i] * P[i] (two register reads instead of three)
};

// What the producer copies into a stage per K block (pipe variants); the rest of the stage keeps the resident bytes.
enum Feed {
  kFeedAll,      // A (32 KB), B (16 KB) and, with scales, SFA (1 KB): the kernel's
  kFeedA,        // A and SFA: B stays resident (16 KB less written into shared memory a K block)
  kFeedNoSfa,    // A and B: the scales read resident SFA
  kFeedBarriers  // nothing: the full barrier is arrived on without bytes (the ring's waits and releases alone)
};

// Changes to the K loop (bits of kOpts).
enum Opt {
  kOptEarly = 1,         // the next stage's wait moved ahead of the last wave's wgmma wait
  kOptReleaseAfter = 2,  // the stage released after the last wave's promotion, not before it
  kOptHoistSa = 4,       // both waves' A scales read right after the stage's wait, not each before its wave
  kOptThreadArrive = 8,  // every thread arrives on the empty barrier (no __syncwarp), as the kernel's release
  kOptSpin = 16,         // barrier waits spin on try_wait without the suspend-time hint
  kOptScalesAfterIssue = 32,  // the scales read after the wave's wgmmas are issued (before their wait), not before
  kOptScalesInRegisters = 64,  // no loads: each wave's scales derived from the last by one FMUL (their latency alone)
  kOptOrdered = 128,  // the two warpgroups issue their waves in turn (named barriers): one's batch never joins the other's
  kOptBalanced = 256,  // the next stage's wait and B scale between wave 0's promotion and wave 1's issue, so that each
                       // of a K block's two turns between waves carries one of its two barrier operations
  kOptStagger = 512,   // warpgroup w starts its first K block 128 w cycles late (half a wave's tensor work): whether
                       // the loop keeps an offset between the warpgroups' turns once it is given one
  kOptPaired = 1024,   // one barrier stage per two K blocks (a wait at even blocks, a release after odd ones): half
                       // the ring's barrier operations, as 256-deep K stages would have (barriers-only feed)
  kOptTimeline = 2048,  // thread 0 of each of two math warpgroups records, for kTlBlocks K blocks from kTl0, the
                        // clock at each wave's events (TlEvent; five clock reads and, after the wait and after the
                        // promotion, global stores a wave: the recorded loop is not quite the loop)
  kOptTestEarly = 4096  // the next stage's full barrier tested without blocking (mbarrier.test_wait) right after the
                        // last wave's issue; at the next K block's top the blocking wait runs only where it failed
                        // (PTX ISA, mbarrier.test_wait / mbarrier.try_wait: try_wait may suspend the thread until
                        // the phase completes, test_wait only reports whether it has). H200: the wait at the
                        // block's top 140 -> 51 cycles, the K block 1166.3 -> 1162.0 (barriers only 1165.3 -> 1173.5)
};

// The recorded stretch of the timeline rows: K blocks kTl0 .. kTl0 + kTlBlocks - 1 (past the first stages' fill).
constexpr int kTl0 = 1024, kTlBlocks = 64;
// A wave's events in a timeline row, in the order the warpgroup passes them: before its wgmmas (after the stage's wait
// and the scale loads), after their issue, after their wait, after the stage's release (wave 0: no release), and after
// the promotion's FMAs (the clock read waits for two of their results).
enum TlEvent { kTlPre, kTlIssued, kTlDone, kTlReleased, kTlPromoted, kTlEvents };

constexpr int kStages = 3, kABytes = 256 * 128, kBBytes = 128 * 128, kSfaBytes = 256 * 4;
constexpr int kStageBytes = kABytes + kBBytes + kSfaBytes;  // 50176: a multiple of 1024
constexpr int kSfbFloats = 128;                             // the per-tile window of B scales
constexpr int kSmemBytes = 1024 + kStages * kStageBytes + kSfbFloats * 4 + 64;
constexpr int kSlots = 512;  // source slots of one stage's bytes: 25 MB, resident in the H200's 50 MB L2

__device__ __forceinline__ void bulk_load(uint32_t dst, const void* src, uint32_t bytes, uint32_t bar) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(dst),
               "l"(src), "r"(bytes), "r"(bar)
               : "memory");
}

/// One wave: 4 wgmmas (k32 steps) of the A rows at descriptor lo_a against B into acc.
__device__ __forceinline__ void wave_mma(float (&acc)[64], uint32_t lo_a, uint32_t lo_b) {
  fence_operand(acc);
  wgmma_fence();
#pragma unroll
  for (int j = 0; j < 4; ++j) WgmmaFp8<128>::mma(acc, desc_from_lo(lo_a + 2 * j), desc_from_lo(lo_b + 2 * j), j);
  wgmma_commit();
}

template <Work W, int N>
__device__ __forceinline__ void work(float (&acc)[64], float (&F)[64], const float (&G)[64], float s0, float s1) {
  fence_operand(acc);
  if constexpr (W == kNone || W == kFfmaOther) F[0] += acc[0];
  if constexpr (W != kNone) {
#pragma unroll
    for (int n = 0; n < N; ++n) {
      const int i = n % 64;
      const float s = (i & 2) ? s1 : s0;
      if constexpr (W == kFfmaAcc) F[i] = __fmaf_rn(s, acc[i], F[i]);
      if constexpr (W == kFfmaOther) F[i] = __fmaf_rn(s, G[i], F[i]);
      if constexpr (W == kFmulAcc) F[i] = __fmul_rn(F[i], acc[i]);
    }
  }
}

/// Threads of a CTA: kMathWgs math warpgroups and, with the pipe, the producer's.
template <bool kPipe, int kMathWgs>
constexpr int kThreads = 128 * (kMathWgs + (kPipe ? 1 : 0));

// kWaves: waves a warpgroup runs per K block (2: BLOCK_M 256 with two math warpgroups, the kernel's; 1: one 64-row
// slab a warpgroup, so that kMathWgs = 3 is a 192-row tile). Four warpgroups of 128 threads leave 128 registers a
// thread at launch; the producer then gives its own back (setmaxnreg) so that the math warpgroups hold 160, as the
// kernel does with 168 / 232 at 384 threads.
template <Work W, int N, bool kPipe, bool kScales, int kOpts = 0, int kWaves = 2, int kMathWgs = 2>
__global__ void __launch_bounds__(kThreads<kPipe, kMathWgs>, 1)
    probe(int blocks, int wgs, int feed, const uint8_t* src, long long* cycles, float* sink, long long* timeline) {
  static_assert(kWaves == 2 || (kOpts & (kOptBalanced | kOptOrdered)) == 0, "balanced and ordered pair two waves");
  static_assert((kOpts & kOptPaired) == 0 || (kOpts & (kOptEarly | kOptBalanced)) == 0,
                "paired: the stage's wait at even K blocks only");
  static_assert(kMathWgs == 2 || (kOpts & (kOptOrdered | kOptTimeline)) == 0,
                "ordered alternates two warpgroups; the timeline records two");
  constexpr bool kSetMaxNreg = kThreads<kPipe, kMathWgs> > 384;
  // The options (kOpts), each a compile-time switch of the loop below.
  constexpr bool kEarly = kOpts & kOptEarly, kAfter = kOpts & kOptReleaseAfter, kHoist = kOpts & kOptHoistSa;
  constexpr bool kAfterIssue = kOpts & kOptScalesAfterIssue, kRegs = kOpts & kOptScalesInRegisters;
  constexpr bool kOrdered = kOpts & kOptOrdered, kBal = kOpts & kOptBalanced, kPaired = kOpts & kOptPaired;
  constexpr bool kTl = kOpts & kOptTimeline, kStagger = kOpts & kOptStagger, kSpin = kOpts & kOptSpin;
  constexpr bool kThreadArrive = kOpts & kOptThreadArrive, kTestEarly = kOpts & kOptTestEarly;
  static_assert(!kTestEarly || !(kOpts & (kOptEarly | kOptBalanced | kOptPaired)), "test early moves the wait itself");
  extern __shared__ uint8_t smem_raw[];
  uint8_t* smem = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(smem_raw) + 1023) & ~uintptr_t(1023));
  float* sfb = reinterpret_cast<float*>(smem + kStages * kStageBytes);
  uint64_t* bars = reinterpret_cast<uint64_t*>(sfb + kSfbFloats);  // full[kStages], empty[kStages]
  const uint32_t full_u = smem_addr(bars), empty_u = full_u + 8 * kStages;
  // Resident operands: e4m3 bytes from a hash, exponent kept off the NaN/large range, so the tensor cores toggle as on
  // data; with the pipe the producer overwrites them.
  for (int i = threadIdx.x; i < kStageBytes / 4; i += blockDim.x) {
    uint32_t h = (i + 1) * 0x9E3779B1u;
    h ^= h >> 15;
    reinterpret_cast<uint32_t*>(smem)[i] = (h * 0x85EBCA77u) & 0xB7B7B7B7u;
  }
  for (int i = threadIdx.x; i < kSfbFloats; i += blockDim.x) sfb[i] = 1.0f + i * 1e-3f;
  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) mbar_init(&bars[s], 1), mbar_init(&bars[kStages + s], (kThreadArrive ? 128 : 4) * wgs);
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  fence_proxy_async();
  __syncthreads();
  const int wg = static_cast<int>(threadIdx.x / 128), tid = threadIdx.x % 128;
  if constexpr (kPipe) {
    if (wg == 0) {  // the producer: one elected thread of warp 0
      if constexpr (kSetMaxNreg) asm volatile("setmaxnreg.dec.sync.aligned.u32 24;\n" ::: "memory");
      if (tid == 0) {
        for (int kb = 0; kb < blocks; ++kb) {
          if (kPaired && kb % 2 == 1) continue;
          const int q = kPaired ? kb / 2 : kb, s = q % kStages;
          mbar_wait(empty_u + 8 * s, ((q / kStages) & 1) ^ 1);
          const uint32_t dst = smem_addr(smem + s * kStageBytes), bar = full_u + 8 * s;
          const uint8_t* from = src + static_cast<size_t>((blockIdx.x * 37 + kb) % kSlots) * kStageBytes;
          const bool b = feed == kFeedAll || feed == kFeedNoSfa, sfa = kScales && feed != kFeedNoSfa;
          if (feed == kFeedBarriers) {
            mbar_arrive_local(bar);
            continue;
          }
          // A up to the last row the math warpgroups read: wave v of warpgroup w reads rows 128 v + 64 w .. + 63 (two
          // waves), 64 w .. + 63 (one wave)
          const uint32_t a_bytes = 64 * 128 * (kWaves == 2 ? 2 + wgs : wgs);
          mbar_arrive_expect_tx(bar, a_bytes + (b ? kBBytes : 0) + (sfa ? kSfaBytes : 0));
          bulk_load(dst, from, a_bytes, bar);
          if (b) bulk_load(dst + kABytes, from + kABytes, kBBytes, bar);
          if (sfa) bulk_load(dst + kABytes + kBBytes, from + kABytes + kBBytes, kSfaBytes, bar);
        }
      }
      return;
    }
  }
  if constexpr (kSetMaxNreg) asm volatile("setmaxnreg.inc.sync.aligned.u32 160;\n" ::: "memory");
  const int w = kPipe ? wg - 1 : wg;
  if (w >= wgs) return;
  const uint32_t lo_a0 = __shfl_sync(0xffffffffu, desc_lo_sw128(smem_addr(smem + w * 64 * 128)), 0);
  const uint32_t lo_b0 = __shfl_sync(0xffffffffu, desc_lo_sw128(smem_addr(smem + kABytes)), 0);
  const uint32_t sfa_u = smem_addr(smem + kABytes + kBBytes) + 4 * (w * 64 + acc_row(tid, 0));
  const uint32_t sfb_u = smem_addr(sfb);
  float acc[64], F[64], G[64];
#pragma unroll
  for (int i = 0; i < 64; ++i) acc[i] = 0.0f, F[i] = 0.0f, G[i] = 1.0f + i * tid;
  float s0 = 1.0f + 1e-3f * tid, s1 = 1.0f - 1e-3f * tid;
  named_sync(1, 128 * wgs);
  const long long t0 = clock64();
  if constexpr (kStagger)
    while (clock64() - t0 < 128 * w) {
    }
  {
    const auto wait = [&](uint32_t bar, uint32_t parity) {
      if constexpr (kSpin) {
        asm volatile(
            "{\n.reg .pred p;\nSPIN_%=:\nmbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n@!p bra SPIN_%=;\n}\n" ::"r"(
                bar),
            "r"(parity)
            : "memory");
      } else {
        mbar_wait(bar, parity);
      }
    };
    const auto release = [&](int s) {  // the stage is free once both waves' wgmmas have read it
      if constexpr (kThreadArrive) {
        mbar_arrive_local(empty_u + 8 * s);
      } else {  // one arrival a warp after __syncwarp, as the kernel's multicast release was before 6f7faa0
        __syncwarp();
        if (tid % 32 == 0) mbar_arrive_local(empty_u + 8 * s);
      }
    };
    float sb_next = 1.0f;
    uint32_t next_ready = 0;  // test early: the test of this K block's stage succeeded
#pragma unroll 2
    for (int kb = 0; kb < blocks; ++kb) {
      const int q = kPaired ? kb / 2 : kb;  // the barrier stage's index
      const int s = kPipe ? q % kStages : 0;
      const uint32_t stage = static_cast<uint32_t>(s * kStageBytes) / 16;
      float sb = 1.0f, sa[2 * kWaves];
      if constexpr (kScales && !kRegs)
        if (!kBal || kb == 0) sb = ld_shared_f32(sfb_u + 4 * (kb % kSfbFloats));
      if (kPipe && ((!kEarly && !kBal) || kb == 0) && (!kPaired || kb % 2 == 0) && !(kTestEarly && next_ready))
        wait(full_u + 8 * s, (q / kStages) & 1);
      if (kBal && kScales && kb > 0) sb = sb_next;
      if constexpr (kScales && kHoist) {
#pragma unroll
        for (int v = 0; v < kWaves; ++v) {
          sa[2 * v] = ld_shared_f32(sfa_u + s * kStageBytes + 4 * 128 * v);
          sa[2 * v + 1] = ld_shared_f32(sfa_u + s * kStageBytes + 4 * (128 * v + 8));
        }
      }
      const auto read_sa = [&](int v) {
        if constexpr (kRegs) {
          sa[2 * v] = __fmul_rn(s0, 1.0000001f), sa[2 * v + 1] = __fmul_rn(s1, 0.9999999f);
        } else {
          sa[2 * v] = ld_shared_f32(sfa_u + s * kStageBytes + 4 * 128 * v);
          sa[2 * v + 1] = ld_shared_f32(sfa_u + s * kStageBytes + 4 * (128 * v + 8));
        }
      };
#pragma unroll
      for (int v = 0; v < kWaves; ++v) {
        if constexpr (kScales && !kHoist && !kAfterIssue) read_sa(v);
        // ordered: warpgroup w issues after the other has issued its previous wave (barrier 2 + w), then lets it go
        if (kOrdered && (w == 1 || kb > 0 || v > 0)) asm volatile("bar.sync %0, 256;\n" ::"r"(2 + w) : "memory");
        long long pre = 0, issued = 0;
        if constexpr (kTl)
          if (tid == 0) pre = clock64();
        wave_mma(acc, lo_a0 + stage + v * (128 * 128 / 16), lo_b0 + stage);
        if constexpr (kTl)
          if (tid == 0) issued = clock64();
        if (kTestEarly && kPipe && v == kWaves - 1) {
          const int n = (kb + 1) % kStages;
          asm volatile(
              "{\n.reg .pred p;\nmbarrier.test_wait.parity.shared::cta.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}\n"
              : "=r"(next_ready)
              : "r"(full_u + 8 * n), "r"(static_cast<uint32_t>(((kb + 1) / kStages) & 1))
              : "memory");
        }
        if (kOrdered) asm volatile("bar.arrive %0, 256;\n" ::"r"(3 - w) : "memory");
        if constexpr (kScales && kAfterIssue) read_sa(v);
        if constexpr (kScales) s0 = __fmul_rn(sa[2 * v], sb), s1 = __fmul_rn(sa[2 * v + 1], sb);
        // early: the next K block's stage is waited for while this block's last wave runs, not after its promotion
        if (kEarly && v == kWaves - 1 && kb + 1 < blocks)
          wait(full_u + 8 * ((kb + 1) % kStages), ((kb + 1) / kStages) & 1);
        wgmma_wait0();
        const bool tl = kTl && tid == 0 && kb >= kTl0 && kb < kTl0 + kTlBlocks;
        long long* e = tl ? timeline + ((static_cast<long long>(blockIdx.x) * kTlBlocks + (kb - kTl0)) * kWaves + v) *
                                           (2 * kTlEvents) +
                                w * kTlEvents
                          : nullptr;
        if constexpr (kTl) {
          if (tl) e[kTlPre] = pre, e[kTlIssued] = issued, e[kTlDone] = clock64();
        }
        const bool rel = kPipe && v == kWaves - 1 && (!kPaired || kb % 2 == 1);
        if (rel && !kAfter) release(s);
        if constexpr (kTl)
          if (tl) e[kTlReleased] = clock64();
        work<W, N>(acc, F, G, s0, s1);
        if constexpr (kTl) {
          if (tl) {
            long long t;
            asm volatile("mov.u64 %0, %%clock64;\n" : "=l"(t) : "f"(F[0]), "f"(F[63]) : "memory");
            e[kTlPromoted] = t;
          }
        }
        if (rel && kAfter) release(s);
        if (kBal && v == 0 && kb + 1 < blocks) {
          if constexpr (kScales) sb_next = ld_shared_f32(sfb_u + 4 * ((kb + 1) % kSfbFloats));
          if (kPipe) wait(full_u + 8 * ((kb + 1) % kStages), ((kb + 1) / kStages) & 1);
        }
      }
    }
  }
  if (kOrdered && w == 0) asm volatile("bar.sync 2, 256;\n" ::: "memory");  // the last release
  const long long t1 = clock64();
  if (tid == 0) cycles[blockIdx.x * 4 + w] = t1 - t0;
  float x = 0.0f;
#pragma unroll
  for (int i = 0; i < 64; ++i) x += F[i] + acc[i];
  if (x == 12345.678f) sink[threadIdx.x] = x;  // keeps the work live
}

template <Work W, int N, bool kPipe, bool kScales, int kOpts, int kWaves, int kMathWgs>
void launch(int sms, int blocks, int wgs, int feed, const uint8_t* src, long long* cycles, float* sink,
            long long* timeline) {
  auto* k = probe<W, N, kPipe, kScales, kOpts, kWaves, kMathWgs>;
  cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes);
  k<<<sms, kThreads<kPipe, kMathWgs>, kSmemBytes>>>(blocks, wgs, feed, src, cycles, sink, timeline);
}

/// One row of the table: the kernel instantiation that runs it, and what it prints.
struct Variant {
  const char* name;
  int n;        // instructions a thread and wave
  int wgs;      // math warpgroups running (fewer than launched: the others return at once)
  int waves;    // waves a warpgroup runs per K block
  bool pipe;    // operands streamed through the ring by a producer warp
  bool scales;  // s = sa * sb read from shared memory per wave (SFA with the stage, SFB from a per-tile window)
  Feed feed;
  bool timeline;  // records the waves' issue and completion times (kOptTimeline)
  void (*launch)(int sms, int blocks, int wgs, int feed, const uint8_t* src, long long* cycles, float* sink,
                 long long* timeline);
};

template <Work W, int N, bool kPipe, bool kScales, int kOpts = 0, int kWaves = 2, int kMathWgs = 2>
constexpr Variant row(const char* name, int wgs, Feed feed = kFeedAll) {
  static_assert(kMathWgs >= 1 && kMathWgs <= 3 && (kWaves == 1 || kWaves == 2), "up to 3 math warpgroups, 1-2 waves");
  return {name, N, wgs, kWaves, kPipe, kScales, feed, (kOpts & kOptTimeline) != 0,
          &launch<W, N, kPipe, kScales, kOpts, kWaves, kMathWgs>};
}

// One 64-row wave a warpgroup and K block: three math warpgroups make a 192 x 128 tile (tensor work 768 a K block),
// two a 128 x 128 one (512).
template <Work W, int N, bool kPipe, bool kScales, int kOpts = 0>
constexpr Variant slab(const char* name, int wgs, Feed feed = kFeedAll) {
  return wgs == 3 ? row<W, N, kPipe, kScales, kOpts, 1, 3>(name, wgs, feed)
                  : row<W, N, kPipe, kScales, kOpts, 1, 2>(name, wgs, feed);
}

constexpr Variant kVariants[] = {
    row<kNone, 1, false, false>("none", 2),
    row<kFfmaAcc, 64, false, false>("ffma_acc", 2),
    row<kFfmaAcc, 96, false, false>("ffma_acc", 2),
    row<kFfmaAcc, 128, false, false>("ffma_acc", 2),
    row<kFfmaOther, 64, false, false>("ffma_other", 2),
    row<kFmulAcc, 64, false, false>("fmul_acc", 2),
    row<kFfmaAcc, 64, false, false>("ffma_acc", 1),
    row<kNone, 1, true, false>("none", 2),
    row<kFfmaAcc, 64, true, false>("ffma_acc", 2),
    row<kFfmaAcc, 32, true, true>("ffma_acc", 2),
    row<kFfmaAcc, 64, true, true>("ffma_acc", 2),
    row<kNone, 1, true, false>("none, barriers only", 2, kFeedBarriers),
    row<kFfmaAcc, 64, true, true>("ffma_acc, barriers only", 2, kFeedBarriers),
    row<kNone, 1, true, false>("none, B resident", 2, kFeedA),
    row<kFfmaAcc, 64, true, true>("ffma_acc, B resident", 2, kFeedA),
    row<kFfmaAcc, 64, true, true>("ffma_acc, SFA resident", 2, kFeedNoSfa),
    row<kFfmaAcc, 64, true, true, kOptEarly>("ffma_acc, early wait", 2),
    row<kFfmaAcc, 64, false, true>("ffma_acc, resident, no barriers", 2),
    row<kFfmaAcc, 64, false, true>("ffma_acc, resident, no barriers", 1),
    row<kFfmaAcc, 64, true, true>("ffma_acc, barriers only", 1, kFeedBarriers),
    row<kNone, 1, true, false>("none, barriers only", 1, kFeedBarriers),
    row<kFfmaAcc, 64, true, true, kOptReleaseAfter>("ffma_acc, barriers only, release after", 2, kFeedBarriers),
    row<kFfmaAcc, 64, true, true, kOptHoistSa>("ffma_acc, barriers only, sa hoisted", 2, kFeedBarriers),
    row<kFfmaAcc, 64, true, true, kOptThreadArrive>("ffma_acc, barriers only, thread arrive", 2, kFeedBarriers),
    row<kFfmaAcc, 64, true, true, kOptSpin>("ffma_acc, barriers only, spin", 2, kFeedBarriers),
    row<kFfmaAcc, 64, true, true, kOptReleaseAfter>("ffma_acc, release after", 2),
    row<kFfmaAcc, 64, true, true, kOptHoistSa>("ffma_acc, sa hoisted", 2),
    row<kFfmaAcc, 64, true, true, kOptThreadArrive>("ffma_acc, thread arrive", 2),
    row<kFfmaAcc, 64, true, true, kOptSpin>("ffma_acc, spin", 2),
    row<kFfmaAcc, 64, true, true, kOptScalesAfterIssue>("ffma_acc, scales after issue", 2),
    row<kFfmaAcc, 64, true, true, kOptScalesInRegisters>("ffma_acc, scales in registers", 2),
    row<kFfmaAcc, 64, false, true, kOptScalesAfterIssue>("ffma_acc, resident, scales after issue", 2),
    row<kFfmaAcc, 64, false, true, kOptScalesInRegisters>("ffma_acc, resident, scales in registers", 2),
    row<kFfmaAcc, 64, false, true, kOptOrdered>("ffma_acc, resident, ordered", 2),
    row<kFfmaAcc, 64, true, true, kOptOrdered>("ffma_acc, ordered", 2),
    row<kFfmaAcc, 64, true, true, kOptOrdered | kOptThreadArrive>("ffma_acc, ordered, thread arrive", 2),
    row<kFfmaAcc, 64, true, true, kOptOrdered>("ffma_acc, barriers only, ordered", 2, kFeedBarriers),
    row<kFfmaAcc, 64, true, true, kOptBalanced>("ffma_acc, balanced", 2),
    row<kFfmaAcc, 64, true, true, kOptBalanced>("ffma_acc, barriers only, balanced", 2, kFeedBarriers),
    row<kFfmaAcc, 64, true, true, kOptBalanced | kOptThreadArrive>("ffma_acc, balanced, thread arrive", 2),
    row<kFfmaAcc, 64, true, true, kOptBalanced>("ffma_acc, balanced", 1),
    row<kFfmaAcc, 64, false, true, kOptStagger>("ffma_acc, resident, no barriers, staggered", 2),
    row<kFfmaAcc, 64, true, true, kOptStagger>("ffma_acc, barriers only, staggered", 2, kFeedBarriers),
    row<kFfmaAcc, 64, true, true, kOptStagger>("ffma_acc, staggered", 2),
    row<kNone, 1, true, false, kOptPaired>("none, barriers only, paired", 2, kFeedBarriers),
    row<kFfmaAcc, 64, true, true, kOptPaired>("ffma_acc, barriers only, paired", 2, kFeedBarriers),
    row<kFfmaAcc, 64, true, true, kOptPaired | kOptThreadArrive>("ffma_acc, barriers only, paired, thread arrive", 2,
                                                                  kFeedBarriers),
    row<kFfmaAcc, 64, false, true, kOptTimeline>("ffma_acc, resident, no barriers, timeline", 2),
    row<kFfmaAcc, 64, true, true, kOptTimeline>("ffma_acc, barriers only, timeline", 2, kFeedBarriers),
    row<kFfmaAcc, 64, true, true, kOptTimeline>("ffma_acc, timeline", 2),
    row<kFfmaAcc, 64, true, true, kOptTestEarly>("ffma_acc, barriers only, test early", 2, kFeedBarriers),
    row<kFfmaAcc, 64, true, true, kOptTestEarly>("ffma_acc, test early", 2),
    row<kFfmaAcc, 64, true, true, kOptTestEarly | kOptTimeline>("ffma_acc, test early, timeline", 2),
    slab<kNone, 1, false, false>("one wave: none", 3),
    slab<kFfmaAcc, 64, false, true>("one wave: ffma_acc, resident, no barriers", 3),
    slab<kNone, 1, true, false>("one wave: none", 3),
    slab<kFfmaAcc, 64, true, true>("one wave: ffma_acc", 3),
    slab<kFfmaAcc, 64, true, true, kOptThreadArrive>("one wave: ffma_acc, thread arrive", 3),
    slab<kFfmaAcc, 64, true, true>("one wave: ffma_acc, barriers only", 3, kFeedBarriers),
    slab<kFfmaAcc, 64, true, true>("one wave: ffma_acc", 2),
    slab<kFfmaAcc, 64, true, true, kOptThreadArrive>("one wave: ffma_acc, thread arrive", 2),
};

double median(std::vector<double> x) {
  if (x.empty()) return 0.0;
  std::sort(x.begin(), x.end());
  return x[x.size() / 2];
}

/// The lines of a timeline row's launch: for the CTAs near the tensor work and for the others, how far apart the two
/// math warpgroups' waves complete (|done A - done B|: about a wave's 256 cycles when their turns alternate, near 0
/// when their batches run together), how long a wave takes from its issue to its wait's return, and per wave v the
/// turn that follows it, event to event (TlEvent) up to the next wave's issue: its wait, release, promotion, then the
/// next wave's stage wait and scale loads (after wave 1: the next K block's), then its issue.
std::string timeline_line(const Variant& v, const std::vector<double>& per, double tensor, const long long* dev,
                          size_t n, int blocks) {
  if (blocks < kTl0 + kTlBlocks) return std::string(v.name) + ": no timeline (--blocks below the recorded stretch)";
  std::vector<long long> t(n);
  cudaMemcpy(t.data(), dev, sizeof(long long) * n, cudaMemcpyDeviceToHost);
  // The segments: done - issued, released - done, promoted - released, next pre - promoted, next issued - pre.
  constexpr int kSegs = 5;
  std::vector<double> gap[2], run[2], seg[2][2][kSegs];  // [0]: fast CTAs, [1]: the others; [wave][segment]
  int ctas[2] = {0, 0};
  const int slots = kTlBlocks * v.waves;
  for (size_t c = 0; c < per.size(); ++c) {
    const int k = per[c] < 1.05 * tensor ? 0 : 1;
    ++ctas[k];
    for (int r = 0; r < slots; ++r) {
      const long long* e = &t[(c * slots + r) * 2 * kTlEvents];
      gap[k].push_back(static_cast<double>(std::llabs(e[kTlDone] - e[kTlEvents + kTlDone])));
      for (int w = 0; w < 2; ++w) {
        const long long* x = e + w * kTlEvents;
        run[k].push_back(static_cast<double>(x[kTlDone] - x[kTlIssued]));
        if (r + 1 == slots) continue;
        const long long* next = x + 2 * kTlEvents;  // the same warpgroup's next wave
        const long long d[kSegs] = {x[kTlDone] - x[kTlIssued], x[kTlReleased] - x[kTlDone],
                                    x[kTlPromoted] - x[kTlReleased], next[kTlPre] - x[kTlPromoted],
                                    next[kTlIssued] - next[kTlPre]};
        for (int g = 0; g < kSegs; ++g) seg[k][r % v.waves][g].push_back(static_cast<double>(d[g]));
      }
    }
  }
  std::string out;
  char line[512];
  snprintf(line, sizeof line,
           "%s: %d fast CTAs, median |done A - done B| %.0f, issue to done %.0f; %d others, %.0f and %.0f cycles",
           v.name, ctas[0], median(gap[0]), median(run[0]), ctas[1], median(gap[1]), median(run[1]));
  out += line;
  for (int k = 0; k < 2; ++k) {
    if (!ctas[k]) continue;
    for (int w = 0; w < v.waves; ++w) {
      snprintf(line, sizeof line,
               "\n  %s CTAs, wave %d (median cycles): issued to done %.0f, to released %.0f, to promoted %.0f, to the "
               "next wave's stage wait and scales done %.0f, to its issue %.0f",
               k == 0 ? "fast" : "other", w, median(seg[k][w][0]), median(seg[k][w][1]), median(seg[k][w][2]),
               median(seg[k][w][3]), median(seg[k][w][4]));
      out += line;
    }
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  int blocks = 32768;  // about 25 ms a launch
  const char* only = nullptr;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--blocks") && i + 1 < argc) {
      blocks = atoi(argv[++i]);
    } else if (!strcmp(argv[i], "--only") && i + 1 < argc) {
      only = argv[++i];
    } else {
      fprintf(stderr, "ffma_wgmma_probe: unknown argument %s (usage: ffma_wgmma_probe [--blocks N] [--only TEXT])\n",
              argv[i]);
      return 2;
    }
  }
  if (blocks < 2) {
    fprintf(stderr, "ffma_wgmma_probe: --blocks must be at least 2\n");
    return 2;
  }
  cudaDeviceProp prop;
  if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess || prop.major != 9) {
    fprintf(stderr, "ffma_wgmma_probe: needs an SM90 GPU\n");
    return 2;
  }
  const int sms = prop.multiProcessorCount;
  long long* cycles;
  long long* timeline;
  float* sink;
  uint8_t* src;
  // per CTA, K block and wave: the events of warpgroups A and B
  const size_t tl_n = static_cast<size_t>(sms) * kTlBlocks * 2 * 2 * kTlEvents;
  cudaMalloc(&cycles, sizeof(long long) * sms * 4);
  cudaMalloc(&timeline, sizeof(long long) * tl_n);
  cudaMalloc(&sink, sizeof(float) * 512);
  cudaMalloc(&src, static_cast<size_t>(kSlots) * kStageBytes);
  cudaMemset(src, 0x38, static_cast<size_t>(kSlots) * kStageBytes);  // e4m3 1.0; as f32 (SFA) about 4.4e-5
  printf("ffma_wgmma_probe: %s, %d SMs, %d K blocks a CTA; cycles per K block (a wave: 4 wgmma m64n128k32 a "
         "warpgroup)\n",
         prop.name, sms, blocks);
  printf("| variant | instructions a wave | math warpgroups | waves | pipe | scales | cycles per K block (median of "
         "CTAs) | min–max | over tensor work |\n");
  printf("|---|---|---|---|---|---|---|---|---|\n");
  fflush(stdout);
  std::vector<std::string> timelines;
  for (const Variant& v : kVariants) {
    if (only && !strstr(v.name, only)) continue;
    for (int rep = 0; rep < 2; ++rep) {  // the first launch warms the clocks; the second is reported
      cudaMemset(cycles, 0, sizeof(long long) * sms * 4);
      v.launch(sms, blocks, v.wgs, v.feed, src, cycles, sink, timeline);
      if (cudaDeviceSynchronize() != cudaSuccess) {
        fprintf(stderr, "ffma_wgmma_probe: %s failed: %s\n", v.name, cudaGetErrorString(cudaGetLastError()));
        return 1;
      }
    }
    std::vector<long long> h(sms * 4);
    cudaMemcpy(h.data(), cycles, sizeof(long long) * sms * 4, cudaMemcpyDeviceToHost);
    std::vector<double> per(sms);
    for (int c = 0; c < sms; ++c) per[c] = static_cast<double>(*std::max_element(&h[4 * c], &h[4 * c + 4])) / blocks;
    const double tensor = 256.0 * v.waves * v.wgs;
    if (v.timeline) timelines.push_back(timeline_line(v, per, tensor, timeline, tl_n, blocks));
    std::sort(per.begin(), per.end());
    const double med = per[sms / 2];
    printf("| %s | %d | %d | %d | %s | %s | %.1f | %.1f–%.1f | %.3f× |\n", v.name, v.n, v.wgs, v.waves,
           v.pipe ? "yes" : "no", v.scales ? "yes" : "no", med, per.front(), per.back(), med / tensor);
  }
  if (!timelines.empty()) {
    printf("\ntimelines (K blocks %d to %d; A, B: the two math warpgroups; a CTA is fast within 5 %% of the tensor "
           "work):\n",
           kTl0, kTl0 + kTlBlocks - 1);
    for (const std::string& t : timelines) printf("%s\n", t.c_str());
  }
  return 0;
}
