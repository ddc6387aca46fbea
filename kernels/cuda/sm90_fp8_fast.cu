// Host side of the fast SM90 FP8 GEMM (device code: sm90_fp8_fast_kernel.cuh; configuration:
// sm90_fp8_fast_heuristic.cu): TMA descriptors (A, B, D, and SFA where its layout allows), and the launch, either of a
// kernel specialised for the shape class at first use (jit.h: the FastConfig of the choice, N and K as compile-time
// constants) or, where the JIT is off or unavailable, of the two ahead-of-time instantiations (BLOCK_M 128, BLOCK_N
// 64 and 128, no multicast).
// Used for fp8_gemm (normal), m_grouped contiguous (classic and psum, mk_alignment % 128 == 0) and masked, when A and
// B are K-major with 16-byte aligned rows and the scales are f32 with gran_a_mn = 1, gran_b_mn = 128.
#include <cuda.h>
#include <cudaTypedefs.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <sstream>

#include "jit.h"
#include "sm90_fast.h"
#include "sm90_fp8_fast_kernel.cuh"

namespace go_sm90 {

namespace {

template <class C>
__global__ void __launch_bounds__(kFastThreads, 1)
    fp8_fast_aot(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
                 const __grid_constant__ CUtensorMap map_sfa, const __grid_constant__ CUtensorMap map_d,
                 const FastParams p) {
  fp8_fast_body<C>(map_a, map_b, map_sfa, map_d, p);
}
using Aot64 = FastConfig<128, 64, 8, 1, 2>;
using Aot128 = FastConfig<128, 128, 5, 1, 2>;

PFN_cuTensorMapEncodeTiled_v12000 encode_fn() {
  static PFN_cuTensorMapEncodeTiled_v12000 fn = [] {
    void* f = nullptr;
    cudaDriverEntryPointQueryResult q;
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &f, 12000, cudaEnableDefault, &q) != cudaSuccess ||
        q != cudaDriverEntryPointSuccess) {
      cudaGetLastError();
      return static_cast<PFN_cuTensorMapEncodeTiled_v12000>(nullptr);
    }
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(f);
  }();
  return fn;
}

