// The GEMM engine: per-element models and epilogues. Sources of each numeric rule:
//   sm90_1d2d / sm90_1d1d: deepgemm-ops.md §6.1/§6.2 + numerics.md §8.2 (4 chained k32 wgmma, e8m13, fma promotion)
//   sm100_1d1d:            deepgemm-ops.md §6.3 + numerics.md §8.1 (block-scaled k32, 25 bits, fp32 RZ)
//   bf16:                  deepgemm-ops.md §6.4 + numerics.md §8.2b (k16, 25 bits, fp32 RZ to 23 bits)
//   exact:                 the true value rounded once (round to nearest even)
// sm90_1d2d / sm90_1d1d run through the vectorised integer kernels of sm90_fast.cpp; fp8_sm90 below is their generic
// scalar form (used there for elements with NaN / Inf operands).
#include "gemm_core.hpp"

#include <cmath>
#include <limits>

#include "sm90_fast.hpp"

namespace go {

bool ScaleTable::all_pow2() const {
  for (size_t i = 0; i < exp.size(); i++) {
    if (exp[i] == kNotPow2 && !isnan[i]) return false;
  }
  return true;
}

namespace {

void fill_scale(ScaleTable& t, int64_t i, const char* p, int32_t dtype) {
  if (dtype == GO_UE8M0) {
    uint8_t code = uint8_t(*p);
    if (code == 0xFF) {
      t.val[i] = std::numeric_limits<float>::quiet_NaN();
      t.exp[i] = 0;
      t.isnan[i] = 1;
    } else {
      t.val[i] = std::ldexp(1.0f, int(code) - 127);  // 2^-127 is an exact fp32 subnormal
      t.exp[i] = int16_t(int(code) - 127);
      t.isnan[i] = 0;
    }
    return;
  }
  float f;
  std::memcpy(&f, p, 4);
  t.val[i] = f;
  t.isnan[i] = std::isnan(f) ? 1 : 0;
  uint32_t u = f32_bits(f);
  uint32_t e = (u >> 23) & 0xFF, m = u & 0x7FFFFF;
  t.exp[i] = ScaleTable::kNotPow2;
  if ((u >> 31) == 0 && e != 0xFF) {
    if (e != 0 && m == 0) t.exp[i] = int16_t(int(e) - 127);
    if (e == 0 && m != 0 && (m & (m - 1)) == 0) t.exp[i] = int16_t(-149 + __builtin_ctz(m));
  }
}

}  // namespace

ScaleTable scale_table(const View& v, bool transposed) {
  ScaleTable t;
  if (!v.present()) return t;
  int nd = v.ndim;
  int64_t lead = 1;
  for (int i = 0; i < nd - 2; i++) lead *= v.shape[i];
  int64_t r = transposed ? v.shape[nd - 1] : v.shape[nd - 2];
  int64_t c = transposed ? v.shape[nd - 2] : v.shape[nd - 1];
  t.rows = lead * r;
  t.cols = c;
  size_t n = size_t(t.rows * t.cols);
  t.val.resize(n);
  t.exp.resize(n);
  t.isnan.resize(n);
  for (int64_t g = 0; g < lead; g++) {
    for (int64_t i = 0; i < r; i++) {
      for (int64_t j = 0; j < c; j++) {
        int64_t ri = transposed ? j : i, ci = transposed ? i : j;
        const char* p = nd == 3 ? v.ptr3(g, ri, ci) : v.ptr2(ri, ci);
        fill_scale(t, (g * r + i) * c + j, p, v.dtype);
      }
    }
  }
  return t;
}

namespace {

inline Dec decode_elem(const char* p, int32_t dtype) {
  switch (dtype) {
    case GO_E4M3: return fp8_decode_table(true)[uint8_t(*p)];
    case GO_E5M2: return fp8_decode_table(false)[uint8_t(*p)];
    case GO_BF16: {
      uint16_t b;
      std::memcpy(&b, p, 2);
      return decode(b, kBF16);
    }
    default: fail(GO_ERR_INTERNAL, "decode_elem: unsupported dtype");
  }
}

// Runs body(row) for every row in [0, rows), on the thread pool when there are enough elements to pay for it.
void for_rows(int64_t rows, int64_t K, const std::function<void(int64_t)>& body) {
  if (rows * K < (int64_t(1) << 16)) {
    for (int64_t r = 0; r < rows; r++) body(r);
    return;
  }
  parallel_for(rows, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; r++) body(r);
  });
}

}  // namespace

