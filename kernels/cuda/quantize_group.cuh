// One scale group of go_quantize, as the CUDA kernel (quantize.cu) and the host test library (tests/ffi) run it:
// reading x, writing the group's scale (fp32, packed UE8M0 or a code byte) and its codes (FP4 two per byte). The
// element loops take a thread index and count, so a CTA splits them and a host loop runs them with (0, 1).
#pragma once
#include "quant_math.cuh"
#include "quantize.h"

namespace go_quant {

// x(i, j) as fp32 (bf16 and f16 widen exactly).
GO_QHD float load_x(const QuantParams& p, int64_t i, int64_t j) {
  const int64_t o = i * p.x_s0 + j * p.x_s1;
  if (p.x_type == kXF32) return static_cast<const float*>(p.x)[o];
  const uint16_t h = static_cast<const uint16_t*>(p.x)[o];
  return p.x_type == kXBf16 ? u2f(static_cast<uint32_t>(h) << 16) : f16_to_f32(h);
}

// This thread's part of the group's amax (elements t, t + nt, ...).
GO_QHD float group_amax_part(const QuantParams& p, const Problem& pr, int64_t g, int64_t t, int64_t nt) {
  int64_t r0, r1, c0, c1;
  group_bounds(pr, g, &r0, &r1, &c0, &c1);
  const int64_t w = c1 - c0, size = (r1 - r0) * w;
  float a = 0.0f;
  for (int64_t e = t; e < size; e += nt) a = amax_step(a, load_x(p, r0 + e / w, c0 + e % w));
  return a;
}

// The group's scale into sf (one thread per group).
GO_QHD void write_scale(const QuantParams& p, const Problem& pr, int64_t g, const GroupState& st) {
  const int64_t gi = g / pr.gc, gj = g % pr.gc;
  if (p.sf_form == kSfF32) {
    static_cast<float*>(p.sf)[gi * p.sf_s0 + gj * p.sf_s1] = st.sf;
  } else if (p.sf_form == kSfCode) {
    static_cast<uint8_t*>(p.sf)[gi * p.sf_s0 + gj * p.sf_s1] = st.code;
  } else {
    // pack_ue8m0_to_int: byte j of word w holds scale 4w + j, little-endian (deepgemm-ops.md §2.3)
    uint8_t* row = reinterpret_cast<uint8_t*>(static_cast<int32_t*>(p.sf) + gi * p.sf_s0);
    row[(gj / 4) * p.sf_s1 * 4 + gj % 4] = static_cast<uint8_t>(f2u(st.sf) >> 23);
    if (gj == pr.gc - 1) {
      // per_token_cast_to_fp4 pads a row's scales with 1.0 (byte 127) to a multiple of 4 (§2.8 step 5)
      for (int64_t k = pr.gc; k < 4 * p.sf_words; ++k) row[(k / 4) * p.sf_s1 * 4 + k % 4] = 127;
    }
  }
}

// This thread's part of the group's codes. FP4: two per byte, element 2j in the low nibble (groups start at even
// columns and have even widths, plan_quantize checks it).
GO_QHD void write_codes(const QuantParams& p, const Problem& pr, int64_t g, const GroupState& st, int64_t t,
                        int64_t nt) {
  int64_t r0, r1, c0, c1;
  group_bounds(pr, g, &r0, &r1, &c0, &c1);
  const int64_t w = c1 - c0;
  const bool gpu = p.gpu != 0;
  if (packs_fp4(p.kind)) {
    const int64_t half = w / 2;
    for (int64_t e = t; e < (r1 - r0) * half; e += nt) {
      const int64_t i = r0 + e / half, j = c0 + 2 * (e % half);
      const uint8_t lo = element_code(p.kind, load_x(p, i, j), st, gpu, p.rule);
      const uint8_t hi = element_code(p.kind, load_x(p, i, j + 1), st, gpu, p.rule);
      p.q[i * p.q_s0 + (j / 2) * p.q_s1] = static_cast<uint8_t>(lo | (hi << 4));
    }
  } else {
    for (int64_t e = t; e < (r1 - r0) * w; e += nt) {
      const int64_t i = r0 + e / w, j = c0 + e % w;
      p.q[i * p.q_s0 + j * p.q_s1] = element_code(p.kind, load_x(p, i, j), st, gpu, p.rule);
    }
  }
}

// The tensor's amax as the NVFP4 recipes start from it (host: all of x, sequentially).
GO_QHD float tensor_amax_host(const QuantParams& p) {
  float a = 0.0f;
  for (int64_t i = 0; i < p.m; ++i)
    for (int64_t j = 0; j < p.n; ++j) a = amax_step(a, load_x(p, i, j));
  return a;
}

// The whole quantization on the host, group after group, through the kernel's group body: the host test library
// (tests/ffi/quant_host_backend.cpp) and the GPU check's model (tests/gpu/check.cpp).
inline void quantize_host(const QuantParams& p) {
  const Problem pr = make_problem(p.kind, p.m, p.n, p.gran_k, p.gpu != 0, p.ue8m0 != 0, p.rule);
  const float global = p.global_sf ? tensor_amax_host(p) : 0.0f;
  for (int64_t g = 0; g < pr.gr * pr.gc; ++g) {
    const GroupState st = group_state(p.kind, group_amax_part(p, pr, g, 0, 1), p.gpu != 0, p.ue8m0 != 0, p.rule, global);
    write_scale(p, pr, g, st);
    write_codes(p, pr, g, st, 0, 1);
  }
  if (p.global_sf) *p.global_sf = nvfp4_global_sf(p.kind, global, p.gpu != 0);
}

}  // namespace go_quant
