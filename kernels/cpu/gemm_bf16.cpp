// BF16 GEMM families of the ABI (deepgemm-ops.md §5.2 BF16 list, numerics §6.4): normal, m-grouped contiguous,
// masked, k-grouped tn. Same row/group rules as the FP8 families; no scale factors.
#include <algorithm>
#include <string>
#include <vector>

#include "gemm_core.hpp"
#include "gemm_rows.hpp"

using namespace go;

extern "C" {

int32_t go_bf16_gemm(const go_tensor* a_, const go_tensor* b_, const go_tensor* c_, const go_tensor* d_,
                     int32_t model) {
  return guard([&] {
    View a = view_of(a_, "a", {GO_BF16}, 2), b = view_of(b_, "b", {GO_BF16}, 2);
    View d = view_of(d_, "d", kOut, 2), c = view_of(c_, "c", kOut, 2, true);
    int64_t M = a.shape[0], K = a.shape[1], N = b.shape[0];
    expect_shape(b, {N, K});
    expect_shape(d, {M, N});
    if (c.present()) expect_shape(c, {M, N});
    check_c(c, d);
    no_overlap(d, {&a, &b});
    expect_no_overlap(d, c, true);
    int32_t m = bf16_model(model);
    if (M == 0 || N == 0) return;
    if (K == 0) {
      copy_c_or_zero(d, c);
      return;
    }
    std::vector<Dec> da(size_t(M * K)), db(size_t(N * K));
    decode_rows(a, 0, M, 0, K, false, da.data());
    decode_rows(b, 0, N, 0, K, false, db.data());
    GemmPlan p = make_plan(m, GO_BF16, GO_BF16, N, d, c);
    add_normal_rows(p, da.data(), db.data(), M, K, ScaleRows{}, d, c);
    run_plan(p);
  });
}

int32_t go_m_grouped_bf16_gemm_contiguous(const go_tensor* a_, const go_tensor* b_, const go_tensor* d_,
                                          const go_tensor* layout_, int32_t use_psum_layout, int32_t mk_alignment,
                                          int32_t model) {
  return guard([&] {
    View a = view_of(a_, "a", {GO_BF16}, 2), b = view_of(b_, "b", {GO_BF16}, 3), d = view_of(d_, "d", kOut, 2);
    if (mk_alignment < 1) {
      fail(GO_ERR_INVALID_ARGUMENT, "mk_alignment must be >= 1, got " + std::to_string(mk_alignment));
    }
    int64_t M = a.shape[0], K = a.shape[1], G = b.shape[0], N = b.shape[1];
    expect_shape(b, {G, N, K});
    expect_shape(d, {M, N});
    View gl = view_of(layout_, "grouped_layout", {GO_I32}, 1);
    expect_shape(gl, {use_psum_layout ? G : M});
    no_overlap(d, {&a, &b, &gl});
    int32_t m = bf16_model(model);
    // As the FP8 form; SM90 (the bf16 model) zeroes 64-row chunks that start with -1.
    std::vector<int64_t> group = contiguous_row_groups(gl, M, G, use_psum_layout, mk_alignment, m == GO_MODEL_BF16 || m == GO_MODEL_EXACT);
    if (M == 0 || N == 0) return;
    std::vector<Dec> da(size_t(M * K)), db(size_t(G * N * K));
    decode_rows(a, 0, M, 0, K, false, da.data());
    decode_groups(b, db.data());
    GemmPlan p = make_plan(m, GO_BF16, GO_BF16, N, d, View());
    add_contiguous_rows(p, group, da.data(), db.data(), N, K, ScaleRows{}, d);
    run_plan(p);
  });
}

int32_t go_m_grouped_bf16_gemm_masked(const go_tensor* a_, const go_tensor* b_, const go_tensor* d_,
                                      const go_tensor* masked_m_, int32_t model) {
  return guard([&] {
    View a = view_of(a_, "a", {GO_BF16}, 3), b = view_of(b_, "b", {GO_BF16}, 3), d = view_of(d_, "d", kOut, 3);
    int64_t G = a.shape[0], Mmax = a.shape[1], K = a.shape[2], N = b.shape[1];
    expect_shape(b, {G, N, K});
    expect_shape(d, {G, Mmax, N});
    View mm = view_of(masked_m_, "masked_m", {GO_I32}, 1);
    expect_shape(mm, {G});
    no_overlap(d, {&a, &b, &mm});
    int32_t m = bf16_model(model);
    if (N == 0 || Mmax == 0) return;
    const std::vector<int32_t> rows = read_masked_m(mm, G, Mmax);
    std::vector<Dec> da(size_t(Mmax * K)), db(size_t(N * K));
    for (int64_t g = 0; g < G; g++) {
      if (rows[size_t(g)] == 0) continue;  // align(0, 128) = 0: no tile of the group is computed
      decode_group(a, g, da.data());
      decode_group(b, g, db.data());
      GemmPlan p = make_plan(m, GO_BF16, GO_BF16, N, d, View());
      // As the FP8 form: whole 128-row tiles, SM90 (bf16 model) zeroes 64-row chunks at or after masked_m.
      add_masked_group(p, g, rows[size_t(g)], da.data(), db.data(), Mmax, N, K, ScaleRows{},
                       m == GO_MODEL_BF16 || m == GO_MODEL_EXACT, d);
      run_plan(p);
    }
  });
}

int32_t go_k_grouped_bf16_gemm(const go_tensor* a_, const go_tensor* b_, const go_tensor* c_, const go_tensor* d_,
                               const go_tensor* ks_, int32_t model) {
  return guard([&] {
    View d = view_of(d_, "d", {GO_F32}, 3), c = view_of(c_, "c", {GO_F32}, 3, true);
    int64_t G = d.shape[0], M = d.shape[1], N = d.shape[2];
    if (c.present()) expect_shape(c, {G, M, N});
    View ks = view_of(ks_, "ks", {GO_I32}, 1);
    expect_shape(ks, {G});
    KGroups kg = read_k_groups(ks, 1);
    int64_t total = kg.total_k;
    View a = view_of(a_, "a", {GO_BF16}, 2), b = view_of(b_, "b", {GO_BF16}, 2);
    expect_shape(a, {total, M});
    expect_shape(b, {total, N});
    no_overlap(d, {&a, &b, &ks});
    expect_no_overlap(d, c, true);
    int32_t m = bf16_model(model);
    if (M == 0 || N == 0) return;
    std::vector<Dec> da(size_t(M * total)), db(size_t(N * total));
    for (int64_t g = 0; g < G; g++) {
      int64_t k = kg.k[size_t(g)], s = kg.start[size_t(g)];
      decode_rows(a, 0, M, s, k, true, da.data() + M * s);
      decode_rows(b, 0, N, s, k, true, db.data() + N * s);
    }
    GemmPlan p = make_plan(m, GO_BF16, GO_BF16, N, d, c);
    add_k_grouped_rows(p, kg, da.data(), db.data(), M, d, c);
    run_plan(p);
  });
}

}  // extern "C"
