// Runs DeepGEMM's own SM90 `sm90_paged_mqa_logits_metadata` + `sm90_fp8_paged_mqa_logits` kernels (DeepGEMM @54e2261
// and CUTLASS headers via -I; nothing copied) on a seeded fused KV cache with shuffled pages and context lengths that
// vary within a request, and writes inputs and logits to one file. The host side restates
// csrc/apis/attention.hpp + csrc/jit_kernels/impls/sm90_fp8_mqa_logits.hpp: block_kv = 64, split_kv = 256,
// 4 math warpgroups, 3 + 3 stages, the fused page = block_kv·D value bytes then block_kv fp32 scales.
// Output: {B, next_n, H, D, num_blocks, max_blocks, max_ctx, stride}, q, cache, weights, context_lens, block_table,
// logits [B·next_n, stride].
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
#include <deep_gemm/scheduler/sm90_paged_mqa_logits.cuh>
#include <deep_gemm/impls/sm90_fp8_paged_mqa_logits.cuh>

#define CK(x) do { auto e = (x); if (e != cudaSuccess) { printf("CUDA %s at %d\n", cudaGetErrorString(e), __LINE__); exit(1); } } while (0)
#define DK(x) do { auto e = (x); if (e != CUDA_SUCCESS) { printf("driver %d at %d\n", (int)e, __LINE__); exit(1); } } while (0)

static uint64_t st = 0xC0FFEE1234ull;
static uint32_t nxt() { st ^= st << 13; st ^= st >> 7; st ^= st << 17; return (uint32_t)(st >> 13); }

static CUtensorMapSwizzle sw(int s) {
  return s == 128 ? CU_TENSOR_MAP_SWIZZLE_128B : s == 64 ? CU_TENSOR_MAP_SWIZZLE_64B : s == 32 ? CU_TENSOR_MAP_SWIZZLE_32B
                                                                                            : CU_TENSOR_MAP_SWIZZLE_NONE;
}

