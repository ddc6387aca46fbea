// Device helpers shared by the SM90 kernels: shared-memory matrix descriptors, wgmma fences, and the
// cooperative loader that gathers any strided 2-D view into a K-major, 128-byte-swizzled shared tile.
//
// Shared tile layout (what the wgmma descriptors below describe): a tile is R rows of 128 bytes of K
// (128 fp8, 64 bf16 or 32 fp32 elements); the 16-byte chunk c of row r lives at r*128 + ((c ^ (r & 7)) << 4).
// The tile base is 1024-byte aligned, so this equals the hardware's 128B swizzle (address bits 4..6 xor 7..9).
// Descriptor (PTX ISA, "Matrix Descriptor Format" of wgmma): start address >> 4 in bits 0..13, leading byte
// offset >> 4 in 16..29 (unused by swizzled K-major layouts), stride byte offset >> 4 in 32..45 (1024: the
// distance between 8-row groups), swizzle mode in 62..63 (1 = 128B).
#pragma once
#include <cuda_bf16.h>
#include <cstdint>

#include "sm90_wgmma.cuh"

namespace go_sm90 {

constexpr int kThreads = 128;  // one warpgroup per CTA

__device__ __forceinline__ uint32_t smem_addr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// The descriptor in two words: the low one (start address, leading byte offset) and the constant high one (stride
// byte offset, swizzle mode). Shared addresses stay below 2^18 bytes, so a tile at byte offset o from a base has the
// low word desc_lo_sw128(base) + o / 16: loops can add compile-time offsets to one base word (the fast FP8 kernel).
__device__ __forceinline__ uint32_t desc_lo_sw128(uint32_t saddr) { return ((saddr & 0x3FFFF) >> 4) | (1u << 16); }
__device__ __forceinline__ uint64_t desc_from_lo(uint32_t lo) {
  return static_cast<uint64_t>(lo) | (static_cast<uint64_t>((1024 >> 4) | (1u << 30)) << 32);
}
__device__ __forceinline__ uint64_t desc_kmajor_sw128(uint32_t saddr) { return desc_from_lo(desc_lo_sw128(saddr)); }

__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_wait0() { asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_wait1() { asm volatile("wgmma.wait_group.sync.aligned 1;\n" ::: "memory"); }
/// Waits until at most N wgmma groups of this warpgroup are pending (N a constant of the instruction).
template <int N>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
// Barrier `id` over `threads` threads (one warpgroup: 128), not the whole CTA.
__device__ __forceinline__ void named_sync(int id, int threads) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}
// Generic-proxy stores to shared memory must be made visible to the async proxy (wgmma reads) before the barrier.
__device__ __forceinline__ void fence_proxy_async() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }

// Programmatic dependent launch (PTX ISA, "griddepcontrol", sm_90; CUDA Programming Guide, "Programmatic Dependent
// Launch and Synchronization"). A grid launched with programmatic stream serialization may be scheduled while the
// kernel before it on the stream still runs. griddepcontrol.wait blocks the calling thread until every prerequisite
// grid has completed and its memory operations are visible; with none in flight (a plain launch) it returns at once.
// So in a kernel that may be launched that way every global-memory access, read or write, follows a wait: in its own
// thread, or in a thread it has synchronised with since (the fast FP8 kernel's dense shape-class kernels wait only in
// their loading threads: fast_late_wait, sm90_fp8_fast_producer.cuh). A prefetch into L2 may come before: it returns
// nothing to the thread, and L2 is where the grid before writes (fast_prefetch_b). launch_dependents lets the next such
// grid be scheduled before this one ends (its CTAs are placed as SMs free up); without it, that happens as this grid's
// CTAs exit.
__device__ __forceinline__ void grid_dependency_wait() { asm volatile("griddepcontrol.wait;\n" ::: "memory"); }
__device__ __forceinline__ void grid_launch_dependents() {
  asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
}

template <int N>
__device__ __forceinline__ void fence_operand(float (&d)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

// 4-byte loads and stores at shared-window addresses (a generic pointer costs an S2UR of the CTA's window and its
// arithmetic wherever ptxas rematerialises the conversion). Volatile: a load stays after the barrier wait before it.
__device__ __forceinline__ float ld_shared_f32(uint32_t addr) {
  float v;
  asm volatile("ld.shared.f32 %0, [%1];\n" : "=f"(v) : "r"(addr));
  return v;
}
__device__ __forceinline__ uint32_t ld_shared_u32(uint32_t addr) {
  uint32_t v;
  asm volatile("ld.shared.u32 %0, [%1];\n" : "=r"(v) : "r"(addr));
  return v;
}
__device__ __forceinline__ void st_shared_u32(uint32_t addr, uint32_t v) {
  asm volatile("st.shared.u32 [%0], %1;\n" ::"r"(addr), "r"(v) : "memory");
}

// stmatrix (PTX ISA, "stmatrix", sm_90): the warp stores 8 x 8 matrices of 16-bit elements to shared memory. Lane t
// gives the address of row t % 8 of matrix t / 8 (16 bytes, 16-byte aligned); register i of lane t holds the pair at
// row t / 4, columns 2 (t % 4) and 2 (t % 4) + 1 of matrix i. x2: matrices 0 and 1 (lanes 0-15 give the addresses).
__device__ __forceinline__ void stmatrix_x4(uint32_t addr, uint32_t r0, uint32_t r1, uint32_t r2, uint32_t r3) {
  asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};\n" ::"r"(addr), "r"(r0), "r"(r1),
               "r"(r2), "r"(r3)
               : "memory");
}
__device__ __forceinline__ void stmatrix_x2(uint32_t addr, uint32_t r0, uint32_t r1) {
  asm volatile("stmatrix.sync.aligned.m8n8.x2.shared.b16 [%0], {%1, %2};\n" ::"r"(addr), "r"(r0), "r"(r1) : "memory");
}

