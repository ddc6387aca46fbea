/*
 * fault_backend.cpp: a kernel library (kernels/gemm_oracle.h) that misbehaves on purpose, for the tests that prove
 * `verify` survives a backend that crashes, hangs or lies.
 *
 * Every function of the header is forwarded to a real backend library, except the one named by GO_FAULT_OP, into
 * which the fault named by GO_FAULT is injected. Environment (read once, when the library is loaded):
 *
 *   GO_FAULT_INNER    absolute path of the library to forward to (the CPU backend in the tests). Required.
 *   GO_FAULT          none (default: pure pass-through) | segv (a write through a null pointer) | abort |
 *                     loop (never returns) | garbage_status (returns 12345) | null_message (returns
 *                     GO_ERR_INTERNAL while go_last_error() returns NULL, against the header's promise) |
 *                     wrong_bit (runs the real op, then flips the lowest bit of output element 0) |
 *                     nothing (returns GO_OK without calling the real function: the output is never written) |
 *                     chatty (prints a line and then a partial line, no newline, to stdout, flushed, and runs the
 *                     real function: what a library that logs progress on stdout does)
 *   GO_FAULT_OP       the C function to fault (default go_fp8_gemm); any function of the header
 *   GO_FAULT_AFTER    N >= 1: fault the N-th and every later call of that function in this process (default 1)
 *   GO_FAULT_PIDFILE  when set, the process id is appended to this file (one line) each time a fault fires, so a
 *                     test can see which processes faulted and make sure none outlives it
 *
 * Before a fault that ends or stalls the process, a line naming it goes to stderr ("fault backend: injecting ...").
 * `loop` sleeps in 1 ms steps rather than burning a core, ignores SIGTERM (only SIGKILL ends it, as the protocol
 * requires of the oracle), and exits by itself once its parent process is gone or its stdin is closed, so that a
 * test that kills `verify` itself leaves no hung host behind.
 *
 * Build: g++ -std=c++17 -O1 -fPIC -shared -I kernels -o libfault.so tests/fault/fault_backend.cpp -ldl
 * (tests/fault/_fault.ts does this into a cache).
 */
#include <dlfcn.h>
#include <poll.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "gemm_oracle.h"

