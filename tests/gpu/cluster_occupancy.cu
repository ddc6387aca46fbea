// How many clusters of 2 CTAs of 384 threads the H200 holds at once, asked of a kernel built into this program and
// of each JIT cubin given (the fast kernel, go_fp8_fast, as the backend's JIT loads it), with each cubin's register
// count; so that the cluster occupancy query the backend makes per multicast kernel can be run alone, with and without
// compute-sanitizer (docs/performance-history.md, Issue 26, twenty-first round: memcheck died on runs that compiled
// multicast kernels under it and then asked this query; this program, which compiles nothing, ran clean under it).
//
//   cluster_occupancy [CUBIN...]
//       prints the built-in kernel's answer at a whole SM's shared memory, then per cubin its registers and the answer
//       at 64 KB, 160 KB and the most shared memory it may take. CHILD="command": runs that command first (system()),
//       to test a child process before the query.
#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

namespace {

__global__ void __launch_bounds__(384, 1) built_in() {}

// Driver entry points through the runtime (no link against libcuda, as kernels/cuda/sm90_fp8_fast.cu does).
template <class F>
F entry(const char* name) {
  void* f = nullptr;
  cudaDriverEntryPointQueryResult q;
  if (cudaGetDriverEntryPointByVersion(name, &f, 12000, cudaEnableDefault, &q) != cudaSuccess ||
      q != cudaDriverEntryPointSuccess)
    return nullptr;
  return reinterpret_cast<F>(f);
}

}  // namespace

int main(int argc, char** argv) {
  if (cudaFree(nullptr) != cudaSuccess) {
    fprintf(stderr, "cluster_occupancy: no CUDA device\n");
    return 2;
  }
  if (const char* c = getenv("CHILD")) printf("child '%s' exit %d\n", c, system(c));
  int smax = 0;
  cudaDeviceGetAttribute(&smax, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0);
  cudaFuncSetAttribute(built_in, cudaFuncAttributeMaxDynamicSharedMemorySize, smax);
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(2);
  cfg.blockDim = dim3(384);
  cfg.dynamicSmemBytes = smax;
  cudaLaunchAttribute a = {};
  a.id = cudaLaunchAttributeClusterDimension;
  a.val.clusterDim.x = 2;
  a.val.clusterDim.y = a.val.clusterDim.z = 1;
  cfg.attrs = &a;
  cfg.numAttrs = 1;
  int n = 0;
  const cudaError_t e = cudaOccupancyMaxActiveClusters(&n, built_in, &cfg);
  printf("built-in kernel: %d clusters (%s), opt-in shared memory %d\n", n, cudaGetErrorString(e), smax);

  using Load = CUresult (*)(CUmodule*, const char*);
  using GetFunction = CUresult (*)(CUfunction*, CUmodule, const char*);
  using GetAttribute = CUresult (*)(int*, CUfunction_attribute, CUfunction);
  using SetAttribute = CUresult (*)(CUfunction, CUfunction_attribute, int);
  using Occupancy = CUresult (*)(int*, CUfunction, const CUlaunchConfig*);
  const auto load = entry<Load>("cuModuleLoad");
  const auto get_function = entry<GetFunction>("cuModuleGetFunction");
  const auto get_attribute = entry<GetAttribute>("cuFuncGetAttribute");
  const auto set_attribute = entry<SetAttribute>("cuFuncSetAttribute");
  const auto occupancy = entry<Occupancy>("cuOccupancyMaxActiveClusters");
  if (!load || !get_function || !get_attribute || !set_attribute || !occupancy) {
    fprintf(stderr, "cluster_occupancy: the driver lacks an entry point this program needs\n");
    return 2;
  }
  for (int i = 1; i < argc; ++i) {
    CUmodule m;
    CUfunction f;
    if (load(&m, argv[i]) != CUDA_SUCCESS || get_function(&f, m, "go_fp8_fast") != CUDA_SUCCESS) {
      printf("%s: no go_fp8_fast\n", argv[i]);
      continue;
    }
    int regs = 0, static_smem = 0;
    get_attribute(&regs, CU_FUNC_ATTRIBUTE_NUM_REGS, f);
    get_attribute(&static_smem, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, f);
    set_attribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, smax - static_smem);
    printf("%s: %d registers:", argv[i], regs);
    for (const int bytes : {64 * 1024, 160 * 1024, smax - static_smem}) {
      CUlaunchConfig c = {};
      c.gridDimX = 2;
      c.gridDimY = c.gridDimZ = 1;
      c.blockDimX = 384;
      c.blockDimY = c.blockDimZ = 1;
      c.sharedMemBytes = bytes;
      CUlaunchAttribute ca = {};
      ca.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
      ca.value.clusterDim.x = 2;
      ca.value.clusterDim.y = ca.value.clusterDim.z = 1;
      c.attrs = &ca;
      c.numAttrs = 1;
      int k = -1;
      const CUresult r = occupancy(&k, f, &c);
      printf(" %d bytes -> %d clusters (CUresult %d)", bytes, k, static_cast<int>(r));
    }
    printf("\n");
  }
  return 0;
}
