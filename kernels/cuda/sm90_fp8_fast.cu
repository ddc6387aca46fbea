// Host side of the fast SM90 FP8 GEMM (device code: sm90_fp8_fast_kernel.cuh): the per-shape configuration
// heuristic, TMA descriptors (A, B, and SFA where its layout allows), and the launch, either of a kernel specialised
// for the shape class at first use (jit.h: BLOCK_M, BLOCK_N, stages, multicast, accumulator sets, register split, N and
// K as compile-time constants) or, where the JIT is off or unavailable, of the two ahead-of-time instantiations
// (BLOCK_M 128, BLOCK_N 64 and 128, no multicast).
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

constexpr int kMaxSmem = 232448;  // H100/H200: 227 KB of dynamic shared memory per block (opt-in)

// Bytes of dynamic shared memory for (BN, stages, BM, epilogue, kalt), plus 1024 for the alignment.
int smem_bytes(int bn, int stages, int bm, int epi = kEpiSmem, bool kalt = false) {
  return fast_smem(bn, stages, bm, epi, kalt).total + 1024;
}
int smem_bytes(const FastChoice& c) { return smem_bytes(c.bn, c.stages, c.bm, c.epi, c.k_alternate); }
static_assert(fast_smem(128, 5).total + 1024 < kMaxSmem, "BN 128 x 5 stages fits");

int max_stages(int bn, int bm, int epi, bool kalt) {
  int s = 2;
  while (s < 16 && smem_bytes(bn, s + 1, bm, epi, kalt) <= kMaxSmem) ++s;
  return s;
}

template <class C>
__global__ void __launch_bounds__(kFastThreads, 1)
    fp8_fast_aot(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
                 const __grid_constant__ CUtensorMap map_sfa, const __grid_constant__ CUtensorMap map_d,
                 const FastParams p) {
  fp8_fast_body<C>(map_a, map_b, map_sfa, map_d, p);
}
using Aot64 = FastConfig<64, 8, 1, true>;
using Aot128 = FastConfig<128, 5, 1, true>;
static_assert(fast_smem(64, 8).total + 1024 <= kMaxSmem, "AOT BN 64 fits");

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

// SFA by TMA: an f32 map over [M rows (contiguous), batches x K blocks] with a box of BLOCK_M rows x ktma, where the
// layout is MN-major with 16-byte aligned columns (DeepGEMM's "TMA-aligned" scale layout) and, for a batch, the K
// blocks of consecutive batches follow each other. Sets p->sfa_tma (0: the kernel copies SFA with cp.async; the map
// is then zeroed and unused).
void make_sfa_map(FastParams* p, int bm, int ktma, bool want, CUtensorMap* map) {
  std::memset(map, 0, sizeof *map);
  p->sfa_tma = 0;
  auto fn = encode_fn();
  const int64_t nkb = (p->K + kFBK - 1) / kFBK, batches = p->mode == kFastMasked ? p->G : 1;
  if (!want || !fn || p->sfa_s_row != 1 || (p->sfa_s_kb * 4) % 16 != 0 || p->sfa_s_kb < p->M ||
      reinterpret_cast<uintptr_t>(p->sfa) % 16 != 0 || (batches > 1 && p->sfa_s_batch != nkb * p->sfa_s_kb))
    return;
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

// D by TMA (epi=tma): a bf16 map over [N, M, batches] (masked: its G batches; else one) with a box of
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

int64_t tiles_of(const FastParams& p, int bn) {
  return static_cast<int64_t>(p.m_blocks) * ((p.N + bn - 1) / bn) * (p.mode == kFastMasked ? p.G : 1);
}

// The fields an override named, where the heuristic derives them otherwise: the accumulator sets (from BLOCK_N and
// BLOCK_M), BLOCK_M, the K split and ktma (from BLOCK_N).
struct Named {
  bool acc = false, bm = false, split = false, ktma = false;
};

// Parses GO_CUDA_FAST_CFG ("bn=112,stages=6,mc=2,acc=single,shape=0"; any subset) over *c; *named says which of the
// derived fields it named.
bool apply_override(const char* text, FastChoice* c, Named* named, std::string* err) {
  *named = Named{};
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (item.empty()) continue;
    const size_t eq = item.find('=');
    const std::string k = item.substr(0, eq), v = eq == std::string::npos ? "" : item.substr(eq + 1);
    char* end = nullptr;
    const long n = std::strtol(v.c_str(), &end, 10);
    const bool num = !v.empty() && end && *end == '\0';
    if (k == "bn" && num && n >= 8 && n <= 256 && n % 8 == 0) c->bn = static_cast<int>(n);
    else if (k == "stages" && num && n >= 2 && n <= 16) c->stages = static_cast<int>(n);
    else if (k == "mc" && num && (n == 1 || n == 2)) c->multicast = static_cast<int>(n);
    else if (k == "acc" && (v == "single" || v == "double" || v == "halves" || v == "triple" || v == "quad"))
      c->double_acc = v == "double" || v == "triple" || v == "quad", c->halves = v == "halves",
      c->acc_sets = v == "triple" ? 3 : v == "quad" ? 4 : 2, named->acc = true;
    else if (k == "shape" && num && (n == 0 || n == 1)) c->shape = n == 1;
    else if (k == "ahead" && num && (n == 0 || n == 1)) c->ahead = n == 1;
    else if (k == "pdl" && num && (n == 0 || n == 1)) c->pdl = n == 1;
    else if (k == "group" && num && (n == 1 || n == 2 || n == 4)) c->load_group = static_cast<int>(n);
    else if (k == "kalt" && num && (n == 0 || n == 1)) c->k_alternate = n == 1;
    else if (k == "spread" && num && n >= 0 && n <= 2) c->spread = static_cast<int>(n);
    else if (k == "ktma" && num && (n == 1 || n == 2 || n == 4)) c->ktma = static_cast<int>(n), named->ktma = true;
    else if (k == "prod" && num && (n == 1 || n == 4)) c->producer_warps = static_cast<int>(n);
    else if (k == "rel" && (v == "warp" || v == "thread")) c->release_per_warp = v == "warp";
    else if (k == "regs" && num && (n == 40 || n == 56)) c->producer_regs = static_cast<int>(n);
    else if (k == "bm" && num && (n == 64 || n == 128 || n == 256)) c->bm = static_cast<int>(n), named->bm = true;
    else if (k == "dbg" && num && n >= 0 && n <= 127) c->debug = static_cast<int>(n);
    else if (k == "sfa" && (v == "tma" || v == "copy")) c->sfa_tma = v == "tma";
    else if (k == "epi" && (v == "direct" || v == "smem" || v == "tma"))
      c->epi = v == "direct" ? kEpiDirect : v == "smem" ? kEpiSmem : kEpiTma;
    else if (k == "split" && num && n >= 1 && n <= 64) c->split_k = static_cast<int>(n), named->split = true;
    else {
      *err = "GO_CUDA_FAST_CFG: bad item \"" + item +
             "\" (expected bn=8..256 step 8, stages=2..16, mc=1|2, acc=single|double|triple|quad|halves, shape=0|1, ahead=0|1, kalt=0|1, spread=0|1|2, ktma=1|2|4, pdl=0|1, group=1|2|4, prod=1|4, "
             "rel=warp|thread, regs=40|56, bm=64|128|256, sfa=tma|copy, epi=tma|smem|direct, split=1..64, dbg=0..127)";
      return false;
    }
  }
  return true;
}