void decode_rows(const View& v, int64_t row0, int64_t rows, int64_t k0, int64_t K, bool transposed, Dec* out) {
  for_rows(rows, K, [&](int64_t r) {
    Dec* o = out + r * K;
    if (!transposed && (v.dtype == GO_E4M3 || v.dtype == GO_E5M2)) {  // the common case, one table look-up each
      const Dec* table = fp8_decode_table(v.dtype == GO_E4M3);
      const uint8_t* p = reinterpret_cast<const uint8_t*>(v.ptr2(row0 + r, k0));
      const int64_t step = v.strides[1];
      for (int64_t k = 0; k < K; k++) o[k] = table[p[k * step]];
      return;
    }
    for (int64_t k = 0; k < K; k++) {
      const char* p = transposed ? v.ptr2(k0 + k, row0 + r) : v.ptr2(row0 + r, k0 + k);
      o[k] = decode_elem(p, v.dtype);
    }
  });
}

void decode_group(const View& v, int64_t g, Dec* out) {
  int64_t R = v.shape[1], K = v.shape[2];
  for_rows(R, K, [&](int64_t r) {
    for (int64_t k = 0; k < K; k++) out[r * K + k] = decode_elem(v.ptr3(g, r, k), v.dtype);
  });
}

void decode_groups(const View& v, Dec* out) {
  int64_t G = v.shape[0], R = v.shape[1], K = v.shape[2];
  for_rows(G * R, K, [&](int64_t gr) {
    int64_t g = gr / R, r = gr % R;
    for (int64_t k = 0; k < K; k++) out[gr * K + k] = decode_elem(v.ptr3(g, r, k), v.dtype);
  });
}

int32_t fp8_model(int32_t model, int32_t fallback, int64_t gran_a_k, int64_t gran_b_k, const ScaleTable& sa,
                  const ScaleTable& sb) {
  if (model == GO_MODEL_DEFAULT) model = fallback;
  switch (model) {
    case GO_MODEL_EXACT: return model;
    case GO_MODEL_SM90_1D2D:
    case GO_MODEL_SM90_1D1D:
      if (gran_a_k != 128 || gran_b_k != 128) {
        fail(GO_ERR_INVALID_ARGUMENT, std::string(go_model_name(model)) +
                                          " promotes every 128 K: gran_a_k and gran_b_k must be 128, got " +
                                          std::to_string(gran_a_k) + " and " + std::to_string(gran_b_k));
      }
      return model;
    case GO_MODEL_SM100_1D1D:
      if (gran_a_k % 32 != 0 || gran_b_k % 32 != 0) {
        fail(GO_ERR_INVALID_ARGUMENT, "sm100_1d1d: one scale per 32-K MMA step needs gran_k a multiple of 32, got " +
                                          std::to_string(gran_a_k) + " and " + std::to_string(gran_b_k));
      }
      if (!sa.all_pow2() || !sb.all_pow2()) {
        fail(GO_ERR_INVALID_ARGUMENT, "sm100_1d1d: scales must be positive powers of two (UE8M0)");
      }
      return model;
    default:
      fail(GO_ERR_UNSUPPORTED, "model " + std::string(go_model_name(model)) + " (" + std::to_string(model) +
                                   ") is not implemented for FP8 GEMMs by the CPU backend");
  }
}

int32_t bf16_model(int32_t model) {
  if (model == GO_MODEL_DEFAULT) model = GO_MODEL_BF16;
  switch (model) {
    case GO_MODEL_EXACT:
    case GO_MODEL_BF16:
    case GO_MODEL_FP32_SEQUENTIAL: return model;
    default:
      fail(GO_ERR_UNSUPPORTED, "model " + std::string(go_model_name(model)) + " (" + std::to_string(model) +
                                   ") is not implemented for BF16 GEMMs by the CPU backend");
  }
}

