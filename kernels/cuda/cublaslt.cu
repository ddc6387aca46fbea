// go_cublaslt_gemm's engine: cuBLASLt loaded at run time and driven through its documented C API (the declarations
// below restate cublasLt.h's, as Triton's cublas_types.h does, so the backend builds where the toolkit ships no
// cuBLAS headers). D = A·Bᵀ (+ C) for row-major D [M, N] is the column-major product Dᵀ = op_T(B)·A: cuBLASLt's
// "TN" form, the only one its FP8 path takes, with both operands K-major. Raw operands (no scale pointers: scale 1),
// fast accumulation off, fp32 compute and scale type, alpha = 1, beta = C ? 1 : 0 — the `cublaslt` model's
// assumptions (reference/kernel_models/kernel_models.ts, numerics.md §8.2). The algorithm is the heuristic's first
// (split_k = 0) or one with the requested K splits; what ran is reported so the model can be asked for the same
// split-K (numerics.md §8.2b: split-K in 2 halves at 64×256×7168).
#include <dlfcn.h>
#include <library_types.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

#include "../gemm_oracle.h"
#include "cublaslt.h"

namespace go_cublaslt {
namespace {

// ---- the cuBLASLt C API (cublasLt.h) ---------------------------------------------------------------------------------

using Status = int;  // cublasStatus_t; 0 = CUBLAS_STATUS_SUCCESS
using Handle = void*;
using Desc = void*;
using Layout = void*;
using Pref = void*;
struct Algo {
  uint64_t data[8];  // cublasLtMatmulAlgo_t
};
struct Heuristic {   // cublasLtMatmulHeuristicResult_t
  Algo algo;
  size_t workspace_size;
  Status state;
  float waves_count;
  int reserved[4];
};

constexpr int kComputeF32 = 68;       // CUBLAS_COMPUTE_32F
constexpr int kDescTransA = 3;        // CUBLASLT_MATMUL_DESC_TRANSA
constexpr int kDescTransB = 4;        // CUBLASLT_MATMUL_DESC_TRANSB
constexpr int kDescFastAccum = 25;    // CUBLASLT_MATMUL_DESC_FAST_ACCUM
constexpr int kOpN = 0, kOpT = 1;     // CUBLAS_OP_N, CUBLAS_OP_T
constexpr int kPrefMaxWorkspace = 1;  // CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES
constexpr int kCfgId = 0, kCfgTile = 1, kCfgSplitK = 2, kCfgReduction = 3, kCfgSwizzle = 4, kCfgCustom = 5,
              kCfgStages = 6;         // cublasLtMatmulAlgoConfigAttributes_t
constexpr size_t kWorkspace = size_t(32) << 20;

struct Api {
  void* lib = nullptr;
  std::string where, why;
  Status (*create)(Handle*) = nullptr;
  size_t (*version)() = nullptr;
  const char* (*status_string)(Status) = nullptr;
  Status (*desc_create)(Desc*, int, int) = nullptr;
  Status (*desc_destroy)(Desc) = nullptr;
  Status (*desc_set)(Desc, int, const void*, size_t) = nullptr;
  Status (*layout_create)(Layout*, int, uint64_t, uint64_t, int64_t) = nullptr;
  Status (*layout_destroy)(Layout) = nullptr;
  Status (*pref_create)(Pref*) = nullptr;
  Status (*pref_destroy)(Pref) = nullptr;
  Status (*pref_set)(Pref, int, const void*, size_t) = nullptr;
  Status (*heuristic)(Handle, Desc, Layout, Layout, Layout, Layout, Pref, int, Heuristic*, int*) = nullptr;
  Status (*algo_check)(Handle, Desc, Layout, Layout, Layout, Layout, const Algo*, Heuristic*) = nullptr;
  Status (*cfg_set)(Algo*, int, const void*, size_t) = nullptr;
  Status (*cfg_get)(const Algo*, int, void*, size_t, size_t*) = nullptr;
  Status (*matmul)(Handle, Desc, const void*, const void*, Layout, const void*, Layout, const void*, const void*,
                   Layout, void*, Layout, const Algo*, void*, size_t, cudaStream_t) = nullptr;
};

template <typename F>
bool bind(void* lib, const char* name, F& f) {
  f = reinterpret_cast<F>(dlsym(lib, name));
  return f != nullptr;
}

Api load_api() {
  Api a;
  std::string tried;
  auto try_open = [&](const std::string& path) {
    if (a.lib || path.empty()) return;
    tried += (tried.empty() ? "" : ", ") + path;
    a.lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (a.lib) a.where = path;
  };
  if (const char* p = std::getenv("GO_CUBLASLT_PATH")) try_open(p);
  for (const char* n : {"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so"}) try_open(n);
  for (const char* env : {"CUDA_HOME", "CUDA_PATH"}) {
    if (const char* h = std::getenv(env)) {
      try_open(std::string(h) + "/lib64/libcublasLt.so.13");
      try_open(std::string(h) + "/lib64/libcublasLt.so.12");
      try_open(std::string(h) + "/lib64/libcublasLt.so");
    }
  }
  try_open("/usr/local/cuda/lib64/libcublasLt.so");
  if (!a.lib) {
    a.why = "cuBLASLt not found (tried " + tried + "; set GO_CUBLASLT_PATH to libcublasLt.so)";
    return a;
  }
  const bool ok = bind(a.lib, "cublasLtCreate", a.create) && bind(a.lib, "cublasLtGetVersion", a.version) &&
                  bind(a.lib, "cublasLtGetStatusString", a.status_string) &&
                  bind(a.lib, "cublasLtMatmulDescCreate", a.desc_create) &&
                  bind(a.lib, "cublasLtMatmulDescDestroy", a.desc_destroy) &&
                  bind(a.lib, "cublasLtMatmulDescSetAttribute", a.desc_set) &&
                  bind(a.lib, "cublasLtMatrixLayoutCreate", a.layout_create) &&
                  bind(a.lib, "cublasLtMatrixLayoutDestroy", a.layout_destroy) &&
                  bind(a.lib, "cublasLtMatmulPreferenceCreate", a.pref_create) &&
                  bind(a.lib, "cublasLtMatmulPreferenceDestroy", a.pref_destroy) &&
                  bind(a.lib, "cublasLtMatmulPreferenceSetAttribute", a.pref_set) &&
                  bind(a.lib, "cublasLtMatmulAlgoGetHeuristic", a.heuristic) &&
                  bind(a.lib, "cublasLtMatmulAlgoCheck", a.algo_check) &&
                  bind(a.lib, "cublasLtMatmulAlgoConfigSetAttribute", a.cfg_set) &&
                  bind(a.lib, "cublasLtMatmulAlgoConfigGetAttribute", a.cfg_get) &&
                  bind(a.lib, "cublasLtMatmul", a.matmul);
  if (!ok) {
    a.why = "cuBLASLt at " + a.where + " lacks a function this backend calls";
    dlclose(a.lib);
    a.lib = nullptr;
  }
  return a;
}

const Api& api() {
  static std::once_flag once;
  static Api a;
  std::call_once(once, [] { a = load_api(); });
  return a;
}

// One handle per device, made on first use and kept for the process. The workspace is allocated per call (with the
// operand buffers): a workspace kept for the process was reported as a 32 MB leak by compute-sanitizer's memcheck
// (H200, tests/gpu/run.sh sanitize step).
struct DeviceState {
  Handle handle = nullptr;
};
std::mutex g_mu;
DeviceState g_dev[64];

// ---- packing kernels ------------------------------------------------------------------------------------------------

// dst[r*ld + k] = src(r, k) for an elem-byte element type (1, 2 or 4): a strided view made K-major.
__global__ void pack_kernel(const uint8_t* src, int64_t s0, int64_t s1, int64_t rows, int64_t cols, int elem,
                            uint8_t* dst, int64_t ld) {
  for (int64_t e = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; e < rows * cols;
       e += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t r = e / cols, k = e % cols;
    const uint8_t* s = src + (r * s0 + k * s1) * elem;
    uint8_t* d = dst + (r * ld + k) * elem;
    for (int i = 0; i < elem; ++i) d[i] = s[i];
  }
}

// dst(m, n) = src[m*ld + n]: a packed row-major D written back to a strided view.
__global__ void unpack_kernel(const uint8_t* src, int64_t ld, int64_t rows, int64_t cols, int elem, uint8_t* dst,
                              int64_t s0, int64_t s1) {
  for (int64_t e = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; e < rows * cols;
       e += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t r = e / cols, c = e % cols;
    const uint8_t* s = src + (r * ld + c) * elem;
    uint8_t* d = dst + (r * s0 + c * s1) * elem;
    for (int i = 0; i < elem; ++i) d[i] = s[i];
  }
}

unsigned grid_for(int64_t n) {
  const int64_t b = (n + 255) / 256;
  return static_cast<unsigned>(b < 4096 ? (b > 0 ? b : 1) : 4096);
}

int elem_bytes(int t) { return t == kBf16 ? 2 : t == kF32 ? 4 : 1; }

int cuda_type(int t) {
  switch (t) {
    case kE4M3: return CUDA_R_8F_E4M3;
    case kE5M2: return CUDA_R_8F_E5M2;
    case kBf16: return CUDA_R_16BF;
    default: return CUDA_R_32F;
  }
}

int64_t align16(int64_t x) { return (x + 15) / 16 * 16; }

// Everything one call allocates or creates, released whatever happens.
struct Scope {
  const Api& a;
  void* bufs[4] = {nullptr, nullptr, nullptr, nullptr};  // A, B, D, workspace
  Desc desc = nullptr;
  Layout la = nullptr, lb = nullptr, ld = nullptr;
  Pref pref = nullptr;
  explicit Scope(const Api& api_) : a(api_) {}
  ~Scope() {
    if (pref) a.pref_destroy(pref);
    if (la) a.layout_destroy(la);
    if (lb) a.layout_destroy(lb);
    if (ld) a.layout_destroy(ld);
    if (desc) a.desc_destroy(desc);
    for (void* b : bufs)
      if (b) cudaFree(b);
  }
};

uint32_t cfg(const Api& a, const Algo& al, int attr) {
  uint32_t v = 0;
  size_t w = 0;
  a.cfg_get(&al, attr, &v, sizeof v, &w);
  return v;
}

}  // namespace

int32_t run(const LtParams& p, std::string* algo, std::string* err) {
  const Api& a = api();
  if (!a.lib) {
    *err = a.why;
    return GO_ERR_UNSUPPORTED;
  }
  auto lt_fail = [&](Status st, const char* what) {
    *err = std::string(what) + ": cuBLASLt status " + std::to_string(st) + " (" + a.status_string(st) + ")";
    return st == 15 /* NOT_SUPPORTED */ || st == 8 /* ARCH_MISMATCH */ ? GO_ERR_UNSUPPORTED : GO_ERR_DEVICE;
  };
  auto cuda_fail = [&](cudaError_t e, const char* what) {
    *err = std::string(what) + ": " + cudaGetErrorString(e);
    return GO_ERR_DEVICE;
  };
  int dev = 0;
  cudaError_t ce = cudaGetDevice(&dev);
  if (ce != cudaSuccess) return cuda_fail(ce, "cudaGetDevice");
  if (dev < 0 || dev >= 64) {
    *err = "device index out of range";
    return GO_ERR_INTERNAL;
  }
  DeviceState* ds;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    ds = &g_dev[dev];
    if (!ds->handle) {
      const Status st = a.create(&ds->handle);
      if (st != 0) return lt_fail(st, "cublasLtCreate");
    }
  }
  Scope sc(a);
  // zero-filled, like every buffer handed to cuBLASLt here (compute-sanitizer's initcheck runs over these calls)
  if ((ce = cudaMalloc(&sc.bufs[3], kWorkspace)) != cudaSuccess ||
      (ce = cudaMemset(sc.bufs[3], 0, kWorkspace)) != cudaSuccess) {
    cudaGetLastError();
    return cuda_fail(ce, "cuBLASLt workspace");
  }
  void* const workspace = sc.bufs[3];
  const int ea = elem_bytes(p.a_type), eb = elem_bytes(p.b_type), ed = elem_bytes(p.d_type);
  const int64_t ldk = align16(p.K), ldn = align16(p.N);
  const size_t bytes_a = static_cast<size_t>(p.M * ldk * ea) + 16, bytes_b = static_cast<size_t>(p.N * ldk * eb) + 16;
  const size_t bytes_d = static_cast<size_t>(p.M * ldn * ed) + 16;
  if ((ce = cudaMalloc(&sc.bufs[0], bytes_a)) != cudaSuccess || (ce = cudaMalloc(&sc.bufs[1], bytes_b)) != cudaSuccess ||
      (ce = cudaMalloc(&sc.bufs[2], bytes_d)) != cudaSuccess) {
    cudaGetLastError();
    return cuda_fail(ce, "cuBLASLt operand buffers");
  }
  uint8_t *pa = static_cast<uint8_t*>(sc.bufs[0]), *pb = static_cast<uint8_t*>(sc.bufs[1]),
          *pd = static_cast<uint8_t*>(sc.bufs[2]);
  // Packing: A and B K-major with 16-element-aligned rows (zero padding, never read: the layouts say K); C into D.
  cudaMemsetAsync(pa, 0, bytes_a, 0);
  cudaMemsetAsync(pb, 0, bytes_b, 0);
  cudaMemsetAsync(pd, 0, bytes_d, 0);
  if (p.M * p.K > 0)
    pack_kernel<<<grid_for(p.M * p.K), 256>>>(static_cast<const uint8_t*>(p.a), p.a_s0, p.a_s1, p.M, p.K, ea, pa, ldk);
  if (p.N * p.K > 0)
    pack_kernel<<<grid_for(p.N * p.K), 256>>>(static_cast<const uint8_t*>(p.b), p.b_s0, p.b_s1, p.N, p.K, eb, pb, ldk);
  if (p.c)
    pack_kernel<<<grid_for(p.M * p.N), 256>>>(static_cast<const uint8_t*>(p.c), p.c_s0, p.c_s1, p.M, p.N, ed, pd, ldn);
  if ((ce = cudaGetLastError()) != cudaSuccess) return cuda_fail(ce, "cuBLASLt packing");

