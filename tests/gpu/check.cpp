// GPU check driver: loads the CUDA backend and the CPU backend (two independent implementations of the same
// kernel models, both behind kernels/gemm_oracle.h), runs every operation family on seeded random inputs and
// compares the outputs bit for bit; fp8_gemm cases are also compared with a small scalar sm90_1d2d/1d1d model
// embedded here (MMA-Sim fused dot-add, numerics.md §8.1-8.2b). Then reruns every CUDA case (20x by default)
// and checks that the bits never change, and probes the error paths of the ABI.
//
// The quantizers (go_quantize: DeepGEMM's casts, MX, NVFP4) are compared with the host run of the backend's own
// quantizer code (quantize_group.cuh), on data with all-zero groups, ±Inf, NaN and the E4M3 overflow band.
//
// Before the cases run, the fast FP8 kernels their calls will use are compiled in parallel (prepare_fast).
//
// usage: check CUDA_SO [CPU_SO|-] [--small] [--reruns N] [--seed S] [--bench]
// exit 0: every compared element equal, every rerun identical, every probe as expected; 1 otherwise; 2 setup error.
#include <dlfcn.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "../../kernels/gemm_oracle.h"
#include "parallel_for.h"
// The quantizers' model: the CUDA backend's own host-and-device code run on the host (checked against the TypeScript
// reference by tests/kernels/cuda_quant_math_test.ts and tests/ffi/quant_ops_test.ts), and its argument rules.
#include "../../kernels/cuda/quantize_group.cuh"
#include "../../kernels/cuda/quantize_plan.cu"

// ---- backend loading -------------------------------------------------------------------------------------------

struct Api {
  std::string name;
  void* h = nullptr;
  int32_t (*abi)();
  const char* (*last_error)();
  int32_t (*info)(char*, uint64_t, uint64_t*);
  int32_t (*device_count)(int32_t*);
  int32_t (*set_device)(int32_t);
  int32_t (*alloc)(uint64_t, void**);
  int32_t (*free_)(void*);
  int32_t (*copy_in)(void*, const void*, uint64_t);
  int32_t (*copy_out)(void*, const void*, uint64_t);
  int32_t (*sync)();
  decltype(&go_fp8_gemm) fp8_gemm;
  decltype(&go_m_grouped_fp8_gemm_contiguous) mg_fp8;
  decltype(&go_m_grouped_fp8_gemm_masked) masked_fp8;
  decltype(&go_k_grouped_fp8_gemm) kg_fp8;
  decltype(&go_bf16_gemm) bf16_gemm;
  decltype(&go_m_grouped_bf16_gemm_contiguous) mg_bf16;
  decltype(&go_m_grouped_bf16_gemm_masked) masked_bf16;
  decltype(&go_k_grouped_bf16_gemm) kg_bf16;
  decltype(&go_fp8_gemm_skip_head_mid) skip_head;
  decltype(&go_tf32_hc_prenorm_gemm) hc;
  decltype(&go_fp8_mqa_logits) mqa;
  decltype(&go_fp8_paged_mqa_logits) paged;
};

template <typename F>
bool sym(void* h, const char* n, F& f) {
  f = reinterpret_cast<F>(dlsym(h, n));
  if (!f) std::fprintf(stderr, "missing symbol %s\n", n);
  return f != nullptr;
}

bool load(Api& a, const char* path, const char* name) {
  a.name = name;
  a.h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!a.h) {
    std::fprintf(stderr, "dlopen %s: %s\n", path, dlerror());
    return false;
  }
  bool ok = sym(a.h, "go_abi_version", a.abi) && sym(a.h, "go_last_error", a.last_error) &&
            sym(a.h, "go_backend_info", a.info) && sym(a.h, "go_device_count", a.device_count) &&
            sym(a.h, "go_set_device", a.set_device) && sym(a.h, "go_alloc", a.alloc) && sym(a.h, "go_free", a.free_) &&
            sym(a.h, "go_copy_in", a.copy_in) && sym(a.h, "go_copy_out", a.copy_out) &&
            sym(a.h, "go_synchronize", a.sync) && sym(a.h, "go_fp8_gemm", a.fp8_gemm) &&
            sym(a.h, "go_m_grouped_fp8_gemm_contiguous", a.mg_fp8) &&
            sym(a.h, "go_m_grouped_fp8_gemm_masked", a.masked_fp8) && sym(a.h, "go_k_grouped_fp8_gemm", a.kg_fp8) &&
            sym(a.h, "go_bf16_gemm", a.bf16_gemm) && sym(a.h, "go_m_grouped_bf16_gemm_contiguous", a.mg_bf16) &&
            sym(a.h, "go_m_grouped_bf16_gemm_masked", a.masked_bf16) &&
            sym(a.h, "go_k_grouped_bf16_gemm", a.kg_bf16) && sym(a.h, "go_fp8_gemm_skip_head_mid", a.skip_head) &&
            sym(a.h, "go_tf32_hc_prenorm_gemm", a.hc) && sym(a.h, "go_fp8_mqa_logits", a.mqa) &&
            sym(a.h, "go_fp8_paged_mqa_logits", a.paged);
  if (ok && a.abi() != GO_ABI_VERSION) {
    std::fprintf(stderr, "%s: ABI %d, driver built for %d\n", path, a.abi(), GO_ABI_VERSION);
    ok = false;
  }
  return ok;
}

// ---- host tensors -----------------------------------------------------------------------------------------------

int esize(int dt) {
  switch (dt) {
    case GO_F32: case GO_I32: return 4;
    case GO_BF16: case GO_F16: return 2;
    case GO_I64: return 8;
    default: return 1;
  }
}

struct HT {
  int dtype = GO_F32;
  std::vector<int64_t> shape, strides;  // element strides
  std::vector<uint8_t> bytes;           // storage covering the strided extent
  int64_t numel() const {
    int64_t n = 1;
    for (auto s : shape) n *= s;
    return n;
  }
  // byte offset of the logical element with row-major linear index li
  int64_t offset(int64_t li) const {
    int64_t off = 0;
    for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
      off += (li % shape[d]) * strides[d];
      li /= shape[d];
    }
    return off * esize(dtype);
  }
};

HT make(int dtype, std::vector<int64_t> shape, std::vector<int64_t> strides = {}) {
  HT t;
  t.dtype = dtype;
  t.shape = shape;
  if (strides.empty()) {
    strides.assign(shape.size(), 1);
    for (int d = static_cast<int>(shape.size()) - 2; d >= 0; --d) strides[d] = strides[d + 1] * shape[d + 1];
  }
  t.strides = strides;
  int64_t last = 0;
  bool empty = false;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 0) empty = true;
    else last += (shape[d] - 1) * strides[d];
  }
  t.bytes.assign(empty ? 16 : static_cast<size_t>((last + 1) * esize(dtype)), 0);
  return t;
}

// Transposed-storage view: logical [.., R, C] stored as [.., C, R].
HT make_t(int dtype, int64_t R, int64_t C) { return make(dtype, {R, C}, {1, R}); }

struct Rng {
  uint64_t s;
  explicit Rng(uint64_t seed) : s(seed * 0x9E3779B97F4A7C15ull + 1) {}
  uint32_t u32() {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return static_cast<uint32_t>(s >> 11);
  }
  double uni() { return (u32() >> 8) * (1.0 / 16777216.0); }
  int64_t below(int64_t n) { return static_cast<int64_t>(u32() % static_cast<uint32_t>(n)); }
};

template <typename T>
void put(HT& t, int64_t li, T v) { std::memcpy(t.bytes.data() + t.offset(li), &v, sizeof(T)); }
template <typename T>
T get(const HT& t, int64_t li) {
  T v;
  std::memcpy(&v, t.bytes.data() + t.offset(li), sizeof(T));
  return v;
}

uint16_t bf16_rne(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  if ((u & 0x7F800000u) == 0x7F800000u && (u & 0x7FFFFFu)) return 0x7FFF;
  u += 0x7FFFu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}