thread_local std::string t_last_config;

std::string describe(const FastChoice& c, const char* how) {
  char buf[220];
  std::snprintf(buf, sizeof buf, "bm=%d bn=%d stages=%d multicast=%d acc=%s prod=%d rel=%s regs=%d sfa=%s epi=%s %s",
                c.bm, c.bn, c.stages, c.multicast,
                !c.double_acc ? (c.halves ? "halves" : "single")
                : c.acc_sets == 3 ? "triple"
                : c.acc_sets == 4 ? "quad"
                                  : "double",
                c.producer_warps,
                c.release_per_warp ? "warp" : "thread", c.producer_regs, c.sfa_tma ? "tma" : "copy",
                c.epi == kEpiDirect ? "direct" : c.epi == kEpiSmem ? "smem" : "tma", how);
  std::string out = buf;
  if (c.ahead) out += " ahead=1";
  if (c.k_alternate) out += " kalt=1";
  if (c.spread) out += " spread=" + std::to_string(c.spread);
  if (c.ktma > 1) out += " ktma=" + std::to_string(c.ktma);
  if (!c.pdl) out += " pdl=0";
  if (c.load_group > 1) out += " group=" + std::to_string(c.load_group);
  if (c.split_k > 1) out += " split=" + std::to_string(c.split_k);
  if (c.debug) out += " dbg=" + std::to_string(c.debug) + " (profiling: wrong results)";
  return out;
}

