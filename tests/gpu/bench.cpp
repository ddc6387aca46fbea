// Times the CUDA backend's FP8 GEMMs through the C ABI (loaded by dlopen) on the DeepSeek-V3 shapes of
// deepgemm-ops.md §12: dense fp8_gemm_nt 1D2D (M in {64, 128, 4096} x 7 (N, K)), m-grouped contiguous
// ((G, m) in {(4, 8192), (8, 4096)} x 4 (N, K)) and masked ((G, m) in {(32, 192), (6, 1024), (32, 20), (6, 20)} x 4 (N, K),
// Mmax = m rounded up to 128, masked_m[g] = m).
//
// Timing: CUDA events recorded on the legacy default stream around batches of calls (the backend launches on that
// stream and, with GO_CUDA_ASYNC=1, returns without synchronizing). Warm-up, then the median over >= 20 samples; each
// sample is `batch` calls divided by `batch`. Inputs rotate over enough sets to exceed max(200 MB, 4 x L2).
// Two timings per shape: "per call" (events around the batch as the host issues it: a short kernel can finish
// before the host has issued the next call, so this includes the host's per-call cost) and "GPU" (a spin kernel
// holds the stream while the host queues the whole batch, then the events time the kernels back to back, the way
// nvbench's blocking kernel and torch.cuda._sleep do). A GPU sample whose batch took the host longer to queue than
// the spin lasted is retried with a longer spin; the host's queueing time per call is reported too.
// The grouped and masked calls check their index tensor (grouped_layout / masked_m) on the device and queue without
// waiting (kernels/cuda/grouped_gate.h), so they get the GPU timing too; a row whose calls wait for the GPU gets no
// GPU sample and says "timing": "per-call".
//
// Before timing, when the backend exports go_ext_fast_prepare, every kernel is compiled / loaded in parallel (one
// std::thread worker per shape, up to hardware_concurrency) and the wall time of that phase is printed. The JIT totals
// (go_ext_jit_stats) and each shape's kernel configuration (go_ext_fast_last_config) are printed when exported.
//
// usage: bench CUDA_SO [--quick] [--json PATH] [--filter "SUBSTR|SUBSTR"] [--sweep "cfg1;cfg2;..."] [--sweep-only]
//                      [--samples N] [--no-prepare] [--stall S] [--floor | --no-floor] [--once | --calls N]
//                      [--rotate-mb MB] [--shape NAME ...]
//   --rotate-mb: rotate each shape's inputs over at least MB megabytes instead of max(200 MB, 4 x L2); 0: one input
//            set, so that the inputs, and the kernel's code and parameters, can stay in L2 from one call to the next
//            (what a trace of a kernel timed on one operand set saw; the tables always rotate).
//   --shape: a shape outside the 45, named as the tables name them ("dense 4096x4224x32768", "masked 32x20x4096x2048";
//            the rules of tests/gpu/shapes.py's parse_shape_name); repeatable; with --shape only the named shapes run
//            (and those --filter picks from the 45), so that run.sh's profile step can profile any shape.
//   --floor: time the streaming floor (stream_floor_kernel) after each shape; only run.sh's bench step asks for it.
//            --no-floor (the default; the last of the two wins) is what the history's commands pass.
//   --stall: a watchdog ends the process (exit 3, naming what it was timing) after S seconds without progress
//            (default 30; 0: off), so that a kernel that never finishes (a profiling build, a bug) does not hold the
//            GPU run until its outer timeout; the rows finished so far are already in the JSON.
//   --once: each shape called once on one input set and not timed (no rows in the JSON), for a profiler that sees
//            one launch: --samples takes at least 20, so the profiled runs that passed --samples 1 also filled the
//            rotating sets (> 200 MB) and timed 20 samples of batches under the tool. Not with --sweep or --floor.
//   --calls N: as --once (which is --calls 1), N calls back to back on the one input set (1 to 1000), so that a
//            profiler can skip N - 1 of them and see a launch that follows its own kernel, as a timed call does.
//   --sweep: for each config string, GO_CUDA_FAST_CFG=<cfg> (setenv) while timing every dense shape: rows of kind
//            "dense-sweep" whose "config" is the swept string.
// build: nvcc -x cu -gencode=arch=compute_90a,code=sm_90a -O2 -std=c++17 -o bench tests/gpu/bench.cpp -ldl
#include <cuda_fp8.h>
#include <cuda_runtime.h>
#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "../../kernels/cuda/gemm_oracle_cuda_ext.h"
#include "../../kernels/gemm_oracle.h"
#include "parallel_for.h"

using JitStats = go_cuda_jit_stats;  // the backend's JIT counters (optional symbols, looked up with dlsym)

struct Api {
  decltype(&go_alloc) alloc;
  decltype(&go_free) free_;
  decltype(&go_copy_in) copy_in;
  decltype(&go_last_error) last_error;
  decltype(&go_fp8_gemm) fp8_gemm;
  decltype(&go_m_grouped_fp8_gemm_contiguous) mg;
  decltype(&go_m_grouped_fp8_gemm_masked) masked;
  decltype(&go_synchronize) sync;
  // Optional (absent: nullptr).
  int32_t (*jit_stats)(JitStats*);
  int32_t (*last_config)(char*, int64_t);
  int32_t (*prepare)(int32_t, int64_t, int64_t, int64_t, int64_t);
};

enum Kind { DENSE = 0, CONTIGUOUS = 1, MASKED = 2 };
static const char* kind_name(Kind k) { return k == DENSE ? "dense" : k == CONTIGUOUS ? "contiguous" : "masked"; }

struct Shape {
  Kind kind;
  int64_t g, m, n, k;  // dense: g = 1; contiguous: m rows per group; masked: m = masked_m of every group
  int64_t mmax() const { return kind == MASKED ? (m + 127) / 128 * 128 : m; }
  int64_t rows() const { return kind == DENSE ? m : g * m; }  // real rows (FLOPs, bytes)
  std::string name() const {
    char b[96];
    if (kind == DENSE)
      std::snprintf(b, sizeof b, "dense %lldx%lldx%lld", (long long)m, (long long)n, (long long)k);
    else
      std::snprintf(b, sizeof b, "%s %lldx%lldx%lldx%lld", kind_name(kind), (long long)g, (long long)m, (long long)n,
                    (long long)k);
    return b;
  }
  double flops() const { return 2.0 * static_cast<double>(rows()) * n * k; }
  // Bytes a kernel must move at least: real A rows, every B, real D rows (bf16), both scale tensors.
  double bytes() const {
    const double kb = static_cast<double>((k + 127) / 128), nb = static_cast<double>((n + 127) / 128);
    const double r = static_cast<double>(rows()), gg = kind == DENSE ? 1.0 : static_cast<double>(g);
    return r * k + gg * n * k + r * n * 2.0 + r * kb * 4.0 + gg * nb * kb * 4.0;
  }
};

/// A decimal count from lo to hi, the whole string (the options that take one: --calls, --rotate-mb).
static bool parse_count(const std::string& v, long long lo, long long hi, long long* out) {
  char* end = nullptr;
  const long long n = std::strtoll(v.c_str(), &end, 10);
  if (v.empty() || *end != '\0' || n < lo || n > hi) return false;
  *out = n;
  return true;
}

