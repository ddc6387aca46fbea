/*
 * gemm_oracle.h: the C ABI every gemm-oracle kernel backend implements (CPU, CUDA, or any third-party library).
 *
 * Conventions
 * - Every function returns an int32_t status (go_status). On failure, go_last_error() returns a message for the
 *   failing call on the calling thread (thread-local; valid until the next failing call on that thread).
 * - Library code never aborts, asserts, traps or exits on bad input; every pointer/size pair is checked.
 * - Tensors live in memory obtained from go_alloc ("device memory"; host memory for the CPU backend). The backend keeps
 *   a registry of live allocations: a tensor argument or copy whose byte extent does not lie inside one live allocation
 *   fails with GO_ERR_OUT_OF_BOUNDS and a message naming the argument.
 * - Operations are synchronous from the caller's point of view once go_synchronize() returns; a CPU backend runs them
 *   to completion before returning.
 * - Models (go_model) select the numerical model whose bits the result must equal (gemm-oracle reference/).
 *   A backend returns GO_ERR_UNSUPPORTED for a model it cannot compute. GO_MODEL_DEFAULT picks the backend's declared
 *   model for the operation family (see go_backend_info "models").
 *
 * ABI versioning: GO_ABI_VERSION changes on any incompatible change (renumbered enum, changed signature or struct).
 * Enum values may be appended without a version change. Callers check go_abi_version() before any other call.
 *
 * go_tensor layout (x86-64 / aarch64 LP64, little-endian, 80 bytes, 8-byte aligned), for FFI callers:
 *   offset  0  void*    data        address of the first element (element [0,0,...]); NULL = absent optional tensor
 *   offset  8  int32_t  dtype       go_dtype
 *   offset 12  int32_t  ndim        0..4
 *   offset 16  int64_t  shape[4]    entries >= ndim are ignored
 *   offset 48  int64_t  strides[4]  in ELEMENTS (not bytes); may be 0 (broadcast) but not negative
 * A tensor descriptor pointer may itself be NULL where the tensor is optional.
 */
#ifndef GEMM_ORACLE_H
#define GEMM_ORACLE_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GO_ABI_VERSION 1

/* Status codes. */
typedef enum go_status {
  GO_OK = 0,
  GO_ERR_INVALID_ARGUMENT = 1, /* wrong dtype, shape, stride, alignment, null pointer, bad scalar */
  GO_ERR_OUT_OF_BOUNDS = 2,    /* a tensor or copy extent outside every live allocation */
  GO_ERR_UNSUPPORTED = 3,      /* a valid request this backend does not implement (model, dtype, layout) */
  GO_ERR_OUT_OF_MEMORY = 4,
  GO_ERR_DEVICE = 5,           /* a device/driver error (CUDA error string in go_last_error) */
  GO_ERR_NOT_AVAILABLE = 6,    /* the backend cannot run here (no GPU, no driver) */
  GO_ERR_INTERNAL = 7          /* a bug in the backend */
} go_status;

/* Element types. The storage size in bytes is given by the comment. */
typedef enum go_dtype {
  GO_F32 = 0,   /* 4: IEEE binary32 */
  GO_BF16 = 1,  /* 2: bfloat16 bits */
  GO_F16 = 2,   /* 2: IEEE binary16 bits */
  GO_E4M3 = 3,  /* 1: OCP FP8 E4M3FN code */
  GO_E5M2 = 4,  /* 1: OCP FP8 E5M2 code */
  GO_UE8M0 = 5, /* 1: unsigned E8M0 scale code, value 2^(code-127), 0xFF = NaN */
  GO_I32 = 6,   /* 4 */
  GO_I64 = 7,   /* 8 */
  GO_U8 = 8,    /* 1 */
  GO_I8 = 9     /* 1 */
} go_dtype;

