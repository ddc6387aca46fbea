// FP8 GEMM families of the ABI (deepgemm-ops.md §5): normal, m-grouped contiguous (classic and psum), masked,
// k-grouped (SM90 flat blocks and SM100 tn), skip-head-mid. Validation first, then a GemmPlan for gemm_core.
#include <algorithm>
#include <string>
#include <vector>

#include "gemm_core.hpp"

namespace go {
namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
int64_t align_up(int64_t a, int64_t b) { return ceil_div(a, b) * b; }
constexpr int64_t kMaskedBlockM = 128;  // BLOCK_M of the masked kernels' tiles

void check_grans(int32_t a_mn, int32_t a_k, int32_t b_mn, int32_t b_k) {
  if (a_mn < 1 || a_k < 1 || b_mn < 1 || b_k < 1) {
    fail(GO_ERR_INVALID_ARGUMENT, "scale granularities must be >= 1, got (" + std::to_string(a_mn) + ", " +
                                      std::to_string(a_k) + ") and (" + std::to_string(b_mn) + ", " +
                                      std::to_string(b_k) + ")");
  }
}

const std::initializer_list<int32_t> kFp8{GO_E4M3, GO_E5M2};
const std::initializer_list<int32_t> kScale{GO_F32, GO_UE8M0};
const std::initializer_list<int32_t> kOut{GO_F32, GO_BF16};

void check_c(const View& c, const View& d) {
  if (c.present() && c.dtype != d.dtype) {
    fail(GO_ERR_INVALID_ARGUMENT,
         std::string("c: dtype ") + dtype_name(c.dtype) + " differs from d's " + dtype_name(d.dtype));
  }
}

void no_overlap(const View& d, std::initializer_list<const View*> inputs) {
  for (const View* v : inputs) expect_no_overlap(d, *v, false);
}

void set_out(GemmPlan& p, const View& d, const View& c) {
  p.d_dtype = d.dtype;
  p.d_col_stride = d.strides[d.ndim - 1] * d.esize;
  p.c_col_stride = c.present() ? c.strides[c.ndim - 1] * c.esize : 0;
}

}  // namespace
}  // namespace go

using namespace go;