/// The shape a name stands for, by tests/gpu/shapes.py's rules (positive; M a multiple of 4, N of 64, K of 128; a
/// contiguous group's rows of 128); false with *why naming the fault.
static bool parse_shape(const std::string& raw, Shape* out, std::string* why) {
  const size_t first = raw.find_first_not_of(" \t"), last = raw.find_last_not_of(" \t");
  const std::string name = first == std::string::npos ? "" : raw.substr(first, last - first + 1);
  char kind[16] = {0};
  long long d[4] = {0, 0, 0, 0};
  char tail = 0;
  int dims = 0;
  if (std::sscanf(name.c_str(), "%15s %lldx%lldx%lldx%lld%c", kind, &d[0], &d[1], &d[2], &d[3], &tail) == 5) dims = 4;
  else if (std::sscanf(name.c_str(), "%15s %lldx%lldx%lld%c", kind, &d[0], &d[1], &d[2], &tail) == 4) dims = 3;
  const std::string k = kind;
  if (!((k == "dense" && dims == 3) || ((k == "contiguous" || k == "masked") && dims == 4))) {
    *why = "expected 'dense MxNxK', 'contiguous GxMxNxK' or 'masked GxMxNxK'";
    return false;
  }
  *out = dims == 3 ? Shape{DENSE, 1, d[0], d[1], d[2]} : Shape{k == "masked" ? MASKED : CONTIGUOUS, d[0], d[1], d[2], d[3]};
  if (out->g <= 0 || out->m <= 0 || out->n <= 0 || out->k <= 0) *why = "every dimension must be positive";
  else if (out->m % 4 || out->n % 64 || out->k % 128) *why = "M must be a multiple of 4, N of 64 and K of 128";
  else if (out->kind == CONTIGUOUS && out->m % 128) *why = "a contiguous group's rows must be a multiple of 128";
  else return true;
  return false;
}

struct Row {
  std::string kind, config, last_config, error, timing = "gpu";  // timing: "gpu", or "per-call" (as issued)
  int64_t g, m, n, k;
  double us = -1, us_min = -1, tflops = 0, gbs = 0, bytes = 0;  // GPU time (queue held full); -1: not measured
  double us_call = -1, host_us = -1;  // per call as issued (host-paced), and the host's queueing time per call
  // The streaming floor's GPU time in each variant that ran ("U<loads a thread in flight> x<CTAs per SM in the grid>",
  // in kFloorUnrolls x kFloorGrids order); the floor is the fastest (fastest_floor).
  std::vector<std::pair<std::string, double>> floor_variants;
  int samples = 0, batch = 0, sets = 0;
};

static go_tensor tensor(void* p, int dt, std::vector<int64_t> shape, std::vector<int64_t> strides) {
  go_tensor t;
  std::memset(&t, 0, sizeof t);
  t.data = p;
  t.dtype = dt;
  t.ndim = static_cast<int32_t>(shape.size());
  for (size_t i = 0; i < shape.size(); ++i) {
    t.shape[i] = shape[i];
    t.strides[i] = strides[i];
  }
  return t;
}

// Host pools of e4m3 codes and f32 scales; device buffers are filled from them at varying offsets. The codes are
// standard-normal samples rounded to e4m3 (RNE, saturating), the distribution of the torch baselines
// (`torch.randn(...).to(torch.float8_e4m3fn)`): tensor-core power, and so the clock under load, depends on the data,
// so ours and cuBLASLt's are timed on the same kind of data. BENCH_UNIFORM_CODES=1 draws uniform codes (no NaN).
static std::vector<uint8_t> g_codes;
static std::vector<float> g_scales;
static void init_pools() {
  g_codes.resize(size_t{64} << 20);
  uint32_t s = 12345;
  const bool uniform = std::getenv("BENCH_UNIFORM_CODES") != nullptr;
  std::mt19937 rng(12345);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (auto& c : g_codes) {
    if (uniform) {
      s = s * 1664525u + 1013904223u;
      uint8_t v = static_cast<uint8_t>(s >> 24);
      if ((v & 0x7F) == 0x7F) v = 0x38;
      c = v;
    } else {
      c = static_cast<uint8_t>(__nv_cvt_float_to_fp8(normal(rng), __NV_SATFINITE, __NV_E4M3));
    }
  }
  g_scales.resize(size_t{1} << 20);
  for (auto& f : g_scales) {
    s = s * 1664525u + 1013904223u;
    f = 1.0f / static_cast<float>(1 + (s >> 28));
  }
}

static std::vector<void*>* g_live = nullptr;

static void* dev_fill(Api& api, size_t bytes, uint32_t seed, bool scale) {
  void* p = nullptr;
  if (api.alloc(bytes, &p) != 0) {
    std::printf("  alloc %zu bytes: %s\n", bytes, api.last_error());
    return nullptr;
  }
  g_live->push_back(p);
  const uint8_t* pool = scale ? reinterpret_cast<const uint8_t*>(g_scales.data()) : g_codes.data();
  const size_t pool_bytes = scale ? g_scales.size() * 4 : g_codes.size();
  size_t off = (static_cast<size_t>(seed) * 7919u * 4u) % (pool_bytes / 2) / 4 * 4, done = 0;
  while (done < bytes) {
    const size_t n = std::min(bytes - done, pool_bytes - off);
    if (api.copy_in(static_cast<uint8_t*>(p) + done, pool + off, n) != 0) {
      std::printf("  copy_in: %s\n", api.last_error());
      return nullptr;
    }
    done += n;
    off = 0;
  }
  return p;
}

static void* dev_zero(Api& api, size_t bytes) {
  void* p = nullptr;
  if (api.alloc(bytes, &p) != 0) {
    std::printf("  alloc %zu bytes: %s\n", bytes, api.last_error());
    return nullptr;
  }
  g_live->push_back(p);
  return p;
}

static double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static std::string json_str(const std::string& s) {
  std::string o = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      o += '\\';
      o += static_cast<char>(c);
    } else if (c < 0x20) {
      char b[8];
      std::snprintf(b, sizeof b, "\\u%04x", c);
      o += b;
    } else {
      o += static_cast<char>(c);
    }
  }
  return o + "\"";
}

static std::string json_num(double v) {
  if (!std::isfinite(v)) return "null";
  char b[48];
  std::snprintf(b, sizeof b, "%.9g", v);
  return b;
}

static std::string last_config(Api& api) {
  if (!api.last_config) return "";
  char buf[512] = {0};
  if (api.last_config(buf, sizeof buf) != 0) return std::string("? (") + api.last_error() + ")";
  buf[sizeof buf - 1] = 0;
  return buf;
}

static bool get_jit(Api& api, JitStats* s) {
  std::memset(s, 0, sizeof *s);
  return api.jit_stats && api.jit_stats(s) == 0;
}

