// The gemm_oracle.h C ABI for the CUDA SM90 backend: device discovery ("CUDA not available" instead of a crash),
// the allocation registry that every tensor argument is checked against, argument validation, and the mapping of
// each DeepGEMM family onto the kernels in sm90_gemm.cu / sm90_hc_mqa.cu. Nothing here aborts: every CUDA call
// and every launch is checked and turned into a status with a thread-local message.
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "../gemm_oracle.h"
#include "gemm_oracle_cuda_ext.h"
#include "cublaslt.h"
#include "jit.h"
#include "quantize.h"
#include "sm90_fast.h"
#include "sm90_params.h"

using go_sm90::GemmParams;
using go_sm90::Mat;

namespace {

thread_local std::string t_err;

int32_t fail(int32_t status, const char* fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  t_err = buf;
  return status;
}

int32_t cuda_fail(cudaError_t e, const char* what) {
  return fail(GO_ERR_DEVICE, "%s: CUDA error %d (%s): %s", what, static_cast<int>(e), cudaGetErrorName(e),
              cudaGetErrorString(e));
}

#define GO_CUDA(call, what)                          \
  do {                                               \
    const cudaError_t go_e_ = (call);                \
    if (go_e_ != cudaSuccess) return cuda_fail(go_e_, what); \
  } while (0)

#define GO_TRY(expr)                \
  do {                              \
    const int32_t go_s_ = (expr);   \
    if (go_s_ != GO_OK) return go_s_; \
  } while (0)

// ---- availability and devices ---------------------------------------------------------------------------------

std::once_flag g_once;
int32_t g_avail = GO_OK;
std::string g_avail_msg;
int g_ndev = 0;
std::string g_dev_name;

void init_cuda() {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    g_avail = GO_ERR_NOT_AVAILABLE;
    g_avail_msg = std::string("CUDA not available: ") + cudaGetErrorString(e);
    cudaGetLastError();
    return;
  }
  if (n == 0) {
    g_avail = GO_ERR_NOT_AVAILABLE;
    g_avail_msg = "CUDA not available: no CUDA device is visible";
    return;
  }
  for (int d = 0; d < n; ++d) {
    cudaDeviceProp prop;
    if (cudaGetDeviceProperties(&prop, d) != cudaSuccess) {
      g_avail = GO_ERR_NOT_AVAILABLE;
      g_avail_msg = "CUDA not available: cannot read the properties of device " + std::to_string(d);
      return;
    }
    if (prop.major != 9 || prop.minor != 0) {
      g_avail = GO_ERR_NOT_AVAILABLE;
      g_avail_msg = "CUDA not available: device " + std::to_string(d) + " (" + prop.name + ") has compute capability " +
                    std::to_string(prop.major) + "." + std::to_string(prop.minor) +
                    "; this backend is built for sm_90a (Hopper) only";
      return;
    }
    if (d == 0) g_dev_name = prop.name;
  }
  g_ndev = n;
}

int32_t ensure_cuda() {
  std::call_once(g_once, init_cuda);
  if (g_avail != GO_OK) return fail(g_avail, "%s", g_avail_msg.c_str());
  return GO_OK;
}

thread_local int t_dev = -1;
std::atomic<int> g_dev{0};

int current_device() { return t_dev >= 0 ? t_dev : g_dev.load(); }

// Makes the calling thread's current CUDA device the one selected through go_set_device.
int32_t bind_device() {
  GO_TRY(ensure_cuda());
  GO_CUDA(cudaSetDevice(current_device()), "cudaSetDevice");
  return GO_OK;
}

// ---- allocation registry ----------------------------------------------------------------------------------------

struct Alloc {
  uint64_t size;
  int device;
};
std::mutex g_mu;
std::map<uintptr_t, Alloc> g_allocs;

// True when [p, p + bytes) lies inside one live allocation of the current device.
bool in_registry(const void* p, uint64_t bytes, int device) {
  const uintptr_t a = reinterpret_cast<uintptr_t>(p);
  std::lock_guard<std::mutex> lock(g_mu);
  auto it = g_allocs.upper_bound(a);
  if (it == g_allocs.begin()) return false;
  --it;
  if (it->second.device != device) return false;
  const uint64_t off = a - it->first;
  return off <= it->second.size && bytes <= it->second.size - off;
}

// ---- tensors ----------------------------------------------------------------------------------------------------

int elem_size(int32_t dt) {
  switch (dt) {
    case GO_F32:
    case GO_I32:
      return 4;
    case GO_BF16:
    case GO_F16:
      return 2;
    case GO_E4M3:
    case GO_E5M2:
    case GO_UE8M0:
    case GO_U8:
    case GO_I8:
      return 1;
    case GO_I64:
      return 8;
    default:
      return 0;
  }
}

const char* dtype_name(int32_t dt) {
  static const char* names[] = {"f32", "bf16", "f16", "e4m3", "e5m2", "ue8m0", "i32", "i64", "u8", "i8"};
  return dt >= 0 && dt <= 9 ? names[dt] : "unknown";
}

struct TV {
  bool present = false;
  char* data = nullptr;
  int32_t dtype = -1;
  int ndim = 0;
  int64_t shape[4] = {0, 0, 0, 0};
  int64_t strides[4] = {0, 0, 0, 0};
  uint64_t bytes = 0;  // extent in bytes from data (0 when empty)
  int64_t dim(int i) const { return shape[i < 0 ? ndim + i : i]; }
  int64_t stride(int i) const { return strides[i < 0 ? ndim + i : i]; }
  int64_t numel() const {
    int64_t n = 1;
    for (int i = 0; i < ndim; ++i) n *= shape[i];
    return n;
  }
};

// Validates a tensor descriptor: presence, dtype, rank, non-negative shape/strides, alignment, and that its byte
// extent lies in one live allocation of the current device.
int32_t check_tensor(const go_tensor* t, const char* name, bool optional, std::initializer_list<int32_t> dtypes,
                     int ndim_min, int ndim_max, TV& out) {
  out = TV();
  if (t == nullptr || t->data == nullptr) {
    if (optional) return GO_OK;
    return fail(GO_ERR_INVALID_ARGUMENT, "%s is required (got a null tensor)", name);
  }
  bool ok = false;
  std::string allowed;
  for (int32_t d : dtypes) {
    ok = ok || d == t->dtype;
    allowed += (allowed.empty() ? "" : "|") + std::string(dtype_name(d));
  }
  if (!ok) return fail(GO_ERR_INVALID_ARGUMENT, "%s: dtype %s is not accepted (expected %s)", name, dtype_name(t->dtype), allowed.c_str());
  if (t->ndim < ndim_min || t->ndim > ndim_max)
    return fail(GO_ERR_INVALID_ARGUMENT, "%s: ndim %d, expected %d..%d", name, t->ndim, ndim_min, ndim_max);
  out.present = true;
  out.data = static_cast<char*>(t->data);
  out.dtype = t->dtype;
  out.ndim = t->ndim;
  const int es = elem_size(t->dtype);
  unsigned __int128 last = 0;
  bool empty = false;
  for (int i = 0; i < t->ndim; ++i) {
    if (t->shape[i] < 0 || t->strides[i] < 0)
      return fail(GO_ERR_INVALID_ARGUMENT, "%s: negative shape or stride in dim %d", name, i);
    if (t->shape[i] > (int64_t(1) << 40) || t->strides[i] > (int64_t(1) << 40))
      return fail(GO_ERR_INVALID_ARGUMENT, "%s: shape or stride of dim %d is too large", name, i);
    out.shape[i] = t->shape[i];
    out.strides[i] = t->strides[i];
    if (t->shape[i] == 0) empty = true;
    else last += static_cast<unsigned __int128>(t->shape[i] - 1) * static_cast<uint64_t>(t->strides[i]);
  }
  if (reinterpret_cast<uintptr_t>(t->data) % es != 0)
    return fail(GO_ERR_INVALID_ARGUMENT, "%s: data %p is not aligned to its %d-byte elements", name, t->data, es);
  const unsigned __int128 bytes = empty ? 0 : (last + 1) * es;
  if (bytes > (static_cast<unsigned __int128>(1) << 50)) return fail(GO_ERR_OUT_OF_BOUNDS, "%s: extent too large", name);
  out.bytes = static_cast<uint64_t>(bytes);
  if (!in_registry(t->data, out.bytes, current_device()))
    return fail(GO_ERR_OUT_OF_BOUNDS,
                "%s: [%p, +%llu bytes) does not lie inside one live go_alloc allocation of device %d", name, t->data,
                static_cast<unsigned long long>(out.bytes), current_device());
  return GO_OK;
}

int32_t expect_shape(const TV& t, const char* name, std::initializer_list<int64_t> shape) {
  int i = 0;
  std::string want, got;
  bool ok = static_cast<int>(shape.size()) == t.ndim;
  for (int64_t s : shape) {
    want += (i ? "," : "") + std::to_string(s);
    if (i < t.ndim && t.shape[i] != s) ok = false;
    ++i;
  }
  for (int j = 0; j < t.ndim; ++j) got += (j ? "," : "") + std::to_string(t.shape[j]);
  if (!ok) return fail(GO_ERR_INVALID_ARGUMENT, "%s: shape [%s], expected [%s]", name, got.c_str(), want.c_str());
  return GO_OK;
}

bool overlaps(const TV& x, const TV& y) {
  if (!x.present || !y.present || x.bytes == 0 || y.bytes == 0) return false;
  const uintptr_t a0 = reinterpret_cast<uintptr_t>(x.data), b0 = reinterpret_cast<uintptr_t>(y.data);
  return a0 < b0 + y.bytes && b0 < a0 + x.bytes;
}

// D must not overlap any input; C may be D exactly (same data, shape and strides) or disjoint from it.
int32_t check_no_alias(const TV& d, const TV* c, std::initializer_list<std::pair<const TV*, const char*>> inputs) {
  for (auto& in : inputs)
    if (overlaps(d, *in.first)) return fail(GO_ERR_INVALID_ARGUMENT, "d overlaps %s", in.second);
  if (c != nullptr && c->present && overlaps(d, *c)) {
    bool same = c->data == d.data && c->ndim == d.ndim;
    for (int i = 0; same && i < d.ndim; ++i) same = c->shape[i] == d.shape[i] && c->strides[i] == d.strides[i];
    if (!same) return fail(GO_ERR_INVALID_ARGUMENT, "c overlaps d without being exactly d");
  }
  return GO_OK;
}

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

template <typename T>
int32_t copy_to_host(const TV& t, std::vector<T>& out, const char* name) {
  // Reads a 1-D or 2-D (row-major walk) int tensor into host memory, honouring strides.
  const int64_t n = t.numel();
  out.assign(static_cast<size_t>(n), T());
  if (n == 0) return GO_OK;
  std::vector<T> raw(static_cast<size_t>(t.bytes / sizeof(T)));
  GO_CUDA(cudaMemcpy(raw.data(), t.data, raw.size() * sizeof(T), cudaMemcpyDeviceToHost), name);
  int64_t idx = 0;
  if (t.ndim == 1) {
    for (int64_t i = 0; i < t.shape[0]; ++i) out[idx++] = raw[i * t.strides[0]];
  } else {
    for (int64_t i = 0; i < t.shape[0]; ++i)
      for (int64_t j = 0; j < t.shape[1]; ++j) out[idx++] = raw[i * t.strides[0] + j * t.strides[1]];
  }
  return GO_OK;
}

Mat mat2(const TV& t) {  // [rows, cols] or [batch, rows, cols]
  Mat m;
  m.p = t.data;
  m.s_row = t.stride(-2);
  m.s_col = t.stride(-1);
  m.s_batch = t.ndim >= 3 ? t.stride(-3) : 0;
  return m;
}

Mat mat_none() {
  Mat m;
  m.p = nullptr;
  m.s_row = m.s_col = m.s_batch = 0;
  return m;
}

GemmParams params_zero() {
  GemmParams p;
  std::memset(&p, 0, sizeof p);
  p.gran_a = p.gran_b = 1;
  p.mk_align = 128;
  p.batch = 1;
  return p;
}

// GO_CUDA_ASYNC=1 (benchmarks): calls return without synchronising; go_synchronize reports their faults.
bool async_calls() {
  static const bool async = [] {
    const char* v = std::getenv("GO_CUDA_ASYNC");
    return v != nullptr && std::strcmp(v, "1") == 0;
  }();
  return async;
}

