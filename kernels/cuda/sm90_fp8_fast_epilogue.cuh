// The epilogue of the fast SM90 FP8 GEMM (sm90_fp8_fast_kernel.cuh): bf16 RNE of a tile's accumulators, staged in
// shared memory with stmatrix and stored with TMA, or by the threads where TMA cannot store a chunk.
#pragma once
#include <cuda.h>
#include <cuda_bf16.h>

#include <cstdint>

#include "sm90_async.cuh"
#include "sm90_fp8_fast_config.cuh"
#include "sm90_fp8_fast_profile.cuh"

namespace go_sm90 {

// bf16 RNE of the accumulator pair (i, i + 1).
__device__ __forceinline__ __nv_bfloat162 bf16_pair(const float* f, int i) {
  __nv_bfloat162 v;
  v.x = __float2bfloat16_rn(f[i]);
  v.y = __float2bfloat16_rn(f[i + 1]);
  return v;
}

/// Box j of a TMA-stored chunk holds columns [j * kBox, (j + 1) * kBox), rows of kBox * 2 bytes, the 16-byte chunks of
/// each row XOR-swizzled by the row as the TMA map's swizzle mode reads them.
template <int BN>
struct FastEpiBox {
  static constexpr int kBox = fast_epi_box_cols(BN), kRowBytes = kBox * 2, kSwz = kRowBytes / 16 - 1;
};

/// bf16 RNE of the 8-column blocks [b0, b1) of one wave's accumulators into staging buffer eb in the box layout, with
/// stmatrix: an 8-column block of a warp's 16 rows is two 8 x 8 matrices (rows 0-7, 8-15), whose pairs are
/// accumulators 4b, 4b + 1 and 4b + 2, 4b + 3; x4 stores blocks b and b + 1 (one box: kBox is a multiple of 16 where
/// there is a block b + 1). Lane t gives the address of row t % 8 of matrix t / 8. kOneBox: eb holds the one box of
/// the blocks (FastSmem::by_box), else the chunk's boxes one after another.
template <int BN, bool kOneBox>
__device__ __forceinline__ void fast_stage_blocks(uint8_t* eb, const float* Fw, int tid, int b0, int b1) {
  using Box = FastEpiBox<BN>;
  constexpr int kBox = Box::kBox, kRowBytes = Box::kRowBytes, kSwz = Box::kSwz;
  const uint32_t eb_u = smem_addr(eb);
  const int lane = tid % 32, row = 16 * (tid / 32) + ((lane >> 3) & 1) * 8 + (lane & 7);
  auto addr = [&](int b) {
    const int c = 8 * b;
    const uint32_t lin = static_cast<uint32_t>(row * kRowBytes + (c % kBox) * 2);
    const uint32_t sw = kRowBytes >= 32 ? lin ^ (((lin >> 7) & kSwz) << 4) : lin;
    return eb_u + (kOneBox ? 0u : static_cast<uint32_t>((c / kBox) * 64 * kRowBytes)) + sw;
  };
  auto pair = [&](int i) {
    const __nv_bfloat162 v = bf16_pair(Fw, i);
    return *reinterpret_cast<const uint32_t*>(&v);
  };
#pragma unroll
  for (int b = b0; b + 1 < b1; b += 2)
    stmatrix_x4(addr(b + (lane >> 4)), pair(4 * b), pair(4 * b + 2), pair(4 * b + 4), pair(4 * b + 6));
  if ((b1 - b0) % 2 == 1) stmatrix_x2(addr(b1 - 1), pair(4 * b1 - 4), pair(4 * b1 - 2));
}

/// One wave's chunk (all its 8-column blocks) into staging buffer eb in the box layout (fast_stage_blocks).
template <int BN>
__device__ __forceinline__ void fast_stage_chunk(uint8_t* eb, const float* Fw, int tid) {
  fast_stage_blocks<BN, false>(eb, Fw, tid, 0, BN / 8);
}

/// Box j of one wave's chunk (columns [j * kBox, (j + 1) * kBox)) into a buffer of one box (FastSmem::by_box).
template <int BN>
__device__ __forceinline__ void fast_stage_box(uint8_t* eb, const float* Fw, int tid, int j) {
  constexpr int kPerBox = FastEpiBox<BN>::kBox / 8;
  fast_stage_blocks<BN, true>(eb, Fw, tid, j * kPerBox, (j + 1) * kPerBox);
}

/// One wave's chunk stored from the registers with M/N bounds, where TMA cannot store it and there is no staging buffer
/// of a chunk (FastSmem::by_box): each thread's bf16 pairs, rows r and r + 8 of its accumulators.
template <int BN>
__device__ __forceinline__ void fast_store_chunk_regs(const FastParams& p, const FastTile& ti, const float* Fw, int rows,
                                                      int r0, int tid, int N) {
  const int r = acc_row(tid, 0), c0 = acc_col(tid, 0);
  __nv_bfloat16* row0 = p.d + ti.z * p.d_s_batch + static_cast<int64_t>(r0 + r) * p.d_s_row + ti.n0 + c0;
  __nv_bfloat16* row1 = row0 + 8 * p.d_s_row;
#pragma unroll
  for (int i = 0; i < BN / 2; i += 2) {
    const int rr = r + ((i & 2) ? 8 : 0), c = c0 + (i >> 2) * 8;
    if (rr < rows && ti.n0 + c < N) {
      const __nv_bfloat162 v = bf16_pair(Fw, i);
      __nv_bfloat16* dst = ((i & 2) ? row1 : row0) + (i >> 2) * 8;
      dst[0] = v.x;
      if (ti.n0 + c + 1 < N) dst[1] = v.y;
    }
  }
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
/// What the epilogue costs, timed with copies that leave it out (H200, tests/gpu/run.sh's ab step, 3 runs a side, 9
/// shapes; D wrong, timing only): with no staging and no store 1.093x geomean (4096 x 32768 x 512 144.3 -> 116.1 us,
/// 4096 x 7168 x 2048 101.2 -> 91.3, contiguous 4 x 8192 x 4096 x 4096 915.1 -> 860.3, 4096 x 4096 x 7168 1.035x);
/// staged but not stored 1.053x. Its form is not what costs: each warp staging and storing its own 16 rows with no
/// warpgroup barrier timed 0.997x over 18 shapes (an unmodified copy 1.005x), and by box, two half boxes a buffer
/// stored in turn, 1.014x and then 0.988x on the six 4-stage shapes (the copy 1.002x and 0.999x)
/// (docs/performance-history.md, "Issue 26, thirty-sixth round"). Nor does its place: a tile staged under the next
/// tile's first K block (each wave's chunk between that wave's wgmma issue and wait; 3-stage 256 x 128 kernels) timed
/// 0.936x and 0.930x over 7 shapes in two calls (0.917x with that block peeled), and as much with a quarter of its
/// shared-memory writes, 0.924x ("Issue 26, thirty-seventh round").
template <class C>
__device__ __forceinline__ void fast_epilogue(const CUtensorMap& map_d, const FastParams& p, const FastRing<C>& ring,
                                              const FastTile& ti, float* F, int w, int tid,
                                              uint32_t zero_chunks, bool& prev_chunk_tma, int N) {
  constexpr int BN = C::BN, NA = BN / 2, kWaves = C::kWaves;
  constexpr FastSmem L = FastRing<C>::L;
  const bool w1 = C::kMathWGs == 2 && w == 1;
  GO_FAST_TRACE_AT(128, 26, clock64());
  // A chunk written as zeros (rare: masked rows, contiguous rows of group -1) gets its accumulators zeroed here.
  // ptxas if-converts this into a select per element, as it did the select inside the bf16 conversion that this
  // replaced: 128 FSEL a math warp and tile at BLOCK_M 256, executed on every tile (Nsight Compute's SASS counts at
  // 4096 x 32768 x 512). The two forms timed level (geomean 1.014x over 13 shapes, within the calls' noise).
#pragma unroll
  for (int wave = 0; wave < kWaves; ++wave) {
    if ((zero_chunks >> (2 * wave + w)) & 1) {
#pragma unroll
      for (int i = 0; i < NA; ++i) F[wave * NA + i] = 0.0f;
    }
  }
  // Staging by box (FastSmem::by_box): each wave's boxes staged in this warpgroup's one-box buffer and stored by TMA in
  // turn, each once the store before it has read the buffer; a chunk TMA cannot store goes from the registers.
  if constexpr (L.by_box) {
    using Box = FastEpiBox<BN>;
    uint8_t* eb = reinterpret_cast<uint8_t*>(ring.epi) + w * L.epi_buf;
#pragma unroll
    for (int wave = 0; wave < kWaves; ++wave) {
      const int rows = w1 ? ti.rows_left[2 * wave + 1] : ti.rows_left[2 * wave];
      const int r0 = ti.m0 + 64 * (2 * wave + w);
      const float* Fw = F + wave * NA;
      if (!fast_chunk_tma(p, rows, r0, ti.n0, N)) {
        fast_store_chunk_regs<BN>(p, ti, Fw, rows, r0, tid, N);
        continue;
      }
#pragma unroll
      for (int j = 0; j < BN / Box::kBox; ++j) {
        if (tid == 0) bulk_wait_read<0>();
        named_sync(1 + w, 128);
        fast_stage_box<BN>(eb, Fw, tid, j);
        fence_proxy_async();
        named_sync(1 + w, 128);
        if (tid == 0) {
          if (ti.n0 + j * Box::kBox < N) tma_store_3d(&map_d, eb, ti.n0 + j * Box::kBox, r0, ti.z);
          bulk_commit();
        }
      }
    }
    prev_chunk_tma = false;
    return;
  }
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
      GO_FAST_TRACE_AT(128, 27, clock64());
      fast_stage_chunk<BN>(eb0, F, tid);
      fast_stage_chunk<BN>(eb1, F + NA, tid);
      GO_FAST_TRACE_AT(128, 28, clock64());
      fence_proxy_async();
      named_sync(1 + w, 128);
      GO_FAST_TRACE_AT(128, 29, clock64());
      if (tid == 0) {
        fast_store_chunk<BN>(map_d, eb0, ti.n0, r00, ti.z, N);
        fast_store_chunk<BN>(map_d, eb1, ti.n0, r01, ti.z, N);
        bulk_commit();
      }
      GO_FAST_TRACE_AT(128, 30, clock64());
      prev_chunk_tma = false;
      return;
    }
  }
#pragma unroll
  for (int wave = 0; wave < kWaves; ++wave) {
    const int rows = w1 ? ti.rows_left[2 * wave + 1] : ti.rows_left[2 * wave];  // unclamped: see fast_tile
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
    GO_FAST_TRACE_AT(128, 27, clock64());
    const bool tma = fast_chunk_tma(p, rows, r0, ti.n0, N);
    prev_chunk_tma = tma;
    if (tma) {
      uint8_t* eb = reinterpret_cast<uint8_t*>(epi);
      fast_stage_chunk<BN>(eb, Fw, tid);
      GO_FAST_TRACE_AT(128, 28, clock64());
      fence_proxy_async();
      named_sync(1 + w, 128);
      GO_FAST_TRACE_AT(128, 29, clock64());
      if (tid == 0) {
        fast_store_chunk<BN>(map_d, eb, ti.n0, r0, ti.z, N);
        bulk_commit();
      }
      GO_FAST_TRACE_AT(128, 30, clock64());
    } else {
      __nv_bfloat16* dbase = p.d + ti.z * p.d_s_batch + static_cast<int64_t>(r0) * p.d_s_row + ti.n0;
#pragma unroll
      for (int i = 0; i < NA; i += 2) {
        const int r = acc_row(tid, i), c = acc_col(tid, i);
        *reinterpret_cast<__nv_bfloat162*>(epi + r * L.pitch + c) = bf16_pair(Fw, i);
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

}  // namespace go_sm90