namespace {

enum class Fault { none, segv, abort_, loop, garbage_status, null_message, wrong_bit, nothing, chatty, unknown };

/** What the environment asked for, read once at load time. */
struct Config {
  Fault fault = Fault::none;
  std::string fault_name = "none";
  std::string op = "go_fp8_gemm";
  long after = 1;
  std::string pidfile;
  std::string inner_path;
  std::string setup_error;  // non-empty: the library cannot work (reported by go_backend_info)
  void* inner = nullptr;
  pid_t parent = 0;
};

std::atomic<long> g_calls{0};  // calls of the faulted function in this process

/** Where go_last_error() takes its text from on this thread. */
enum class ErrorSource { inner, own, null_pointer };
thread_local ErrorSource t_error_source = ErrorSource::inner;
thread_local std::string t_own_error;

Fault parse_fault(const std::string& s) {
  if (s == "none") return Fault::none;
  if (s == "segv") return Fault::segv;
  if (s == "abort") return Fault::abort_;
  if (s == "loop") return Fault::loop;
  if (s == "garbage_status") return Fault::garbage_status;
  if (s == "null_message") return Fault::null_message;
  if (s == "wrong_bit") return Fault::wrong_bit;
  if (s == "nothing") return Fault::nothing;
  if (s == "chatty") return Fault::chatty;
  return Fault::unknown;
}

Config read_config() {
  Config c;
  c.parent = getppid();
  if (const char* f = std::getenv("GO_FAULT"); f != nullptr && *f != '\0') c.fault_name = f;
  c.fault = parse_fault(c.fault_name);
  if (const char* op = std::getenv("GO_FAULT_OP"); op != nullptr && *op != '\0') c.op = op;
  if (const char* n = std::getenv("GO_FAULT_AFTER"); n != nullptr && *n != '\0') {
    char* end = nullptr;
    c.after = std::strtol(n, &end, 10);
    if (*end != '\0' || c.after < 1) c.setup_error = std::string("GO_FAULT_AFTER must be an integer >= 1, got ") + n;
  }
  if (const char* p = std::getenv("GO_FAULT_PIDFILE"); p != nullptr) c.pidfile = p;
  if (c.fault == Fault::unknown) {
    c.setup_error = "unknown GO_FAULT \"" + c.fault_name +
                    "\" (none, segv, abort, loop, garbage_status, null_message, wrong_bit, nothing, chatty)";
  }
  const char* inner = std::getenv("GO_FAULT_INNER");
  if (inner == nullptr || *inner == '\0') {
    if (c.setup_error.empty()) c.setup_error = "GO_FAULT_INNER is not set (the path of the library to forward to)";
    return c;
  }
  c.inner_path = inner;
  c.inner = dlopen(inner, RTLD_NOW | RTLD_LOCAL);
  if (c.inner == nullptr && c.setup_error.empty()) {
    const char* why = dlerror();
    c.setup_error = "cannot open GO_FAULT_INNER \"" + c.inner_path + "\": " + (why ? why : "unknown error");
  }
  return c;
}

/** The configuration, read on first use (a function-local static: no dependence on initialisation order). */
const Config& config() {
  static const Config c = read_config();
  return c;
}

/** Reads the configuration when the library is loaded, so that the parent recorded is the loading process's. */
__attribute__((constructor)) void configure_at_load() { config(); }

/** Fails the current call with our own message. */
int32_t fail(int32_t status, const std::string& message) {
  t_error_source = ErrorSource::own;
  t_own_error = "fault backend: " + message;
  return status;
}

void note(const char* fn, long call) {
  std::fprintf(stderr, "fault backend: injecting %s into %s (call %ld, pid %ld)\n", config().fault_name.c_str(), fn,
               call, static_cast<long>(getpid()));
  std::fflush(stderr);
  if (config().pidfile.empty()) return;
  if (FILE* f = std::fopen(config().pidfile.c_str(), "a")) {
    std::fprintf(f, "%ld\n", static_cast<long>(getpid()));
    std::fclose(f);
  }
}

/** True once the process that started this one is gone or has closed our stdin: nobody waits for us any more. */
bool abandoned() {
  if (getppid() != config().parent) return true;
  pollfd p{0, 0, 0};
  return poll(&p, 1, 0) == 1 && (p.revents & (POLLHUP | POLLERR)) != 0;
}

[[noreturn]] void hang() {
  signal(SIGTERM, SIG_IGN);
  const timespec step{0, 1000000};
  for (;;) {
    if (abandoned()) _exit(0);
    nanosleep(&step, nullptr);
  }
}

void* inner_symbol(const char* name) {
  return config().inner == nullptr ? nullptr : dlsym(config().inner, name);
}

/** Flips the lowest bit of byte 0 of an output tensor (little-endian: the lowest mantissa bit of element 0). */
int32_t flip_first_bit(const go_tensor* out) {
  using CopyFn = int32_t (*)(void*, const void*, uint64_t);
  auto copy_out = reinterpret_cast<CopyFn>(inner_symbol("go_copy_out"));
  auto copy_in = reinterpret_cast<CopyFn>(inner_symbol("go_copy_in"));
  if (out == nullptr || out->data == nullptr || copy_out == nullptr || copy_in == nullptr) return GO_OK;
  unsigned char low = 0;
  if (int32_t st = copy_out(&low, out->data, 1); st != GO_OK) return st;
  low ^= 1u;
  return copy_in(out->data, &low, 1);
}

/**
 * Runs `real` (the forwarded call), or the configured fault when `fn` is the faulted function.
 * @param fn the C function's name
 * @param out the output tensor a `wrong_bit` fault corrupts (null: none)
 * @param real calls the inner library
 */
template <typename Real>
int32_t guarded(const char* fn, const go_tensor* out, Real real) {
  t_error_source = ErrorSource::inner;
  if (!config().setup_error.empty()) return fail(GO_ERR_NOT_AVAILABLE, config().setup_error);
  if (config().op != fn || config().fault == Fault::none) return real();
  const long call = ++g_calls;
  if (call < config().after) return real();
  switch (config().fault) {
    case Fault::segv: {
      note(fn, call);
      volatile int* volatile nowhere = nullptr;
      *nowhere = 1;
      _exit(99);  // not reached
    }
    case Fault::abort_:
      note(fn, call);
      std::abort();
    case Fault::loop:
      note(fn, call);
      hang();
    case Fault::garbage_status:
      note(fn, call);
      fail(12345, std::string("garbage status 12345 from ") + fn);
      return 12345;
    case Fault::null_message:
      note(fn, call);
      t_error_source = ErrorSource::null_pointer;
      return GO_ERR_INTERNAL;
    case Fault::wrong_bit: {
      int32_t st = real();
      if (st != GO_OK) return st;
      note(fn, call);
      return flip_first_bit(out);
    }
    case Fault::nothing:
      note(fn, call);
      return GO_OK;
    case Fault::chatty:
      // what JIT-compiling kernel libraries do: a line of progress on stdout, then a partial one, flushed
      std::fputs("fault backend chatter: a whole line on stdout\n", stdout);
      std::fputs("fault backend chatter: no newline yet...", stdout);
      std::fflush(stdout);
      return real();
    default:
      return real();
  }
}

}  // namespace

