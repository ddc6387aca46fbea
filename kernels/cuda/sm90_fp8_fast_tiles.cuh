// The tile scheduler of the fast SM90 FP8 GEMM (sm90_fp8_fast_kernel.cuh): which tile, group, K range and rows a unit
// of the persistent grid covers. Host-callable, so tests/kernels/fast_tiles_check.cu replays it without a GPU.
#pragma once
#include <cuda_runtime.h>

#include "sm90_fast.h"

namespace go_sm90 {

constexpr int kFBM = 128, kFBK = 128;  // kFBM: rows of one wave (two math warpgroups of 64); kFBK: K per block

/// Where one CTA's tile lies. A cluster walks units of (batch, M block, group of kMulticast N blocks); CTA `rank`
/// takes N block group * kMulticast + rank. A tile whose N block lies past N still runs (its A half feeds the peer)
/// but stores nothing. Units from p.tail_start on are 128-row halves of 256-row tiles (fast_split_tail): m0 is the
/// half's first row, and only its two chunks have rows.
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

/// The call's FastMode: the kernel's where it was specialised for one (C::kMode), else the parameters'. With the mode
/// compiled in a dense kernel carries none of the grouped modes' code (64 x 16 ktma=4: 2752 -> 1968 instructions;
/// 256 x 128 mc=2: 5608 -> 4744), and its prologue none of their branches. H200, ab step, same call, 3 runs a side:
/// dense M in {64, 128} 1.030x geomean over 14 shapes (64 x 32768 x 512 8.9 -> 8.4 us), dense M = 4096 0.995-1.107x
/// over 5 (4096 x 32768 x 512 146.0 -> 131.8 us), grouped 0.987-1.038x over 5 (docs/performance-history.md, "Issue 26,
/// twenty-fifth round").
template <class C>
__host__ __device__ __forceinline__ int fast_mode(const FastParams& p) {
  return C::kMode >= 0 ? C::kMode : p.mode;
}

/// Whether SFA comes by TMA: the kernel's where it was specialised (C::kSfaTma), else the parameters'.
template <class C>
__host__ __device__ __forceinline__ bool fast_sfa_tma(const FastParams& p) {
  return C::kSfaTma >= 0 ? C::kSfaTma != 0 : p.sfa_tma != 0;
}

/// kZero = false leaves zero[] false (no load of grouped_layout per chunk): the math warpgroups take the zero chunks
/// from the SFB loader, which computes them a window ahead (sm90_fp8_fast_kernel.cuh).
template <class C, bool kZero = true>
__host__ __device__ __forceinline__ FastTile fast_tile(const FastParams& p, int u, int rank, int N) {
  FastTile ti;
  ti.valid = true;
  ti.compute = true;
  ti.z = 0;
  ti.g = 0;
  // Every division below is by a divisor fast_fill_blocks prepared (FastDiv, one multiply-high): the math warps, the
  // producer warps that issue and the SFB loader walk each tile. Against integer division, same call, two runs each
  // (13 shapes): geomean 1.012x; contiguous 4 x 8192 x 4096 x 2048 520.5 -> 497.4 us. The divisors are the plane
  // (M blocks x N groups of kMulticast N blocks) and the run (8 M blocks x N groups).
  const int plane = static_cast<int>(p.walk_plane.d);
  const int nkb = ((C::kK ? C::kK : p.K) + kFBK - 1) / kFBK;  // a constant in shape-specialised kernels
  ti.kb0 = 0;
  ti.kb1 = nkb;
  // The last round split in halves (fast_split_tail): this unit is rows 128 * half .. + 127 of the tile of unit u.
  int half = -1;
  if constexpr (C::BM == 256) {
    if (u >= p.tail_start) {
      const int t = (p.units - p.tail_start) / 2, v = u - p.tail_start;
      half = v >= t ? 1 : 0;
      u = p.tail_start + v - half * t;
    }
  }
  if (fast_mode<C>(p) == kFastMasked) {
    ti.z = static_cast<int>(p.walk_plane.quotient(static_cast<uint32_t>(u)));
    u -= ti.z * plane;
  } else if (C::kSplitK && p.split_k > 1) {  // dense only: the split index is the outermost coordinate
    const int ks = static_cast<int>(p.walk_plane.quotient(static_cast<uint32_t>(u)));
    u -= ks * plane;
    ti.kb0 = ks * nkb / p.split_k;
    ti.kb1 = (ks + 1) * nkb / p.split_k;
  }
  // Grouped rasterisation: runs of 8 M blocks, N groups within a run, so co-resident tiles share A and B panels.
  const int run = static_cast<int>(p.walk_run.quotient(static_cast<uint32_t>(u))), first_m = run * 8;
  const int gm = min(8, p.m_blocks - first_m);  // 8 but in a last, shorter run (p.walk_last's divisor)
  const int in = u - run * static_cast<int>(p.walk_run.d);
  const int ng = gm == 8 ? in >> 3 : static_cast<int>(p.walk_last.quotient(static_cast<uint32_t>(in)));
  const int mb = first_m + in - ng * gm;
  const int tile_m0 = mb * C::BM;
  ti.m0 = tile_m0 + (half > 0 ? kFBM : 0);
  ti.n0 = (ng * C::kMulticast + rank) * C::BN;
  int rows_end = p.M;  // rows below this are stored
  switch (fast_mode<C>(p)) {
    case kFastNormal:
      break;
    case kFastClassic: {
      const int first = p.gl[(tile_m0 / p.mk_align) * p.mk_align];  // a half: its tile's group
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
  ti.a_row = (fast_mode<C>(p) == kFastMasked ? ti.z * p.M : 0) + ti.m0;
  ti.b_row = ti.g * N + ti.n0;
  ti.sfa_rows = p.M - ti.m0;
  // Unclamped on purpose: ptxas (CUDA 13.0) fused the TMA epilogue's test of a clamped count,
  // min(max(rows_end - r0, 0), 64) == 64, into a VIMNMX.RELU whose predicate branched the wrong way, so chunks
  // that end inside a psum group at BLOCK_M 64 were stored whole (tests/gpu/check.cpp, rows 100-127 of
  // psum G4 m=[100,0,1,257]; the SASS of the JIT kernel shows the fused compare). Every slot is set.
  // A half has the tile's first two chunks' slots (its second wave idles: fast_idle_waves).
  const int chunks = half >= 0 ? 2 : C::BM / 64;
  for (int w = 0; w < 4; ++w) {
    const int r0 = ti.m0 + 64 * w;
    ti.rows_left[w] = w < chunks ? rows_end - r0 : 0;
    ti.zero[w] = kZero && w < chunks && ((fast_mode<C>(p) == kFastClassic && r0 < p.M && p.gl[r0] < 0) ||
                                (fast_mode<C>(p) == kFastMasked && r0 >= p.masked_m[ti.z]));
  }
  // A half with no rows to store (past its group's end or M) has nothing to do.
  if (half > 0 && ti.rows_left[0] <= 0) ti.valid = false;
  return ti;
}

}  // namespace go_sm90
