// Runs DeepGEMM's own `sm90_tf32_hc_prenorm_gemm_impl` kernel (headers of deepseek-ai/DeepGEMM @54e2261 and CUTLASS
// via -I; nothing copied) on seeded inputs, to pin the TMA fp32 → TF32 conversion of B and the sqr_sum order.
// Host side restated from csrc/jit_kernels/impls/sm90_tf32_hc_prenorm_gemm.hpp: BLOCK_M = BLOCK_K = 64,
// BLOCK_N = align(n, 16), 128 math + 128 TMA threads, A bf16 / B TFLOAT32 / D fp32 maps with 128B swizzle,
// num_splits = 1, 12 stages, the full 232448-byte shared memory, grid = ceil(m / 64).
// Output file: {M, N, K}, A (bf16 bits), B (fp32), D (fp32), sqr_sum (fp32).
// Build (headers unpacked into the git-ignored .cache/: `git --git-dir=<DeepGEMM mirror> archive 54e2261 deep_gemm/include`,
// `git --git-dir=<CUTLASS mirror> archive HEAD include`):
//   nvcc -O3 -std=c++20 -gencode arch=compute_90a,code=sm_90a --expt-relaxed-constexpr --expt-extended-lambda \
//        -I .cache/h7_dg/cutlass_include -I .cache/h7_dg/deep_gemm/include -o /tmp/run THIS_FILE.cu -lcuda
#include <cuda.h>
#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <vector>
#include <deep_gemm/impls/sm90_tf32_hc_prenorm_gemm.cuh>

#define CK(x) do { auto e = (x); if (e != cudaSuccess) { printf("CUDA %s at %d\n", cudaGetErrorString(e), __LINE__); exit(1); } } while (0)
#define DK(x) do { auto e = (x); if (e != CUDA_SUCCESS) { printf("driver %d at %d\n", (int)e, __LINE__); exit(1); } } while (0)

static uint64_t st = 0x5DEECE66DULL;
static uint32_t nxt() { st ^= st << 13; st ^= st >> 7; st ^= st << 17; return (uint32_t)(st >> 9); }

static CUtensorMap tma2d(void* p, CUtensorMapDataType dt, int elem, uint64_t gi, uint64_t go, uint32_t si, uint32_t so,
                         uint64_t outer_stride, int swizzle) {
  CUtensorMap m;
  if (swizzle != 0) si = swizzle / elem;
  cuuint64_t gd[2] = {gi, go}, gs[1] = {outer_stride * elem};
  cuuint32_t sd[2] = {si, so}, es[2] = {1, 1};
  DK(cuTensorMapEncodeTiled(&m, dt, 2, p, gd, gs, sd, es, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                            CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
  return m;
}

int main(int argc, char** argv) {
  constexpr uint32_t M = 64, N = 32, K = 256, BM = 64, BN = 32, BK = 64, kStages = 12;
  std::vector<uint16_t> a(M * K);
  std::vector<float> b(N * K);
  for (auto& x : a) x = (uint16_t)(((nxt() & 1) << 15) | ((127 - 4 + nxt() % 8) << 7) | (nxt() & 0x7F));
  // Every fourth B value is an exact TF32 tie (low 13 bits = 0x1000), half of them above an odd TF32 value.
  for (size_t i = 0; i < b.size(); i++) {
    uint32_t u = ((nxt() & 1) << 31) | ((127 - 6 + nxt() % 6) << 23) | (nxt() & 0x7FFFFF);
    if (i % 4 == 0) u = (u & ~0x1FFFu) | 0x1000u;
    memcpy(&b[i], &u, 4);
  }
  void *da, *db; float *dd, *ds;
  CK(cudaMalloc(&da, a.size() * 2)); CK(cudaMalloc(&db, b.size() * 4));
  CK(cudaMalloc(&dd, M * N * 4)); CK(cudaMalloc(&ds, M * 4));
  CK(cudaMemcpy(da, a.data(), a.size() * 2, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(db, b.data(), b.size() * 4, cudaMemcpyHostToDevice));
  auto ma = tma2d(da, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, K, M, BK, BM, K, 128);
  auto mb = tma2d(db, CU_TENSOR_MAP_DATA_TYPE_TFLOAT32, 4, K, N, BK, BN, K, 128);
  auto md = tma2d(dd, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 4, N, M, BN, BM, N, 128);
  auto kern = deep_gemm::sm90_tf32_hc_prenorm_gemm_impl<N, K, BM, BN, BK, 1, 128, kStages, 128, 128>;
  const int smem = 232448;
  CK(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  kern<<<(M + BM - 1) / BM, 256, smem>>>(M, ma, mb, md, ds);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  std::vector<float> d(M * N), s(M);
  CK(cudaMemcpy(d.data(), dd, d.size() * 4, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(s.data(), ds, s.size() * 4, cudaMemcpyDeviceToHost));
  char p[512];
  snprintf(p, sizeof p, "%s/h200_deepgemm_hc.bin", argc > 1 ? argv[1] : ".");
  FILE* f = fopen(p, "wb");
  uint32_t hdr[3] = {M, N, K};
  fwrite(hdr, 4, 3, f); fwrite(a.data(), 2, a.size(), f); fwrite(b.data(), 4, b.size(), f);
  fwrite(d.data(), 4, d.size(), f); fwrite(s.data(), 4, s.size(), f);
  fclose(f);
  printf("hc ok\n");
  return 0;
}
