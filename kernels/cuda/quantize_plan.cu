// The argument rules of go_quantize (gemm_oracle.h), from the tensor descriptors alone: recipe and options as DeepGEMM
// asserts them (deepgemm-ops.md §2.3–§2.8), the MX / NVFP4 block sizes (numerics.md §5–§6), dtypes and shapes of every
// output, and that no output overlaps x or another output. Host code only: the CUDA backend runs it after its
// allocation-registry checks (backend.cu); the host test library of tests/ffi links it too, so the rules are tested
// without a GPU.
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <initializer_list>

#include "quant_math.cuh"
#include "quantize.h"

namespace go_quant {
namespace {

struct Span {
  uintptr_t lo = 0, hi = 0;  // byte extent [lo, hi)
};

int elem_bytes(int32_t dt) {
  switch (dt) {
    case GO_F32:
    case GO_I32: return 4;
    case GO_BF16:
    case GO_F16: return 2;
    case GO_I64: return 8;
    default: return 1;
  }
}

const char* dtype_str(int32_t dt) {
  static const char* names[] = {"f32", "bf16", "f16", "e4m3", "e5m2", "ue8m0", "i32", "i64", "u8", "i8"};
  return dt >= 0 && dt <= 9 ? names[dt] : "unknown";
}

class Planner {
 public:
  Planner(char* msg, size_t cap) : msg_(msg), cap_(cap) {}

  int32_t fail(int32_t status, const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    if (msg_ && cap_) vsnprintf(msg_, cap_, fmt, ap);
    va_end(ap);
    return status;
  }

  // A present 2-D (or 1-D) tensor of one of the dtypes, with the given shape; *span its byte extent.
  int32_t tensor(const go_tensor* t, const char* name, std::initializer_list<int32_t> dtypes, int ndim,
                 std::initializer_list<int64_t> shape, Span* span) {
    if (t == nullptr || t->data == nullptr) return fail(GO_ERR_INVALID_ARGUMENT, "%s is required (got a null tensor)", name);
    bool ok = false;
    for (int32_t d : dtypes) ok = ok || d == t->dtype;
    if (!ok) return fail(GO_ERR_INVALID_ARGUMENT, "%s: dtype %s is not accepted here", name, dtype_str(t->dtype));
    if (t->ndim != ndim) return fail(GO_ERR_INVALID_ARGUMENT, "%s: ndim %d, expected %d", name, t->ndim, ndim);
    int i = 0;
    uint64_t last = 0;
    bool empty = false;
    for (int64_t want : shape) {
      if (t->shape[i] != want || t->strides[i] < 0)
        return fail(GO_ERR_INVALID_ARGUMENT, "%s: dim %d has size %lld (stride %lld), expected size %lld", name, i,
                    static_cast<long long>(t->shape[i]), static_cast<long long>(t->strides[i]),
                    static_cast<long long>(want));
      if (want == 0) empty = true;
      else last += static_cast<uint64_t>(want - 1) * static_cast<uint64_t>(t->strides[i]);
      ++i;
    }
    span->lo = reinterpret_cast<uintptr_t>(t->data);
    span->hi = empty ? span->lo : span->lo + (last + 1) * elem_bytes(t->dtype);
    return GO_OK;
  }