// An FP8 operand of `rows` rows of K bytes: a 2D map with a box of 128 bytes of K x box_rows, or with ktma > 1 a 3D
// map of [K / 128 blocks (stride 128 bytes)][rows][128 bytes] with a box ktma blocks deep, whose planes land one
// after another (one stage each). The 3D form needs K a multiple of 128 (choose_fast_config checks it): a partial
// last block would read the next row's bytes instead of TMA's zero fill.
bool make_map(CUtensorMap* map, const void* base, uint64_t rows, uint64_t k, uint64_t row_stride_bytes, uint32_t box_rows,
              int ktma = 1) {
  auto fn = encode_fn();
  if (!fn) return false;
  if (ktma > 1) {
    const cuuint64_t dims[3] = {kFBK, rows, k / kFBK};
    const cuuint64_t strides[2] = {row_stride_bytes, kFBK};
    const cuuint32_t box[3] = {kFBK, box_rows, static_cast<cuuint32_t>(ktma)};
    const cuuint32_t estr[3] = {1, 1, 1};
    return fn(map, CU_TENSOR_MAP_DATA_TYPE_UINT8, 3, const_cast<void*>(base), dims, strides, box, estr,
              CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
              CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
  }
  const cuuint64_t dims[2] = {k, rows};
  const cuuint64_t strides[1] = {row_stride_bytes};
  const cuuint32_t box[2] = {kFBK, box_rows};
  const cuuint32_t estr[2] = {1, 1};
  return fn(map, CU_TENSOR_MAP_DATA_TYPE_UINT8, 2, const_cast<void*>(base), dims, strides, box, estr,
            CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
            CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

// Whether SFA goes by TMA where the configuration wants it (`want`), as far as the layout decides: MN-major with
// 16-byte aligned columns (DeepGEMM's "TMA-aligned" scale layout) and, for a batch, the K blocks of consecutive batches
// following each other. make_sfa_map adds the pointer's alignment and the map's encoding; prepare_fp8_gemm_fast, which
// has no pointers, compiles for this answer.
bool sfa_by_tma(const FastParams& p, bool want) {
  const int64_t nkb = (p.K + kFBK - 1) / kFBK, batches = p.mode == kFastMasked ? p.G : 1;
  return want && p.sfa_s_row == 1 && (p.sfa_s_kb * 4) % 16 == 0 && p.sfa_s_kb >= p.M &&
         (batches <= 1 || p.sfa_s_batch == nkb * p.sfa_s_kb);
}

// SFA by TMA: an f32 map over [M rows (contiguous), batches x K blocks] with a box of BLOCK_M rows x ktma, where
// sfa_by_tma allows it and the pointer is 16-byte aligned. Sets p->sfa_tma (0: the kernel copies SFA with cp.async;
// the map is then zeroed and unused).
void make_sfa_map(FastParams* p, int bm, int ktma, bool want, CUtensorMap* map) {
  std::memset(map, 0, sizeof *map);
  p->sfa_tma = 0;
  auto fn = encode_fn();
  const int64_t nkb = (p->K + kFBK - 1) / kFBK, batches = p->mode == kFastMasked ? p->G : 1;
  if (!fn || !sfa_by_tma(*p, want) || reinterpret_cast<uintptr_t>(p->sfa) % 16 != 0) return;
  const cuuint64_t dims[2] = {static_cast<cuuint64_t>(p->M), static_cast<cuuint64_t>(batches * nkb)};
  const cuuint64_t strides[1] = {static_cast<cuuint64_t>(p->sfa_s_kb) * 4};
  const cuuint32_t box[2] = {static_cast<cuuint32_t>(bm), static_cast<cuuint32_t>(ktma)};
  const cuuint32_t estr[2] = {1, 1};
  if (fn(map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, const_cast<float*>(p->sfa), dims, strides, box, estr,
         CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_NONE,
         CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS)
    p->sfa_tma = 1;
  else
    std::memset(map, 0, sizeof *map);
}

// D by TMA: a bf16 map over [N, M, batches] (masked: its G batches; else one) with a box of
// fast_epi_box_cols(bn) columns x 64 rows, swizzled to the box row's span (128, 64, 32 bytes; 16: none), where D's
// base and row stride allow TMA (16-byte aligned base, row and batch strides). Sets p->d_tma (0: the math threads
// store D; the map is then zeroed and unused).
void make_d_map(FastParams* p, int bn, bool want, CUtensorMap* map) {
  std::memset(map, 0, sizeof *map);
  p->d_tma = 0;
  auto fn = encode_fn();
  const int64_t batches = p->mode == kFastMasked ? p->G : 1;
  const int64_t s_batch = batches > 1 ? p->d_s_batch : static_cast<int64_t>(p->M) * p->d_s_row;
  if (!want || !fn || p->M <= 0 || p->N <= 0 || (p->d_s_row * 2) % 16 != 0 || (s_batch * 2) % 16 != 0 ||
      reinterpret_cast<uintptr_t>(p->d) % 16 != 0 || p->d_s_row < p->N)
    return;
  const int box = fast_epi_box_cols(bn);
  const CUtensorMapSwizzle swz = box == 64   ? CU_TENSOR_MAP_SWIZZLE_128B
                                 : box == 32 ? CU_TENSOR_MAP_SWIZZLE_64B
                                 : box == 16 ? CU_TENSOR_MAP_SWIZZLE_32B
                                             : CU_TENSOR_MAP_SWIZZLE_NONE;
  const cuuint64_t dims[3] = {static_cast<cuuint64_t>(p->N), static_cast<cuuint64_t>(p->M),
                              static_cast<cuuint64_t>(batches)};
  const cuuint64_t strides[2] = {static_cast<cuuint64_t>(p->d_s_row) * 2, static_cast<cuuint64_t>(s_batch) * 2};
  const cuuint32_t boxd[3] = {static_cast<cuuint32_t>(box), 64, 1};
  const cuuint32_t estr[3] = {1, 1, 1};
  if (fn(map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 3, p->d, dims, strides, boxd, estr, CU_TENSOR_MAP_INTERLEAVE_NONE,
         swz, CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS)
    p->d_tma = 1;
  else
    std::memset(map, 0, sizeof *map);
}

int sm_count() {
  int dev = 0, sms = 132;
  cudaGetDevice(&dev);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
  return sms;
}

thread_local std::string t_last_config;

// One line of instantiation: the FastConfig of the choice (fp8_fast_body's template) and the kernel's parameters. A
// shape-class kernel has the call's mode and whether SFA comes by TMA compiled in (FastConfig's MODE_ and SFA_TMA_:
// 64 x 16 ktma=4 dense 2752 -> 1968 -> 1560 SASS instructions), and so does a profiling kernel (dbg=) of one or two
// accumulator sets. One of three sets reads both at run time: with them compiled in, ptxas serialised the wgmmas
// (C7515) of the dbg=64 and dbg=128 kernels at 64 x 16 and of the dbg=128 kernel at 128 x 16, and of none at 128 x 32,
// 64 x 64 or 256 x 128 (dbg=64 and 128); at 64 x 16 it did not once the math warpgroups' per-iteration clock stores
// were taken out.
std::string jit_source(const FastChoice& c, const FastParams& p) {
  const bool compiled = c.shape && (!c.debug || c.acc_sets < 3);
  std::ostringstream s;
  s << "// gemm-oracle JIT: fast SM90 FP8 GEMM, " << describe_fast_config(c, c.shape ? "(shape class)" : "(generic)") << "\n";
  // Profiling switches exist in the profiling build only (sm90_fp8_fast_profile.cuh): a normal library never writes
  // them, and its kernels could not compile them.
  if (c.debug) s << "#define GO_FAST_PROFILING 1\n#define GO_FAST_DBG " << c.debug << "  // timing only\n";
  s << "#include \"sm90_fp8_fast_kernel.cuh\"\n"
    // The parameter block crosses from this library to the cubin: a header from another version fails to compile.
    << "static_assert(sizeof(go_sm90::FastParams) == " << sizeof(FastParams)
    << ", \"FastParams differs between the backend library and the JIT sources (GO_CUDA_JIT_SOURCES)\");\n"
    << "extern \"C\" __global__ void __launch_bounds__(go_sm90::kFastThreads, 1)\n"
    << "go_fp8_fast(const __grid_constant__ CUtensorMap a, const __grid_constant__ CUtensorMap b,\n"
    << "            const __grid_constant__ CUtensorMap sfa, const __grid_constant__ CUtensorMap d,\n"
    << "            const go_sm90::FastParams p) {\n"
    << "  go_sm90::fp8_fast_body<go_sm90::FastConfig<" << c.bm << ", " << c.bn << ", " << c.stages << ", "
    << c.multicast << ", " << c.acc_sets << ", " << (c.shape ? p.N : 0) << ", " << (c.shape ? p.K : 0) << ", "
    << (c.split_k > 1 ? "true" : "false") << ", " << c.ktma << ", " << (c.spread ? "true" : "false") << ", "
    << (compiled ? p.mode : -1) << ", " << (compiled ? (p.sfa_tma ? 1 : 0) : -1) << ">>(a, b, sfa, d, p);\n}\n";
  return s.str();
}

void fill_blocks(FastParams* p, const FastChoice& c) { fast_fill_blocks(*p, c.bm, c.bn, c.multicast, c.split_k); }

// Rows of A's TMA box: BLOCK_M / multicast, or 64 where the producer loads A by 64-row chunk (fast_a_by_chunk).
int a_box_rows(const FastParams& p, const FastChoice& c) {
  return fast_a_by_chunk(p.mode, p.split_k, c.bm, c.multicast, c.ktma, p.M) ? 64 : c.bm / c.multicast;
}

// Grouped calls (p->gate_kind set): the index tensor is checked on the device (grouped_gate.h), instead of the host
// copying it and waiting for the GPU. A contiguous layout by the gate kernel ahead of the GEMM kernels, which read its
// verdict; masked_m by the GEMM kernel itself (fast_masked_bad), which only needs the gate block to record an error.
cudaError_t start_gate(FastParams* p, bool pdl, cudaStream_t stream) {
  if (p->gate_kind == kGateNone) return cudaSuccess;
  p->gate_want = kWantValid;
  if (p->gate_kind == kGateMasked) return gate_block(&p->gate);
  const int64_t n = p->gate_kind == kGatePsum ? p->G : p->M;
  return launch_gate_check(static_cast<GateKind>(p->gate_kind), p->gl, n, p->M, p->G, p->mk_align, pdl, stream,
                           &p->gate);
}

cudaError_t launch_aot(FastParams p, const void* a, int64_t a_rows, int64_t a_stride, const void* b, int64_t b_rows,
                       int64_t b_stride, int sms, cudaStream_t stream, bool* used, const std::string& why) {
  FastChoice c;  // the AOT instantiations: BLOCK_M 128, two accumulator sets, generic N and K
  const int64_t tiles128 = static_cast<int64_t>((p.M + kFBM - 1) / kFBM) * ((p.N + 127) / 128) *
                           (p.mode == kFastMasked ? p.G : 1);
  c.bn = tiles128 < sms ? 64 : 128;
  if (const char* f = std::getenv("GO_CUDA_BLOCK_N")) c.bn = std::atoi(f) == 64 ? 64 : 128;
  c.stages = c.bn == 64 ? Aot64::kStages : Aot128::kStages;
  c.shape = false;
  fill_blocks(&p, c);
  CUtensorMap ma, mb, msfa, md;
  if (!make_map(&ma, a, a_rows, p.K, a_stride, a_box_rows(p, c)) || !make_map(&mb, b, b_rows, p.K, b_stride, c.bn)) {
    return cudaSuccess;
  }
  make_sfa_map(&p, c.bm, 1, c.sfa_tma, &msfa);
  make_d_map(&p, c.bn, true, &md);
  c.sfa_tma = p.sfa_tma != 0;
  *used = true;
  t_last_config = describe_fast_config(c, ("aot (" + why + ")").c_str());
  go_jit::count_aot_launch();
  if (p.units == 0) return cudaSuccess;
  if (const cudaError_t e = start_gate(&p, false, stream); e != cudaSuccess) return e;
  const int smem = fast_smem_bytes(c.bn, c.stages, c.bm);
  const int grid = p.units < sms ? p.units : sms;
  cudaError_t e;
  if (c.bn == 64) {
    e = cudaFuncSetAttribute(fp8_fast_aot<Aot64>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
    if (e != cudaSuccess) return e;
    fp8_fast_aot<Aot64><<<grid, kFastThreads, smem, stream>>>(ma, mb, msfa, md, p);
  } else {
    e = cudaFuncSetAttribute(fp8_fast_aot<Aot128>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
    if (e != cudaSuccess) return e;
    fp8_fast_aot<Aot128><<<grid, kFastThreads, smem, stream>>>(ma, mb, msfa, md, p);
  }
  return cudaGetLastError();
}

// Split K, second kernel: per output pair (row m, columns n, n + 1), the promotion chain of the unsplit kernel over
// the workspace's raw block results, in K order, F = fma(fl32(sa * sb), P, F) from F = 0 (columns n and n + 1 share
// a 128-column scale block: n is even), then bf16 RNE. Same operations, same order: the same bits.
__global__ void __launch_bounds__(256) fp8_fast_splitk_promote(const FastParams p) {
  const int nkb = (p.K + kFBK - 1) / kFBK, half = (p.N + 1) / 2;
  const int64_t pairs = static_cast<int64_t>(p.M) * half;
  for (int64_t t = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; t < pairs;
       t += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int m = static_cast<int>(t / half), n = 2 * static_cast<int>(t % half);
    const float* P = p.ws + static_cast<int64_t>(m) * p.ws_pitch + n;
    const float* sa = p.sfa + static_cast<int64_t>(m) * p.sfa_s_row;
    const float* sb = p.sfb + static_cast<int64_t>(n / 128) * p.sfb_s_row;
    float f0 = 0.0f, f1 = 0.0f;
#pragma unroll 8
    for (int kb = 0; kb < nkb; ++kb) {
      const float s = __fmul_rn(sa[kb * p.sfa_s_kb], sb[kb * p.sfb_s_kb]);
      const float2 v = *reinterpret_cast<const float2*>(P + kb * p.ws_plane);
      f0 = __fmaf_rn(s, v.x, f0);
      f1 = __fmaf_rn(s, v.y, f1);
    }
    __nv_bfloat16* d = p.d + static_cast<int64_t>(m) * p.d_s_row + n;
    d[0] = __float2bfloat16_rn(f0);
    if (n + 1 < p.N) d[1] = __float2bfloat16_rn(f1);
  }
}

// The split-K workspace comes from a stream-ordered pool per device that keeps its memory between calls (release
// threshold: unlimited), so a call costs no cudaMalloc and concurrent calls on different streams get their own.
cudaError_t workspace_pool(cudaMemPool_t* out) {
  static std::mutex mu;
  static std::map<int, cudaMemPool_t> pools;
  int dev = 0;
  cudaError_t e = cudaGetDevice(&dev);
  if (e != cudaSuccess) return e;
  std::lock_guard<std::mutex> lk(mu);
  auto it = pools.find(dev);
  if (it == pools.end()) {
    cudaMemPoolProps props;
    std::memset(&props, 0, sizeof props);
    props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = dev;
    cudaMemPool_t pool;
    if ((e = cudaMemPoolCreate(&pool, &props)) != cudaSuccess) return e;
    uint64_t keep = UINT64_MAX;
    if ((e = cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep)) != cudaSuccess) return e;
    it = pools.emplace(dev, pool).first;
  }
  *out = it->second;
  return cudaSuccess;
}

// Per JIT kernel, found once: its shared-memory limit is set, and how many clusters fit at once (0: unknown).
struct KernelFacts {
  int max_clusters = 0;
};
std::mutex g_facts_mu;
std::map<CUfunction, KernelFacts> g_facts;

// Looks up (compiling at first use) the JIT kernel for this configuration; the first lookup of a kernel sets its
// shared-memory limit and asks for its cluster occupancy.
bool jit_kernel(const FastChoice& c, const FastParams& p, CUfunction* fn, KernelFacts* facts, std::string* err) {
  if (!go_jit::get_function(jit_source(c, p), "go_fp8_fast", fn, err)) return false;
  std::lock_guard<std::mutex> lk(g_facts_mu);
  auto it = g_facts.find(*fn);
  if (it == g_facts.end()) {
    const int smem = fast_smem_bytes(c.bn, c.stages, c.bm);
    const CUresult r = go_jit::set_max_dynamic_smem(*fn, smem);
    if (r != CUDA_SUCCESS) {
      *err = "cuFuncSetAttribute(max dynamic shared memory): " + go_jit::driver_error(r);
      return false;
    }
    KernelFacts f;
    if (c.multicast > 1) f.max_clusters = go_jit::max_active_clusters(*fn, kFastThreads, c.multicast, smem);
    it = g_facts.emplace(*fn, f).first;
  }
  if (facts) *facts = it->second;
  return true;
}

// One configuration ready to launch: its kernel, tensor maps and filled parameters.
struct Prepared {
  FastChoice c;
  FastParams p;
  CUfunction fn = nullptr;
  KernelFacts facts;
  CUtensorMap ma, mb, msfa, md;
};

// Builds the maps of configuration c (false: a map was refused, the caller takes the simple path).
bool prepare_maps(Prepared* k, const void* a, int64_t a_rows, int64_t a_row_stride, const void* b, int64_t b_rows,
                  int64_t b_row_stride) {
  FastChoice& c = k->c;
  FastParams& p = k->p;
  fill_blocks(&p, c);
  if (!make_map(&k->ma, a, a_rows, p.K, a_row_stride, a_box_rows(p, c), c.ktma) ||
      !make_map(&k->mb, b, b_rows, p.K, b_row_stride, c.bn, c.ktma))
    return false;
  make_sfa_map(&p, c.bm, c.ktma, c.sfa_tma, &k->msfa);
  c.sfa_tma = p.sfa_tma != 0;
  make_d_map(&p, c.bn, true, &k->md);
  return true;
}

std::string describe_launch(const Prepared& k) {
  std::string s = describe_fast_config(k.c, k.c.shape ? "jit=shape" : "jit=generic");
  // D's layout refused a TMA map: the kernel stores every chunk from its threads.
  if (!k.p.d_tma) s += " d=threads";
  return s;
}

#ifdef GO_FAST_PROFILING
// dbg bit 6 or 7 (sm90_fp8_fast_profile.cuh): after the 30th launch of a traced kernel, waits for the stream and prints
// CTA 0's trace on stderr, one line per pipeline iteration (bit 7 alone: the first 4) and one per tile of the first
// math thread, in cycles from the producer's start. A debugging aid: the wait holds the host, and a failure to read
// the trace is reported, not returned.
void print_fast_trace(const Prepared& k, cudaStream_t stream) {
  static std::mutex mu;
  static std::map<CUfunction, int> launches;
  {
    std::lock_guard<std::mutex> lk(mu);
    if (++launches[k.fn] != 30) return;
  }
  long long t[8][256];
  std::string e;
  const cudaError_t se = cudaStreamSynchronize(stream);
  if (se != cudaSuccess) e = std::string("cudaStreamSynchronize: ") + cudaGetErrorString(se);
  // The header names the launch's M x N x K (masked: M per group) and G before its configuration.
  const std::string what = std::to_string(k.p.M) + "x" + std::to_string(k.p.N) + "x" + std::to_string(k.p.K) +
                           (k.p.G > 1 ? " G=" + std::to_string(k.p.G) : "") + " " + describe_launch(k);
  if (!e.empty() || !go_jit::read_global(k.fn, "go_fast_trace", t, sizeof t, &e)) {
    std::fprintf(stderr, "fast trace (%s): %s\n", what.c_str(), e.c_str());
    return;
  }
  const bool full = (k.c.debug & kProfTrace) != 0;
  const long long t0 = t[4][0], n = std::min<long long>(t[4][1], full ? 256 : kFastLightTraceIterations);
  std::fprintf(stderr, "fast trace (%s): launch 30, CTA 0, %s%lld iterations, cycles from the producer's start\n",
               what.c_str(), full ? "" : ("the first " + std::to_string(n) + " of ").c_str(), t[4][1]);
  for (long long i = 0; i < n; ++i) {
    std::fprintf(stderr, "trace %lld free %lld issued %lld full %lld released %lld\n", i, t[0][i] - t0, t[1][i] - t0,
                 t[2][i] - t0, t[3][i] - t0);
  }
  // Row 5: the first math thread's tiles (row 4, slot 3: how many units it walked; the first 64 are kept).
  for (long long i = 0; i < std::min<long long>(t[4][3], 64); ++i) {
    std::fprintf(stderr, "tile %lld top %lld setup %lld kloop %lld epilogue %lld\n", i, t[5][4 * i] - t0,
                 t[5][4 * i + 1] - t0, t[5][4 * i + 2] - t0, t[5][4 * i + 3] - t0);
  }
  // Rows 6 and 7, iterations 64 .. 95 (those the launch ran): both math warpgroups' wgmma issue and wait per wave
  // (phase lines, slots 0-127), and each wave's promotion done, the stage full, the stage released (phase2 lines, slots
  // 128-255).
  for (long long i = 64; full && i < std::min<long long>(t[4][1], 96); ++i) {
    for (int half = 0; half < 2; ++half) {
      const long long* a = &t[6][128 * half + 4 * (i - 64)];
      const long long* b = &t[7][128 * half + 4 * (i - 64)];
      std::fprintf(stderr, "%s %lld wg0 %lld %lld %lld %lld wg1 %lld %lld %lld %lld\n", half ? "phase2" : "phase", i,
                   a[0] - t0, a[1] - t0, a[2] - t0, a[3] - t0, b[0] - t0, b[1] - t0, b[2] - t0, b[3] - t0);
    }
  }
  // Row 4, slots 8-15: the prologue (thread 0: kernel top, barriers set up, past the top's dependency wait (dense
  // shape-class kernels have none there: fast_late_wait), setmaxnreg done, first tile computed; the first math thread:
  // kernel top, setmaxnreg done, FastMath built).
  const long long* q = &t[4][8];
  std::fprintf(stderr,
               "prologue top %lld synced %lld waited %lld dec %lld tile %lld math top %lld inc %lld ready %lld\n",
               q[0] - t0, q[1] - t0, q[2] - t0, q[3] - t0, q[4] - t0, q[5] - t0, q[6] - t0, q[7] - t0);
  // Row 4, slots 16-25: the prologue's finer steps (thread 0 once the maps are prefetched, the barriers initialised and
  // fenced; the first math thread at the barrier; warps 1 and 11 at the kernel's top; the producer's entry; the first
  // tile computed again after the producer's loop, start and end).
  const long long* r = &t[4][16];
  std::fprintf(stderr,
               "prologue2 prefetched %lld inits %lld fenced %lld math at sync %lld warp1 top %lld warp11 top %lld "
               "producer entry %lld tile again %lld\n",
               r[0] - t0, r[1] - t0, r[2] - t0, r[3] - t0, r[4] - t0, r[5] - t0, r[7] - t0, r[9] - r[8]);
  // Row 4, slots 26-30: the first math thread's last epilogue (entry, warpgroup gathered, staged, fenced, stores
  // issued; its stores drained at `trace end`); a step its last tile did not take (a chunk the threads stored) keeps
  // an earlier tile's or launch's clock, out of order.
  const long long* ep = &t[4][26];
  std::fprintf(stderr, "epilogue entry %lld gathered %lld staged %lld fenced %lld issued %lld\n", ep[0] - t0,
               ep[1] - t0, ep[2] - t0, ep[3] - t0, ep[4] - t0);
  std::fprintf(stderr, "trace end %lld\n", t[4][2] - t0);
}
#endif

cudaError_t launch_prepared(Prepared& k, int sms, cudaStream_t stream, std::string* err) {
  FastChoice& c = k.c;
  FastParams& p = k.p;
  // Persistent grid: one CTA per SM (sms= caps them), as many clusters as can be resident together (a cluster must fit
  // in one GPC); a last round that fills at most half of them runs its tiles as halves on twice the clusters.
  int clusters = (c.sms > 0 ? std::min(c.sms, sms) : sms) / c.multicast;
  if (k.facts.max_clusters > 0) clusters = std::min(clusters, k.facts.max_clusters);
  clusters = std::max(clusters, 1);
  if (fast_tail_halves(c.bm, c.bn, c.split_k)) fast_split_tail(p, clusters);
  clusters = std::min(p.units, clusters);
  if (c.split_k > 1) {
    // The workspace holds every K block's f32 result of the padded tiles (ws[kb][row][col]).
    p.ws_pitch = static_cast<int64_t>(p.n_blocks) * c.bn;
    p.ws_plane = static_cast<int64_t>(p.m_blocks) * c.bm * p.ws_pitch;
    const size_t bytes = static_cast<size_t>((p.K + kFBK - 1) / kFBK) * p.ws_plane * sizeof(float);
    cudaMemPool_t pool;
    cudaError_t e = workspace_pool(&pool);
    if (e == cudaSuccess) e = cudaMallocFromPoolAsync(reinterpret_cast<void**>(&p.ws), bytes, pool, stream);
    if (e != cudaSuccess) {
      *err = "split-K workspace (" + std::to_string(bytes) + " bytes): " + cudaGetErrorString(e);
      return e;
    }
  }
  void* args[] = {&k.ma, &k.mb, &k.msfa, &k.md, &p};
  const CUresult r = go_jit::launch(k.fn, static_cast<unsigned>(clusters * c.multicast), kFastThreads,
                                    static_cast<unsigned>(c.multicast), static_cast<unsigned>(fast_smem_bytes(c.bn, c.stages, c.bm)),
                                    stream, args, true);
  if (r != CUDA_SUCCESS) {
    if (p.ws) cudaFreeAsync(p.ws, stream);
    *err = "cuLaunchKernelEx(fast FP8 GEMM, " + describe_launch(k) + "): " + go_jit::driver_error(r);
    return cudaErrorLaunchFailure;
  }
  if (c.split_k > 1) {
    const int64_t pairs = static_cast<int64_t>(p.M) * ((p.N + 1) / 2);
    const int blocks = static_cast<int>(std::min<int64_t>((pairs + 255) / 256, 8 * sms));
    fp8_fast_splitk_promote<<<blocks, 256, 0, stream>>>(p);
    const cudaError_t e = cudaGetLastError();
    cudaFreeAsync(p.ws, stream);
    if (e != cudaSuccess) {
      *err = std::string("split-K promotion kernel: ") + cudaGetErrorString(e);
      return e;
    }
  }
#ifdef GO_FAST_PROFILING
  if (c.debug & (kProfTrace | kProfTileTrace)) print_fast_trace(k, stream);
#endif
  return cudaSuccess;
}

// The configurations of a call: one, or for a contiguous layout checked on the device whose tile height depends on
// whether its groups fit 256-row tiles, two (*n = 2: [0] for groups that fit, BLOCK_M 256; [1] for those that do not).
bool choose_for_call(const FastParams& p, int sms, FastChoice out[2], int* n, std::string* err) {
  *n = 1;
  const bool contiguous = p.gate_kind == kGateClassic || p.gate_kind == kGatePsum;
  if (!contiguous) return choose_fast_config(p, sms, &out[0], err);
  FastParams q = p;
  q.tiles256 = 1;
  if (!choose_fast_config(q, sms, &out[0], err)) return false;
  if (out[0].bm != 256) return true;  // the same either way
  q.tiles256 = 0;
  if (!choose_fast_config(q, sms, &out[1], err)) return false;
  *n = 2;
  return true;
}

}  // namespace

cudaError_t launch_fp8_gemm_fast(FastParams p, const void* a, int64_t a_rows, int64_t a_row_stride, const void* b,
                                 int64_t b_rows, int64_t b_row_stride, cudaStream_t stream, bool* used,
                                 std::string* err) {
  *used = false;
  const int sms = sm_count();
  p.m_blocks = (p.M + kFBM - 1) / kFBM;
  std::string why;
  if (!go_jit::available(&why)) {
    // Said once per process unless the JIT was turned off on purpose; go_ext_fast_last_config says it per call.
    static std::once_flag told;
    if (std::getenv("GO_CUDA_JIT") == nullptr || std::string(std::getenv("GO_CUDA_JIT")) != "0") {
      std::call_once(told, [&] {
        std::fprintf(stderr, "gemm-oracle: %s; the fast FP8 GEMM uses its ahead-of-time kernels (same bits)\n",
                     why.c_str());
      });
    }
    return launch_aot(p, a, a_rows, a_row_stride, b, b_rows, b_row_stride, sms, stream, used, why);
  }
  FastChoice cs[2];
  int n = 1;
  if (!choose_for_call(p, sms, cs, &n, err)) return cudaErrorInvalidValue;
  Prepared k[2];
  for (int i = 0; i < n; ++i) {
    k[i].c = cs[i];
    k[i].p = p;
    // The maps first: whether SFA comes by TMA is compiled into the kernel.
    if (!prepare_maps(&k[i], a, a_rows, a_row_stride, b, b_rows, b_row_stride)) return cudaSuccess;
    if (!jit_kernel(k[i].c, k[i].p, &k[i].fn, &k[i].facts, &why)) {
      // A JIT failure is reported, not hidden: the AOT kernels still give the same bits.
      std::fprintf(stderr, "gemm-oracle: fast FP8 kernel JIT failed, using the ahead-of-time kernel: %s\n", why.c_str());
      return launch_aot(p, a, a_rows, a_row_stride, b, b_rows, b_row_stride, sms, stream, used, "JIT failed");
    }
  }
  *used = true;
  t_last_config = describe_launch(k[0]);
  if (n == 2) {
    t_last_config += " (groups not on 256-row tiles: bm=" + std::to_string(k[1].c.bm) + " bn=" + std::to_string(k[1].c.bn) +
                     " stages=" + std::to_string(k[1].c.stages) + ")";
  }
  bool work = false;
  for (int i = 0; i < n; ++i) work = work || k[i].p.units > 0;
  if (!work) return cudaSuccess;
  FastParams gated = p;
  if (const cudaError_t e = start_gate(&gated, true, stream); e != cudaSuccess) {
    *err = std::string("grouped index check kernel: ") + cudaGetErrorString(e);
    return e;
  }
  for (int i = 0; i < n; ++i) {
    k[i].p.gate = gated.gate;
    k[i].p.gate_want = n == 1 ? kWantValid : i == 0 ? kWantFits256 : kWantNot256;
    if (k[i].p.units == 0) continue;
    if (const cudaError_t e = launch_prepared(k[i], sms, stream, err); e != cudaSuccess) return e;
  }
  return cudaSuccess;
}

int prepare_fp8_gemm_fast(FastParams p, std::string* err) {
  std::string why;
  if (!go_jit::available(&why)) {
    *err = why;
    return 1;
  }
  // Contiguous layouts are checked on the device: both tile heights a call may launch are compiled.
  if ((p.mode == kFastClassic || p.mode == kFastPsum) && p.gate_kind == kGateNone)
    p.gate_kind = p.mode == kFastClassic ? kGateClassic : kGatePsum;
  FastChoice cs[2];
  int n = 1;
  p.m_blocks = (p.M + kFBM - 1) / kFBM;
  if (!choose_for_call(p, sm_count(), cs, &n, err)) return 1;
  for (int i = 0; i < n; ++i) {
    CUfunction fn = nullptr;
    FastParams q = p;
    q.sfa_tma = sfa_by_tma(p, cs[i].sfa_tma) ? 1 : 0;  // as make_sfa_map will decide, for an aligned pointer
    if (!jit_kernel(cs[i], q, &fn, nullptr, err)) return 1;
  }
  return 0;
}

std::string last_fast_config() { return t_last_config; }

}  // namespace go_sm90