void copy_c_or_zero(const View& d, const View& c) {
  int64_t lead = d.ndim == 3 ? d.shape[0] : 1;
  int64_t R = d.shape[d.ndim - 2], C = d.shape[d.ndim - 1];
  for (int64_t g = 0; g < lead; g++) {
    for (int64_t i = 0; i < R; i++) {
      for (int64_t j = 0; j < C; j++) {
        char* dp = d.ndim == 3 ? d.ptr3(g, i, j) : d.ptr2(i, j);
        if (c.present()) {
          const char* cp = c.ndim == 3 ? c.ptr3(g, i, j) : c.ptr2(i, j);
          std::memmove(dp, cp, size_t(d.esize));
        } else {
          std::memset(dp, 0, size_t(d.esize));
        }
      }
    }
  }
}

namespace {

// ---- epilogues ----------------------------------------------------------------------------------------------

inline void store(char* p, int32_t dtype, float v) {
  if (dtype == GO_F32) {
    std::memcpy(p, &v, 4);
  } else {
    uint16_t b = bf16_rne(v);
    std::memcpy(p, &b, 2);
  }
}

inline float load_c(const char* p, int32_t dtype) { return float(read_float(p, dtype)); }

}  // namespace

// Every non-exact model ends the same way (DeepGEMM copies C into D, then the kernel reduce-adds its rounded
// output): o = out(acc), D = C ? out(C + o) : o, out = bf16 RNE or fp32 (deepgemm-ops.md §5.1, §6.2, §6.3: BF16 with C
// rounds twice; for fp32 this is fl32(C + F)).
void epilogue_acc(char* dp, const char* cp, int32_t dtype, float acc) {
  if (dtype == GO_F32) {
    float v = cp ? load_c(cp, dtype) + acc : acc;
    std::memcpy(dp, &v, 4);
    return;
  }
  uint16_t out = bf16_rne(acc);
  if (cp) {
    double sum = double(load_c(cp, dtype)) + double(bf16_to_f32(out));  // exact for two bf16 values (or harmless)
    out = bf16_rne_from_double(sum);
  }
  std::memcpy(dp, &out, 2);
}