/* Calls the inner library's function of the same name with the same arguments; a missing symbol is unsupported. */
#define FORWARD(fn, ...)                                                                            \
  [&]() -> int32_t {                                                                                \
    auto f = reinterpret_cast<decltype(&fn)>(inner_symbol(#fn));                                    \
    if (f == nullptr) return fail(GO_ERR_UNSUPPORTED, std::string("the inner library lacks ") + #fn); \
    return f(__VA_ARGS__);                                                                          \
  }

extern "C" {

int32_t go_abi_version(void) {
  // "Never fails": a setup problem is reported by go_backend_info, the first call that can fail.
  if (!config().setup_error.empty()) return GO_ABI_VERSION;
  return guarded("go_abi_version", nullptr, [] { return static_cast<int32_t>(GO_ABI_VERSION); });
}

const char* go_last_error(void) {
  switch (t_error_source) {
    case ErrorSource::null_pointer:
      return nullptr;
    case ErrorSource::own:
      return t_own_error.c_str();
    default: {
      auto f = reinterpret_cast<decltype(&go_last_error)>(inner_symbol("go_last_error"));
      return f == nullptr ? "" : f();
    }
  }
}

int32_t go_backend_info(char* buf, uint64_t cap, uint64_t* needed) {
  return guarded("go_backend_info", nullptr, [&]() -> int32_t {
    auto f = reinterpret_cast<decltype(&go_backend_info)>(inner_symbol("go_backend_info"));
    if (f == nullptr) return fail(GO_ERR_UNSUPPORTED, "the inner library lacks go_backend_info");
    uint64_t inner_need = 0;
    if (int32_t st = f(nullptr, 0, &inner_need); st != GO_OK) return st;
    std::string inner(inner_need, '\0');
    if (int32_t st = f(inner.data(), inner_need, &inner_need); st != GO_OK) return st;
    inner.resize(std::strlen(inner.c_str()));
    if (inner.size() < 2 || inner.front() != '{') return fail(GO_ERR_INTERNAL, "the inner backend info is no object");
    // The inner object with a "fault" member in front: what this library injects, for the reports.
    std::string json = "{\"fault\":{\"mode\":\"" + config().fault_name + "\",\"op\":\"" + config().op +
                       "\",\"after\":" + std::to_string(config().after) + "}" +
                       (inner == "{}" ? "" : ",") + inner.substr(1);
    if (needed == nullptr) return fail(GO_ERR_INVALID_ARGUMENT, "go_backend_info: needed is a null pointer");
    *needed = json.size() + 1;
    if (buf == nullptr && cap == 0) return GO_OK;
    if (buf == nullptr) return fail(GO_ERR_INVALID_ARGUMENT, "go_backend_info: buf is a null pointer with cap > 0");
    if (cap < json.size() + 1) return fail(GO_ERR_INVALID_ARGUMENT, "go_backend_info: capacity too small");
    std::memcpy(buf, json.c_str(), json.size() + 1);
    return GO_OK;
  });
}

int32_t go_device_count(int32_t* count) {
  return guarded("go_device_count", nullptr, FORWARD(go_device_count, count));
}

int32_t go_set_device(int32_t device) { return guarded("go_set_device", nullptr, FORWARD(go_set_device, device)); }

int32_t go_alloc(uint64_t bytes, void** out) { return guarded("go_alloc", nullptr, FORWARD(go_alloc, bytes, out)); }

int32_t go_free(void* ptr) { return guarded("go_free", nullptr, FORWARD(go_free, ptr)); }

int32_t go_copy_in(void* dst, const void* host_src, uint64_t bytes) {
  return guarded("go_copy_in", nullptr, FORWARD(go_copy_in, dst, host_src, bytes));
}

int32_t go_copy_out(void* host_dst, const void* src, uint64_t bytes) {
  return guarded("go_copy_out", nullptr, FORWARD(go_copy_out, host_dst, src, bytes));
}

int32_t go_synchronize(void) { return guarded("go_synchronize", nullptr, FORWARD(go_synchronize)); }

int32_t go_set_num_threads(int32_t threads) {
  return guarded("go_set_num_threads", nullptr, FORWARD(go_set_num_threads, threads));
}

int32_t go_fp8_gemm(const go_tensor* a, const go_tensor* sfa, const go_tensor* b, const go_tensor* sfb,
                    const go_tensor* c, const go_tensor* d, int32_t gran_a_mn, int32_t gran_a_k, int32_t gran_b_mn,
                    int32_t gran_b_k, int32_t model) {
  return guarded("go_fp8_gemm", d,
                 FORWARD(go_fp8_gemm, a, sfa, b, sfb, c, d, gran_a_mn, gran_a_k, gran_b_mn, gran_b_k, model));
}

int32_t go_m_grouped_fp8_gemm_contiguous(const go_tensor* a, const go_tensor* sfa, const go_tensor* b,
                                         const go_tensor* sfb, const go_tensor* d, const go_tensor* grouped_layout,
                                         int32_t gran_a_mn, int32_t gran_a_k, int32_t gran_b_mn, int32_t gran_b_k,
                                         int32_t use_psum_layout, int32_t mk_alignment, int32_t model) {
  return guarded("go_m_grouped_fp8_gemm_contiguous", d,
                 FORWARD(go_m_grouped_fp8_gemm_contiguous, a, sfa, b, sfb, d, grouped_layout, gran_a_mn, gran_a_k,
                         gran_b_mn, gran_b_k, use_psum_layout, mk_alignment, model));
}

int32_t go_m_grouped_fp8_gemm_masked(const go_tensor* a, const go_tensor* sfa, const go_tensor* b,
                                     const go_tensor* sfb, const go_tensor* d, const go_tensor* masked_m,
                                     int32_t gran_a_mn, int32_t gran_a_k, int32_t gran_b_mn, int32_t gran_b_k,
                                     int32_t model) {
  return guarded("go_m_grouped_fp8_gemm_masked", d,
                 FORWARD(go_m_grouped_fp8_gemm_masked, a, sfa, b, sfb, d, masked_m, gran_a_mn, gran_a_k, gran_b_mn,
                         gran_b_k, model));
}

int32_t go_k_grouped_fp8_gemm(const go_tensor* a, const go_tensor* sfa, const go_tensor* b, const go_tensor* sfb,
                              const go_tensor* c, const go_tensor* d, const go_tensor* ks, int32_t layout,
                              int32_t gran_k, int32_t model) {
  return guarded("go_k_grouped_fp8_gemm", d,
                 FORWARD(go_k_grouped_fp8_gemm, a, sfa, b, sfb, c, d, ks, layout, gran_k, model));
}

int32_t go_bf16_gemm(const go_tensor* a, const go_tensor* b, const go_tensor* c, const go_tensor* d, int32_t model) {
  return guarded("go_bf16_gemm", d, FORWARD(go_bf16_gemm, a, b, c, d, model));
}

int32_t go_m_grouped_bf16_gemm_contiguous(const go_tensor* a, const go_tensor* b, const go_tensor* d,
                                          const go_tensor* grouped_layout, int32_t use_psum_layout,
                                          int32_t mk_alignment, int32_t model) {
  return guarded("go_m_grouped_bf16_gemm_contiguous", d,
                 FORWARD(go_m_grouped_bf16_gemm_contiguous, a, b, d, grouped_layout, use_psum_layout, mk_alignment,
                         model));
}

int32_t go_m_grouped_bf16_gemm_masked(const go_tensor* a, const go_tensor* b, const go_tensor* d,
                                      const go_tensor* masked_m, int32_t model) {
  return guarded("go_m_grouped_bf16_gemm_masked", d, FORWARD(go_m_grouped_bf16_gemm_masked, a, b, d, masked_m, model));
}

int32_t go_k_grouped_bf16_gemm(const go_tensor* a, const go_tensor* b, const go_tensor* c, const go_tensor* d,
                               const go_tensor* ks, int32_t model) {
  return guarded("go_k_grouped_bf16_gemm", d, FORWARD(go_k_grouped_bf16_gemm, a, b, c, d, ks, model));
}

int32_t go_fp8_gemm_skip_head_mid(const go_tensor* a, const go_tensor* sfa, const go_tensor* b, const go_tensor* sfb,
                                  const go_tensor* d, int32_t gran_a_mn, int32_t gran_a_k, int32_t gran_b_mn,
                                  int32_t gran_b_k, int32_t left, int32_t mid, int32_t right, int32_t model) {
  return guarded("go_fp8_gemm_skip_head_mid", d,
                 FORWARD(go_fp8_gemm_skip_head_mid, a, sfa, b, sfb, d, gran_a_mn, gran_a_k, gran_b_mn, gran_b_k, left,
                         mid, right, model));
}

int32_t go_tf32_hc_prenorm_gemm(const go_tensor* a, const go_tensor* b, const go_tensor* d, const go_tensor* sqr_sum,
                                int32_t num_splits, int32_t tf32_rounding, int32_t model) {
  return guarded("go_tf32_hc_prenorm_gemm", d,
                 FORWARD(go_tf32_hc_prenorm_gemm, a, b, d, sqr_sum, num_splits, tf32_rounding, model));
}

int32_t go_fp8_mqa_logits(const go_tensor* q, const go_tensor* kv, const go_tensor* kv_sf, const go_tensor* weights,
                          const go_tensor* ks, const go_tensor* ke, const go_tensor* logits, int32_t clean_logits,
                          int32_t max_seqlen_k, int32_t model) {
  return guarded("go_fp8_mqa_logits", logits,
                 FORWARD(go_fp8_mqa_logits, q, kv, kv_sf, weights, ks, ke, logits, clean_logits, max_seqlen_k, model));
}

int32_t go_fp8_paged_mqa_logits(const go_tensor* q, const go_tensor* kv_cache, const go_tensor* weights,
                                const go_tensor* context_lens, const go_tensor* block_table, const go_tensor* logits,
                                int32_t block_kv, int32_t model) {
  return guarded("go_fp8_paged_mqa_logits", logits,
                 FORWARD(go_fp8_paged_mqa_logits, q, kv_cache, weights, context_lens, block_table, logits, block_kv,
                         model));
}

}  // extern "C"
