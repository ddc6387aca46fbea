// Probe for the SiLU of DeepGEMM's Mega MoE epilogue (deepgemm-ops.md §10 step 3), written for gemm-oracle.
// For every bf16 gate value g it records, on the GPU at hand: expf(-g), __expf(-g), rcp.approx.ftz of the fast
// denominator, and both SiLU variants built with the same operations as the kernel's epilogue
// (impls/sm100_fp8_fp4_mega_moe.cuh @54e2261: denom = 1 + e (RN add); fast: g * rcp.approx.ftz(denom) (RN mul);
// IEEE: g / denom). Output: one file of 6 × 65536 fp32 values: g, expf, __expf, rcp(fast denom), silu_fast, silu_ieee.
#include <cstdio>
#include <cuda_bf16.h>

__device__ __forceinline__ float rcp_approx_ftz(float x) {
  float r;
  asm volatile("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
  return r;
}

__global__ void silu_probe(float* out) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= 65536) return;
  const float g = __bfloat162float(__ushort_as_bfloat16((unsigned short)i));
  const float e_ieee = expf(-g), e_fast = __expf(-g);
  const float d_fast = __fadd_rn(1.0f, e_fast), d_ieee = __fadd_rn(1.0f, e_ieee);
  const float r_fast = rcp_approx_ftz(d_fast);
  out[i] = g;
  out[65536 + i] = e_ieee;
  out[2 * 65536 + i] = e_fast;
  out[3 * 65536 + i] = r_fast;
  out[4 * 65536 + i] = __fmul_rn(g, r_fast);
  out[5 * 65536 + i] = __fdiv_rn(g, d_ieee);
}

int main(int argc, char** argv) {
  float* d;
  cudaMalloc(&d, 6 * 65536 * 4);
  silu_probe<<<256, 256>>>(d);
  static float h[6 * 65536];
  cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
  char p[512];
  snprintf(p, sizeof p, "%s/silu_h200.f32", argc > 1 ? argv[1] : ".");
  FILE* f = fopen(p, "wb");
  fwrite(h, 4, 6 * 65536, f);
  fclose(f);
  printf("%s\n", cudaGetErrorString(cudaGetLastError()));
  return 0;
}