namespace {

inline void epilogue_exact(char* dp, const char* cp, int32_t dtype, ExactAcc& acc) {
  if (cp) acc.add_double(double(load_c(cp, dtype)));
  if (dtype == GO_F32) {
    double v = acc.round(24, -126, 127);
    float f = std::isnan(v) ? f32_from_bits(0x7FFFFFFFu) : float(v);
    std::memcpy(dp, &f, 4);
  } else {
    double v = acc.round(8, -126, 127);
    uint16_t b = std::isnan(v) ? uint16_t(0x7FFF) : uint16_t(f32_bits(float(v)) >> 16);
    std::memcpy(dp, &b, 2);
  }
}

// ---- FP8 element models ---------------------------------------------------------------------------------------

template <int FA, int FB>
float fp8_sm90(const Dec* a, const Dec* b, int64_t K, const float* sa, const float* sb) {
  float F = 0.0f;
  for (int64_t k0 = 0, kb = 0; k0 < K; k0 += 128, kb++) {
    float P = 0.0f;  // the first wgmma of a block starts from zero (scale-d = 0)
    for (int64_t s = k0; s < k0 + 128 && s < K; s += 32) {
      int cnt = int(K - s < 32 ? K - s : 32);
      P = fused_dot_add<13, 13>(a + s, b + s, cnt, P);
    }
    float scale = sa[kb] * sb[kb];  // fl32(sa·sb)
    F = std::fma(scale, P, F);
  }
  return F;
}

template <int FA, int FB>
float fp8_sm100(const Dec* a, const Dec* b, int64_t K, const int16_t* ea, const uint8_t* na, const int16_t* eb,
                const uint8_t* nb, int64_t gak, int64_t gbk) {
  float acc = 0.0f;
  for (int64_t s = 0; s < K; s += 32) {
    int cnt = int(K - s < 32 ? K - s : 32);
    int64_t ia = s / gak, ib = s / gbk;
    bool nan = na[ia] || nb[ib];
    int se = nan ? 0 : ea[ia] + eb[ib];
    acc = fused_dot_add<25, 23>(a + s, b + s, cnt, acc, se, nan);
  }
  return acc;
}

inline void add_scaled_product_run(ExactAcc& acc, __int128 run, int unit_exp, float sa, float sb) {
  // acc += run · 2^unit_exp · sa · sb, exactly.
  if (run == 0) return;
  F32Parts da = f32_parts(sa), db = f32_parts(sb);
  if (da.special || db.special) {
    acc.add_special(double(run) * double(sa) * double(sb));
    return;
  }
  if (da.sig == 0 || db.sig == 0) return;
  bool neg = (run < 0) != ((da.sig < 0) != (db.sig < 0));
  unsigned __int128 mag = run < 0 ? (unsigned __int128)(-run) : (unsigned __int128)run;
  uint64_t sc = uint64_t(da.sig < 0 ? -int64_t(da.sig) : da.sig) * uint64_t(db.sig < 0 ? -int64_t(db.sig) : db.sig);
  int e = unit_exp + da.exp - 23 + db.exp - 23;
  uint64_t lo = uint64_t(mag), hi = uint64_t(mag >> 64);
  acc.add(neg, (unsigned __int128)lo * sc, e);
  if (hi) acc.add(neg, (unsigned __int128)hi * sc, e + 64);
}

template <int FA, int FB>
void fp8_exact(ExactAcc& acc, const Dec* a, const Dec* b, int64_t K, const float* sa, const float* sb, int64_t gak,
               int64_t gbk, int emin_a, int emin_b) {
  // Products within a run of constant scales are integers in units of 2^(emin_a − FA + emin_b − FB).
  int unit = emin_a - FA + emin_b - FB;
  int64_t k = 0;
  while (k < K) {
    int64_t ia = k / gak, ib = k / gbk;
    int64_t end = std::min(std::min((ia + 1) * gak, (ib + 1) * gbk), K);
    __int128 run = 0;
    for (; k < end; k++) {
      const Dec &x = a[k], &y = b[k];
      if (x.special | y.special) {
        acc.add_special(double(x.val) * double(y.val) * double(sa[ia]) * double(sb[ib]));
        continue;
      }
      int64_t p = int64_t(x.sig) * y.sig;
      if (p == 0) continue;
      run += (__int128)p << ((x.exp - emin_a) + (y.exp - emin_b));
    }
    add_scaled_product_run(acc, run, unit, sa[ia], sb[ib]);
  }
}

// ---- BF16 element models ----------------------------------------------------------------------------------------

float bf16_tc(const Dec* a, const Dec* b, int64_t K) {
  float acc = 0.0f;
  for (int64_t s = 0; s < K; s += 16) {
    int cnt = int(K - s < 16 ? K - s : 16);
    acc = fused_dot_add<25, 23>(a + s, b + s, cnt, acc);
  }
  return acc;
}

float bf16_seq(const Dec* a, const Dec* b, int64_t K) {
  float acc = 0.0f;
  for (int64_t k = 0; k < K; k++) acc = std::fma(a[k].val, b[k].val, acc);
  return acc;
}

void bf16_exact(ExactAcc& acc, const Dec* a, const Dec* b, int64_t K) {
  for (int64_t k = 0; k < K; k++) {
    const Dec &x = a[k], &y = b[k];
    if (x.special | y.special) {
      acc.add_special(double(x.val) * double(y.val));
      continue;
    }
    int64_t p = int64_t(x.sig) * y.sig;
    if (p == 0) continue;
    acc.add(p < 0, (unsigned __int128)(p < 0 ? -p : p), x.exp + y.exp - 14);
  }
}

template <int FA, int FB>
void run_rows_fp8(const GemmPlan& plan, int64_t begin, int64_t end) {
  const int emin_a = FA == 3 ? -6 : -14, emin_b = FB == 3 ? -6 : -14;
  ExactAcc acc;
  for (int64_t idx = begin; idx < end; idx++) {
    const RowJob& job = plan.rows[size_t(idx / plan.N)];
    int64_t n = idx % plan.N;
    char* dp = job.drow + physical_column(plan, n) * plan.d_col_stride;
    const char* cp = job.crow ? job.crow + n * plan.c_col_stride : nullptr;
    if (job.zero) {
      std::memset(dp, 0, plan.d_dtype == GO_F32 ? 4 : 2);
      continue;
    }
    const Dec* brow = job.bbase + n * job.K;
    int64_t sb_row = job.sb_row0 + n / plan.gran_b_mn;
    const float* sa = plan.sa->val_row(job.sa_row) + job.sf_col0;
    const float* sb = plan.sb->val_row(sb_row) + job.sf_col0;
    switch (plan.model) {
      case GO_MODEL_SM90_1D2D:
      case GO_MODEL_SM90_1D1D:
        epilogue_acc(dp, cp, plan.d_dtype, fp8_sm90<FA, FB>(job.arow, brow, job.K, sa, sb));
        break;
      case GO_MODEL_SM100_1D1D:
        epilogue_acc(dp, cp, plan.d_dtype,
                     fp8_sm100<FA, FB>(job.arow, brow, job.K, plan.sa->exp_row(job.sa_row) + job.sf_col0,
                                       plan.sa->nan_row(job.sa_row) + job.sf_col0,
                                       plan.sb->exp_row(sb_row) + job.sf_col0, plan.sb->nan_row(sb_row) + job.sf_col0,
                                       plan.gran_a_k, plan.gran_b_k));
        break;
      case GO_MODEL_EXACT:
        acc.clear();
        fp8_exact<FA, FB>(acc, job.arow, brow, job.K, sa, sb, plan.gran_a_k, plan.gran_b_k, emin_a, emin_b);
        epilogue_exact(dp, cp, plan.d_dtype, acc);
        break;
      default: fail(GO_ERR_INTERNAL, "run_rows_fp8: unexpected model");
    }
  }
}

void run_rows_bf16(const GemmPlan& plan, int64_t begin, int64_t end) {
  ExactAcc acc;
  for (int64_t idx = begin; idx < end; idx++) {
    const RowJob& job = plan.rows[size_t(idx / plan.N)];
    int64_t n = idx % plan.N;
    char* dp = job.drow + n * plan.d_col_stride;
    const char* cp = job.crow ? job.crow + n * plan.c_col_stride : nullptr;
    if (job.zero) {
      std::memset(dp, 0, plan.d_dtype == GO_F32 ? 4 : 2);
      continue;
    }
    const Dec* brow = job.bbase + n * job.K;
    switch (plan.model) {
      case GO_MODEL_BF16: epilogue_acc(dp, cp, plan.d_dtype, bf16_tc(job.arow, brow, job.K)); break;
      case GO_MODEL_FP32_SEQUENTIAL: epilogue_acc(dp, cp, plan.d_dtype, bf16_seq(job.arow, brow, job.K)); break;
      case GO_MODEL_EXACT:
        acc.clear();
        bf16_exact(acc, job.arow, brow, job.K);
        epilogue_exact(dp, cp, plan.d_dtype, acc);
        break;
      default: fail(GO_ERR_INTERNAL, "run_rows_bf16: unexpected model");
    }
  }
}

}  // namespace