static std::string jit_json(const JitStats& s) {
  const double cm = s.compiles ? s.compile_ms_total / s.compiles : 0, lm = s.disk_loads ? s.load_ms_total / s.disk_loads : 0;
  return "{\"compiles\":" + std::to_string(s.compiles) + ",\"compile_ms_total\":" + json_num(s.compile_ms_total) +
         ",\"compile_ms_mean\":" + json_num(cm) + ",\"compile_ms_max\":" + json_num(s.compile_ms_max) +
         ",\"disk_loads\":" + std::to_string(s.disk_loads) + ",\"load_ms_total\":" + json_num(s.load_ms_total) +
         ",\"load_ms_mean\":" + json_num(lm) + ",\"load_ms_max\":" + json_num(s.load_ms_max) +
         ",\"memory_hits\":" + std::to_string(s.memory_hits) + ",\"aot_launches\":" + std::to_string(s.aot_launches) +
         "}";
}

static void print_jit(const char* what, const JitStats& s) {
  std::printf("%s: compiles %lld (mean %.1f ms, max %.1f ms, total %.1f ms); disk loads %lld (mean %.2f ms, max %.2f ms); "
              "memory hits %lld; AOT launches %lld\n",
              what, (long long)s.compiles, s.compiles ? s.compile_ms_total / s.compiles : 0.0, s.compile_ms_max,
              s.compile_ms_total, (long long)s.disk_loads, s.disk_loads ? s.load_ms_total / s.disk_loads : 0.0,
              s.load_ms_max, (long long)s.memory_hits, (long long)s.aot_launches);
}

// Calls go_ext_fast_prepare for every shape from a pool of worker threads; returns the wall time in ms (-1: absent).
static double prepare_all(Api& api, const std::vector<Shape>& shapes, const char* label, int* threads_used) {
  if (!api.prepare || shapes.empty()) return -1;
  std::vector<double> each(shapes.size(), 0);
  const ParallelRun run = parallel_for(shapes.size(), [&](size_t i) -> std::string {
    const Shape& s = shapes[i];
    const auto a = std::chrono::steady_clock::now();
    const int64_t m = s.kind == DENSE ? s.m : s.kind == CONTIGUOUS ? s.g * s.m : s.mmax();
    const int st = api.prepare(static_cast<int32_t>(s.kind), m, s.n, s.k, s.kind == DENSE ? 1 : s.g);
    each[i] = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - a).count();
    return st == 0 ? "" : s.name() + ": status " + std::to_string(st) + " " + api.last_error();
  });
  *threads_used = static_cast<int>(run.threads);
  const size_t slow = static_cast<size_t>(std::max_element(each.begin(), each.end()) - each.begin());
  std::printf("prepare%s: %zu shapes on %zu threads in %.1f ms wall (slowest %s: %.1f ms)\n", label, shapes.size(),
              run.threads, run.ms, shapes[slow].name().c_str(), each[slow]);
  for (const auto& e : run.errors) std::printf("  prepare error: %s\n", e.c_str());
  return run.ms;
}

struct Timer {
  cudaEvent_t e0 = nullptr, e1 = nullptr;
  Timer() {
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
  }
  ~Timer() {
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
  }
};

// Holds the stream for `cycles` SM clocks (the "GPU" timing queues a batch behind it).
__global__ void spin_kernel(long long cycles) {
  const long long t0 = clock64();
  while (clock64() - t0 < cycles) {
  }
}

static double now_us() {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// The watchdog's view: when the timing last made progress, and what it is timing.
static std::atomic<double> g_progress_us{0};
static std::mutex g_doing_mu;
static std::string g_doing = "setup";

static void progress() { g_progress_us = now_us(); }
static void doing(const std::string& what) {
  {
    std::lock_guard<std::mutex> lk(g_doing_mu);
    g_doing = what;
  }
  progress();
}

static void start_watchdog(int stall_s) {
  if (stall_s <= 0) return;
  progress();
  std::thread([stall_s] {
    for (;;) {
      std::this_thread::sleep_for(std::chrono::seconds(1));
      if (now_us() - g_progress_us < stall_s * 1e6) continue;
      std::string what;
      {
        std::lock_guard<std::mutex> lk(g_doing_mu);
        what = g_doing;
      }
      std::printf("bench: no progress for %d s while timing %s (a kernel that never finishes?): exiting\n", stall_s,
                  what.c_str());
      std::fflush(stdout);
      std::_Exit(3);  // the process's CUDA context, and with it the stuck kernel, ends here
    }
  }).detach();
}

struct Timing {
  std::vector<double> gpu, call;  // µs per call, one entry per sample
  double host_us = 0;             // median host time to issue one call
};

// Times `call(i)` (i = the call's index, for rotating inputs): warm-up, then `samples` batches of `batch` calls
// between two events on the legacy default stream, first as issued (t->call), then, when `gpu` is set, queued
// behind a spin kernel (t->gpu; see the file comment). Returns the status of the first failing call (0: all fine).
template <class F>
static int time_calls(Api& api, Timer& tm, F call, int sets, int samples, int batch, bool gpu, Timing* t) {
  const int warm = std::max(3, std::min(sets, 64));
  for (int i = 0; i < warm; ++i) {
    const int st = call(i);
    if (st != 0) return st;
  }
  if (api.sync() != 0) return GO_ERR_DEVICE;
  int idx = warm;
  std::vector<double> host;
  auto sample = [&](bool held, double spin_us, double* issue_us) -> int {
    if (held) spin_kernel<<<1, 1>>>(static_cast<long long>(spin_us * 2000.0));  // 2 GHz: at or above the SM clock
    cudaEventRecord(tm.e0, 0);
    const double h0 = now_us();
    for (int j = 0; j < batch; ++j) {
      const int st = call(idx++);
      if (st != 0) return st;
    }
    *issue_us = now_us() - h0;
    cudaEventRecord(tm.e1, 0);
    const cudaError_t e = cudaEventSynchronize(tm.e1);
    if (e != cudaSuccess) {
      std::printf("  cudaEventSynchronize: %s\n", cudaGetErrorString(e));
      return GO_ERR_DEVICE;
    }
    progress();
    return 0;
  };
  for (int s = 0; s < samples; ++s) {
    double issue = 0;
    if (const int st = sample(false, 0, &issue)) return st;
    float ms = 0;
    cudaEventElapsedTime(&ms, tm.e0, tm.e1);
    t->call.push_back(1e3 * ms / batch);
    host.push_back(issue / batch);
  }
  t->host_us = median(host);
  if (gpu) {
    double spin = 2.0 * *std::max_element(host.begin(), host.end()) * batch + 50.0;
    for (int s = 0, tries = 0; s < samples && tries < 4 * samples; ++tries) {
      double issue = 0;
      if (const int st = sample(true, spin, &issue)) return st;
      if (issue + 20.0 > spin) {  // the host was still queueing when the spin ended: not a GPU-only sample
        spin = 2.0 * issue + 50.0;
        continue;
      }
      float ms = 0;
      cudaEventElapsedTime(&ms, tm.e0, tm.e1);
      t->gpu.push_back(1e3 * ms / batch);
      ++s;
    }
  }
  return api.sync();
}

// The streaming floor of a shape: one kernel that reads every byte the GEMM must read (A, B and both scale tensors) and
// writes every byte it must write (D, zeros), and nothing else (floor_bytes: a masked shape's real rows only). It is
// launched and timed the way our GEMM is (programmatic dependent launch on the legacy default stream, back to back
// behind the spin kernel, the same rotating sets), so its time is what moving the minimum bytes costs on this board
// with one kernel per call: the launch, the first load's latency and the transfer. The "% of HBM bound" target (bytes /
// 4.8 TB/s) cannot be beaten by any kernel whose time is above this floor's. 16-byte loads (ld.global.nc, L1
// no-allocate), U in flight per thread, a grid of G CTAs of 256 threads per SM, tails of fewer than 16 bytes read
// bytewise. Each shape times six variants, every U of kFloorUnrolls (2, 4) in every G of kFloorGrids (4, 8, 16), and
// keeps the fastest. Registers bound the CTAs resident at once (floor_residency, printed and in the JSON; H200, nvcc
// 13.0: U2 32 registers a thread, 8 CTAs an SM; U4 38, 6), so U x 16 B x 256 x min(G, resident CTAs) is what an SM has
// requested at most: 32 KB (U2, G 4) to 96 KB (U4, G 8 or 16), against the ~36 KB that 4.8 TB/s x 1 us of latency over
// 132 SMs needs (Little's law). Not U 8: ptxas kept at most 4 of its 8 loads in flight (in its SASS the fifth load
// writes the first's registers, after the XOR that reads them), and it timed like U 4. No one variant is fastest
// everywhere, and neither the bytes in flight nor the warps an SM order them (H200, all 45 shapes): at masked 32 x 20 x
// 4096 x 2048, U4 G4 took 79.9 us, U2 G4 (the same CTAs, half the loads) 64.3, the other four 63.2-64.4; adding the U2
// variants lowered the floor by up to 11 % (dense 64 x 32768 x 512 8.1 -> 7.2 us, U2 G16).
struct FloorSegs {
  const uint8_t* src[4];
  long long src_bytes[4];
  uint8_t* dst;
  long long dst_bytes;
  unsigned* sink;  // written only if the loaded bytes XOR to a value they never do, so the loads stay
};

__device__ __forceinline__ uint4 ld_stream(const uint4* p) {
  uint4 v;
  asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p));
  return v;
}

