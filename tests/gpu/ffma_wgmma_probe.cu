// What the promotion's FMAs cost the tensor cores (issue 26): the fast kernel's K loop at BLOCK_M 256 x BLOCK_N 128
// taken apart. One CTA per SM, two math warpgroups; each runs K blocks of two waves, a wave being 4 x wgmma
// m64n128k32 (e4m3, operands in shared memory, 128B-swizzled descriptors as the kernel's), a wait, then the wave's work
// as its row of kVariants says. The kernel's promotion is `ffma_acc` at 64 with `scales`: F = fma(sa * sb, P, F) per
// accumulator. Without `pipe` the operands stay resident (one stage, no barriers); with it a producer warp streams each
// K block's A (32 KB), B (16 KB) and, with `scales`, SFA (1 KB) into a 3-stage ring with bulk copies on mbarriers, as
// the kernel's does, from a 25 MB buffer that stays in L2, and the math warpgroups wait for each stage and free it.
// Tensor work of a K block: 2 warpgroups x 2 waves x 4 wgmmas = 1024 cycles at 8192 FP8 FLOP per cycle and SM
// (docs/performance-history.md, sixteenth round: the kernel's K loop takes about 1160).
//
//   ffma_wgmma_probe [--blocks N]   prints one line per variant: cycles per K block (median over the CTAs of the CTA's
//                                   slower math warpgroup), their range, and the ratio to the tensor work.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
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

// Changes to the pipe variants' K loop (bits of kOpts).
enum Opt {
  kOptEarly = 1,         // the next stage's wait moved ahead of the last wave's wgmma wait
  kOptReleaseAfter = 2,  // the stage released after the last wave's promotion, not before it
  kOptHoistSa = 4,       // both waves' A scales read right after the stage's wait, not each before its wave
  kOptThreadArrive = 8,  // every thread arrives on the empty barrier (no __syncwarp), as the kernel without multicast
  kOptSpin = 16,         // barrier waits spin on try_wait without the suspend-time hint
  kOptScalesAfterIssue = 32,  // the scales read after the wave's wgmmas are issued (before their wait), not before
  kOptScalesInRegisters = 64,  // no loads: each wave's scales derived from the last by one FMUL (their latency alone)
  kOptOrdered = 128,  // the two warpgroups issue their waves in turn (named barriers): one's batch never joins the other's
  kOptBalanced = 256  // the next stage's wait and B scale between wave 0's promotion and wave 1's issue, so that each
                      // of a K block's two turns between waves carries one of its two barrier operations
};

struct Variant {
  const char* name;
  Work work;
  int n;        // instructions a thread and wave
  int wgs;      // math warpgroups running (1: the other returns at once)
  bool pipe;    // operands streamed through the ring by a producer warp
  bool scales;  // s = sa * sb read from shared memory per wave (SFA with the stage, SFB from a per-tile window)
  Feed feed = kFeedAll;
  int opts = 0;  // Opt bits
};