std::string jit_source(const FastChoice& c, const FastParams& p) {
  std::ostringstream s;
  s << "// gemm-oracle JIT: fast SM90 FP8 GEMM, " << describe(c, c.shape ? "(shape class)" : "(generic)") << "\n"
    << "#define GO_FAST_PRODUCER_REGS " << c.producer_regs << "\n#define GO_FAST_MATH_REGS "
    << (c.producer_regs == 56 ? 224 : 232) << "\n"
    << (c.debug ? "#define GO_FAST_DBG " + std::to_string(c.debug) + "  // profiling only: wrong results\n" : "")
    << (c.load_group > 1 ? "#define GO_FAST_LOAD_GROUP " + std::to_string(c.load_group) + "\n" : "")
    << (c.spread ? "#define GO_FAST_SPREAD " + std::to_string(c.spread) + "\n" : "")
    << (c.ktma > 1 ? "#define GO_FAST_KTMA " + std::to_string(c.ktma) + "\n" : "")
    << (c.double_acc && c.acc_sets > 2 ? "#define GO_FAST_ACC_SETS " + std::to_string(c.acc_sets) + "\n" : "")
    << "#include \"sm90_fp8_fast_kernel.cuh\"\n"
    // The parameter block crosses from this library to the cubin: a header from another version fails to compile.
    << "static_assert(sizeof(go_sm90::FastParams) == " << sizeof(FastParams)
    << ", \"FastParams differs between the backend library and the JIT sources (GO_CUDA_JIT_SOURCES)\");\n"
    << "extern \"C\" __global__ void __launch_bounds__(go_sm90::kFastThreads, 1)\n"
    << "go_fp8_fast(const __grid_constant__ CUtensorMap a, const __grid_constant__ CUtensorMap b,\n"
    << "            const __grid_constant__ CUtensorMap sfa, const __grid_constant__ CUtensorMap d,\n"
    << "            const go_sm90::FastParams p) {\n"
    << "  go_sm90::fp8_fast_body<go_sm90::FastConfig<" << c.bn << ", " << c.stages << ", " << c.multicast << ", "
    << (c.double_acc ? "true" : "false") << ", " << (c.shape ? p.N : 0) << ", " << (c.shape ? p.K : 0) << ", "
    << c.producer_warps << ", " << (c.release_per_warp ? "true" : "false") << ", " << c.bm << ", "
    << (c.epi == kEpiDirect ? "go_sm90::kEpiDirect" : c.epi == kEpiSmem ? "go_sm90::kEpiSmem" : "go_sm90::kEpiTma")
    << ", " << (c.split_k > 1 ? "true" : "false") << ", " << (c.halves ? "true" : "false") << ", "
    << (c.ahead ? "true" : "false") << ", " << (c.k_alternate ? "true" : "false") << ">>(a, b, sfa, d, p);\n}\n";
  return s.str();
}

void fill_blocks(FastParams* p, const FastChoice& c) {
  p->m_blocks = (p->M + c.bm - 1) / c.bm;
  p->n_blocks = (p->N + c.bn - 1) / c.bn;
  const int ngroups = (p->n_blocks + c.multicast - 1) / c.multicast;
  p->units = p->m_blocks * ngroups * (p->mode == kFastMasked ? p->G : c.split_k);
  p->split_k = c.split_k;
}

}  // namespace

// The heuristic, from the configuration sweeps on an H200 (bench/RESULTS.md): BLOCK_N 64 when 128-wide tiles would
// leave SMs idle, else 128, except that 144 (one accumulator set) is taken where it needs at most 3/4 of 128's waves.
// BLOCK_M 256 (dense, masked, and contiguous layouts whose groups fit 256-row tiles) with the BLOCK_N of 128, 112, 96
// or 80 whose waves cost least, where that beats BLOCK_M 128 (the cost model is below: 4096 x 2112 takes 256 x 96, 4096
// x 576 256 x 80). At BLOCK_M <= 128, BLOCK_N 128 narrows to 112 or 96 where that needs no more waves; a dense GEMM of
// one row block takes BLOCK_N 32 or 16 for few tiles (then with TMA boxes two K blocks deep, ktma=2, or at BLOCK_M 64
// and BLOCK_N 16 four deep with three accumulator sets, ktma=4 acc=triple; M = 128 on 64-row tiles where that fills
// more SMs), or 128 x 64 tiles (ktma=2 with at least 64 K blocks); with at least 8 K blocks its copies are issued by
// three producer threads (spread=1). Two accumulator sets up
// to 128 at BLOCK_M 128 (BLOCK_M 256 has room for one); no multicast (within +-8 % with this producer, 1.4-1.8x slower
// with the one-warp producer); the four-warp producer with per-thread stage release; SFA by TMA where its layout allows
// (+2-7 % over per-thread copies at BLOCK_M 128); the epilogue through shared memory and TMA stores (over the math
// threads' own 16-byte stores: 4096 x 32768 x 512 207 -> 179 us, 4096 x 24576 x 1536 323 -> 298, 3.8 % over all 45
// benchmark shapes; from registers, which frees a stage, was slower or level almost everywhere); split K below. Stages:
// as many as fit in 227 KB (with ktma=N, a multiple of N). Programmatic dependent launch on (pdl=0, off, ran 0.975x as fast over all 45 shapes, 0.931x
// over the 14 small-M ones, eighth session). Measured and left as options: acc=halves and ahead=1, both slower (geomean
// speed-ups 0.983x over the 21 dense shapes and 0.987x over all 45), and group=2 / group=4, slower on 12 and 13 of the
// 14 small-M shapes, and kalt=1 (alternate K blocks over both math warpgroups at BLOCK_M 64), slower on every small-M
// shape in the ninth and tenth sessions. GO_CUDA_FAST_CFG overrides any field (tests/gpu/run.sh checks and sweeps the
// others).
bool choose_fast_config(const FastParams& p0, int sms, FastChoice* out, std::string* err) {
  return choose_fast_config(p0, sms, std::getenv("GO_CUDA_FAST_CFG"), out, err);
}

