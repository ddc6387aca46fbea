// BF16 GEMM families of the ABI (deepgemm-ops.md §5.2 BF16 list, numerics §6.4): normal, m-grouped contiguous,
// masked, k-grouped tn. Same row/group rules as the FP8 families; no scale factors.
#include <algorithm>
#include <string>
#include <vector>

#include "gemm_core.hpp"

namespace go {
namespace {

int64_t align_up(int64_t a, int64_t b) { return (a + b - 1) / b * b; }

const std::initializer_list<int32_t> kOut{GO_F32, GO_BF16};

GemmPlan bf16_plan(int32_t model, const View& d, const View& c, int64_t N) {
  GemmPlan p;
  p.model = model;
  p.a_dtype = GO_BF16;
  p.b_dtype = GO_BF16;
  p.N = N;
  p.d_dtype = d.dtype;
  p.d_col_stride = d.strides[d.ndim - 1] * d.esize;
  p.c_col_stride = c.present() ? c.strides[c.ndim - 1] * c.esize : 0;
  return p;
}

}  // namespace
}  // namespace go

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
    if (c.present()) {
      expect_shape(c, {M, N});
      if (c.dtype != d.dtype) fail(GO_ERR_INVALID_ARGUMENT, "c: dtype differs from d's");
    }
    expect_no_overlap(d, a, false);
    expect_no_overlap(d, b, false);
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
    GemmPlan p = bf16_plan(m, d, c, N);
    p.rows.resize(size_t(M));
    for (int64_t i = 0; i < M; i++) {
      RowJob& r = p.rows[size_t(i)];
      r.arow = da.data() + i * K;
      r.bbase = db.data();
      r.K = K;
      r.drow = d.ptr2(i, 0);
      r.crow = c.present() ? c.ptr2(i, 0) : nullptr;
    }
    run_plan(p);
  });
}

