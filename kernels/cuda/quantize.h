// Launch parameters of the quantizer kernels (quantize.cu): DeepGEMM's utility casts and the MX / NVFP4 recipes of
// gemm_oracle.h go_quantize. Every pointer has been checked by the host glue (backend.cu) against the allocation
// registry, every shape against the recipe.
#pragma once
#include <cstddef>
#include <cstdint>

#if defined(__CUDACC__)
#include <cuda_runtime.h>
#endif

#include "../gemm_oracle.h"

namespace go_quant {

enum XType : int { kXF32 = 0, kXBf16 = 1, kXF16 = 2 };
enum SfForm : int {
  kSfF32 = 0,     // DeepGEMM fp32 scales: sf(gi, gj)
  kSfPacked = 1,  // packed UE8M0: byte gj % 4 of int32 word (gi, gj / 4); FP4 pads a row's last word with 127
  kSfCode = 2,    // one byte per group: MX E8M0 / NVFP4 E4M3 codes
};

struct QuantParams {
  int kind;                // go_quant::Kind
  int64_t m, n;            // x is [m, n]
  int gran_k;              // DeepGEMM group size along K
  int gpu, ue8m0, rule;    // semantics (1 = PyTorch CUDA), use_ue8m0, MX scale rule
  const void* x;           // element (i, j) at x[i*x_s0 + j*x_s1], dtype x_type
  int x_type;
  int64_t x_s0, x_s1;
  uint8_t* q;              // code bytes; FP4 recipes: packed byte (i, j/2) at q[i*q_s0 + (j/2)*q_s1]
  int64_t q_s0, q_s1;
  void* sf;                // scales, form sf_form, element strides sf_s0, sf_s1 (in 4-byte words or bytes)
  int sf_form;
  int64_t sf_s0, sf_s1;
  int64_t sf_words;        // packed: int32 words per row
  float* global_sf;        // NVFP4: the per-tensor scale (f32 [1]); also the scratch of the tensor's amax
};

#if defined(__CUDACC__)
// Queues the quantization on `stream` (NVFP4: the tensor's amax first, the per-tensor scale last).
cudaError_t launch_quantize(const QuantParams& p, cudaStream_t stream);
#endif

// Checks a go_quantize call's recipe, options, dtypes, shapes and overlaps from its descriptors (everything but the
// allocation registry, which the backend checks) and fills *out. Returns a go_status; on failure writes the reason
// into msg (quantize_plan.cpp; host code, also linked into the host test library of tests/ffi).
int32_t plan_quantize(int32_t kind, const struct go_tensor* x, const struct go_tensor* q, const struct go_tensor* sf,
                      const struct go_tensor* global_sf, int32_t gran_k, int32_t flags, int32_t scale_rule,
                      int32_t model, QuantParams* out, char* msg, size_t cap);

}  // namespace go_quant