int32_t launch_status(cudaError_t e, const char* what) {
  if (e != cudaSuccess) return cuda_fail(e, what);
  // Surface asynchronous faults of this call (illegal address, ...) as this call's status. GO_CUDA_ASYNC=1 (benchmarks)
  // leaves that to go_synchronize.
  if (async_calls()) return GO_OK;
  const cudaError_t s = cudaDeviceSynchronize();
  if (s != cudaSuccess) return cuda_fail(s, what);
  return GO_OK;
}

int32_t need_model(int32_t model, std::initializer_list<int32_t> ok, const char* family) {
  if (model == GO_MODEL_DEFAULT) return GO_OK;
  for (int32_t m : ok)
    if (m == model) return GO_OK;
  if (model == GO_MODEL_SM100_1D1D)  // the tcgen05 model: another architecture, named (issue 28)
    return fail(GO_ERR_UNSUPPORTED, "%s: model sm100_1d1d needs SM100 (Blackwell): block-scaled tcgen05 MMA with UE8M0 "
                "scales in the unit; this backend runs sm_90a", family);
  return fail(GO_ERR_UNSUPPORTED, "%s: model %s (%d) is not produced by the CUDA SM90 backend", family, go_model_name(model),
              model);
}

// Shared FP8 checks: operand/scale dtypes, the SM90 recipe, scale shapes. a/b may carry `lead` leading dims.
int32_t check_fp8_scales(const TV& sfa, const TV& sfb, int64_t M, int64_t N, int64_t K, int32_t gam, int32_t gak,
                         int32_t gbm, int32_t gbk, int lead_a, int64_t lead_a_n, int lead_b, int64_t lead_b_n) {
  if (gak != 128 || gbk != 128)
    return fail(GO_ERR_UNSUPPORTED, "SM90 FP8 models need gran_a_k = gran_b_k = 128 (got %d, %d)", gak, gbk);
  if (gam < 1 || gbm < 1) return fail(GO_ERR_INVALID_ARGUMENT, "scale granularities must be >= 1 (got %d, %d)", gam, gbm);
  if (gbm % 128 != 0 && 128 % gbm != 0)
    return fail(GO_ERR_UNSUPPORTED, "gran_b_mn %d must divide 128 or be a multiple of 128", gbm);
  const int64_t kb = ceil_div(K, 128);
  if (sfa.ndim != 2 + lead_a || sfb.ndim != 2 + lead_b)
    return fail(GO_ERR_INVALID_ARGUMENT, "sfa/sfb: ndim %d/%d, expected %d/%d", sfa.ndim, sfb.ndim, 2 + lead_a, 2 + lead_b);
  if (sfa.dim(-2) != ceil_div(M, gam) || sfa.dim(-1) != kb || (lead_a && sfa.shape[0] != lead_a_n))
    return fail(GO_ERR_INVALID_ARGUMENT, "sfa: shape does not match [%s%lld, %lld]", lead_a ? "G, " : "",
                static_cast<long long>(ceil_div(M, gam)), static_cast<long long>(kb));
  if (sfb.dim(-2) != ceil_div(N, gbm) || sfb.dim(-1) != kb || (lead_b && sfb.shape[0] != lead_b_n))
    return fail(GO_ERR_INVALID_ARGUMENT, "sfb: shape does not match [%s%lld, %lld]", lead_b ? "G, " : "",
                static_cast<long long>(ceil_div(N, gbm)), static_cast<long long>(kb));
  return GO_OK;
}

void set_scales(GemmParams& p, const TV& sfa, const TV& sfb, int32_t gam, int32_t gbm) {
  p.sfa = mat2(sfa);
  p.sfb = mat2(sfb);
  p.sfa_ue8m0 = sfa.dtype == GO_UE8M0;
  p.sfb_ue8m0 = sfb.dtype == GO_UE8M0;
  p.gran_a = gam;
  p.gran_b = gbm;
}

int out_kind(const TV& d, const TV& c, bool fp8_model) {
  if (d.dtype == GO_F32) return c.present ? go_sm90::kOutF32AddC : go_sm90::kOutF32;
  if (!c.present) return go_sm90::kOutBf16;
  return fp8_model ? go_sm90::kOutBf16AddCOnce : go_sm90::kOutBf16AddC;
}

// The fields every (m, k) x (n, k) GEMM launch shares: mode, sizes, the A / B / D views, C (or none), no scales, and
// the output kind (fp8: the FP8 models' C handling).
GemmParams gemm_params(int mode, int64_t M, int64_t N, int64_t K, int64_t batch, const TV& a, const TV& b, const TV& d,
                       const TV& c, bool fp8) {
  GemmParams p = params_zero();
  p.mode = mode;
  p.M = M;
  p.N = N;
  p.K = K;
  p.batch = static_cast<int>(batch);
  p.a = mat2(a);
  p.b = mat2(b);
  p.sfa = mat_none();
  p.sfb = mat_none();
  p.d = mat2(d);
  p.c = c.present ? mat2(c) : mat_none();
  p.out_kind = out_kind(d, c, fp8);
  return p;
}

// The fast path (sm90_fp8_fast.cu) takes K-major A and B with 16-byte aligned rows, f32 scales with gran_a_mn = 1 and
// gran_b_mn = 128, and BF16 output without C. GO_CUDA_KERNEL=simple forces the simple kernel (for A/B checks).
bool fast_allowed() {
  const char* e = std::getenv("GO_CUDA_KERNEL");
  return e == nullptr || std::strcmp(e, "simple") != 0;
}

bool kmajor16(const TV& t) {
  return t.stride(-1) == 1 && t.stride(-2) % 16 == 0 && reinterpret_cast<uintptr_t>(t.data) % 16 == 0 &&
         t.dim(-1) % 16 == 0 && t.dim(-1) < (int64_t(1) << 31) && t.dim(-2) < (int64_t(1) << 31);
}

bool fast_fp8_ok(const TV& a, const TV& b, const TV& sfa, const TV& sfb, const TV& d, int32_t gam, int32_t gbm) {
  return fast_allowed() && kmajor16(a) && kmajor16(b) && sfa.dtype == GO_F32 && sfb.dtype == GO_F32 && gam == 1 &&
         gbm == 128 && d.dtype == GO_BF16 && d.stride(-1) == 1;
}

go_sm90::FastParams fast_params(int mode, int64_t M, int64_t N, int64_t K, int64_t G, const TV& sfa, const TV& sfb,
                                const TV& d) {
  go_sm90::FastParams f;
  std::memset(&f, 0, sizeof f);
  f.mode = mode;
  f.M = static_cast<int>(M);
  f.N = static_cast<int>(N);
  f.K = static_cast<int>(K);
  f.G = static_cast<int>(G);
  f.sfa = reinterpret_cast<const float*>(sfa.data);
  f.sfa_s_row = sfa.stride(-2);
  f.sfa_s_kb = sfa.stride(-1);
  f.sfa_s_batch = sfa.ndim == 3 ? sfa.strides[0] : 0;
  // MN-major SFA with 16-byte aligned columns: the producer copies 4 rows per 16-byte cp.async.
  f.sfa_vec = f.sfa_s_row == 1 && f.sfa_s_kb % 4 == 0 && f.sfa_s_batch % 4 == 0 &&
              reinterpret_cast<uintptr_t>(sfa.data) % 16 == 0;
  f.sfb = reinterpret_cast<const float*>(sfb.data);
  f.sfb_s_row = sfb.stride(-2);
  f.sfb_s_kb = sfb.stride(-1);
  f.sfb_s_batch = sfb.ndim == 3 ? sfb.strides[0] : 0;
  f.d = reinterpret_cast<__nv_bfloat16*>(d.data);
  f.d_s_row = d.stride(-2);
  f.d_s_batch = d.ndim == 3 ? d.strides[0] : 0;
  f.mk_align = 128;
  return f;
}

// The index tensors that grouped calls checked on the device (grouped_gate.h): the first bad entry found since the
// last look, as this call's error. Called once the device has finished (launch_status synchronised, or
// go_synchronize).
int32_t gate_status(const char* what) {
  std::string msg;
  const cudaError_t e = go_sm90::gate_take_error(&msg);
  if (e != cudaSuccess) return cuda_fail(e, what);
  if (!msg.empty()) return fail(GO_ERR_INVALID_ARGUMENT, "%s", msg.c_str());
  return GO_OK;
}

// Runs the fast kernel when the tensor maps can be built; *done = false means "use the simple kernel".
int32_t run_fast(const go_sm90::FastParams& f, const TV& a, int64_t a_rows, const TV& b, int64_t b_rows,
                 const char* what, bool* done) {
  std::string err;
  const cudaError_t e =
      go_sm90::launch_fp8_gemm_fast(f, a.data, a_rows, a.stride(-2), b.data, b_rows, b.stride(-2), 0, done, &err);
  if (!err.empty()) {
    *done = true;
    return fail(e == cudaErrorInvalidValue ? GO_ERR_INVALID_ARGUMENT : GO_ERR_DEVICE, "%s: %s", what, err.c_str());
  }
  if (!*done) return GO_OK;
  GO_TRY(launch_status(e, what));
  return async_calls() ? GO_OK : gate_status(what);
}

// The entries of an index tensor on the host, by the device check's rules and in its words (grouped_gate.h).
int32_t check_index_entries(const std::vector<int32_t>& h, go_sm90::GateKind kind, int64_t M, int64_t G) {
  for (size_t i = 0; i < h.size(); ++i) {
    if (go_sm90::gate_entry_bad(kind, h[i], kind == go_sm90::kGatePsum && i > 0 ? h[i - 1] : 0, M, G)) {
      const std::string msg = go_sm90::gate_message(kind, static_cast<int64_t>(i), h[i], go_sm90::gate_bound(kind, M, G));
      return fail(GO_ERR_INVALID_ARGUMENT, "%s", msg.c_str());
    }
  }
  return GO_OK;
}

// The shape of an m-grouped layout and its mk_alignment (no entry is read).
int32_t check_grouped_shape(const TV& gl, int64_t M, int64_t G, bool psum, int32_t mk) {
  if (mk <= 0 || mk % 64 != 0)
    return fail(GO_ERR_UNSUPPORTED, "mk_alignment %d: the SM90 backend needs a positive multiple of 64", mk);
  if (gl.ndim != 1) return fail(GO_ERR_INVALID_ARGUMENT, "grouped_layout must be 1-D");
  if (!psum && gl.shape[0] != M)
    return fail(GO_ERR_INVALID_ARGUMENT, "grouped_layout: %lld entries, expected M = %lld", (long long)gl.shape[0], (long long)M);
  if (psum && gl.shape[0] != G)
    return fail(GO_ERR_INVALID_ARGUMENT, "grouped_layout (psum): %lld entries, expected G = %lld", (long long)gl.shape[0], (long long)G);
  return GO_OK;
}

// Host validation of an m-grouped layout's entries (the simple kernels' path; the fast kernels' is on the device,
// grouped_gate.h, with the same rules and messages).
int32_t check_grouped_layout(const TV& gl, int64_t M, int64_t G, bool psum, int32_t mk) {
  GO_TRY(check_grouped_shape(gl, M, G, psum, mk));
  std::vector<int32_t> h;
  GO_TRY(copy_to_host(gl, h, "grouped_layout"));
  return check_index_entries(h, psum ? go_sm90::kGatePsum : go_sm90::kGateClassic, M, G);
}

int32_t check_masked_m_shape(const TV& mm, int64_t G) {
  if (mm.ndim != 1 || mm.shape[0] != G) return fail(GO_ERR_INVALID_ARGUMENT, "masked_m: expected [G = %lld]", (long long)G);
  return GO_OK;
}

int32_t check_masked_m(const TV& mm, int64_t G, int64_t Mmax) {
  GO_TRY(check_masked_m_shape(mm, G));
  std::vector<int32_t> h;
  GO_TRY(copy_to_host(mm, h, "masked_m"));
  return check_index_entries(h, go_sm90::kGateMasked, Mmax, G);
}

int32_t read_ks(const TV& ks, std::vector<int32_t>& h) {
  if (ks.ndim != 1) return fail(GO_ERR_INVALID_ARGUMENT, "ks must be 1-D");
  GO_TRY(copy_to_host(ks, h, "ks"));
  for (size_t i = 0; i < h.size(); ++i)
    if (h[i] < 0) return fail(GO_ERR_INVALID_ARGUMENT, "ks[%zu] = %d is negative", i, h[i]);
  return GO_OK;
}

