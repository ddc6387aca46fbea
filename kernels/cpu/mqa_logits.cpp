// fp8_mqa_logits (deepgemm-ops.md §8.1): logit[i, j] = Σ_h w[i,h]·relu(s_h)·sfkv[j] for ks[i] <= j < ke[i], with
// s_h = Q[i,h]·KV[j] from FP8 wgmma steps (k32, e8m13) chained over the head dim from zero (no promotion), and the
// SM90 head reduction: heads h = 8t + 2q + e; per lane quad q and e ∈ {0, 1} a chain over t of fma(relu(s), w, S);
// pair = S_{q,0} + S_{q,1}; P_q = fl32(pair · sfkv); logit = (P_0 + P_1) + (P_2 + P_3).
// The first two heads of a chain form fma(relu(s_h), w_h, fl32(relu(s_{h+8})·w_{h+8})): NVCC contracts `p0 + p1` with
// the left product fused (reference/indexer/head_reduction.ts, the order verified on an H200 there).
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "common.hpp"
#include "gemm_core.hpp"
#include "tensor_core.hpp"

namespace go {
namespace {

float relu(float x) { return x > 0.0f ? x : 0.0f; }  // as CUDA fmaxf(x, 0): a NaN score becomes 0

// The SM90 reduction over H heads (H a multiple of 8) of the scores s with weights w and the KV scale.
float reduce_heads_sm90(const float* s, const float* w, int64_t H, float sfkv) {
  int64_t groups = H / 8;
  float P[4];
  for (int q = 0; q < 4; q++) {
    float pair = 0.0f;
    for (int e = 0; e < 2; e++) {
      int64_t h0 = 2 * q + e;
      float S;
      int64_t t;
      if (groups >= 2) {
        S = std::fma(relu(s[h0]), w[h0], relu(s[h0 + 8]) * w[h0 + 8]);
        t = 2;
      } else {
        S = relu(s[h0]) * w[h0];
        t = 1;
      }
      for (; t < groups; t++) S = std::fma(relu(s[h0 + 8 * t]), w[h0 + 8 * t], S);
      pair = e == 0 ? S : pair + S;
    }
    P[q] = pair * sfkv;
  }
  return (P[0] + P[1]) + (P[2] + P[3]);
}

// One logit: scores of the H heads of query row q (H·D decoded values) against one key row, then the reduction.
float mqa_logit(int32_t model, const Dec* q, const Dec* key, const float* w, int64_t H, int64_t D, float sfkv,
                float* s, ExactAcc& acc) {
  for (int64_t h = 0; h < H; h++) {
    const Dec* qr = q + h * D;
    if (model == GO_MODEL_EXACT) {  // the error-free score rounded once to fp32
      acc.clear();
      for (int64_t k = 0; k < D; k++) {
        if (qr[k].special | key[k].special) acc.add_special(double(qr[k].val) * double(key[k].val));
        else acc.add_double(double(qr[k].val) * double(key[k].val));
      }
      double v = acc.round(24, -126, 127);
      s[h] = std::isnan(v) ? f32_from_bits(0x7FFFFFFFu) : float(v);
    } else {  // FP8 wgmma k32 steps chained over the head dim from zero, no promotion
      float sc = 0.0f;
      for (int64_t k = 0; k < D; k += 32) sc = fused_dot_add<13, 13>(qr + k, key + k, int(std::min<int64_t>(32, D - k)), sc);
      s[h] = sc;
    }
  }
  return reduce_heads_sm90(s, w, H, sfkv);
}

int32_t mqa_model(int32_t model, const char* op) {
  if (model == GO_MODEL_DEFAULT) model = GO_MODEL_SM90_MQA;
  if (model != GO_MODEL_SM90_MQA && model != GO_MODEL_EXACT) {
    fail(GO_ERR_UNSUPPORTED, "model " + std::string(go_model_name(model)) + " (" + std::to_string(model) + ") is not implemented for " +
                                 op + " by the CPU backend (sm90_mqa, exact)");
  }
  return model;
}

void check_heads(int64_t H) {
  if (H < 8 || H % 8 != 0) {
    fail(GO_ERR_INVALID_ARGUMENT, "q: the SM90 head reduction needs H a positive multiple of 8, got " + std::to_string(H));
  }
}

}  // namespace
}  // namespace go

using namespace go;