  if (p.K == 0) {
    // An empty reduction: D = C, or 0 (deepgemm-ops.md §5.1's early return); cuBLASLt is not called.
    if (p.M * p.N > 0)
      unpack_kernel<<<grid_for(p.M * p.N), 256>>>(pd, ldn, p.M, p.N, ed, static_cast<uint8_t*>(p.d), p.d_s0, p.d_s1);
    if ((ce = cudaGetLastError()) != cudaSuccess || (ce = cudaDeviceSynchronize()) != cudaSuccess)
      return cuda_fail(ce, "cuBLASLt (k = 0)");
    *algo = "none (k = 0)";
    return GO_OK;
  }
  // Column-major view: Dᵀ [N, M] = op_T(B_cm [K, N]) · A_cm [K, M].
  Status st = a.desc_create(&sc.desc, kComputeF32, CUDA_R_32F);
  if (st != 0) return lt_fail(st, "cublasLtMatmulDescCreate");
  const int opT = kOpT, opN = kOpN;
  const int8_t fast = 0;  // FP8 fast accumulation off: partial sums promoted (numerics.md §8.2)
  if ((st = a.desc_set(sc.desc, kDescTransA, &opT, sizeof opT)) != 0 ||
      (st = a.desc_set(sc.desc, kDescTransB, &opN, sizeof opN)) != 0)
    return lt_fail(st, "cublasLtMatmulDescSetAttribute");
  if (p.a_type != kBf16 && (st = a.desc_set(sc.desc, kDescFastAccum, &fast, sizeof fast)) != 0)
    return lt_fail(st, "cublasLtMatmulDescSetAttribute(FAST_ACCUM)");
  if ((st = a.layout_create(&sc.la, cuda_type(p.b_type), p.K, p.N, ldk)) != 0 ||
      (st = a.layout_create(&sc.lb, cuda_type(p.a_type), p.K, p.M, ldk)) != 0 ||
      (st = a.layout_create(&sc.ld, cuda_type(p.d_type), p.N, p.M, ldn)) != 0)
    return lt_fail(st, "cublasLtMatrixLayoutCreate");
  if ((st = a.pref_create(&sc.pref)) != 0) return lt_fail(st, "cublasLtMatmulPreferenceCreate");
  const uint64_t ws = kWorkspace;
  if ((st = a.pref_set(sc.pref, kPrefMaxWorkspace, &ws, sizeof ws)) != 0)
    return lt_fail(st, "cublasLtMatmulPreferenceSetAttribute");
  Heuristic res[32];
  int count = 0;
  st = a.heuristic(ds->handle, sc.desc, sc.la, sc.lb, sc.ld, sc.ld, sc.pref, 32, res, &count);
  if (st != 0 || count == 0) {
    *err = "cuBLASLt has no algorithm for this problem (heuristic status " + std::to_string(st) + ", " +
           std::to_string(count) + " results)";
    return GO_ERR_UNSUPPORTED;
  }
  int pick = -1;
  for (int i = 0; i < count && pick < 0; ++i) {
    if (res[i].state != 0) continue;
    if (p.split_k == 0 || static_cast<int>(cfg(a, res[i].algo, kCfgSplitK)) == p.split_k) pick = i;
  }
  Algo chosen{};
  if (pick >= 0) {
    chosen = res[pick].algo;
  } else {
    // No heuristic result has the requested split: ask the first one for it (cublasLtMatmulAlgoCheck validates).
    chosen = res[0].algo;
    const uint32_t s = static_cast<uint32_t>(p.split_k), none = 0;
    Heuristic chk{};
    if (a.cfg_set(&chosen, kCfgSplitK, &s, sizeof s) != 0 ||
        (s == 1 && a.cfg_set(&chosen, kCfgReduction, &none, sizeof none) != 0) ||
        a.algo_check(ds->handle, sc.desc, sc.la, sc.lb, sc.ld, sc.ld, &chosen, &chk) != 0 ||
        chk.workspace_size > kWorkspace) {
      *err = "cuBLASLt offers no algorithm with split_k = " + std::to_string(p.split_k) + " for this problem";
      return GO_ERR_UNSUPPORTED;
    }
  }
  const float alpha = 1.0f, beta = p.c ? 1.0f : 0.0f;
  st = a.matmul(ds->handle, sc.desc, &alpha, pb, sc.la, pa, sc.lb, &beta, pd, sc.ld, pd, sc.ld, &chosen, workspace,
                kWorkspace, 0);
  if (st != 0) return lt_fail(st, "cublasLtMatmul");
  if (p.M * p.N > 0)
    unpack_kernel<<<grid_for(p.M * p.N), 256>>>(pd, ldn, p.M, p.N, ed, static_cast<uint8_t*>(p.d), p.d_s0, p.d_s1);
  if ((ce = cudaGetLastError()) != cudaSuccess) return cuda_fail(ce, "cuBLASLt unpacking");
  // The buffers are freed at the end of this scope: finish the queued work first.
  if ((ce = cudaDeviceSynchronize()) != cudaSuccess) return cuda_fail(ce, "cublasLtMatmul");
  char buf[256];
  std::snprintf(buf, sizeof buf, "algo=%u tile=%u stages=%u splitk=%u reduction=%u swizzle=%u custom=%u lt=%zu",
                cfg(a, chosen, kCfgId), cfg(a, chosen, kCfgTile), cfg(a, chosen, kCfgStages), cfg(a, chosen, kCfgSplitK),
                cfg(a, chosen, kCfgReduction), cfg(a, chosen, kCfgSwizzle), cfg(a, chosen, kCfgCustom), a.version());
  *algo = buf;
  return GO_OK;
}

}  // namespace go_cublaslt