template <int U>
__global__ void __launch_bounds__(256) stream_floor_kernel(FloorSegs s) {
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");  // like the GEMM: no global access before the prior grid ends
  const long long tid = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  unsigned acc = 0;
  for (int q = 0; q < 4; ++q) {
    const uint4* p = reinterpret_cast<const uint4*>(s.src[q]);
    const long long n = s.src_bytes[q] / 16;
    long long i = tid;
    for (; i + (U - 1) * stride < n; i += U * stride) {
      uint4 v[U];
#pragma unroll
      for (int u = 0; u < U; ++u) v[u] = ld_stream(p + i + u * stride);
#pragma unroll
      for (int u = 0; u < U; ++u) acc ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
    }
    for (; i < n; i += stride) {
      const uint4 a = ld_stream(p + i);
      acc ^= a.x ^ a.y ^ a.z ^ a.w;
    }
    if (tid == 0)
      for (long long b = n * 16; b < s.src_bytes[q]; ++b) acc ^= s.src[q][b];
  }
  uint4* o = reinterpret_cast<uint4*>(s.dst);
  const long long n = s.dst_bytes / 16;
  for (long long i = tid; i < n; i += stride) o[i] = make_uint4(0, 0, 0, 0);
  if (tid == 0)
    for (long long b = n * 16; b < s.dst_bytes; ++b) s.dst[b] = 0;
  if (acc == 0x9E3779B9u) atomicAdd(s.sink, 1u);
}

// The variants each shape's floor is timed in: every unroll (loads in flight per thread, with its kernel) in every grid
// (CTAs per SM).
struct FloorUnroll {
  int unroll;
  void (*kernel)(FloorSegs);
};
static const FloorUnroll kFloorUnrolls[] = {{2, stream_floor_kernel<2>}, {4, stream_floor_kernel<4>}};
static const int kFloorGrids[] = {4, 8, 16};

// Each unroll's registers a thread and CTAs of 256 threads resident an SM
// (cudaOccupancyMaxActiveBlocksPerMultiprocessor): a variant of G CTAs per SM has min(G, ctas) of them loading at once.
struct FloorResidency {
  int unroll, registers, ctas;
};
static std::vector<FloorResidency> floor_residency() {
  std::vector<FloorResidency> out;
  for (const FloorUnroll& u : kFloorUnrolls) {
    const void* fn = reinterpret_cast<const void*>(u.kernel);
    cudaFuncAttributes fa{};
    int ctas = 0;
    if (cudaFuncGetAttributes(&fa, fn) == cudaSuccess &&
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&ctas, fn, 256, 0) == cudaSuccess)
      out.push_back({u.unroll, fa.numRegs, ctas});
  }
  return out;
}

// The fastest of a row's floor variants: {its name, its GPU us}; {"", -1} where none ran.
static std::pair<std::string, double> fastest_floor(const Row& r) {
  std::pair<std::string, double> best{"", -1};
  for (const auto& v : r.floor_variants)
    if (best.second < 0 || v.second < best.second) best = v;
  return best;
}

// Bytes of a dense set's tensor: its elements (each tensor of make_sets is packed) times the element size.
static long long tensor_bytes(const go_tensor& t) {
  long long n = t.dtype == GO_F32 ? 4 : t.dtype == GO_BF16 ? 2 : 1;  // GO_E4M3: 1
  for (int i = 0; i < t.ndim; ++i) n *= t.shape[i];
  return n;
}

// The bytes the floor moves in each of a set's first five tensors (a, sfa, b, sfb, d), which should add up to
// Shape::bytes() (the caller checks): dense and contiguous, every byte of each; masked, all of B and its scales but only
// the real rows' share of A, its scales and D (m of each group's Mmax rows), read or written as one run from each
// tensor's start. The same bytes as the GEMM's real rows, which it reads group by group; the index tensor is not counted
// (Shape::bytes() leaves it out too).
static void floor_bytes(const Shape& sh, const std::vector<go_tensor>& t, long long bytes[5]) {
  for (size_t q = 0; q < 5; ++q) bytes[q] = tensor_bytes(t[q]);
  if (sh.kind == MASKED)
    for (size_t q : {0, 1, 4}) bytes[q] = bytes[q] / sh.mmax() * sh.m;
}

