// Runtime specialisation of CUDA kernels: nvcc at first use, an on-disk cubin cache, driver-API loading (jit.h).
#include "jit.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <future>
#include <map>
#include <mutex>
#include <sstream>
#include <vector>

extern char** environ;

namespace go_jit {
namespace {

// The flags every JIT kernel is built with (part of the cache key).
const char* const kFlags[] = {"-cubin", "-O3", "-std=c++17", "-gencode=arch=compute_90a,code=sm_90a"};
// Headers a JIT kernel may include (their contents are part of the cache key).
const char* const kHeaders[] = {
    "sm90_fp8_fast_kernel.cuh", "sm90_fp8_fast_config.cuh", "sm90_fp8_fast_producer.cuh", "sm90_fp8_fast_math.cuh",
    "sm90_fp8_fast_epilogue.cuh", "sm90_fp8_fast_tiles.cuh", "sm90_fp8_fast_profile.cuh", "sm90_async.cuh",
    "sm90_common.cuh", "sm90_wgmma.cuh", "sm90_fast.h", "grouped_gate.h"};

std::mutex g_mu;
Stats g_stats;
std::map<std::string, std::shared_future<CUfunction>> g_table;  // "<device>:<key>" -> function (or a failure)
std::map<std::string, std::string> g_errors;

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

bool file_exists(const std::string& p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

bool read_file(const std::string& p, std::string* out) {
  std::ifstream f(p, std::ios::binary);
  if (!f) return false;
  std::ostringstream ss;
  ss << f.rdbuf();
  *out = ss.str();
  return true;
}

bool write_atomically(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp." + std::to_string(::getpid()) + "." +
                          std::to_string(reinterpret_cast<uintptr_t>(&text));
  {
    std::ofstream f(tmp, std::ios::binary);
    if (!f) return false;
    f << text;
    if (!f) return false;
  }
  return std::rename(tmp.c_str(), path.c_str()) == 0;
}

bool mkdirs(const std::string& dir) {
  std::string cur;
  std::stringstream ss(dir);
  std::string part;
  if (!dir.empty() && dir[0] == '/') cur = "/";
  while (std::getline(ss, part, '/')) {
    if (part.empty()) continue;
    cur += part + "/";
    if (::mkdir(cur.c_str(), 0755) != 0 && errno != EEXIST) return false;
  }
  return true;
}

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

std::string source_dir() {
  std::string d = env("GO_CUDA_JIT_SOURCES");
#ifdef GO_CUDA_SOURCE_DIR
  if (d.empty()) d = GO_CUDA_SOURCE_DIR;
#endif
  return d;
}

std::string cache_dir() {
  std::string d = env("GO_CUDA_JIT_CACHE");
  if (!d.empty()) return d;
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&cache_dir), &info) && info.dli_fname) {
    std::string lib = info.dli_fname;
    const size_t slash = lib.rfind('/');
    return (slash == std::string::npos ? std::string(".") : lib.substr(0, slash)) + "/jit";
  }
  return ".cache/kernels/jit";
}

bool executable(const std::string& p) { return !p.empty() && ::access(p.c_str(), X_OK) == 0; }

std::string find_nvcc() {
  std::string p = env("GO_NVCC");
  if (!p.empty()) return executable(p) ? p : std::string();
  const std::string home = env("CUDA_HOME");
  if (!home.empty() && executable(home + "/bin/nvcc")) return home + "/bin/nvcc";
  std::stringstream path(env("PATH"));
  std::string dir;
  while (std::getline(path, dir, ':')) {
    if (!dir.empty() && executable(dir + "/nvcc")) return dir + "/nvcc";
  }
  if (executable("/usr/local/cuda/bin/nvcc")) return "/usr/local/cuda/bin/nvcc";
  return std::string();
}

// FNV-1a, 64 bits, twice with different offsets: a 128-bit cache key (collisions are not a security concern here).
std::string hash_hex(const std::string& text) {
  uint64_t h1 = 1469598103934665603ull, h2 = 1099511628211ull * 31 + 7;
  for (unsigned char c : text) {
    h1 = (h1 ^ c) * 1099511628211ull;
    h2 = (h2 ^ c) * 1099511628211ull;
    h2 ^= h2 >> 29;
  }
  char buf[40];
  std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(h1),
                static_cast<unsigned long long>(h2));
  return buf;
}

