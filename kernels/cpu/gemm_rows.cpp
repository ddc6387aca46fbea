// Row plans shared by the FP8 and BF16 GEMM families (see gemm_rows.hpp).
#include "gemm_rows.hpp"

#include <algorithm>
#include <cstring>
#include <string>

namespace go {

void check_c(const View& c, const View& d) {
  if (c.present() && c.dtype != d.dtype) {
    fail(GO_ERR_INVALID_ARGUMENT,
         std::string("c: dtype ") + dtype_name(c.dtype) + " differs from d's " + dtype_name(d.dtype));
  }
}

void no_overlap(const View& d, std::initializer_list<const View*> inputs) {
  for (const View* v : inputs) expect_no_overlap(d, *v, false);
}

GemmPlan make_plan(int32_t model, int32_t a_dtype, int32_t b_dtype, int64_t N, const View& d, const View& c) {
  GemmPlan p;
  p.model = model;
  p.a_dtype = a_dtype;
  p.b_dtype = b_dtype;
  p.N = N;
  p.d_dtype = d.dtype;
  p.d_col_stride = d.strides[d.ndim - 1] * d.esize;
  p.c_col_stride = c.present() ? c.strides[c.ndim - 1] * c.esize : 0;
  return p;
}

void add_normal_rows(GemmPlan& p, const Dec* da, const Dec* db, int64_t M, int64_t K, const ScaleRows& sr,
                     const View& d, const View& c) {
  for (int64_t i = 0; i < M; i++) {
    RowJob r;
    r.arow = da + i * K;
    r.bbase = db;
    r.K = K;
    r.sa_row = i / sr.gran_a_mn;
    r.drow = d.ptr2(i, 0);
    r.crow = c.present() ? c.ptr2(i, 0) : nullptr;
    p.rows.push_back(r);
  }
}

std::vector<int64_t> contiguous_row_groups(const View& gl, int64_t M, int64_t G, int32_t use_psum_layout,
                                           int64_t mk_alignment, bool sm90_chunks) {
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
    // deepgemm-ops.md §5.3: the tile's group is read from its first row, clamped at 0; SM90 writes zeros for a
    // 64-row warpgroup chunk whose first row is -1.
    for (int64_t i = 0; i < M; i++) {
      int64_t tile = i / mk_alignment * mk_alignment;
      int64_t chunk = tile + (i - tile) / 64 * 64;
      if (sm90_chunks && label(chunk) == -1) group[size_t(i)] = -1;
      else group[size_t(i)] = std::max<int32_t>(0, label(tile));
      // A row computed with the clamped group 0 reads B[0]: with G = 0 there is none (it would read past b).
      if (G == 0 && group[size_t(i)] >= 0) {
        fail(GO_ERR_INVALID_ARGUMENT, "grouped_layout: row " + std::to_string(i) +
                                          " is computed with group 0 (a -1 tile is clamped to 0), but b has no groups");
      }
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
  return group;
}

void add_contiguous_rows(GemmPlan& p, const std::vector<int64_t>& group, const Dec* da, const Dec* db, int64_t N,
                         int64_t K, const ScaleRows& sr, const View& d) {
  for (int64_t i = 0; i < int64_t(group.size()); i++) {
    int64_t g = group[size_t(i)];
    if (g == -2) continue;
    RowJob r;
    r.zero = g == -1 || K == 0;
    if (g < 0) g = 0;
    r.arow = da + i * K;
    r.bbase = db + g * N * K;
    r.K = K;
    r.sa_row = i / sr.gran_a_mn;
    r.sb_row0 = g * sr.sfb_rows;
    r.drow = d.ptr2(i, 0);
    p.rows.push_back(r);
  }
}

std::vector<int32_t> read_masked_m(const View& mm, int64_t G, int64_t Mmax) {
  std::vector<int32_t> out(static_cast<size_t>(G));
  for (int64_t g = 0; g < G; g++) {
    int32_t rows;
    std::memcpy(&rows, mm.ptr1(g), 4);
    if (rows < 0 || rows > Mmax) {
      fail(GO_ERR_INVALID_ARGUMENT, "masked_m[" + std::to_string(g) + "] = " + std::to_string(rows) +
                                        " is outside [0, " + std::to_string(Mmax) + "]");
    }
    out[size_t(g)] = rows;
  }
  return out;
}

void add_masked_group(GemmPlan& p, int64_t g, int32_t rows, const Dec* da_g, const Dec* db_g, int64_t Mmax, int64_t N,
                      int64_t K, const ScaleRows& sr, bool sm90_chunks, const View& d) {
  (void)N;
  constexpr int64_t kMaskedBlockM = 128;  // BLOCK_M of the masked kernels' tiles
  // Whole BLOCK_M = 128 tiles are computed (rows past masked_m from A's padding); SM90 zeroes 64-row chunks
  // starting at or after masked_m (deepgemm-ops.md §5.4); rows beyond the last tile are not written.
  int64_t tile_end = std::min<int64_t>(Mmax, align_up(rows, kMaskedBlockM));
  for (int64_t i = 0; i < tile_end; i++) {
    RowJob r;
    r.zero = K == 0 || (sm90_chunks && i / 64 * 64 >= rows);
    r.arow = da_g + i * K;
    r.bbase = db_g;
    r.K = K;
    r.sa_row = g * sr.sfa_rows + i / sr.gran_a_mn;
    r.sb_row0 = g * sr.sfb_rows;
    r.drow = d.ptr3(g, i, 0);
    p.rows.push_back(r);
  }
}

KGroups read_k_groups(const View& ks, int64_t gran_k) {
  int64_t G = ks.shape[0];
  KGroups kg;
  kg.k.resize(size_t(G));
  kg.start.resize(size_t(G));
  kg.kb0.resize(size_t(G));
  for (int64_t g = 0; g < G; g++) {
    int32_t k;
    std::memcpy(&k, ks.ptr1(g), 4);
    if (k < 0) fail(GO_ERR_INVALID_ARGUMENT, "ks[" + std::to_string(g) + "] = " + std::to_string(k) + " is negative");
    kg.k[size_t(g)] = k;
    kg.start[size_t(g)] = kg.total_k;
    kg.kb0[size_t(g)] = kg.total_kb;
    if (__builtin_add_overflow(kg.total_k, int64_t(k), &kg.total_k) || kg.total_k > (int64_t(1) << 48)) {
      fail(GO_ERR_INVALID_ARGUMENT, "ks: the sum of the group K values exceeds 2^48");
    }
    kg.total_kb += ceil_div(k, gran_k);
  }
  return kg;
}

void add_k_grouped_rows(GemmPlan& p, const KGroups& kg, const Dec* da, const Dec* db, int64_t M, const View& d,
                        const View& c) {
  int64_t N = p.N;
  for (int64_t g = 0; g < int64_t(kg.k.size()); g++) {
    int64_t k = kg.k[size_t(g)], s = kg.start[size_t(g)];
    for (int64_t i = 0; i < M; i++) {
      if (k == 0) {
        // k_g == 0: every model gives C[g] (or 0) from an empty sum except for the rounding of an absent C; copy
        // explicitly so the result is bit-exact (also for NaN payloads).
        for (int64_t n = 0; n < N; n++) {
          if (c.present()) std::memmove(d.ptr3(g, i, n), c.ptr3(g, i, n), 4);
          else std::memset(d.ptr3(g, i, n), 0, 4);
        }
        continue;
      }
      RowJob r;
      r.arow = da + M * s + i * k;
      r.bbase = db + N * s;
      r.K = k;
      r.sa_row = i;
      r.sb_row0 = 0;
      r.sf_col0 = kg.kb0[size_t(g)];
      r.drow = d.ptr3(g, i, 0);
      r.crow = c.present() ? c.ptr3(g, i, 0) : nullptr;
      p.rows.push_back(r);
    }
  }
}

}  // namespace go
