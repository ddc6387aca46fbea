// Runs DeepGEMM's own SM90 `sm90_fp8_mqa_logits` kernel (headers of deepseek-ai/DeepGEMM @54e2261 and CUTLASS, passed
// with -I; nothing copied here) on seeded random inputs and writes inputs and logits to one binary file per config, so
// the oracle can be compared bit for bit (tests/indexer/mqa_logits_h200_test.ts reads a slice of it).
// The host side restates what csrc/jit_kernels/impls/sm90_fp8_mqa_logits.hpp does: block_q = 128 / H, block_kv = 256,
// 3 Q and 3 KV stages, 128 TMA + 512 math threads, grid = #SMs, TMA maps as make_tma_2d_desc builds them.
// Build (headers unpacked into the git-ignored .cache/: `git --git-dir=<DeepGEMM mirror> archive 54e2261 deep_gemm/include`,
// `git --git-dir=<CUTLASS mirror> archive HEAD include`):
//   nvcc -O3 -std=c++20 -gencode arch=compute_90a,code=sm_90a --expt-relaxed-constexpr --expt-extended-lambda \
//        -I .cache/h7_dg/cutlass_include -I .cache/h7_dg/deep_gemm/include -o /tmp/run THIS_FILE.cu -lcuda
#include <cuda.h>
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <vector>
#include <deep_gemm/impls/sm90_fp8_mqa_logits.cuh>

#define CK(x) do { auto e = (x); if (e != cudaSuccess) { printf("CUDA %s at %d\n", cudaGetErrorString(e), __LINE__); exit(1); } } while (0)
#define DK(x) do { auto e = (x); if (e != CUDA_SUCCESS) { printf("driver %d at %d\n", (int)e, __LINE__); exit(1); } } while (0)

static uint64_t st = 0x1234567887654321ull;
static uint32_t nxt() { st ^= st << 13; st ^= st >> 7; st ^= st << 17; return (uint32_t)(st >> 13); }