 private:
  char* msg_;
  size_t cap_;
};

bool overlap(const Span& a, const Span& b) { return a.lo < a.hi && b.lo < b.hi && a.lo < b.hi && b.lo < a.hi; }

}  // namespace

int32_t plan_quantize(int32_t kind, const go_tensor* x, const go_tensor* q, const go_tensor* sf, const go_tensor* gsf,
                      int32_t gran_k, int32_t flags, int32_t scale_rule, int32_t model, QuantParams* out, char* msg,
                      size_t cap) {
  Planner pl(msg, cap);
  const char* fn = "go_quantize";
  if (model != GO_MODEL_DEFAULT && model != GO_MODEL_GPU && model != GO_MODEL_CPU)
    return pl.fail(GO_ERR_UNSUPPORTED, "%s: model %d: the quantizers have the models gpu (8) and cpu (9)", fn, model);
  if (kind < GO_PER_TOKEN_CAST_TO_FP8 || kind > GO_NVFP4_TORCHAO)
    return pl.fail(GO_ERR_INVALID_ARGUMENT, "%s: unknown recipe %d (go_quant_kind 0..8)", fn, kind);
  const bool deepgemm = kind <= GO_PER_TOKEN_CAST_TO_FP4;
  const bool mx = kind >= GO_MXFP8_E4M3 && kind <= GO_MXFP4, nvfp4 = kind >= GO_NVFP4_TE;
  const bool fp4 = packs_fp4(kind);
  const bool per_token = kind == GO_PER_TOKEN_CAST_TO_FP8 || kind == GO_PER_TOKEN_CAST_TO_FP4;
  if (flags & ~(GO_QUANT_USE_UE8M0 | GO_QUANT_USE_PACKED_UE8M0))
    return pl.fail(GO_ERR_INVALID_ARGUMENT, "%s: unknown flag bits 0x%x", fn, flags);
  const bool ue8m0 = (flags & GO_QUANT_USE_UE8M0) != 0, packed = (flags & GO_QUANT_USE_PACKED_UE8M0) != 0;
  if (!deepgemm && flags != 0)
    return pl.fail(GO_ERR_INVALID_ARGUMENT, "%s: use_ue8m0 / use_packed_ue8m0 apply to DeepGEMM's casts only", fn);
  if (packed && !per_token)
    return pl.fail(GO_ERR_INVALID_ARGUMENT, "%s: use_packed_ue8m0 applies to the per-token casts only (deepgemm-ops.md §2.3)", fn);
  if (packed && !ue8m0)
    return pl.fail(GO_ERR_INVALID_ARGUMENT, "%s: use_packed_ue8m0 requires use_ue8m0 (packed scales are powers of two)", fn);
  if (mx ? (scale_rule < GO_MX_FLOOR || scale_rule > GO_MX_RCEIL) : scale_rule != 0)
    return pl.fail(GO_ERR_INVALID_ARGUMENT, "%s: scale_rule %d (MX: 0 floor, 1 ceil, 2 even, 3 rceil; other recipes: 0)", fn,
                   scale_rule);
  const int block = mx ? 32 : nvfp4 ? 16 : 0;
  if (deepgemm ? gran_k < 1 : (gran_k != 0 && gran_k != block))
    return pl.fail(GO_ERR_INVALID_ARGUMENT, "%s: gran_k %d (DeepGEMM casts: > 0; MX: 0 or 32; NVFP4: 0 or 16)", fn, gran_k);
  if (kind == GO_PER_TOKEN_CAST_TO_FP4 && gran_k % 2 != 0)
    return pl.fail(GO_ERR_UNSUPPORTED, "%s: per_token_cast_to_fp4 with an odd gran_k %d (a packed byte would straddle two groups)",
                   fn, gran_k);
  if (x == nullptr || x->data == nullptr) return pl.fail(GO_ERR_INVALID_ARGUMENT, "x is required (got a null tensor)");
  if (x->ndim != 2) return pl.fail(GO_ERR_INVALID_ARGUMENT, "x: ndim %d, expected 2 ([m, n])", x->ndim);
  const int64_t m = x->shape[0], n = x->shape[1];
  if (m < 0 || n < 0 || m >= (int64_t(1) << 31) || n >= (int64_t(1) << 31))
    return pl.fail(GO_ERR_INVALID_ARGUMENT, "%s: x is [%lld, %lld]; each extent must be in [0, 2^31)", fn,
                   static_cast<long long>(m), static_cast<long long>(n));
  if (fp4 && n % 2 != 0)
    return pl.fail(GO_ERR_INVALID_ARGUMENT, "%s: n = %lld is odd; FP4 packs two codes per byte", fn, static_cast<long long>(n));
  if (block && n % block != 0)
    return pl.fail(GO_ERR_INVALID_ARGUMENT, "%s: n = %lld is not a multiple of the block size %d", fn,
                   static_cast<long long>(n), block);
  if (kind == GO_PER_CHANNEL_CAST_TO_FP8 && m % gran_k != 0)
    return pl.fail(GO_ERR_INVALID_ARGUMENT, "%s: per_channel_cast_to_fp8 needs m %% gran_k == 0 (m = %lld, gran_k = %d)", fn,
                   static_cast<long long>(m), gran_k);
  Span sx, sq, ss, sg;
  int32_t st = pl.tensor(x, "x", {GO_F32, GO_BF16, GO_F16}, 2, {m, n}, &sx);
  if (st != GO_OK) return st;
  if (fp4) st = pl.tensor(q, "q", {GO_U8, GO_I8}, 2, {m, n / 2}, &sq);
  else st = pl.tensor(q, "q", {kind == GO_MXFP8_E5M2 ? GO_E5M2 : GO_E4M3}, 2, {m, n}, &sq);
  if (st != GO_OK) return st;
  const Problem pr = make_problem(kind, m, n, deepgemm ? gran_k : block, model != GO_MODEL_CPU, ue8m0, scale_rule);
  int64_t words = 0;
  if (packed) {
    if (kind == GO_PER_TOKEN_CAST_TO_FP8 && pr.gc % 4 != 0)
      return pl.fail(GO_ERR_INVALID_ARGUMENT,
                     "%s: packed UE8M0 needs the group count %lld per row to be a multiple of 4 (pack_ue8m0_to_int)", fn,
                     static_cast<long long>(pr.gc));
    words = (pr.gc + 3) / 4;
    st = pl.tensor(sf, "sf", {GO_I32}, 2, {m, words}, &ss);
  } else if (deepgemm) {
    st = pl.tensor(sf, "sf", {GO_F32}, 2, {pr.gr, pr.gc}, &ss);
  } else {
    st = pl.tensor(sf, "sf", {mx ? GO_UE8M0 : GO_E4M3, GO_U8}, 2, {pr.gr, pr.gc}, &ss);
  }
  if (st != GO_OK) return st;
  const bool has_g = gsf != nullptr && gsf->data != nullptr;
  if (nvfp4) {
    st = pl.tensor(gsf, "global_sf", {GO_F32}, 1, {1}, &sg);
    if (st != GO_OK) return st;
  } else if (has_g) {
    return pl.fail(GO_ERR_INVALID_ARGUMENT, "%s: global_sf is an output of the NVFP4 recipes only", fn);
  }
  if (overlap(sq, sx) || overlap(ss, sx) || overlap(sg, sx))
    return pl.fail(GO_ERR_INVALID_ARGUMENT, "%s: an output overlaps x", fn);
  if (overlap(sq, ss) || overlap(sq, sg) || overlap(ss, sg))
    return pl.fail(GO_ERR_INVALID_ARGUMENT, "%s: the outputs q, sf, global_sf overlap", fn);
  QuantParams p;
  std::memset(&p, 0, sizeof p);
  p.kind = kind;
  p.m = m;
  p.n = n;
  p.gran_k = deepgemm ? gran_k : block;
  p.gpu = model != GO_MODEL_CPU;
  p.ue8m0 = ue8m0;
  p.rule = scale_rule;
  p.x = x->data;
  p.x_type = x->dtype == GO_F32 ? kXF32 : x->dtype == GO_BF16 ? kXBf16 : kXF16;
  p.x_s0 = x->strides[0];
  p.x_s1 = x->strides[1];
  p.q = static_cast<uint8_t*>(q->data);
  p.q_s0 = q->strides[0];
  p.q_s1 = q->strides[1];
  p.sf = sf->data;
  p.sf_form = packed ? kSfPacked : deepgemm ? kSfF32 : kSfCode;
  p.sf_s0 = sf->strides[0];
  p.sf_s1 = sf->strides[1];
  p.sf_words = words;
  p.global_sf = nvfp4 ? static_cast<float*>(gsf->data) : nullptr;
  *out = p;
  return GO_OK;
}

}  // namespace go_quant