float bf16_f(uint16_t b) {
  uint32_t u = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// e4m3 codes: mode 0 = any finite code (full range, subnormals), 1 = moderate magnitudes (|x| in [2^-4, 2^4]).
void fill_e4m3(HT& t, Rng& r, int mode) {
  for (int64_t i = 0; i < t.numel(); ++i) {
    uint8_t c;
    if (mode == 0) {
      do c = static_cast<uint8_t>(r.u32()); while ((c & 0x7F) == 0x7F);
    } else {
      const uint8_t e = static_cast<uint8_t>(3 + r.below(9));  // biased exponents 3..11
      c = static_cast<uint8_t>((r.u32() & 0x80) | (e << 3) | (r.u32() & 7));
      if (r.below(16) == 0) c = static_cast<uint8_t>(r.u32() & 0x87);  // some zeros / subnormals
    }
    put<uint8_t>(t, i, c);
  }
}
void fill_scale(HT& t, Rng& r) {
  for (int64_t i = 0; i < t.numel(); ++i) {
    const float v = static_cast<float>(std::ldexp(1.0 + r.uni(), -static_cast<int>(r.below(10))));
    put<float>(t, i, v);
  }
}
void fill_bf16(HT& t, Rng& r, double scale = 1.0) {
  for (int64_t i = 0; i < t.numel(); ++i) {
    const double n = (r.uni() + r.uni() + r.uni() + r.uni() - 2.0) * 1.7 * scale;
    put<uint16_t>(t, i, bf16_rne(static_cast<float>(n)));
  }
}
void fill_f32(HT& t, Rng& r, double scale = 1.0) {
  for (int64_t i = 0; i < t.numel(); ++i) put<float>(t, i, static_cast<float>((r.uni() * 2 - 1) * scale));
}
void fill_i32(HT& t, const std::vector<int32_t>& v) {
  for (int64_t i = 0; i < t.numel(); ++i) put<int32_t>(t, i, v[static_cast<size_t>(i)]);
}

// ---- running a case on a backend --------------------------------------------------------------------------------

using Call = std::function<int32_t(Api&, std::vector<go_tensor>&)>;

struct Case {
  std::string op, name;
  std::vector<HT> ts;
  std::vector<int> outs;                                 // indices of output tensors
  Call call;
  std::function<bool(int, int64_t)> checked;             // (output index in ts, logical element) -> compare?
  std::function<void(const Case&, std::vector<HT>&)> model;  // optional embedded model: fills expected outputs
  bool optional_lib = false;  // GO_ERR_UNSUPPORTED is a SKIP row (a vendor library that may be absent: cuBLASLt)
  // The fast FP8 kernel's call classes this case's CUDA call may compile (mode 0 dense, 1 contiguous, 2 masked; m, n,
  // k, g as go_ext_fast_prepare takes them), compiled ahead of the run by prepare_fast.
  std::vector<std::array<int64_t, 5>> fast;
};

struct RunResult {
  int32_t status = GO_OK;
  std::string err;
  std::vector<HT> outs;
};

RunResult run_on(Api& api, const Case& c) {
  RunResult rr;
  std::vector<void*> bufs(c.ts.size(), nullptr);
  std::vector<go_tensor> gts(c.ts.size());
  for (size_t i = 0; i < c.ts.size(); ++i) {
    const HT& t = c.ts[i];
    int32_t s = api.alloc(t.bytes.size(), &bufs[i]);
    if (s == GO_OK) s = api.copy_in(bufs[i], t.bytes.data(), t.bytes.size());
    if (s != GO_OK) {
      rr.status = s;
      rr.err = std::string("setup: ") + api.last_error();
      for (void* b : bufs) api.free_(b);
      return rr;
    }
    go_tensor& g = gts[i];
    std::memset(&g, 0, sizeof g);
    g.data = bufs[i];
    g.dtype = t.dtype;
    g.ndim = static_cast<int32_t>(t.shape.size());
    for (size_t d = 0; d < t.shape.size(); ++d) {
      g.shape[d] = t.shape[d];
      g.strides[d] = t.strides[d];
    }
  }
  rr.status = c.call(api, gts);
  if (rr.status != GO_OK) rr.err = api.last_error();
  if (rr.status == GO_OK) rr.status = api.sync();
  for (int o : c.outs) {
    HT t = c.ts[static_cast<size_t>(o)];
    if (rr.status == GO_OK) {
      const int32_t s = api.copy_out(t.bytes.data(), bufs[static_cast<size_t>(o)], t.bytes.size());
      if (s != GO_OK) {
        rr.status = s;
        rr.err = api.last_error();
      }
    }
    rr.outs.push_back(t);
  }
  for (void* b : bufs) api.free_(b);
  return rr;
}

struct Cmp {
  int64_t elements = 0, mismatches = 0;
  std::string first;
  std::string rows;  // the rows (second-to-last index) holding mismatches, as ranges: "rows 100-127,129-191"
};

// "a-b,c,..." for sorted distinct values (at most 8 ranges, then "...").
std::string ranges(const std::vector<int64_t>& v) {
  std::string out;
  int n = 0;
  for (size_t i = 0; i < v.size();) {
    size_t j = i;
    while (j + 1 < v.size() && v[j + 1] == v[j] + 1) ++j;
    if (n++ == 8) return out + ",...";
    out += (out.empty() ? "" : ",") + std::to_string(v[i]) + (j > i ? "-" + std::to_string(v[j]) : "");
    i = j + 1;
  }
  return out;
}

Cmp compare(const Case& c, const std::vector<HT>& x, const std::vector<HT>& y) {
  Cmp r;
  std::vector<int64_t> bad_rows;
  for (size_t k = 0; k < c.outs.size(); ++k) {
    const HT& a = x[k];
    const HT& b = y[k];
    const int es = esize(a.dtype);
    const size_t nd = a.shape.size();
    const int64_t cols = nd >= 2 ? a.shape[nd - 1] : 1, nrows = nd >= 2 ? a.shape[nd - 2] : 1;
    for (int64_t li = 0; li < a.numel(); ++li) {
      if (c.checked && !c.checked(c.outs[k], li)) continue;
      ++r.elements;
      const int64_t off = a.offset(li);
      if (std::memcmp(a.bytes.data() + off, b.bytes.data() + off, static_cast<size_t>(es)) != 0) {
        if (k == 0 && nd >= 2) bad_rows.push_back(li / cols % nrows);
        if (r.mismatches++ == 0) {
          uint64_t va = 0, vb = 0;
          std::memcpy(&va, a.bytes.data() + off, static_cast<size_t>(es));
          std::memcpy(&vb, b.bytes.data() + off, static_cast<size_t>(es));
          std::string coord;
          int64_t rem = li;
          for (int d = static_cast<int>(a.shape.size()) - 1; d >= 0; --d) {
            coord = std::to_string(rem % a.shape[static_cast<size_t>(d)]) + (coord.empty() ? "" : ",") + coord;
            rem /= a.shape[static_cast<size_t>(d)];
          }
          char buf[200];
          std::snprintf(buf, sizeof buf, "out%zu[%s]: 0x%0*llx vs 0x%0*llx", k, coord.c_str(), es * 2,
                        static_cast<unsigned long long>(va), es * 2, static_cast<unsigned long long>(vb));
          r.first = buf;
        }
      }
    }
  }
  std::sort(bad_rows.begin(), bad_rows.end());
  bad_rows.erase(std::unique(bad_rows.begin(), bad_rows.end()), bad_rows.end());
  if (!bad_rows.empty()) r.rows = "rows " + ranges(bad_rows) + " of out0 ";
  return r;
}

// ---- embedded scalar model of SM90 FP8 (numerics.md §8.1-8.2b, deepgemm-ops.md §6.1-6.2) ------------------------

// e4m3 code -> (integer significand, exponent) with value = sig * 2^exp, and the MMA-Sim exponent e (clamped at -6).
struct E4 {
  int sig;   // signed, |sig| <= 15
  int exp;   // value = sig * 2^exp
  int e;     // floor(log2|x|) for normals, -6 for subnormals, -126 for zero
};
E4 dec_e4m3(uint8_t c) {
  const int s = (c & 0x80) ? -1 : 1, ef = (c >> 3) & 15, m = c & 7;
  if (ef == 0) return E4{s * m, -9, m == 0 ? -126 : -6};
  return E4{s * (8 + m), ef - 10, ef - 7};
}

// One wgmma k32 step: fused sum of 32 products + c (when use_c), alignment to the max exponent, each term
// truncated toward zero at 2^(E-13), exact sum, output RZ to 13 fraction bits.
float tc8_step(const uint8_t* a, const uint8_t* b, int n, float c, bool use_c) {
  int64_t psig[32];
  int pexp[32], pe[32];
  int E = -100000;
  for (int i = 0; i < n; ++i) {
    const E4 x = dec_e4m3(a[i]), y = dec_e4m3(b[i]);
    psig[i] = static_cast<int64_t>(x.sig) * y.sig;
    pexp[i] = x.exp + y.exp;
    pe[i] = (x.sig == 0 || y.sig == 0) ? -252 : x.e + y.e;
    if (pe[i] > E) E = pe[i];
  }
  int64_t csig = 0;
  int cexp = 0;
  if (use_c && c != 0.0f) {
    int ce;
    const float fr = std::frexp(c, &ce);  // c = fr * 2^ce, 0.5 <= |fr| < 1
    csig = static_cast<int64_t>(std::ldexp(fr, 24));
    cexp = ce - 24;
    const int e = ce - 1;
    if (e > E) E = e;
  }
  if (E == -100000 || (E < -200 && csig == 0)) return 0.0f;
  const int unit = E - 13;
  int64_t sum = 0;
  auto add = [&](int64_t sig, int exp) {
    const int sh = exp - unit;
    const int64_t mag = sig < 0 ? -sig : sig;
    int64_t t;
    if (sh >= 0) t = mag << sh;
    else t = sh <= -62 ? 0 : (mag >> (-sh));
    sum += sig < 0 ? -t : t;
  };
  for (int i = 0; i < n; ++i)
    if (psig[i] != 0) add(psig[i], pexp[i]);
  if (csig != 0) add(csig, cexp);
  if (sum == 0) return 0.0f;
  const bool neg = sum < 0;
  uint64_t mag = static_cast<uint64_t>(neg ? -sum : sum);
  int bits = 64 - __builtin_clzll(mag);
  int ex = unit;
  if (bits > 14) {  // RZ to 14 significant bits
    mag >>= (bits - 14);
    ex += bits - 14;
  }
  const float v = static_cast<float>(std::ldexp(static_cast<double>(mag), ex));
  return neg ? -v : v;
}

float load_sf(const HT& t, int64_t li) {
  if (t.dtype == GO_UE8M0) {
    const uint8_t code = get<uint8_t>(t, li);
    uint32_t u = code == 0 ? 0x00400000u : (code == 0xFF ? 0x7FC00000u : static_cast<uint32_t>(code) << 23);
    float f;
    std::memcpy(&f, &u, 4);
    return f;
  }
  return get<float>(t, li);
}

// Expected D of an fp8_gemm case: ts = {a, sfa, b, sfb, c, d} (2-D logical views), gran_b_mn given.
void model_fp8_gemm(const Case& c, std::vector<HT>& out, int gran_b) {
  const HT &A = c.ts[0], &SA = c.ts[1], &B = c.ts[2], &SB = c.ts[3], &C = c.ts[4];
  HT& D = out[0];
  const bool bt = A.shape.size() == 3;
  const int64_t Z = bt ? A.shape[0] : 1, M = A.shape[bt], K = A.shape[bt + 1], N = B.shape[bt], KB = (K + 127) / 128;
  const int64_t SBR = (N + gran_b - 1) / gran_b;
  const bool hasC = C.numel() > 0 && C.shape.size() == A.shape.size() && C.shape[bt] == M;
  std::vector<uint8_t> ar(static_cast<size_t>(KB * 128)), br(static_cast<size_t>(KB * 128));
  for (int64_t z = 0; z < Z; ++z)
  for (int64_t m = 0; m < M; ++m) {
    std::fill(ar.begin(), ar.end(), 0);
    for (int64_t k = 0; k < K; ++k) ar[static_cast<size_t>(k)] = get<uint8_t>(A, (z * M + m) * K + k);
    for (int64_t n = 0; n < N; ++n) {
      std::fill(br.begin(), br.end(), 0);
      for (int64_t k = 0; k < K; ++k) br[static_cast<size_t>(k)] = get<uint8_t>(B, (z * N + n) * K + k);
      float F = 0.0f;
      for (int64_t kb = 0; kb < KB; ++kb) {
        float P = 0.0f;
        for (int j = 0; j < 4; ++j) P = tc8_step(&ar[static_cast<size_t>(kb * 128 + j * 32)], &br[static_cast<size_t>(kb * 128 + j * 32)], 32, P, j > 0);
        const float s = load_sf(SA, (z * M + m) * KB + kb) * load_sf(SB, (z * SBR + n / gran_b) * KB + kb);
        F = std::fmaf(s, P, F);
      }
      const int64_t li = (z * M + m) * N + n;
      if (D.dtype == GO_BF16) {
        const float v = hasC ? (K == 0 ? bf16_f(get<uint16_t>(C, li)) : bf16_f(get<uint16_t>(C, li)) + F) : F;
        put<uint16_t>(D, li, K == 0 && hasC ? get<uint16_t>(C, li) : bf16_rne(v));
      } else {
        put<float>(D, li, hasC ? (K == 0 ? get<float>(C, li) : get<float>(C, li) + F) : F);
      }
    }
  }
}

// fp32-bit operands (bf16 and tf32 inputs are exact fp32 values): v = sig * 2^exp, MMA-Sim exponent e.
struct F32d {
  int64_t sig;
  int exp, e;
};
F32d dec_f32(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  const int64_t s = (u >> 31) ? -1 : 1;
  const int ef = static_cast<int>((u >> 23) & 255);
  const int64_t m = u & 0x7FFFFF;
  if (ef == 0) return F32d{s * m, -149, -126};
  return F32d{s * (m | 0x800000), ef - 150, ef - 127};
}

// One BF16/TF32 wgmma step (numerics.md §8.1 Hopper rows, §8.2b): n products + c, aligned to the largest exponent,
// each term truncated toward zero at 2^(E-25), exact sum, fp32 output RZ (24 significant bits).
float tc_step_f(const float* a, const float* b, int n, float c, int nbits) {
  int64_t sig[17];
  int exp[17], cnt = 0;
  int E = -100000;
  for (int i = 0; i < n; ++i) {
    const F32d x = dec_f32(a[i]), y = dec_f32(b[i]);
    if (x.sig == 0 || y.sig == 0) continue;
    sig[cnt] = x.sig * y.sig;
    exp[cnt] = x.exp + y.exp;
    E = std::max(E, x.e + y.e);
    ++cnt;
  }
  if (c != 0.0f) {
    const F32d z = dec_f32(c);
    sig[cnt] = z.sig;
    exp[cnt] = z.exp;
    E = std::max(E, z.e);
    ++cnt;
  }
  if (cnt == 0) return 0.0f;
  const int unit = E - nbits;
  int64_t sum = 0;
  for (int i = 0; i < cnt; ++i) {
    const int sh = exp[i] - unit;
    const int64_t mag = sig[i] < 0 ? -sig[i] : sig[i];
    const int64_t t = sh >= 0 ? (mag << sh) : (sh <= -62 ? 0 : (mag >> (-sh)));
    sum += sig[i] < 0 ? -t : t;
  }
  if (sum == 0) return 0.0f;
  const bool neg = sum < 0;
  uint64_t mag = static_cast<uint64_t>(neg ? -sum : sum);
  const int bits = 64 - __builtin_clzll(mag);
  int ex = unit;
  if (bits > 24) {
    mag >>= (bits - 24);
    ex += bits - 24;
  }
  const float v = static_cast<float>(std::ldexp(static_cast<double>(mag), ex));
  return neg ? -v : v;
}

float f32_of_bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// BF16 GEMM model (GO_MODEL_BF16): chain of k16 steps over all of K from 0; epilogue per deepgemm-ops.md §6.4.
// ts: a [(Bt,) M, K], b [(Bt,) N, K], c, d as in bf16_case; k-concatenation for einsum is done by the caller.
void model_bf16_gemm(const HT& A, const HT& Bm, const HT* C, HT& D) {
  const bool batched = A.shape.size() == 3;
  const int64_t Bt = batched ? A.shape[0] : 1, M = A.shape[batched], K = A.shape[batched + 1], N = Bm.shape[batched];
  std::vector<float> ar(static_cast<size_t>((K + 15) / 16 * 16)), br(ar.size());
  for (int64_t z = 0; z < Bt; ++z)
    for (int64_t m = 0; m < M; ++m) {
      std::fill(ar.begin(), ar.end(), 0.0f);
      for (int64_t k = 0; k < K; ++k) ar[static_cast<size_t>(k)] = bf16_f(get<uint16_t>(A, (z * M + m) * K + k));
      for (int64_t n = 0; n < N; ++n) {
        std::fill(br.begin(), br.end(), 0.0f);
        for (int64_t k = 0; k < K; ++k) br[static_cast<size_t>(k)] = bf16_f(get<uint16_t>(Bm, (z * N + n) * K + k));
        float F = 0.0f;
        for (int64_t k0 = 0; k0 < K; k0 += 16) F = tc_step_f(&ar[static_cast<size_t>(k0)], &br[static_cast<size_t>(k0)], 16, F, 25);
        const int64_t li = (z * M + m) * N + n;
        if (D.dtype == GO_F32) {
          put<float>(D, li, C ? (K == 0 ? get<float>(*C, li) : get<float>(*C, li) + F) : F);
        } else if (!C) {
          put<uint16_t>(D, li, bf16_rne(F));
        } else {
          const uint16_t cb = get<uint16_t>(*C, li);
          put<uint16_t>(D, li, K == 0 ? cb : bf16_rne(bf16_f(cb) + bf16_f(bf16_rne(F))));
        }
      }
    }
}

uint32_t tf32_bits(uint32_t u, int mode) {
  if ((u & 0x7F800000u) == 0x7F800000u) return u;
  if (mode == 1) u += 0xFFFu + ((u >> 13) & 1u);
  return u & 0xFFFFE000u;
}

// tf32_hc_prenorm_gemm model (GO_MODEL_TF32 + deepgemm-ops.md §7 SM90 square-sum order).
void model_hc(const HT& A, const HT& Bm, HT& D, HT& SQ, int splits, int mode) {
  const int64_t M = A.shape[0], K = A.shape[1], N = Bm.shape[0], KB = K / 64, q = KB / splits, rem = KB % splits;
  std::vector<float> ar(static_cast<size_t>(K)), br(static_cast<size_t>(K));
  for (int s = 0; s < splits; ++s) {
    const int64_t b0 = s * q + std::min<int64_t>(s, rem), bc = q + (s < rem ? 1 : 0);
    for (int64_t m = 0; m < M; ++m) {
      for (int64_t k = 0; k < K; ++k) ar[static_cast<size_t>(k)] = bf16_f(get<uint16_t>(A, m * K + k));
      for (int64_t n = 0; n < N; ++n) {
        for (int64_t k = 0; k < K; ++k) {
          const float f = get<float>(Bm, n * K + k);
          uint32_t u;
          std::memcpy(&u, &f, 4);
          br[static_cast<size_t>(k)] = f32_of_bits(tf32_bits(u, mode));
        }
        float F = 0.0f;
        for (int64_t k0 = b0 * 64; k0 < (b0 + bc) * 64; k0 += 8)
          F = tc_step_f(&ar[static_cast<size_t>(k0)], &br[static_cast<size_t>(k0)], 8, F, 25);
        put<float>(D, (s * M + m) * N + n, F);
      }
      float v[4] = {0, 0, 0, 0};
      for (int64_t kb = b0; kb < b0 + bc; ++kb)
        for (int i = 0; i < 8; ++i)
          for (int qq = 0; qq < 4; ++qq) {
            const float x = ar[static_cast<size_t>(kb * 64 + 8 * i + qq)], y = ar[static_cast<size_t>(kb * 64 + 8 * i + qq + 4)];
            v[qq] = v[qq] + (x * x + y * y);
          }
      put<float>(SQ, s * M + m, (v[0] + v[2]) + (v[1] + v[3]));
    }
  }
}

// SM90 MQA head reduction of scores sc[h] for one (query, key): deepgemm-ops.md §8.1 with the first two heads of a
// chain as fma(relu(s_h0), w_h0, fl32(relu(s_h0+8)·w_h0+8)) (reference/indexer/head_reduction.ts "sm90").
float mqa_reduce(const float* sc, const float* w, int H, float sf) {
  auto relu = [](float x) { return x > 0.0f ? x : 0.0f; };
  float P[4];
  for (int q = 0; q < 4; ++q) {
    float S[2];
    for (int e = 0; e < 2; ++e) {
      const int h0 = 2 * q + e, groups = H / 8;
      float acc;
      int t;
      if (groups >= 2) {
        acc = std::fmaf(relu(sc[h0]), w[h0], relu(sc[h0 + 8]) * w[h0 + 8]);
        t = 2;
      } else {
        acc = relu(sc[h0]) * w[h0];
        t = 1;
      }
      for (; t < groups; ++t) acc = std::fmaf(relu(sc[h0 + 8 * t]), w[h0 + 8 * t], acc);
      S[e] = acc;
    }
    P[q] = (S[0] + S[1]) * sf;
  }
  return (P[0] + P[1]) + (P[2] + P[3]);
}

// FP8 score chain over head_dim: D/32 k32 steps, the first without c.
float mqa_score(const uint8_t* q, const uint8_t* k, int D) {
  float s = 0.0f;
  for (int j = 0; j < D / 32; ++j) s = tc8_step(q + 32 * j, k + 32 * j, 32, s, j > 0);
  return s;
}

// ---- case builders ----------------------------------------------------------------------------------------------

int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// fp8_gemm: view 'nt' | 'nn' | 'tn' | 'tt'; gran_b 128 (1D2D) or 1 (1D1D); out bf16/f32; with_c.
Case fp8_gemm_case(Rng& r, int64_t M, int64_t N, int64_t K, const char* view, int gran_b, int out_dt, bool with_c,
                   bool c_is_d, int fill_mode) {
  Case c;
  c.op = "fp8_gemm";
  char nm[160];
  std::snprintf(nm, sizeof nm, "%s %s M%lld N%lld K%lld %s%s%s", view, gran_b == 1 ? "1d1d" : "1d2d", (long long)M,
                (long long)N, (long long)K, out_dt == GO_BF16 ? "bf16" : "f32", with_c ? (c_is_d ? "+C=D" : "+C") : "",
                fill_mode == 0 ? " fullrange" : "");
  c.name = nm;
  if (K > 0 && !with_c && out_dt == GO_BF16 && gran_b == 128 && !std::strcmp(view, "nt")) c.fast.push_back({0, M, N, K, 1});
  const bool at = view[0] == 't', bt = view[1] == 'n';  // A stored [K, M]; B stored [K, N]
  HT a = at ? make_t(GO_E4M3, M, K) : make(GO_E4M3, {M, K});
  HT b = bt ? make_t(GO_E4M3, N, K) : make(GO_E4M3, {N, K});
  fill_e4m3(a, r, fill_mode);
  fill_e4m3(b, r, fill_mode);
  HT sfa = make(GO_F32, {M, cdiv(K, 128)}, {1, M});  // MN-major like DeepGEMM's TMA-aligned SFA
  HT sfb = make(GO_F32, {cdiv(N, gran_b), cdiv(K, 128)});
  fill_scale(sfa, r);
  fill_scale(sfb, r);
  HT cc = make(out_dt, {M, N});
  if (out_dt == GO_BF16) fill_bf16(cc, r, 4.0);
  else fill_f32(cc, r, 8.0);
  HT d = make(out_dt, {M, N});
  c.ts = {a, sfa, b, sfb, with_c ? cc : make(out_dt, {0}), d};
  if (with_c && c_is_d) c.ts[5] = cc;
  c.outs = {5};
  c.call = [gran_b, with_c, c_is_d](Api& api, std::vector<go_tensor>& g) {
    return api.fp8_gemm(&g[0], &g[1], &g[2], &g[3], with_c ? (c_is_d ? &g[5] : &g[4]) : nullptr, &g[5], 1, 128, gran_b, 128,
                        gran_b == 1 ? GO_MODEL_SM90_1D1D : GO_MODEL_SM90_1D2D);
  };
  c.model = [gran_b, with_c, c_is_d](const Case& cs, std::vector<HT>& out) {
    Case tmp = cs;
    if (with_c && c_is_d) tmp.ts[4] = cs.ts[5];
    model_fp8_gemm(tmp, out, gran_b);
  };
  return c;
}

// Builds per-group row counts into a classic layout (rows aligned to 128, -1 padding) or psum ends.
std::vector<int32_t> grouped_rows(const std::vector<int64_t>& ms, bool psum, int64_t& M) {
  std::vector<int32_t> gl;
  int64_t row = 0;
  std::vector<int32_t> ends;
  for (size_t g = 0; g < ms.size(); ++g) {
    const int64_t start = cdiv(row, 128) * 128;
    if (!psum) {
      for (int64_t i = row; i < start; ++i) gl.push_back(-1);
      for (int64_t i = 0; i < ms[g]; ++i) gl.push_back(static_cast<int32_t>(g));
    }
    row = start + ms[g];
    ends.push_back(static_cast<int32_t>(row));
  }
  const int64_t total = cdiv(row, 128) * 128;
  if (!psum) {
    for (int64_t i = row; i < total; ++i) gl.push_back(-1);
    M = total;
    return gl;
  }
  M = row + 37;  // trailing rows in no group (not written)
  return ends;
}

Case mgrouped_case(Rng& r, bool fp8, bool psum, std::vector<int64_t> ms, int64_t N, int64_t K, int psum_flags = 1) {
  Case c;
  c.op = fp8 ? "m_grouped_fp8_gemm_contiguous" : "m_grouped_bf16_gemm_contiguous";
  const int64_t G = static_cast<int64_t>(ms.size());
  int64_t M = 0;
  std::vector<int32_t> gl = grouped_rows(ms, psum, M);
  std::string sizes;
  for (auto m : ms) sizes += (sizes.empty() ? "" : ",") + std::to_string(m);
  c.name = std::string(psum ? (psum_flags == 3 ? "psum+zero_pad" : "psum") : "classic") + " G" + std::to_string(G) + " m=[" + sizes + "] N" +
           std::to_string(N) + " K" + std::to_string(K);
  HT a = make(fp8 ? GO_E4M3 : GO_BF16, {M, K});
  HT b = make(fp8 ? GO_E4M3 : GO_BF16, {G, N, K});
  if (fp8 && M > 0) c.fast.push_back({1, M, N, K, G});  // psum layouts run the contiguous kernels too
  if (fp8) {
    fill_e4m3(a, r, 1);
    fill_e4m3(b, r, 1);
  } else {
    fill_bf16(a, r);
    fill_bf16(b, r);
  }
  // Padding rows: classic layout zero them (as DeepGEMM's tests); psum gap rows stay random (never read).
  std::vector<int> rowgroup(static_cast<size_t>(M), -2);
  if (!psum) {
    for (int64_t i = 0; i < M; ++i) rowgroup[static_cast<size_t>(i)] = gl[static_cast<size_t>(i)];
    for (int64_t i = 0; i < M; ++i)
      if (gl[static_cast<size_t>(i)] < 0)
        for (int64_t k = 0; k < K; ++k) {
          if (fp8) put<uint8_t>(a, i * K + k, 0);
          else put<uint16_t>(a, i * K + k, 0);
        }
  } else {
    int64_t prev = 0;
    for (int64_t g = 0; g < G; ++g) {
      for (int64_t i = cdiv(prev, 128) * 128; i < gl[static_cast<size_t>(g)]; ++i) rowgroup[static_cast<size_t>(i)] = static_cast<int>(g);
      prev = gl[static_cast<size_t>(g)];
    }
  }
  HT sfa = make(GO_F32, {M, cdiv(K, 128)}, {1, M});
  HT sfb = make(GO_F32, {G, cdiv(N, 128), cdiv(K, 128)});
  fill_scale(sfa, r);
  fill_scale(sfb, r);
  HT d = make(GO_BF16, {M, N});
  HT glt = make(GO_I32, {static_cast<int64_t>(gl.size())});
  fill_i32(glt, gl);
  if (fp8) {
    c.ts = {a, sfa, b, sfb, d, glt};
    c.outs = {4};
    c.call = [psum, psum_flags](Api& api, std::vector<go_tensor>& g) {
      return api.mg_fp8(&g[0], &g[1], &g[2], &g[3], &g[4], &g[5], 1, 128, 128, 128, psum ? psum_flags : 0, 128, GO_MODEL_SM90_1D2D);
    };
  } else {
    c.ts = {a, b, d, glt};
    c.outs = {2};
    c.call = [psum, psum_flags](Api& api, std::vector<go_tensor>& g) {
      return api.mg_bf16(&g[0], &g[1], &g[2], &g[3], psum ? psum_flags : 0, 128, GO_MODEL_BF16);
    };
  }
  (void)rowgroup;  // every element is compared: gemm_oracle.h defines which rows are written (the rest stay 0)
  return c;
}

// sfa_mn: SFA MN-major within each group ([G, Mmax, kb] with strides {Mmax * kb, 1, Mmax}), the layout the fast kernel
// loads by TMA; otherwise row-major (per-thread copies).
Case masked_case(Rng& r, bool fp8, std::vector<int32_t> mm, int64_t Mmax, int64_t N, int64_t K, bool sfa_mn = false) {
  Case c;
  c.op = fp8 ? "m_grouped_fp8_gemm_masked" : "m_grouped_bf16_gemm_masked";
  const int64_t G = static_cast<int64_t>(mm.size());
  std::string s;
  for (auto m : mm) s += (s.empty() ? "" : ",") + std::to_string(m);
  c.name = "G" + std::to_string(G) + " Mmax" + std::to_string(Mmax) + " masked=[" + s + "] N" + std::to_string(N) +
           " K" + std::to_string(K) + (sfa_mn ? " sfa MN-major" : "");
  HT a = make(fp8 ? GO_E4M3 : GO_BF16, {G, Mmax, K});
  HT b = make(fp8 ? GO_E4M3 : GO_BF16, {G, N, K});
  if (fp8) c.fast.push_back({2, Mmax, N, K, G});
  if (fp8) {
    fill_e4m3(a, r, 1);
    fill_e4m3(b, r, 1);
  } else {
    fill_bf16(a, r);
    fill_bf16(b, r);
  }
  HT sfa = sfa_mn ? make(GO_F32, {G, Mmax, cdiv(K, 128)}, {Mmax * cdiv(K, 128), 1, Mmax})
                  : make(GO_F32, {G, Mmax, cdiv(K, 128)});
  HT sfb = make(GO_F32, {G, cdiv(N, 128), cdiv(K, 128)});
  fill_scale(sfa, r);
  fill_scale(sfb, r);
  HT d = make(GO_BF16, {G, Mmax, N});
  HT mmt = make(GO_I32, {G});
  fill_i32(mmt, mm);
  if (fp8) {
    c.ts = {a, sfa, b, sfb, d, mmt};
    c.outs = {4};
    c.call = [](Api& api, std::vector<go_tensor>& g) {
      return api.masked_fp8(&g[0], &g[1], &g[2], &g[3], &g[4], &g[5], 1, 128, 128, 128, GO_MODEL_SM90_1D2D);
    };
  } else {
    c.ts = {a, b, d, mmt};
    c.outs = {2};
    c.call = [](Api& api, std::vector<go_tensor>& g) { return api.masked_bf16(&g[0], &g[1], &g[2], &g[3], GO_MODEL_BF16); };
  }
  // Every element is compared: rows >= masked_m follow gemm_oracle.h (computed / 0 / unwritten, all well defined).
  return c;
}

Case kgrouped_fp8_case(Rng& r, std::vector<int32_t> ks, int64_t M, int64_t N, bool flat, bool with_c) {
  Case c;
  c.op = "k_grouped_fp8_gemm";
  const int64_t G = static_cast<int64_t>(ks.size());
  int64_t sk = 0, skb = 0;
  std::string s;
  for (auto k : ks) {
    sk += k;
    skb += cdiv(k, 128);
    s += (s.empty() ? "" : ",") + std::to_string(k);
  }
  c.name = std::string(flat ? "nt_flat" : "tn") + " ks=[" + s + "] M" + std::to_string(M) + " N" + std::to_string(N) +
           (with_c ? " +C" : "");
  HT a = flat ? make(GO_E4M3, {M * sk}) : make(GO_E4M3, {sk, M});
  HT b = flat ? make(GO_E4M3, {N * sk}) : make(GO_E4M3, {sk, N});
  fill_e4m3(a, r, 1);
  fill_e4m3(b, r, 1);
  HT sfa = flat ? make(GO_F32, {M, skb}) : make(GO_F32, {skb, M});
  HT sfb = flat ? make(GO_F32, {N, skb}) : make(GO_F32, {skb, N});
  fill_scale(sfa, r);
  fill_scale(sfb, r);
  HT cc = make(GO_F32, {G, M, N});
  fill_f32(cc, r, 16.0);
  HT d = make(GO_F32, {G, M, N});
  HT kst = make(GO_I32, {G});
  fill_i32(kst, ks);
  c.ts = {a, sfa, b, sfb, with_c ? cc : make(GO_F32, {0}), d, kst};
  c.outs = {5};
  c.call = [flat, with_c](Api& api, std::vector<go_tensor>& g) {
    return api.kg_fp8(&g[0], &g[1], &g[2], &g[3], with_c ? &g[4] : nullptr, &g[5], &g[6],
                      flat ? GO_K_GROUPED_SM90_NT_FLAT : GO_K_GROUPED_SM100_TN, 128, GO_MODEL_SM90_1D1D);
  };
  return c;
}

Case bf16_case(Rng& r, int64_t M, int64_t N, int64_t K, const char* view, int out_dt, bool with_c) {
  Case c;
  c.op = "bf16_gemm";
  char nm[128];
  std::snprintf(nm, sizeof nm, "%s M%lld N%lld K%lld %s%s", view, (long long)M, (long long)N, (long long)K,
                out_dt == GO_BF16 ? "bf16" : "f32", with_c ? "+C" : "");
  c.name = nm;
  const bool at = view[0] == 't', bt = view[1] == 'n';
  HT a = at ? make_t(GO_BF16, M, K) : make(GO_BF16, {M, K});
  HT b = bt ? make_t(GO_BF16, N, K) : make(GO_BF16, {N, K});
  fill_bf16(a, r);
  fill_bf16(b, r);
  HT cc = make(out_dt, {M, N});
  if (out_dt == GO_BF16) fill_bf16(cc, r, 8.0);
  else fill_f32(cc, r, 8.0);
  c.ts = {a, b, with_c ? cc : make(out_dt, {0}), make(out_dt, {M, N})};
  c.outs = {3};
  c.call = [with_c](Api& api, std::vector<go_tensor>& g) {
    return api.bf16_gemm(&g[0], &g[1], with_c ? &g[2] : nullptr, &g[3], GO_MODEL_BF16);
  };
  c.model = [with_c](const Case& cs, std::vector<HT>& out) {
    model_bf16_gemm(cs.ts[0], cs.ts[1], with_c ? &cs.ts[2] : nullptr, out[0]);
  };
  return c;
}

Case kgrouped_bf16_case(Rng& r, std::vector<int32_t> ks, int64_t M, int64_t N, bool with_c) {
  Case c;
  c.op = "k_grouped_bf16_gemm";
  const int64_t G = static_cast<int64_t>(ks.size());
  int64_t sk = 0;
  std::string s;
  for (auto k : ks) {
    sk += k;
    s += (s.empty() ? "" : ",") + std::to_string(k);
  }
  c.name = "tn ks=[" + s + "] M" + std::to_string(M) + " N" + std::to_string(N) + (with_c ? " +C" : "");
  HT a = make(GO_BF16, {sk, M}), b = make(GO_BF16, {sk, N});
  fill_bf16(a, r);
  fill_bf16(b, r);
  HT cc = make(GO_F32, {G, M, N});
  fill_f32(cc, r, 16.0);
  HT kst = make(GO_I32, {G});
  fill_i32(kst, ks);
  c.ts = {a, b, with_c ? cc : make(GO_F32, {0}), make(GO_F32, {G, M, N}), kst};
  c.outs = {3};
  c.call = [with_c](Api& api, std::vector<go_tensor>& g) {
    return api.kg_bf16(&g[0], &g[1], with_c ? &g[2] : nullptr, &g[3], &g[4], GO_MODEL_BF16);
  };
  return c;
}

Case skip_head_case(Rng& r, int64_t M, int64_t n, int64_t K, int L, int Mid, int R) {
  Case c;
  c.op = "fp8_gemm_skip_head_mid";
  c.name = "M" + std::to_string(M) + " n" + std::to_string(n) + " K" + std::to_string(K) + " splits(" +
           std::to_string(L) + "," + std::to_string(Mid) + "," + std::to_string(R) + ")";
  HT a = make(GO_E4M3, {M, K}), b = make(GO_E4M3, {n, K});
  fill_e4m3(a, r, 1);
  fill_e4m3(b, r, 1);
  HT sfa = make(GO_F32, {M, cdiv(K, 128)}, {1, M}), sfb = make(GO_F32, {cdiv(n, 128), cdiv(K, 128)});
  fill_scale(sfa, r);
  fill_scale(sfb, r);
  const int64_t nd = n + n / (L + R) * Mid;
  HT d = make(GO_BF16, {M, nd});
  for (int64_t i = 0; i < d.numel(); ++i) put<uint16_t>(d, i, 0x7E00);  // poison: mid columns must stay untouched
  c.ts = {a, sfa, b, sfb, d};
  c.outs = {4};
  c.call = [L, Mid, R](Api& api, std::vector<go_tensor>& g) {
    return api.skip_head(&g[0], &g[1], &g[2], &g[3], &g[4], 1, 128, 128, 128, L, Mid, R, GO_MODEL_SM90_1D2D);
  };
  return c;
}

Case hc_case(Rng& r, int64_t M, int64_t N, int64_t K, int splits, int rounding) {
  Case c;
  c.op = "tf32_hc_prenorm_gemm";
  c.name = "M" + std::to_string(M) + " N" + std::to_string(N) + " K" + std::to_string(K) + " splits" +
           std::to_string(splits) + (rounding ? " rne" : " trunc");
  HT a = make(GO_BF16, {M, K}), b = make(GO_F32, {N, K});
  fill_bf16(a, r);
  fill_f32(b, r, 0.1);
  c.ts = {a, b, splits > 1 ? make(GO_F32, {splits, M, N}) : make(GO_F32, {M, N}),
          splits > 1 ? make(GO_F32, {splits, M}) : make(GO_F32, {M})};
  c.outs = {2, 3};
  c.call = [splits, rounding](Api& api, std::vector<go_tensor>& g) {
    return api.hc(&g[0], &g[1], &g[2], &g[3], splits, rounding, GO_MODEL_TF32);
  };
  c.model = [splits, rounding](const Case& cs, std::vector<HT>& out) {
    model_hc(cs.ts[0], cs.ts[1], out[0], out[1], splits, rounding);
  };
  return c;
}

Case mqa_case(Rng& r, int64_t S, int64_t H, int64_t D, int64_t Skv, bool clean, int max_seqlen_k) {
  Case c;
  c.op = "fp8_mqa_logits";
  c.name = "S" + std::to_string(S) + " H" + std::to_string(H) + " D" + std::to_string(D) + " Skv" + std::to_string(Skv) +
           (clean ? " clean" : "") + (max_seqlen_k ? " compressed" + std::to_string(max_seqlen_k) : "");
  HT q = make(GO_E4M3, {S, H, D}), kv = make(GO_E4M3, {Skv, D});
  fill_e4m3(q, r, 1);
  fill_e4m3(kv, r, 1);
  HT sf = make(GO_F32, {Skv}), w = make(GO_F32, {S, H});
  fill_scale(sf, r);
  fill_f32(w, r, 1.0);
  std::vector<int32_t> ks(static_cast<size_t>(S)), ke(static_cast<size_t>(S));
  for (int64_t i = 0; i < S; ++i) {
    ks[static_cast<size_t>(i)] = static_cast<int32_t>(r.below(Skv / 2 + 1));
    int64_t span = r.below(Skv - ks[static_cast<size_t>(i)] + 1);
    if (max_seqlen_k && span > max_seqlen_k) span = max_seqlen_k;  // compressed rows hold ke - ks <= max_seqlen_k
    ke[static_cast<size_t>(i)] = static_cast<int32_t>(ks[static_cast<size_t>(i)] + span);
  }
  HT kst = make(GO_I32, {S}), ket = make(GO_I32, {S});
  fill_i32(kst, ks);
  fill_i32(ket, ke);
  const int64_t cols = max_seqlen_k ? max_seqlen_k : Skv;
  HT lg = make(GO_F32, {S, cols});
  c.ts = {q, kv, sf, w, kst, ket, lg};
  c.outs = {6};
  c.call = [clean, max_seqlen_k](Api& api, std::vector<go_tensor>& g) {
    return api.mqa(&g[0], &g[1], &g[2], &g[3], &g[4], &g[5], &g[6], clean ? 1 : 0, max_seqlen_k, GO_MODEL_SM90_MQA);
  };
  c.model = [ks, ke, cols, max_seqlen_k, clean, H, D, Skv](const Case& cs, std::vector<HT>& out) {
    const HT &Q = cs.ts[0], &KV = cs.ts[1], &SF = cs.ts[2], &W = cs.ts[3];
    std::vector<uint8_t> qh(static_cast<size_t>(H * D)), kr(static_cast<size_t>(D));
    std::vector<float> sc(static_cast<size_t>(H)), w(static_cast<size_t>(H));
    for (int64_t i = 0; i < static_cast<int64_t>(ks.size()); ++i) {
      for (int64_t x = 0; x < H * D; ++x) qh[static_cast<size_t>(x)] = get<uint8_t>(Q, i * H * D + x);
      for (int64_t h = 0; h < H; ++h) w[static_cast<size_t>(h)] = get<float>(W, i * H + h);
      for (int64_t j = 0; j < cols; ++j) {
        const int64_t pos = max_seqlen_k ? ks[static_cast<size_t>(i)] + j : j;
        const bool in = pos >= ks[static_cast<size_t>(i)] && pos < ke[static_cast<size_t>(i)] && pos < Skv;
        if (!in) {
          if (clean) put<float>(out[0], i * cols + j, -INFINITY);
          continue;
        }
        for (int64_t x = 0; x < D; ++x) kr[static_cast<size_t>(x)] = get<uint8_t>(KV, pos * D + x);
        for (int64_t h = 0; h < H; ++h) sc[static_cast<size_t>(h)] = mqa_score(&qh[static_cast<size_t>(h * D)], kr.data(), static_cast<int>(D));
        put<float>(out[0], i * cols + j, mqa_reduce(sc.data(), w.data(), static_cast<int>(H), get<float>(SF, pos)));
      }
    }
  };
  c.checked = [ks, ke, cols, max_seqlen_k, clean](int, int64_t li) {
    const int64_t i = li / cols, j = li % cols;
    if (max_seqlen_k) return j < ke[static_cast<size_t>(i)] - ks[static_cast<size_t>(i)];
    return clean || (j >= ks[static_cast<size_t>(i)] && j < ke[static_cast<size_t>(i)]);
  };
  return c;
}

Case paged_case(Rng& r, int64_t B, int64_t nn, int64_t H, int64_t D, int block_kv, int64_t max_ctx) {
  Case c;
  c.op = "fp8_paged_mqa_logits";
  c.name = "B" + std::to_string(B) + " next_n" + std::to_string(nn) + " H" + std::to_string(H) + " D" +
           std::to_string(D) + " block_kv" + std::to_string(block_kv) + " max_ctx" + std::to_string(max_ctx);
  const int64_t maxb = cdiv(max_ctx, block_kv), nblocks = B * maxb + 3;
  HT q = make(GO_E4M3, {B, nn, H, D});
  fill_e4m3(q, r, 1);
  HT kvc = make(GO_U8, {nblocks, block_kv, 1, D + 4});
  for (int64_t p = 0; p < nblocks; ++p) {
    for (int64_t i = 0; i < block_kv * D; ++i) {
      uint8_t code;
      do code = static_cast<uint8_t>(r.u32()); while ((code & 0x7F) == 0x7F || ((code >> 3) & 15) > 11);
      kvc.bytes[static_cast<size_t>(p * block_kv * (D + 4) + i)] = code;
    }
    for (int64_t s = 0; s < block_kv; ++s) {
      const float v = static_cast<float>(std::ldexp(1.0 + r.uni(), -static_cast<int>(r.below(6))));
      std::memcpy(&kvc.bytes[static_cast<size_t>(p * block_kv * (D + 4) + block_kv * D + s * 4)], &v, 4);
    }
  }
  HT w = make(GO_F32, {B * nn, H});
  fill_f32(w, r, 1.0);
  std::vector<int32_t> cl(static_cast<size_t>(B * nn)), bt(static_cast<size_t>(B * maxb));
  for (int64_t b = 0; b < B; ++b) {
    const int64_t L = 1 + r.below(max_ctx);
    for (int64_t j = 0; j < nn; ++j) cl[static_cast<size_t>(b * nn + j)] = static_cast<int32_t>(L - (nn - 1 - j));
    for (int64_t p = 0; p < maxb; ++p) bt[static_cast<size_t>(b * maxb + p)] = static_cast<int32_t>((b * 7 + p * 3) % nblocks);
  }
  for (auto& x : cl)
    if (x < 0) x = 0;
  HT clt = make(GO_I32, {B, nn}), btt = make(GO_I32, {B, maxb});
  fill_i32(clt, cl);
  fill_i32(btt, bt);
  HT lg = make(GO_F32, {B * nn, max_ctx});
  c.ts = {q, kvc, w, clt, btt, lg};
  c.outs = {5};
  c.call = [block_kv](Api& api, std::vector<go_tensor>& g) {
    return api.paged(&g[0], &g[1], &g[2], &g[3], &g[4], &g[5], block_kv, GO_MODEL_SM90_MQA);
  };
  c.model = [cl, bt, max_ctx, maxb, B, nn, H, D, block_kv](const Case& cs, std::vector<HT>& out) {
    const HT &Q = cs.ts[0], &KVC = cs.ts[1], &W = cs.ts[2];
    std::vector<float> sc(static_cast<size_t>(H));
    for (int64_t row = 0; row < B * nn; ++row) {
      const int64_t b = row / nn;
      for (int64_t pos = 0; pos < cl[static_cast<size_t>(row)]; ++pos) {
        const int64_t page = bt[static_cast<size_t>(b * maxb + pos / block_kv)], slot = pos % block_kv;
        const uint8_t* base = KVC.bytes.data() + page * block_kv * (D + 4);
        float sf;
        std::memcpy(&sf, base + block_kv * D + slot * 4, 4);
        for (int64_t h = 0; h < H; ++h) {
          const uint8_t* qrow = Q.bytes.data() + (row * H + h) * D;
          sc[static_cast<size_t>(h)] = mqa_score(qrow, base + slot * D, static_cast<int>(D));
        }
        std::vector<float> w(static_cast<size_t>(H));
        for (int64_t h = 0; h < H; ++h) w[static_cast<size_t>(h)] = get<float>(W, row * H + h);
        put<float>(out[0], row * max_ctx + pos, mqa_reduce(sc.data(), w.data(), static_cast<int>(H), sf));
      }
    }
  };
  c.checked = [cl, max_ctx](int, int64_t li) { return li % max_ctx < cl[static_cast<size_t>(li / max_ctx)]; };
  return c;
}

// einsum "bhr,hdr->bhd" (FP8: fp8_einsum; BF16: einsum) as a batched GEMM over h through strided 3-D views, and
// "bhd,hdr->bhr" (BF16). The CPU backend takes 2-D operands only, so these are checked against the embedded models.
Case einsum_case(Rng& r, bool fp8, const char* expr, int64_t Bsz, int64_t H, int64_t Dd, int64_t R) {
  Case c;
  c.op = fp8 ? "fp8_einsum" : "einsum";
  c.name = std::string(expr) + " b" + std::to_string(Bsz) + " h" + std::to_string(H) + " d" + std::to_string(Dd) +
           " r" + std::to_string(R);
  const int dt = fp8 ? GO_E4M3 : GO_BF16;
  const bool bhd = std::string(expr) == "bhr,hdr->bhd";
  const int64_t K = bhd ? R : Dd, N = bhd ? Dd : R;
  // A: x[b, h, k] viewed [H, Bsz, K]; B: y[h, d, r] viewed [H, N, K]; D: out[b, h, n] viewed [H, Bsz, N].
  HT a = make(dt, {H, Bsz, K}, {K, H * K, 1});
  HT b = bhd ? make(dt, {H, Dd, R}) : make(dt, {H, R, Dd}, {Dd * R, 1, R});
  HT d = make(GO_BF16, {H, Bsz, N}, {N, H * N, 1});
  if (fp8) {
    fill_e4m3(a, r, 1);
    fill_e4m3(b, r, 1);
    HT sfa = make(GO_F32, {H, Bsz, cdiv(K, 128)}, {cdiv(K, 128), H * cdiv(K, 128), 1});
    HT sfb = make(GO_F32, {H, cdiv(N, 128), cdiv(K, 128)});
    fill_scale(sfa, r);
    fill_scale(sfb, r);
    c.ts = {a, sfa, b, sfb, make(GO_BF16, {0}), d};
    c.outs = {5};
    c.call = [](Api& api, std::vector<go_tensor>& g) {
      return api.fp8_gemm(&g[0], &g[1], &g[2], &g[3], nullptr, &g[5], 1, 128, 128, 128, GO_MODEL_SM90_1D2D);
    };
    c.model = [](const Case& cs, std::vector<HT>& out) { model_fp8_gemm(cs, out, 128); };
  } else {
    fill_bf16(a, r);
    fill_bf16(b, r);
    c.ts = {a, b, d};
    c.outs = {2};
    c.call = [](Api& api, std::vector<go_tensor>& g) { return api.bf16_gemm(&g[0], &g[1], nullptr, &g[2], GO_MODEL_BF16); };
    c.model = [](const Case& cs, std::vector<HT>& out) { model_bf16_gemm(cs.ts[0], cs.ts[1], nullptr, out[0]); };
  }
  return c;
}

using EinsumBmk = int32_t (*)(const go_tensor*, const go_tensor*, const go_tensor*, const go_tensor*);
EinsumBmk g_einsum_bmk = nullptr;

// einsum "bmk,bnk->mn" (extension go_ext_einsum_bmk_bnk_mn): one chain over (b, k); model = BF16 GEMM over the
// concatenated K.
Case einsum_bmk_case(Rng& r, int64_t Bsz, int64_t M, int64_t N, int64_t K, bool f32_with_c) {
  Case c;
  c.op = "einsum";
  c.name = "bmk,bnk->mn b" + std::to_string(Bsz) + " m" + std::to_string(M) + " n" + std::to_string(N) + " k" +
           std::to_string(K) + (f32_with_c ? " f32 c=d" : " bf16");
  HT a = make(GO_BF16, {Bsz, M, K}), b = make(GO_BF16, {Bsz, N, K});
  fill_bf16(a, r);
  fill_bf16(b, r);
  HT d = make(f32_with_c ? GO_F32 : GO_BF16, {M, N});
  if (f32_with_c) fill_f32(d, r, 4.0);
  c.ts = {a, b, d};
  c.outs = {2};
  c.call = [f32_with_c](Api& api, std::vector<go_tensor>& g) -> int32_t {
    if (!g_einsum_bmk || api.name != "cuda") return GO_ERR_UNSUPPORTED;
    return g_einsum_bmk(&g[0], &g[1], f32_with_c ? &g[2] : nullptr, &g[2]);
  };
  c.model = [Bsz, M, N, K, f32_with_c](const Case& cs, std::vector<HT>& out) {
    HT a2 = make(GO_BF16, {M, Bsz * K}), b2 = make(GO_BF16, {N, Bsz * K});
    for (int64_t z = 0; z < Bsz; ++z)
      for (int64_t k = 0; k < K; ++k) {
        for (int64_t m = 0; m < M; ++m) put<uint16_t>(a2, m * Bsz * K + z * K + k, get<uint16_t>(cs.ts[0], (z * M + m) * K + k));
        for (int64_t n = 0; n < N; ++n) put<uint16_t>(b2, n * Bsz * K + z * K + k, get<uint16_t>(cs.ts[1], (z * N + n) * K + k));
      }
    model_bf16_gemm(a2, b2, f32_with_c ? &cs.ts[2] : nullptr, out[0]);
  };
  return c;
}

using MetaFn = int32_t (*)(const go_tensor*, int32_t, int32_t, const go_tensor*);
using CleanFn = int32_t (*)(const go_tensor*, const go_tensor*, const go_tensor*, int64_t, int32_t);
MetaFn g_meta = nullptr;
CleanFn g_clean = nullptr;

// get_paged_mqa_logits_metadata (SM90 partition, deepgemm-ops.md §8.3), extension entry.
Case metadata_case(std::vector<int32_t> cl, int64_t B, int64_t nn, int num_sms) {
  Case c;
  c.op = "paged_mqa_logits_metadata";
  c.name = "B" + std::to_string(B) + " next_n" + std::to_string(nn) + " sms" + std::to_string(num_sms);
  HT clt = make(GO_I32, {B, nn});
  fill_i32(clt, cl);
  c.ts = {clt, make(GO_I32, {num_sms + 1, 2})};
  c.outs = {1};
  c.call = [num_sms](Api& api, std::vector<go_tensor>& g) -> int32_t {
    if (!g_meta || api.name != "cuda") return GO_ERR_UNSUPPORTED;
    return g_meta(&g[0], 64, num_sms, &g[1]);
  };
  c.model = [cl, B, nn, num_sms](const Case&, std::vector<HT>& out) {
    const int64_t atoms = nn >= 2 ? (nn + 1) / 2 : nn;
    std::vector<int64_t> cb(static_cast<size_t>(B)), P(static_cast<size_t>(B));
    int64_t acc = 0;
    for (int64_t b = 0; b < B; ++b) {
      cb[static_cast<size_t>(b)] = (cl[static_cast<size_t>(b * nn + nn - 1)] + 255) / 256;
      acc += cb[static_cast<size_t>(b)];
      P[static_cast<size_t>(b)] = acc;
    }
    const int64_t total = acc * atoms, q = total / num_sms, rr = total % num_sms, pivot = num_sms - rr;
    for (int s = 0; s <= num_sms; ++s) {
      int64_t r0 = B * atoms, r1 = 0;
      if (s < num_sms) {
        const int64_t seg = s * q + std::max<int64_t>(0, s - pivot);
        int64_t b = 0;
        while (b < B && P[static_cast<size_t>(b)] * atoms <= seg) ++b;
        if (b < B) {
          const int64_t off = seg - (b ? P[static_cast<size_t>(b - 1)] : 0) * atoms, nb = cb[static_cast<size_t>(b)];
          r0 = nb ? b * atoms + off / nb : 0;
          r1 = nb ? off % nb : 0;
        }
      }
      put<int32_t>(out[0], 2 * s, static_cast<int32_t>(r0));
      put<int32_t>(out[0], 2 * s + 1, static_cast<int32_t>(r1));
    }
  };
  return c;
}

// clean_logits (deepgemm-ops.md §8.4), extension entry.
Case clean_case(Rng& r, int64_t rows, int64_t width, int64_t valid, int nn, bool with_ks) {
  Case c;
  c.op = "clean_logits";
  c.name = "rows" + std::to_string(rows) + " width" + std::to_string(width) + " valid" + std::to_string(valid) +
           " next_n" + std::to_string(nn) + (with_ks ? "" : " no-ks");
  const int64_t R = rows / nn;
  std::vector<int32_t> ks(static_cast<size_t>(R)), ke(static_cast<size_t>(R));
  for (int64_t i = 0; i < R; ++i) {
    ks[static_cast<size_t>(i)] = static_cast<int32_t>(r.below(valid / 2));
    ke[static_cast<size_t>(i)] = static_cast<int32_t>(ks[static_cast<size_t>(i)] + nn + r.below(valid));
  }
  HT kst = make(GO_I32, {R}), ket = make(GO_I32, {R}), lg = make(GO_F32, {rows, width});
  fill_i32(kst, ks);
  fill_i32(ket, ke);
  fill_f32(lg, r, 3.0);
  c.ts = {kst, ket, lg};
  c.outs = {2};
  c.call = [valid, nn, with_ks](Api& api, std::vector<go_tensor>& g) -> int32_t {
    if (!g_clean || api.name != "cuda") return GO_ERR_UNSUPPORTED;
    return g_clean(with_ks ? &g[0] : nullptr, &g[1], &g[2], valid, nn);
  };
  c.model = [ks, ke, rows, width, valid, nn, with_ks](const Case&, std::vector<HT>& out) {
    for (int64_t i = 0; i < rows; ++i) {
      const int64_t lo = with_ks ? ks[static_cast<size_t>(i / nn)] : 0;
      const int64_t hi = ke[static_cast<size_t>(i / nn)] - nn + (i % nn) + 1;
      for (int64_t j = 0; j < width; ++j)
        if (j >= valid || j < lo || j >= hi) put<float>(out[0], i * width + j, -INFINITY);
    }
  };
  return c;
}

// go_quantize (gemm_oracle.h): recipe `kind` on x [m, n] (bf16, or f32 stored transposed), with special values when
// `special`: an all-zero group, the E4M3 overflow band, ±Inf, and NaN where every output's bits stay defined (UE8M0
// or code scales; fp32 scales of a NaN group would carry the host's NaN payload). Model: quantize_host.
decltype(&go_quantize) g_quant = nullptr;

Case quant_case(Rng& r, int kind, int64_t m, int64_t n, int gran_k, int flags, int rule, int32_t model, bool f32_t,
                bool special) {
  Case c;
  static const char* names[] = {"per_token_cast_to_fp8", "per_channel_cast_to_fp8", "per_block_cast_to_fp8",
                                "per_token_cast_to_fp4", "mxfp8_e4m3", "mxfp8_e5m2", "mxfp4", "nvfp4_te",
                                "nvfp4_torchao"};
  c.op = names[kind];
  c.name = std::to_string(m) + "x" + std::to_string(n) + " g" + std::to_string(gran_k) + " fl" + std::to_string(flags) +
           " r" + std::to_string(rule) + (model == GO_MODEL_CPU ? " cpu" : " gpu") + (f32_t ? " f32T" : " bf16") +
           (special ? " specials" : "");
  const bool fp4 = go_quant::packs_fp4(kind), deepgemm = kind <= GO_PER_TOKEN_CAST_TO_FP4;
  const bool nvfp4 = kind >= GO_NVFP4_TE, packed = (flags & GO_QUANT_USE_PACKED_UE8M0) != 0;
  const go_quant::Problem pr = go_quant::make_problem(kind, m, n, gran_k, model != GO_MODEL_CPU,
                                                      (flags & GO_QUANT_USE_UE8M0) != 0, rule);
  HT x = f32_t ? make(GO_F32, {m, n}, {1, m}) : make(GO_BF16, {m, n});
  for (int64_t i = 0; i < m * n; ++i) {
    const int row = static_cast<int>(i / n);
    const float v = static_cast<float>(((r.uni() + r.uni() + r.uni() + r.uni()) - 2.0) * std::ldexp(1.7, (row % 9) - 4));
    if (f32_t) put<float>(x, i, v);
    else put<uint16_t>(x, i, bf16_rne(v));
  }
  if (special && m >= 4 && n >= 64) {
    auto set = [&](int64_t i, float v) {
      if (f32_t) put<float>(x, i, v);
      else put<uint16_t>(x, i, bf16_rne(v));
    };
    for (int64_t j = 0; j < 32; ++j) set(j, 0.0f);  // an all-zero group
    const float band[] = {448, 464, 464.5f, 479.9f, 480, -480, 0.0625f, 1.0625f, 3.5f, 5, 2.5f, 0.75f, 0.25f, -0.0f};
    for (int j = 0; j < 14; ++j) set(n + j, band[j]);
    set(2 * n + 3, INFINITY);
    set(2 * n + 40, -INFINITY);
    const bool nan_ok = (deepgemm && (flags & GO_QUANT_USE_UE8M0)) || (!deepgemm && kind != GO_NVFP4_TORCHAO);
    if (nan_ok) set(3 * n + 5, NAN);
  }
  HT q = fp4 ? make(GO_U8, {m, n / 2}) : make(kind == GO_MXFP8_E5M2 ? GO_E5M2 : GO_E4M3, {m, n});
  HT sf = packed ? make(GO_I32, {m, (pr.gc + 3) / 4})
                 : deepgemm ? make(GO_F32, {pr.gr, pr.gc}) : make(kind <= GO_MXFP4 ? GO_UE8M0 : GO_E4M3, {pr.gr, pr.gc});
  c.ts = {x, q, sf};
  c.outs = {1, 2};
  if (nvfp4) {
    c.ts.push_back(make(GO_F32, {1}));
    c.outs.push_back(3);
  }
  c.call = [kind, gran_k, flags, rule, model, nvfp4](Api& api, std::vector<go_tensor>& g) -> int32_t {
    if (!g_quant || api.name != "cuda") return GO_ERR_UNSUPPORTED;
    return g_quant(kind, &g[0], &g[1], &g[2], nvfp4 ? &g[3] : nullptr, gran_k, flags, rule, model);
  };
  c.model = [kind, gran_k, flags, rule, model, nvfp4](const Case& cs, std::vector<HT>& out) {
    auto desc = [](const HT& t) {
      go_tensor g{};
      g.data = const_cast<uint8_t*>(t.bytes.data());
      g.dtype = t.dtype;
      g.ndim = static_cast<int32_t>(t.shape.size());
      for (size_t d = 0; d < t.shape.size(); ++d) g.shape[d] = t.shape[d], g.strides[d] = t.strides[d];
      return g;
    };
    go_tensor gx = desc(cs.ts[0]), gq = desc(out[0]), gs = desc(out[1]), gg{};
    if (nvfp4) gg = desc(out[2]);
    go_quant::QuantParams p;
    char msg[256];
    if (go_quant::plan_quantize(kind, &gx, &gq, &gs, nvfp4 ? &gg : nullptr, gran_k, flags, rule, model, &p, msg,
                                sizeof msg) != GO_OK) {
      std::printf("quantizer model: %s\n", msg);
      return;
    }
    go_quant::quantize_host(p);
  };
  return c;
}

// cublaslt_gemm through cuBLASLt itself (go_cublaslt_gemm): no model here (tests/gpu/cublaslt_check.ts compares with
// the reference's `cublaslt` model at the split-K cuBLASLt reports); reruns check that its bits never change and the
// sanitizer run covers the packing kernels around it. a: e4m3 (or bf16), stored K-major or transposed.
decltype(&go_cublaslt_gemm) g_cublaslt = nullptr;

Case cublaslt_case(Rng& r, int64_t M, int64_t N, int64_t K, bool a_t, int in_dt, int d_dt, bool with_c, int split_k) {
  Case c;
  c.op = "cublaslt_gemm";
  c.name = std::string(a_t ? "tn " : "nt ") + std::to_string(M) + "x" + std::to_string(N) + "x" + std::to_string(K) +
           (in_dt == GO_BF16 ? " bf16" : " e4m3") + (d_dt == GO_F32 ? "->f32" : "->bf16") + (with_c ? " +C" : "") +
           " split" + std::to_string(split_k);
  HT a = a_t ? make_t(in_dt, M, K) : make(in_dt, {M, K});
  HT b = make(in_dt, {N, K});
  if (in_dt == GO_BF16) {
    fill_bf16(a, r);
    fill_bf16(b, r);
  } else {
    fill_e4m3(a, r, 1);
    fill_e4m3(b, r, 1);
  }
  HT d = make(d_dt, {M, N});
  c.ts = {a, b, d};
  if (with_c) {
    HT cc = make(d_dt, {M, N});
    if (d_dt == GO_F32) fill_f32(cc, r, 8.0);
    else fill_bf16(cc, r, 8.0);
    c.ts.push_back(cc);
  }
  c.outs = {2};
  c.optional_lib = true;
  c.call = [with_c, split_k](Api& api, std::vector<go_tensor>& g) -> int32_t {
    if (!g_cublaslt || api.name != "cuda") return GO_ERR_UNSUPPORTED;
    char algo[256];
    const int32_t st = g_cublaslt(&g[0], &g[1], with_c ? &g[3] : nullptr, &g[2], split_k, algo, sizeof algo, GO_MODEL_DEFAULT);
    if (st == GO_OK) std::printf("  cublaslt: %s\n", algo);
    return st;
  };
  return c;
}

// ---- main -------------------------------------------------------------------------------------------------------

uint64_t fnv(const std::vector<HT>& outs) {
  uint64_t h = 1469598103934665603ull;
  for (auto& t : outs)
    for (uint8_t b : t.bytes) h = (h ^ b) * 1099511628211ull;
  return h;
}

// Compiles (or finds) the fast FP8 kernels the cases' calls will use, from a pool of threads, when the backend exports
// go_ext_fast_prepare: with a fresh JIT cache (an ab library, or an override such as bm=128,bn=144 that every case
// compiles anew) the cases otherwise compiled one after the other, about 2-3.5 s each on the H200's host, and a forced
// configuration over the 88 cases ran past run.sh's 100 s. A class the backend refuses is reported and left to its case.
void prepare_fast(Api& api, const std::vector<Case>& cases) {
  using Prepare = int32_t (*)(int32_t, int64_t, int64_t, int64_t, int64_t);
  const auto prepare = reinterpret_cast<Prepare>(dlsym(api.h, "go_ext_fast_prepare"));
  std::set<std::array<int64_t, 5>> unique;
  for (const Case& c : cases) unique.insert(c.fast.begin(), c.fast.end());
  if (!prepare || unique.empty()) return;
  const std::vector<std::array<int64_t, 5>> classes(unique.begin(), unique.end());
  const ParallelRun run = parallel_for(classes.size(), [&](size_t i) -> std::string {
    const auto& f = classes[i];
    if (prepare(static_cast<int32_t>(f[0]), f[1], f[2], f[3], f[4]) == GO_OK) return "";
    return std::to_string(f[0]) + " " + std::to_string(f[1]) + "x" + std::to_string(f[2]) + "x" +
           std::to_string(f[3]) + " g" + std::to_string(f[4]) + ": " + api.last_error();
  });
  std::printf("prepare: %zu fast kernel classes on %zu threads in %.1f ms wall\n", classes.size(), run.threads, run.ms);
  for (const auto& e : run.errors) std::printf("  prepare (left to the case): mode %s\n", e.c_str());
}

int main(int argc, char** argv) {
  // Line-buffered even into a pipe or file: when a case crashes the process (or the tool around it, such as
  // compute-sanitizer), the lines of the cases before it are already written and the log says where it stopped.
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  if (argc < 2) {
    std::fprintf(stderr, "usage: check CUDA_SO [CPU_SO|-] [--small] [--reruns N] [--seed S]\n");
    return 2;
  }
  bool small = false, cpu_only = false;
  int reruns = 20;
  uint64_t seed = 20261129;
  for (int i = 3; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--small")) small = true;
    else if (!std::strcmp(argv[i], "--reruns") && i + 1 < argc) reruns = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--seed") && i + 1 < argc) seed = std::strtoull(argv[++i], nullptr, 10);
    else if (!std::strcmp(argv[i], "--cpu-only")) cpu_only = true;  // no GPU here: check the CPU backend vs the model
  }
  Api cuda, cpu;
  if (!load(cuda, argv[1], "cuda")) return 2;
  const bool have_cpu = argc > 2 && std::strcmp(argv[2], "-") != 0 && load(cpu, argv[2], "cpu");
  char info[4096];
  uint64_t need = 0;
  if (cuda.info(info, sizeof info, &need) == GO_OK) std::printf("cuda backend: %s\n", info);
  int32_t ndev = 0;
  const int32_t st = cuda.device_count(&ndev);
  if (st != GO_OK && cpu_only && have_cpu) {
    std::printf("cuda not available (%s): checking the CPU backend against the embedded model only\n", cuda.last_error());
    cuda = cpu;
  } else if (st != GO_OK) {
    std::printf("cuda: go_device_count -> status %d: %s\n", st, cuda.last_error());
    // Without a GPU every call must fail cleanly with GO_ERR_NOT_AVAILABLE.
    void* p = nullptr;
    const int32_t s2 = cuda.alloc(64, &p);
    const bool ok = st == GO_ERR_NOT_AVAILABLE && s2 == GO_ERR_NOT_AVAILABLE && std::strstr(cuda.last_error(), "CUDA not available");
    std::printf("no-GPU probe: %s (go_alloc -> %d: %s)\n", ok ? "PASS" : "FAIL", s2, cuda.last_error());
    return ok ? 0 : 1;
  }
  std::printf("cuda devices: %d; cpu backend: %s\n", ndev, have_cpu ? argv[2] : "(none)");
  g_einsum_bmk = reinterpret_cast<EinsumBmk>(dlsym(cuda.h, "go_ext_einsum_bmk_bnk_mn"));
  g_meta = reinterpret_cast<MetaFn>(dlsym(cuda.h, "go_ext_paged_mqa_logits_metadata"));
  g_clean = reinterpret_cast<CleanFn>(dlsym(cuda.h, "go_ext_clean_logits"));
  g_quant = reinterpret_cast<decltype(&go_quantize)>(dlsym(cuda.h, "go_quantize"));
  g_cublaslt = reinterpret_cast<decltype(&go_cublaslt_gemm)>(dlsym(cuda.h, "go_cublaslt_gemm"));

  Rng r(seed);
  std::vector<Case> cases;
  const int64_t s = small ? 1 : 2;  // size multiplier
  // fp8_gemm (1D2D bf16 out): DeepGEMM-checked shapes (numerics §8.2b), tails, K = 1152 (9 blocks), m = 1, 7.
  cases.push_back(fp8_gemm_case(r, 128, 512, 2048 / (3 - s), "nt", 128, GO_BF16, false, false, 1));
  cases.push_back(fp8_gemm_case(r, 257, 384, 1152, "nt", 128, GO_BF16, false, false, 1));
  cases.push_back(fp8_gemm_case(r, 1, 768, 512, "nt", 128, GO_BF16, false, false, 1));
  cases.push_back(fp8_gemm_case(r, 7, 256, 1152, "nt", 128, GO_BF16, false, false, 0));
  cases.push_back(fp8_gemm_case(r, 200, 136, 640, "nt", 128, GO_BF16, false, false, 0));
  cases.push_back(fp8_gemm_case(r, 65, 200, 300, "nt", 128, GO_BF16, false, false, 1));
  if (!small) cases.push_back(fp8_gemm_case(r, 64, 256, 7168, "nt", 128, GO_BF16, false, false, 1));
  if (!small) {
    // Split K under the heuristic (4 splits of 4 K blocks over 18 tiles of 128 x 64): since one-row-block GEMMs take
    // unsplit 16-wide tiles (tenth session), 257 x 384 x 1152 above was the only other one. Against the CPU backend.
    cases.push_back(fp8_gemm_case(r, 256, 576, 2048, "nt", 128, GO_BF16, false, false, 1));
    cases.back().model = nullptr;
  }
  if (!small) {
    // More tiles than SMs (the fast kernel's persistent loop runs several tiles per CTA); checked against the CPU
    // backend only (the scalar model would take minutes).
    cases.push_back(fp8_gemm_case(r, 1536, 2304, 512, "nt", 128, GO_BF16, false, false, 1));
    cases.back().model = nullptr;
    cases.push_back(masked_case(r, true, {384, 0, 129, 300, 1, 257}, 384, 512, 1024));
    cases.push_back(masked_case(r, true, {384, 0, 129, 300, 1, 257}, 384, 512, 1024, true));
  }
  cases.push_back(fp8_gemm_case(r, 96, 192, 384, "nn", 128, GO_BF16, false, false, 1));
  cases.push_back(fp8_gemm_case(r, 96, 192, 384, "tn", 128, GO_BF16, false, false, 1));
  cases.push_back(fp8_gemm_case(r, 96, 192, 384, "tt", 128, GO_BF16, false, false, 1));
  // FP32-with-C 1D1D, C separate and C aliasing D; k = 0.
  cases.push_back(fp8_gemm_case(r, 128, 256, 1152, "nt", 1, GO_F32, true, false, 1));
  cases.push_back(fp8_gemm_case(r, 33, 160, 384, "nt", 1, GO_F32, true, true, 0));
  cases.push_back(fp8_gemm_case(r, 33, 160, 0, "nt", 1, GO_F32, true, false, 1));
  // m-grouped contiguous (classic and psum), with an empty group and 1-row group.
  cases.push_back(mgrouped_case(r, true, false, {100, 0, 1, 257}, 256, 512));
  cases.push_back(mgrouped_case(r, true, true, {100, 0, 1, 257}, 256, 512));
  cases.push_back(mgrouped_case(r, true, true, {100, 0, 1, 257}, 256, 512, 3));
  // Groups that start on multiples of 256 rows: the fast kernel may run them with BLOCK_M 256 (bm=256 checks).
  cases.push_back(mgrouped_case(r, true, false, {200, 0, 256, 300}, 256, 512));
  cases.push_back(mgrouped_case(r, true, true, {200, 0, 256, 300}, 256, 512, 3));
  // masked: masked_m 0, 1, max and in between.
  cases.push_back(masked_case(r, true, {0, 1, 256, 100}, 256, 384, 1152));
  cases.push_back(masked_case(r, true, {37, 77, 200}, 200, 256, 256));
  // Every masked_m <= 64: under bm=64 (run.sh's check configurations) rows 64 .. 127 of each group are zero tiles.
  cases.push_back(masked_case(r, true, {20, 0, 64, 33}, 128, 384, 1024));
  cases.push_back(masked_case(r, true, {20, 0, 64, 33}, 128, 384, 1024, true));
  // k-grouped (SM90 flat and tn views), empty group, with and without C.
  cases.push_back(kgrouped_fp8_case(r, {128, 0, 384, 256}, 128, 256, true, true));
  cases.push_back(kgrouped_fp8_case(r, {256, 128, 0}, 64, 136, false, true));
  cases.push_back(kgrouped_fp8_case(r, {128, 256}, 72, 128, true, false));
  // skip-head-mid.
  cases.push_back(skip_head_case(r, 70, 512, 512, 128, 64, 128));
  // BF16 family.
  cases.push_back(bf16_case(r, 130, 200, 320, "nt", GO_BF16, false));
  cases.push_back(bf16_case(r, 64, 256, 1024 * s, "nt", GO_F32, false));
  cases.push_back(bf16_case(r, 77, 130, 192, "nn", GO_F32, true));
  cases.push_back(bf16_case(r, 77, 130, 192, "tn", GO_BF16, true));
  cases.push_back(bf16_case(r, 50, 64, 100, "tt", GO_BF16, false));
  cases.push_back(mgrouped_case(r, false, false, {100, 0, 1, 257}, 256, 256));
  cases.push_back(mgrouped_case(r, false, true, {100, 0, 1, 257}, 256, 256));
  cases.push_back(mgrouped_case(r, false, true, {30, 200}, 136, 128, 3));
  cases.push_back(masked_case(r, false, {0, 1, 256, 100}, 256, 384, 256));
  cases.push_back(kgrouped_bf16_case(r, {128, 0, 256}, 96, 160, true));
  // Einsum forms (batched strided views; bmk,bnk->mn through the extension entry).
  cases.push_back(einsum_case(r, true, "bhr,hdr->bhd", 37, 4, 256, 384));
  cases.push_back(einsum_case(r, false, "bhr,hdr->bhd", 37, 4, 136, 192));
  cases.push_back(einsum_case(r, false, "bhd,hdr->bhr", 20, 3, 128, 200));
  cases.push_back(einsum_bmk_case(r, 3, 128, 128, 128, false));
  cases.push_back(einsum_bmk_case(r, 2, 64, 192, 256, true));
  // HyperConnection prenorm.
  cases.push_back(hc_case(r, 137, 24, 1280, 1, 0));
  cases.push_back(hc_case(r, 13, 24, 1280, 16, 1));
  // MQA logits.
  cases.push_back(mqa_case(r, 17, 64, 128, 300, false, 0));
  cases.push_back(mqa_case(r, 9, 32, 64, 200, true, 0));
  cases.push_back(mqa_case(r, 9, 32, 32, 260, false, 150));
  cases.push_back(paged_case(r, 3, 2, 64, 128, 64, 300));
  cases.push_back(paged_case(r, 2, 1, 32, 64, 64, 130));
  cases.push_back(metadata_case({300, 5000, 0, 0, 70000, 70001, 1, 256}, 4, 2, 132));
  cases.push_back(metadata_case({5, 9000, 0, 1000}, 4, 1, 7));
  cases.push_back(clean_case(r, 6, 300, 250, 2, true));
  cases.push_back(clean_case(r, 5, 129, 129, 1, false));
  // Quantizers (go_quantize): every recipe, both semantics, UE8M0 and packed scales, tails, strided f32 input.
  const int32_t GPU = GO_MODEL_GPU, CPU = GO_MODEL_CPU;
  cases.push_back(quant_case(r, GO_PER_TOKEN_CAST_TO_FP8, 64 * s, 512, 128, 0, 0, GPU, false, true));
  cases.push_back(quant_case(r, GO_PER_TOKEN_CAST_TO_FP8, 33, 1152, 128, 1, 0, GPU, false, true));
  cases.push_back(quant_case(r, GO_PER_TOKEN_CAST_TO_FP8, 16, 512, 128, 3, 0, GPU, true, true));
  cases.push_back(quant_case(r, GO_PER_TOKEN_CAST_TO_FP8, 7, 200, 32, 0, 0, CPU, false, false));
  cases.push_back(quant_case(r, GO_PER_CHANNEL_CAST_TO_FP8, 256, 72, 128, 0, 0, GPU, false, true));
  cases.push_back(quant_case(r, GO_PER_CHANNEL_CAST_TO_FP8, 128, 66, 32, 1, 0, CPU, true, false));
  cases.push_back(quant_case(r, GO_PER_BLOCK_CAST_TO_FP8, 130, 200 * s, 128, 0, 0, GPU, false, true));
  cases.push_back(quant_case(r, GO_PER_BLOCK_CAST_TO_FP8, 300, 260, 128, 1, 0, GPU, true, true));
  cases.push_back(quant_case(r, GO_PER_TOKEN_CAST_TO_FP4, 9, 256, 32, 3, 0, GPU, false, true));
  cases.push_back(quant_case(r, GO_PER_TOKEN_CAST_TO_FP4, 5, 64, 32, 3, 0, GPU, false, false));  // padded packing
  cases.push_back(quant_case(r, GO_PER_TOKEN_CAST_TO_FP4, 7, 96, 128, 0, 0, CPU, true, false));
  for (int rule = 0; rule < 4; ++rule) {
    cases.push_back(quant_case(r, GO_MXFP8_E4M3, 12, 256, 0, 0, rule, GPU, false, true));
    cases.push_back(quant_case(r, GO_MXFP8_E5M2, 12, 128, 0, 0, rule, rule == 2 ? CPU : GPU, false, true));
    cases.push_back(quant_case(r, GO_MXFP4, 12, 128, 0, 0, rule, GPU, rule == 1, true));
  }
  cases.push_back(quant_case(r, GO_NVFP4_TE, 16, 256, 0, 0, 0, GPU, false, true));
  cases.push_back(quant_case(r, GO_NVFP4_TE, 3, 48, 0, 0, 0, GPU, true, false));
  cases.push_back(quant_case(r, GO_NVFP4_TORCHAO, 16, 256, 0, 0, 0, GPU, false, true));
  cases.push_back(quant_case(r, GO_NVFP4_TORCHAO, 8, 64, 0, 0, 0, CPU, true, true));
  // cuBLASLt (optional library: a SKIP row where it cannot be loaded).
  cases.push_back(cublaslt_case(r, 64, 256, 512 * s, false, GO_E4M3, GO_BF16, false, 0));
  cases.push_back(cublaslt_case(r, 33, 72, 384, true, GO_E4M3, GO_BF16, true, 1));
  cases.push_back(cublaslt_case(r, 16, 128, 256, false, GO_E4M3, GO_F32, true, 0));
  cases.push_back(cublaslt_case(r, 40, 96, 200, false, GO_BF16, GO_BF16, false, 1));
  if (!small) cases.push_back(cublaslt_case(r, 64, 256, 7168, false, GO_E4M3, GO_BF16, false, 0));

  prepare_fast(cuda, cases);
  int failures = 0;
  int64_t total_elems = 0, total_model_elems = 0;
  std::printf("\n%-30s %-46s %10s %10s %10s %8s %s\n", "op", "case", "elements", "vs cpu", "vs model", "reruns", "note");
  for (const Case& c : cases) {
    RunResult g = run_on(cuda, c);
    std::string cpu_col = "-", model_col = "-", rerun_col = "-", note;
    if (g.status == GO_ERR_UNSUPPORTED && c.optional_lib) {
      std::printf("%-30s %-46s %10s %10s %10s %8s SKIP: %s\n", c.op.c_str(), c.name.c_str(), "-", "-", "-", "-", g.err.c_str());
      continue;
    }
    if (g.status != GO_OK) {
      ++failures;
      note = "CUDA status " + std::to_string(g.status) + ": " + g.err;
      std::printf("%-30s %-46s %10s %10s %10s %8s %s\n", c.op.c_str(), c.name.c_str(), "-", "ERROR", "-", "-", note.c_str());
      continue;
    }
    int64_t elems = 0;
    if (have_cpu && !cpu_only) {
      RunResult h = run_on(cpu, c);
      if (h.status != GO_OK) {
        cpu_col = "n/a";
        note += "cpu status " + std::to_string(h.status) + " (" + h.err.substr(0, 60) + ") ";
      } else {
        Cmp m = compare(c, g.outs, h.outs);
        elems = m.elements;
        total_elems += m.elements;
        cpu_col = m.mismatches == 0 ? "EQUAL" : std::to_string(m.mismatches) + " DIFF";
        if (m.mismatches) {
          ++failures;
          note += "first " + m.first + " (cuda vs cpu) " + m.rows;
        }
      }
    }
    if (c.model) {
      std::vector<HT> expect;
      for (int o : c.outs) expect.push_back(c.ts[static_cast<size_t>(o)]);
      c.model(c, expect);
      Cmp m = compare(c, g.outs, expect);
      elems = m.elements;
      total_model_elems += m.elements;
      model_col = m.mismatches == 0 ? "EQUAL" : std::to_string(m.mismatches) + " DIFF";
      if (m.mismatches) {
        ++failures;
        note += "first " + m.first + " (cuda vs model) ";
      }
    }
    const uint64_t h0 = fnv(g.outs);
    int same = 1;
    for (int i = 1; i < reruns; ++i) {
      RunResult g2 = run_on(cuda, c);
      if (g2.status == GO_OK && fnv(g2.outs) == h0) ++same;
    }
    rerun_col = std::to_string(same) + "/" + std::to_string(reruns);
    if (same != reruns) ++failures;
    std::printf("%-30s %-46s %10lld %10s %10s %8s %s\n", c.op.c_str(), c.name.c_str(), static_cast<long long>(elems),
                cpu_col.c_str(), model_col.c_str(), rerun_col.c_str(), note.c_str());
  }

  // Error-path probes: the library must refuse, with the documented status, and not crash.
  int probes = 0, probe_fail = 0;
  if (cpu_only) ndev = 1;
  auto probe = [&](const char* what, int32_t got, int32_t want) {
    ++probes;
    const bool ok = got == want;
    if (!ok) ++probe_fail;
    std::printf("probe %-52s -> %d %s (%s)\n", what, got, ok ? "ok" : "UNEXPECTED", cuda.last_error());
  };
  {
    void* p = nullptr;
    cuda.alloc(1 << 16, &p);
    go_tensor a{}, b{}, d{}, sf{};
    a.data = p; a.dtype = GO_E4M3; a.ndim = 2; a.shape[0] = 64; a.shape[1] = 128; a.strides[0] = 128; a.strides[1] = 1;
    b = a;
    sf.data = p; sf.dtype = GO_F32; sf.ndim = 2; sf.shape[0] = 64; sf.shape[1] = 1; sf.strides[0] = 1; sf.strides[1] = 64;
    d = a; d.dtype = GO_BF16; d.shape[1] = 64; d.strides[0] = 64;
    go_tensor big = a;
    big.shape[0] = 1024;
    probe("fp8_gemm with a tensor beyond its allocation", cuda.fp8_gemm(&big, &sf, &b, &sf, nullptr, &d, 1, 128, 128, 128, GO_MODEL_DEFAULT), GO_ERR_OUT_OF_BOUNDS);
    go_tensor bad = a;
    bad.data = reinterpret_cast<void*>(0x1000);
    probe("fp8_gemm with a foreign pointer", cuda.fp8_gemm(&bad, &sf, &b, &sf, nullptr, &d, 1, 128, 128, 128, GO_MODEL_DEFAULT), GO_ERR_OUT_OF_BOUNDS);
    probe("fp8_gemm model exact", cuda.fp8_gemm(&a, &sf, &b, &sf, nullptr, &d, 1, 128, 1, 128, GO_MODEL_EXACT), GO_ERR_UNSUPPORTED);
    probe("bf16_gemm with e4m3 operands", cuda.bf16_gemm(&a, &b, nullptr, &d, GO_MODEL_BF16), GO_ERR_INVALID_ARGUMENT);
    probe("go_free of an unknown pointer", cuda.free_(reinterpret_cast<void*>(0x1234)), GO_ERR_INVALID_ARGUMENT);
    {
      std::vector<char> host(1 << 17);
      probe("go_copy_out past the allocation end", cuda.copy_out(host.data(), p, 1 << 17), GO_ERR_OUT_OF_BOUNDS);
    }
    probe("go_set_device out of range", cuda.set_device(ndev), GO_ERR_INVALID_ARGUMENT);
    if (g_quant && !cpu_only) {
      go_tensor x = d, q = a, qs = sf;  // x bf16 [64, 64], q e4m3 [64, 128] (the wrong shape), sf f32 [64, 1]
      probe("go_quantize with an unknown recipe", g_quant(42, &x, &q, &qs, nullptr, 128, 0, 0, GO_MODEL_DEFAULT), GO_ERR_INVALID_ARGUMENT);
      probe("go_quantize with q of the wrong shape", g_quant(GO_PER_TOKEN_CAST_TO_FP8, &x, &q, &qs, nullptr, 64, 0, 0, GO_MODEL_DEFAULT), GO_ERR_INVALID_ARGUMENT);
      probe("go_quantize with q beyond its allocation", g_quant(GO_PER_TOKEN_CAST_TO_FP8, &x, &big, &qs, nullptr, 64, 0, 0, GO_MODEL_DEFAULT), GO_ERR_OUT_OF_BOUNDS);
      probe("go_quantize model sm90_1d2d", g_quant(GO_PER_TOKEN_CAST_TO_FP8, &x, &q, &qs, nullptr, 64, 0, 0, GO_MODEL_SM90_1D2D), GO_ERR_UNSUPPORTED);
    }
    if (g_cublaslt && !cpu_only)
      probe("go_cublaslt_gemm model exact", g_cublaslt(&a, &b, nullptr, &d, 0, nullptr, 0, GO_MODEL_EXACT), GO_ERR_UNSUPPORTED);
    cuda.free_(p);
  }
  // Grouped index tensors that the fast path checks on the device (kernels/cuda/grouped_gate.h): a bad entry is
  // refused with the host check's words, D is left as it was, and the next good call runs (the error was cleared).
  // Zero A and scales: a good call writes zeros over D's 1.0 sentinel.
  if (!cpu_only) {
    const int64_t M = 256, N = 128, K = 128, G = 2;
    void *pa = nullptr, *pb = nullptr, *psf = nullptr, *pd = nullptr, *pi = nullptr;
    cuda.alloc(M * K, &pa);
    cuda.alloc(G * N * K, &pb);
    cuda.alloc(4 * (2 * M + 2 * G), &psf);
    cuda.alloc(2 * G * M * N, &pd);
    cuda.alloc(4 * M, &pi);
    std::vector<uint8_t> zeros(static_cast<size_t>(G * N * K), 0);
    cuda.copy_in(pa, zeros.data(), M * K);
    cuda.copy_in(pb, zeros.data(), G * N * K);
    cuda.copy_in(psf, zeros.data(), 4 * (2 * M + 2 * G));
    go_tensor a{}, b{}, sfa{}, sfb{}, d{}, gl{};
    auto set = [](go_tensor& t, void* p, int32_t dt, std::vector<int64_t> shape, std::vector<int64_t> strides) {
      t.data = p, t.dtype = dt, t.ndim = static_cast<int32_t>(shape.size());
      for (size_t i = 0; i < shape.size(); ++i) t.shape[i] = shape[i], t.strides[i] = strides[i];
    };
    const std::vector<uint16_t> sentinel(static_cast<size_t>(G * M * N), 0x3f80);  // bf16 1.0
    std::vector<uint16_t> back(sentinel.size());
    auto d_kept = [&](int64_t n) {
      cuda.copy_out(back.data(), pd, 2 * n);
      return std::equal(back.begin(), back.begin() + n, sentinel.begin());
    };
    auto d_zero = [&](int64_t n) {
      cuda.copy_out(back.data(), pd, 2 * n);
      return std::all_of(back.begin(), back.begin() + n, [](uint16_t v) { return v == 0; });
    };
    auto message = [&](const char* want) { return std::strstr(cuda.last_error(), want) != nullptr; };
    // Contiguous, classic: row 130 names group 5 of 2.
    set(a, pa, GO_E4M3, {M, K}, {K, 1});
    set(b, pb, GO_E4M3, {G, N, K}, {N * K, K, 1});
    set(sfa, psf, GO_F32, {M, 1}, {1, M});
    set(sfb, static_cast<float*>(psf) + 2 * M, GO_F32, {G, 1, 1}, {1, 1, 1});
    set(d, pd, GO_BF16, {M, N}, {N, 1});
    set(gl, pi, GO_I32, {M}, {1});
    std::vector<int32_t> idx(static_cast<size_t>(M));
    for (int64_t i = 0; i < M; ++i) idx[static_cast<size_t>(i)] = static_cast<int32_t>(i / 128);
    idx[130] = 5;
    cuda.copy_in(pi, idx.data(), 4 * M);
    cuda.copy_in(pd, sentinel.data(), 2 * M * N);
    int32_t st = cuda.mg_fp8(&a, &sfa, &b, &sfb, &d, &gl, 1, 128, 128, 128, 0, 128, GO_MODEL_SM90_1D2D);
    probe("contiguous layout with group 5 of 2 (checked on the device)",
          st == GO_ERR_INVALID_ARGUMENT && message("grouped_layout[130] = 5 is neither -1 nor a group in [0, 2)") &&
                  d_kept(M * N)
              ? 1
              : 0,
          1);
    idx[130] = 1;
    cuda.copy_in(pi, idx.data(), 4 * M);
    st = cuda.mg_fp8(&a, &sfa, &b, &sfb, &d, &gl, 1, 128, 128, 128, 0, 128, GO_MODEL_SM90_1D2D);
    probe("the same call with the layout repaired runs", st == GO_OK && d_zero(M * N) ? 1 : 0, 1);
    // Psum: ends 200 then 100.
    const int32_t ends[2] = {200, 100};
    cuda.copy_in(pi, ends, sizeof ends);
    set(gl, pi, GO_I32, {G}, {1});
    cuda.copy_in(pd, sentinel.data(), 2 * M * N);
    st = cuda.mg_fp8(&a, &sfa, &b, &sfb, &d, &gl, 1, 128, 128, 128, 1, 128, GO_MODEL_SM90_1D2D);
    probe("psum layout with decreasing ends",
          st == GO_ERR_INVALID_ARGUMENT && message("grouped_layout[1] = 100: psum ends must be non-decreasing") &&
                  d_kept(M * N)
              ? 1
              : 0,
          1);
    // Masked: masked_m[1] = 300 > Mmax = 128.
    const int64_t Mmax = 128;
    const int32_t mm[2] = {5, 300};
    cuda.copy_in(pi, mm, sizeof mm);
    set(a, pa, GO_E4M3, {G, Mmax, K}, {Mmax * K, K, 1});
    set(sfa, psf, GO_F32, {G, Mmax, 1}, {Mmax, 1, Mmax});
    set(d, pd, GO_BF16, {G, Mmax, N}, {Mmax * N, N, 1});
    set(gl, pi, GO_I32, {G}, {1});
    cuda.copy_in(pd, sentinel.data(), 2 * G * Mmax * N);
    st = cuda.masked_fp8(&a, &sfa, &b, &sfb, &d, &gl, 1, 128, 128, 128, GO_MODEL_SM90_1D2D);
    probe("masked_m past Mmax", st == GO_ERR_INVALID_ARGUMENT && message("masked_m[1] = 300 is outside [0, 128]") &&
                                        d_kept(G * Mmax * N)
                                    ? 1
                                    : 0,
          1);
    // Two bad counts: the first is named.
    const int32_t mm2[2] = {-3, 400};
    cuda.copy_in(pi, mm2, sizeof mm2);
    st = cuda.masked_fp8(&a, &sfa, &b, &sfb, &d, &gl, 1, 128, 128, 128, GO_MODEL_SM90_1D2D);
    probe("masked_m with two bad counts names the first",
          st == GO_ERR_INVALID_ARGUMENT && message("masked_m[0] = -3 is outside [0, 128]") && d_kept(G * Mmax * N) ? 1
                                                                                                               : 0,
          1);
    for (void* q : {pa, pb, psf, pd, pi}) cuda.free_(q);
  }
  // The device check's verdict on 256-row tiles (go_ext_grouped_gate) against this file's own reading of the rule:
  // classic, no 256-row block has rows of two groups, or group rows after padding (-1); psum, every group starts (its
  // previous end aligned up to mk) on a multiple of 256. A wrong "fits" would run BLOCK_M 256 over two groups.
  using GateFn = int32_t (*)(const go_tensor*, int32_t, int64_t, int64_t, int32_t, int32_t*);
  if (auto gate = reinterpret_cast<GateFn>(dlsym(cuda.h, "go_ext_grouped_gate")); gate != nullptr && !cpu_only) {
    void* pi = nullptr;
    const int64_t cap = 4096;
    cuda.alloc(4 * cap, &pi);
    auto run_gate = [&](const std::vector<int32_t>& v, int32_t kind, int64_t m, int64_t g, int32_t* fits) {
      cuda.copy_in(pi, v.data(), 4 * v.size());
      go_tensor t{};
      t.data = pi, t.dtype = GO_I32, t.ndim = 1, t.shape[0] = static_cast<int64_t>(v.size()), t.strides[0] = 1;
      return gate(&t, kind, m, g, 128, fits);
    };
    int agree = 0, total = 0;
    uint64_t state = 0x9e3779b97f4a7c15ull;
    auto next = [&](int64_t mod) {
      state ^= state << 13, state ^= state >> 7, state ^= state << 17;
      return static_cast<int64_t>(state % static_cast<uint64_t>(mod));
    };
    for (int trial = 0; trial < 24; ++trial) {
      // Classic: 128-row blocks, each a group in [0, 4) or padding; M up to 4096 (odd block counts too).
      const int64_t blocks = 1 + next(32), m = 128 * blocks;
      std::vector<int32_t> v(static_cast<size_t>(m));
      for (int64_t b = 0; b < blocks; ++b) {
        const int32_t grp = next(5) == 0 ? -1 : static_cast<int32_t>(trial % 3 == 0 ? (b / 2) % 4 : next(4));
        for (int64_t r = 0; r < 128; ++r) v[static_cast<size_t>(128 * b + r)] = grp;
      }
      bool want = true;
      for (int64_t m0 = 0; m0 + 128 < m; m0 += 256)
        want = want && (v[static_cast<size_t>(m0 + 128)] == v[static_cast<size_t>(m0)] || v[static_cast<size_t>(m0 + 128)] == -1);
      int32_t fits = -1;
      const int32_t st = run_gate(v, 1, m, 4, &fits);
      ++total;
      agree += st == GO_OK && fits == (want ? 1 : 0);
      // Psum: 4 non-decreasing ends.
      std::vector<int32_t> ends(4);
      int32_t e = 0;
      for (auto& x : ends) x = e += static_cast<int32_t>(trial % 3 == 0 ? 256 * next(3) : next(400));
      bool want_p = true;
      int64_t prev = 0;
      for (int32_t x : ends) want_p = want_p && ((prev + 127) / 128 * 128) % 256 == 0, prev = x;
      const int32_t st_p = run_gate(ends, 2, e + 1, 4, &fits);
      ++total;
      agree += st_p == GO_OK && fits == (want_p ? 1 : 0);
    }
    probe("device check: 256-row tile verdicts match the rule", agree == total ? 1 : 0, 1);
    int32_t fits = 0;
    probe("device check: classic group 4 of 4 refused",
          run_gate(std::vector<int32_t>(256, 4), 1, 256, 4, &fits) == GO_ERR_INVALID_ARGUMENT &&
                  std::strstr(cuda.last_error(), "grouped_layout[0] = 4 is neither -1") != nullptr
              ? 1
              : 0,
          1);
    cuda.free_(pi);
  }

  std::printf("\nSUMMARY cases=%zu elements_vs_cpu=%lld elements_vs_model=%lld reruns=%d failures=%d probes=%d/%d\n",
              cases.size(), static_cast<long long>(total_elems), static_cast<long long>(total_model_elems), reruns,
              failures, probes - probe_fail, probes);
  return failures == 0 && probe_fail == 0 ? 0 : 1;
}