// Accumulator fragment of wgmma m64nN (f32): register i of thread t holds (row, col) below.
__device__ __forceinline__ int acc_row(int t, int i) { return (t >> 5) * 16 + ((i >> 1) & 1) * 8 + ((t & 31) >> 2); }
__device__ __forceinline__ int acc_col(int t, int i) { return (i >> 2) * 8 + (t & 3) * 2 + (i & 1); }

// A strided 2-D view (element strides), already offset to the tile's first row and the K origin.
struct View2 {
  const uint8_t* p;  // byte pointer of element (0, 0)
  int64_t s_row;     // element stride between rows (M or N direction)
  int64_t s_k;       // element stride along K
  int rows;          // valid rows counted from row 0 (may be <= 0)
  int64_t k;         // valid K elements counted from k = 0
};

__device__ __forceinline__ uint8_t* tile_chunk(uint8_t* tile, int r, int c) {
  return tile + r * 128 + ((c ^ (r & 7)) << 4);
}

// Gathers rows [0, nrows) x K [k0, k0 + 128/ES) of `v` (element size ES bytes) into a swizzled tile; zero outside.
template <int ES>
__device__ __forceinline__ void load_tile(uint8_t* tile, const View2& v, int nrows, int64_t k0) {
  constexpr int EPC = 16 / ES;  // elements per 16-byte chunk
  for (int idx = threadIdx.x; idx < nrows * 8; idx += kThreads) {
    const int r = idx >> 3, c = idx & 7;
    const int64_t kc = k0 + static_cast<int64_t>(c) * EPC;
    uint4 val = make_uint4(0, 0, 0, 0);
    if (r < v.rows && kc < v.k) {
      const uint8_t* src = v.p + (static_cast<int64_t>(r) * v.s_row + kc * v.s_k) * ES;
      if (v.s_k == 1 && kc + EPC <= v.k && (reinterpret_cast<uintptr_t>(src) & 15) == 0) {
        val = *reinterpret_cast<const uint4*>(src);
      } else {
        uint32_t w[4] = {0, 0, 0, 0};
#pragma unroll
        for (int e = 0; e < EPC; ++e) {
          if (kc + e < v.k) {
            const uint8_t* s = v.p + (static_cast<int64_t>(r) * v.s_row + (kc + e) * v.s_k) * ES;
#pragma unroll
            for (int b = 0; b < ES; ++b) w[(e * ES + b) >> 2] |= static_cast<uint32_t>(s[b]) << (8 * ((e * ES + b) & 3));
          }
        }
        val = make_uint4(w[0], w[1], w[2], w[3]);
      }
    }
    *reinterpret_cast<uint4*>(tile_chunk(tile, r, c)) = val;
  }
}

// Gathers bf16 rows [0, nrows) x K [k0, k0 + 32) and widens them (exactly) to fp32 in a swizzled tile.
__device__ __forceinline__ void load_tile_bf16_as_f32(uint8_t* tile, const View2& v, int nrows, int64_t k0) {
  for (int idx = threadIdx.x; idx < nrows * 8; idx += kThreads) {
    const int r = idx >> 3, c = idx & 7;
    float f[4];
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int64_t k = k0 + c * 4 + e;
      uint32_t bits = 0;
      if (r < v.rows && k < v.k) {
        const uint8_t* s = v.p + (static_cast<int64_t>(r) * v.s_row + k * v.s_k) * 2;
        bits = static_cast<uint32_t>(s[0]) | (static_cast<uint32_t>(s[1]) << 8);
      }
      f[e] = __uint_as_float(bits << 16);
    }
    *reinterpret_cast<float4*>(tile_chunk(tile, r, c)) = make_float4(f[0], f[1], f[2], f[3]);
  }
}

__device__ __forceinline__ uint8_t* align1024(uint8_t* p) {
  const uint32_t a = smem_addr(p);
  return p + ((1024 - (a & 1023)) & 1023);
}

}  // namespace go_sm90
