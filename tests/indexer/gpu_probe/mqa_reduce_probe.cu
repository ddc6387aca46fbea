// Probe for the head-reduction order of DeepGEMM's SM90 MQA logits epilogue (deepgemm-ops.md §8.1).
// Written for gemm-oracle (not copied): it reproduces only the *arithmetic shape* of the epilogue of
// deep_gemm/include/deep_gemm/impls/sm90_fp8_mqa_logits.cuh @54e2261 — per lane: relu(acc)·w products, four
// running sums over head groups, (sum0+sum1)·sf, two xor-shuffle rounds (offset 1 then 2), then a store that all
// four lanes of a quad issue to the same address. Inputs are arbitrary fp32 "accumulators"; outputs are written
// per lane and through the racing store, so the host can tell (a) whether the compiler fused the scale multiply
// into the first shuffle add (LLVM NVPTX aggressive FMA fusion) and (b) which lane's store wins.
#include <cstdio>
#include <cstdint>
#include <vector>
#include <cstring>
#include <cmath>

template <int H>
__global__ void reduce_probe(const float* acc, const float* w, const float* sf, float* lane_out, float* raced) {
  const int warp = blockIdx.x, lane = threadIdx.x;
  const float* a = acc + (size_t)warp * 32 * (H / 2) + lane * (H / 2);
  float wt[H / 4];
#pragma unroll
  for (int j = 0; j < H / 4; ++j) wt[j] = w[warp * H + (j / 2) * 8 + (j & 1) + (lane % 4) * 2];
  const float s0 = sf[warp * 16 + lane / 4], s1 = sf[warp * 16 + lane / 4 + 8];
  auto tr = [&](int j) { return fmaxf(a[j], 0) * wt[(j / 4) * 2 + (j & 1)]; };
  float sum[4] = {tr(0), tr(1), tr(2), tr(3)};
#pragma unroll
  for (int j = 1; j < H / 8; ++j)
#pragma unroll
    for (int k = 0; k < 4; ++k) sum[k] += tr(j * 4 + k);
  float v0 = (sum[0] + sum[1]) * s0;
  float v1 = (sum[2] + sum[3]) * s1;
#pragma unroll
  for (int j = 0; j < 2; ++j) {
    v0 += __shfl_xor_sync(0xffffffffu, v0, 1 << j);
    v1 += __shfl_xor_sync(0xffffffffu, v1, 1 << j);
  }
  lane_out[(warp * 32 + lane) * 2 + 0] = v0;
  lane_out[(warp * 32 + lane) * 2 + 1] = v1;
  raced[warp * 16 + lane / 4] = v0;
  raced[warp * 16 + lane / 4 + 8] = v1;
}

static uint64_t st = 0x9E3779B97F4A7C15ull;
static uint32_t nxt() { st ^= st << 13; st ^= st >> 7; st ^= st << 17; return (uint32_t)(st >> 11); }
static float rnd(int lo, int hi) {  // sign, exponent in [lo,hi], 23 random mantissa bits
  uint32_t e = 127 + lo + nxt() % (hi - lo + 1), m = nxt() & 0x7FFFFF, s = nxt() & 1;
  uint32_t b = (s << 31) | (e << 23) | m; float f; memcpy(&f, &b, 4); return f;
}

template <int H>
void run(int warps, const char* dir) {
  std::vector<float> acc((size_t)warps * 32 * H / 2), w((size_t)warps * H), sf(warps * 16);
  for (auto& x : acc) x = rnd(-6, 6);
  for (auto& x : w) x = rnd(-4, 2);
  for (auto& x : sf) x = fabsf(rnd(-10, -2));
  std::vector<float> lane_out(warps * 64), raced(warps * 16);
  float *dA, *dW, *dS, *dL, *dR;
  cudaMalloc(&dA, acc.size() * 4); cudaMalloc(&dW, w.size() * 4); cudaMalloc(&dS, sf.size() * 4);
  cudaMalloc(&dL, lane_out.size() * 4); cudaMalloc(&dR, raced.size() * 4);
  cudaMemcpy(dA, acc.data(), acc.size() * 4, cudaMemcpyHostToDevice);
  cudaMemcpy(dW, w.data(), w.size() * 4, cudaMemcpyHostToDevice);
  cudaMemcpy(dS, sf.data(), sf.size() * 4, cudaMemcpyHostToDevice);
  reduce_probe<H><<<warps, 32>>>(dA, dW, dS, dL, dR);
  cudaMemcpy(lane_out.data(), dL, lane_out.size() * 4, cudaMemcpyDeviceToHost);
  cudaMemcpy(raced.data(), dR, raced.size() * 4, cudaMemcpyDeviceToHost);
  // One file per H: acc, w, sf, per-lane outputs, raced outputs (fp32, in this order).
  char p[512];
  snprintf(p, sizeof p, "%s/h%d.f32", dir, H);
  FILE* f = fopen(p, "wb");
  for (auto* v : {&acc, &w, &sf, &lane_out, &raced}) fwrite(v->data(), 4, v->size(), f);
  fclose(f);
  printf("H=%d warps=%d err=%s\n", H, warps, cudaGetErrorString(cudaGetLastError()));
}

int main(int argc, char** argv) {
  const char* dir = argc > 1 ? argv[1] : ".";
  run<64>(512, dir);
  run<32>(512, dir);
  return 0;
}