float sm90_element(const GemmPlan& plan, const RowJob& job, int64_t n) {
  const Dec* brow = job.bbase + n * job.K;
  int64_t sb_row = job.sb_row0 + n / plan.gran_b_mn;
  const float* sa = plan.sa->val_row(job.sa_row) + job.sf_col0;
  const float* sb = plan.sb->val_row(sb_row) + job.sf_col0;
  return fp8_sm90<3, 3>(job.arow, brow, job.K, sa, sb);  // the format only enters through the decoded operands
}

void run_plan(const GemmPlan& plan) {
  if (sm90_fast_applies(plan)) {
    run_sm90_fast(plan);
    return;
  }
  int64_t count = int64_t(plan.rows.size()) * plan.N;
  parallel_for(count, [&](int64_t begin, int64_t end) {
    if (plan.a_dtype == GO_BF16) {
      run_rows_bf16(plan, begin, end);
      return;
    }
    bool a4 = plan.a_dtype == GO_E4M3, b4 = plan.b_dtype == GO_E4M3;
    if (a4 && b4) run_rows_fp8<3, 3>(plan, begin, end);
    else if (a4) run_rows_fp8<3, 2>(plan, begin, end);
    else if (b4) run_rows_fp8<2, 3>(plan, begin, end);
    else run_rows_fp8<2, 2>(plan, begin, end);
  });
}

}  // namespace go
