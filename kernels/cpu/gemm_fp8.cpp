// FP8 GEMM families of the ABI (deepgemm-ops.md §5): normal, m-grouped contiguous (classic and psum), masked,
// k-grouped (SM90 flat blocks and SM100 tn), skip-head-mid. Validation first, then a GemmPlan for gemm_core.
#include <algorithm>
#include <string>
#include <vector>

#include "gemm_core.hpp"
#include "gemm_rows.hpp"

namespace go {
namespace {

void check_grans(int32_t a_mn, int32_t a_k, int32_t b_mn, int32_t b_k) {
  if (a_mn < 1 || a_k < 1 || b_mn < 1 || b_k < 1) {
    fail(GO_ERR_INVALID_ARGUMENT, "scale granularities must be >= 1, got (" + std::to_string(a_mn) + ", " +
                                      std::to_string(a_k) + ") and (" + std::to_string(b_mn) + ", " +
                                      std::to_string(b_k) + ")");
  }
}

const std::initializer_list<int32_t> kFp8{GO_E4M3, GO_E5M2};
const std::initializer_list<int32_t> kScale{GO_F32, GO_UE8M0};

// A plan of the FP8 families: make_plan plus the recipe and the scale tables.
GemmPlan fp8_plan(int32_t model, const View& a, const View& b, int64_t N, const View& d, const View& c,
                  int64_t gran_a_k, int64_t gran_b_k, int64_t gran_b_mn, const ScaleTable& sa, const ScaleTable& sb) {
  GemmPlan p = make_plan(model, a.dtype, b.dtype, N, d, c);
  p.gran_a_k = gran_a_k;
  p.gran_b_k = gran_b_k;
  p.gran_b_mn = gran_b_mn;
  p.sa = &sa;
  p.sb = &sb;
  return p;
}

// Which rows an m-grouped kernel writes is the architecture's rule, not the arithmetic's: SM90 writes zeros for 64-row
// chunks whose first row is -1 (contiguous) or at or past masked_m (masked), SM100 computes them (deepgemm-ops.md
// §5.3, §5.4). The ABI names no architecture, so every model but SM100's takes SM90's rule, as the reference's default
// arch does (reference/gemm/grouped_gemm.ts).
bool sm90_row_rules(int32_t model) { return model != GO_MODEL_SM100_1D1D; }

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
    GemmPlan p = fp8_plan(m, a, b, N, d, c, gran_a_k, gran_b_k, gran_b_mn, sa, sb);
    add_normal_rows(p, da.data(), db.data(), M, K, ScaleRows{gran_a_mn}, d, c);
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
    const int64_t head = int64_t(left) + int64_t(right);  // in 64 bits: left + right can exceed INT32_MAX
    if (left < 0 || mid < 0 || right < 0 || head == 0) {
      fail(GO_ERR_INVALID_ARGUMENT, "head_splits (" + std::to_string(left) + ", " + std::to_string(mid) + ", " +
                                        std::to_string(right) + ") need non-negative parts and left + right > 0");
    }
    int64_t M = a.shape[0], K = a.shape[1], N = b.shape[0];
    expect_shape(b, {N, K});
    if (N % head != 0) {
      fail(GO_ERR_INVALID_ARGUMENT, "b: " + std::to_string(N) + " rows is not a multiple of left + right = " +
                                        std::to_string(head));
    }
    int64_t heads = N / head;
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
    GemmPlan p = fp8_plan(m, a, b, N, d, View(), gran_a_k, gran_b_k, gran_b_mn, sa, sb);
    p.head_left = left;
    p.head_mid = mid;
    p.head_right = right;
    add_normal_rows(p, da.data(), db.data(), M, K, ScaleRows{gran_a_mn}, d, View());
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
    std::vector<int64_t> group = contiguous_row_groups(gl, M, G, use_psum_layout, mk_alignment, sm90_row_rules(m));
    if (M == 0 || N == 0) return;
    std::vector<Dec> da(size_t(M * K)), db(size_t(G * N * K));
    decode_rows(a, 0, M, 0, K, false, da.data());
    decode_groups(b, db.data());
    GemmPlan p = fp8_plan(m, a, b, N, d, View(), gran_a_k, gran_b_k, gran_b_mn, sa, sb);
    add_contiguous_rows(p, group, da.data(), db.data(), N, K, ScaleRows{gran_a_mn, 0, ceil_div(N, gran_b_mn)}, d);
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
    if (N == 0 || Mmax == 0) return;
    const std::vector<int32_t> rows = read_masked_m(mm, G, Mmax);
    // One group at a time: decoding every group's B up front took ~11 GB at 32 groups of 6144 x 7168.
    std::vector<Dec> da(size_t(Mmax * K)), db(size_t(N * K));
    ScaleRows sr{gran_a_mn, ceil_div(Mmax, gran_a_mn), ceil_div(N, gran_b_mn)};
    for (int64_t g = 0; g < G; g++) {
      if (rows[size_t(g)] == 0) continue;  // align(0, 128) = 0: no tile of the group is computed or written
      decode_group(a, g, da.data());
      decode_group(b, g, db.data());
      GemmPlan p = fp8_plan(m, a, b, N, d, View(), gran_a_k, gran_b_k, gran_b_mn, sa, sb);
      add_masked_group(p, g, rows[size_t(g)], da.data(), db.data(), Mmax, N, K, sr, sm90_row_rules(m), d);
      run_plan(p);
    }
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
    KGroups kg = read_k_groups(ks, gran_k);
    int64_t total_k = kg.total_k, total_kb = kg.total_kb;
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
      int64_t k = kg.k[size_t(g)], s = kg.start[size_t(g)];
      Dec* oa = da.data() + M * s;
      Dec* ob = db.data() + N * s;
      if (flat) {
        // Group g: an [M, k] row-major block at element M·s of the flat buffer.
        const Dec* ta = fp8_decode_table(a.dtype == GO_E4M3);
        const Dec* tb = fp8_decode_table(b.dtype == GO_E4M3);
        for (int64_t i = 0; i < M * k; i++) oa[i] = ta[uint8_t(*a.ptr1(M * s + i))];
        for (int64_t i = 0; i < N * k; i++) ob[i] = tb[uint8_t(*b.ptr1(N * s + i))];
      } else {
        decode_rows(a, 0, M, s, k, true, oa);
        decode_rows(b, 0, N, s, k, true, ob);
      }
    }
    GemmPlan p = fp8_plan(m, a, b, N, d, c, gran_k, gran_k, 1, sa, sb);
    // The models compute D = C + A_g·B_gᵀ; sm90_1d1d: fl32(C + F) (deepgemm-ops.md §6.2).
    add_k_grouped_rows(p, kg, da.data(), db.data(), M, d, c);
    run_plan(p);
  });
}

}  // extern "C"
