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

/// floor(n / d) for a divisor fixed per launch, as one 64-bit multiply-high: with m = ceil(2^64 / d) (d > 1) the
/// quotient is exact for every 32-bit n, since n * (m * d - 2^64) / (d * 2^64) < 2^-32 <= 1 / d.
struct FastDiv {
  uint64_t m;
  uint32_t d;
  static __host__ __device__ FastDiv of(uint32_t divisor) {
    return {divisor > 1 ? ~uint64_t{0} / divisor + 1 : 0, divisor};
  }
  __host__ __device__ __forceinline__ uint32_t quotient(uint32_t n) const {
    if (d == 1) return n;
#ifdef __CUDA_ARCH__
    return static_cast<uint32_t>(__umul64hi(n, m));
#else
    return static_cast<uint32_t>((static_cast<unsigned __int128>(n) * m) >> 64);
#endif
  }
};

struct FastParams {
  int mode;
  int M, N, K;  // M: rows of A/D (masked: Mmax per group)
  int G;        // groups (masked: batches; grouped: number of B groups)
  int m_blocks, n_blocks, units;  // filled by fast_fill_blocks (units: cluster work items)
  // The tile walk's divisors (fast_tile), filled with the blocks: a plane of units (m_blocks x N groups; masked
  // batches and split K stack planes), a run of 8 M blocks (8 x N groups), and the last run's M blocks where fewer.
  FastDiv walk_plane, walk_run, walk_last;
  // Units from tail_start on are halves of the last round's 256-row tiles (fast_split_tail; units: none split).
  int tail_start;
  const float* sfa;
  int64_t sfa_s_row, sfa_s_kb, sfa_s_batch;
  int sfa_vec;  // SFA is MN-major with 16-byte aligned columns: 4 rows per 16-byte copy
  int sfa_tma;  // set by the launcher: SFA arrives by TMA (map_sfa) instead of per-thread copies
  int d_tma;    // set by the launcher: D is stored by TMA (map_d) where a chunk's rows allow
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
  // Grouped calls: the index tensor is checked on the device (grouped_gate.h). gate_kind (GateKind) says which check:
  // for a contiguous layout the launcher runs the gate kernel, and the kernel reads the gate block `gate` first and
  // returns unless the layout is valid and, per gate_want (GateWant), its groups fit (or do not fit) 256-row tiles;
  // masked_m the kernel checks itself, recording a bad count in `gate` (fast_masked_bad). gate == nullptr: no gate.
  int gate_kind;
  int gate_want;
  int32_t* gate;
  // Split K (dense only; split_k > 1): unit u works on K blocks [ks * nkb / split_k, (ks + 1) * nkb / split_k) of its
  // tile and writes each block's raw wgmma result P (f32) to ws[kb][row][col] (row pitch ws_pitch, block plane
  // ws_plane floats); fp8_fast_splitk_promote then runs the promotion chain F = fma(fl32(sa * sb), P, F) in K order
  // and rounds to bf16, so the bits are those of the unsplit kernel.
  int split_k;
  float* ws;
  int64_t ws_pitch, ws_plane;
};

/// The launch's block counts, work units (a cluster's work item each: a plane of M blocks x N groups, stacked per
/// masked batch or split of K) and the tile walk's divisors (fast_tile). The launcher and the host check of the walk
/// (tests/kernels/fast_tiles_check.cu) both fill them here.
inline void fast_fill_blocks(FastParams& p, int bm, int bn, int multicast, int split_k) {
  p.m_blocks = (p.M + bm - 1) / bm;
  p.n_blocks = (p.N + bn - 1) / bn;
  const int ngroups = (p.n_blocks + multicast - 1) / multicast;
  p.units = p.m_blocks * ngroups * (p.mode == kFastMasked ? p.G : split_k);
  p.split_k = split_k;
  const int plane = p.m_blocks * ngroups, last = p.m_blocks % 8;
  p.walk_plane = FastDiv::of(static_cast<uint32_t>(plane > 1 ? plane : 1));
  p.walk_run = FastDiv::of(static_cast<uint32_t>(8 * (ngroups > 1 ? ngroups : 1)));
  p.walk_last = FastDiv::of(static_cast<uint32_t>(last == 0 ? 8 : last));
  p.tail_start = p.units;
}

