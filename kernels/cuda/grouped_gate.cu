// The gate kernel of grouped_gate.h and its per-device block.
#include <climits>
#include <cstdio>
#include <map>
#include <mutex>

#include "grouped_gate.h"

namespace go_sm90 {

namespace {

// One CTA of 1024 threads: a layout of M = 32768 rows is 32 loads per thread, a few microseconds. The smallest
// failing index is kept (atomicMin), so the error names the same entry as the host check would.
__global__ void __launch_bounds__(1024) gate_check(int kind, const int32_t* v, int64_t n, int64_t M, int64_t G, int mk,
                                                   int32_t* gate) {
  __shared__ unsigned long long first_bad;
  __shared__ int not256;
  if (threadIdx.x == 0) first_bad = ULLONG_MAX, not256 = 0;
  __syncthreads();
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
    const int32_t x = v[i];
    bool bad = false;
    if (kind == kGateClassic) {
      bad = x < -1 || x >= G;
      if (i % 256 == 0 && i + 128 < M && !fits256_classic(x, v[i + 128])) not256 = 1;
    } else if (kind == kGatePsum) {
      const int64_t previous = i == 0 ? 0 : v[i - 1];
      bad = x < previous || x > M;
      if (!fits256_psum(previous, mk)) not256 = 1;
    } else {
      bad = x < 0 || x > M;
    }
    if (bad) atomicMin(&first_bad, static_cast<unsigned long long>(i));
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    const bool bad = first_bad != ULLONG_MAX;
    gate[kGateBad] = bad ? 1 : 0;
    gate[kGateFits256] = not256 ? 0 : 1;
    if (bad && gate[kGateErrKind] == 0) {
      gate[kGateErrKind] = kind;
      gate[kGateErrIndex] = static_cast<int32_t>(first_bad);
      gate[kGateErrValue] = v[first_bad];
      gate[kGateErrBound] = static_cast<int32_t>(kind == kGateClassic ? G : M);
    }
  }
}

struct DeviceGate {
  int32_t* block = nullptr;
  bool looked = true;  // no check launched since the host last looked
};
std::mutex g_mu;
std::map<int, DeviceGate> g_gates;

}  // namespace

cudaError_t launch_gate_check(GateKind kind, const int32_t* v, int64_t n, int64_t M, int64_t G, int mk,
                              cudaStream_t stream, int32_t** gate) {
  int dev = 0;
  cudaError_t e = cudaGetDevice(&dev);
  if (e != cudaSuccess) return e;
  {
    std::lock_guard<std::mutex> lk(g_mu);
    DeviceGate& g = g_gates[dev];
    if (g.block == nullptr) {
      if ((e = cudaMalloc(reinterpret_cast<void**>(&g.block), kGateSlots * sizeof(int32_t))) != cudaSuccess) return e;
      if ((e = cudaMemset(g.block, 0, kGateSlots * sizeof(int32_t))) != cudaSuccess) return e;
    }
    g.looked = false;
    *gate = g.block;
  }
  gate_check<<<1, 1024, 0, stream>>>(kind, v, n, M, G, mk, *gate);
  return cudaGetLastError();
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
  char buf[200];
  const int i = h[kGateErrIndex], x = h[kGateErrValue], bound = h[kGateErrBound];
  if (h[kGateErrKind] == kGateClassic)
    std::snprintf(buf, sizeof buf, "grouped_layout[%d] = %d is neither -1 nor a group in [0, %d)", i, x, bound);
  else if (h[kGateErrKind] == kGatePsum)
    std::snprintf(buf, sizeof buf, "grouped_layout[%d] = %d: psum ends must be non-decreasing and <= M = %d", i, x, bound);
  else
    std::snprintf(buf, sizeof buf, "masked_m[%d] = %d is outside [0, %d]", i, x, bound);
  *msg = buf;
  return cudaMemset(it->second.block + kGateErrKind, 0, 4 * sizeof(int32_t));
}

}  // namespace go_sm90
