// The gate kernel of grouped_gate.h and its per-device block.
#include <climits>
#include <cstdint>
#include <map>
#include <mutex>

#include "grouped_gate.h"
#include "sm90_common.cuh"

namespace go_sm90 {

namespace {

// One CTA of 1024 threads. A classic layout of M = 32768 rows is read as 16-byte vectors, 8 loads in flight per
// thread, so the read costs about one memory latency rather than 32 in a row (the GEMM kernels wait for it). The
// smallest failing index is kept (atomicMin), so the error names the same entry as the host check would.
__global__ void __launch_bounds__(1024) gate_check(int kind, const int32_t* v, int64_t n, int64_t M, int64_t G, int mk,
                                                   int32_t* gate) {
  __shared__ unsigned long long first_bad;
  __shared__ int not256;
  // A pdl launch: the GEMM kernel after this one may take the other SMs now; this one reads and writes global
  // memory only once the kernel before it has completed (sm90_common.cuh).
  grid_launch_dependents();
  grid_dependency_wait();
  if (threadIdx.x == 0) first_bad = ULLONG_MAX, not256 = 0;
  __syncthreads();
  auto check = [&](int64_t i, int32_t x) {
    const int64_t previous = kind == kGatePsum && i > 0 ? v[i - 1] : 0;
    if (kind == kGateClassic && i % 256 == 0 && i + 128 < M && !fits256_classic(x, v[i + 128])) not256 = 1;
    if (kind == kGatePsum && !fits256_psum(previous, mk)) not256 = 1;
    if (gate_entry_bad(kind, x, previous, M, G)) atomicMin(&first_bad, static_cast<unsigned long long>(i));
  };
  constexpr int kUnroll = 8;
  int64_t scalar_from = 0;
  if (kind == kGateClassic && (reinterpret_cast<uintptr_t>(v) & 15) == 0) {
    const int64_t n4 = n / 4, stride = static_cast<int64_t>(blockDim.x) * kUnroll;
    const int4* v4 = reinterpret_cast<const int4*>(v);
    for (int64_t j0 = threadIdx.x; j0 < n4; j0 += stride) {
      int4 x[kUnroll];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const int64_t j = j0 + u * static_cast<int64_t>(blockDim.x);
        if (j < n4) x[u] = v4[j];
      }
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const int64_t j = j0 + u * static_cast<int64_t>(blockDim.x);
        if (j < n4) check(4 * j, x[u].x), check(4 * j + 1, x[u].y), check(4 * j + 2, x[u].z), check(4 * j + 3, x[u].w);
      }
    }
    scalar_from = 4 * n4;
  }
  for (int64_t i = scalar_from + threadIdx.x; i < n; i += blockDim.x) check(i, v[i]);
  __syncthreads();
  if (threadIdx.x == 0) {
    const bool bad = first_bad != ULLONG_MAX;
    gate[kGateBad] = bad ? 1 : 0;
    gate[kGateFits256] = not256 ? 0 : 1;
    if (bad && gate[kGateErrKind] == 0) {
      gate[kGateErrKind] = kind;
      gate[kGateErrIndex] = static_cast<int32_t>(first_bad);
      gate[kGateErrValue] = v[first_bad];
      gate[kGateErrBound] = static_cast<int32_t>(gate_bound(kind, M, G));
    }
  }
}

// The gate block: module-scope device memory, one per device (zero at module load), so there is no allocation to
// leak or free.
__device__ int32_t g_gate_block[kGateSlots];

struct DeviceGate {
  int32_t* block = nullptr;
  bool looked = true;  // no check launched (or block handed to a kernel) since the host last looked
};
std::mutex g_mu;
std::map<int, DeviceGate> g_gates;

}  // namespace

cudaError_t gate_block(int32_t** gate) {
  int dev = 0;
  cudaError_t e = cudaGetDevice(&dev);
  if (e != cudaSuccess) return e;
  std::lock_guard<std::mutex> lk(g_mu);
  DeviceGate& g = g_gates[dev];
  if (g.block == nullptr) {
    if ((e = cudaGetSymbolAddress(reinterpret_cast<void**>(&g.block), g_gate_block)) != cudaSuccess) return e;
  }
  g.looked = false;
  *gate = g.block;
  return cudaSuccess;
}

cudaError_t launch_gate_check(GateKind kind, const int32_t* v, int64_t n, int64_t M, int64_t G, int mk, bool pdl,
                              cudaStream_t stream, int32_t** gate) {
  if (const cudaError_t e = gate_block(gate); e != cudaSuccess) return e;
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(1);
  cfg.blockDim = dim3(1024);
  cfg.stream = stream;
  cudaLaunchAttribute attr = {};
  attr.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr.val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = &attr;
  cfg.numAttrs = pdl ? 1 : 0;
  return cudaLaunchKernelEx(&cfg, gate_check, static_cast<int>(kind), v, n, M, G, mk, *gate);
}

cudaError_t gate_take_error(std::string* msg) {
  msg->clear();
  int dev = 0;
  cudaError_t e = cudaGetDevice(&dev);
  if (e != cudaSuccess) return e;
  std::lock_guard<std::mutex> lk(g_mu);
  auto it = g_gates.find(dev);
  if (it == g_gates.end() || it->second.looked) return cudaSuccess;
  int32_t h[kGateSlots];
  if ((e = cudaMemcpy(h, it->second.block, sizeof h, cudaMemcpyDeviceToHost)) != cudaSuccess) return e;
  it->second.looked = true;
  if (h[kGateErrKind] == 0) return cudaSuccess;
  *msg = gate_message(h[kGateErrKind], h[kGateErrIndex], h[kGateErrValue], h[kGateErrBound]);
  return cudaMemset(it->second.block + kGateErrKind, 0, 4 * sizeof(int32_t));
}

}  // namespace go_sm90