// FP8 GEMM core shared by go_fp8_gemm and go_fp8_gemm_skip_head_mid.
int32_t fp8_gemm_impl(const go_tensor* a_, const go_tensor* sfa_, const go_tensor* b_, const go_tensor* sfb_,
                      const go_tensor* c_, const go_tensor* d_, int32_t gam, int32_t gak, int32_t gbm, int32_t gbk,
                      int32_t model, int32_t left, int32_t mid, int32_t right, const char* family) {
  GO_TRY(bind_device());
  GO_TRY(need_model(model, {GO_MODEL_SM90_1D2D, GO_MODEL_SM90_1D1D}, family));
  TV a, sfa, b, sfb, c, d;
  GO_TRY(check_tensor(a_, "a", false, {GO_E4M3}, 2, 3, a));
  GO_TRY(check_tensor(b_, "b", false, {GO_E4M3}, a.ndim, a.ndim, b));
  GO_TRY(check_tensor(sfa_, "sfa", false, {GO_F32, GO_UE8M0}, 2, 3, sfa));
  GO_TRY(check_tensor(sfb_, "sfb", false, {GO_F32, GO_UE8M0}, 2, 3, sfb));
  GO_TRY(check_tensor(d_, "d", false, {GO_BF16, GO_F32}, a.ndim, a.ndim, d));
  GO_TRY(check_tensor(c_, "c", true, {GO_BF16, GO_F32}, a.ndim, a.ndim, c));
  const int lead = a.ndim - 2;
  const int64_t Bt = lead ? a.shape[0] : 1;
  const int64_t M = a.dim(-2), K = a.dim(-1), N = b.dim(-2);
  if (b.dim(-1) != K) return fail(GO_ERR_INVALID_ARGUMENT, "b: K = %lld, a has K = %lld", (long long)b.dim(-1), (long long)K);
  if (lead && b.shape[0] != Bt) return fail(GO_ERR_INVALID_ARGUMENT, "b: batch %lld != a batch %lld", (long long)b.shape[0], (long long)Bt);
  int64_t Nd = N;
  if (left + right != 0 || mid != 0) {
    if (left < 0 || mid < 0 || right < 0 || left + right <= 0 || N % (left + right) != 0)
      return fail(GO_ERR_INVALID_ARGUMENT, "head splits (%d, %d, %d) do not divide n = %lld", left, mid, right, (long long)N);
    Nd = N + N / (left + right) * mid;
  }
  if (lead) GO_TRY(expect_shape(d, "d", {Bt, M, Nd}));
  else GO_TRY(expect_shape(d, "d", {M, Nd}));
  if (c.present) {
    if (c.dtype != d.dtype) return fail(GO_ERR_INVALID_ARGUMENT, "c: dtype %s differs from d's %s", dtype_name(c.dtype), dtype_name(d.dtype));
    if (lead) GO_TRY(expect_shape(c, "c", {Bt, M, Nd}));
    else GO_TRY(expect_shape(c, "c", {M, Nd}));
  }
  GO_TRY(check_fp8_scales(sfa, sfb, M, N, K, gam, gak, gbm, gbk, lead, Bt, lead, Bt));
  GO_TRY(check_no_alias(d, &c, {{&a, "a"}, {&b, "b"}, {&sfa, "sfa"}, {&sfb, "sfb"}}));
  if (M == 0 || N == 0 || Bt == 0) return GO_OK;
  GemmParams p = gemm_params(go_sm90::kModeNormal, M, N, K, Bt, a, b, d, c, true);
  set_scales(p, sfa, sfb, gam, gbm);
  p.head_l = left;
  p.head_mid = mid;
  p.head_r = right;
  if (!lead && !c.present && left + right == 0 && mid == 0 && K > 0 && fast_fp8_ok(a, b, sfa, sfb, d, gam, gbm)) {
    bool done = false;
    GO_TRY(run_fast(fast_params(go_sm90::kFastNormal, M, N, K, 1, sfa, sfb, d), a, M, b, N, family, &done));
    if (done) return GO_OK;
  }
  return launch_status(go_sm90::launch_fp8_gemm(p, 0), family);
}

}  // namespace

// ==== library ========================================================================================================

extern "C" {

int32_t go_abi_version(void) { return GO_ABI_VERSION; }

const char* go_last_error(void) { return t_err.c_str(); }

int32_t go_backend_info(char* buf, uint64_t cap, uint64_t* needed) {
  std::call_once(g_once, init_cuda);
  std::string j = "{\"name\":\"cuda-sm90\",\"abi\":" + std::to_string(GO_ABI_VERSION) + ",";
  if (g_avail == GO_OK) {
    j += "\"available\":true,\"device\":\"" + g_dev_name + "\",\"arch\":\"sm_90a\",\"devices\":" + std::to_string(g_ndev) + ",";
  } else {
    std::string msg;
    for (char ch : g_avail_msg) msg += (ch == '"' || ch == '\\') ? ' ' : ch;
    j += "\"available\":false,\"error\":\"" + msg + "\",\"device\":null,\"arch\":\"sm_90a\",\"devices\":0,";
  }
  j +=
      "\"models\":{\"fp8_gemm\":\"sm90_1d2d\",\"m_grouped_fp8_gemm_contiguous\":\"sm90_1d2d\","
      "\"m_grouped_fp8_gemm_masked\":\"sm90_1d2d\",\"k_grouped_fp8_gemm\":\"sm90_1d1d\",\"bf16_gemm\":\"bf16\","
      "\"m_grouped_bf16_gemm_contiguous\":\"bf16\",\"m_grouped_bf16_gemm_masked\":\"bf16\",\"k_grouped_bf16_gemm\":\"bf16\","
      "\"fp8_gemm_skip_head_mid\":\"sm90_1d2d\",\"tf32_hc_prenorm_gemm\":\"tf32\",\"fp8_mqa_logits\":\"sm90_mqa\","
      "\"fp8_paged_mqa_logits\":\"sm90_mqa\",\"quantize\":\"gpu\",\"paged_mqa_logits_metadata\":\"sm90_mqa\","
      "\"cublaslt_gemm\":\"cublaslt\"},"
      "\"supported_models\":{\"fp8_gemm\":[\"sm90_1d2d\",\"sm90_1d1d\"],"
      "\"m_grouped_fp8_gemm_contiguous\":[\"sm90_1d2d\",\"sm90_1d1d\"],"
      "\"m_grouped_fp8_gemm_masked\":[\"sm90_1d2d\",\"sm90_1d1d\"],\"k_grouped_fp8_gemm\":[\"sm90_1d1d\",\"sm90_1d2d\"],"
      "\"bf16_gemm\":[\"bf16\"],\"m_grouped_bf16_gemm_contiguous\":[\"bf16\"],\"m_grouped_bf16_gemm_masked\":[\"bf16\"],"
      "\"k_grouped_bf16_gemm\":[\"bf16\"],\"fp8_gemm_skip_head_mid\":[\"sm90_1d2d\",\"sm90_1d1d\"],"
      "\"tf32_hc_prenorm_gemm\":[\"tf32\"],\"fp8_mqa_logits\":[\"sm90_mqa\"],\"fp8_paged_mqa_logits\":[\"sm90_mqa\"],"
      "\"quantize\":[\"gpu\",\"cpu\"],\"paged_mqa_logits_metadata\":[\"sm90_mqa\"],"
      "\"cublaslt_gemm\":[\"cublaslt\"]}}";
  if (needed != nullptr) *needed = j.size() + 1;
  if (buf == nullptr || cap < j.size() + 1) {
    if (buf == nullptr && cap == 0) return GO_OK;
    return fail(GO_ERR_INVALID_ARGUMENT, "go_backend_info: buffer of %llu bytes, %zu needed",
                static_cast<unsigned long long>(cap), j.size() + 1);
  }
  std::memcpy(buf, j.c_str(), j.size() + 1);
  return GO_OK;
}

// ==== devices and memory =============================================================================================

int32_t go_device_count(int32_t* count) {
  if (count == nullptr) return fail(GO_ERR_INVALID_ARGUMENT, "go_device_count: count is null");
  *count = 0;
  GO_TRY(ensure_cuda());
  *count = g_ndev;
  return GO_OK;
}

int32_t go_set_device(int32_t device) {
  GO_TRY(ensure_cuda());
  if (device < 0 || device >= g_ndev)
    return fail(GO_ERR_INVALID_ARGUMENT, "go_set_device: device %d is not in [0, %d)", device, g_ndev);
  GO_CUDA(cudaSetDevice(device), "cudaSetDevice");
  t_dev = device;
  g_dev.store(device);
  return GO_OK;
}

int32_t go_alloc(uint64_t bytes, void** out) {
  if (out == nullptr) return fail(GO_ERR_INVALID_ARGUMENT, "go_alloc: out is null");
  *out = nullptr;
  if (bytes == 0) return fail(GO_ERR_INVALID_ARGUMENT, "go_alloc: bytes must be > 0");
  GO_TRY(bind_device());
  void* p = nullptr;
  const cudaError_t e = cudaMalloc(&p, bytes);
  if (e == cudaErrorMemoryAllocation) {
    cudaGetLastError();
    return fail(GO_ERR_OUT_OF_MEMORY, "go_alloc: cudaMalloc of %llu bytes failed (out of device memory)",
                static_cast<unsigned long long>(bytes));
  }
  if (e != cudaSuccess) return cuda_fail(e, "go_alloc: cudaMalloc");
  const cudaError_t z = cudaMemset(p, 0, bytes);
  const cudaError_t s = z == cudaSuccess ? cudaDeviceSynchronize() : z;
  if (s != cudaSuccess) {
    cudaFree(p);
    return cuda_fail(s, "go_alloc: cudaMemset");
  }
  {
    std::lock_guard<std::mutex> lock(g_mu);
    g_allocs[reinterpret_cast<uintptr_t>(p)] = Alloc{bytes, current_device()};
  }
  *out = p;
  return GO_OK;
}

int32_t go_free(void* ptr) {
  if (ptr == nullptr) return GO_OK;
  GO_TRY(ensure_cuda());
  int dev;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    auto it = g_allocs.find(reinterpret_cast<uintptr_t>(ptr));
    if (it == g_allocs.end()) return fail(GO_ERR_INVALID_ARGUMENT, "go_free: %p was not returned by go_alloc (or was freed)", ptr);
    dev = it->second.device;
    g_allocs.erase(it);
  }
  int prev = 0;
  GO_CUDA(cudaGetDevice(&prev), "cudaGetDevice");
  GO_CUDA(cudaSetDevice(dev), "cudaSetDevice");
  const cudaError_t e = cudaFree(ptr);
  cudaSetDevice(prev);
  if (e != cudaSuccess) return cuda_fail(e, "go_free: cudaFree");
  return GO_OK;
}

}  // extern "C"

namespace {
// One host <-> device copy: `dev` must lie inside a live allocation of the current device.
int32_t copy_checked(const char* what, void* dst, const void* src, const void* dev, uint64_t bytes, cudaMemcpyKind kind) {
  if (bytes == 0) return GO_OK;
  if (dst == nullptr || src == nullptr) return fail(GO_ERR_INVALID_ARGUMENT, "%s: null pointer", what);
  GO_TRY(bind_device());
  if (!in_registry(dev, bytes, current_device()))
    return fail(GO_ERR_OUT_OF_BOUNDS, "%s: [%p, +%llu) is outside every live allocation of device %d", what, dev,
                static_cast<unsigned long long>(bytes), current_device());
  const cudaError_t e = cudaMemcpy(dst, src, bytes, kind);
  if (e != cudaSuccess) return cuda_fail(e, (std::string(what) + ": cudaMemcpy").c_str());
  return GO_OK;
}
}  // namespace