constexpr Variant kVariants[] = {
    {"none", kNone, 1, 2, false, false},
    {"ffma_acc", kFfmaAcc, 64, 2, false, false},
    {"ffma_acc", kFfmaAcc, 96, 2, false, false},
    {"ffma_acc", kFfmaAcc, 128, 2, false, false},
    {"ffma_other", kFfmaOther, 64, 2, false, false},
    {"fmul_acc", kFmulAcc, 64, 2, false, false},
    {"ffma_acc", kFfmaAcc, 64, 1, false, false},
    {"none", kNone, 1, 2, true, false},
    {"ffma_acc", kFfmaAcc, 64, 2, true, false},
    {"ffma_acc", kFfmaAcc, 32, 2, true, true},
    {"ffma_acc", kFfmaAcc, 64, 2, true, true},
    {"none, barriers only", kNone, 1, 2, true, false, kFeedBarriers},
    {"ffma_acc, barriers only", kFfmaAcc, 64, 2, true, true, kFeedBarriers},
    {"none, B resident", kNone, 1, 2, true, false, kFeedA},
    {"ffma_acc, B resident", kFfmaAcc, 64, 2, true, true, kFeedA},
    {"ffma_acc, SFA resident", kFfmaAcc, 64, 2, true, true, kFeedNoSfa},
    {"ffma_acc, early wait", kFfmaAcc, 64, 2, true, true, kFeedAll, kOptEarly},
    {"ffma_acc, resident, no barriers", kFfmaAcc, 64, 2, false, true},
    {"ffma_acc, resident, no barriers", kFfmaAcc, 64, 1, false, true},
    {"ffma_acc, barriers only", kFfmaAcc, 64, 1, true, true, kFeedBarriers},
    {"none, barriers only", kNone, 1, 1, true, false, kFeedBarriers},
    {"ffma_acc, barriers only, release after", kFfmaAcc, 64, 2, true, true, kFeedBarriers, kOptReleaseAfter},
    {"ffma_acc, barriers only, sa hoisted", kFfmaAcc, 64, 2, true, true, kFeedBarriers, kOptHoistSa},
    {"ffma_acc, barriers only, thread arrive", kFfmaAcc, 64, 2, true, true, kFeedBarriers, kOptThreadArrive},
    {"ffma_acc, barriers only, spin", kFfmaAcc, 64, 2, true, true, kFeedBarriers, kOptSpin},
    {"ffma_acc, release after", kFfmaAcc, 64, 2, true, true, kFeedAll, kOptReleaseAfter},
    {"ffma_acc, sa hoisted", kFfmaAcc, 64, 2, true, true, kFeedAll, kOptHoistSa},
    {"ffma_acc, thread arrive", kFfmaAcc, 64, 2, true, true, kFeedAll, kOptThreadArrive},
    {"ffma_acc, spin", kFfmaAcc, 64, 2, true, true, kFeedAll, kOptSpin},
    {"ffma_acc, scales after issue", kFfmaAcc, 64, 2, true, true, kFeedAll, kOptScalesAfterIssue},
    {"ffma_acc, scales in registers", kFfmaAcc, 64, 2, true, true, kFeedAll, kOptScalesInRegisters},
    {"ffma_acc, resident, scales after issue", kFfmaAcc, 64, 2, false, true, kFeedAll, kOptScalesAfterIssue},
    {"ffma_acc, resident, scales in registers", kFfmaAcc, 64, 2, false, true, kFeedAll, kOptScalesInRegisters},
    {"ffma_acc, resident, ordered", kFfmaAcc, 64, 2, false, true, kFeedAll, kOptOrdered},
    {"ffma_acc, ordered", kFfmaAcc, 64, 2, true, true, kFeedAll, kOptOrdered},
    {"ffma_acc, ordered, thread arrive", kFfmaAcc, 64, 2, true, true, kFeedAll, kOptOrdered | kOptThreadArrive},
    {"ffma_acc, barriers only, ordered", kFfmaAcc, 64, 2, true, true, kFeedBarriers, kOptOrdered},
    {"ffma_acc, balanced", kFfmaAcc, 64, 2, true, true, kFeedAll, kOptBalanced},
    {"ffma_acc, barriers only, balanced", kFfmaAcc, 64, 2, true, true, kFeedBarriers, kOptBalanced},
    {"ffma_acc, balanced, thread arrive", kFfmaAcc, 64, 2, true, true, kFeedAll, kOptBalanced | kOptThreadArrive},
    {"ffma_acc, balanced", kFfmaAcc, 64, 1, true, true, kFeedAll, kOptBalanced},
};

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

