// The quantizer kernels of go_quantize: one CTA per scale group (a 1×gran_k run of a row, a gran_k×1 run of a column,
// a gran_k×gran_k tile, an MX block of 32 or an NVFP4 block of 16). The CTA reduces the group's amax (max |x|, NaN
// wins: an order-independent reduction, so every launch gives the same bits), one thread turns it into the group's
// scale, and every thread writes codes. The arithmetic is quant_math.cuh and the group body quantize_group.cuh, both
// shared with host code that checks them against the reference (tests/kernels/cuda_quant_math_test.ts,
// tests/ffi/quant_ops_test.ts). NVFP4 first reduces the tensor's amax into global_sf (atomicMax on |x| bits: for
// non-negative floats the unsigned order is the numeric order, and NaN bits lie above +Inf's), and last replaces it
// with the per-tensor scale (numerics.md §6).
#include "quantize_group.cuh"

namespace go_quant {
namespace {

constexpr int kThreads = 128;

__global__ void __launch_bounds__(kThreads) tensor_amax_kernel(const QuantParams p) {
  float a = 0.0f;
  const int64_t total = p.m * p.n;
  for (int64_t e = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; e < total;
       e += static_cast<int64_t>(gridDim.x) * blockDim.x)
    a = amax_step(a, load_x(p, e / p.n, e % p.n));
  if (f2u(a) != 0) atomicMax(reinterpret_cast<unsigned int*>(p.global_sf), f2u(a));  // |x| bits, NaN above Inf
}

__global__ void global_scale_kernel(const QuantParams p) {
  const float amax = u2f(*reinterpret_cast<const unsigned int*>(p.global_sf));
  *p.global_sf = nvfp4_global_sf(p.kind, amax, p.gpu != 0);
}

__global__ void __launch_bounds__(kThreads) quantize_kernel(const QuantParams p) {
  __shared__ float s_amax[kThreads];
  __shared__ GroupState s_state;
  const Problem pr = make_problem(p.kind, p.m, p.n, p.gran_k, p.gpu != 0, p.ue8m0 != 0, p.rule);
  // NVFP4: global_sf holds the tensor's amax bits until global_scale_kernel runs (stream order)
  const float global = p.global_sf ? u2f(*reinterpret_cast<const unsigned int*>(p.global_sf)) : 0.0f;
  for (int64_t g = blockIdx.x; g < pr.gr * pr.gc; g += gridDim.x) {
    s_amax[threadIdx.x] = group_amax_part(p, pr, g, threadIdx.x, kThreads);
    __syncthreads();
    for (int s = kThreads / 2; s > 0; s >>= 1) {
      if (threadIdx.x < s) s_amax[threadIdx.x] = amax_merge(s_amax[threadIdx.x], s_amax[threadIdx.x + s]);
      __syncthreads();
    }
    if (threadIdx.x == 0) {
      s_state = group_state(p.kind, s_amax[0], p.gpu != 0, p.ue8m0 != 0, p.rule, global);
      write_scale(p, pr, g, s_state);
    }
    __syncthreads();
    write_codes(p, pr, g, s_state, threadIdx.x, kThreads);
    __syncthreads();  // s_amax and s_state are reused by the next group
  }
}

}  // namespace

cudaError_t launch_quantize(const QuantParams& p, cudaStream_t stream) {
  const bool nvfp4 = p.kind == kNvfp4Te || p.kind == kNvfp4Torchao;
  if (nvfp4) {
    cudaError_t e = cudaMemsetAsync(p.global_sf, 0, sizeof(float), stream);
    if (e != cudaSuccess) return e;
    const int64_t total = p.m * p.n;
    if (total > 0) {
      const int64_t blocks = (total + kThreads - 1) / kThreads;
      tensor_amax_kernel<<<static_cast<unsigned>(blocks < 4096 ? blocks : 4096), kThreads, 0, stream>>>(p);
      if ((e = cudaGetLastError()) != cudaSuccess) return e;
    }
  }
  const Problem pr = make_problem(p.kind, p.m, p.n, p.gran_k, p.gpu != 0, p.ue8m0 != 0, p.rule);
  const int64_t groups = pr.gr * pr.gc;
  if (groups > 0) {
    quantize_kernel<<<static_cast<unsigned>(groups < (1 << 20) ? groups : (1 << 20)), kThreads, 0, stream>>>(p);
    const cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) return e;
  }
  if (nvfp4) {
    global_scale_kernel<<<1, 1, 0, stream>>>(p);
    return cudaGetLastError();
  }
  return cudaSuccess;
}

}  // namespace go_quant
