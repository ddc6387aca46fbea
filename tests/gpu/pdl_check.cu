// Checks programmatic dependent launch (every fast FP8 launch uses it; kernels/cuda/sm90_common.cuh) against the
// hazards it could open. Through the C ABI (dlopen) with GO_CUDA_ASYNC=1, everything on the legacy default stream: a
// "writer" kernel queued just before a fast FP8 GEMM lets dependents launch at once (griddepcontrol.launch_dependents,
// as a PDL-aware kernel may), spins for about 200 us, and only then
//   1. writes the GEMM's A (read after write): D must equal a run without the writer;
//   2. reads the GEMM's D into a save buffer (write after read): the save must hold D's previous contents;
//   3. writes masked_m of a masked grouped GEMM (which the GEMM kernel checks and walks): D must equal a run without
//      the writer;
//   4. writes the GEMM's B (read after write of the operand whose first box a dense kernel prefetches into L2 before
//      its wait, fast_prefetch_b): D must equal a run without the writer.
// With --expect-hazard (run with the profiling build of the backend under GO_CUDA_FAST_CFG=dbg=8, whose GEMM kernels
// skip griddepcontrol.wait) case 1 must FAIL: that shows the check can see a missing wait (cases 2, 3 and 4 are then
// not judged).
//
// usage: pdl_check CUDA_SO [--expect-hazard]      exit 0: as expected; 1: not; 2: setup error
// build: nvcc -x cu -gencode=arch=compute_90a,code=sm_90a -O2 -std=c++17 -o pdl_check tests/gpu/pdl_check.cu -ldl
#include <cuda_runtime.h>
#include <dlfcn.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "../../kernels/gemm_oracle.h"

namespace {

struct Api {
  decltype(&go_alloc) alloc;
  decltype(&go_free) free_;
  decltype(&go_copy_in) copy_in;
  decltype(&go_copy_out) copy_out;
  decltype(&go_last_error) last_error;
  decltype(&go_fp8_gemm) fp8_gemm;
  decltype(&go_m_grouped_fp8_gemm_masked) masked;
  decltype(&go_synchronize) sync;
  int32_t (*last_config)(char*, int64_t);
};

// The symbol `name` of the library into f; false if it is absent.
template <typename F>
bool sym(void* h, const char* name, F& f) {
  f = reinterpret_cast<F>(dlsym(h, name));
  return f != nullptr;
}

// Lets dependents launch, spins `cycles` SM clocks, then copies `n` bytes from src to dst (one block).
__global__ void late_copy(const uint8_t* src, uint8_t* dst, int64_t n, long long cycles) {
  asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
  const long long t0 = clock64();
  while (clock64() - t0 < cycles) {
  }
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x) dst[i] = src[i];
}

go_tensor tensor(void* p, int dt, std::vector<int64_t> shape, std::vector<int64_t> strides) {
  go_tensor t;
  std::memset(&t, 0, sizeof t);
  t.data = p;
  t.dtype = dt;
  t.ndim = static_cast<int32_t>(shape.size());
  for (size_t i = 0; i < shape.size(); ++i) t.shape[i] = shape[i], t.strides[i] = strides[i];
  return t;
}

// Deterministic finite e4m3 codes (no NaN: 0x7F / 0xFF become 0x38) and scales in (0, 1].
void fill_codes(std::vector<uint8_t>& v, uint32_t seed) {
  for (auto& c : v) {
    seed = seed * 1664525u + 1013904223u;
    c = static_cast<uint8_t>(seed >> 24);
    if ((c & 0x7F) == 0x7F) c = 0x38;
  }
}
void fill_scales(std::vector<float>& v, uint32_t seed) {
  for (auto& f : v) {
    seed = seed * 1664525u + 1013904223u;
    f = 1.0f / static_cast<float>(1 + (seed >> 28));
  }
}