/* Numerical models (names as in gemm-oracle reference/ and the `--model` CLI flag). */
typedef enum go_model {
  GO_MODEL_DEFAULT = -1,        /* the backend's declared model for this family */
  GO_MODEL_EXACT = 0,           /* the true value of C + sum(products·scales), rounded once to the output type (RNE) */
  GO_MODEL_SM90_1D2D = 1,       /* Hopper FP8: per 128-K block 4 chained k32 wgmma (e8m13) from 0 give P; s = fl32(sa·sb);
                                   F = fma32(s, P, F); o = out(F); D = C ? out(C + o) : o (reduce-add onto C) */
  GO_MODEL_SM90_1D1D = 2,       /* same arithmetic as SM90_1D2D with per-row B scales (DeepGEMM's FP32-with-C kernels) */
  GO_MODEL_SM100_1D1D = 3,      /* Blackwell block-scaled mxf8f6f4 k32: whole K in the unit (25 fraction bits, RZ fp32),
                                   UE8M0 scale exponents added to product exponents; out = bf16 ? bf16(acc) : acc;
                                   D = C ? round_out(C + out) : out (BF16 with C rounds twice) */
  GO_MODEL_BF16 = 4,            /* Hopper BF16 wgmma k16: 16 products + c, 25 fraction bits, fp32 RZ; chained over all K;
                                   epilogue as SM100_1D1D */
  GO_MODEL_FP32_SEQUENTIAL = 5, /* plain fp32: F = fma32(a_k, b_k, F) for k ascending from 0; epilogue as SM100_1D1D */
  GO_MODEL_TF32 = 6,            /* Hopper TF32 wgmma k8: 8 products + c, 25 fraction bits, fp32 RZ, chained over K */
  GO_MODEL_SM90_MQA = 7,        /* SM90 fp8_mqa_logits: FP8 wgmma over head_dim, fixed head-reduction order */
  GO_MODEL_GPU = 8,             /* quantizers: PyTorch on a CUDA tensor: `t / c` is fl32(t · fl32(1/c)), NaN products
                                   0x7FFFFFFF (deepgemm-ops.md §2) */
  GO_MODEL_CPU = 9,             /* quantizers: PyTorch on a CPU tensor: true division, x86 NaN spellings */
  GO_MODEL_CUBLASLT = 10        /* cuBLASLt raw FP8: chained k32 wgmma, partials promoted every 128 K by a plain fp32
                                   add, optional split-K; C added in fp32 to the sum (split-K) or to the product
                                   already cast to the output type (no split-K), then one cast (numerics.md §8.2,
                                   §8.2b, §8.2c) */
} go_model;

/* A model's name as reference/ and the CLI's `--model` spell it (reference/kernel_models/model_table.ts; checked by
 * tests/kernels/model_table_test.ts); "unknown" outside the enum. Both backends name models in their messages with it. */
static inline const char* go_model_name(int32_t model) {
  switch (model) {
    case GO_MODEL_DEFAULT: return "default";
    case GO_MODEL_EXACT: return "exact";
    case GO_MODEL_SM90_1D2D: return "sm90_1d2d";
    case GO_MODEL_SM90_1D1D: return "sm90_1d1d";
    case GO_MODEL_SM100_1D1D: return "sm100_1d1d";
    case GO_MODEL_BF16: return "bf16";
    case GO_MODEL_FP32_SEQUENTIAL: return "fp32_sequential";
    case GO_MODEL_TF32: return "tf32";
    case GO_MODEL_SM90_MQA: return "sm90_mqa";
    case GO_MODEL_GPU: return "gpu";
    case GO_MODEL_CPU: return "cpu";
    case GO_MODEL_CUBLASLT: return "cublaslt";
    default: return "unknown";
  }
}

/* Quantization recipes of go_quantize, by their DeepGEMM / torchao names. */
typedef enum go_quant_kind {
  GO_PER_TOKEN_CAST_TO_FP8 = 0,   /* deepgemm-ops.md §2.4: 1 × gran_k groups, E4M3 codes, amax / 448 */
  GO_PER_CHANNEL_CAST_TO_FP8 = 1, /* §2.5: gran_k × 1 groups (m % gran_k == 0) */
  GO_PER_BLOCK_CAST_TO_FP8 = 2,   /* §2.6: gran_k × gran_k groups */
  GO_PER_TOKEN_CAST_TO_FP4 = 3,   /* §2.8: 1 × gran_k groups, E2M1 by strict thresholds, amax / 6 */
  GO_MXFP8_E4M3 = 4,              /* numerics.md §5: 1 × 32 blocks, E8M0 scales, E4M3 elements (torchao to_mx) */
  GO_MXFP8_E5M2 = 5,              /* §5: E5M2 elements */
  GO_MXFP4 = 6,                   /* §5: E2M1 elements */
  GO_NVFP4_TE = 7,                /* numerics.md §6: 1 × 16 blocks, E4M3 block scales, TransformerEngine's order */
  GO_NVFP4_TORCHAO = 8            /* §6: torchao's order (per_tensor_scale = amax / 2688) */
} go_quant_kind;