// Launches the streaming floor over one set (t: a, sfa, b, sfb, d; bytes: floor_bytes); returns a go status.
static int launch_floor(const std::vector<go_tensor>& t, const long long bytes[5], unsigned* sink, int sms,
                        const FloorUnroll& u, int ctas_per_sm) {
  FloorSegs s;
  for (int q = 0; q < 4; ++q) {
    s.src[q] = static_cast<const uint8_t*>(t[static_cast<size_t>(q)].data);
    s.src_bytes[q] = bytes[q];
  }
  s.dst = static_cast<uint8_t*>(t[4].data);
  s.dst_bytes = bytes[4];
  s.sink = sink;
  cudaLaunchConfig_t cfg;
  std::memset(&cfg, 0, sizeof cfg);
  cfg.gridDim = dim3(static_cast<unsigned>(ctas_per_sm * sms));
  cfg.blockDim = dim3(256);
  cfg.stream = 0;
  cudaLaunchAttribute attr;
  attr.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr.val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = &attr;
  cfg.numAttrs = 1;
  const cudaError_t e = cudaLaunchKernelEx(&cfg, u.kernel, s);
  if (e != cudaSuccess) {
    std::printf("  stream_floor_kernel: %s\n", cudaGetErrorString(e));
    return GO_ERR_DEVICE;
  }
  return 0;
}

struct Prepared {
  std::vector<std::vector<go_tensor>> sets;  // per set: a, sfa, b, sfb, d, index
  bool ok = false;
};

// Allocates rotating input sets for one shape (buffers recorded in *g_live).
static Prepared make_sets(Api& api, const Shape& sh, size_t target_bytes) {
  Prepared P;
  const int64_t G = sh.kind == DENSE ? 1 : sh.g, N = sh.n, K = sh.k, KB = (K + 127) / 128, NB = (N + 127) / 128;
  const int64_t MA = sh.kind == MASKED ? G * sh.mmax() : sh.rows();  // allocated rows of A / D
  const size_t set_bytes = static_cast<size_t>(MA * K + G * N * K + MA * N * 2 + MA * KB * 4 + G * NB * KB * 4);
  const int nsets = static_cast<int>(std::max<size_t>(1, std::min<size_t>(1024, (target_bytes + set_bytes - 1) / set_bytes)));
  // Index tensor (shared by the sets): contiguous, group id per row; masked, m per group.
  void* idx = nullptr;
  std::vector<int32_t> h;
  if (sh.kind == CONTIGUOUS)
    for (int64_t i = 0; i < MA; ++i) h.push_back(static_cast<int32_t>(i / sh.m));
  if (sh.kind == MASKED) h.assign(static_cast<size_t>(G), static_cast<int32_t>(sh.m));
  if (!h.empty()) {
    idx = dev_zero(api, h.size() * 4);
    if (!idx || api.copy_in(idx, h.data(), h.size() * 4) != 0) return P;
  }
  for (int s = 0; s < nsets; ++s) {
    void* a = dev_fill(api, static_cast<size_t>(MA * K), 11 + 5 * s, false);
    void* b = dev_fill(api, static_cast<size_t>(G * N * K), 23 + 5 * s, false);
    void* sa = dev_fill(api, static_cast<size_t>(MA * KB * 4), 37 + 5 * s, true);
    void* sb = dev_fill(api, static_cast<size_t>(G * NB * KB * 4), 41 + 5 * s, true);
    void* d = dev_zero(api, static_cast<size_t>(MA * N * 2));
    if (!a || !b || !sa || !sb || !d) return P;
    std::vector<go_tensor> t(6);
    if (sh.kind == DENSE) {
      const int64_t M = sh.m;
      t[0] = tensor(a, GO_E4M3, {M, K}, {K, 1});
      t[1] = tensor(sa, GO_F32, {M, KB}, {1, M});
      t[2] = tensor(b, GO_E4M3, {N, K}, {K, 1});
      t[3] = tensor(sb, GO_F32, {NB, KB}, {KB, 1});
      t[4] = tensor(d, GO_BF16, {M, N}, {N, 1});
    } else {
      if (sh.kind == CONTIGUOUS) {
        t[0] = tensor(a, GO_E4M3, {MA, K}, {K, 1});
        t[1] = tensor(sa, GO_F32, {MA, KB}, {1, MA});
        t[4] = tensor(d, GO_BF16, {MA, N}, {N, 1});
      } else {
        const int64_t Mm = sh.mmax();
        t[0] = tensor(a, GO_E4M3, {G, Mm, K}, {Mm * K, K, 1});
        t[1] = tensor(sa, GO_F32, {G, Mm, KB}, {Mm * KB, 1, Mm});
        t[4] = tensor(d, GO_BF16, {G, Mm, N}, {Mm * N, N, 1});
      }
      t[2] = tensor(b, GO_E4M3, {G, N, K}, {N * K, K, 1});
      t[3] = tensor(sb, GO_F32, {G, NB, KB}, {NB * KB, KB, 1});
      t[5] = tensor(idx, GO_I32, {static_cast<int64_t>(h.size())}, {1});
    }
    P.sets.push_back(std::move(t));
  }
  P.ok = true;
  return P;
}

static int call_shape(Api& api, const Shape& sh, std::vector<go_tensor>& t) {
  switch (sh.kind) {
    case DENSE:
      return api.fp8_gemm(&t[0], &t[1], &t[2], &t[3], nullptr, &t[4], 1, 128, 128, 128, GO_MODEL_SM90_1D2D);
    case CONTIGUOUS:
      return api.mg(&t[0], &t[1], &t[2], &t[3], &t[4], &t[5], 1, 128, 128, 128, 0, 128, GO_MODEL_SM90_1D2D);
    default:
      return api.masked(&t[0], &t[1], &t[2], &t[3], &t[4], &t[5], 1, 128, 128, 128, GO_MODEL_SM90_1D2D);
  }
}

// Times one shape on prepared sets; fills a row (error text on failure).
static Row bench_one(Api& api, Timer& tm, const Shape& sh, Prepared& P, int samples, const char* kind) {
  Row r;
  r.kind = kind;
  r.g = sh.kind == DENSE ? 1 : sh.g;
  r.m = sh.m;
  r.n = sh.n;
  r.k = sh.k;
  r.bytes = sh.bytes();
  const int sets = static_cast<int>(P.sets.size());
  const int batch = sh.kind == DENSE ? 10 : 5;
  // Every call queues without waiting (contiguous and masked calls check their index tensor on the device), so all
  // shapes get the GPU time; a backend whose calls wait for the GPU yields no GPU sample and keeps the per-call time.
  Timing tmg;
  const int st = time_calls(
      api, tm, [&](int i) { return call_shape(api, sh, P.sets[static_cast<size_t>(i % sets)]); }, sets, samples, batch,
      true, &tmg);
  const bool gpu = !tmg.gpu.empty();
  const std::vector<double>& us = gpu ? tmg.gpu : tmg.call;
  r.timing = gpu ? "gpu" : "per-call";
  r.sets = sets;
  r.batch = batch;
  if (st != 0 || us.empty()) {
    r.error = "status " + std::to_string(st) + ": " + api.last_error();
    api.sync();
    return r;  // no configuration: go_ext_fast_last_config would describe an earlier, successful call
  }
  r.last_config = last_config(api);
  r.samples = static_cast<int>(us.size());
  r.us = median(us);
  r.us_min = *std::min_element(us.begin(), us.end());
  r.us_call = median(tmg.call);
  r.host_us = tmg.host_us;
  r.tflops = sh.flops() / (r.us * 1e-6) / 1e12;
  r.gbs = r.bytes / (r.us * 1e-6) / 1e9;
  return r;
}

