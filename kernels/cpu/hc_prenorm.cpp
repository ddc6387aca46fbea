// tf32_hc_prenorm_gemm (deepgemm-ops.md §7): D = A·Bᵀ with B read as TF32 through Hopper TF32 wgmma steps (k8, 25
// fraction bits, fp32 RZ; numerics.md §8.1 table), chained from zero over each split's K, and the SM90 sqr_sum order:
// four lanes q accumulate v_q = fl32(v_q + fl32(x[8i+q]² + x[8i+q+4]²)) per 8-element chunk, then (v0+v2) + (v1+v3).
#include <algorithm>
#include <string>
#include <vector>

#include "common.hpp"
#include "gemm_core.hpp"
#include "tensor_core.hpp"

namespace go {
namespace {

// fp32 -> TF32: drop the low 13 mantissa bits (MMA-Sim truncate_to_tf32) or round them to nearest even.
float to_tf32(float x, bool rne) {
  uint32_t u = f32_bits(x);
  if ((u & 0x7F800000u) == 0x7F800000u) return x;
  if (rne) u += 0xFFFu + ((u >> 13) & 1u);
  return f32_from_bits(u & 0xFFFFE000u);
}

// A TF32 (or bf16) value as a fused-step operand: exponent floor(log2|x|) clamped at −126, zero -> −126.
Dec tf32_operand(float x) {
  Dec d{x, 0, 0, 0};
  uint32_t u = f32_bits(x);
  uint32_t e = (u >> 23) & 0xFF, m = u & 0x7FFFFF;
  if (e == 0xFF) {
    d.special = m ? 1 : ((u >> 31) ? 3 : 2);
    return d;
  }
  d.exp = int8_t((e == 0) ? -126 : int(e) - 127);
  return d;
}

}  // namespace
}  // namespace go

using namespace go;

extern "C" int32_t go_tf32_hc_prenorm_gemm(const go_tensor* a_, const go_tensor* b_, const go_tensor* d_,
                                           const go_tensor* sqr_, int32_t num_splits, int32_t tf32_rounding,
                                           int32_t model) {
  return guard([&] {
    if (model != GO_MODEL_DEFAULT && model != GO_MODEL_TF32) {
      fail(GO_ERR_UNSUPPORTED, "model " + std::string(go_model_name(model)) + " (" + std::to_string(model) +
                                   ") is not implemented for tf32_hc_prenorm_gemm by the CPU backend (only tf32)");
    }
    if (tf32_rounding != 0 && tf32_rounding != 1) {
      fail(GO_ERR_INVALID_ARGUMENT, "tf32_rounding must be 0 (truncate) or 1 (rne), got " + std::to_string(tf32_rounding));
    }
    if (num_splits < 1) fail(GO_ERR_INVALID_ARGUMENT, "num_splits must be >= 1, got " + std::to_string(num_splits));
    View a = view_of(a_, "a", {GO_BF16}, 2), b = view_of(b_, "b", {GO_F32}, 2);
    int64_t M = a.shape[0], K = a.shape[1], N = b.shape[0];
    expect_shape(b, {N, K});
    if (K % 64 != 0) fail(GO_ERR_INVALID_ARGUMENT, "k must be a multiple of 64 (BLOCK_K), got " + std::to_string(K));
    bool split_dim = d_ != nullptr && d_->ndim == 3;
    View d = view_of(d_, "d", {GO_F32}, split_dim ? 3 : 2), sq = view_of(sqr_, "sqr_sum", {GO_F32}, split_dim ? 2 : 1);
    int64_t S = num_splits;
    if (split_dim) {
      expect_shape(d, {S, M, N});
      expect_shape(sq, {S, M});
    } else {
      if (S != 1) fail(GO_ERR_INVALID_ARGUMENT, "num_splits > 1 needs d [S, M, N] and sqr_sum [S, M]");
      expect_shape(d, {M, N});
      expect_shape(sq, {M});
    }
    expect_no_overlap(d, a, false);
    expect_no_overlap(d, b, false);
    expect_no_overlap(sq, a, false);
    expect_no_overlap(sq, b, false);
    expect_no_overlap(sq, d, false);
    std::vector<Dec> da(size_t(M * K)), db(size_t(N * K));
    std::vector<float> av(size_t(M * K));
    for (int64_t m = 0; m < M; m++)
      for (int64_t k = 0; k < K; k++) {
        uint16_t bits;
        std::memcpy(&bits, a.ptr2(m, k), 2);
        av[size_t(m * K + k)] = bf16_to_f32(bits);
        da[size_t(m * K + k)] = tf32_operand(av[size_t(m * K + k)]);
      }
    for (int64_t n = 0; n < N; n++)
      for (int64_t k = 0; k < K; k++) {
        float x;
        std::memcpy(&x, b.ptr2(n, k), 4);
        db[size_t(n * K + k)] = tf32_operand(to_tf32(x, tf32_rounding == 1));
      }
    int64_t blocks = K / 64, per = blocks / S, rem = blocks % S;
    auto d_at = [&](int64_t s, int64_t m, int64_t n) { return split_dim ? d.ptr3(s, m, n) : d.ptr2(m, n); };
    auto sq_at = [&](int64_t s, int64_t m) { return split_dim ? sq.ptr2(s, m) : sq.ptr1(m); };
    // One work item per (split, row).
    parallel_for(S * M, [&](int64_t begin, int64_t end) {
      for (int64_t idx = begin; idx < end; idx++) {
        int64_t s = idx / M, m = idx % M;
        int64_t b0 = s * per + std::min(s, rem), nb = per + (s < rem ? 1 : 0);
        int64_t k0 = b0 * 64, k1 = k0 + nb * 64;
        const Dec* arow = da.data() + m * K;
        for (int64_t n = 0; n < N; n++) {
          const Dec* brow = db.data() + n * K;
          float acc = 0.0f;
          for (int64_t k = k0; k < k1; k += 8) acc = fused_dot_add<25, 23>(arow + k, brow + k, 8, acc);
          std::memcpy(d_at(s, m, n), &acc, 4);
        }
        const float* x = av.data() + m * K;
        float v[4] = {0, 0, 0, 0};
        for (int64_t k = k0; k < k1; k += 8) {
          for (int q = 0; q < 4; q++) {
            float pair = x[k + q] * x[k + q] + x[k + q + 4] * x[k + q + 4];  // squares exact, one rounding
            v[q] = v[q] + pair;
          }
        }
        float r = (v[0] + v[2]) + (v[1] + v[3]);
        std::memcpy(sq_at(s, m), &r, 4);
      }
    });
  });
}