template <Work W, int N, bool kPipe, bool kScales, int kOpts = 0>
__global__ void __launch_bounds__(kPipe ? 384 : 256, 1)
    probe(int blocks, int wgs, int feed, const uint8_t* src, long long* cycles, float* sink) {
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
    for (int s = 0; s < kStages; ++s) mbar_init(&bars[s], 1), mbar_init(&bars[kStages + s], (kOpts & kOptThreadArrive) ? 128 * wgs : 4 * wgs);
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  fence_proxy_async();
  __syncthreads();
  const int wg = static_cast<int>(threadIdx.x / 128), tid = threadIdx.x % 128;
  if constexpr (kPipe) {
    if (wg == 0) {  // the producer: one elected thread of warp 0
      if (tid == 0) {
        for (int kb = 0; kb < blocks; ++kb) {
          const int s = kb % kStages;
          mbar_wait(empty_u + 8 * s, ((kb / kStages) & 1) ^ 1);
          const uint32_t dst = smem_addr(smem + s * kStageBytes), bar = full_u + 8 * s;
          const uint8_t* from = src + static_cast<size_t>((blockIdx.x * 37 + kb) % kSlots) * kStageBytes;
          const bool b = feed == kFeedAll || feed == kFeedNoSfa, sfa = kScales && feed != kFeedNoSfa;
          if (feed == kFeedBarriers) {
            mbar_arrive_local(bar);
            continue;
          }
          mbar_arrive_expect_tx(bar, kABytes + (b ? kBBytes : 0) + (sfa ? kSfaBytes : 0));
          bulk_load(dst, from, kABytes, bar);
          if (b) bulk_load(dst + kABytes, from + kABytes, kBBytes, bar);
          if (sfa) bulk_load(dst + kABytes + kBBytes, from + kABytes + kBBytes, kSfaBytes, bar);
        }
      }
      return;
    }
  }
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
  {
    constexpr bool kEarly = kOpts & kOptEarly, kAfter = kOpts & kOptReleaseAfter, kHoist = kOpts & kOptHoistSa;
    const auto wait = [&](uint32_t bar, uint32_t parity) {
      if constexpr ((kOpts & kOptSpin) != 0) {
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
      if constexpr ((kOpts & kOptThreadArrive) != 0) {
        mbar_arrive_local(empty_u + 8 * s);
      } else {  // one arrival a warp, as the kernel's multicast release
        __syncwarp();
        if (tid % 32 == 0) mbar_arrive_local(empty_u + 8 * s);
      }
    };
    float sb_next = 1.0f;
#pragma unroll 2
    for (int kb = 0; kb < blocks; ++kb) {
      const int s = kPipe ? kb % kStages : 0;
      const uint32_t stage = static_cast<uint32_t>(s * kStageBytes) / 16;
      float sb = 1.0f, sa[4];
      if constexpr (kScales && (kOpts & kOptScalesInRegisters) == 0)
        if ((kOpts & kOptBalanced) == 0 || kb == 0) sb = ld_shared_f32(sfb_u + 4 * (kb % kSfbFloats));
      constexpr bool kBal = kOpts & kOptBalanced;
      if (kPipe && ((!kEarly && !kBal) || kb == 0)) wait(full_u + 8 * s, (kb / kStages) & 1);
      if (kBal && kScales && kb > 0) sb = sb_next;
      if constexpr (kScales && kHoist) {
#pragma unroll
        for (int v = 0; v < 2; ++v) {
          sa[2 * v] = ld_shared_f32(sfa_u + s * kStageBytes + 4 * 128 * v);
          sa[2 * v + 1] = ld_shared_f32(sfa_u + s * kStageBytes + 4 * (128 * v + 8));
        }
      }
      constexpr bool kAfterIssue = kOpts & kOptScalesAfterIssue, kRegs = kOpts & kOptScalesInRegisters;
      const auto read_sa = [&](int v) {
        if constexpr (kRegs) {
          sa[2 * v] = __fmul_rn(s0, 1.0000001f), sa[2 * v + 1] = __fmul_rn(s1, 0.9999999f);
        } else {
          sa[2 * v] = ld_shared_f32(sfa_u + s * kStageBytes + 4 * 128 * v);
          sa[2 * v + 1] = ld_shared_f32(sfa_u + s * kStageBytes + 4 * (128 * v + 8));
        }
      };
#pragma unroll
      for (int v = 0; v < 2; ++v) {
        if constexpr (kScales && !kHoist && !kAfterIssue) read_sa(v);
        constexpr bool kOrdered = kOpts & kOptOrdered;
        // ordered: warpgroup w issues after the other has issued its previous wave (barrier 2 + w), then lets it go
        if (kOrdered && (w == 1 || kb > 0 || v > 0)) asm volatile("bar.sync %0, 256;\n" ::"r"(2 + w) : "memory");
        wave_mma(acc, lo_a0 + stage + v * (128 * 128 / 16), lo_b0 + stage);
        if (kOrdered) asm volatile("bar.arrive %0, 256;\n" ::"r"(3 - w) : "memory");
        if constexpr (kScales && kAfterIssue) read_sa(v);
        if constexpr (kScales) s0 = __fmul_rn(sa[2 * v], sb), s1 = __fmul_rn(sa[2 * v + 1], sb);
        // early: the next K block's stage is waited for while this block's last wave runs, not after its promotion
        if (kEarly && v == 1 && kb + 1 < blocks) wait(full_u + 8 * ((kb + 1) % kStages), ((kb + 1) / kStages) & 1);
        wgmma_wait0();
        if (kPipe && !kAfter && v == 1) release(s);
        work<W, N>(acc, F, G, s0, s1);
        if (kPipe && kAfter && v == 1) release(s);
        if ((kOpts & kOptBalanced) != 0 && v == 0 && kb + 1 < blocks) {
          if constexpr (kScales) sb_next = ld_shared_f32(sfb_u + 4 * ((kb + 1) % kSfbFloats));
          if (kPipe) wait(full_u + 8 * ((kb + 1) % kStages), ((kb + 1) / kStages) & 1);
        }
      }
    }
  }
  if ((kOpts & kOptOrdered) != 0 && w == 0) asm volatile("bar.sync 2, 256;\n" ::: "memory");  // the last release
  const long long t1 = clock64();
  if (tid == 0) cycles[blockIdx.x * 2 + w] = t1 - t0;
  float x = 0.0f;
#pragma unroll
  for (int i = 0; i < 64; ++i) x += F[i] + acc[i];
  if (x == 12345.678f) sink[threadIdx.x] = x;  // keeps the work live
}

template <Work W, int N, bool kPipe, bool kScales, int kOpts = 0>
bool launch(int sms, int blocks, int wgs, int feed, const uint8_t* src, long long* cycles, float* sink) {
  auto* k = probe<W, N, kPipe, kScales, kOpts>;
  cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes);
  k<<<sms, kPipe ? 384 : 256, kSmemBytes>>>(blocks, wgs, feed, src, cycles, sink);
  return true;
}

