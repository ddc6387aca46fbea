// CPU backend runtime: ABI version, last error, backend info, the allocation registry, memory copies, tensor
// validation and the std::thread pool.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>

#include "common.hpp"
#include "sm90_fast.hpp"

namespace go {

namespace {
thread_local std::string g_last_error;

std::mutex g_registry_mutex;
std::map<uintptr_t, uint64_t> g_allocations;  // base address -> size in bytes

int g_threads = 0;  // 0 = hardware concurrency
std::mutex g_threads_mutex;

std::string pointer_text(const void* p) {
  std::ostringstream s;
  s << p;
  return s.str();
}
}  // namespace

void set_last_error(const std::string& message) { g_last_error = message; }

void check_in_allocation(const void* ptr, uint64_t bytes, const std::string& what) {
  if (ptr == nullptr) fail(GO_ERR_INVALID_ARGUMENT, what + ": null pointer");
  uintptr_t p = reinterpret_cast<uintptr_t>(ptr);
  std::lock_guard<std::mutex> lock(g_registry_mutex);
  auto it = g_allocations.upper_bound(p);
  if (it == g_allocations.begin()) {
    fail(GO_ERR_OUT_OF_BOUNDS, what + ": address " + pointer_text(ptr) + " is not inside any live allocation");
  }
  --it;
  uintptr_t base = it->first;
  uint64_t size = it->second;
  uint64_t offset = p - base;
  if (offset >= size || bytes > size - offset) {
    std::ostringstream s;
    s << what << ": " << bytes << " bytes at offset " << offset << " exceed the allocation of " << size << " bytes";
    if (offset >= size) s << " (address not inside any live allocation)";
    fail(GO_ERR_OUT_OF_BOUNDS, s.str());
  }
}

int dtype_size(int32_t dtype) {
  switch (dtype) {
    case GO_F32: return 4;
    case GO_BF16: return 2;
    case GO_F16: return 2;
    case GO_E4M3: return 1;
    case GO_E5M2: return 1;
    case GO_UE8M0: return 1;
    case GO_I32: return 4;
    case GO_I64: return 8;
    case GO_U8: return 1;
    case GO_I8: return 1;
    default: return 0;
  }
}

const char* dtype_name(int32_t dtype) {
  switch (dtype) {
    case GO_F32: return "f32";
    case GO_BF16: return "bf16";
    case GO_F16: return "f16";
    case GO_E4M3: return "e4m3";
    case GO_E5M2: return "e5m2";
    case GO_UE8M0: return "ue8m0";
    case GO_I32: return "i32";
    case GO_I64: return "i64";
    case GO_U8: return "u8";
    case GO_I8: return "i8";
    default: return "unknown";
  }
}

View view_of(const go_tensor* t, const char* name, std::initializer_list<int32_t> dtypes, int ndim, bool optional) {
  View v;
  v.name = name;
  if (t == nullptr || t->data == nullptr) {
    if (optional) return v;
    fail(GO_ERR_INVALID_ARGUMENT, std::string(name) + ": required tensor is missing (null pointer)");
  }
  bool ok = false;
  std::string allowed;
  for (int32_t d : dtypes) {
    if (d == t->dtype) ok = true;
    if (!allowed.empty()) allowed += " or ";
    allowed += dtype_name(d);
  }
  if (!ok) {
    fail(GO_ERR_INVALID_ARGUMENT, std::string(name) + ": dtype " + dtype_name(t->dtype) + " (" +
                                      std::to_string(t->dtype) + ") where " + allowed + " is required");
  }
  if (t->ndim != ndim) {
    fail(GO_ERR_INVALID_ARGUMENT, std::string(name) + ": " + std::to_string(t->ndim) + " dimensions where " +
                                      std::to_string(ndim) + " are required");
  }
  v.data = static_cast<char*>(t->data);
  v.dtype = t->dtype;
  v.ndim = ndim;
  v.esize = dtype_size(t->dtype);
  if (reinterpret_cast<uintptr_t>(t->data) % uint64_t(v.esize) != 0) {
    fail(GO_ERR_INVALID_ARGUMENT, std::string(name) + ": data pointer is not aligned to its " +
                                      std::to_string(v.esize) + "-byte elements");
  }
  bool empty = false;
  uint64_t last = 0;  // offset of the last element, in elements
  for (int i = 0; i < ndim; i++) {
    int64_t s = t->shape[i], st = t->strides[i];
    if (s < 0) fail(GO_ERR_INVALID_ARGUMENT, std::string(name) + ": negative size " + std::to_string(s));
    if (st < 0) fail(GO_ERR_INVALID_ARGUMENT, std::string(name) + ": negative stride " + std::to_string(st));
    v.shape[i] = s;
    v.strides[i] = st;
    if (s == 0) empty = true;
  }
  if (empty) return v;
  // Element counts bound every buffer the backend sizes from shapes (decoded operands, row lists): with broadcast
  // (stride 0) views a tiny allocation can describe a huge tensor, so the count is capped, not only the extent.
  uint64_t count = 1;
  for (int i = 0; i < ndim; i++) {
    if (__builtin_mul_overflow(count, uint64_t(v.shape[i]), &count) || count > (uint64_t(1) << 48)) {
      fail(GO_ERR_INVALID_ARGUMENT, std::string(name) + ": more than 2^48 elements");
    }
  }
  for (int i = 0; i < ndim; i++) {
    uint64_t term;
    if (__builtin_mul_overflow(uint64_t(v.shape[i] - 1), uint64_t(v.strides[i]), &term) ||
        __builtin_add_overflow(last, term, &last)) {
      fail(GO_ERR_INVALID_ARGUMENT, std::string(name) + ": extent overflows 64 bits");
    }
  }
  uint64_t bytes;
  if (__builtin_add_overflow(last, uint64_t(1), &bytes) || __builtin_mul_overflow(bytes, uint64_t(v.esize), &bytes) ||
      bytes > (uint64_t(1) << 62)) {
    fail(GO_ERR_INVALID_ARGUMENT, std::string(name) + ": extent overflows 64 bits");
  }
  // Every element index product must also fit int64 for the element-address arithmetic.
  check_in_allocation(t->data, bytes, name);
  v.lo = reinterpret_cast<uintptr_t>(t->data);
  v.hi = v.lo + bytes;
  return v;
}

void expect_shape(const View& v, std::initializer_list<int64_t> expected) {
  bool same = int(expected.size()) == v.ndim;
  int i = 0;
  for (int64_t e : expected) {
    if (i < v.ndim && v.shape[i] != e) same = false;
    i++;
  }
  if (same) return;
  std::ostringstream s;
  s << v.name << ": shape [";
  for (int j = 0; j < v.ndim; j++) s << (j ? ", " : "") << v.shape[j];
  s << "] where [";
  i = 0;
  for (int64_t e : expected) s << (i++ ? ", " : "") << e;
  s << "] is required";
  fail(GO_ERR_INVALID_ARGUMENT, s.str());
}

void expect_no_overlap(const View& out, const View& in, bool allow_identical) {
  if (!out.present() || !in.present() || out.hi == out.lo || in.hi == in.lo) return;
  if (allow_identical && out.data == in.data && out.dtype == in.dtype && out.ndim == in.ndim) {
    bool same = true;
    for (int i = 0; i < out.ndim; i++) same = same && out.shape[i] == in.shape[i] && out.strides[i] == in.strides[i];
    if (same) return;
  }
  if (out.lo < in.hi && in.lo < out.hi) fail(GO_ERR_INVALID_ARGUMENT, out.name + " overlaps " + in.name);
}

int num_threads() {
  std::lock_guard<std::mutex> lock(g_threads_mutex);
  if (g_threads > 0) return g_threads;
  unsigned hw = std::thread::hardware_concurrency();
  return hw == 0 ? 1 : int(std::min(hw, 256u));
}

void set_num_threads(int n) {
  std::lock_guard<std::mutex> lock(g_threads_mutex);
  g_threads = n;
}

void parallel_for(int64_t count, const std::function<void(int64_t, int64_t)>& body) {
  if (count <= 0) return;
  int64_t threads = std::min<int64_t>(num_threads(), count);
  if (threads <= 1) {
    body(0, count);
    return;
  }
  std::vector<std::thread> pool;
  std::vector<std::exception_ptr> errors(static_cast<size_t>(threads));
  int64_t chunk = (count + threads - 1) / threads;
  for (int64_t t = 0; t < threads; t++) {
    int64_t begin = t * chunk, end = std::min(count, begin + chunk);
    if (begin >= end) break;
    auto run = [&, t, begin, end]() {
      try {
        body(begin, end);
      } catch (...) {
        errors[size_t(t)] = std::current_exception();
      }
    };
    try {
      pool.emplace_back(run);
    } catch (...) {
      run();  // could not start a thread: do the chunk here
    }
  }
  for (auto& th : pool) th.join();
  for (auto& e : errors) {
    if (e) std::rethrow_exception(e);
  }
}

void parallel_tasks(int64_t count, const std::function<void(int, int64_t)>& body) {
  if (count <= 0) return;
  int64_t threads = std::min<int64_t>(num_threads(), count);
  if (threads <= 1) {
    for (int64_t i = 0; i < count; i++) body(0, i);
    return;
  }
  std::atomic<int64_t> next{0};
  std::atomic<bool> failed{false};
  std::vector<std::exception_ptr> errors(static_cast<size_t>(threads));
  auto work = [&](int worker) {
    try {
      for (;;) {
        if (failed.load(std::memory_order_relaxed)) return;
        int64_t i = next.fetch_add(1, std::memory_order_relaxed);
        if (i >= count) return;
        body(worker, i);
      }
    } catch (...) {
      errors[size_t(worker)] = std::current_exception();
      failed.store(true, std::memory_order_relaxed);
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < int(threads); t++) {
    try {
      pool.emplace_back(work, t);
    } catch (...) {
      break;  // could not start a thread: the others (and this one) take its tasks
    }
  }
  work(0);
  for (auto& th : pool) th.join();
  for (auto& e : errors) {
    if (e) std::rethrow_exception(e);
  }
}

uint16_t bf16_rne_from_double(double x) {
  if (std::isnan(x)) return 0x7FFF;
  uint16_t sign = std::signbit(x) ? 0x8000 : 0;
  double a = std::fabs(x);
  if (a == 0) return sign;
  int e;
  std::frexp(a, &e);  // a = f·2^e, f in [0.5, 1)
  int exp = e - 1;    // a in [2^exp, 2^(exp+1))
  if (exp < -126) exp = -126;
  double ulp = std::ldexp(1.0, exp - 7);  // bf16 keeps 7 fraction bits
  double q = a / ulp;                     // exact (power-of-two division)
  double r = std::nearbyint(q);           // round half to even in the default rounding mode
  double v = r * ulp;
  if (v >= std::ldexp(1.0, 128)) return uint16_t(sign | 0x7F80);
  return uint16_t(sign | (f32_bits(float(v)) >> 16));
}

double read_float(const char* p, int32_t dtype) {
  switch (dtype) {
    case GO_F32: {
      float f;
      std::memcpy(&f, p, 4);
      return f;
    }
    case GO_BF16: {
      uint16_t b;
      std::memcpy(&b, p, 2);
      return bf16_to_f32(b);
    }
    default: fail(GO_ERR_INTERNAL, "read_float: unsupported dtype");
  }
}

}  // namespace go

using go::fail;
using go::guard;

extern "C" {

int32_t go_abi_version(void) { return GO_ABI_VERSION; }

const char* go_last_error(void) { return go::g_last_error.c_str(); }

int32_t go_backend_info(char* buf, uint64_t cap, uint64_t* needed) {
  return guard([&] {
    std::ostringstream s;
    go::CpuIsa isa;
    const bool isa_ok = go::cpu_isa_requested(&isa);  // the kernel the FP8 SM90 models use now (sm90_fast.hpp)
    const char* arch =
#if defined(__x86_64__)
        "x86_64";
#elif defined(__aarch64__)
        "aarch64";
#else
        "unknown";
#endif
    s << "{\"name\":\"cpu\",\"abi\":" << GO_ABI_VERSION << ",\"device\":\"cpu\",\"arch\":\"" << arch
      << "\",\"threads\":" << go::num_threads()
      << ",\"isa\":\"" << (isa_ok ? go::cpu_isa_name(isa) : "invalid GO_CPU_ISA")
      << "\",\"isa_supported\":\"" << go::cpu_isa_name(go::cpu_isa_supported()) << "\",\"compiler\":\"g++ "
      << __VERSION__ << "\",\"models\":{"
      << "\"fp8_gemm\":\"sm90_1d2d\",\"m_grouped_fp8_gemm_contiguous\":\"sm90_1d2d\","
      << "\"m_grouped_fp8_gemm_masked\":\"sm90_1d2d\",\"k_grouped_fp8_gemm\":\"sm90_1d1d\","
      << "\"bf16_gemm\":\"bf16\",\"m_grouped_bf16_gemm_contiguous\":\"bf16\",\"m_grouped_bf16_gemm_masked\":\"bf16\","
      << "\"k_grouped_bf16_gemm\":\"bf16\",\"fp8_gemm_skip_head_mid\":\"sm90_1d2d\",\"tf32_hc_prenorm_gemm\":\"tf32\","
      << "\"fp8_mqa_logits\":\"sm90_mqa\",\"fp8_paged_mqa_logits\":\"sm90_mqa\"},\"supported_models\":{";
    const char* fp8 = "[\"exact\",\"sm90_1d2d\",\"sm90_1d1d\",\"sm100_1d1d\"]";
    const char* bf16 = "[\"exact\",\"bf16\",\"fp32_sequential\"]";
    s << "\"fp8_gemm\":" << fp8 << ",\"m_grouped_fp8_gemm_contiguous\":" << fp8
      << ",\"m_grouped_fp8_gemm_masked\":" << fp8 << ",\"k_grouped_fp8_gemm\":" << fp8 << ",\"bf16_gemm\":" << bf16
      << ",\"m_grouped_bf16_gemm_contiguous\":" << bf16 << ",\"m_grouped_bf16_gemm_masked\":" << bf16
      << ",\"k_grouped_bf16_gemm\":" << bf16 << ",\"fp8_gemm_skip_head_mid\":" << fp8
      << ",\"tf32_hc_prenorm_gemm\":[\"tf32\"],\"fp8_mqa_logits\":[\"sm90_mqa\",\"exact\"],"
      << "\"fp8_paged_mqa_logits\":[\"sm90_mqa\",\"exact\"]}}";
    std::string json = s.str();
    uint64_t need = json.size() + 1;
    if (needed == nullptr) fail(GO_ERR_INVALID_ARGUMENT, "go_backend_info: needed is a null pointer");
    *needed = need;
    if (buf == nullptr && cap == 0) return;
    if (buf == nullptr) fail(GO_ERR_INVALID_ARGUMENT, "go_backend_info: buf is a null pointer with cap > 0");
    if (cap < need) {
      fail(GO_ERR_INVALID_ARGUMENT,
           "go_backend_info: capacity " + std::to_string(cap) + " is smaller than the " + std::to_string(need) +
               " bytes needed");
    }
    std::memcpy(buf, json.c_str(), need);
  });
}

int32_t go_device_count(int32_t* count) {
  return guard([&] {
    if (count == nullptr) fail(GO_ERR_INVALID_ARGUMENT, "go_device_count: count is a null pointer");
    *count = 1;
  });
}

int32_t go_set_device(int32_t device) {
  return guard([&] {
    if (device != 0) {
      fail(GO_ERR_INVALID_ARGUMENT, "go_set_device: device " + std::to_string(device) + " does not exist (CPU has 1)");
    }
  });
}

int32_t go_alloc(uint64_t bytes, void** out) {
  return guard([&] {
    if (out == nullptr) fail(GO_ERR_INVALID_ARGUMENT, "go_alloc: out is a null pointer");
    *out = nullptr;
    if (bytes == 0) fail(GO_ERR_INVALID_ARGUMENT, "go_alloc: size 0");
    if (bytes > (uint64_t(1) << 48)) {
      fail(GO_ERR_OUT_OF_MEMORY, "go_alloc: " + std::to_string(bytes) + " bytes is beyond any host memory");
    }
    uint64_t rounded = (bytes + 255) / 256 * 256;
    void* p = std::aligned_alloc(256, rounded);
    if (p == nullptr) fail(GO_ERR_OUT_OF_MEMORY, "go_alloc: could not allocate " + std::to_string(bytes) + " bytes");
    std::memset(p, 0, rounded);
    {
      std::lock_guard<std::mutex> lock(go::g_registry_mutex);
      go::g_allocations[reinterpret_cast<uintptr_t>(p)] = bytes;
    }
    *out = p;
  });
}

int32_t go_free(void* ptr) {
  return guard([&] {
    if (ptr == nullptr) return;
    {
      std::lock_guard<std::mutex> lock(go::g_registry_mutex);
      auto it = go::g_allocations.find(reinterpret_cast<uintptr_t>(ptr));
      if (it == go::g_allocations.end()) {
        fail(GO_ERR_INVALID_ARGUMENT, "go_free: " + go::pointer_text(ptr) + " is not a live allocation");
      }
      go::g_allocations.erase(it);
    }
    std::free(ptr);
  });
}

int32_t go_copy_in(void* dst, const void* host_src, uint64_t bytes) {
  return guard([&] {
    if (bytes == 0) return;
    if (host_src == nullptr) fail(GO_ERR_INVALID_ARGUMENT, "go_copy_in: host source is a null pointer");
    go::check_in_allocation(dst, bytes, "go_copy_in destination");
    std::memmove(dst, host_src, bytes);
  });
}

int32_t go_copy_out(void* host_dst, const void* src, uint64_t bytes) {
  return guard([&] {
    if (bytes == 0) return;
    if (host_dst == nullptr) fail(GO_ERR_INVALID_ARGUMENT, "go_copy_out: host destination is a null pointer");
    go::check_in_allocation(src, bytes, "go_copy_out source");
    std::memmove(host_dst, src, bytes);
  });
}

int32_t go_synchronize(void) { return GO_OK; }

int32_t go_set_num_threads(int32_t threads) {
  return guard([&] {
    if (threads < 0 || threads > 1024) {
      fail(GO_ERR_INVALID_ARGUMENT, "go_set_num_threads: " + std::to_string(threads) + " is outside [0, 1024]");
    }
    go::set_num_threads(threads);
  });
}

}  // extern "C"