// Driver API through the runtime's entry-point query (the backend does not link libcuda).
template <class F>
F entry(const char* name, int version) {
  void* f = nullptr;
  cudaDriverEntryPointQueryResult q;
  if (cudaGetDriverEntryPointByVersion(name, &f, version, cudaEnableDefault, &q) != cudaSuccess ||
      q != cudaDriverEntryPointSuccess) {
    cudaGetLastError();
    return nullptr;
  }
  return reinterpret_cast<F>(f);
}
using ModuleLoadData = CUresult (*)(CUmodule*, const void*);
using ModuleGetFunction = CUresult (*)(CUfunction*, CUmodule, const char*);
using FuncSetAttribute = CUresult (*)(CUfunction, CUfunction_attribute, int);
using LaunchKernelEx = CUresult (*)(const CUlaunchConfig*, CUfunction, void**, void**);
using GetErrorString = CUresult (*)(CUresult, const char**);
using OccupancyMaxActiveClusters = CUresult (*)(int*, CUfunction, const CUlaunchConfig*);
using FuncGetModule = CUresult (*)(CUmodule*, CUfunction);
using ModuleGetGlobal = CUresult (*)(CUdeviceptr*, size_t*, CUmodule, const char*);

// Runs argv, stdout and stderr into log_path; returns the exit status (-1: could not start).
int run(const std::vector<std::string>& argv, const std::string& log_path) {
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  pid_t pid;
  const int rc = posix_spawn(&pid, args[0], &fa, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) return -1;
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return -1;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

std::string first_lines(const std::string& text, int n) {
  std::string out;
  std::stringstream ss(text);
  std::string line;
  for (int i = 0; i < n && std::getline(ss, line); ++i) out += (i ? "\n" : "") + line;
  return out;
}

bool log_on() { return env("GO_CUDA_JIT_LOG") == "1"; }

// Compiles (if needed) and loads one kernel; runs outside the lock.
CUfunction build_and_load(const std::string& source, const char* symbol, std::string* err) {
  std::string cubin;
  bool compiled = false;
  double compile_ms = 0;
  if (!compile_cached(source, &cubin, &compiled, &compile_ms, err)) return nullptr;
  const auto t1 = std::chrono::steady_clock::now();
  std::string image;
  if (!read_file(cubin, &image) || image.empty()) {
    *err = "JIT: cannot read " + cubin;
    return nullptr;
  }
  static const auto load = entry<ModuleLoadData>("cuModuleLoadData", 2000);
  static const auto get = entry<ModuleGetFunction>("cuModuleGetFunction", 2000);
  if (!load || !get) {
    *err = "JIT: the CUDA driver does not provide cuModuleLoadData / cuModuleGetFunction";
    return nullptr;
  }
  cudaFree(nullptr);  // makes the device's primary context current on this thread
  CUmodule mod = nullptr;
  CUresult r = load(&mod, image.data());
  if (r != CUDA_SUCCESS) {
    *err = "JIT: cuModuleLoadData(" + cubin + "): " + driver_error(r);
    return nullptr;
  }
  CUfunction fn = nullptr;
  r = get(&fn, mod, symbol);
  if (r != CUDA_SUCCESS) {
    *err = "JIT: cuModuleGetFunction(" + std::string(symbol) + "): " + driver_error(r);
    return nullptr;
  }
  const double load_ms = ms_since(t1);
  {
    std::lock_guard<std::mutex> lk(g_mu);
    if (compiled) {
      ++g_stats.compiles;
      g_stats.compile_ms_total += compile_ms;
      g_stats.compile_ms_max = std::max(g_stats.compile_ms_max, compile_ms);
    } else {
      ++g_stats.disk_loads;
      g_stats.load_ms_total += load_ms;
      g_stats.load_ms_max = std::max(g_stats.load_ms_max, load_ms);
    }
  }
  if (log_on()) {
    if (compiled) std::fprintf(stderr, "jit: compiled %s in %.0f ms, loaded in %.1f ms\n", cubin.c_str(), compile_ms, load_ms);
    else std::fprintf(stderr, "jit: %s from the disk cache, loaded in %.1f ms\n", cubin.c_str(), load_ms);
  }
  return fn;
}

}  // namespace