/// The last round of a persistent grid of `clusters` clusters over p.units units, split: where that round has t units
/// and 2t of them fit in one (0 < 2t <= clusters), its tiles run as 2t halves, each on its own cluster (fast_tile:
/// unit tail_start + v is half v / t of tile tail_start + v % t, 128 of its 256 rows), so the round takes about half a
/// tile's time. Sets p.tail_start and p.units; the launcher asks first whether the configuration allows it
/// (fast_tail_halves), and launches min(p.units, clusters) clusters after.
inline void fast_split_tail(FastParams& p, int clusters) {
  const int t = clusters > 0 ? p.units % clusters : 0;
  if (t == 0 || 2 * t > clusters) return;
  p.tail_start = p.units - t;
  p.units += t;
}

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

/// One launch configuration of the fast kernel (what FastConfig fixes at compile time, plus the launch's choices).
/// The heuristic (sm90_fp8_fast_heuristic.cu) fills it; GO_CUDA_FAST_CFG names fields to override.
struct FastChoice {
  int bm = 128;          // bm=: BLOCK_M, 64 (one math warpgroup), 128, or 256 (two waves per math warpgroup)
  int bn = 128;          // bn=: BLOCK_N, multiple of 8 in [8, 256]
  int stages = 0;        // stages=: pipeline depth, 2..20 (0: as many as fit in 227 KB, at most 16 but with ktma=4)
  int multicast = 1;     // mc=: CTAs per cluster sharing the A tile by TMA multicast (1 or 2)
  int acc_sets = 2;      // acc=single|double|triple: accumulator sets taken in turn (1; 2: BN <= 128; 3: BN <= 64)
  bool shape = true;     // shape=: the JIT kernel has N and K as compile-time constants
  bool sfa_tma = true;   // sfa=tma|copy: SFA by TMA where its layout allows (MN-major, 16-byte aligned columns)
  int split_k = 1;       // split=: dense K split over this many CTAs per tile, promotion in a second kernel
  int ktma = 1;          // ktma=1|2|4: one TMA copy (a box this many K blocks deep) fills as many consecutive stages
  bool spread = false;   // spread=0|1: a stage's copies issued by two producer threads (A and SFA; B) instead of one
  int debug = 0;         // dbg=: profiling switches (sm90_fp8_fast_profile.cuh); the profiling build only
  int sms = 0;           // sms=: at most this many SMs for the persistent grid (0: all), so that tests/gpu/check.cpp's
                         // small shapes walk several tiles a CTA and split their last round (fast_split_tail)
};

/// The configuration a call of this shape class gets: GO_CUDA_FAST_CFG ("bn=112,stages=6,mc=2,acc=single,shape=0",
/// any subset) overrides the heuristic's fields. Returns false with *err set when the override is malformed or names
/// a configuration the kernel cannot run.
bool choose_fast_config(const FastParams& p, int sms, FastChoice* out, std::string* err);
/// The same with the override text given (nullptr: none) instead of read from GO_CUDA_FAST_CFG.
bool choose_fast_config(const FastParams& p, int sms, const char* override_text, FastChoice* out, std::string* err);

/// "bm=256 bn=128 stages=3 multicast=1 acc=single sfa=tma" plus `how` (and ktma=, spread=1, split=, dbg=).
std::string describe_fast_config(const FastChoice& c, const char* how);
/// Bytes of dynamic shared memory of a configuration (its layout plus kFastSmemAlignSlack, 1024, for the alignment).
int fast_smem_bytes(int bn, int stages, int bm);
/// The most stages that fit in 227 KB; by_box: counting those of BLOCK_M 256 whose epilogue stages one box at a time
/// (FastSmem::by_box), which the heuristic takes at 256 x 128 with multicast from 24 K blocks.
int fast_max_stages(int bn, int bm, bool by_box);

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