extern "C" {

int32_t go_copy_in(void* dst, const void* host_src, uint64_t bytes) {
  return copy_checked("go_copy_in", dst, host_src, dst, bytes, cudaMemcpyHostToDevice);
}

int32_t go_copy_out(void* host_dst, const void* src, uint64_t bytes) {
  return copy_checked("go_copy_out", host_dst, src, src, bytes, cudaMemcpyDeviceToHost);
}

int32_t go_synchronize(void) {
  GO_TRY(bind_device());
  GO_CUDA(cudaDeviceSynchronize(), "go_synchronize");
  // Under GO_CUDA_ASYNC=1, a grouped call's bad index tensor (checked on the device) is reported here.
  return gate_status("go_synchronize");
}

int32_t go_set_num_threads(int32_t threads) {
  (void)threads;
  return GO_OK;
}

// ==== FP8 GEMMs ======================================================================================================

int32_t go_fp8_gemm(const go_tensor* a, const go_tensor* sfa, const go_tensor* b, const go_tensor* sfb,
                    const go_tensor* c, const go_tensor* d, int32_t gran_a_mn, int32_t gran_a_k, int32_t gran_b_mn,
                    int32_t gran_b_k, int32_t model) {
  return fp8_gemm_impl(a, sfa, b, sfb, c, d, gran_a_mn, gran_a_k, gran_b_mn, gran_b_k, model, 0, 0, 0, "fp8_gemm");
}

int32_t go_fp8_gemm_skip_head_mid(const go_tensor* a, const go_tensor* sfa, const go_tensor* b, const go_tensor* sfb,
                                  const go_tensor* d, int32_t gran_a_mn, int32_t gran_a_k, int32_t gran_b_mn,
                                  int32_t gran_b_k, int32_t left, int32_t mid, int32_t right, int32_t model) {
  if (left < 0 || mid < 0 || right < 0 || left + right <= 0)
    return fail(GO_ERR_INVALID_ARGUMENT, "fp8_gemm_skip_head_mid: head splits (%d, %d, %d) are invalid", left, mid, right);
  return fp8_gemm_impl(a, sfa, b, sfb, nullptr, d, gran_a_mn, gran_a_k, gran_b_mn, gran_b_k, model, left, mid, right,
                       "fp8_gemm_skip_head_mid");
}

int32_t go_m_grouped_fp8_gemm_contiguous(const go_tensor* a_, const go_tensor* sfa_, const go_tensor* b_,
                                         const go_tensor* sfb_, const go_tensor* d_, const go_tensor* gl_,
                                         int32_t gam, int32_t gak, int32_t gbm, int32_t gbk, int32_t use_psum_layout,
                                         int32_t mk_alignment, int32_t model) {
  GO_TRY(bind_device());
  GO_TRY(need_model(model, {GO_MODEL_SM90_1D2D, GO_MODEL_SM90_1D1D}, "m_grouped_fp8_gemm_contiguous"));
  TV a, sfa, b, sfb, d, gl;
  GO_TRY(check_tensor(a_, "a", false, {GO_E4M3}, 2, 2, a));
  GO_TRY(check_tensor(b_, "b", false, {GO_E4M3}, 3, 3, b));
  GO_TRY(check_tensor(sfa_, "sfa", false, {GO_F32, GO_UE8M0}, 2, 2, sfa));
  GO_TRY(check_tensor(sfb_, "sfb", false, {GO_F32, GO_UE8M0}, 3, 3, sfb));
  GO_TRY(check_tensor(d_, "d", false, {GO_BF16, GO_F32}, 2, 2, d));
  GO_TRY(check_tensor(gl_, "grouped_layout", false, {GO_I32}, 1, 1, gl));
  const int64_t M = a.shape[0], K = a.shape[1], G = b.shape[0], N = b.shape[1];
  if (b.shape[2] != K) return fail(GO_ERR_INVALID_ARGUMENT, "b: K = %lld, a has K = %lld", (long long)b.shape[2], (long long)K);
  GO_TRY(expect_shape(d, "d", {M, N}));
  GO_TRY(check_fp8_scales(sfa, sfb, M, N, K, gam, gak, gbm, gbk, 0, 0, 1, G));
  GO_TRY(check_no_alias(d, nullptr, {{&a, "a"}, {&b, "b"}, {&sfa, "sfa"}, {&sfb, "sfb"}, {&gl, "grouped_layout"}}));
  if (use_psum_layout < 0 || use_psum_layout > 3 || use_psum_layout == 2)
    return fail(GO_ERR_INVALID_ARGUMENT, "use_psum_layout %d: expected 0, 1 or 3 (psum + ensure_zero_padding)", use_psum_layout);
  const bool psum = (use_psum_layout & 1) != 0;
  GO_TRY(check_grouped_shape(gl, M, G, psum, mk_alignment));
  if (M == 0 || N == 0 || G == 0) return check_grouped_layout(gl, M, G, psum, mk_alignment);
  GemmParams p = gemm_params((use_psum_layout & 1) ? go_sm90::kModeMGroupPsum : go_sm90::kModeMGroupClassic, M, N, K,
                             1, a, b, d, TV(), true);
  p.psum_flags = use_psum_layout;
  set_scales(p, sfa, sfb, gam, gbm);
  p.grouped_layout = reinterpret_cast<const int32_t*>(gl.data);
  p.num_groups = static_cast<int>(G);
  p.mk_align = mk_alignment;
  if (gl.strides[0] != 1) return fail(GO_ERR_UNSUPPORTED, "grouped_layout must be contiguous");
  if (K > 0 && mk_alignment % 128 == 0 && b.strides[0] == N * b.strides[1] && fast_fp8_ok(a, b, sfa, sfb, d, gam, gbm)) {
    bool done = false;
    go_sm90::FastParams f = fast_params((use_psum_layout & 1) ? go_sm90::kFastPsum : go_sm90::kFastClassic, M, N, K, G, sfa, sfb, d);
    f.gl = p.grouped_layout;
    f.psum_flags = use_psum_layout;
    f.mk_align = mk_alignment;
    f.gate_kind = psum ? go_sm90::kGatePsum : go_sm90::kGateClassic;  // the entries are checked on the device
    GO_TRY(run_fast(f, a, M, b, G * N, "m_grouped_fp8_gemm_contiguous", &done));
    if (done) return GO_OK;
  }
  GO_TRY(check_grouped_layout(gl, M, G, psum, mk_alignment));
  return launch_status(go_sm90::launch_fp8_gemm(p, 0), "m_grouped_fp8_gemm_contiguous");
}

int32_t go_m_grouped_fp8_gemm_masked(const go_tensor* a_, const go_tensor* sfa_, const go_tensor* b_,
                                     const go_tensor* sfb_, const go_tensor* d_, const go_tensor* mm_, int32_t gam,
                                     int32_t gak, int32_t gbm, int32_t gbk, int32_t model) {
  GO_TRY(bind_device());
  GO_TRY(need_model(model, {GO_MODEL_SM90_1D2D, GO_MODEL_SM90_1D1D}, "m_grouped_fp8_gemm_masked"));
  TV a, sfa, b, sfb, d, mm;
  GO_TRY(check_tensor(a_, "a", false, {GO_E4M3}, 3, 3, a));
  GO_TRY(check_tensor(b_, "b", false, {GO_E4M3}, 3, 3, b));
  GO_TRY(check_tensor(sfa_, "sfa", false, {GO_F32, GO_UE8M0}, 3, 3, sfa));
  GO_TRY(check_tensor(sfb_, "sfb", false, {GO_F32, GO_UE8M0}, 3, 3, sfb));
  GO_TRY(check_tensor(d_, "d", false, {GO_BF16, GO_F32}, 3, 3, d));
  GO_TRY(check_tensor(mm_, "masked_m", false, {GO_I32}, 1, 1, mm));
  const int64_t G = a.shape[0], Mmax = a.shape[1], K = a.shape[2], N = b.shape[1];
  if (b.shape[0] != G || b.shape[2] != K) return fail(GO_ERR_INVALID_ARGUMENT, "b: expected [G = %lld, N, K = %lld]", (long long)G, (long long)K);
  GO_TRY(expect_shape(d, "d", {G, Mmax, N}));
  GO_TRY(check_fp8_scales(sfa, sfb, Mmax, N, K, gam, gak, gbm, gbk, 1, G, 1, G));
  GO_TRY(check_no_alias(d, nullptr, {{&a, "a"}, {&b, "b"}, {&sfa, "sfa"}, {&sfb, "sfb"}, {&mm, "masked_m"}}));
  GO_TRY(check_masked_m_shape(mm, G));
  if (mm.strides[0] != 1) return fail(GO_ERR_UNSUPPORTED, "masked_m must be contiguous");
  if (G == 0 || Mmax == 0 || N == 0) return check_masked_m(mm, G, Mmax);
  GemmParams p = gemm_params(go_sm90::kModeMasked, Mmax, N, K, G, a, b, d, TV(), true);
  set_scales(p, sfa, sfb, gam, gbm);
  p.masked_m = reinterpret_cast<const int32_t*>(mm.data);
  if (K > 0 && a.strides[0] == Mmax * a.strides[1] && b.strides[0] == N * b.strides[1] &&
      fast_fp8_ok(a, b, sfa, sfb, d, gam, gbm)) {
    bool done = false;
    go_sm90::FastParams f = fast_params(go_sm90::kFastMasked, Mmax, N, K, G, sfa, sfb, d);
    f.masked_m = p.masked_m;
    f.gate_kind = go_sm90::kGateMasked;  // masked_m is checked on the device
    GO_TRY(run_fast(f, a, G * Mmax, b, G * N, "m_grouped_fp8_gemm_masked", &done));
    if (done) return GO_OK;
  }
  GO_TRY(check_masked_m(mm, G, Mmax));
  return launch_status(go_sm90::launch_fp8_gemm(p, 0), "m_grouped_fp8_gemm_masked");
}

int32_t go_k_grouped_fp8_gemm(const go_tensor* a_, const go_tensor* sfa_, const go_tensor* b_, const go_tensor* sfb_,
                              const go_tensor* c_, const go_tensor* d_, const go_tensor* ks_, int32_t layout,
                              int32_t gran_k, int32_t model) {
  GO_TRY(bind_device());
  GO_TRY(need_model(model, {GO_MODEL_SM90_1D1D, GO_MODEL_SM90_1D2D}, "k_grouped_fp8_gemm"));
  if (gran_k != 128) return fail(GO_ERR_UNSUPPORTED, "k_grouped_fp8_gemm: SM90 models need gran_k = 128 (got %d)", gran_k);
  if (layout != GO_K_GROUPED_SM90_NT_FLAT && layout != GO_K_GROUPED_SM100_TN)
    return fail(GO_ERR_INVALID_ARGUMENT, "k_grouped_fp8_gemm: unknown layout %d", layout);
  const bool flat = layout == GO_K_GROUPED_SM90_NT_FLAT;
  TV a, sfa, b, sfb, c, d, ks;
  GO_TRY(check_tensor(a_, "a", false, {GO_E4M3}, flat ? 1 : 2, flat ? 1 : 2, a));
  GO_TRY(check_tensor(b_, "b", false, {GO_E4M3}, flat ? 1 : 2, flat ? 1 : 2, b));
  GO_TRY(check_tensor(sfa_, "sfa", false, {GO_F32, GO_UE8M0}, 2, 2, sfa));
  GO_TRY(check_tensor(sfb_, "sfb", false, {GO_F32, GO_UE8M0}, 2, 2, sfb));
  GO_TRY(check_tensor(d_, "d", false, {GO_F32}, 3, 3, d));
  GO_TRY(check_tensor(c_, "c", true, {GO_F32}, 3, 3, c));
  GO_TRY(check_tensor(ks_, "ks", false, {GO_I32}, 1, 1, ks));
  const int64_t G = d.shape[0], M = d.shape[1], N = d.shape[2];
  if (ks.shape[0] != G) return fail(GO_ERR_INVALID_ARGUMENT, "ks: %lld entries, d has G = %lld", (long long)ks.shape[0], (long long)G);
  if (c.present) GO_TRY(expect_shape(c, "c", {G, M, N}));
  std::vector<int32_t> hk;
  GO_TRY(read_ks(ks, hk));
  int64_t sum_k = 0, sum_kb = 0;
  for (int32_t k : hk) {
    sum_k += k;
    sum_kb += ceil_div(k, 128);
  }
  if (flat) {
    if (a.strides[0] != 1 || b.strides[0] != 1) return fail(GO_ERR_UNSUPPORTED, "k_grouped_fp8_gemm (flat): a and b must be contiguous");
    if (a.shape[0] < M * sum_k) return fail(GO_ERR_INVALID_ARGUMENT, "a: %lld elements, M * sum(ks) = %lld", (long long)a.shape[0], (long long)(M * sum_k));
    if (b.shape[0] < N * sum_k) return fail(GO_ERR_INVALID_ARGUMENT, "b: %lld elements, N * sum(ks) = %lld", (long long)b.shape[0], (long long)(N * sum_k));
    GO_TRY(expect_shape(sfa, "sfa", {M, sum_kb}));
    GO_TRY(expect_shape(sfb, "sfb", {N, sum_kb}));
  } else {
    GO_TRY(expect_shape(a, "a", {sum_k, M}));
    GO_TRY(expect_shape(b, "b", {sum_k, N}));
    GO_TRY(expect_shape(sfa, "sfa", {sum_kb, M}));
    GO_TRY(expect_shape(sfb, "sfb", {sum_kb, N}));
  }
  GO_TRY(check_no_alias(d, &c, {{&a, "a"}, {&b, "b"}, {&sfa, "sfa"}, {&sfb, "sfb"}, {&ks, "ks"}}));
  if (G == 0 || M == 0 || N == 0) return GO_OK;
  if (G > 65535) return fail(GO_ERR_UNSUPPORTED, "k_grouped_fp8_gemm: at most 65535 groups");
  GemmParams p = params_zero();
  p.mode = flat ? go_sm90::kModeKGroupFlat : go_sm90::kModeKGroupStrided;
  p.M = M;
  p.N = N;
  p.batch = static_cast<int>(G);
  if (flat) {
    p.a = Mat{a.data, 0, 1, 0};
    p.b = Mat{b.data, 0, 1, 0};
    p.sfa = Mat{sfa.data, sfa.strides[0], sfa.strides[1], 0};
    p.sfb = Mat{sfb.data, sfb.strides[0], sfb.strides[1], 0};
  } else {
    p.a = Mat{a.data, a.strides[1], a.strides[0], 0};
    p.b = Mat{b.data, b.strides[1], b.strides[0], 0};
    p.sfa = Mat{sfa.data, sfa.strides[1], sfa.strides[0], 0};
    p.sfb = Mat{sfb.data, sfb.strides[1], sfb.strides[0], 0};
  }
  p.sfa_ue8m0 = sfa.dtype == GO_UE8M0;
  p.sfb_ue8m0 = sfb.dtype == GO_UE8M0;
  p.gran_a = 1;
  p.gran_b = 1;
  p.d = mat2(d);
  p.c = c.present ? mat2(c) : mat_none();
  p.out_kind = c.present ? go_sm90::kOutF32AddC : go_sm90::kOutF32;
  if (ks.strides[0] != 1) return fail(GO_ERR_UNSUPPORTED, "ks must be contiguous");
  p.ks = reinterpret_cast<const int32_t*>(ks.data);
  return launch_status(go_sm90::launch_fp8_gemm(p, 0), "k_grouped_fp8_gemm");
}

// ==== BF16 GEMMs =====================================================================================================

int32_t go_bf16_gemm(const go_tensor* a_, const go_tensor* b_, const go_tensor* c_, const go_tensor* d_, int32_t model) {
  GO_TRY(bind_device());
  GO_TRY(need_model(model, {GO_MODEL_BF16}, "bf16_gemm"));
  TV a, b, c, d;
  GO_TRY(check_tensor(a_, "a", false, {GO_BF16}, 2, 3, a));
  GO_TRY(check_tensor(b_, "b", false, {GO_BF16}, a.ndim, a.ndim, b));
  GO_TRY(check_tensor(d_, "d", false, {GO_BF16, GO_F32}, a.ndim, a.ndim, d));
  GO_TRY(check_tensor(c_, "c", true, {GO_BF16, GO_F32}, a.ndim, a.ndim, c));
  const int lead = a.ndim - 2;
  const int64_t Bt = lead ? a.shape[0] : 1, M = a.dim(-2), K = a.dim(-1), N = b.dim(-2);
  if (b.dim(-1) != K) return fail(GO_ERR_INVALID_ARGUMENT, "b: K = %lld, a has K = %lld", (long long)b.dim(-1), (long long)K);
  if (lead && b.shape[0] != Bt) return fail(GO_ERR_INVALID_ARGUMENT, "b: batch differs from a's");
  if (lead) GO_TRY(expect_shape(d, "d", {Bt, M, N}));
  else GO_TRY(expect_shape(d, "d", {M, N}));
  if (c.present) {
    if (c.dtype != d.dtype) return fail(GO_ERR_INVALID_ARGUMENT, "c: dtype differs from d's");
    if (lead) GO_TRY(expect_shape(c, "c", {Bt, M, N}));
    else GO_TRY(expect_shape(c, "c", {M, N}));
  }
  GO_TRY(check_no_alias(d, &c, {{&a, "a"}, {&b, "b"}}));
  if (M == 0 || N == 0 || Bt == 0) return GO_OK;
  if (Bt > 65535) return fail(GO_ERR_UNSUPPORTED, "bf16_gemm: batch > 65535");
  GemmParams p = gemm_params(go_sm90::kModeNormal, M, N, K, Bt, a, b, d, c, false);
  return launch_status(go_sm90::launch_bf16_gemm(p, 0), "bf16_gemm");
}

int32_t go_m_grouped_bf16_gemm_contiguous(const go_tensor* a_, const go_tensor* b_, const go_tensor* d_,
                                          const go_tensor* gl_, int32_t use_psum_layout, int32_t mk_alignment,
                                          int32_t model) {
  GO_TRY(bind_device());
  GO_TRY(need_model(model, {GO_MODEL_BF16}, "m_grouped_bf16_gemm_contiguous"));
  TV a, b, d, gl;
  GO_TRY(check_tensor(a_, "a", false, {GO_BF16}, 2, 2, a));
  GO_TRY(check_tensor(b_, "b", false, {GO_BF16}, 3, 3, b));
  GO_TRY(check_tensor(d_, "d", false, {GO_BF16, GO_F32}, 2, 2, d));
  GO_TRY(check_tensor(gl_, "grouped_layout", false, {GO_I32}, 1, 1, gl));
  const int64_t M = a.shape[0], K = a.shape[1], G = b.shape[0], N = b.shape[1];
  if (b.shape[2] != K) return fail(GO_ERR_INVALID_ARGUMENT, "b: K differs from a's");
  GO_TRY(expect_shape(d, "d", {M, N}));
  GO_TRY(check_no_alias(d, nullptr, {{&a, "a"}, {&b, "b"}, {&gl, "grouped_layout"}}));
  if (use_psum_layout < 0 || use_psum_layout > 3 || use_psum_layout == 2)
    return fail(GO_ERR_INVALID_ARGUMENT, "use_psum_layout %d: expected 0, 1 or 3 (psum + ensure_zero_padding)", use_psum_layout);
  GO_TRY(check_grouped_layout(gl, M, G, (use_psum_layout & 1) != 0, mk_alignment));
  if (gl.strides[0] != 1) return fail(GO_ERR_UNSUPPORTED, "grouped_layout must be contiguous");
  if (M == 0 || N == 0 || G == 0) return GO_OK;
  GemmParams p = gemm_params((use_psum_layout & 1) ? go_sm90::kModeMGroupPsum : go_sm90::kModeMGroupClassic, M, N, K,
                             1, a, b, d, TV(), false);
  p.psum_flags = use_psum_layout;
  p.grouped_layout = reinterpret_cast<const int32_t*>(gl.data);
  p.num_groups = static_cast<int>(G);
  p.mk_align = mk_alignment;
  return launch_status(go_sm90::launch_bf16_gemm(p, 0), "m_grouped_bf16_gemm_contiguous");
}

int32_t go_m_grouped_bf16_gemm_masked(const go_tensor* a_, const go_tensor* b_, const go_tensor* d_,
                                      const go_tensor* mm_, int32_t model) {
  GO_TRY(bind_device());
  GO_TRY(need_model(model, {GO_MODEL_BF16}, "m_grouped_bf16_gemm_masked"));
  TV a, b, d, mm;
  GO_TRY(check_tensor(a_, "a", false, {GO_BF16}, 3, 3, a));
  GO_TRY(check_tensor(b_, "b", false, {GO_BF16}, 3, 3, b));
  GO_TRY(check_tensor(d_, "d", false, {GO_BF16, GO_F32}, 3, 3, d));
  GO_TRY(check_tensor(mm_, "masked_m", false, {GO_I32}, 1, 1, mm));
  const int64_t G = a.shape[0], Mmax = a.shape[1], K = a.shape[2], N = b.shape[1];
  if (b.shape[0] != G || b.shape[2] != K) return fail(GO_ERR_INVALID_ARGUMENT, "b: expected [G, N, K]");
  GO_TRY(expect_shape(d, "d", {G, Mmax, N}));
  GO_TRY(check_no_alias(d, nullptr, {{&a, "a"}, {&b, "b"}, {&mm, "masked_m"}}));
  GO_TRY(check_masked_m(mm, G, Mmax));
  if (mm.strides[0] != 1) return fail(GO_ERR_UNSUPPORTED, "masked_m must be contiguous");
  if (G == 0 || Mmax == 0 || N == 0) return GO_OK;
  GemmParams p = gemm_params(go_sm90::kModeMasked, Mmax, N, K, G, a, b, d, TV(), false);
  p.masked_m = reinterpret_cast<const int32_t*>(mm.data);
  return launch_status(go_sm90::launch_bf16_gemm(p, 0), "m_grouped_bf16_gemm_masked");
}

int32_t go_k_grouped_bf16_gemm(const go_tensor* a_, const go_tensor* b_, const go_tensor* c_, const go_tensor* d_,
                               const go_tensor* ks_, int32_t model) {
  GO_TRY(bind_device());
  GO_TRY(need_model(model, {GO_MODEL_BF16}, "k_grouped_bf16_gemm"));
  TV a, b, c, d, ks;
  GO_TRY(check_tensor(a_, "a", false, {GO_BF16}, 2, 2, a));
  GO_TRY(check_tensor(b_, "b", false, {GO_BF16}, 2, 2, b));
  GO_TRY(check_tensor(d_, "d", false, {GO_F32, GO_BF16}, 3, 3, d));
  GO_TRY(check_tensor(c_, "c", true, {GO_F32, GO_BF16}, 3, 3, c));
  GO_TRY(check_tensor(ks_, "ks", false, {GO_I32}, 1, 1, ks));
  const int64_t G = d.shape[0], M = d.shape[1], N = d.shape[2];
  if (ks.shape[0] != G) return fail(GO_ERR_INVALID_ARGUMENT, "ks: expected G = %lld entries", (long long)G);
  if (c.present) {
    if (c.dtype != d.dtype) return fail(GO_ERR_INVALID_ARGUMENT, "c: dtype differs from d's");
    GO_TRY(expect_shape(c, "c", {G, M, N}));
  }
  std::vector<int32_t> hk;
  GO_TRY(read_ks(ks, hk));
  int64_t sum_k = 0;
  for (int32_t k : hk) sum_k += k;
  GO_TRY(expect_shape(a, "a", {sum_k, M}));
  GO_TRY(expect_shape(b, "b", {sum_k, N}));
  GO_TRY(check_no_alias(d, &c, {{&a, "a"}, {&b, "b"}, {&ks, "ks"}}));
  if (ks.strides[0] != 1) return fail(GO_ERR_UNSUPPORTED, "ks must be contiguous");
  if (G == 0 || M == 0 || N == 0) return GO_OK;
  if (G > 65535) return fail(GO_ERR_UNSUPPORTED, "k_grouped_bf16_gemm: at most 65535 groups");
  GemmParams p = params_zero();
  p.mode = go_sm90::kModeKGroupStrided;
  p.M = M;
  p.N = N;
  p.batch = static_cast<int>(G);
  p.a = Mat{a.data, a.strides[1], a.strides[0], 0};
  p.b = Mat{b.data, b.strides[1], b.strides[0], 0};
  p.sfa = mat_none();
  p.sfb = mat_none();
  p.d = mat2(d);
  p.c = c.present ? mat2(c) : mat_none();
  p.out_kind = out_kind(d, c, false);
  p.ks = reinterpret_cast<const int32_t*>(ks.data);
  return launch_status(go_sm90::launch_bf16_gemm(p, 0), "k_grouped_bf16_gemm");
}

// ==== HyperConnection prenorm ========================================================================================

int32_t go_tf32_hc_prenorm_gemm(const go_tensor* a_, const go_tensor* b_, const go_tensor* d_,
                                const go_tensor* sq_, int32_t num_splits, int32_t tf32_rounding, int32_t model) {
  GO_TRY(bind_device());
  GO_TRY(need_model(model, {GO_MODEL_TF32}, "tf32_hc_prenorm_gemm"));
  if (tf32_rounding != 0 && tf32_rounding != 1)
    return fail(GO_ERR_INVALID_ARGUMENT, "tf32_hc_prenorm_gemm: tf32_rounding %d (expected 0 or 1)", tf32_rounding);
  if (num_splits < 1) return fail(GO_ERR_INVALID_ARGUMENT, "tf32_hc_prenorm_gemm: num_splits %d < 1", num_splits);
  TV a, b, d, sq;
  GO_TRY(check_tensor(a_, "a", false, {GO_BF16}, 2, 2, a));
  GO_TRY(check_tensor(b_, "b", false, {GO_F32}, 2, 2, b));
  GO_TRY(check_tensor(d_, "d", false, {GO_F32}, 2, 3, d));
  GO_TRY(check_tensor(sq_, "sqr_sum", false, {GO_F32}, 1, 2, sq));
  const int64_t M = a.shape[0], K = a.shape[1], N = b.shape[0];
  if (b.shape[1] != K) return fail(GO_ERR_INVALID_ARGUMENT, "b: K differs from a's");
  if (K % 64 != 0) return fail(GO_ERR_INVALID_ARGUMENT, "tf32_hc_prenorm_gemm: K = %lld is not a multiple of 64", (long long)K);
  if (N > 32) return fail(GO_ERR_UNSUPPORTED, "tf32_hc_prenorm_gemm: N = %lld > 32 (SM90 limit)", (long long)N);
  if (d.ndim == 2) {
    if (num_splits != 1) return fail(GO_ERR_INVALID_ARGUMENT, "d must be [S, M, N] when num_splits > 1");
    GO_TRY(expect_shape(d, "d", {M, N}));
    GO_TRY(expect_shape(sq, "sqr_sum", {M}));
  } else {
    GO_TRY(expect_shape(d, "d", {num_splits, M, N}));
    GO_TRY(expect_shape(sq, "sqr_sum", {num_splits, M}));
  }
  if (a.strides[1] != 1 || b.strides[1] != 1 || d.stride(-1) != 1 || sq.stride(-1) != 1)
    return fail(GO_ERR_UNSUPPORTED, "tf32_hc_prenorm_gemm: a, b, d, sqr_sum need unit innermost strides");
  GO_TRY(check_no_alias(d, nullptr, {{&a, "a"}, {&b, "b"}, {&sq, "sqr_sum"}}));
  if (overlaps(sq, a) || overlaps(sq, b)) return fail(GO_ERR_INVALID_ARGUMENT, "sqr_sum overlaps an input");
  if (M == 0) return GO_OK;
  go_sm90::HcParams p;
  p.a = a.data;
  p.a_s_row = a.strides[0];
  p.b = reinterpret_cast<const float*>(b.data);
  p.b_s_row = b.strides[0];
  p.d = reinterpret_cast<float*>(d.data);
  p.d_s_split = d.ndim == 3 ? d.strides[0] : 0;
  p.d_s_row = d.stride(-2);
  p.sqr_sum = reinterpret_cast<float*>(sq.data);
  p.sq_s_split = sq.ndim == 2 ? sq.strides[0] : 0;
  p.M = M;
  p.N = N;
  p.K = K;
  p.splits = num_splits;
  return launch_status(go_sm90::launch_tf32_hc_prenorm(p, tf32_rounding, 0), "tf32_hc_prenorm_gemm");
}

// ==== MQA logits =====================================================================================================

int32_t go_fp8_mqa_logits(const go_tensor* q_, const go_tensor* kv_, const go_tensor* kv_sf_, const go_tensor* w_,
                          const go_tensor* ks_, const go_tensor* ke_, const go_tensor* logits_, int32_t clean_logits,
                          int32_t max_seqlen_k, int32_t model) {
  GO_TRY(bind_device());
  GO_TRY(need_model(model, {GO_MODEL_SM90_MQA}, "fp8_mqa_logits"));
  TV q, kv, sf, w, ks, ke, lg;
  GO_TRY(check_tensor(q_, "q", false, {GO_E4M3}, 3, 3, q));
  GO_TRY(check_tensor(kv_, "kv", false, {GO_E4M3}, 2, 2, kv));
  GO_TRY(check_tensor(kv_sf_, "kv_sf", false, {GO_F32}, 1, 1, sf));
  GO_TRY(check_tensor(w_, "weights", false, {GO_F32}, 2, 2, w));
  GO_TRY(check_tensor(ks_, "ks", false, {GO_I32}, 1, 1, ks));
  GO_TRY(check_tensor(ke_, "ke", false, {GO_I32}, 1, 1, ke));
  GO_TRY(check_tensor(logits_, "logits", false, {GO_F32, GO_BF16}, 2, 2, lg));
  const int64_t S = q.shape[0], H = q.shape[1], D = q.shape[2], Skv = kv.shape[0];
  if (kv.shape[1] != D) return fail(GO_ERR_INVALID_ARGUMENT, "kv: head_dim %lld != q's %lld", (long long)kv.shape[1], (long long)D);
  if (D != 32 && D != 64 && D != 128) return fail(GO_ERR_UNSUPPORTED, "fp8_mqa_logits: head_dim %lld (SM90: 32, 64, 128)", (long long)D);
  if (H % 8 != 0 || H < 8 || H > 64) return fail(GO_ERR_UNSUPPORTED, "fp8_mqa_logits: %lld heads (need a multiple of 8 up to 64)", (long long)H);
  GO_TRY(expect_shape(sf, "kv_sf", {Skv}));
  GO_TRY(expect_shape(w, "weights", {S, H}));
  GO_TRY(expect_shape(ks, "ks", {S}));
  GO_TRY(expect_shape(ke, "ke", {S}));
  if (max_seqlen_k < 0) return fail(GO_ERR_INVALID_ARGUMENT, "max_seqlen_k %d < 0", max_seqlen_k);
  if (max_seqlen_k > 0 && clean_logits) return fail(GO_ERR_INVALID_ARGUMENT, "compressed logits (max_seqlen_k > 0) require clean_logits = 0");
  GO_TRY(expect_shape(lg, "logits", {S, max_seqlen_k > 0 ? static_cast<int64_t>(max_seqlen_k) : Skv}));
  if (q.strides[2] != 1 || kv.strides[1] != 1 || sf.strides[0] != 1 || w.strides[1] != 1 || ks.strides[0] != 1 ||
      ke.strides[0] != 1 || lg.strides[1] != 1)
    return fail(GO_ERR_UNSUPPORTED, "fp8_mqa_logits: innermost strides must be 1");
  if (reinterpret_cast<uintptr_t>(q.data) % 16 || q.strides[0] % 16 || q.strides[1] % 16 ||
      reinterpret_cast<uintptr_t>(kv.data) % 16 || kv.strides[0] % 16)
    return fail(GO_ERR_UNSUPPORTED, "fp8_mqa_logits: q and kv rows must be 16-byte aligned");
  GO_TRY(check_no_alias(lg, nullptr, {{&q, "q"}, {&kv, "kv"}, {&sf, "kv_sf"}, {&w, "weights"}, {&ks, "ks"}, {&ke, "ke"}}));
  if (S == 0) return GO_OK;
  if (S > 65535) return fail(GO_ERR_UNSUPPORTED, "fp8_mqa_logits: more than 65535 queries");
  if (max_seqlen_k > 0) {
    std::vector<int32_t> hks, hke;
    GO_TRY(copy_to_host(ks, hks, "ks"));
    GO_TRY(copy_to_host(ke, hke, "ke"));
    for (int64_t i = 0; i < S; ++i) {
      const int64_t lo = std::min<int64_t>(std::max<int64_t>(hks[i], 0), Skv), hi = std::min<int64_t>(std::max<int64_t>(hke[i], 0), Skv);
      if (hi - lo > max_seqlen_k)
        return fail(GO_ERR_INVALID_ARGUMENT, "fp8_mqa_logits: row %lld has ke - ks = %lld > max_seqlen_k = %d (compressed rows would overflow)",
                    (long long)i, (long long)(hi - lo), max_seqlen_k);
    }
  }
  go_sm90::MqaParams p;
  std::memset(&p, 0, sizeof p);
  p.paged = 0;
  p.q = reinterpret_cast<const uint8_t*>(q.data);
  p.q_s_row = q.strides[0];
  p.q_s_head = q.strides[1];
  p.kv = reinterpret_cast<const uint8_t*>(kv.data);
  p.kv_s_row = kv.strides[0];
  p.kv_sf = reinterpret_cast<const float*>(sf.data);
  p.weights = reinterpret_cast<const float*>(w.data);
  p.w_s_row = w.strides[0];
  p.ks = reinterpret_cast<const int32_t*>(ks.data);
  p.ke = reinterpret_cast<const int32_t*>(ke.data);
  p.logits = lg.data;
  p.logits_bf16 = lg.dtype == GO_BF16;
  p.l_s_row = lg.strides[0];
  p.rows = S;
  p.cols = Skv;
  p.max_seqlen_k = max_seqlen_k;
  p.heads = static_cast<int>(H);
  p.dim = static_cast<int>(D);
  if (clean_logits && p.logits_bf16) return fail(GO_ERR_UNSUPPORTED, "fp8_mqa_logits: clean_logits needs f32 logits");
  return launch_status(go_sm90::launch_mqa_logits(p, clean_logits ? 1 : 0, 0), "fp8_mqa_logits");
}

int32_t go_fp8_paged_mqa_logits(const go_tensor* q_, const go_tensor* kvc_, const go_tensor* w_, const go_tensor* cl_,
                                const go_tensor* bt_, const go_tensor* logits_, int32_t block_kv, int32_t model) {
  GO_TRY(bind_device());
  GO_TRY(need_model(model, {GO_MODEL_SM90_MQA}, "fp8_paged_mqa_logits"));
  TV q, kvc, w, cl, bt, lg;
  GO_TRY(check_tensor(q_, "q", false, {GO_E4M3}, 4, 4, q));
  GO_TRY(check_tensor(kvc_, "kv_cache", false, {GO_U8, GO_I8}, 4, 4, kvc));
  GO_TRY(check_tensor(w_, "weights", false, {GO_F32}, 2, 2, w));
  GO_TRY(check_tensor(cl_, "context_lens", false, {GO_I32}, 2, 2, cl));
  GO_TRY(check_tensor(bt_, "block_table", false, {GO_I32}, 2, 2, bt));
  GO_TRY(check_tensor(logits_, "logits", false, {GO_F32, GO_BF16}, 2, 2, lg));
  const int64_t B = q.shape[0], nn = q.shape[1], H = q.shape[2], D = q.shape[3];
  const int64_t nblocks = kvc.shape[0];
  if (D != 32 && D != 64 && D != 128) return fail(GO_ERR_UNSUPPORTED, "fp8_paged_mqa_logits: head_dim %lld (SM90: 32, 64, 128)", (long long)D);
  if (H % 8 != 0 || H < 8 || H > 64) return fail(GO_ERR_UNSUPPORTED, "fp8_paged_mqa_logits: %lld heads (need a multiple of 8 up to 64)", (long long)H);
  if (block_kv <= 0 || kvc.shape[1] != block_kv || kvc.shape[2] != 1 || kvc.shape[3] != D + 4)
    return fail(GO_ERR_INVALID_ARGUMENT, "kv_cache: expected [num_blocks, block_kv = %d, 1, D + 4 = %lld]", block_kv, (long long)(D + 4));
  if (kvc.strides[3] != 1 || kvc.strides[1] != D + 4 || kvc.strides[0] % 16 != 0 ||
      reinterpret_cast<uintptr_t>(kvc.data) % 16 != 0)
    return fail(GO_ERR_UNSUPPORTED, "kv_cache: pages must be contiguous, 16-byte aligned (page stride %% 16 == 0)");
  GO_TRY(expect_shape(w, "weights", {B * nn, H}));
  GO_TRY(expect_shape(cl, "context_lens", {B, nn}));
  if (bt.shape[0] != B) return fail(GO_ERR_INVALID_ARGUMENT, "block_table: %lld rows, expected B = %lld", (long long)bt.shape[0], (long long)B);
  if (lg.shape[0] != B * nn) return fail(GO_ERR_INVALID_ARGUMENT, "logits: %lld rows, expected B * next_n = %lld", (long long)lg.shape[0], (long long)(B * nn));
  if (q.strides[3] != 1 || q.strides[2] % 16 || q.strides[0] != nn * q.strides[1] || q.strides[1] % 16 ||
      reinterpret_cast<uintptr_t>(q.data) % 16)
    return fail(GO_ERR_UNSUPPORTED, "q: need [B, next_n, H, D] with 16-byte aligned heads and stride(0) = next_n * stride(1)");
  if (w.strides[1] != 1 || bt.strides[1] != 1 || lg.strides[1] != 1 || cl.strides[1] != 1 || cl.strides[0] != nn)
    return fail(GO_ERR_UNSUPPORTED, "fp8_paged_mqa_logits: weights, block_table, logits need unit innermost strides; context_lens contiguous");
  GO_TRY(check_no_alias(lg, nullptr, {{&q, "q"}, {&kvc, "kv_cache"}, {&w, "weights"}, {&cl, "context_lens"}, {&bt, "block_table"}}));
  std::vector<int32_t> hcl, hbt;
  GO_TRY(copy_to_host(cl, hcl, "context_lens"));
  GO_TRY(copy_to_host(bt, hbt, "block_table"));
  const int64_t maxb = bt.shape[1];
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t j = 0; j < nn; ++j) {
      const int64_t L = hcl[b * nn + j];
      if (L < 0 || L > lg.shape[1] || L > maxb * block_kv)
        return fail(GO_ERR_INVALID_ARGUMENT, "context_lens[%lld, %lld] = %lld is outside [0, min(logits columns, max_blocks * block_kv)]",
                    (long long)b, (long long)j, (long long)L);
      for (int64_t pg = 0; pg < (L + block_kv - 1) / block_kv; ++pg) {
        const int64_t id = hbt[b * maxb + pg];
        if (id < 0 || id >= nblocks)
          return fail(GO_ERR_INVALID_ARGUMENT, "block_table[%lld, %lld] = %lld is not a page in [0, %lld)", (long long)b,
                      (long long)pg, (long long)id, (long long)nblocks);
      }
    }
  }
  if (B * nn == 0 || lg.shape[1] == 0) return GO_OK;
  if (B * nn > 65535) return fail(GO_ERR_UNSUPPORTED, "fp8_paged_mqa_logits: more than 65535 rows");
  go_sm90::MqaParams p;
  std::memset(&p, 0, sizeof p);
  p.paged = 1;
  p.q = reinterpret_cast<const uint8_t*>(q.data);
  p.q_s_row = q.strides[1];
  p.q_s_head = q.strides[2];
  p.kv_cache = reinterpret_cast<const uint8_t*>(kvc.data);
  p.page_stride = kvc.strides[0];
  p.block_kv = block_kv;
  p.block_table = reinterpret_cast<const int32_t*>(bt.data);
  p.bt_s_row = bt.strides[0];
  p.context_lens = reinterpret_cast<const int32_t*>(cl.data);
  p.next_n = static_cast<int>(nn);
  p.weights = reinterpret_cast<const float*>(w.data);
  p.w_s_row = w.strides[0];
  p.logits = lg.data;
  p.logits_bf16 = lg.dtype == GO_BF16;
  p.l_s_row = lg.strides[0];
  p.rows = B * nn;
  p.cols = lg.shape[1];
  p.heads = static_cast<int>(H);
  p.dim = static_cast<int>(D);
  return launch_status(go_sm90::launch_mqa_logits(p, 0, 0), "fp8_paged_mqa_logits");
}