static CUtensorMap tma2d(void* p, CUtensorMapDataType dt, int elem, uint64_t gi, uint64_t go, uint32_t si, uint32_t so,
                         uint64_t outer_stride, int swizzle) {
  CUtensorMap m;
  if (swizzle != 0) si = swizzle / elem;
  cuuint64_t gd[2] = {gi, go}, gs[1] = {outer_stride * elem};
  cuuint32_t sd[2] = {si, so}, es[2] = {1, 1};
  DK(cuTensorMapEncodeTiled(&m, dt, 2, p, gd, gs, sd, es, CU_TENSOR_MAP_INTERLEAVE_NONE, sw(swizzle),
                            CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
  return m;
}

static CUtensorMap tma3d(void* p, uint64_t g0, uint64_t g1, uint64_t g2, uint32_t s0, uint32_t s1, uint32_t s2,
                         uint64_t st0, uint64_t st1, int swizzle) {
  CUtensorMap m;
  if (swizzle != 0) s0 = swizzle;
  cuuint64_t gd[3] = {g0, g1, g2}, gs[2] = {st0, st1};
  cuuint32_t sd[3] = {s0, s1, s2}, es[3] = {1, 1, 1};
  DK(cuTensorMapEncodeTiled(&m, CU_TENSOR_MAP_DATA_TYPE_UINT8, 3, p, gd, gs, sd, es, CU_TENSOR_MAP_INTERLEAVE_NONE,
                            sw(swizzle), CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
  return m;
}

int main(int argc, char** argv) {
  constexpr uint32_t B = 5, N = 2, H = 64, D = 128, BKV = 64, SPLIT = 256, kSMs = 132, kMath = 512;
  const uint32_t ctx[B][N] = {{70, 100}, {5, 9}, {0, 130}, {300, 301}, {64, 64}};
  uint32_t pages[B], total_pages = 0, max_blocks = 0, max_ctx = 0;
  for (uint32_t b = 0; b < B; b++) {
    pages[b] = (ctx[b][N - 1] + BKV - 1) / BKV, total_pages += pages[b];
    max_blocks = pages[b] > max_blocks ? pages[b] : max_blocks;
    max_ctx = ctx[b][N - 1] > max_ctx ? ctx[b][N - 1] : max_ctx;
  }
  const uint32_t num_blocks = total_pages + 3, width = D + 4, page = BKV * width;
  std::vector<uint8_t> cache((size_t)num_blocks * page);
  for (size_t i = 0; i < cache.size(); i++) { uint8_t c = nxt() & 0xFF; if ((c & 0x7F) == 0x7F) c ^= 1; cache[i] = c; }
  for (uint32_t p = 0; p < num_blocks; p++)
    for (uint32_t s = 0; s < BKV; s++) {
      uint32_t u = ((127 - 8 + nxt() % 4) << 23) | (nxt() & 0x7FFFFF);
      memcpy(&cache[(size_t)p * page + BKV * D + 4 * s], &u, 4);
    }
  std::vector<int32_t> table(B * max_blocks, 0);
  uint32_t next = 0;
  for (uint32_t b = 0; b < B; b++)
    for (uint32_t i = 0; i < pages[b]; i++) table[b * max_blocks + i] = (int32_t)(num_blocks - 1 - next++);  // reversed pool
  std::vector<uint8_t> q((size_t)B * N * H * D);
  for (auto& c : q) { c = nxt() & 0xFF; if ((c & 0x7F) == 0x7F) c ^= 1; }
  std::vector<float> w((size_t)B * N * H);
  for (auto& x : w) { uint32_t u = ((nxt() & 1) << 31) | ((127 - 3 + nxt() % 4) << 23) | (nxt() & 0x7FFFFF); memcpy(&x, &u, 4); }
  std::vector<uint32_t> ctx_flat(B * N);
  for (uint32_t b = 0; b < B; b++) for (uint32_t j = 0; j < N; j++) ctx_flat[b * N + j] = ctx[b][j];
  const uint32_t stride = ((max_ctx + SPLIT - 1) / SPLIT * SPLIT + 255) / 256 * 256;

  uint8_t *dq, *dc; float *dw, *dl; uint32_t *dctx, *dmeta; int32_t* dt;
  CK(cudaMalloc(&dq, q.size())); CK(cudaMalloc(&dc, cache.size())); CK(cudaMalloc(&dw, w.size() * 4));
  CK(cudaMalloc(&dl, (size_t)B * N * stride * 4)); CK(cudaMalloc(&dctx, B * N * 4)); CK(cudaMalloc(&dmeta, (kSMs + 1) * 8));
  CK(cudaMalloc(&dt, table.size() * 4));
  CK(cudaMemcpy(dq, q.data(), q.size(), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dc, cache.data(), cache.size(), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dw, w.data(), w.size() * 4, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dctx, ctx_flat.data(), B * N * 4, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dt, table.data(), table.size() * 4, cudaMemcpyHostToDevice));
  CK(cudaMemset(dl, 0xFF, (size_t)B * N * stride * 4));

  deep_gemm::sched::sm90_paged_mqa_logits_metadata<32, SPLIT, kSMs, false><<<1, 32, 32 * 4>>>(B, N, true, dctx, nullptr, dmeta);
  CK(cudaGetLastError());

  constexpr uint32_t atom = N >= 2 ? 2 : 1;
  auto mq = tma2d(dq, CU_TENSOR_MAP_DATA_TYPE_UINT8, 1, D, (uint64_t)B * N * H, D, atom * H, D, D);
  auto mkv = tma3d(dc, D, BKV, num_blocks, D, BKV, 1, D, page, D);
  auto msf = tma2d(dc + BKV * D, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 4, BKV, num_blocks, BKV, 1, page / 4, 0);
  auto mw = tma2d(dw, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 4, H, B * N, H, atom, H, 0);
  auto al = [](int x, int a) { return (x + a - 1) / a * a; };
  const int swa = D * 8;
  const int q_pipe = 3 * (N * H * D + al(N * H * 4, swa)) + al(3 * 16, swa);
  const int kv_pipe = 3 * (BKV * D + al(BKV * 4, swa)) + al(3 * 16, swa);
  const int smem = q_pipe + (kMath / 128) * kv_pipe + (kMath / 128) * 16 + 4;
  auto kern = deep_gemm::sm90_fp8_paged_mqa_logits<N, H, D, BKV, true, false, 3, 3, SPLIT, 128, kMath, float>;
  CK(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  kern<<<kSMs, 128 + kMath, smem>>>(B, stride, max_blocks, dctx, dl, (uint32_t*)dt, nullptr, dmeta, mq, mkv, msf, mw);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  std::vector<float> logits((size_t)B * N * stride);
  CK(cudaMemcpy(logits.data(), dl, logits.size() * 4, cudaMemcpyDeviceToHost));
  char p[512];
  snprintf(p, sizeof p, "%s/h200_deepgemm_paged.bin", argc > 1 ? argv[1] : ".");
  FILE* f = fopen(p, "wb");
  uint32_t hdr[8] = {B, N, H, D, num_blocks, max_blocks, max_ctx, stride};
  fwrite(hdr, 4, 8, f);
  fwrite(q.data(), 1, q.size(), f); fwrite(cache.data(), 1, cache.size(), f); fwrite(w.data(), 4, w.size(), f);
  fwrite(ctx_flat.data(), 4, ctx_flat.size(), f); fwrite(table.data(), 4, table.size(), f);
  fwrite(logits.data(), 4, logits.size(), f);
  fclose(f);
  printf("paged ok smem=%d stride=%u blocks=%u\n", smem, stride, num_blocks);
  return 0;
}