/* go_quantize flags (DeepGEMM's keyword arguments). */
#define GO_QUANT_USE_UE8M0 1        /* scales rounded up to powers of two (ceil_to_ue8m0, §2.2) */
#define GO_QUANT_USE_PACKED_UE8M0 2 /* per-token recipes: scales packed 4 per int32 (pack_ue8m0_to_int, §2.3) */

/* MX scale rules (torchao's ScaleCalculationMode, numerics.md §5). */
typedef enum go_mx_scale_rule {
  GO_MX_FLOOR = 0,
  GO_MX_CEIL = 1,
  GO_MX_EVEN = 2,
  GO_MX_RCEIL = 3
} go_mx_scale_rule;

/* K-grouped FP8 operand layouts. */
typedef enum go_k_grouped_layout {
  GO_K_GROUPED_SM90_NT_FLAT = 0, /* A: flat buffer of per-group K-major [M, k_g] blocks; B likewise [N, k_g] */
  GO_K_GROUPED_SM100_TN = 1      /* A: [sum k_g, M], B: [sum k_g, N] (MN-major views) */
} go_k_grouped_layout;

typedef struct go_tensor {
  void* data;
  int32_t dtype;
  int32_t ndim;
  int64_t shape[4];
  int64_t strides[4];
} go_tensor;

/* ---- library ------------------------------------------------------------------------------------------------- */

/* GO_ABI_VERSION the library was built with. Never fails. */
int32_t go_abi_version(void);

/* Message of the last failing call on this thread ("" if none). Never NULL. */
const char* go_last_error(void);

/* Writes a NUL-terminated JSON object into buf (capacity cap bytes) and the needed size (including the NUL) into
 * *needed. buf may be NULL with cap 0 to query the size. Fails with GO_ERR_INVALID_ARGUMENT when cap is too small.
 * Keys: "name", "abi", "device", "arch", "threads" (CPU) or "devices" (GPU), "models" {family: default model name},
 * "supported_models" {family: [model names]}. Families: fp8_gemm, m_grouped_fp8_gemm_contiguous,
 * m_grouped_fp8_gemm_masked, k_grouped_fp8_gemm, bf16_gemm, m_grouped_bf16_gemm_contiguous,
 * m_grouped_bf16_gemm_masked, k_grouped_bf16_gemm, fp8_gemm_skip_head_mid, tf32_hc_prenorm_gemm, fp8_mqa_logits,
 * fp8_paged_mqa_logits, and for the optional entries below: quantize (go_quantize: gpu / cpu),
 * paged_mqa_logits_metadata, cublaslt_gemm. */
int32_t go_backend_info(char* buf, uint64_t cap, uint64_t* needed);

/* ---- devices and memory -------------------------------------------------------------------------------------- */

int32_t go_device_count(int32_t* count);
int32_t go_set_device(int32_t device);

/* Allocates bytes (> 0) of device memory, 256-byte aligned, zero-filled. */
int32_t go_alloc(uint64_t bytes, void** out);
/* Frees a pointer returned by go_alloc. NULL is a no-op; any other unknown pointer is GO_ERR_INVALID_ARGUMENT. */
int32_t go_free(void* ptr);
/* Copies bytes from host memory into [dst, dst+bytes), which must lie in one live allocation. */
int32_t go_copy_in(void* dst, const void* host_src, uint64_t bytes);
/* Copies bytes from [src, src+bytes), which must lie in one live allocation, into host memory. */
int32_t go_copy_out(void* host_dst, const void* src, uint64_t bytes);
/* Waits for all queued work. */
int32_t go_synchronize(void);
/* Optional symbol: the number of worker threads a CPU backend uses (0 = all hardware threads). */
int32_t go_set_num_threads(int32_t threads);