bool compile_cached(const std::string& source, std::string* cubin_out, bool* compiled, double* ms, std::string* err) {
  *compiled = false;
  *ms = 0;
  std::string why;
  if (!available(&why)) {
    *err = why;
    return false;
  }
  const std::string src_dir = source_dir(), nvcc = find_nvcc(), dir = cache_dir();
  std::string keytext = nvcc + "\n" + source;
  for (const char* f : kFlags) keytext += std::string("\n") + f;
  for (const char* h : kHeaders) {
    std::string body;
    if (read_file(src_dir + "/" + h, &body)) keytext += std::string("\n//") + h + "\n" + body;
  }
  const std::string key = hash_hex(keytext);
  const std::string cubin = dir + "/" + key + ".cubin", cu = dir + "/" + key + ".cu", log = dir + "/" + key + ".log";
  *cubin_out = cubin;
  if (!mkdirs(dir)) {
    *err = "JIT cache directory " + dir + " cannot be created: " + std::strerror(errno);
    return false;
  }
  if (file_exists(cubin)) return true;
  const auto t0 = std::chrono::steady_clock::now();
  if (!write_atomically(cu, source)) {
    *err = "JIT: cannot write " + cu;
    return false;
  }
  // Private names for this compile: parallel processes may compile the same kernel; the last rename wins.
  const std::string tag = std::to_string(::getpid()) + "." + hash_hex(std::to_string(reinterpret_cast<uintptr_t>(err)) +
                                                                      std::to_string(ms_since(t0))).substr(0, 8);
  const std::string tmp = cubin + ".tmp." + tag, tmp_log = log + ".tmp." + tag;
  std::vector<std::string> argv = {nvcc};
  for (const char* f : kFlags) argv.push_back(f);
  argv.insert(argv.end(), {"-I", src_dir, "-o", tmp, cu});
  const int rc = run(argv, tmp_log);
  std::string out;
  read_file(tmp_log, &out);
  std::rename(tmp_log.c_str(), log.c_str());
  if (rc != 0 || !file_exists(tmp)) {
    std::remove(tmp.c_str());
    *err = "JIT: nvcc " + (rc < 0 ? std::string("could not be started (") + nvcc + ")"
                                  : "failed (exit " + std::to_string(rc) + ")") +
           " on " + cu + "\n" + first_lines(out, 12);
    return false;
  }
  if (std::rename(tmp.c_str(), cubin.c_str()) != 0) {
    *err = "JIT: cannot move the cubin into " + cubin + ": " + std::strerror(errno);
    return false;
  }
  *compiled = true;
  *ms = ms_since(t0);
  return true;
}

namespace {
bool available_uncached(std::string* why) {
  if (env("GO_CUDA_JIT") == "0") {
    *why = "JIT off (GO_CUDA_JIT=0)";
    return false;
  }
  const std::string src = source_dir();
  if (src.empty() || !file_exists(src + "/sm90_fp8_fast_kernel.cuh")) {
    *why = "JIT off: kernel sources not found (" + (src.empty() ? std::string("GO_CUDA_JIT_SOURCES unset") : src) +
           ")";
    return false;
  }
  if (find_nvcc().empty()) {
    *why = "JIT off: nvcc not found (set GO_NVCC or CUDA_HOME, or put nvcc on PATH)";
    return false;
  }
  return true;
}
}  // namespace

// available() runs on every launch: its answer is kept while the variables it reads stay the same.
bool available(std::string* why) {
  static std::mutex mu;
  static std::string last_key, last_why;
  static bool last_ok = false, known = false;
  const std::string key = env("GO_CUDA_JIT") + '\x1f' + env("GO_CUDA_JIT_SOURCES") + '\x1f' + env("GO_NVCC") + '\x1f' +
                          env("CUDA_HOME") + '\x1f' + env("PATH");
  std::lock_guard<std::mutex> lk(mu);
  if (!known || key != last_key) {
    last_why.clear();
    last_ok = available_uncached(&last_why);
    last_key = key;
    known = true;
  }
  if (!last_ok) *why = last_why;
  return last_ok;
}

bool get_function(const std::string& source, const char* symbol, CUfunction* out, std::string* err) {
  int dev = 0;
  cudaGetDevice(&dev);
  const std::string id = std::to_string(dev) + ":" + hash_hex(source + "\n" + symbol);
  std::shared_future<CUfunction> fut;
  std::promise<CUfunction> mine;
  bool builder = false;
  {
    std::lock_guard<std::mutex> lk(g_mu);
    auto it = g_table.find(id);
    if (it != g_table.end()) {
      fut = it->second;
      ++g_stats.memory_hits;
    } else {
      fut = mine.get_future().share();
      g_table[id] = fut;
      builder = true;
    }
  }
  if (builder) {
    std::string e;
    CUfunction f = build_and_load(source, symbol, &e);
    if (!f) {
      std::lock_guard<std::mutex> lk(g_mu);
      g_errors[id] = e;
      g_table.erase(id);  // a later call may retry (e.g. after nvcc was installed)
    }
    mine.set_value(f);
  }
  *out = fut.get();
  if (!*out) {
    std::lock_guard<std::mutex> lk(g_mu);
    *err = g_errors.count(id) ? g_errors[id] : std::string("JIT: kernel unavailable");
    return false;
  }
  return true;
}

CUresult set_max_dynamic_smem(CUfunction f, int bytes) {
  static const auto set = entry<FuncSetAttribute>("cuFuncSetAttribute", 9000);
  if (!set) return CUDA_ERROR_NOT_SUPPORTED;
  return set(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, bytes);
}