extern "C" {

int32_t go_fp8_gemm(const go_tensor* a_, const go_tensor* sfa_, const go_tensor* b_, const go_tensor* sfb_,
                    const go_tensor* c_, const go_tensor* d_, int32_t gran_a_mn, int32_t gran_a_k, int32_t gran_b_mn,
                    int32_t gran_b_k, int32_t model) {
  return guard([&] {
    View a = view_of(a_, "a", kFp8, 2), b = view_of(b_, "b", kFp8, 2);
    View d = view_of(d_, "d", kOut, 2), c = view_of(c_, "c", kOut, 2, true);
    check_grans(gran_a_mn, gran_a_k, gran_b_mn, gran_b_k);
    int64_t M = a.shape[0], K = a.shape[1], N = b.shape[0];
    expect_shape(b, {N, K});
    expect_shape(d, {M, N});
    if (c.present()) expect_shape(c, {M, N});
    check_c(c, d);
    View sfa = view_of(sfa_, "sfa", kScale, 2), sfb = view_of(sfb_, "sfb", kScale, 2);
    expect_shape(sfa, {ceil_div(M, gran_a_mn), ceil_div(K, gran_a_k)});
    expect_shape(sfb, {ceil_div(N, gran_b_mn), ceil_div(K, gran_b_k)});
    no_overlap(d, {&a, &b, &sfa, &sfb});
    expect_no_overlap(d, c, true);
    ScaleTable sa = scale_table(sfa), sb = scale_table(sfb);
    int32_t m = fp8_model(model, GO_MODEL_SM90_1D2D, gran_a_k, gran_b_k, sa, sb);
    if (M == 0 || N == 0) return;
    if (K == 0) {
      copy_c_or_zero(d, c);
      return;
    }
    std::vector<Dec> da(size_t(M * K)), db(size_t(N * K));
    decode_rows(a, 0, M, 0, K, false, da.data());
    decode_rows(b, 0, N, 0, K, false, db.data());
    GemmPlan p;
    p.model = m;
    p.a_dtype = a.dtype;
    p.b_dtype = b.dtype;
    p.N = N;
    p.gran_a_k = gran_a_k;
    p.gran_b_k = gran_b_k;
    p.gran_b_mn = gran_b_mn;
    p.sa = &sa;
    p.sb = &sb;
    set_out(p, d, c);
    p.rows.resize(size_t(M));
    for (int64_t i = 0; i < M; i++) {
      RowJob& r = p.rows[size_t(i)];
      r.arow = da.data() + i * K;
      r.bbase = db.data();
      r.K = K;
      r.sa_row = i / gran_a_mn;
      r.drow = d.ptr2(i, 0);
      r.crow = c.present() ? c.ptr2(i, 0) : nullptr;
    }
    run_plan(p);
  });
}

int32_t go_fp8_gemm_skip_head_mid(const go_tensor* a_, const go_tensor* sfa_, const go_tensor* b_,
                                  const go_tensor* sfb_, const go_tensor* d_, int32_t gran_a_mn, int32_t gran_a_k,
                                  int32_t gran_b_mn, int32_t gran_b_k, int32_t left, int32_t mid, int32_t right,
                                  int32_t model) {
  return guard([&] {
    View a = view_of(a_, "a", kFp8, 2), b = view_of(b_, "b", kFp8, 2), d = view_of(d_, "d", kOut, 2);
    check_grans(gran_a_mn, gran_a_k, gran_b_mn, gran_b_k);
    if (left < 0 || mid < 0 || right < 0 || left + right == 0) {
      fail(GO_ERR_INVALID_ARGUMENT, "head_splits (" + std::to_string(left) + ", " + std::to_string(mid) + ", " +
                                        std::to_string(right) + ") need non-negative parts and left + right > 0");
    }
    int64_t M = a.shape[0], K = a.shape[1], N = b.shape[0];
    expect_shape(b, {N, K});
    if (N % (left + right) != 0) {
      fail(GO_ERR_INVALID_ARGUMENT, "b: " + std::to_string(N) + " rows is not a multiple of left + right = " +
                                        std::to_string(left + right));
    }
    int64_t heads = N / (left + right);
    expect_shape(d, {M, N + checked_mul(heads, mid, "d (heads·mid)")});
    View sfa = view_of(sfa_, "sfa", kScale, 2), sfb = view_of(sfb_, "sfb", kScale, 2);
    expect_shape(sfa, {ceil_div(M, gran_a_mn), ceil_div(K, gran_a_k)});
    expect_shape(sfb, {ceil_div(N, gran_b_mn), ceil_div(K, gran_b_k)});
    no_overlap(d, {&a, &b, &sfa, &sfb});
    ScaleTable sa = scale_table(sfa), sb = scale_table(sfb);
    int32_t m = fp8_model(model, GO_MODEL_SM90_1D2D, gran_a_k, gran_b_k, sa, sb);
    if (M == 0 || N == 0) return;
    std::vector<Dec> da(size_t(M * K)), db(size_t(N * K));
    decode_rows(a, 0, M, 0, K, false, da.data());
    decode_rows(b, 0, N, 0, K, false, db.data());
    GemmPlan p;
    p.model = m;
    p.a_dtype = a.dtype;
    p.b_dtype = b.dtype;
    p.N = N;
    p.gran_a_k = gran_a_k;
    p.gran_b_k = gran_b_k;
    p.gran_b_mn = gran_b_mn;
    p.sa = &sa;
    p.sb = &sb;
    p.head_left = left;
    p.head_mid = mid;
    p.head_right = right;
    set_out(p, d, View());
    p.rows.resize(size_t(M));
    for (int64_t i = 0; i < M; i++) {
      RowJob& r = p.rows[size_t(i)];
      r.arow = da.data() + i * K;
      r.bbase = db.data();
      r.K = K;
      r.sa_row = i / gran_a_mn;
      r.drow = d.ptr2(i, 0);
    }
    if (K == 0) {
      for (auto& r : p.rows) r.zero = true;
    }
    run_plan(p);
  });
}

int32_t go_m_grouped_fp8_gemm_contiguous(const go_tensor* a_, const go_tensor* sfa_, const go_tensor* b_,
                                         const go_tensor* sfb_, const go_tensor* d_, const go_tensor* layout_,
                                         int32_t gran_a_mn, int32_t gran_a_k, int32_t gran_b_mn, int32_t gran_b_k,
                                         int32_t use_psum_layout, int32_t mk_alignment, int32_t model) {
  return guard([&] {
    View a = view_of(a_, "a", kFp8, 2), b = view_of(b_, "b", kFp8, 3), d = view_of(d_, "d", kOut, 2);
    check_grans(gran_a_mn, gran_a_k, gran_b_mn, gran_b_k);
    if (mk_alignment < 1) {
      fail(GO_ERR_INVALID_ARGUMENT, "mk_alignment must be >= 1, got " + std::to_string(mk_alignment));
    }
    int64_t M = a.shape[0], K = a.shape[1], G = b.shape[0], N = b.shape[1];
    expect_shape(b, {G, N, K});
    expect_shape(d, {M, N});
    View gl = view_of(layout_, "grouped_layout", {GO_I32}, 1);
    expect_shape(gl, {use_psum_layout ? G : M});
    View sfa = view_of(sfa_, "sfa", kScale, 2), sfb = view_of(sfb_, "sfb", kScale, 3);
    expect_shape(sfa, {ceil_div(M, gran_a_mn), ceil_div(K, gran_a_k)});
    expect_shape(sfb, {G, ceil_div(N, gran_b_mn), ceil_div(K, gran_b_k)});
    no_overlap(d, {&a, &b, &sfa, &sfb, &gl});
    ScaleTable sa = scale_table(sfa), sb = scale_table(sfb);
    int32_t m = fp8_model(model, GO_MODEL_SM90_1D2D, gran_a_k, gran_b_k, sa, sb);
    auto label = [&](int64_t i) {
      int32_t v;
      std::memcpy(&v, gl.ptr1(i), 4);
      return v;
    };
    // Row -> group (or -1: zero; -2: not written).
    std::vector<int64_t> group(size_t(M), -2);
    bool sm90 = m == GO_MODEL_SM90_1D2D || m == GO_MODEL_SM90_1D1D;
    if (!use_psum_layout) {
      for (int64_t i = 0; i < M; i++) {
        int32_t v = label(i);
        if (v < -1 || v >= G) {
          fail(GO_ERR_INVALID_ARGUMENT, "grouped_layout[" + std::to_string(i) + "] = " + std::to_string(v) +
                                            " is outside [-1, " + std::to_string(G) + ")");
        }
      }
      // deepgemm-ops.md §5.3: the tile's group is read from its first row, clamped at 0; SM90 writes zeros for a
      // 64-row warpgroup chunk whose first row is -1.
      for (int64_t i = 0; i < M; i++) {
        int64_t tile = i / mk_alignment * mk_alignment;
        int64_t chunk = tile + (i - tile) / 64 * 64;
        if (sm90 && label(chunk) == -1) group[size_t(i)] = -1;
        else group[size_t(i)] = std::max<int32_t>(0, label(tile));
      }
    } else {
      int64_t prev_end = 0;
      for (int64_t g = 0; g < G; g++) {
        int64_t end = label(g);
        int64_t start = align_up(prev_end, mk_alignment);
        if (end < prev_end || end > M) {
          fail(GO_ERR_INVALID_ARGUMENT, "grouped_layout[" + std::to_string(g) + "] = " + std::to_string(end) +
                                            " must be >= the previous end " + std::to_string(prev_end) +
                                            " and <= M = " + std::to_string(M));
        }
        for (int64_t i = start; i < end; i++) group[size_t(i)] = g;
        // ensure_zero_padding (flag bit 1): the group's last tile is computed up to the next mk_alignment boundary.
        if ((use_psum_layout & 2) && end > start) {
          for (int64_t i = end; i < std::min(M, align_up(end, mk_alignment)); i++) group[size_t(i)] = g;
        }
        prev_end = end;
      }
    }
    if (M == 0 || N == 0) return;
    std::vector<Dec> da(size_t(M * K)), db(size_t(G * N * K));
    decode_rows(a, 0, M, 0, K, false, da.data());
    decode_groups(b, db.data());
    int64_t sfb_rows = ceil_div(N, gran_b_mn);
    GemmPlan p;
    p.model = m;
    p.a_dtype = a.dtype;
    p.b_dtype = b.dtype;
    p.N = N;
    p.gran_a_k = gran_a_k;
    p.gran_b_k = gran_b_k;
    p.gran_b_mn = gran_b_mn;
    p.sa = &sa;
    p.sb = &sb;
    set_out(p, d, View());
    for (int64_t i = 0; i < M; i++) {
      int64_t g = group[size_t(i)];
      if (g == -2) continue;
      RowJob r;
      r.zero = g == -1 || K == 0;
      if (g < 0) g = 0;
      r.arow = da.data() + i * K;
      r.bbase = db.data() + g * N * K;
      r.K = K;
      r.sa_row = i / gran_a_mn;
      r.sb_row0 = g * sfb_rows;
      r.drow = d.ptr2(i, 0);
      p.rows.push_back(r);
    }
    run_plan(p);
  });
}

int32_t go_m_grouped_fp8_gemm_masked(const go_tensor* a_, const go_tensor* sfa_, const go_tensor* b_,
                                     const go_tensor* sfb_, const go_tensor* d_, const go_tensor* masked_m_,
                                     int32_t gran_a_mn, int32_t gran_a_k, int32_t gran_b_mn, int32_t gran_b_k,
                                     int32_t model) {
  return guard([&] {
    View a = view_of(a_, "a", kFp8, 3), b = view_of(b_, "b", kFp8, 3), d = view_of(d_, "d", kOut, 3);
    check_grans(gran_a_mn, gran_a_k, gran_b_mn, gran_b_k);
    int64_t G = a.shape[0], Mmax = a.shape[1], K = a.shape[2], N = b.shape[1];
    expect_shape(b, {G, N, K});
    expect_shape(d, {G, Mmax, N});
    View mm = view_of(masked_m_, "masked_m", {GO_I32}, 1);
    expect_shape(mm, {G});
    View sfa = view_of(sfa_, "sfa", kScale, 3), sfb = view_of(sfb_, "sfb", kScale, 3);
    expect_shape(sfa, {G, ceil_div(Mmax, gran_a_mn), ceil_div(K, gran_a_k)});
    expect_shape(sfb, {G, ceil_div(N, gran_b_mn), ceil_div(K, gran_b_k)});
    no_overlap(d, {&a, &b, &sfa, &sfb, &mm});
    ScaleTable sa = scale_table(sfa), sb = scale_table(sfb);
    int32_t m = fp8_model(model, GO_MODEL_SM90_1D2D, gran_a_k, gran_b_k, sa, sb);
    bool sm90 = m == GO_MODEL_SM90_1D2D || m == GO_MODEL_SM90_1D1D;
    if (N == 0 || Mmax == 0) return;
    std::vector<Dec> da(size_t(G * Mmax * K)), db(size_t(G * N * K));
    decode_groups(a, da.data());
    decode_groups(b, db.data());
    int64_t sfa_rows = ceil_div(Mmax, gran_a_mn), sfb_rows = ceil_div(N, gran_b_mn);
    GemmPlan p;
    p.model = m;
    p.a_dtype = a.dtype;
    p.b_dtype = b.dtype;
    p.N = N;
    p.gran_a_k = gran_a_k;
    p.gran_b_k = gran_b_k;
    p.gran_b_mn = gran_b_mn;
    p.sa = &sa;
    p.sb = &sb;
    set_out(p, d, View());
    for (int64_t g = 0; g < G; g++) {
      int32_t rows;
      std::memcpy(&rows, mm.ptr1(g), 4);
      if (rows < 0 || rows > Mmax) {
        fail(GO_ERR_INVALID_ARGUMENT, "masked_m[" + std::to_string(g) + "] = " + std::to_string(rows) +
                                          " is outside [0, " + std::to_string(Mmax) + "]");
      }
      // Whole BLOCK_M = 128 tiles are computed (rows past masked_m from A's padding); SM90 zeroes 64-row chunks
      // starting at or after masked_m (deepgemm-ops.md §5.4); rows beyond the last tile are not written.
      int64_t tile_end = std::min<int64_t>(Mmax, align_up(rows, kMaskedBlockM));
      for (int64_t i = 0; i < tile_end; i++) {
        RowJob r;
        r.zero = K == 0 || (sm90 && i / 64 * 64 >= rows);
        r.arow = da.data() + (g * Mmax + i) * K;
        r.bbase = db.data() + g * N * K;
        r.K = K;
        r.sa_row = g * sfa_rows + i / gran_a_mn;
        r.sb_row0 = g * sfb_rows;
        r.drow = d.ptr3(g, i, 0);
        p.rows.push_back(r);
      }
    }
    run_plan(p);
  });
}

int32_t go_k_grouped_fp8_gemm(const go_tensor* a_, const go_tensor* sfa_, const go_tensor* b_, const go_tensor* sfb_,
                              const go_tensor* c_, const go_tensor* d_, const go_tensor* ks_, int32_t layout,
                              int32_t gran_k, int32_t model) {
  return guard([&] {
    if (layout != GO_K_GROUPED_SM90_NT_FLAT && layout != GO_K_GROUPED_SM100_TN) {
      fail(GO_ERR_INVALID_ARGUMENT, "layout " + std::to_string(layout) + " is neither SM90_NT_FLAT (0) nor SM100_TN (1)");
    }
    if (gran_k < 1) fail(GO_ERR_INVALID_ARGUMENT, "gran_k must be >= 1, got " + std::to_string(gran_k));
    bool flat = layout == GO_K_GROUPED_SM90_NT_FLAT;
    View d = view_of(d_, "d", {GO_F32}, 3), c = view_of(c_, "c", {GO_F32}, 3, true);
    int64_t G = d.shape[0], M = d.shape[1], N = d.shape[2];
    if (c.present()) expect_shape(c, {G, M, N});
    View ks = view_of(ks_, "ks", {GO_I32}, 1);
    expect_shape(ks, {G});
    std::vector<int64_t> kv(static_cast<size_t>(G)), start(static_cast<size_t>(G)), kb0(static_cast<size_t>(G));
    int64_t total_k = 0, total_kb = 0;
    for (int64_t g = 0; g < G; g++) {
      int32_t k;
      std::memcpy(&k, ks.ptr1(g), 4);
      if (k < 0) fail(GO_ERR_INVALID_ARGUMENT, "ks[" + std::to_string(g) + "] = " + std::to_string(k) + " is negative");
      kv[size_t(g)] = k;
      start[size_t(g)] = total_k;
      kb0[size_t(g)] = total_kb;
      if (__builtin_add_overflow(total_k, int64_t(k), &total_k) || total_k > (int64_t(1) << 48)) {
        fail(GO_ERR_INVALID_ARGUMENT, "ks: the sum of the group K values exceeds 2^48");
      }
      total_kb += ceil_div(k, gran_k);
    }
    View a = view_of(a_, "a", kFp8, flat ? 1 : 2), b = view_of(b_, "b", kFp8, flat ? 1 : 2);
    View sfa = view_of(sfa_, "sfa", kScale, 2), sfb = view_of(sfb_, "sfb", kScale, 2);
    if (flat) {
      // 64-bit products: numel(A) == M·ΣK overflowed int32 in DeepGEMM once (deepgemm-ops.md §14.1).
      expect_shape(a, {checked_mul(M, total_k, "a (M·ΣK)")});
      expect_shape(b, {checked_mul(N, total_k, "b (N·ΣK)")});
      expect_shape(sfa, {M, total_kb});
      expect_shape(sfb, {N, total_kb});
    } else {
      expect_shape(a, {total_k, M});
      expect_shape(b, {total_k, N});
      expect_shape(sfa, {total_kb, M});
      expect_shape(sfb, {total_kb, N});
    }
    no_overlap(d, {&a, &b, &sfa, &sfb, &ks});
    expect_no_overlap(d, c, true);
    ScaleTable sa = scale_table(sfa, !flat), sb = scale_table(sfb, !flat);
    int32_t m = fp8_model(model, GO_MODEL_SM90_1D1D, gran_k, gran_k, sa, sb);
    if (M == 0 || N == 0) return;
    std::vector<Dec> da(size_t(M * total_k)), db(size_t(N * total_k));
    for (int64_t g = 0; g < G; g++) {
      int64_t k = kv[size_t(g)], s = start[size_t(g)];
      Dec* oa = da.data() + M * s;
      Dec* ob = db.data() + N * s;
      if (flat) {
        // Group g: an [M, k] row-major block at element M·s of the flat buffer.
        for (int64_t i = 0; i < M * k; i++) {
          oa[i] = decode(uint8_t(*a.ptr1(M * s + i)), a.dtype == GO_E4M3 ? kE4M3 : kE5M2);
        }
        for (int64_t i = 0; i < N * k; i++) {
          ob[i] = decode(uint8_t(*b.ptr1(N * s + i)), b.dtype == GO_E4M3 ? kE4M3 : kE5M2);
        }
      } else {
        decode_rows(a, 0, M, s, k, true, oa);
        decode_rows(b, 0, N, s, k, true, ob);
      }
    }
    GemmPlan p;
    p.model = m;
    p.a_dtype = a.dtype;
    p.b_dtype = b.dtype;
    p.N = N;
    p.gran_a_k = gran_k;
    p.gran_b_k = gran_k;
    p.gran_b_mn = 1;
    p.sa = &sa;
    p.sb = &sb;
    set_out(p, d, c);
    // The models compute D = C + A_g·B_gᵀ; sm90_1d1d: fl32(C + F) (deepgemm-ops.md §6.2).
    for (int64_t g = 0; g < G; g++) {
      int64_t k = kv[size_t(g)];
      for (int64_t i = 0; i < M; i++) {
        RowJob r;
        r.arow = da.data() + M * start[size_t(g)] + i * k;
        r.bbase = db.data() + N * start[size_t(g)];
        r.K = k;
        r.sa_row = i;
        r.sb_row0 = 0;
        r.sf_col0 = kb0[size_t(g)];
        r.drow = d.ptr3(g, i, 0);
        r.crow = c.present() ? c.ptr3(g, i, 0) : nullptr;
        p.rows.push_back(r);
      }
    }
    // k_g == 0: D[g] = C[g] (or 0): every model gives that with an empty sum except rounding of an absent C; handle
    // it explicitly so the copy is bit-exact (also for NaN payloads).
    GemmPlan rest = p;
    rest.rows.clear();
    for (const RowJob& r : p.rows) {
      if (r.K == 0) {
        for (int64_t n = 0; n < N; n++) {
          char* dp = r.drow + n * p.d_col_stride;
          if (r.crow) std::memmove(dp, r.crow + n * p.c_col_stride, 4);
          else std::memset(dp, 0, 4);
        }
      } else {
        rest.rows.push_back(r);
      }
    }
    run_plan(rest);
  });
}

}  // extern "C"