/* ---- operations (DeepGEMM families) -----------------------------------------------------------------------------
 * Common rules: D = C + A·Bᵀ with A viewed as [M, K] and B as [N, K] (nt/nn/tn/tt are expressed by strides); C optional
 * (NULL or data NULL), same shape as D, dtype bf16 or f32; D bf16 or f32, must not overlap the inputs except that C may
 * equal D exactly. Scale tensors (sfa, sfb) are f32 (any value) or UE8M0 codes; sfa has shape
 * [ceil(M/gran_a_mn), ceil(K/gran_a_k)] and sfb [ceil(N/gran_b_mn), ceil(K/gran_b_k)] (grouped: a leading G).
 * Element (m, k) of A uses sfa[m / gran_a_mn][k / gran_a_k]. SM90 models need gran_a_k = gran_b_k = 128; SM100_1D1D needs
 * gran_k a multiple of 32 and power-of-two scales. k == 0: D = C, or 0 without C. m == 0 or n == 0: nothing.
 */

int32_t go_fp8_gemm(const go_tensor* a, const go_tensor* sfa, const go_tensor* b, const go_tensor* sfb,
                    const go_tensor* c, const go_tensor* d, int32_t gran_a_mn, int32_t gran_a_k, int32_t gran_b_mn,
                    int32_t gran_b_k, int32_t model);

/* A [M, K], B [G, N, K], sfb [G, ...], D [M, N]. Classic layout (use_psum_layout = 0): grouped_layout i32 [M], the group
 * of a tile of mk_alignment rows is grouped_layout[tile start] (clamped at 0); SM90 models write 0 for every 64-row
 * chunk whose first row is -1. psum layout (use_psum_layout bit 0): grouped_layout i32 [G] cumulative end rows; group
 * g owns rows [align(end_{g-1}, mk_alignment), end_g); with bit 1 set (value 3, DeepGEMM's ensure_zero_padding) a
 * non-empty group also computes its rows [end_g, align(end_g, mk_alignment)); rows outside every group are not
 * written. The BF16 form takes the same values. */
int32_t go_m_grouped_fp8_gemm_contiguous(const go_tensor* a, const go_tensor* sfa, const go_tensor* b,
                                         const go_tensor* sfb, const go_tensor* d, const go_tensor* grouped_layout,
                                         int32_t gran_a_mn, int32_t gran_a_k, int32_t gran_b_mn, int32_t gran_b_k,
                                         int32_t use_psum_layout, int32_t mk_alignment, int32_t model);

/* A [G, Mmax, K], B [G, N, K], D [G, Mmax, N], masked_m i32 [G]: rows r < masked_m[g] of group g hold A·Bᵀ. As the
 * kernels' BLOCK_M = 128 tiles do, rows up to min(Mmax, align(masked_m[g], 128)) are computed from A's padding, except
 * that SM90 models (sm90_*, bf16) write 0 in 64-row chunks starting at or after masked_m[g]; later rows are not
 * written. Only rows below masked_m are meaningful. */
int32_t go_m_grouped_fp8_gemm_masked(const go_tensor* a, const go_tensor* sfa, const go_tensor* b,
                                     const go_tensor* sfb, const go_tensor* d, const go_tensor* masked_m,
                                     int32_t gran_a_mn, int32_t gran_a_k, int32_t gran_b_mn, int32_t gran_b_k,
                                     int32_t model);

/* D[g] = C[g] + A_g·B_gᵀ (fp32), D and C [G, M, N], ks i32 [G] (k_g >= 0; k_g = 0: D[g] = C[g]).
 * GO_K_GROUPED_SM90_NT_FLAT: a, b are 1-D flat buffers (sum M·k_g, sum N·k_g elements), group g an [M, k_g] (resp.
 *   [N, k_g]) row-major block; sfa [M, sum ceil(k_g/gran_k)], sfb [N, sum ceil(k_g/gran_k)] (any strides).
 * GO_K_GROUPED_SM100_TN: a [sum k_g, M], b [sum k_g, N]; sfa [sum ceil(k_g/gran_k), M], sfb [sum ceil(k_g/gran_k), N]. */