bool choose_fast_config(const FastParams& p0, int sms, const char* override_text, FastChoice* out, std::string* err) {
  FastParams p = p0;
  p.m_blocks = (p.M + kFBM - 1) / kFBM;
  FastChoice best;
  const int64_t t128 = tiles_of(p, 128), t144 = tiles_of(p, 144);
  auto waves = [&](int64_t tiles) { return (tiles + sms - 1) / sms; };
  best.bn = t128 < sms ? 64 : 128;
  if (t128 >= sms && 4 * waves(t144) <= 3 * waves(t128)) best.bn = 144;
  // BLOCK_M 256 and its BLOCK_N, by a per-wave cost: a wave of 256-row tiles BN wide takes time in proportion to
  // BN + 53 (H200, 4096 x N x 7168, seventh session: 53.7 / 44.2 / 38.8 us a wave at BN 128 / 96 / 80), a wave of
  // 128 x 128 tiles 4 / 7 of BN 128's (the 1.74x above), and one of 128 x 144 tiles (one accumulator set) 144.
  // Only BN that are multiples of 16, whose D boxes are at least 32 bytes wide (88: 825 against 935 TFLOPS for 96).
  if ((best.bn == 128 || best.bn == 144) && (p.mode == kFastNormal || p.mode == kFastMasked || p.tiles256)) {
    FastParams q = p;
    q.m_blocks = (p.M + 255) / 256;
    const int64_t cost_bm128 = best.bn == 144 ? 7 * 144 * waves(t144) : 4 * 181 * waves(t128);  // x 7
    int64_t cost = cost_bm128;
    for (const int bn : {128, 112, 96, 80}) {  // a narrower BLOCK_N must save 3 % (the model's margin)
      const int64_t c = 7 * (bn + 53) * waves(tiles_of(q, bn));
      if (c * 100 < cost * (bn == 128 ? 100 : 97)) cost = c, best.bm = 256, best.bn = bn;
    }
  }
  // BLOCK_M <= 128 at BLOCK_N 128: the narrowest of 96 and 112 that needs no more waves (the same work per wave on
  // fewer columns: 128 x 24576 x 1536 516 -> 535 TFLOPS at 96, 64 x 24576 x 1536 307 -> 330).
  if (best.bm != 256 && best.bn == 128) {
    for (const int bn : {112, 96})
      if (waves(tiles_of(p, bn)) == waves(t128)) best.bn = bn;
  }
  // BLOCK_M 64 where A has at most 64 rows (dense M <= 64, masked Mmax <= 64): half the A bytes per stage, so 12
  // stages instead of 8 of B in flight for these memory-bound shapes (64 x 7168 x 16384: 44 against 70 us). Not for
  // masked Mmax 128 with every masked_m <= 64: its zero tiles (rows 64 .. 127) fell on every other CTA (the grid is
  // even), which left half the SMs without work: 32 x 20 x 6144 x 7168 took 571 us against 437 at BLOCK_M 128.
  if ((p.mode == kFastNormal || p.mode == kFastMasked) && p.M <= 64) best.bm = 64;
  // BLOCK_N 32 for a dense GEMM of one row block (BLOCK_M 64 or 128) whose 64-wide tiles fill at most half the SMs,
  // when 32-wide ones still fit in one wave: twice the CTAs stream B (H200, fifth session: 128 x 2112 x 7168 23.8 ->
  // 20.1 us, 128 x 4096 x 7168 24.1 -> 20.8). At M = 64 it gained nothing while one thread issued the copies; with
  // spread=1 it does (tenth session: 64 x 4096 x 7168 245.8 -> 271.5 TFLOPS, and at BLOCK_N 16 64 x 2112 x 7168
  // 129.4 -> 147.7, 64 x 576 x 7168 34.6 split 14 ways -> 41.5 unsplit).
  if (p.mode == kFastNormal && (best.bm == 128 || best.bm == 64) && best.bn == 64 && p.m_blocks == 1 &&
      2 * tiles_of(p, 64) <= sms && tiles_of(p, 32) <= sms)
    best.bn = 32;
  // And BLOCK_N 16 on the same terms: 128 x 2112 x 7168, 132 tiles, 191.1 -> 205.6 TFLOPS. 16-wide tiles do not
  // split K unless split is named (below): 128 x 576 x 7168, 36 tiles, 52.9 TFLOPS at BLOCK_N 32 split 7 ways, 57.8 at
  // 16 unsplit, 49.2 at 16 split 3 ways; 64 x 576, 27.4 split against 27.7 unsplit (H200, seventh session).
  if (best.bn == 32 && 2 * tiles_of(p, 32) <= sms && tiles_of(p, 16) <= sms) best.bn = 16;
  // Where that leaves 64 < M <= 128 on 128 x 16 tiles: BLOCK_M 64 (two row blocks; B is read twice, the second time
  // mostly from L2) with the narrower of BLOCK_N 16 and 32 whose tiles fit one wave: twice the CTAs, each with half
  // the A rows (H200, eleventh session, TFLOPS: 128 x 2112 x 7168 313.0 -> 353.1 at 64 x 32, 128 x 576 x 7168 94.0 ->
  // 116.6 at 64 x 16 with ktma=4 and acc=triple, below; 128 x 4096 x 7168, whose 64 x 32 tiles would need two waves,
  // keeps 128 x 32: 525.8 against 385.7).
  if (p.mode == kFastNormal && best.bm == 128 && best.bn == 16 && p.M > 64 && p.m_blocks == 1) {
    for (const int bn : {16, 32}) {
      if (2 * tiles_of(p, bn) <= sms) {
        best.bm = 64;
        best.bn = bn;
        break;
      }
    }
  }
  // Where such a GEMM keeps BLOCK_N 64 (N too wide for 32) it keeps 128 x 64 tiles. From the seventh to the tenth
  // session it took 64 x 128 instead (one math warpgroup on m64n128; then 128 x 7168 x 16384 586 -> 640 TFLOPS), which
  // with three issuing producer threads (spread=1, below) no longer paid (H200, eleventh session: 128 x 7168 x 16384
  // 720.2 at 64 x 128 against 757.7 at 128 x 64 and 783.7 with ktma=2, below; 128 x 7168 x 2048 437.7 against 450.0).
  // Three issuing producer threads (spread=1) for a dense GEMM of one row block with at least 8 K blocks, where one
  // issuing thread bounded the K loop (H200, ninth session, the 14 dense M <= 128 shapes: 64 x 2112 x 7168 106.3 ->
  // 133.6 TFLOPS, 64 x 4096 x 7168 203.1 -> 252.6, 128 x 4096 x 7168 373.5 -> 444.1; level at K = 512 and 64 x 576,
  // 2-5 % slower at M = 4096, where it stays off).
  const bool one_row_block = p.mode == kFastNormal && p.m_blocks == 1 && (p.K + kFBK - 1) / kFBK >= 8;
  best.spread = one_row_block ? 1 : 0;
  // And there, at BLOCK_N 16 or 32, TMA boxes two K blocks deep (ktma=2; where K allows, below): a trace of CTA 0
  // showed about 100 cycles of the issuing thread per TMA instruction whatever its bytes, and the narrow tiles move
  // few bytes per instruction (H200, tenth session, TFLOPS: 64 x 2112 x 7168 148.5 -> 190.1, 64 x 576 x 7168 41.7 ->
  // 54.1, 64 x 4096 x 7168 272.7 -> 328.6 (BLOCK_N 32), 128 x 2112 x 7168 256.9 -> 313.9, 128 x 576 x 7168 73.5 ->
  // 94.5). At BLOCK_N 64 and wider it was level or slower (64 x 7168 x 16384 426.2 against 418.4, 128 x 24576 x 1536
  // 615.8 against 587.9); ktma=4 was within 5 % of 2 at BLOCK_M 64 and slower at 128 (8 stages instead of 10).
  // Decided below, on the BLOCK_N that an override leaves.
  best.multicast = 1;
  best.stages = 0;  // as many as fit
  Named named;
  if (const char* o = override_text) {
    const int heuristic_bn = best.bn;
    if (!apply_override(o, &best, &named, err)) return false;
    // A named BLOCK_M 256 over the heuristic's BLOCK_N 144 (4096 x 576) takes BLOCK_N 128, which it has room for.
    if (named.bm && best.bm == 256 && best.bn == heuristic_bn && best.bn > 128) best.bn = 128;
    // An override of BLOCK_N past 128 or of two accumulator sets takes the heuristic's BLOCK_M 256 back to 128.
    if (!named.bm && best.bm == 256 && (best.bn > 128 || (named.acc && best.double_acc))) best.bm = 128;
  }
  // And 128 x 64 tiles with at least 64 K blocks (eleventh session: 128 x 7168 x 16384 757.7 -> 783.7; at 16 K blocks,
  // 128 x 7168 x 2048, 450.0 -> 438.7).
  const bool wide_deep = best.bm == 128 && best.bn == 64 && (p.K + kFBK - 1) / kFBK >= 64;
  if (!named.ktma) best.ktma = one_row_block && (best.bn <= 32 || wide_deep) ? 2 : 1;
  // At BLOCK_M 64 and BLOCK_N 16, boxes four K blocks deep with three accumulator sets (acc=triple) where the K blocks
  // are a multiple of 4 (H200, eleventh session, TFLOPS against ktma=2 with two sets: 64 x 2112 x 7168 188.6 ->
  // 195.6, 64 x 576 x 7168 53.4 -> 58.9; ktma=4 alone 189.9 and 56.6; at BLOCK_N 32, 64 x 4096 x 7168, 329.1 -> 319.0,
  // and at BLOCK_M 128 much slower: 128 x 2112 x 7168 313.4 -> 170.1).
  const bool deep = !named.ktma && !named.acc && !best.k_alternate && best.ktma == 2 && best.bm == 64 &&
                    best.bn == 16 && p.K % kFBK == 0 && (p.K / kFBK) % 4 == 0;
  if (deep) best.ktma = 4;
  // A contiguous layout's groups start on mk_alignment (128-row) boundaries, which a 256-row tile could straddle:
  // bm=256 applies to it only where every group fits 256-row tiles (p.tiles256); otherwise it keeps 128. A call does
  // not know which: the launcher asks for both and launches both, gated by the device check (choose_for_call).
  if (p.mode != kFastNormal && p.mode != kFastMasked && !p.tiles256 && best.bm == 256) best.bm = 128;
  if (!named.acc) best.double_acc = best.bn <= 128 && best.bm != 256 && !best.k_alternate;
  if (deep && best.double_acc) best.acc_sets = 3;
  if (best.k_alternate) {
    const char* why = best.bm != 64          ? "needs bm=64 (the one tile height with an idle math warpgroup)"
                      : best.double_acc      ? "runs one accumulator set per warpgroup: not with acc=double"
                      : best.halves          ? "promotes whole blocks: not with acc=halves"
                      : best.ahead           ? "is not combined with ahead=1"
                      : best.split_k > 1     ? "promotes in the kernel: not with split="
                                             : nullptr;
    if (why) {
      *err = std::string("GO_CUDA_FAST_CFG: kalt=1 ") + why;
      return false;
    }
  }
  if (best.double_acc && best.bn > 128) {
    *err = "GO_CUDA_FAST_CFG: acc=double needs bn <= 128";
    return false;
  }
  // The field counts two-set kernels' sets only; with fewer K blocks than sets a call runs two (the configuration
  // string says so), as ktma=N falls back to 1 where K does not allow it.
  if (!best.double_acc || (p.K + kFBK - 1) / kFBK < best.acc_sets) best.acc_sets = 2;
  if (best.double_acc && best.acc_sets > 2) {
    const char* why = best.ahead        ? "is not combined with ahead=1"
                      : best.bn > 64    ? "needs bn <= 64 (registers)"
                                        : nullptr;
    if (why) {
      *err = std::string("GO_CUDA_FAST_CFG: acc=") + (best.acc_sets == 3 ? "triple " : "quad ") + why;
      return false;
    }
  }
  if (best.spread && best.producer_warps < 4) {
    *err = "GO_CUDA_FAST_CFG: spread=" + std::to_string(best.spread) + " issues from several producer warps: not with prod=1";
    return false;
  }
  if (best.ahead && best.halves) {
    *err = "GO_CUDA_FAST_CFG: ahead=1 issues into the one-set or two-set loop: not with acc=halves";
    return false;
  }
  if (best.halves && best.bn % 16 != 0) {
    *err = "GO_CUDA_FAST_CFG: acc=halves needs bn a multiple of 16";
    return false;
  }
  if (best.bm == 256 && (best.double_acc || best.bn > 128)) {
    *err = "GO_CUDA_FAST_CFG: bm=256 needs acc=single or halves and bn <= 128 (registers)";
    return false;
  }
  const int fit = max_stages(best.bn, best.bm, best.epi, best.k_alternate);
  if (best.ktma > 1) {
    // ktma=N needs N-aligned groups of stages, at least two of them (sm90_fp8_fast_kernel.cuh: with one, the math
    // would wait on the next group while it holds a stage of it), and no multicast, group=N or named split. A named
    // ktma is refused without them; the heuristic's is dropped (an override of mc=2 keeps working).
    const int stages = best.stages ? best.stages : fit - fit % best.ktma;
    const char* why = best.multicast != 1   ? "needs mc=1 (a multicast share of a deep box would not land in its stages)"
                      : best.load_group > 1 ? "is not combined with group=N"
                      : (named.split && best.split_k > 1) ? "is not combined with split="
                      : stages % best.ktma != 0         ? "needs the stages to be a multiple of N"
                      : stages < 2 * best.ktma          ? "needs at least two groups of N stages (the math holds a stage "
                                                          "of one group while it waits for the next)"
                      : stages < best.ktma + best.acc_sets - 1 ? "needs N + sets - 1 stages (acc=triple|quad)"
                                                        : nullptr;
    if (why && named.ktma) {
      *err = "GO_CUDA_FAST_CFG: ktma=" + std::to_string(best.ktma) + " " + why + " (BLOCK_M " + std::to_string(best.bm) +
             " x BLOCK_N " + std::to_string(best.bn) + ": " + std::to_string(stages) + " stages)";
      return false;
    }
    // Where K is not a multiple of 128 (the box reads the K blocks as a third dimension) or its K blocks not a
    // multiple of N, a call runs ktma=1, which the configuration string (go_ext_fast_last_config) shows, as with a
    // named split.
    if (why || p.K % kFBK != 0 || (p.K / kFBK) % best.ktma != 0) best.ktma = 1;
    if (deep && best.ktma == 1) best.acc_sets = 2;  // the heuristic's three sets go with its ktma=4
  }
  if (best.stages == 0) best.stages = fit - fit % best.ktma;  // ktma=N: a multiple of N
  if (best.double_acc && best.acc_sets > 2 && best.stages < best.ktma + best.acc_sets - 1) {
    *err = "GO_CUDA_FAST_CFG: " + std::to_string(best.stages) + " stages: acc=" + (best.acc_sets == 3 ? "triple" : "quad") +
           " holds " + std::to_string(best.acc_sets - 1) + " while it waits for the next (at least " +
           std::to_string(best.ktma + best.acc_sets - 1) + " with ktma=" + std::to_string(best.ktma) + ")";
    return false;
  }
  if (best.stages > fit) {
    *err = "GO_CUDA_FAST_CFG: " + std::to_string(best.stages) + " stages of BLOCK_M " + std::to_string(best.bm) +
           " x BLOCK_N " + std::to_string(best.bn) + " need more than 227 KB of shared memory (at most " + std::to_string(fit) + ")";
    return false;
  }
  // Split K where the tiles fill at most a third of the SMs and are not 16 wide or copied by ktma (since the tenth
  // session a dense GEMM of one row block takes 16-wide tiles instead: 64 x 576 x 7168 ran 34.6 TFLOPS split 14 ways
  // and 54.1 as 36 unsplit tiles with ktma=2; 256 x 576 x 2048, 18 tiles of 128 x 64, still splits):
  // S CTAs per tile, each on nkb / S K blocks (at least 4), the raw block results through a workspace of nkb x M x N
  // f32, then the promotion kernel. The workspace must stay well inside L2 (50 MB): on the H200, 64 x 576 x 7168
  // (8 MB, 14 splits) went from 18.7 to 16.3 us and 128 x 576 x 7168 (16.5 MB) from 23.7 to 19.5, while
  // 64 x 2112 x 7168 (30 MB, 4 splits) went from 18.9 to 28.4 (bench/RESULTS.md, fourth session): at most 20 MB.
  const int64_t nkb = (p.K + kFBK - 1) / kFBK;
  const int64_t mb = (p.M + best.bm - 1) / best.bm, nb = (p.N + best.bn - 1) / best.bn;
  if (!named.split && best.bn != 16 && p.mode == kFastNormal && best.multicast == 1 && !best.halves &&
      !best.k_alternate && best.ktma == 1 && best.acc_sets == 2 && mb * nb * 3 <= sms && nkb >= 8) {
    const int64_t s = std::min<int64_t>({sms / (mb * nb), nkb / 4, 16});
    if (s >= 2 && nkb * mb * best.bm * nb * best.bn * 4 <= (int64_t{20} << 20)) best.split_k = static_cast<int>(s);
  }
  // 56 / 224 unless named (sm90_fp8_fast_kernel.cuh: the producer spills at 40).
  if (best.producer_regs == 0) best.producer_regs = 56;
  // A named split applies to dense GEMMs (grouped calls keep 1) and to at most one split per K block; the
  // configuration string (go_ext_fast_last_config) shows the split that ran.
  if (p.mode != kFastNormal) best.split_k = 1;
  if (best.split_k > nkb) best.split_k = static_cast<int>(std::max<int64_t>(1, nkb));
  if (best.split_k > 1 && best.halves) {
    *err = "GO_CUDA_FAST_CFG: split=" + std::to_string(best.split_k) + " promotes in a second kernel: no acc=halves";
    return false;
  }
  if (best.split_k > 1 && best.double_acc && best.acc_sets > 2) {
    *err = "GO_CUDA_FAST_CFG: split=" + std::to_string(best.split_k) + " is not combined with acc=triple|quad";
    return false;
  }
  if (best.split_k > 1 && best.multicast != 1) {
    *err = "GO_CUDA_FAST_CFG: split=" + std::to_string(best.split_k) + " needs mc=1";
    return false;
  }
  *out = best;
  return true;
}