/// The instantiation of each row of kVariants.
bool run_variant(const Variant& v, int sms, int blocks, const uint8_t* src, long long* cycles, float* sink) {
  const int g = v.wgs;
  if (v.opts != 0) {
    if (v.opts == kOptEarly) return launch<kFfmaAcc, 64, true, true, kOptEarly>(sms, blocks, g, v.feed, src, cycles, sink);
    if (v.opts == kOptReleaseAfter)
      return launch<kFfmaAcc, 64, true, true, kOptReleaseAfter>(sms, blocks, g, v.feed, src, cycles, sink);
    if (v.opts == kOptHoistSa)
      return launch<kFfmaAcc, 64, true, true, kOptHoistSa>(sms, blocks, g, v.feed, src, cycles, sink);
    if (v.opts == kOptThreadArrive)
      return launch<kFfmaAcc, 64, true, true, kOptThreadArrive>(sms, blocks, g, v.feed, src, cycles, sink);
    if (v.opts == kOptSpin) return launch<kFfmaAcc, 64, true, true, kOptSpin>(sms, blocks, g, v.feed, src, cycles, sink);
    constexpr int kAi = kOptScalesAfterIssue, kIr = kOptScalesInRegisters;
    if (v.opts == kAi && v.pipe) return launch<kFfmaAcc, 64, true, true, kAi>(sms, blocks, g, v.feed, src, cycles, sink);
    if (v.opts == kIr && v.pipe) return launch<kFfmaAcc, 64, true, true, kIr>(sms, blocks, g, v.feed, src, cycles, sink);
    if (v.opts == kAi) return launch<kFfmaAcc, 64, false, true, kAi>(sms, blocks, g, v.feed, src, cycles, sink);
    if (v.opts == kIr) return launch<kFfmaAcc, 64, false, true, kIr>(sms, blocks, g, v.feed, src, cycles, sink);
    constexpr int kOr = kOptOrdered, kOrTa = kOptOrdered | kOptThreadArrive;
    if (v.opts == kOr && v.pipe) return launch<kFfmaAcc, 64, true, true, kOr>(sms, blocks, g, v.feed, src, cycles, sink);
    if (v.opts == kOr) return launch<kFfmaAcc, 64, false, true, kOr>(sms, blocks, g, v.feed, src, cycles, sink);
    if (v.opts == kOrTa) return launch<kFfmaAcc, 64, true, true, kOrTa>(sms, blocks, g, v.feed, src, cycles, sink);
    constexpr int kBa = kOptBalanced, kBaTa = kOptBalanced | kOptThreadArrive;
    if (v.opts == kBa) return launch<kFfmaAcc, 64, true, true, kBa>(sms, blocks, g, v.feed, src, cycles, sink);
    if (v.opts == kBaTa) return launch<kFfmaAcc, 64, true, true, kBaTa>(sms, blocks, g, v.feed, src, cycles, sink);
  } else if (!v.pipe) {
    if (v.work == kNone) return launch<kNone, 1, false, false>(sms, blocks, g, v.feed, src, cycles, sink);
    if (v.work == kFfmaAcc && v.n == 64 && !v.scales)
      return launch<kFfmaAcc, 64, false, false>(sms, blocks, g, v.feed, src, cycles, sink);
    if (v.work == kFfmaAcc && v.n == 96) return launch<kFfmaAcc, 96, false, false>(sms, blocks, g, v.feed, src, cycles, sink);
    if (v.work == kFfmaAcc && v.n == 128) return launch<kFfmaAcc, 128, false, false>(sms, blocks, g, v.feed, src, cycles, sink);
    if (v.work == kFfmaOther) return launch<kFfmaOther, 64, false, false>(sms, blocks, g, v.feed, src, cycles, sink);
    if (v.work == kFmulAcc) return launch<kFmulAcc, 64, false, false>(sms, blocks, g, v.feed, src, cycles, sink);
    if (v.work == kFfmaAcc && v.scales) return launch<kFfmaAcc, 64, false, true>(sms, blocks, g, v.feed, src, cycles, sink);
  } else if (!v.scales) {
    if (v.work == kNone) return launch<kNone, 1, true, false>(sms, blocks, g, v.feed, src, cycles, sink);
    if (v.work == kFfmaAcc && v.n == 64) return launch<kFfmaAcc, 64, true, false>(sms, blocks, g, v.feed, src, cycles, sink);
  } else {
    if (v.work == kFfmaAcc && v.n == 32) return launch<kFfmaAcc, 32, true, true>(sms, blocks, g, v.feed, src, cycles, sink);
    if (v.work == kFfmaAcc && v.n == 64) return launch<kFfmaAcc, 64, true, true>(sms, blocks, g, v.feed, src, cycles, sink);
  }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  int blocks = 32768;  // about 25 ms a launch
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--blocks") && i + 1 < argc) {
      blocks = atoi(argv[++i]);
    } else {
      fprintf(stderr, "ffma_wgmma_probe: unknown argument %s (usage: ffma_wgmma_probe [--blocks N])\n", argv[i]);
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
  float* sink;
  uint8_t* src;
  cudaMalloc(&cycles, sizeof(long long) * sms * 2);
  cudaMalloc(&sink, sizeof(float) * 384);
  cudaMalloc(&src, static_cast<size_t>(kSlots) * kStageBytes);
  cudaMemset(src, 0x38, static_cast<size_t>(kSlots) * kStageBytes);  // e4m3 1.0; as f32 (SFA) about 4.4e-5
  printf("ffma_wgmma_probe: %s, %d SMs, %d K blocks a CTA; cycles per K block (2 waves x 4 wgmma m64n128k32 per "
         "warpgroup)\n",
         prop.name, sms, blocks);
  printf("| variant | instructions a wave | math warpgroups | pipe | scales | cycles per K block (median of CTAs) | "
         "min–max | over tensor work |\n");
  printf("|---|---|---|---|---|---|---|---|\n");
  fflush(stdout);
  for (const Variant& v : kVariants) {
    for (int rep = 0; rep < 2; ++rep) {  // the first launch warms the clocks; the second is reported
      cudaMemset(cycles, 0, sizeof(long long) * sms * 2);
      if (!run_variant(v, sms, blocks, src, cycles, sink)) {
        fprintf(stderr, "ffma_wgmma_probe: no instantiation for %s %d\n", v.name, v.n);
        return 1;
      }
      if (cudaDeviceSynchronize() != cudaSuccess) {
        fprintf(stderr, "ffma_wgmma_probe: %s failed: %s\n", v.name, cudaGetErrorString(cudaGetLastError()));
        return 1;
      }
    }
    std::vector<long long> h(sms * 2);
    cudaMemcpy(h.data(), cycles, sizeof(long long) * sms * 2, cudaMemcpyDeviceToHost);
    std::vector<double> per(sms);
    for (int c = 0; c < sms; ++c) per[c] = static_cast<double>(std::max(h[2 * c], h[2 * c + 1])) / blocks;
    std::sort(per.begin(), per.end());
    const double med = per[sms / 2], tensor = 512.0 * v.wgs;
    printf("| %s | %d | %d | %s | %s | %.1f | %.1f–%.1f | %.3f× |\n", v.name, v.n, v.wgs, v.pipe ? "yes" : "no",
           v.scales ? "yes" : "no", med, per.front(), per.back(), med / tensor);
  }
  return 0;
}