int32_t go_k_grouped_fp8_gemm(const go_tensor* a, const go_tensor* sfa, const go_tensor* b, const go_tensor* sfb,
                              const go_tensor* c, const go_tensor* d, const go_tensor* ks, int32_t layout,
                              int32_t gran_k, int32_t model);

/* BF16 operands, no scales. */
int32_t go_bf16_gemm(const go_tensor* a, const go_tensor* b, const go_tensor* c, const go_tensor* d, int32_t model);
int32_t go_m_grouped_bf16_gemm_contiguous(const go_tensor* a, const go_tensor* b, const go_tensor* d,
                                          const go_tensor* grouped_layout, int32_t use_psum_layout,
                                          int32_t mk_alignment, int32_t model);
int32_t go_m_grouped_bf16_gemm_masked(const go_tensor* a, const go_tensor* b, const go_tensor* d,
                                      const go_tensor* masked_m, int32_t model);
/* a [sum k_g, M], b [sum k_g, N] (tn), D/C [G, M, N]. */
int32_t go_k_grouped_bf16_gemm(const go_tensor* a, const go_tensor* b, const go_tensor* c, const go_tensor* d,
                               const go_tensor* ks, int32_t model);

/* fp8_gemm_nt_skip_head_mid: logical N = b rows, n % (left + right) == 0; D has n + (n/(left+right))·mid columns;
 * logical column j is stored at j + floor((j + right)/(left + right))·mid; the mid columns are never written. */
int32_t go_fp8_gemm_skip_head_mid(const go_tensor* a, const go_tensor* sfa, const go_tensor* b, const go_tensor* sfb,
                                  const go_tensor* d, int32_t gran_a_mn, int32_t gran_a_k, int32_t gran_b_mn,
                                  int32_t gran_b_k, int32_t left, int32_t mid, int32_t right, int32_t model);

/* A bf16 [M, K], B f32 [N, K], D f32 [M, N] or [S, M, N], sqr_sum f32 [M] or [S, M]; num_splits S >= 1 splits the
 * K/64 blocks contiguously. tf32_rounding: 0 = truncate B to TF32 (drop 13 low bits), 1 = RNE. */
int32_t go_tf32_hc_prenorm_gemm(const go_tensor* a, const go_tensor* b, const go_tensor* d, const go_tensor* sqr_sum,
                                int32_t num_splits, int32_t tf32_rounding, int32_t model);

/* q e4m3 [S, H, D], kv e4m3 [S_kv, D], kv_sf f32 [S_kv], weights f32 [S, H], ks/ke i32 [S], logits f32 [S, S_kv] or,
 * with max_seqlen_k > 0, [S, max_seqlen_k] (compressed). clean_logits: entries outside [ks, ke) become -inf. */
int32_t go_fp8_mqa_logits(const go_tensor* q, const go_tensor* kv, const go_tensor* kv_sf, const go_tensor* weights,
                          const go_tensor* ks, const go_tensor* ke, const go_tensor* logits, int32_t clean_logits,
                          int32_t max_seqlen_k, int32_t model);

/* q e4m3 [B, next_n, H, D], kv_cache u8 [num_blocks, block_kv, 1, D + 4] (per page: block_kv·D value bytes, then
 * block_kv f32 scales), weights f32 [B·next_n, H], context_lens i32 [B, next_n], block_table i32 [B, max_blocks],
 * logits f32 [B·next_n, max_context_len]; positions p >= context_lens[b, j] are not written. */
int32_t go_fp8_paged_mqa_logits(const go_tensor* q, const go_tensor* kv_cache, const go_tensor* weights,
                                const go_tensor* context_lens, const go_tensor* block_table, const go_tensor* logits,
                                int32_t block_kv, int32_t model);

/* ---- optional entries: quantizers, indexer metadata, vendor GEMM -----------------------------------------------
 * A backend without one of them simply does not export it (callers look the symbol up).
 */