static void print_row(const std::string& name, const Row& r, const std::string& cfg) {
  if (!r.error.empty())
    std::printf("%-34s %s\n", name.c_str(), r.error.c_str());
  else {
    const auto fl = fastest_floor(r);
    std::printf("%-34s %10.1f %10.1f %9.1f %9.1f %9.1f %7.1f %5d  %s%s\n", name.c_str(), r.us, r.us_min, r.tflops, r.gbs,
                r.us_call, r.host_us, r.sets, cfg.c_str(),
                fl.second > 0 ? (" [streaming floor " + std::to_string(fl.second) + " us, " + fl.first + "]").c_str()
                              : "");
  }
  std::fflush(stdout);
}

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr,
                 "usage: bench CUDA_SO [--quick] [--json PATH] [--filter \"SUBSTR|SUBSTR\"] [--sweep \"cfg1;cfg2\"] [--sweep-only] "
                 "[--samples N] [--no-prepare] [--stall S] [--floor | --no-floor] [--once | --calls N] [--rotate-mb MB] "
                 "[--shape NAME ...]\n");
    return 2;
  }
  bool quick = false, sweep_only = false, no_prepare = false, time_floor = false;
  int untimed_calls = 0;  // --once / --calls N: N untimed calls a shape; 0: timed
  std::string json_path, filter, sweep_arg;
  std::vector<Shape> named;  // --shape
  int samples = 25, stall_s = 30;
  long long rotate_mb = -1;  // --rotate-mb; -1: the default target
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    auto val = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--quick") quick = true;
    else if (a == "--json") json_path = val();
    else if (a == "--filter") filter = val();
    else if (a == "--sweep") sweep_arg = val();
    else if (a == "--sweep-only") sweep_only = true;
    else if (a == "--no-prepare") no_prepare = true;
    else if (a == "--once") untimed_calls = 1;
    else if (a == "--calls") {
      const std::string v = val();
      long long n = 0;
      if (!parse_count(v, 1, 1000, &n)) {
        std::fprintf(stderr, "--calls \"%s\": not a count of calls from 1 to 1000\n", v.c_str());
        return 2;
      }
      untimed_calls = static_cast<int>(n);
    }
    else if (a == "--floor") time_floor = true;
    else if (a == "--no-floor") time_floor = false;
    else if (a == "--samples") samples = std::max(20, std::atoi(val().c_str()));
    else if (a == "--stall") stall_s = std::atoi(val().c_str());
    else if (a == "--rotate-mb") {
      const std::string v = val();
      if (!parse_count(v, 0, 1 << 20, &rotate_mb)) {
        std::fprintf(stderr, "--rotate-mb \"%s\": not a count of megabytes from 0 to 1048576\n", v.c_str());
        return 2;
      }
    }
    else if (a == "--shape") {
      const std::string v = val();
      std::string why;
      Shape sh{};
      if (!parse_shape(v, &sh, &why)) {
        std::fprintf(stderr, "--shape \"%s\": %s\n", v.c_str(), why.c_str());
        return 2;
      }
      named.push_back(sh);
    }
    else {
      std::fprintf(stderr, "unknown argument %s\n", a.c_str());
      return 2;
    }
  }
  if (untimed_calls && (!sweep_arg.empty() || time_floor)) {
    std::fprintf(stderr, "--once / --calls call each shape untimed for a profiler: not with --sweep or --floor\n");
    return 2;
  }
  start_watchdog(stall_s);
  void* h = dlopen(argv[1], RTLD_NOW);
  if (!h) {
    std::fprintf(stderr, "%s\n", dlerror());
    return 2;
  }
  Api api;
  api.alloc = reinterpret_cast<decltype(api.alloc)>(dlsym(h, "go_alloc"));
  api.free_ = reinterpret_cast<decltype(api.free_)>(dlsym(h, "go_free"));
  api.copy_in = reinterpret_cast<decltype(api.copy_in)>(dlsym(h, "go_copy_in"));
  api.last_error = reinterpret_cast<decltype(api.last_error)>(dlsym(h, "go_last_error"));
  api.fp8_gemm = reinterpret_cast<decltype(api.fp8_gemm)>(dlsym(h, "go_fp8_gemm"));
  api.mg = reinterpret_cast<decltype(api.mg)>(dlsym(h, "go_m_grouped_fp8_gemm_contiguous"));
  api.masked = reinterpret_cast<decltype(api.masked)>(dlsym(h, "go_m_grouped_fp8_gemm_masked"));
  api.sync = reinterpret_cast<decltype(api.sync)>(dlsym(h, "go_synchronize"));
  api.jit_stats = reinterpret_cast<decltype(api.jit_stats)>(dlsym(h, "go_ext_jit_stats"));
  api.last_config = reinterpret_cast<decltype(api.last_config)>(dlsym(h, "go_ext_fast_last_config"));
  api.prepare = reinterpret_cast<decltype(api.prepare)>(dlsym(h, "go_ext_fast_prepare"));
  if (!api.alloc || !api.free_ || !api.copy_in || !api.last_error || !api.fp8_gemm || !api.mg || !api.masked ||
      !api.sync) {
    std::fprintf(stderr, "%s: a required go_* symbol is missing\n", argv[1]);
    return 2;
  }
  std::vector<void*> live;
  g_live = &live;
  auto free_live = [&] {  // one shape's buffers (make_sets records them in live)
    for (void* p : live) api.free_(p);
    live.clear();
  };
  init_pools();

  // Device: the backend uses device 0 unless told otherwise; one allocation creates its context first.
  void* probe = nullptr;
  if (api.alloc(256, &probe) != 0) {
    std::fprintf(stderr, "go_alloc: %s\n", api.last_error());
    return 1;
  }
  api.free_(probe);
  int dev = 0;
  cudaGetDevice(&dev);
  cudaDeviceProp prop;
  std::memset(&prop, 0, sizeof prop);
  cudaGetDeviceProperties(&prop, dev);
  const size_t l2 = static_cast<size_t>(std::max(prop.l2CacheSize, 0));
  const size_t target =
      rotate_mb >= 0 ? static_cast<size_t>(rotate_mb) << 20 : std::max<size_t>(size_t{200} << 20, 4 * l2);
  std::printf("device %d: %s, %d SMs, L2 %.1f MB; rotating inputs >= %.0f MB per shape; median of %d samples\n", dev,
              prop.name, prop.multiProcessorCount, l2 / 1048576.0, target / 1048576.0, samples);
  std::printf("GO_CUDA_ASYNC=%s (1: calls queue on the legacy default stream, events time the GPU work)\n",
              std::getenv("GO_CUDA_ASYNC") ? std::getenv("GO_CUDA_ASYNC") : "(unset)");
  std::printf("symbols: go_ext_fast_prepare %s, go_ext_fast_last_config %s, go_ext_jit_stats %s\n",
              api.prepare ? "yes" : "absent", api.last_config ? "yes" : "absent", api.jit_stats ? "yes" : "absent");

  const int64_t dense_m[] = {64, 128, 4096};
  const int64_t dense_nk[][2] = {{2112, 7168}, {576, 7168},   {24576, 1536}, {32768, 512},
                                 {7168, 16384}, {4096, 7168}, {7168, 2048}};
  const int64_t grouped_nk[][2] = {{6144, 7168}, {7168, 3072}, {4096, 4096}, {4096, 2048}};
  std::vector<Shape> shapes;
  for (int64_t m : dense_m)
    for (auto& nk : dense_nk) shapes.push_back({DENSE, 1, m, nk[0], nk[1]});
  for (auto gm : {std::pair<int64_t, int64_t>{4, 8192}, {8, 4096}})
    for (auto& nk : grouped_nk) shapes.push_back({CONTIGUOUS, gm.first, gm.second, nk[0], nk[1]});
  for (auto gm : {std::pair<int64_t, int64_t>{32, 192}, {6, 1024}, {32, 20}, {6, 20}})
    for (auto& nk : grouped_nk) shapes.push_back({MASKED, gm.first, gm.second, nk[0], nk[1]});
  if (quick)
    shapes = {{DENSE, 1, 128, 7168, 2048},
              {DENSE, 1, 4096, 7168, 16384},
              {CONTIGUOUS, 4, 8192, 4096, 7168},
              {MASKED, 32, 192, 4096, 7168}};
  if (!filter.empty()) {
    std::vector<Shape> f;
    for (const auto& s : shapes) {
      // Alternatives separated by '|': a shape is kept when its name contains any of them.
      bool keep = false;
      for (size_t a = 0; !keep && a <= filter.size();) {
        const size_t b = std::min(filter.find('|', a), filter.size());
        keep = b > a && s.name().find(filter.substr(a, b - a)) != std::string::npos;
        a = b + 1;
      }
      if (keep) f.push_back(s);
    }
    shapes.swap(f);
    std::printf("filter \"%s\": %zu shapes\n", filter.c_str(), shapes.size());
  } else if (!named.empty()) {
    shapes.clear();
  }
  for (const auto& sh : named) {
    bool dup = false;
    for (const auto& s : shapes) dup = dup || s.name() == sh.name();
    if (!dup) shapes.push_back(sh);
  }
  std::vector<std::string> sweep;
  for (size_t p = 0; !sweep_arg.empty() && p <= sweep_arg.size();) {
    const size_t q = std::min(sweep_arg.find(';', p), sweep_arg.size());
    std::string c = sweep_arg.substr(p, q - p);
    while (!c.empty() && c.front() == ' ') c.erase(c.begin());
    while (!c.empty() && c.back() == ' ') c.pop_back();
    if (!c.empty()) sweep.push_back(c);
    p = q + 1;
  }
  std::vector<Shape> timed = sweep_only ? std::vector<Shape>{} : shapes;

  // Compile / load every kernel in parallel before timing.
  double prepare_ms = -1;
  int prepare_threads = 0;
  if (no_prepare)
    std::printf("prepare: skipped (--no-prepare); kernels compile at their first call, inside the warm-up\n");
  else if (!api.prepare)
    std::printf("prepare: go_ext_fast_prepare not exported; kernels compile at their first call, inside the warm-up\n");
  else {
    doing("prepare (compiling / loading every kernel)");
    prepare_ms = prepare_all(api, timed, "", &prepare_threads);
  }
  JitStats jit_prep;
  const bool have_jit = get_jit(api, &jit_prep);
  if (have_jit) print_jit("jit after prepare", jit_prep);

  std::vector<Row> rows;
  Timer tm;
  const int sms = prop.multiProcessorCount;
  unsigned* sink = nullptr;  // stream_floor_kernel's never-taken output
  if (cudaMalloc(&sink, 4) != cudaSuccess) {
    std::fprintf(stderr, "cudaMalloc (the streaming floor's sink): %s\n", cudaGetErrorString(cudaGetLastError()));
    return 1;
  }
  const std::vector<FloorResidency> residency = time_floor ? floor_residency() : std::vector<FloorResidency>{};
  for (const FloorResidency& fr : residency)
    std::printf("streaming floor U%d: %d registers a thread, %d CTAs of 256 threads resident an SM\n", fr.unroll,
                fr.registers, fr.ctas);
  // The JSON is rewritten after every row, so a run cut short by a timeout still leaves its rows ("complete": false).
  auto write_json = [&](const std::vector<Row>& rs, bool complete) -> bool {
    if (json_path.empty()) return true;
    std::FILE* f = std::fopen(json_path.c_str(), "w");
    if (!f) {
      std::fprintf(stderr, "cannot write %s\n", json_path.c_str());
      return false;
    }
    JitStats jit_now;
    const bool jit_ok = have_jit && get_jit(api, &jit_now);
    char date[32];
    const std::time_t now = std::time(nullptr);
    std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
    std::string o = "{\"tool\":\"tests/gpu/bench.cpp\",\"date\":" + json_str(date) + ",\"device\":" +
                    json_str(prop.name) + ",\"sms\":" + std::to_string(prop.multiProcessorCount) +
                    ",\"l2_bytes\":" + std::to_string(l2) + ",\"rotate_bytes\":" + std::to_string(target) +
                    ",\"quick\":" + (quick ? "true" : "false") + ",\"complete\":" + (complete ? "true" : "false") +
                    ",\"filter\":" + json_str(filter) +
                    ",\"async\":" + json_str(std::getenv("GO_CUDA_ASYNC") ? std::getenv("GO_CUDA_ASYNC") : "") +
                    ",\"prepare_ms\":" + (prepare_ms < 0 ? std::string("null") : json_num(prepare_ms)) +
                    ",\"prepare_threads\":" + std::to_string(prepare_threads) +
                    ",\"note\":\"CUDA events on the legacy default stream; median per call; dense us: GPU time with the "
                    "batch queued behind a spin kernel (us_call: as issued, host_us: host time per call); the same for "
                    "contiguous/masked (index tensors checked on the device), or per call where timing says so\"";
    o += ",\"jit_after_prepare\":" + (have_jit ? jit_json(jit_prep) : std::string("null"));
    o += ",\"jit\":" + (jit_ok ? jit_json(jit_now) : std::string("null"));
    if (time_floor) {  // the floor kernels' registers and CTAs resident an SM, per unroll
      o += ",\"floor_residency\":{";
      for (size_t i = 0; i < residency.size(); ++i)
        o += (i ? ",\"U" : "\"U") + std::to_string(residency[i].unroll) + "\":{\"registers\":" +
             std::to_string(residency[i].registers) + ",\"ctas_per_sm\":" + std::to_string(residency[i].ctas) + "}";
      o += "}";
    }
    o += ",\"rows\":[";
    for (size_t i = 0; i < rs.size(); ++i) {
      const Row& r = rs[i];
      o += std::string(i ? ",\n" : "\n") + "{\"kind\":" + json_str(r.kind) + ",\"g\":" + std::to_string(r.g) +
           ",\"m\":" + std::to_string(r.m) + ",\"n\":" + std::to_string(r.n) + ",\"k\":" + std::to_string(r.k);
      if (r.error.empty()) {
        o += ",\"us\":" + json_num(r.us) + ",\"us_min\":" + json_num(r.us_min) + ",\"tflops\":" + json_num(r.tflops) +
             ",\"gbs\":" + json_num(r.gbs) + ",\"samples\":" + std::to_string(r.samples) +
             ",\"batch\":" + std::to_string(r.batch) + ",\"sets\":" + std::to_string(r.sets) +
             ",\"us_call\":" + json_num(r.us_call) + ",\"host_us\":" + json_num(r.host_us) +
             ",\"timing\":" + json_str(r.timing);
        if (!r.floor_variants.empty()) {
          const auto fl = fastest_floor(r);
          o += ",\"floor_us\":" + json_num(fl.second) + ",\"floor_variant\":" + json_str(fl.first) +
               ",\"floor_variants_us\":{";
          for (size_t v = 0; v < r.floor_variants.size(); ++v)
            o += (v ? "," : "") + json_str(r.floor_variants[v].first) + ":" + json_num(r.floor_variants[v].second);
          o += "}";
        }
      } else {
        o += ",\"error\":" + json_str(r.error);
      }
      o += ",\"bytes\":" + json_num(r.bytes) + ",\"config\":" + json_str(r.config);
      if (r.kind == "dense-sweep") o += ",\"last_config\":" + json_str(r.last_config);
      o += "}";
    }
    o += "\n]}\n";
    std::fputs(o.c_str(), f);
    std::fclose(f);
    return true;
  };
  write_json(rows, false);  // device, prepare time and JIT totals even if the first shape never finishes
  if (!timed.empty()) {
    std::printf("%-34s %10s %10s %9s %9s %9s %7s %5s  %s\n", "shape (dense MxNxK, grouped GxmxNxK)", "us", "min us",
                "TFLOPS", "GB/s", "call us", "host us", "sets", "config");
    bool noted = false;
    for (const Shape& sh : timed) {
      if (sh.kind != DENSE && !noted) {
        std::printf("(contiguous / masked: each call checks its index tensor on the device and queues without "
                    "waiting: GPU time like the dense shapes)\n");
        noted = true;
      }
      live.clear();
      Prepared P = make_sets(api, sh, untimed_calls ? 0 : target);  // --once / --calls: one set
      if (untimed_calls && P.ok) {
        doing(sh.name() + " (untimed calls)");
        int st = 0;
        for (int c = 0; c < untimed_calls && st == 0; ++c) st = call_shape(api, sh, P.sets[0]);
        const int ss = api.sync();
        if (st != 0 || ss != 0)
          std::printf("%-34s status %d, synchronize %d: %s\n", sh.name().c_str(), st, ss, api.last_error());
        else
          std::printf("%-34s called %d time%s  %s\n", sh.name().c_str(), untimed_calls,
                      untimed_calls == 1 ? "" : "s", last_config(api).c_str());
        std::fflush(stdout);
        free_live();
        continue;
      }
      Row r;
      if (!P.ok) {
        r.kind = kind_name(sh.kind);
        r.g = sh.kind == DENSE ? 1 : sh.g;
        r.m = sh.m;
        r.n = sh.n;
        r.k = sh.k;
        r.bytes = sh.bytes();
        r.error = std::string("setup failed: ") + api.last_error();
      } else {
        doing(sh.name());
        r = bench_one(api, tm, sh, P, samples, kind_name(sh.kind));
        if (time_floor && r.error.empty()) {
          doing(sh.name() + " (streaming floor)");
          const int sets = static_cast<int>(P.sets.size());
          long long bytes[5], moved = 0;  // the floor's bytes, the bound's by construction
          floor_bytes(sh, P.sets[0], bytes);
          for (size_t q = 0; q < 5; ++q) moved += bytes[q];
          if (static_cast<double>(moved) != sh.bytes())
            std::printf("  %s: the streaming floor moves %lld bytes, the bound counts %.0f\n", sh.name().c_str(), moved,
                        sh.bytes());
          for (const FloorUnroll& u : kFloorUnrolls) {
            for (const int g : kFloorGrids) {
              Timing tf;
              const int st = time_calls(
                  api, tm,
                  [&](int i) {
                    return launch_floor(P.sets[static_cast<size_t>(i % sets)], bytes, sink, sms, u, g);
                  },
                  sets, samples, 10, true, &tf);
              if (st != 0 || tf.gpu.empty()) {
                std::printf("  %s: the streaming floor (U %d, %d CTAs per SM) failed (status %d)\n", sh.name().c_str(),
                            u.unroll, g, st);
                api.sync();
                continue;
              }
              r.floor_variants.emplace_back("U" + std::to_string(u.unroll) + " x" + std::to_string(g), median(tf.gpu));
            }
          }
        }
      }
      r.config = r.last_config;
      print_row(sh.name(), r, r.config);
      rows.push_back(r);
      write_json(rows, false);
      free_live();
    }
  }

  // Configuration sweep over the dense shapes.
  std::vector<Shape> dense;
  for (const auto& s : shapes)
    if (s.kind == DENSE) dense.push_back(s);
  if (!sweep.empty() && !dense.empty()) {
    const char* old = std::getenv("GO_CUDA_FAST_CFG");
    const std::string saved = old ? old : "";
    std::printf("sweep: %zu configs x %zu dense shapes (GO_CUDA_FAST_CFG)\n", sweep.size(), dense.size());
    for (const auto& c : sweep) {
      setenv("GO_CUDA_FAST_CFG", c.c_str(), 1);
      int th = 0;
      doing("prepare [" + c + "]");
      if (!no_prepare) prepare_all(api, dense, (" [" + c + "]").c_str(), &th);
    }
    for (const Shape& sh : dense) {
      live.clear();
      Prepared P = make_sets(api, sh, target);
      for (const auto& c : sweep) {
        setenv("GO_CUDA_FAST_CFG", c.c_str(), 1);
        Row r;
        if (!P.ok) {
          r.kind = "dense-sweep";
          r.g = 1;
          r.m = sh.m;
          r.n = sh.n;
          r.k = sh.k;
          r.error = std::string("setup failed: ") + api.last_error();
        } else {
          doing(sh.name() + " [" + c + "]");
          r = bench_one(api, tm, sh, P, samples, "dense-sweep");
        }
        r.config = c;
        print_row(sh.name() + " [sweep]", r, c + (r.last_config.empty() ? "" : " -> " + r.last_config));
        rows.push_back(r);
        write_json(rows, false);
      }
      free_live();
    }
    if (old)
      setenv("GO_CUDA_FAST_CFG", saved.c_str(), 1);
    else
      unsetenv("GO_CUDA_FAST_CFG");
  }

  JitStats jit_end;
  if (have_jit && get_jit(api, &jit_end)) print_jit("jit totals", jit_end);
  else std::printf("jit totals: go_ext_jit_stats not exported\n");

  if (!json_path.empty()) {
    if (!write_json(rows, true)) return 1;
    std::printf("wrote %s (%zu rows)\n", json_path.c_str(), rows.size());
  }
  return 0;
}
