// Runs DeepGEMM's `sm90_paged_mqa_logits_metadata` kernel (scheduler/sm90_paged_mqa_logits.cuh @54e2261, via -I; not
// copied) for seeded context lengths, B ∈ {1, 7, 256}, next_n ∈ {1, 2}, SMs ∈ {3, 78, 132}, as the host code of
// csrc/jit_kernels/impls/sm90_fp8_mqa_logits.hpp launches it (1 block of 32 threads, aligned_batch·4 bytes of smem).
// Output (one file): per case a header {B, next_n, sms}, the context lengths, then the (sms + 1)·2 metadata ints.
// Build (headers unpacked into the git-ignored .cache/: `git --git-dir=<DeepGEMM mirror> archive 54e2261 deep_gemm/include`,
// `git --git-dir=<CUTLASS mirror> archive HEAD include`):
//   nvcc -O3 -std=c++20 -gencode arch=compute_90a,code=sm_90a --expt-relaxed-constexpr --expt-extended-lambda \
//        -I .cache/h7_dg/cutlass_include -I .cache/h7_dg/deep_gemm/include -o /tmp/run THIS_FILE.cu -lcuda
#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <cstdio>
#include <cstdint>
#include <vector>
#include <deep_gemm/scheduler/sm90_paged_mqa_logits.cuh>

static uint64_t st = 0x9E3779B97F4A7C15ull;
static uint32_t nxt() { st ^= st << 13; st ^= st >> 7; st ^= st << 17; return (uint32_t)(st >> 11); }

template <uint32_t kAligned, uint32_t kSMs>
void one(FILE* f, uint32_t B, uint32_t next_n) {
  std::vector<uint32_t> ctx(B * next_n);
  for (uint32_t b = 0; b < B; b++) {
    uint32_t last = nxt() % 3 == 0 ? nxt() % 300 : nxt() % 9000;
    for (uint32_t j = 0; j < next_n; j++) ctx[b * next_n + j] = j + 1 == next_n ? last : (last > 0 ? last - 1 : 0);
  }
  uint32_t *dc, *dm;
  cudaMalloc(&dc, ctx.size() * 4);
  cudaMalloc(&dm, (kSMs + 1) * 8);
  cudaMemcpy(dc, ctx.data(), ctx.size() * 4, cudaMemcpyHostToDevice);
  auto k = deep_gemm::sched::sm90_paged_mqa_logits_metadata<kAligned, 256, kSMs, false>;
  k<<<1, 32, kAligned * 4>>>(B, next_n, true, dc, nullptr, dm);
  std::vector<uint32_t> meta((kSMs + 1) * 2);
  cudaMemcpy(meta.data(), dm, meta.size() * 4, cudaMemcpyDeviceToHost);
  uint32_t hdr[3] = {B, next_n, kSMs};
  fwrite(hdr, 4, 3, f);
  fwrite(ctx.data(), 4, ctx.size(), f);
  fwrite(meta.data(), 4, meta.size(), f);
  printf("B=%u next_n=%u sms=%u %s\n", B, next_n, kSMs, cudaGetErrorString(cudaGetLastError()));
  cudaFree(dc); cudaFree(dm);
}

template <uint32_t kSMs>
void sms(FILE* f) {
  for (uint32_t n = 1; n <= 2; n++) {
    one<32, kSMs>(f, 1, n);
    one<32, kSMs>(f, 7, n);
    one<256, kSMs>(f, 256, n);
  }
}

int main(int argc, char** argv) {
  char p[512];
  snprintf(p, sizeof p, "%s/h200_deepgemm_metadata.bin", argc > 1 ? argv[1] : ".");
  FILE* f = fopen(p, "wb");
  sms<3>(f);
  sms<78>(f);
  sms<132>(f);
  fclose(f);
  return 0;
}