extern "C" int32_t go_fp8_mqa_logits(const go_tensor* q_, const go_tensor* kv_, const go_tensor* kv_sf_,
                                     const go_tensor* weights_, const go_tensor* ks_, const go_tensor* ke_,
                                     const go_tensor* logits_, int32_t clean_logits, int32_t max_seqlen_k,
                                     int32_t model) {
  return guard([&] {
    model = mqa_model(model, "fp8_mqa_logits");
    View q = view_of(q_, "q", {GO_E4M3}, 3), kv = view_of(kv_, "kv", {GO_E4M3}, 2);
    int64_t S = q.shape[0], H = q.shape[1], D = q.shape[2], Skv = kv.shape[0];
    check_heads(H);
    expect_shape(kv, {Skv, D});
    View sf = view_of(kv_sf_, "kv_sf", {GO_F32}, 1), w = view_of(weights_, "weights", {GO_F32}, 2);
    expect_shape(sf, {Skv});
    expect_shape(w, {S, H});
    View ks = view_of(ks_, "ks", {GO_I32}, 1), ke = view_of(ke_, "ke", {GO_I32}, 1);
    expect_shape(ks, {S});
    expect_shape(ke, {S});
    if (max_seqlen_k < 0) fail(GO_ERR_INVALID_ARGUMENT, "max_seqlen_k must be >= 0");
    if (max_seqlen_k > 0 && clean_logits) {
      fail(GO_ERR_INVALID_ARGUMENT, "compressed logits (max_seqlen_k > 0) need clean_logits = 0");
    }
    View out = view_of(logits_, "logits", {GO_F32}, 2);
    int64_t width = max_seqlen_k > 0 ? max_seqlen_k : Skv;
    expect_shape(out, {S, width});
    for (const View* in : {&q, &kv, &sf, &w, &ks, &ke}) expect_no_overlap(out, *in, false);
    auto i32 = [](const View& v, int64_t i) {
      int32_t x;
      std::memcpy(&x, v.ptr1(i), 4);
      return x;
    };
    std::vector<int64_t> lo(static_cast<size_t>(S)), hi(static_cast<size_t>(S));
    for (int64_t i = 0; i < S; i++) {
      int32_t a = i32(ks, i), b = i32(ke, i);
      if (a < 0 || b < 0) fail(GO_ERR_INVALID_ARGUMENT, "ks and ke must be >= 0 (row " + std::to_string(i) + ")");
      lo[size_t(i)] = std::min<int64_t>(a, Skv);
      hi[size_t(i)] = std::min<int64_t>(b, Skv);
      if (max_seqlen_k > 0 && hi[size_t(i)] - lo[size_t(i)] > max_seqlen_k) {
        fail(GO_ERR_INVALID_ARGUMENT, "row " + std::to_string(i) + " has ke - ks > max_seqlen_k (writes past the row)");
      }
    }
    std::vector<Dec> dq(size_t(S * H * D)), dkv(size_t(Skv * D));
    for (int64_t i = 0; i < S; i++)
      for (int64_t h = 0; h < H; h++)
        for (int64_t k = 0; k < D; k++) dq[size_t((i * H + h) * D + k)] = decode(uint8_t(*q.ptr3(i, h, k)), kE4M3);
    for (int64_t j = 0; j < Skv; j++)
      for (int64_t k = 0; k < D; k++) dkv[size_t(j * D + k)] = decode(uint8_t(*kv.ptr2(j, k)), kE4M3);
    parallel_for(S, [&](int64_t begin, int64_t end) {
      std::vector<float> s(static_cast<size_t>(H)), wr(static_cast<size_t>(H));
      ExactAcc acc;
      for (int64_t i = begin; i < end; i++) {
        for (int64_t h = 0; h < H; h++) std::memcpy(&wr[size_t(h)], w.ptr2(i, h), 4);
        for (int64_t j = lo[size_t(i)]; j < hi[size_t(i)]; j++) {
          float sfj;
          std::memcpy(&sfj, sf.ptr1(j), 4);
          float logit = mqa_logit(model, dq.data() + i * H * D, dkv.data() + j * D, wr.data(), H, D, sfj, s.data(), acc);
          int64_t col = max_seqlen_k > 0 ? j - i32(ks, i) : j;
          std::memcpy(out.ptr2(i, col), &logit, 4);
        }
        if (clean_logits) {  // deepgemm-ops.md §8.4: every j < S_kv outside [ks, ke) becomes -inf
          const float ninf = -std::numeric_limits<float>::infinity();
          int64_t a = i32(ks, i), b = i32(ke, i);
          for (int64_t j = 0; j < Skv; j++) {
            if (j < a || j >= b) std::memcpy(out.ptr2(i, j), &ninf, 4);
          }
        }
      }
    });
  });
}