std::string describe_fast_config(const FastChoice& c, const char* how) { return describe(c, how); }

namespace {

// Grouped calls (p->gate_kind set): the gate kernel checks the index tensor on the device ahead of the GEMM kernels,
// which read its verdict (grouped_gate.h), instead of the host copying it and waiting for the GPU.
cudaError_t start_gate(FastParams* p, bool pdl, cudaStream_t stream) {
  if (p->gate_kind == kGateNone) return cudaSuccess;
  const bool masked = p->gate_kind == kGateMasked, psum = p->gate_kind == kGatePsum;
  const int32_t* v = masked ? p->masked_m : p->gl;
  const int64_t n = masked || psum ? p->G : p->M;
  int32_t* gate = nullptr;
  const cudaError_t e = launch_gate_check(static_cast<GateKind>(p->gate_kind), v, n, p->M, p->G, p->mk_align, pdl,
                                          stream, &gate);
  p->gate = gate;
  p->gate_want = kWantValid;
  return e;
}

cudaError_t launch_aot(FastParams p, const void* a, int64_t a_rows, int64_t a_stride, const void* b, int64_t b_rows,
                       int64_t b_stride, int sms, cudaStream_t stream, bool* used, const std::string& why) {
  FastChoice c;
  c.bn = tiles_of(p, 128) < sms ? 64 : 128;
  if (const char* f = std::getenv("GO_CUDA_BLOCK_N")) c.bn = std::atoi(f) == 64 ? 64 : 128;
  c.stages = c.bn == 64 ? Aot64::kStages : Aot128::kStages;
  c.multicast = 1;
  c.double_acc = true;
  c.shape = false;
  c.epi = kEpiSmem;  // the AOT instantiations (FastConfig's default epilogue)
  fill_blocks(&p, c);
  CUtensorMap ma, mb, msfa, md;
  if (!make_map(&ma, a, a_rows, p.K, a_stride, kFBM) || !make_map(&mb, b, b_rows, p.K, b_stride, c.bn)) {
    return cudaSuccess;
  }
  make_sfa_map(&p, c.bm, 1, c.sfa_tma, &msfa);
  make_d_map(&p, c.bn, false, &md);
  c.sfa_tma = p.sfa_tma != 0;
  *used = true;
  t_last_config = describe(c, ("aot (" + why + ")").c_str());
  go_jit::count_aot_launch();
  if (p.units == 0) return cudaSuccess;
  if (const cudaError_t e = start_gate(&p, false, stream); e != cudaSuccess) return e;
  const int smem = smem_bytes(c);
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
    const int smem = smem_bytes(c);
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
  if (!make_map(&k->ma, a, a_rows, p.K, a_row_stride, c.bm / c.multicast, c.ktma) ||
      !make_map(&k->mb, b, b_rows, p.K, b_row_stride, c.bn, c.ktma))
    return false;
  make_sfa_map(&p, c.bm, c.ktma, c.sfa_tma, &k->msfa);
  c.sfa_tma = p.sfa_tma != 0;
  make_d_map(&p, c.bn, c.epi == kEpiTma, &k->md);
  return true;
}

std::string describe_launch(const Prepared& k) {
  std::string s = describe(k.c, k.c.shape ? "jit=shape" : "jit=generic");
  // D's layout refused a TMA map: the epi=tma kernel stores every chunk from its threads.
  if (k.c.epi == kEpiTma && !k.p.d_tma) s += " d=threads";
  return s;
}

// dbg bit 6 (sm90_fp8_fast_kernel.cuh): after the 30th launch of a traced kernel, waits for the stream and prints
// CTA 0's trace on stderr, one line per pipeline iteration, in cycles from the producer's start. A debugging aid: the
// wait holds the host, and a failure to read the trace is reported, not returned.
void print_fast_trace(const Prepared& k, cudaStream_t stream) {
  static std::mutex mu;
  static std::map<CUfunction, int> launches;
  {
    std::lock_guard<std::mutex> lk(mu);
    if (++launches[k.fn] != 30) return;
  }
  long long t[5][256];
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
  const long long t0 = t[4][0], n = std::min<long long>(t[4][1], 256);
  std::fprintf(stderr, "fast trace (%s): launch 30, CTA 0, %lld iterations, cycles from the producer's start\n",
               what.c_str(), t[4][1]);
  for (long long i = 0; i < n; ++i) {
    std::fprintf(stderr, "trace %lld free %lld issued %lld full %lld released %lld\n", i, t[0][i] - t0, t[1][i] - t0,
                 t[2][i] - t0, t[3][i] - t0);
  }
  // Prologue marks (sm90_fp8_fast_kernel.cuh, GO_FAST_MARK): thread 0 before and after setmaxnreg.dec and after its
  // first tile's coordinates, thread 128 after setmaxnreg.inc.
  std::fprintf(stderr, "trace prologue dec %lld decd %lld tile %lld inc %lld\n", t[4][3] - t0, t[4][4] - t0,
               t[4][5] - t0, t[4][6] - t0);
  std::fprintf(stderr, "trace end %lld\n", t[4][2] - t0);
}

cudaError_t launch_prepared(Prepared& k, int sms, cudaStream_t stream, std::string* err) {
  FastChoice& c = k.c;
  FastParams& p = k.p;
  // Persistent grid: one CTA per SM, as many clusters as can be resident together (a cluster must fit in one GPC).
  int clusters = std::min(p.units, sms / c.multicast);
  if (k.facts.max_clusters > 0) clusters = std::min(clusters, k.facts.max_clusters);
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
                                    static_cast<unsigned>(c.multicast), static_cast<unsigned>(smem_bytes(c)),
                                    stream, args, c.pdl);
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
  if (c.debug & 64) print_fast_trace(k, stream);
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
    if (!jit_kernel(k[i].c, k[i].p, &k[i].fn, &k[i].facts, &why)) {
      // A JIT failure is reported, not hidden: the AOT kernels still give the same bits.
      std::fprintf(stderr, "gemm-oracle: fast FP8 kernel JIT failed, using the ahead-of-time kernel: %s\n", why.c_str());
      return launch_aot(p, a, a_rows, a_row_stride, b, b_rows, b_row_stride, sms, stream, used, "JIT failed");
    }
    if (!prepare_maps(&k[i], a, a_rows, a_row_stride, b, b_rows, b_row_stride)) return cudaSuccess;
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
  if (const cudaError_t e = start_gate(&gated, cs[0].pdl, stream); e != cudaSuccess) {
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
    if (!jit_kernel(cs[i], p, &fn, nullptr, err)) return 1;
  }
  return 0;
}

std::string last_fast_config() { return t_last_config; }

}  // namespace go_sm90
