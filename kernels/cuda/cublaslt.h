// cublaslt_gemm_{nt,nn,tn,tt} through NVIDIA's cuBLASLt itself (deepgemm-ops.md §5.2): a real vendor kernel behind
// gemm_oracle.h go_cublaslt_gemm, so the oracle's `cublaslt` model (numerics.md §8.2, §8.2b) is checked against the
// library it models. cuBLASLt is loaded at run time (dlopen: GO_CUBLASLT_PATH, then libcublasLt.so.13/.12/.so on the
// loader path and under $CUDA_HOME/lib64); without it the call is GO_ERR_UNSUPPORTED with the reason.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>
#include <string>

namespace go_cublaslt {

enum ElemType : int { kE4M3 = 0, kE5M2 = 1, kBf16 = 2, kF32 = 3 };

struct LtParams {
  int64_t M, N, K;
  const void* a;           // a(m, k) at a[m*a_s0 + k*a_s1], type a_type
  int a_type;
  int64_t a_s0, a_s1;
  const void* b;           // b(n, k) at b[n*b_s0 + k*b_s1], type b_type
  int b_type;
  int64_t b_s0, b_s1;
  const void* c;           // optional: c(m, n) at c[m*c_s0 + n*c_s1], type d_type (beta = 1)
  int64_t c_s0, c_s1;
  void* d;                 // d(m, n) at d[m*d_s0 + n*d_s1], type d_type (bf16 or f32)
  int d_type;
  int64_t d_s0, d_s1;
  int split_k;             // 0: cuBLASLt's heuristic choice; s >= 1: an algorithm with s K splits
};

// Runs D = A·Bᵀ (+ C) on the current device and stream 0: the operands are packed K-major on the device first
// (cuBLASLt's FP8 matmul takes the "TN" form only), D comes back through a packed buffer. *algo describes the
// algorithm cuBLASLt ran ("algo=ID tile=T stages=S splitk=N reduction=R swizzle=W custom=C ws=BYTES").
// Returns a go_status; *err says why on failure.
int32_t run(const LtParams& p, std::string* algo, std::string* err);

}  // namespace go_cublaslt