// ==== quantizers =====================================================================================================

int32_t go_quantize(int32_t kind, const go_tensor* x_, const go_tensor* q_, const go_tensor* sf_, const go_tensor* gsf_,
                    int32_t gran_k, int32_t flags, int32_t scale_rule, int32_t model) {
  GO_TRY(bind_device());
  // The registry: every present tensor lies in one live allocation (the recipe's rules are plan_quantize's).
  TV x, q, sf, gsf;
  const std::initializer_list<int32_t> any = {GO_F32, GO_BF16, GO_F16, GO_E4M3, GO_E5M2, GO_UE8M0, GO_I32, GO_U8, GO_I8};
  GO_TRY(check_tensor(x_, "x", false, any, 0, 4, x));
  GO_TRY(check_tensor(q_, "q", false, any, 0, 4, q));
  GO_TRY(check_tensor(sf_, "sf", false, any, 0, 4, sf));
  GO_TRY(check_tensor(gsf_, "global_sf", true, any, 0, 4, gsf));
  go_quant::QuantParams p;
  char msg[512] = "";
  const int32_t st = go_quant::plan_quantize(kind, x_, q_, sf_, gsf_, gran_k, flags, scale_rule, model, &p, msg, sizeof msg);
  if (st != GO_OK) return fail(st, "%s", msg);
  return launch_status(go_quant::launch_quantize(p, 0), "go_quantize");
}