namespace {
// Fills a launch configuration with a 1-D grid and its attributes in attrs[0..1]: for cluster_x > 1 the cluster
// dimension, with `pdl` programmatic stream serialization (CUDA Driver API, CUlaunchAttributeID).
void make_config(CUlaunchConfig* cfg_, CUlaunchAttribute (&attrs)[2], unsigned grid_x, unsigned block_x,
                 unsigned cluster_x, unsigned smem, cudaStream_t stream, bool pdl) {
  CUlaunchConfig& cfg = *cfg_;
  std::memset(&cfg, 0, sizeof cfg);
  cfg.gridDimX = grid_x;
  cfg.gridDimY = cfg.gridDimZ = 1;
  cfg.blockDimX = block_x;
  cfg.blockDimY = cfg.blockDimZ = 1;
  cfg.sharedMemBytes = smem;
  cfg.hStream = reinterpret_cast<CUstream>(stream);
  std::memset(attrs, 0, sizeof attrs);
  cfg.attrs = attrs;
  if (cluster_x > 1) {
    CUlaunchAttribute& a = attrs[cfg.numAttrs++];
    a.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    a.value.clusterDim.x = cluster_x;
    a.value.clusterDim.y = 1;
    a.value.clusterDim.z = 1;
  }
  if (pdl) {
    CUlaunchAttribute& a = attrs[cfg.numAttrs++];
    a.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    a.value.programmaticStreamSerializationAllowed = 1;
  }
}
}  // namespace

CUresult launch(CUfunction f, unsigned grid_x, unsigned block_x, unsigned cluster_x, unsigned smem, cudaStream_t stream,
                void** args, bool pdl) {
  static const auto launch_ex = entry<LaunchKernelEx>("cuLaunchKernelEx", 11060);
  if (!launch_ex) return CUDA_ERROR_NOT_SUPPORTED;
  CUlaunchConfig cfg;
  CUlaunchAttribute attrs[2];
  make_config(&cfg, attrs, grid_x, block_x, cluster_x, smem, stream, pdl);
  return launch_ex(&cfg, f, args, nullptr);
}

int max_active_clusters(CUfunction f, unsigned block_x, unsigned cluster_x, unsigned smem) {
  static const auto occ = entry<OccupancyMaxActiveClusters>("cuOccupancyMaxActiveClusters", 11070);
  if (!occ) return 0;
  CUlaunchConfig cfg;
  CUlaunchAttribute attrs[2];
  make_config(&cfg, attrs, cluster_x, block_x, cluster_x, smem, nullptr, false);
  int n = 0;
  return occ(&n, f, &cfg) == CUDA_SUCCESS ? n : 0;
}

bool read_global(CUfunction f, const char* name, void* dst, size_t bytes, std::string* err) {
  static const auto get_module = entry<FuncGetModule>("cuFuncGetModule", 11000);
  static const auto get_global = entry<ModuleGetGlobal>("cuModuleGetGlobal", 3020);
  if (!get_module || !get_global) {
    *err = "JIT: the CUDA driver does not provide cuFuncGetModule / cuModuleGetGlobal";
    return false;
  }
  CUmodule mod = nullptr;
  CUresult r = get_module(&mod, f);
  CUdeviceptr ptr = 0;
  size_t size = 0;
  if (r == CUDA_SUCCESS) r = get_global(&ptr, &size, mod, name);
  if (r != CUDA_SUCCESS) {
    *err = "JIT: the module's variable " + std::string(name) + ": " + driver_error(r);
    return false;
  }
  if (size < bytes) {
    *err = "JIT: the module's variable " + std::string(name) + " has " + std::to_string(size) + " bytes, not " +
           std::to_string(bytes);
    return false;
  }
  const cudaError_t e = cudaMemcpy(dst, reinterpret_cast<const void*>(ptr), bytes, cudaMemcpyDeviceToHost);
  if (e != cudaSuccess) {
    *err = std::string("JIT: reading ") + name + ": " + cudaGetErrorString(e);
    return false;
  }
  return true;
}

std::string driver_error(CUresult r) {
  static const auto str = entry<GetErrorString>("cuGetErrorString", 6000);
  const char* s = nullptr;
  if (str) str(r, &s);
  return std::string(s ? s : "unknown driver error") + " (CUresult " + std::to_string(static_cast<int>(r)) + ")";
}

Stats stats() {
  std::lock_guard<std::mutex> lk(g_mu);
  return g_stats;
}

void count_aot_launch() {
  std::lock_guard<std::mutex> lk(g_mu);
  ++g_stats.aot_launches;
}

}  // namespace go_jit
