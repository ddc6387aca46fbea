// Parameters and launcher of the fast SM90 FP8 GEMM (sm90_fp8_fast_kernel.cuh): K-major A/B through TMA, f32 scales
// (gran 1 x 128 for A, 128 x 128 for B), BF16 output without C.
#pragma once
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include "grouped_gate.h"

namespace go_sm90 {

enum FastMode : int { kFastNormal = 0, kFastClassic, kFastPsum, kFastMasked };
/// Epilogue of the fast kernel (GO_CUDA_FAST_CFG epi=smem|direct|tma; sm90_fp8_fast_kernel.cuh).
enum FastEpi : int { kEpiSmem = 0, kEpiDirect = 1, kEpiTma = 2 };

struct FastParams {
  int mode;
  int M, N, K;  // M: rows of A/D (masked: Mmax per group)
  int G;        // groups (masked: batches; grouped: number of B groups)
  int m_blocks, n_blocks, units;  // filled by the launcher (units: cluster work items)
  const float* sfa;
  int64_t sfa_s_row, sfa_s_kb, sfa_s_batch;
  int sfa_vec;  // SFA is MN-major with 16-byte aligned columns: 4 rows per 16-byte copy
  int sfa_tma;  // set by the launcher: SFA arrives by TMA (map_sfa) instead of per-thread copies
  int d_tma;    // set by the launcher: D is stored by TMA (map_d; epi=tma) where a chunk's rows allow
  const float* sfb;
  int64_t sfb_s_row, sfb_s_kb, sfb_s_batch;
  __nv_bfloat16* d;
  int64_t d_s_row, d_s_batch;
  const int32_t* gl;
  const int32_t* masked_m;
  int mk_align;
  int psum_flags;  // bit 1: ensure_zero_padding
  int tiles256;    // contiguous layouts, for choose_fast_config: the groups fit 256-row tiles (BLOCK_M 256 may be
                   // chosen); the launcher chooses with 1 and 0 and the device check picks the kernel that runs
  // Grouped calls: the index tensor is checked on the device (grouped_gate.h). gate_kind (GateKind, host side) says
  // which check the launcher runs; the kernel reads the gate block `gate` first and returns unless the layout is
  // valid and, per gate_want (GateWant), its groups fit (or do not fit) 256-row tiles. gate == nullptr: no gate.
  int gate_kind;
  int gate_want;
  const int32_t* gate;
  // Split K (dense only; split_k > 1): unit u works on K blocks [ks * nkb / split_k, (ks + 1) * nkb / split_k) of its
  // tile and writes each block's raw wgmma result P (f32) to ws[kb][row][col] (row pitch ws_pitch, block plane
  // ws_plane floats); fp8_fast_splitk_promote then runs the promotion chain F = fma(fl32(sa * sb), P, F) in K order
  // and rounds to bf16, so the bits are those of the unsplit kernel.
  int split_k;
  float* ws;
  int64_t ws_pitch, ws_plane;
};

/// Whether 256-row tiles (BLOCK_M 256) can run a contiguous layout (host copy `gl` of grouped_layout: M row groups,
/// or G psum ends), by the rules of grouped_gate.h (the device check of the fast path uses the same).
inline bool fast_tiles256(const int32_t* gl, int64_t n, int64_t M, bool psum, int mk) {
  if (psum) {
    int64_t end = 0;
    for (int64_t g = 0; g < n; ++g) {
      if (!fits256_psum(end, mk)) return false;
      end = gl[g];
    }
    return true;
  }
  for (int64_t m0 = 0; m0 + 128 < M; m0 += 256)
    if (!fits256_classic(gl[m0], gl[m0 + 128])) return false;
  return true;
}

/// One launch configuration of the fast kernel (what FastConfig fixes at compile time).
struct FastChoice {
  int bn = 128;         // BLOCK_N, multiple of 8 in [8, 256]
  int stages = 5;       // pipeline depth
  int multicast = 1;    // CTAs per cluster sharing the A tile (1 or 2)
  bool double_acc = true;  // two accumulator sets (BN <= 128)
  int acc_sets = 2;        // with double_acc: 2, or 3 / 4 sets taken in turn (acc=triple|quad: unsplit, no ahead=1,
                           // BN <= 64; with fewer K blocks than sets a call runs 2)
  bool halves = false;     // one set issued as two wgmma groups of BN / 2 columns: one is promoted while the other
                           // runs (acc=halves; BN a multiple of 16)
  bool ahead = false;      // the next tile's first K block is issued before this tile's epilogue (ahead=1)
  bool shape = true;    // JIT: N and K as compile-time constants
  int producer_warps = 4;  // 4: the producer warpgroup loads (one SFA row per thread); 1: one warp
  bool release_per_warp = false;  // math warps release a stage with one arrival each (else one per thread)
  int producer_regs = 0;   // setmaxnreg split: 40 / 232 or 56 / 224; 0: chosen (56)
  int bm = 128;         // BLOCK_M: 64 (one math warpgroup), 128, or 256 (two waves per math warpgroup; one
                        // accumulator set, BN <= 128)
  int debug = 0;        // GO_FAST_DBG profiling switches (sm90_fp8_fast_kernel.cuh): nonzero gives wrong results
  bool sfa_tma = true;  // SFA by TMA where its layout allows (MN-major, 16-byte aligned columns); else cp.async
  int epi = kEpiTma;    // FastEpi: TMA stores from shared memory, 16-byte stores by the math threads (smem), or
                        // stores from registers (direct: no staging buffers, room for one more stage)
  int split_k = 1;      // dense: K split over this many CTAs per tile, promotion deferred to a second kernel
  bool k_alternate = false;  // kalt=1 (BLOCK_M 64): the two math warpgroups take alternate K blocks of a tile, the
                             // second passing its raw results through shared memory to the first, which promotes
  int load_group = 1;   // the producer issues the loads of this many consecutive K blocks together, once all their
                        // stages are free (group=1|2|4; adjacent 128-byte row segments of B then reach DRAM together)
  int spread = 0;        // spread=1: with SFA by TMA, three producer threads issue a stage's copies (SFA and A, B,
                         // the SFB values) side by side instead of one thread issuing the TMA copies; spread=2: four
                         // (SFA on a thread of its own); both need prod=4
  int ktma = 1;          // ktma=2|4: one TMA copy (a box this many K blocks deep) fills as many consecutive stages of
                         // A, B and SFA, whose loads complete on the first stage's full barrier (mc=1, unsplit, K a
                         // multiple of 128 with its K blocks a multiple of ktma, stages a multiple of ktma)
  bool pdl = true;      // programmatic dependent launch: the kernel (and a grouped call's gate kernel) may be scheduled
                        // while the kernel before it on the stream still runs, and waits for it in griddepcontrol.wait
                        // before touching global memory (pdl=0: a plain launch; the bits are the same)
};

/// The configuration a call of this shape class gets: GO_CUDA_FAST_CFG ("bn=112,stages=6,mc=2,acc=single,shape=0,
/// prod=4,rel=thread,regs=40,bm=256", any subset) overrides the heuristic's fields. Returns false with *err set when the override is malformed.
bool choose_fast_config(const FastParams& p, int sms, FastChoice* out, std::string* err);
/// The same with the override text given (nullptr: none) instead of read from GO_CUDA_FAST_CFG.
bool choose_fast_config(const FastParams& p, int sms, const char* override_text, FastChoice* out, std::string* err);

/// "bm=256 bn=128 stages=3 multicast=1 acc=single prod=4 rel=thread regs=56 sfa=tma epi=tma" plus `how` (and a dbg
/// warning).
std::string describe_fast_config(const FastChoice& c, const char* how);

// a: 2-D TMA view [a_rows, K] (masked: G * Mmax rows), b: [b_rows, K] (grouped: G * N rows); row strides in bytes.
// Sets *used = false (and launches nothing) when the tensor maps cannot be built; the caller then uses the simple path.
// A configuration the JIT cannot provide falls back to the ahead-of-time kernels (BN 64/128, no multicast), with a
// warning on stderr. On an error return, *err (when not empty) says what was wrong (e.g. a bad GO_CUDA_FAST_CFG).
cudaError_t launch_fp8_gemm_fast(FastParams p, const void* a, int64_t a_rows, int64_t a_row_stride, const void* b,
                                 int64_t b_rows, int64_t b_row_stride, cudaStream_t stream, bool* used,
                                 std::string* err);

/// Compiles / loads the kernel that launch_fp8_gemm_fast would use for this class (no launch). 0 on success.
int prepare_fp8_gemm_fast(FastParams p, std::string* err);

/// "bn=128 stages=5 multicast=2 acc=double jit=shape" of the last launch on this thread.
std::string last_fast_config();

}  // namespace go_sm90