int32_t go_m_grouped_bf16_gemm_contiguous(const go_tensor* a_, const go_tensor* b_, const go_tensor* d_,
                                          const go_tensor* layout_, int32_t use_psum_layout, int32_t mk_alignment,
                                          int32_t model) {
  return guard([&] {
    View a = view_of(a_, "a", {GO_BF16}, 2), b = view_of(b_, "b", {GO_BF16}, 3), d = view_of(d_, "d", kOut, 2);
    if (mk_alignment < 1) fail(GO_ERR_INVALID_ARGUMENT, "mk_alignment must be >= 1");
    int64_t M = a.shape[0], K = a.shape[1], G = b.shape[0], N = b.shape[1];
    expect_shape(b, {G, N, K});
    expect_shape(d, {M, N});
    View gl = view_of(layout_, "grouped_layout", {GO_I32}, 1);
    expect_shape(gl, {use_psum_layout ? G : M});
    expect_no_overlap(d, a, false);
    expect_no_overlap(d, b, false);
    expect_no_overlap(d, gl, false);
    int32_t m = bf16_model(model);
    auto label = [&](int64_t i) {
      int32_t v;
      std::memcpy(&v, gl.ptr1(i), 4);
      return v;
    };
    std::vector<int64_t> group(size_t(M), -2);
    if (!use_psum_layout) {
      for (int64_t i = 0; i < M; i++) {
        int32_t v = label(i);
        if (v < -1 || v >= G) {
          fail(GO_ERR_INVALID_ARGUMENT, "grouped_layout[" + std::to_string(i) + "] = " + std::to_string(v) +
                                            " is outside [-1, " + std::to_string(G) + ")");
        }
      }
      // As the FP8 form: the tile's group comes from its first row; SM90 (the bf16 model) zeroes 64-row chunks that
      // start with -1.
      for (int64_t i = 0; i < M; i++) {
        int64_t tile = i / mk_alignment * mk_alignment;
        int64_t chunk = tile + (i - tile) / 64 * 64;
        if (m == GO_MODEL_BF16 && label(chunk) == -1) group[size_t(i)] = -1;
        else group[size_t(i)] = std::max<int32_t>(0, label(tile));
      }
    } else {
      int64_t prev_end = 0;
      for (int64_t g = 0; g < G; g++) {
        int64_t end = label(g);
        if (end < prev_end || end > M) {
          fail(GO_ERR_INVALID_ARGUMENT, "grouped_layout[" + std::to_string(g) + "] = " + std::to_string(end) +
                                            " must be >= the previous end and <= M");
        }
        int64_t start = align_up(prev_end, mk_alignment);
        for (int64_t i = start; i < end; i++) group[size_t(i)] = g;
        if ((use_psum_layout & 2) && end > start) {  // ensure_zero_padding: compute the last tile's tail
          for (int64_t i = end; i < std::min(M, align_up(end, mk_alignment)); i++) group[size_t(i)] = g;
        }
        prev_end = end;
      }
    }
    if (M == 0 || N == 0) return;
    std::vector<Dec> da(size_t(M * K)), db(size_t(G * N * K));
    decode_rows(a, 0, M, 0, K, false, da.data());
    decode_groups(b, db.data());
    GemmPlan p = bf16_plan(m, d, View(), N);
    for (int64_t i = 0; i < M; i++) {
      int64_t g = group[size_t(i)];
      if (g == -2) continue;
      RowJob r;
      r.zero = g == -1 || K == 0;
      if (g < 0) g = 0;
      r.arow = da.data() + i * K;
      r.bbase = db.data() + g * N * K;
      r.K = K;
      r.drow = d.ptr2(i, 0);
      p.rows.push_back(r);
    }
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
    expect_no_overlap(d, a, false);
    expect_no_overlap(d, b, false);
    expect_no_overlap(d, mm, false);
    int32_t m = bf16_model(model);
    if (N == 0 || Mmax == 0) return;
    std::vector<Dec> da(size_t(G * Mmax * K)), db(size_t(G * N * K));
    decode_groups(a, da.data());
    decode_groups(b, db.data());
    GemmPlan p = bf16_plan(m, d, View(), N);
    for (int64_t g = 0; g < G; g++) {
      int32_t rows;
      std::memcpy(&rows, mm.ptr1(g), 4);
      if (rows < 0 || rows > Mmax) {
        fail(GO_ERR_INVALID_ARGUMENT, "masked_m[" + std::to_string(g) + "] = " + std::to_string(rows) +
                                          " is outside [0, " + std::to_string(Mmax) + "]");
      }
      // As the FP8 form: whole 128-row tiles, SM90 (bf16 model) zeroes 64-row chunks at or after masked_m.
      int64_t tile_end = std::min<int64_t>(Mmax, align_up(rows, 128));
      for (int64_t i = 0; i < tile_end; i++) {
        RowJob r;
        r.zero = K == 0 || (m == GO_MODEL_BF16 && i / 64 * 64 >= rows);
        r.arow = da.data() + (g * Mmax + i) * K;
        r.bbase = db.data() + g * N * K;
        r.K = K;
        r.drow = d.ptr3(g, i, 0);
        p.rows.push_back(r);
      }
    }
    run_plan(p);
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
    std::vector<int64_t> kv(static_cast<size_t>(G)), start(static_cast<size_t>(G));
    int64_t total = 0;
    for (int64_t g = 0; g < G; g++) {
      int32_t k;
      std::memcpy(&k, ks.ptr1(g), 4);
      if (k < 0) fail(GO_ERR_INVALID_ARGUMENT, "ks[" + std::to_string(g) + "] = " + std::to_string(k) + " is negative");
      kv[size_t(g)] = k;
      start[size_t(g)] = total;
      if (__builtin_add_overflow(total, int64_t(k), &total) || total > (int64_t(1) << 48)) {
        fail(GO_ERR_INVALID_ARGUMENT, "ks: the sum of the group K values exceeds 2^48");
      }
    }
    View a = view_of(a_, "a", {GO_BF16}, 2), b = view_of(b_, "b", {GO_BF16}, 2);
    expect_shape(a, {total, M});
    expect_shape(b, {total, N});
    expect_no_overlap(d, a, false);
    expect_no_overlap(d, b, false);
    expect_no_overlap(d, ks, false);
    expect_no_overlap(d, c, true);
    int32_t m = bf16_model(model);
    if (M == 0 || N == 0) return;
    std::vector<Dec> da(size_t(M * total)), db(size_t(N * total));
    GemmPlan p = bf16_plan(m, d, c, N);
    for (int64_t g = 0; g < G; g++) {
      int64_t k = kv[size_t(g)], s = start[size_t(g)];
      decode_rows(a, 0, M, s, k, true, da.data() + M * s);
      decode_rows(b, 0, N, s, k, true, db.data() + N * s);
      for (int64_t i = 0; i < M; i++) {
        if (k == 0) {  // D[g] = C[g] or 0, bit for bit
          for (int64_t n = 0; n < N; n++) {
            if (c.present()) std::memmove(d.ptr3(g, i, n), c.ptr3(g, i, n), 4);
            else std::memset(d.ptr3(g, i, n), 0, 4);
          }
          continue;
        }
        RowJob r;
        r.arow = da.data() + M * s + i * k;
        r.bbase = db.data() + N * s;
        r.K = k;
        r.drow = d.ptr3(g, i, 0);
        r.crow = c.present() ? c.ptr3(g, i, 0) : nullptr;
        p.rows.push_back(r);
      }
    }
    run_plan(p);
  });
}

}  // extern "C"