// ==== cuBLASLt ========================================================================================================

int32_t go_cublaslt_gemm(const go_tensor* a_, const go_tensor* b_, const go_tensor* c_, const go_tensor* d_,
                         int32_t split_k, char* algo, int64_t algo_len, int32_t model) {
  if (algo != nullptr && algo_len > 0) algo[0] = '\0';
  if (algo_len < 0 || (algo == nullptr && algo_len != 0))
    return fail(GO_ERR_INVALID_ARGUMENT, "cublaslt_gemm: algo is NULL with algo_len %lld", (long long)algo_len);
  GO_TRY(bind_device());
  if (model != GO_MODEL_DEFAULT && model != GO_MODEL_CUBLASLT)
    return fail(GO_ERR_UNSUPPORTED, "cublaslt_gemm: model %s (%d): cuBLASLt computes its own model, cublaslt", go_model_name(model), model);
  if (split_k < 0 || split_k > 1024) return fail(GO_ERR_INVALID_ARGUMENT, "cublaslt_gemm: split_k %d (0 = cuBLASLt's choice, 1..1024)", split_k);
  TV a, b, c, d;
  GO_TRY(check_tensor(a_, "a", false, {GO_E4M3, GO_E5M2, GO_BF16}, 2, 2, a));
  GO_TRY(check_tensor(b_, "b", false, {GO_E4M3, GO_E5M2, GO_BF16}, 2, 2, b));
  GO_TRY(check_tensor(d_, "d", false, {GO_BF16, GO_F32}, 2, 2, d));
  GO_TRY(check_tensor(c_, "c", true, {GO_BF16, GO_F32}, 2, 2, c));
  if ((a.dtype == GO_BF16) != (b.dtype == GO_BF16))
    return fail(GO_ERR_INVALID_ARGUMENT, "cublaslt_gemm: a (%s) and b (%s) must both be FP8 or both bf16", dtype_name(a.dtype), dtype_name(b.dtype));
  if (a.dtype == GO_E5M2 && b.dtype == GO_E5M2)
    return fail(GO_ERR_UNSUPPORTED, "cublaslt_gemm: cuBLASLt has no e5m2 x e5m2 matmul");
  const int64_t M = a.shape[0], K = a.shape[1], N = b.shape[0];
  if (b.shape[1] != K) return fail(GO_ERR_INVALID_ARGUMENT, "b: K = %lld, a has K = %lld", (long long)b.shape[1], (long long)K);
  GO_TRY(expect_shape(d, "d", {M, N}));
  if (c.present) {
    if (c.dtype != d.dtype) return fail(GO_ERR_INVALID_ARGUMENT, "c: dtype %s differs from d's %s", dtype_name(c.dtype), dtype_name(d.dtype));
    GO_TRY(expect_shape(c, "c", {M, N}));
  }
  if (M >= (int64_t(1) << 31) || N >= (int64_t(1) << 31) || K >= (int64_t(1) << 31))
    return fail(GO_ERR_UNSUPPORTED, "cublaslt_gemm: an extent of 2^31 or more");
  GO_TRY(check_no_alias(d, &c, {{&a, "a"}, {&b, "b"}}));
  if (M == 0 || N == 0) return GO_OK;
  go_cublaslt::LtParams p;
  std::memset(&p, 0, sizeof p);
  auto et = [](int32_t dt) {
    return dt == GO_E4M3 ? go_cublaslt::kE4M3 : dt == GO_E5M2 ? go_cublaslt::kE5M2 : dt == GO_BF16 ? go_cublaslt::kBf16
                                                                                                       : go_cublaslt::kF32;
  };
  p.M = M;
  p.N = N;
  p.K = K;
  p.a = a.data;
  p.a_type = et(a.dtype);
  p.a_s0 = a.strides[0];
  p.a_s1 = a.strides[1];
  p.b = b.data;
  p.b_type = et(b.dtype);
  p.b_s0 = b.strides[0];
  p.b_s1 = b.strides[1];
  p.c = c.present ? c.data : nullptr;
  p.c_s0 = c.present ? c.strides[0] : 0;
  p.c_s1 = c.present ? c.strides[1] : 0;
  p.d = d.data;
  p.d_type = et(d.dtype);
  p.d_s0 = d.strides[0];
  p.d_s1 = d.strides[1];
  p.split_k = split_k;
  std::string desc, err;
  const int32_t st = go_cublaslt::run(p, &desc, &err);
  if (st != GO_OK) return fail(st, "cublaslt_gemm: %s", err.c_str());
  if (algo != nullptr && algo_len > 0) std::snprintf(algo, static_cast<size_t>(algo_len), "%s", desc.c_str());
  return GO_OK;
}