static CUtensorMap tma2d(void* p, CUtensorMapDataType dt, int elem, uint64_t gi, uint64_t go, uint32_t si, uint32_t so,
                         uint64_t outer_stride, int swizzle) {
  CUtensorMap m;
  if (swizzle != 0) si = swizzle / elem;
  cuuint64_t gd[2] = {gi, go}, gs[1] = {outer_stride * elem};
  cuuint32_t sd[2] = {si, so}, es[2] = {1, 1};
  CUtensorMapSwizzle sw = swizzle == 128 ? CU_TENSOR_MAP_SWIZZLE_128B : swizzle == 64 ? CU_TENSOR_MAP_SWIZZLE_64B
                        : swizzle == 32 ? CU_TENSOR_MAP_SWIZZLE_32B : CU_TENSOR_MAP_SWIZZLE_NONE;
  DK(cuTensorMapEncodeTiled(&m, dt, 2, p, gd, gs, sd, es, CU_TENSOR_MAP_INTERLEAVE_NONE, sw,
                            CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
  return m;
}

template <uint32_t H, uint32_t D>
void run(const char* dir, uint32_t S, uint32_t Skv, int num_sms) {
  constexpr uint32_t BQ = 128 / H, BKV = 256, kQS = 3, kKS = 3, kTMA = 128, kMath = 512, kSMs = 132;
  std::vector<uint8_t> q((size_t)S * H * D), kv((size_t)Skv * D);
  std::vector<float> sf(Skv), w((size_t)S * H);
  std::vector<int32_t> ks(S), ke(S);
  for (auto& c : q) { c = nxt() & 0xFF; if ((c & 0x7F) == 0x7F) c ^= 1; }
  for (auto& c : kv) { c = nxt() & 0xFF; if ((c & 0x7F) == 0x7F) c ^= 1; }
  for (auto& x : sf) { uint32_t b = ((127 - 8 + nxt() % 4) << 23) | (nxt() & 0x7FFFFF); memcpy(&x, &b, 4); }
  for (auto& x : w) { uint32_t b = ((nxt() & 1) << 31) | ((127 - 3 + nxt() % 4) << 23) | (nxt() & 0x7FFFFF); memcpy(&x, &b, 4); }
  for (uint32_t i = 0; i < S; i++) { ks[i] = nxt() % (Skv / 2); ke[i] = ks[i] + nxt() % (Skv / 2 + 64); }
  const uint32_t stride = ((Skv + 256 + 255) / 256) * 256, aS = ((S + BQ - 1) / BQ) * BQ;
  uint8_t *dq, *dkv; float *dsf, *dw, *dl; int32_t *dks, *dke;
  CK(cudaMalloc(&dq, q.size())); CK(cudaMalloc(&dkv, kv.size())); CK(cudaMalloc(&dsf, ((Skv + 3) / 4 * 4) * 4));
  CK(cudaMalloc(&dw, w.size() * 4)); CK(cudaMalloc(&dl, (size_t)aS * stride * 4));
  CK(cudaMalloc(&dks, S * 4)); CK(cudaMalloc(&dke, S * 4));
  CK(cudaMemcpy(dq, q.data(), q.size(), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dkv, kv.data(), kv.size(), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dsf, sf.data(), Skv * 4, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dw, w.data(), w.size() * 4, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dks, ks.data(), S * 4, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dke, ke.data(), S * 4, cudaMemcpyHostToDevice));
  CK(cudaMemset(dl, 0xFF, (size_t)aS * stride * 4));
  auto mq = tma2d(dq, CU_TENSOR_MAP_DATA_TYPE_UINT8, 1, D, (uint64_t)S * H, D, BQ * H, D, D);
  auto mkv = tma2d(dkv, CU_TENSOR_MAP_DATA_TYPE_UINT8, 1, D, Skv, D, BKV, D, D);
  auto msf = tma2d(dsf, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 4, (Skv + 3) / 4 * 4, 1, BKV, 1, 0, 0);
  auto mw = tma2d(dw, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 4, H, S, H, BQ, H, 0);
  int smem = kQS * BQ * H * D + kKS * BKV * D + kQS * BQ * H * 4 + kKS * BKV * 4 + (kQS * 2 + kKS * 2 + (kMath / 128) * 2) * 8 + 4;
  auto kern = deep_gemm::sm90_fp8_mqa_logits<H, D, false, BQ, BKV, kQS, kKS, kSMs, kTMA, kMath, float>;
  CK(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  kern<<<num_sms, kTMA + kMath, smem>>>(S, Skv, 0, stride, (uint32_t*)dks, (uint32_t*)dke, dl, mq, mkv, msf, mw);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  std::vector<float> logits((size_t)S * stride);
  CK(cudaMemcpy(logits.data(), dl, logits.size() * 4, cudaMemcpyDeviceToHost));
  char p[512];
  snprintf(p, sizeof p, "%s/mqa_h%u_d%u.bin", dir, H, D);
  FILE* f = fopen(p, "wb");
  uint32_t hdr[5] = {S, Skv, H, D, stride};
  fwrite(hdr, 4, 5, f);
  fwrite(q.data(), 1, q.size(), f); fwrite(kv.data(), 1, kv.size(), f);
  fwrite(sf.data(), 4, Skv, f); fwrite(w.data(), 4, w.size(), f);
  fwrite(ks.data(), 4, S, f); fwrite(ke.data(), 4, S, f);
  fwrite(logits.data(), 4, logits.size(), f);
  fclose(f);
  printf("H=%u D=%u S=%u Skv=%u smem=%d ok\n", H, D, S, Skv, smem);
}

int main(int argc, char** argv) {
  int sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  if (sms != 132) printf("warning: %d SMs; the kernel is instantiated for 132\n", sms);
  run<64, 128>(argv[1], 64, 1024, sms);
  run<32, 64>(argv[1], 64, 1000, sms);
  return 0;
}