constexpr long long kSpin = 400000;  // about 200 us at the H200's 1.98 GHz boost clock

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: pdl_check CUDA_SO [--expect-hazard]\n");
    return 2;
  }
  const bool expect_hazard = argc > 2 && std::string(argv[2]) == "--expect-hazard";
  setenv("GO_CUDA_ASYNC", "1", 1);
  void* h = dlopen(argv[1], RTLD_NOW);
  if (!h) {
    std::fprintf(stderr, "%s\n", dlerror());
    return 2;
  }
  Api api;
  sym(h, "go_ext_fast_last_config", api.last_config);  // optional
  if (!sym(h, "go_alloc", api.alloc) || !sym(h, "go_free", api.free_) || !sym(h, "go_copy_in", api.copy_in) ||
      !sym(h, "go_copy_out", api.copy_out) || !sym(h, "go_last_error", api.last_error) ||
      !sym(h, "go_fp8_gemm", api.fp8_gemm) || !sym(h, "go_m_grouped_fp8_gemm_masked", api.masked) ||
      !sym(h, "go_synchronize", api.sync)) {
    std::fprintf(stderr, "%s: a required go_* symbol is missing\n", argv[1]);
    return 2;
  }
  // Dense 256 x 4096 x 1024 and masked 4 x 128 (Mmax) x 4096 x 1024: fast-path shapes of a few microseconds. The dense
  // one has tiles enough that the heuristic does not split K, so its kernel is a dense shape-class kernel that waits
  // late (fast_late_wait; a split-K kernel waits at the top, which at 256 x 512 x 1024 left cases 1 and 4 untested;
  // tests/kernels/cuda_fast_heuristic_test.ts pins both choices, and a split here counts as unexpected below).
  const int64_t M = 256, N = 4096, K = 1024, KB = K / 128, NB = N / 128, G = 4, Mm = 128;
  std::vector<void*> live;
  auto dev = [&](size_t bytes) {
    void* p = nullptr;
    if (api.alloc(bytes, &p) != 0) {
      std::fprintf(stderr, "go_alloc(%zu): %s\n", bytes, api.last_error());
      std::exit(2);
    }
    live.push_back(p);
    return p;
  };
  // A and its scales serve both calls: the dense one reads M rows, the masked one G x Mm.
  std::vector<uint8_t> a_real(std::max(M, G * Mm) * K), b_real(G * N * K);
  std::vector<float> sa(std::max(M, G * Mm) * KB), sb(G * NB * KB);
  fill_codes(a_real, 1), fill_codes(b_real, 2), fill_scales(sa, 3), fill_scales(sb, 4);
  void *pa = dev(a_real.size()), *pa_src = dev(a_real.size()), *pb = dev(b_real.size()), *pb_src = dev(b_real.size()),
       *psa = dev(4 * sa.size()), *psb = dev(4 * sb.size()), *pd = dev(2 * G * Mm * N), *psave = dev(2 * G * Mm * N),
       *pm = dev(4 * G), *pm_src = dev(4 * G);
  api.copy_in(pa_src, a_real.data(), a_real.size());
  api.copy_in(pb, b_real.data(), b_real.size());
  api.copy_in(pb_src, b_real.data(), b_real.size());
  api.copy_in(psa, sa.data(), 4 * sa.size());
  api.copy_in(psb, sb.data(), 4 * sb.size());
  const go_tensor ta = tensor(pa, GO_E4M3, {M, K}, {K, 1}), tsa = tensor(psa, GO_F32, {M, KB}, {1, M}),
                  tb = tensor(pb, GO_E4M3, {N, K}, {K, 1}), tsb = tensor(psb, GO_F32, {NB, KB}, {KB, 1}),
                  td = tensor(pd, GO_BF16, {M, N}, {N, 1});
  const go_tensor ga = tensor(pa, GO_E4M3, {G, Mm, K}, {Mm * K, K, 1}),
                  gsa = tensor(psa, GO_F32, {G, Mm, KB}, {Mm * KB, 1, Mm}),
                  gb = tensor(pb, GO_E4M3, {G, N, K}, {N * K, K, 1}),
                  gsb = tensor(psb, GO_F32, {G, NB, KB}, {NB * KB, KB, 1}),
                  gd = tensor(pd, GO_BF16, {G, Mm, N}, {Mm * N, N, 1}), gm = tensor(pm, GO_I32, {G}, {1});
  const int32_t masked_real[G] = {128, 70, 1, 128}, masked_zero[G] = {0, 0, 0, 0};
  api.copy_in(pm_src, masked_real, sizeof masked_real);
  const std::vector<uint8_t> zeros(2 * G * Mm * N, 0);
  const std::vector<uint16_t> sentinel(G * Mm * N, 0x3f80);  // bf16 1.0
  const size_t d_bytes = 2 * M * N, gd_bytes = 2 * G * Mm * N;

  auto dense = [&]() { return api.fp8_gemm(&ta, &tsa, &tb, &tsb, nullptr, &td, 1, 128, 128, 128, GO_MODEL_SM90_1D2D); };
  auto masked = [&]() { return api.masked(&ga, &gsa, &gb, &gsb, &gd, &gm, 1, 128, 128, 128, GO_MODEL_SM90_1D2D); };
  auto out = [&](size_t bytes, void* src = nullptr) {
    std::vector<uint8_t> v(bytes);
    api.sync();
    api.copy_out(v.data(), src ? src : pd, bytes);
    return v;
  };
  auto config = [&]() {
    char buf[512] = {0};
    if (api.last_config) api.last_config(buf, sizeof buf);
    return std::string(buf);
  };
  auto check = [&](int32_t st, const char* what) {
    if (st != 0) {
      std::fprintf(stderr, "%s: status %d: %s\n", what, st, api.last_error());
      std::exit(2);
    }
  };

  int unexpected = 0;
  {
    // References: no writer ahead.
    api.copy_in(pa, a_real.data(), a_real.size());
    api.copy_in(pd, zeros.data(), gd_bytes);
    check(dense(), "dense reference");
    const std::vector<uint8_t> d_ref = out(d_bytes);
    const std::string dense_cfg = config();
    api.copy_in(pm, masked_real, sizeof masked_real);
    api.copy_in(pd, zeros.data(), gd_bytes);
    check(masked(), "masked reference");
    const std::vector<uint8_t> gd_ref = out(gd_bytes);
    const std::string masked_cfg = config();

    // 1. Read after write: A is zero until the writer copies the real codes in.
    api.copy_in(pa, zeros.data(), a_real.size());
    api.copy_in(pd, zeros.data(), gd_bytes);
    api.sync();
    late_copy<<<1, 256>>>(static_cast<const uint8_t*>(pa_src), static_cast<uint8_t*>(pa), a_real.size(), kSpin);
    check(dense(), "dense after the writer");
    const bool raw_ok = out(d_bytes) == d_ref;

    // 2. Write after read: the writer saves D (the sentinel) late; the GEMM must not have overwritten it by then.
    api.copy_in(pa, a_real.data(), a_real.size());
    api.copy_in(pd, sentinel.data(), d_bytes);
    api.sync();
    late_copy<<<1, 256>>>(static_cast<const uint8_t*>(pd), static_cast<uint8_t*>(psave), d_bytes, kSpin);
    check(dense(), "dense before the reader");
    const std::vector<uint8_t> saved = out(d_bytes, psave);
    const bool war_ok = std::memcmp(saved.data(), sentinel.data(), d_bytes) == 0 && out(d_bytes) == d_ref;

    // 3. The masked GEMM's counts: masked_m is all zero (every tile written as zeros) until the writer copies the real
    // one.
    api.copy_in(pm, masked_zero, sizeof masked_zero);
    api.copy_in(pd, zeros.data(), gd_bytes);
    api.sync();
    late_copy<<<1, 32>>>(static_cast<const uint8_t*>(pm_src), static_cast<uint8_t*>(pm), sizeof masked_real, kSpin);
    check(masked(), "masked after the writer");
    const bool gate_ok = out(gd_bytes) == gd_ref;

    // 4. Read after write of B: B is zero until the writer copies the real codes in, by which time the dense kernel has
    // asked L2 for B's first box (fast_prefetch_b, before its wait).
    api.copy_in(pb, zeros.data(), N * K);
    api.copy_in(pd, zeros.data(), gd_bytes);
    api.sync();
    late_copy<<<1, 256>>>(static_cast<const uint8_t*>(pb_src), static_cast<uint8_t*>(pb), N * K, kSpin);
    check(dense(), "dense after the writer of B");
    const bool rawb_ok = out(d_bytes) == d_ref;
    api.copy_in(pb, b_real.data(), b_real.size());
    const cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) {
      std::fprintf(stderr, "CUDA error: %s\n", cudaGetErrorString(e));
      return 2;
    }

    // Without the wait (--expect-hazard) the read after write of A must fail; the other three may go either way.
    const bool no_wait = expect_hazard;
    const bool bad_raw = raw_ok == no_wait, bad_war = !war_ok && !no_wait, bad_gate = !gate_ok && !no_wait,
               bad_rawb = !rawb_ok && !no_wait;
    std::printf("dense [%s]\nmasked [%s]\n", dense_cfg.c_str(), masked_cfg.c_str());
    std::printf("  read after write (A written late):    %s%s\n", raw_ok ? "D equal" : "D DIFFERS",
                bad_raw ? "  <- unexpected" : "");
    std::printf("  write after read (D read late):       %s%s\n", war_ok ? "D kept until read" : "D OVERWRITTEN EARLY",
                bad_war ? "  <- unexpected" : "");
    std::printf("  gate input (masked_m written late):   %s%s\n", gate_ok ? "D equal" : "D DIFFERS",
                bad_gate ? "  <- unexpected" : "");
    std::printf("  read after write (B written late):    %s%s\n", rawb_ok ? "D equal" : "D DIFFERS",
                bad_rawb ? "  <- unexpected" : "");
    // A split-K dense kernel waits at the top (fast_late_wait): cases 1 and 4 would not test the late wait.
    const bool bad_split = dense_cfg.find("split=") != std::string::npos;
    if (bad_split) std::printf("  the dense case ran split K, whose kernels wait at the top  <- unexpected\n");
    unexpected += bad_raw + bad_war + bad_gate + bad_rawb + bad_split;
  }
  for (void* p : live) api.free_(p);
  std::printf("SUMMARY pdl_check%s: %s\n", expect_hazard ? " (dbg=8: no wait, the hazard must show)" : "",
              unexpected ? "UNEXPECTED" : "as expected");
  return unexpected ? 1 : 0;
}