// fp8_paged_mqa_logits (deepgemm-ops.md §8.2): token p of request b lives in page block_table[b, p / block_kv], slot
// p % block_kv; a page holds block_kv·D value bytes (token-major) followed by block_kv fp32 scales. Row b·next_n + j
// gets logits for p < context_lens[b, j]; other positions are not written.
extern "C" int32_t go_fp8_paged_mqa_logits(const go_tensor* q_, const go_tensor* cache_, const go_tensor* weights_,
                                           const go_tensor* ctx_, const go_tensor* table_, const go_tensor* logits_,
                                           int32_t block_kv, int32_t model) {
  return guard([&] {
    model = mqa_model(model, "fp8_paged_mqa_logits");
    View q = view_of(q_, "q", {GO_E4M3}, 4), cache = view_of(cache_, "kv_cache", {GO_U8}, 4);
    int64_t B = q.shape[0], next_n = q.shape[1], H = q.shape[2], D = q.shape[3];
    check_heads(H);
    int64_t num_blocks = cache.shape[0];
    if (block_kv < 1 || cache.shape[1] != block_kv) {
      fail(GO_ERR_INVALID_ARGUMENT, "block_kv " + std::to_string(block_kv) + " differs from kv_cache.shape[1] = " +
                                        std::to_string(cache.shape[1]));
    }
    expect_shape(cache, {num_blocks, block_kv, 1, D + 4});
    if (cache.strides[1] != D + 4 || cache.strides[3] != 1 || cache.strides[0] % 4 != 0 ||
        (num_blocks > 1 && cache.strides[0] < block_kv * (D + 4))) {
      fail(GO_ERR_INVALID_ARGUMENT, "kv_cache: needs stride(1) = D + 4, stride(3) = 1 and a page stride >= block_kv·(D + 4), "
                                    "a multiple of 4 bytes");
    }
    View w = view_of(weights_, "weights", {GO_F32}, 2), ctx = view_of(ctx_, "context_lens", {GO_I32}, 2);
    View table = view_of(table_, "block_table", {GO_I32}, 2), out = view_of(logits_, "logits", {GO_F32}, 2);
    expect_shape(w, {B * next_n, H});
    expect_shape(ctx, {B, next_n});
    int64_t max_blocks = table.shape[1];
    expect_shape(table, {B, max_blocks});
    int64_t width = out.shape[1];
    expect_shape(out, {B * next_n, width});
    for (const View* in : {&q, &cache, &w, &ctx, &table}) expect_no_overlap(out, *in, false);
    auto i32 = [](const char* p) {
      int32_t x;
      std::memcpy(&x, p, 4);
      return x;
    };
    if (B == 0 || next_n == 0) return;  // no rows; context_lens[b, next_n - 1] would be index -1
    for (int64_t b = 0; b < B; b++) {
      int32_t last = i32(ctx.ptr2(b, next_n - 1));
      for (int64_t j = 0; j < next_n; j++) {
        int32_t c = i32(ctx.ptr2(b, j));
        if (c < 0 || c > last) {
          fail(GO_ERR_INVALID_ARGUMENT, "context_lens[" + std::to_string(b) + "]: entries must be >= 0 and the last one the row maximum");
        }
      }
      if (last > width) {
        fail(GO_ERR_INVALID_ARGUMENT, "context_lens[" + std::to_string(b) + "] = " + std::to_string(last) + " exceeds the logits width " +
                                          std::to_string(width));
      }
      int64_t pages = (int64_t(last) + block_kv - 1) / block_kv;
      if (pages > max_blocks) fail(GO_ERR_INVALID_ARGUMENT, "block_table row " + std::to_string(b) + " is too short");
      for (int64_t p = 0; p < pages; p++) {
        int32_t blk = i32(table.ptr2(b, p));
        if (blk < 0 || blk >= num_blocks) {
          fail(GO_ERR_INVALID_ARGUMENT, "block_table[" + std::to_string(b) + ", " + std::to_string(p) + "] = " + std::to_string(blk) +
                                            " is outside [0, " + std::to_string(num_blocks) + ")");
        }
      }
    }
    std::vector<Dec> dq(size_t(B * next_n * H * D));
    for (int64_t b = 0; b < B; b++)
      for (int64_t j = 0; j < next_n; j++)
        for (int64_t h = 0; h < H; h++)
          for (int64_t k = 0; k < D; k++) {
            dq[size_t(((b * next_n + j) * H + h) * D + k)] = decode(uint8_t(*(q.data + q.esize * (b * q.strides[0] + j * q.strides[1] + h * q.strides[2] + k * q.strides[3]))), kE4M3);
          }
    parallel_for(B * next_n, [&](int64_t begin, int64_t end) {
      std::vector<float> s(static_cast<size_t>(H)), wr(static_cast<size_t>(H));
      std::vector<Dec> key(static_cast<size_t>(D));
      ExactAcc acc;
      for (int64_t row = begin; row < end; row++) {
        int64_t b = row / next_n, j = row % next_n;
        for (int64_t h = 0; h < H; h++) std::memcpy(&wr[size_t(h)], w.ptr2(row, h), 4);
        int32_t len = i32(ctx.ptr2(b, j));
        for (int64_t p = 0; p < len; p++) {
          int32_t blk = i32(table.ptr2(b, p / block_kv));
          int64_t slot = p % block_kv;
          const char* page = cache.data + blk * cache.strides[0];
          for (int64_t k = 0; k < D; k++) key[size_t(k)] = decode(uint8_t(page[slot * D + k]), kE4M3);
          float sf;
          std::memcpy(&sf, page + block_kv * D + 4 * slot, 4);
          float logit = mqa_logit(model, dq.data() + row * H * D, key.data(), wr.data(), H, D, sf, s.data(), acc);
          std::memcpy(out.ptr2(row, p), &logit, 4);
        }
      }
    });
  });
}
