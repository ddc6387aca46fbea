// Row plans shared by the FP8 and BF16 GEMM families: the output checks, the plan's operand/output fields, and which
// output rows are computed from which decoded A/B rows (and scale rows) per layout: normal, m-grouped contiguous
// (classic and psum), m-grouped masked and k-grouped (deepgemm-ops.md §5.3, §5.4, §6.2). BF16 plans ignore the scale
// rows.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <vector>

#include "common.hpp"
#include "gemm_core.hpp"

namespace go {

inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
inline int64_t align_up(int64_t a, int64_t b) { return ceil_div(a, b) * b; }

// Output (and C) dtypes of every GEMM family.
inline const std::initializer_list<int32_t> kOut{GO_F32, GO_BF16};

// Fails when a present C has another dtype than D.
void check_c(const View& c, const View& d);

// Fails when D overlaps one of the inputs.
void no_overlap(const View& d, std::initializer_list<const View*> inputs);

// A plan with the model, operand dtypes, N and the D/C column strides set (c may be absent).
GemmPlan make_plan(int32_t model, int32_t a_dtype, int32_t b_dtype, int64_t N, const View& d, const View& c);

// Where a row's scale factors are (FP8 families; BF16 plans keep the defaults, which nothing reads).
struct ScaleRows {
  int64_t gran_a_mn = 1;  // A rows per sfa row
  int64_t sfa_rows = 0;   // sfa rows per group (masked: A is grouped)
  int64_t sfb_rows = 0;   // sfb rows per group (grouped B)
};

// Normal layout: D row i from A row i (da + i·K) and B (db); C row i when c is present.
void add_normal_rows(GemmPlan& p, const Dec* da, const Dec* db, int64_t M, int64_t K, const ScaleRows& sr,
                     const View& d, const View& c);

// Row -> group of an m-grouped contiguous call, after validating grouped_layout: g >= 0, -1 (write zeros) or -2 (not
// written). Classic layout: a tile's group is read from its first row, clamped at 0; sm90_chunks: a 64-row chunk
// whose first row is -1 is zeroed. psum layout (bit 0): cumulative end rows; bit 1 = ensure_zero_padding.
std::vector<int64_t> contiguous_row_groups(const View& grouped_layout, int64_t M, int64_t G, int32_t use_psum_layout,
                                           int64_t mk_alignment, bool sm90_chunks);

// m-grouped contiguous: D row i from A row i and B group group[i] (da [M, K], db [G, N, K]).
void add_contiguous_rows(GemmPlan& p, const std::vector<int64_t>& group, const Dec* da, const Dec* db, int64_t N,
                         int64_t K, const ScaleRows& sr, const View& d);

// m-grouped masked (da [G, Mmax, K], db [G, N, K]): whole BLOCK_M = 128 tiles up to masked_m[g] (validated to lie in
// [0, Mmax]); sm90_chunks: 64-row chunks starting at or after masked_m are zeroed; rows past the last tile untouched.
// masked_m[g] for every group, checked to lie in [0, Mmax] (before anything is written).
std::vector<int32_t> read_masked_m(const View& masked_m, int64_t G, int64_t Mmax);
// The row jobs of group g of a masked call: da_g, db_g are that group's decoded A [Mmax, K] and B [N, K] (groups are
// planned and run one at a time, so only one group's operands are decoded at once).
void add_masked_group(GemmPlan& p, int64_t g, int32_t rows, const Dec* da_g, const Dec* db_g, int64_t Mmax, int64_t N,
                      int64_t K, const ScaleRows& sr, bool sm90_chunks, const View& d);

// The K values of a k-grouped call: per group k, its first K index and first scale column (gran_k per column).
struct KGroups {
  std::vector<int64_t> k, start, kb0;
  int64_t total_k = 0, total_kb = 0;
};

// Reads and validates ks (i32 [G]): every k >= 0, ΣK <= 2^48.
KGroups read_k_groups(const View& ks, int64_t gran_k);

// k-grouped f32 D[g] = C[g] + A_g·B_gᵀ with A_g at da + M·start[g] ([M, k] row-major) and B_g at db + N·start[g].
// Groups with k = 0 are written here, D[g] = C[g] or 0 bit for bit (also NaN payloads); the others become rows.
void add_k_grouped_rows(GemmPlan& p, const KGroups& kg, const Dec* da, const Dec* db, int64_t M, const View& d,
                        const View& c);

}  // namespace go