// ==== extensions (not yet in gemm_oracle.h) ==========================================================================

int32_t go_ext_einsum_bmk_bnk_mn(const go_tensor* a_, const go_tensor* b_, const go_tensor* c_, const go_tensor* d_) {
  GO_TRY(bind_device());
  TV a, b, c, d;
  GO_TRY(check_tensor(a_, "a", false, {GO_BF16}, 3, 3, a));
  GO_TRY(check_tensor(b_, "b", false, {GO_BF16}, 3, 3, b));
  GO_TRY(check_tensor(d_, "d", false, {GO_BF16, GO_F32}, 2, 2, d));
  GO_TRY(check_tensor(c_, "c", true, {GO_F32}, 2, 2, c));
  const int64_t S = a.shape[0], M = a.shape[1], K = a.shape[2], N = b.shape[1];
  if (b.shape[0] != S || b.shape[2] != K) return fail(GO_ERR_INVALID_ARGUMENT, "b: expected [s, n, k] matching a");
  GO_TRY(expect_shape(d, "d", {M, N}));
  if (d.dtype == GO_F32 && (!c.present || c.data != d.data))
    return fail(GO_ERR_INVALID_ARGUMENT, "einsum bmk,bnk->mn: an f32 d requires c to be d itself");
  if (d.dtype == GO_BF16 && c.present) return fail(GO_ERR_INVALID_ARGUMENT, "einsum bmk,bnk->mn: a bf16 d takes no c");
  if (K % 64 != 0) return fail(GO_ERR_UNSUPPORTED, "einsum bmk,bnk->mn: k = %lld is not a multiple of 64", (long long)K);
  GO_TRY(check_no_alias(d, &c, {{&a, "a"}, {&b, "b"}}));
  if (M == 0 || N == 0) return GO_OK;
  GemmParams p = params_zero();
  p.mode = go_sm90::kModeNormal;
  p.M = M;
  p.N = N;
  p.K = S * K;  // one chain over (b, k): k_inner slices of consecutive batches
  p.k_inner = K;
  p.a = Mat{a.data, a.strides[1], a.strides[2], a.strides[0]};
  p.b = Mat{b.data, b.strides[1], b.strides[2], b.strides[0]};
  p.sfa = mat_none();
  p.sfb = mat_none();
  p.d = mat2(d);
  p.c = c.present ? mat2(c) : mat_none();
  p.out_kind = out_kind(d, c, false);
  return launch_status(go_sm90::launch_bf16_gemm(p, 0), "einsum bmk,bnk->mn");
}

int32_t go_ext_paged_mqa_logits_metadata(const go_tensor* cl_, int32_t block_kv, int32_t num_sms, const go_tensor* out_) {
  return go_get_paged_mqa_logits_metadata(cl_, block_kv, num_sms, out_, GO_MODEL_SM90_MQA);
}

