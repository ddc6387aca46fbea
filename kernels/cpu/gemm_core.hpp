// The GEMM engine shared by the FP8 and BF16 families: decoded operand rows, scale tables, one job per output row,
// the per-element models (numerics.md §8, deepgemm-ops.md §6) and the epilogues.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common.hpp"
#include "tensor_core.hpp"

namespace go {

// Scale factors as [rows][cols] tables: the fp32 value, and for power-of-two scales the exponent (block-scaled MMA
// uses only the exponent, numerics.md §8.1 Blackwell rows).
struct ScaleTable {
  int64_t rows = 0, cols = 0;
  std::vector<float> val;
  std::vector<int16_t> exp;    // exponent when the value is a power of two, else kNotPow2
  std::vector<uint8_t> isnan;  // 1 for NaN
  static constexpr int16_t kNotPow2 = INT16_MIN;
  const float* val_row(int64_t r) const { return val.data() + r * cols; }
  const int16_t* exp_row(int64_t r) const { return exp.data() + r * cols; }
  const uint8_t* nan_row(int64_t r) const { return isnan.data() + r * cols; }
  bool all_pow2() const;
};

// Builds a table from a scale view with `lead` leading (group) dims folded into rows: shape [..., rows, cols].
// transposed: the view is [cols, rows] (MN-major K-grouped SFs) and is read transposed.
ScaleTable scale_table(const View& v, bool transposed = false);

// Decodes a 2-D view [rows, K] (or, transposed, [K, rows]) of an fp8/bf16/f32 dtype into row-major Dec rows.
void decode_rows(const View& v, int64_t row0, int64_t rows, int64_t k0, int64_t K, bool transposed, Dec* out);
// Same for 3-D views [G, rows, K]: group g's rows go to out + g·rows·K.
void decode_groups(const View& v, Dec* out);
// Decodes group g of a [G, R, K] view into out ([R, K]).
void decode_group(const View& v, int64_t g, Dec* out);

// One output row: the A row, its scale row, the B rows (bbase + n·K), the D/C row addresses.
struct RowJob {
  const Dec* arow = nullptr;
  const Dec* bbase = nullptr;
  int64_t K = 0;
  int64_t sa_row = 0;    // row of the A scale table
  int64_t sb_row0 = 0;   // B scale table row of the group's first B row
  int64_t sf_col0 = 0;   // first scale column (K-grouped: the group's first K block)
  char* drow = nullptr;  // D element (row, 0)
  const char* crow = nullptr;  // C element (row, 0) or null
  bool zero = false;     // write 0 (SM90 skipped 64-row chunk)
};

struct GemmPlan {
  int32_t model = GO_MODEL_EXACT;
  int32_t a_dtype = GO_E4M3, b_dtype = GO_E4M3;
  int32_t d_dtype = GO_BF16;  // C has the same dtype
  int64_t N = 0;
  int64_t d_col_stride = 0, c_col_stride = 0;  // bytes per column step
  int64_t gran_a_k = 128, gran_b_k = 128, gran_b_mn = 1;
  const ScaleTable* sa = nullptr;  // null for BF16 families
  const ScaleTable* sb = nullptr;
  int64_t head_left = 0, head_mid = 0, head_right = 0;  // skip_head_mid column mapping (0 = identity)
  std::vector<RowJob> rows;
};

// Computes every element of every row job on the thread pool (sm90_1d2d / sm90_1d1d through the vectorised integer
// kernels of sm90_fast.cpp, every other model element by element).
void run_plan(const GemmPlan& plan);

// The D column of logical column n (skip_head_mid maps columns around the skipped heads).
inline int64_t physical_column(const GemmPlan& plan, int64_t n) {
  if (plan.head_left + plan.head_right == 0) return n;
  return n + (n + plan.head_right) / (plan.head_left + plan.head_right) * plan.head_mid;
}

// The epilogue of every non-exact model: o = out(acc), D = C ? out(C + o) : o (see gemm_core.cpp).
void epilogue_acc(char* dp, const char* cp, int32_t dtype, float acc);

// The promoted fp32 accumulator F of one sm90_1d2d / sm90_1d1d element, by the generic scalar fused dot-add of
// tensor_core.hpp (any operand values, NaN and Inf included).
float sm90_element(const GemmPlan& plan, const RowJob& job, int64_t n);

// Parses the model argument for an FP8 family (GO_MODEL_DEFAULT -> fallback) and checks the recipe; fails with
// GO_ERR_UNSUPPORTED for a model the CPU backend does not compute for FP8.
int32_t fp8_model(int32_t model, int32_t fallback, int64_t gran_a_k, int64_t gran_b_k, const ScaleTable& sa,
                  const ScaleTable& sb);
int32_t bf16_model(int32_t model);

// Fills D (2-D view or rows of a 3-D view) with C, or zeros (k == 0).
void copy_c_or_zero(const View& d, const View& c);

}  // namespace go