/* DeepGEMM's utility quantizers and the MX / NVFP4 recipes (go_quant_kind), bit for bit as the reference's `gpu`
 * (model GO_MODEL_GPU, the default) or `cpu` semantics. x f32 | bf16 | f16 [m, n] (any strides). Outputs:
 * - q: E4M3 [m, n] (FP8 casts, GO_MXFP8_E4M3), E5M2 [m, n] (GO_MXFP8_E5M2), or for the FP4 recipes (GO_PER_TOKEN_CAST_TO_FP4,
 *   GO_MXFP4, GO_NVFP4_*) i8 | u8 [m, n/2] packed, element 2j in the low nibble of byte j (deepgemm-ops.md §2.8);
 * - sf: DeepGEMM recipes f32 [ceil(m/bm), ceil(n/bn)] (groups bm × bn: per token 1 × gran_k, per channel gran_k × 1,
 *   per block gran_k × gran_k), or with GO_QUANT_USE_PACKED_UE8M0 (per-token recipes, needs GO_QUANT_USE_UE8M0) i32
 *   [m, ceil(G/4)] for G = ceil(n/gran_k) groups per row (FP8: G % 4 == 0; FP4 pads with byte 127); MX ue8m0 | u8
 *   [m, n/32]; NVFP4 e4m3 | u8 [m, n/16];
 * - global_sf: NVFP4 only, f32 [1]: TransformerEngine's S_dec or torchao's per_tensor_scale; NULL otherwise.
 * gran_k: the DeepGEMM group size (> 0; even for FP4); MX and NVFP4 take 0 or their block size (32, 16). flags:
 * GO_QUANT_* (DeepGEMM recipes only). scale_rule: go_mx_scale_rule for MX, 0 otherwise. Outputs must not overlap x
 * or each other. */
int32_t go_quantize(int32_t kind, const go_tensor* x, const go_tensor* q, const go_tensor* sf, const go_tensor* global_sf,
                    int32_t gran_k, int32_t flags, int32_t scale_rule, int32_t model);

/* get_paged_mqa_logits_metadata (deepgemm-ops.md §8.3): the per-SM schedule fp8_paged_mqa_logits consumes.
 * context_lens i32 [B, next_n] contiguous, entries >= 0, next_n >= 1; schedule_meta i32 [num_sms + 1, 2] contiguous
 * (written: rows (q_atom_idx, kv_split_idx) per SM, then (B·atoms, 0)). GO_MODEL_SM90_MQA (the default): the SM90
 * partition, block_kv = 64 and B <= 58112 (the SM90 kernel's shared-memory bound). */
int32_t go_get_paged_mqa_logits_metadata(const go_tensor* context_lens, int32_t block_kv, int32_t num_sms,
                                         const go_tensor* schedule_meta, int32_t model);

/* cublaslt_gemm_{nt,nn,tn,tt} (deepgemm-ops.md §5.2): D = A·Bᵀ (+ C with beta 1) run by NVIDIA's cuBLASLt itself.
 * a [M, K], b [N, K] views (any strides): e4m3 | e5m2 raw (no scales; not both e5m2), or both bf16; d bf16 | f32
 * [M, N]; c optional, dtype and shape of d. split_k: 0 = the algorithm cuBLASLt's heuristic puts first, s >= 1 = one
 * with s K splits (GO_ERR_UNSUPPORTED when cuBLASLt has none). The algorithm that ran is written to algo
 * (NUL-terminated, truncated to algo_len; NULL with algo_len 0 for none): "algo=ID tile=T stages=S splitk=N
 * reduction=R swizzle=W custom=C lt=VERSION". Model GO_MODEL_CUBLASLT (the default). Where no cuBLASLt library can be
 * loaded the call is GO_ERR_UNSUPPORTED naming the paths tried. */
int32_t go_cublaslt_gemm(const go_tensor* a, const go_tensor* b, const go_tensor* c, const go_tensor* d,
                         int32_t split_k, char* algo, int64_t algo_len, int32_t model);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* GEMM_ORACLE_H */
