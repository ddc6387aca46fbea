// Runtime specialisation of CUDA kernels, the way DeepGEMM's JIT works: a short .cu text (an instantiation of a
// kernel template from kernels/cuda) is compiled by nvcc to an sm_90a cubin at first use, kept in an on-disk cache
// keyed by a hash of the text, the kernel headers and the compiler, and loaded through the driver API.
//
//   cache:    $GO_CUDA_JIT_CACHE, else <directory of the loaded backend library>/jit
//   sources:  $GO_CUDA_JIT_SOURCES, else the kernels/cuda directory the backend was built from (GO_CUDA_SOURCE_DIR)
//   compiler: $GO_NVCC, else $CUDA_HOME/bin/nvcc, else nvcc on PATH, else /usr/local/cuda/bin/nvcc
//   GO_CUDA_JIT=0 turns it off (callers then use their ahead-of-time kernels); GO_CUDA_JIT_LOG=1 prints each
//   compile and load with its time to stderr.
#pragma once
#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <string>

namespace go_jit {

/// Process-wide counters (see go_ext_jit_stats in gemm_oracle_cuda_ext.h).
struct Stats {
  int64_t compiles = 0;  // cold: nvcc ran
  double compile_ms_total = 0, compile_ms_max = 0;
  int64_t disk_loads = 0;  // warm: the cubin was already in the on-disk cache
  double load_ms_total = 0, load_ms_max = 0;
  int64_t memory_hits = 0;  // already loaded in this process
  int64_t aot_launches = 0;  // launches that used ahead-of-time kernels instead
};

/// Whether the JIT can run here; *why says why not.
bool available(std::string* why);

/// The kernel `symbol` of `source` for the current device: from this process's table, else from the disk cache,
/// else compiled. Thread-safe; concurrent requests for one kernel compile it once. False with *err on failure.
bool get_function(const std::string& source, const char* symbol, CUfunction* out, std::string* err);

/// The compile half of get_function, which needs no GPU: the cubin of `source` in the on-disk cache, compiled when
/// absent. *compiled says whether nvcc ran, *ms how long that took. False with *err on failure.
bool compile_cached(const std::string& source, std::string* cubin, bool* compiled, double* ms, std::string* err);

/// Sets the kernel's dynamic shared-memory limit (cuFuncSetAttribute).
CUresult set_max_dynamic_smem(CUfunction f, int bytes);

/// cuLaunchKernelEx with a 1-D cluster of `cluster_x` CTAs (1: no cluster attribute) and, with `pdl`, programmatic
/// stream serialization (the kernel must wait in griddepcontrol.wait before touching global memory, sm90_common.cuh).
CUresult launch(CUfunction f, unsigned grid_x, unsigned block_x, unsigned cluster_x, unsigned smem, cudaStream_t stream,
                void** args, bool pdl = false);

/// How many clusters of `cluster_x` CTAs can be resident at once (cuOccupancyMaxActiveClusters); 0 if unknown.
int max_active_clusters(CUfunction f, unsigned block_x, unsigned cluster_x, unsigned smem);

/// Copies `bytes` from the start of the __device__ variable `name` of f's module into host memory at dst
/// (cuFuncGetModule, cuModuleGetGlobal, then a synchronous copy). False with *err when the module has no such variable
/// of at least `bytes` bytes or a call fails.
bool read_global(CUfunction f, const char* name, void* dst, size_t bytes, std::string* err);

/// Human-readable text of a driver error.
std::string driver_error(CUresult r);

Stats stats();
void count_aot_launch();

}  // namespace go_jit