int32_t go_get_paged_mqa_logits_metadata(const go_tensor* cl_, int32_t block_kv, int32_t num_sms, const go_tensor* out_,
                                         int32_t model) {
  GO_TRY(bind_device());
  GO_TRY(need_model(model, {GO_MODEL_SM90_MQA}, "get_paged_mqa_logits_metadata"));
  // The SM90 kernel's limits (deepgemm-ops.md §8.3; reference/indexer/paged_mqa_logits_metadata.ts).
  if (block_kv != 64) return fail(GO_ERR_UNSUPPORTED, "get_paged_mqa_logits_metadata: SM90 needs block_kv = 64, got %d", block_kv);
  TV cl, out;
  GO_TRY(check_tensor(cl_, "context_lens", false, {GO_I32}, 2, 2, cl));
  GO_TRY(check_tensor(out_, "schedule_meta", false, {GO_I32}, 2, 2, out));
  if (num_sms < 1) return fail(GO_ERR_INVALID_ARGUMENT, "num_sms %d < 1", num_sms);
  // The partition reads context_lens[b, next_n - 1] (deepgemm-ops.md §8.3): next_n = 0 has no such entry.
  if (cl.shape[1] < 1) return fail(GO_ERR_INVALID_ARGUMENT, "context_lens: next_n = %lld, need at least 1", (long long)cl.shape[1]);
  GO_TRY(expect_shape(out, "schedule_meta", {num_sms + 1, 2}));
  if (cl.strides[1] != 1 || cl.strides[0] != cl.shape[1] || out.strides[1] != 1 || out.strides[0] != 2)
    return fail(GO_ERR_UNSUPPORTED, "context_lens and schedule_meta must be contiguous");
  if (overlaps(cl, out)) return fail(GO_ERR_INVALID_ARGUMENT, "schedule_meta overlaps context_lens");
  if (cl.shape[0] > 58112)
    return fail(GO_ERR_UNSUPPORTED, "get_paged_mqa_logits_metadata: batch %lld exceeds the SM90 shared-memory bound of 58112",
                (long long)cl.shape[0]);
  std::vector<int32_t> hcl;
  GO_TRY(copy_to_host(cl, hcl, "context_lens"));
  for (size_t i = 0; i < hcl.size(); ++i)
    if (hcl[i] < 0) return fail(GO_ERR_INVALID_ARGUMENT, "context_lens[%zu] = %d is negative", i, hcl[i]);
  return launch_status(go_sm90::launch_paged_mqa_metadata(reinterpret_cast<const int32_t*>(cl.data),
                                                           static_cast<int>(cl.shape[0]), static_cast<int>(cl.shape[1]),
                                                           block_kv, num_sms, reinterpret_cast<int32_t*>(out.data), 0),
                       "paged_mqa_logits_metadata");
}

int32_t go_ext_clean_logits(const go_tensor* ks_, const go_tensor* ke_, const go_tensor* logits_, int64_t valid_cols,
                            int32_t next_n) {
  GO_TRY(bind_device());
  TV ks, ke, lg;
  GO_TRY(check_tensor(ks_, "ks", true, {GO_I32}, 1, 1, ks));
  GO_TRY(check_tensor(ke_, "ke", false, {GO_I32}, 1, 1, ke));
  GO_TRY(check_tensor(logits_, "logits", false, {GO_F32}, 2, 2, lg));
  if (next_n < 1) return fail(GO_ERR_INVALID_ARGUMENT, "next_n %d < 1", next_n);
  const int64_t rows = lg.shape[0];
  if (rows % next_n != 0 || ke.shape[0] != rows / next_n || (ks.present && ks.shape[0] != rows / next_n))
    return fail(GO_ERR_INVALID_ARGUMENT, "ks/ke need rows / next_n entries");
  if (lg.strides[1] != 1 || ke.strides[0] != 1 || (ks.present && ks.strides[0] != 1))
    return fail(GO_ERR_UNSUPPORTED, "contiguous ks/ke and unit column stride of logits required");
  if (valid_cols < 0 || valid_cols > lg.shape[1]) return fail(GO_ERR_INVALID_ARGUMENT, "valid_cols outside [0, columns]");
  if (overlaps(lg, ke) || overlaps(lg, ks)) return fail(GO_ERR_INVALID_ARGUMENT, "logits overlap ks/ke");
  return launch_status(go_sm90::launch_clean_logits(ks.present ? reinterpret_cast<const int32_t*>(ks.data) : nullptr,
                                                    reinterpret_cast<const int32_t*>(ke.data),
                                                    reinterpret_cast<float*>(lg.data), rows, valid_cols, lg.shape[1],
                                                    lg.strides[0], next_n, 0),
                       "clean_logits");
}

int32_t go_ext_jit_stats(go_cuda_jit_stats* out) {
  if (out == nullptr) return fail(GO_ERR_INVALID_ARGUMENT, "go_ext_jit_stats: out is NULL");
  const go_jit::Stats s = go_jit::stats();
  out->compiles = s.compiles;
  out->compile_ms_total = s.compile_ms_total;
  out->compile_ms_max = s.compile_ms_max;
  out->disk_loads = s.disk_loads;
  out->load_ms_total = s.load_ms_total;
  out->load_ms_max = s.load_ms_max;
  out->memory_hits = s.memory_hits;
  out->aot_launches = s.aot_launches;
  return GO_OK;
}

int32_t go_ext_grouped_gate(const go_tensor* index_, int32_t kind, int64_t m, int64_t g, int32_t mk, int32_t* fits256) {
  GO_TRY(bind_device());
  if (fits256 == nullptr) return fail(GO_ERR_INVALID_ARGUMENT, "go_ext_grouped_gate: fits256 is NULL");
  if (kind < go_sm90::kGateClassic || kind > go_sm90::kGateMasked)
    return fail(GO_ERR_INVALID_ARGUMENT, "go_ext_grouped_gate: kind %d (1 classic, 2 psum, 3 masked)", kind);
  if (m < 0 || g < 0 || m >= (int64_t(1) << 31) || g >= (int64_t(1) << 31) || mk <= 0)
    return fail(GO_ERR_INVALID_ARGUMENT, "go_ext_grouped_gate: m %lld, g %lld, mk %d out of range", (long long)m,
                (long long)g, mk);
  TV t;
  GO_TRY(check_tensor(index_, "index", false, {GO_I32}, 1, 1, t));
  if (t.strides[0] != 1) return fail(GO_ERR_UNSUPPORTED, "go_ext_grouped_gate: index must be contiguous");
  int32_t* gate = nullptr;
  GO_CUDA(go_sm90::launch_gate_check(static_cast<go_sm90::GateKind>(kind), reinterpret_cast<const int32_t*>(t.data),
                                     t.shape[0], m, g, mk, false, 0, &gate),
          "go_ext_grouped_gate");
  GO_CUDA(cudaDeviceSynchronize(), "go_ext_grouped_gate");
  GO_CUDA(cudaMemcpy(fits256, gate + go_sm90::kGateFits256, sizeof(int32_t), cudaMemcpyDeviceToHost),
          "go_ext_grouped_gate");
  return gate_status("go_ext_grouped_gate");
}

int32_t go_ext_fast_last_config(char* buf, int64_t len) {
  if (buf == nullptr || len < 1) return fail(GO_ERR_INVALID_ARGUMENT, "go_ext_fast_last_config: buffer is NULL or empty");
  const std::string c = go_sm90::last_fast_config();
  std::snprintf(buf, static_cast<size_t>(len), "%s", c.c_str());
  return GO_OK;
}

int32_t go_ext_jit_compile(const char* source, char* cubin_path, int64_t len, int32_t* compiled) {
  if (source == nullptr || cubin_path == nullptr || len < 1 || compiled == nullptr)
    return fail(GO_ERR_INVALID_ARGUMENT, "go_ext_jit_compile: source, cubin_path and compiled must not be NULL, len >= 1");
  std::string path, err;
  bool did = false;
  double ms = 0;
  if (!go_jit::compile_cached(source, &path, &did, &ms, &err)) {
    const bool off = err.rfind("JIT off", 0) == 0;
    return fail(off ? GO_ERR_NOT_AVAILABLE : GO_ERR_INVALID_ARGUMENT, "go_ext_jit_compile: %s", err.c_str());
  }
  if (static_cast<int64_t>(path.size()) >= len)
    return fail(GO_ERR_INVALID_ARGUMENT, "go_ext_jit_compile: cubin_path needs %lld bytes", (long long)path.size() + 1);
  std::snprintf(cubin_path, static_cast<size_t>(len), "%s", path.c_str());
  *compiled = did ? 1 : 0;
  return GO_OK;
}

int32_t go_ext_fast_choose(int32_t mode, int64_t m, int64_t n, int64_t k, int64_t g, int32_t sms, int32_t tiles256,
                           const char* override_text, char* buf, int64_t len) {
  if (buf == nullptr || len < 1) return fail(GO_ERR_INVALID_ARGUMENT, "go_ext_fast_choose: buf must not be NULL, len >= 1");
  buf[0] = '\0';
  if (mode < 0 || mode > 3)
    return fail(GO_ERR_INVALID_ARGUMENT, "go_ext_fast_choose: mode %d (0 dense, 1 contiguous, 2 masked, 3 psum)", mode);
  if (m < 1 || n < 1 || k < 1 || g < 1 || sms < 1 || m >= (int64_t(1) << 31) || n >= (int64_t(1) << 31) ||
      k >= (int64_t(1) << 31) || g >= (int64_t(1) << 31))
    return fail(GO_ERR_INVALID_ARGUMENT, "go_ext_fast_choose: m %lld, n %lld, k %lld, g %lld, sms %d out of range",
                (long long)m, (long long)n, (long long)k, (long long)g, sms);
  go_sm90::FastParams p;
  std::memset(&p, 0, sizeof p);
  p.mode = mode == 0 ? go_sm90::kFastNormal : mode == 1 ? go_sm90::kFastClassic
         : mode == 2 ? go_sm90::kFastMasked : go_sm90::kFastPsum;
  p.M = static_cast<int>(m);
  p.N = static_cast<int>(n);
  p.K = static_cast<int>(k);
  p.G = static_cast<int>(g);
  p.mk_align = 128;
  p.tiles256 = tiles256 != 0;
  go_sm90::FastChoice c;
  std::string err;
  if (!go_sm90::choose_fast_config(p, sms, override_text, &c, &err))
    return fail(GO_ERR_INVALID_ARGUMENT, "go_ext_fast_choose: %s", err.c_str());
  const std::string d = go_sm90::describe_fast_config(c, c.shape ? "jit=shape" : "jit=generic");
  if (static_cast<int64_t>(d.size()) >= len)
    return fail(GO_ERR_INVALID_ARGUMENT, "go_ext_fast_choose: buf needs %lld bytes", (long long)d.size() + 1);
  std::snprintf(buf, static_cast<size_t>(len), "%s", d.c_str());
  return GO_OK;
}

int32_t go_ext_fast_prepare(int32_t mode, int64_t m, int64_t n, int64_t k, int64_t g) {
  GO_TRY(bind_device());
  if (mode < 0 || mode > 2) return fail(GO_ERR_INVALID_ARGUMENT, "go_ext_fast_prepare: mode %d (0 dense, 1 contiguous, 2 masked)", mode);
  if (m < 1 || n < 1 || k < 1 || g < 1 || m >= (int64_t(1) << 31) || n >= (int64_t(1) << 31) || k >= (int64_t(1) << 31) ||
      g >= (int64_t(1) << 31))
    return fail(GO_ERR_INVALID_ARGUMENT, "go_ext_fast_prepare: m %lld, n %lld, k %lld, g %lld out of range", (long long)m,
                (long long)n, (long long)k, (long long)g);
  go_sm90::FastParams p;
  std::memset(&p, 0, sizeof p);
  p.mode = mode == 0 ? go_sm90::kFastNormal : mode == 1 ? go_sm90::kFastClassic : go_sm90::kFastMasked;
  p.M = static_cast<int>(m);
  p.N = static_cast<int>(n);
  p.K = static_cast<int>(k);
  p.G = static_cast<int>(g);
  std::string err;
  if (go_sm90::prepare_fp8_gemm_fast(p, &err) != 0) return fail(GO_ERR_UNSUPPORTED, "go_ext_fast_prepare: %s", err.c_str());
  return GO_OK;
}

}  // extern "C"
