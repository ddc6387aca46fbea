// The arithmetic of DeepGEMM's utility quantizers and of the MX / NVFP4 recipes, one group at a time, as the
// reference computes it (reference/quant/*.ts): host-and-device functions, so the CUDA kernels (quantize.cu) and a
// host harness (tests/kernels/cuda_quant_math_test.ts compiles this header with g++ and checks it against the
// TypeScript reference) run the same code.
//
// Rules, with the sections that state them:
// - amax: max |x| over the group in fp32, NaN-propagating like torch.amax (deepgemm-ops.md §2.4 step 2);
// - DeepGEMM scales: amax clamped to 1e-4, sf = amax / D with PyTorch's scalar division: on a CUDA tensor
//   fl32(amax · fl32(1/D)), on a CPU tensor a true division (deepgemm-ops.md §2, "Division by a Python scalar");
//   optional ceil_to_ue8m0 on the bits (§2.2); the reciprocal fl32(1/sf) (§2.4 step 4);
// - codes: E4M3 by PyTorch's cast (§1: RNE, |x| rounding above 448 → NaN 0x7F|sign, sign kept); E2M1 by DeepGEMM's
//   strict thresholds (§2.8 step 3: ties toward zero, NaN → 0, never −0);
// - products fl32(x · r) whose result is NaN get the device's NaN spelling: canonical 0x7FFFFFFF on a GPU, x86's
//   (a NaN x quieted, else 0x7FC00000 for a NaN r, else 0xFFC00000) for the CPU semantics (_group_quant.ts);
// - MX: torchao's scale rules floor / ceil / even / rceil and element casts (numerics.md §5, §5.2);
// - NVFP4: TransformerEngine's and torchao's operation orders (numerics.md §6).
#pragma once
#include <cstdint>
#include <cstring>

#if defined(__CUDACC__)
#define GO_QHD __host__ __device__ __forceinline__
#else
#define GO_QHD inline
#endif

namespace go_quant {

// Recipes, in DeepGEMM's / torchao's names (gemm_oracle.h go_quant_kind).
enum Kind : int {
  kPerTokenCastToFp8 = 0,
  kPerChannelCastToFp8 = 1,
  kPerBlockCastToFp8 = 2,
  kPerTokenCastToFp4 = 3,
  kMxfp8E4m3 = 4,
  kMxfp8E5m2 = 5,
  kMxfp4 = 6,
  kNvfp4Te = 7,
  kNvfp4Torchao = 8,
};

// torchao's MX scale rules (ScaleCalculationMode).
enum Rule : int { kFloor = 0, kCeil = 1, kEven = 2, kRceil = 3 };

// ---- fp32 bits and correctly rounded operations -------------------------------------------------------------------

GO_QHD uint32_t f2u(float f) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(f);
#else
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
#endif
}

GO_QHD float u2f(uint32_t u) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(u);
#else
  float f;
  std::memcpy(&f, &u, 4);
  return f;
#endif
}

GO_QHD bool is_nan(float f) { return (f2u(f) & 0x7fffffffu) > 0x7f800000u; }

// The exact fp32 value of an IEEE binary16 pattern.
GO_QHD float f16_to_f32(uint16_t h) {
  const uint32_t s = static_cast<uint32_t>(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  if (e == 0x1f) return u2f(s | 0x7f800000u | (m << 13));  // Inf / NaN (payload kept)
  if (e != 0) return u2f(s | ((e - 15 + 127) << 23) | (m << 13));
  if (m == 0) return u2f(s);
  int k = 0;  // subnormal: m · 2^-24, normalised
  uint32_t mm = m;
  while ((mm & 0x400u) == 0) {
    mm <<= 1;
    ++k;
  }
  return u2f(s | (static_cast<uint32_t>(127 - 14 - k) << 23) | ((mm & 0x3ffu) << 13));
}

// One fp32 RNE multiply / division / reciprocal, never contracted into an FMA (host builds use -ffp-contract=off).
GO_QHD float mul_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}

GO_QHD float div_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fdiv_rn(a, b);
#else
  return a / b;
#endif
}

GO_QHD float rcp_rn(float a) {
#if defined(__CUDA_ARCH__)
  return __frcp_rn(a);
#else
  return 1.0f / a;
#endif
}

// C's fminf: the non-NaN operand when one is NaN (TransformerEngine's clamps, numerics.md §6).
GO_QHD float fmin_c(float a, float b) {
  if (is_nan(a)) return b;
  if (is_nan(b)) return a;
  return a < b ? a : b;
}

// torch.clamp(v, lo, hi): v < lo → lo, v > hi → hi, a NaN stays.
GO_QHD float clamp_keep_nan(float v, float lo, float hi) { return v < lo ? lo : (v > hi ? hi : v); }

// amax step: max |x| with NaN propagation (once NaN, the running value stays NaN).
GO_QHD float amax_step(float a, float x) {
  const float v = u2f(f2u(x) & 0x7fffffffu);
  return (v > a || is_nan(v)) ? v : a;
}

// Merging two partial amax values (a reduction tree): NaN wins; max is order-independent otherwise.
GO_QHD float amax_merge(float a, float b) {
  if (is_nan(a)) return a;
  if (is_nan(b)) return b;
  return a > b ? a : b;
}

// The NaN spelling of a product fl32(x · r) that is NaN (_group_quant.ts productNanBits).
GO_QHD uint32_t nan_product_bits(bool gpu, uint32_t x_bits, bool r_nan) {
  if (gpu) return 0x7fffffffu;
  if ((x_bits & 0x7fffffffu) > 0x7f800000u) return x_bits | 0x00400000u;
  return r_nan ? 0x7fc00000u : 0xffc00000u;
}

// fl32(x · r) as bits, with the device's NaN spelling.
GO_QHD uint32_t product_bits(float x, float r, bool gpu) {
  const float p = mul_rn(x, r);
  return is_nan(p) ? nan_product_bits(gpu, f2u(x), is_nan(r)) : f2u(p);
}

// PyTorch's `t / c` for an fp32 tensor value t and a Python scalar c (reference/quant/scalar_division.ts).
GO_QHD float divide_by_scalar(float t, float c, bool gpu) { return gpu ? mul_rn(t, rcp_rn(c)) : div_rn(t, c); }

// ---- minifloat encoders -------------------------------------------------------------------------------------------

// |x| (fp32 bits, finite, not NaN) rounded to a minifloat grid with `mbits` mantissa bits and exponent bias `bias`,
// as the code magnitude (exponent field << mbits | mantissa); may exceed the largest finite code (overflow).
// ties_even: RNE; otherwise ties toward zero.
GO_QHD uint32_t round_magnitude(uint32_t a, int mbits, int bias, bool ties_even) {
  if (a == 0) return 0;
  const int e_field = static_cast<int>(a >> 23);
  if (e_field == 0) return 0;  // fp32 subnormals are far below half the smallest subnormal of these formats
  const int E = e_field - 127;
  const uint32_t sig = (a & 0x7fffffu) | 0x800000u;  // value = sig · 2^(E − 23)
  const int emin = 1 - bias;
  const int q = (E >= emin ? E : emin) - mbits;  // exponent of the grid spacing at |x|
  const int shift = q - (E - 23);                // fp32 bits dropped (≥ 23 − mbits > 0)
  if (shift > 25) return 0;                      // |x| < 2^(q − 1): below half a spacing
  uint32_t r = sig >> shift;
  const uint32_t rem = sig & ((1u << shift) - 1u), half = 1u << (shift - 1);
  if (rem > half || (rem == half && ties_even && (r & 1u))) ++r;
  // r counts spacings of 2^q; the code magnitude is (max(E, emin) + bias − 1) · 2^mbits + r (carries included).
  return static_cast<uint32_t>((E >= emin ? E : emin) + bias - 1) * (1u << mbits) + r;
}

// PyTorch .to(float8_e4m3fn) (deepgemm-ops.md §1; profile torch_2_11): RNE; a magnitude rounding above 448 (0x7E),
// ±Inf and NaN give 0x7F with the sign kept.
GO_QHD uint8_t enc_e4m3_torch(uint32_t u) {
  const uint32_t s = (u >> 24) & 0x80u, a = u & 0x7fffffffu;
  if (a >= 0x7f800000u) return static_cast<uint8_t>(s | 0x7f);
  const uint32_t m = round_magnitude(a, 3, 7, true);
  return static_cast<uint8_t>(s | (m > 0x7e ? 0x7fu : m));
}

// PyTorch .to(float8_e5m2) (numerics.md §3.2; torch_2_11): RNE, overflow and ±Inf → ±Inf (0x7C), NaN → 0x7F|sign.
GO_QHD uint8_t enc_e5m2_torch(uint32_t u) {
  const uint32_t s = (u >> 24) & 0x80u, a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return static_cast<uint8_t>(s | 0x7f);
  if (a == 0x7f800000u) return static_cast<uint8_t>(s | 0x7c);
  const uint32_t m = round_magnitude(a, 2, 15, true);
  return static_cast<uint8_t>(s | (m > 0x7b ? 0x7cu : m));
}

// cvt.rn.satfinite.e4m3x2.f32 (numerics.md §3.1; cuda_satfinite): RNE, overflow and ±Inf → ±448, NaN → 0x7F.
GO_QHD uint8_t enc_e4m3_satfinite(uint32_t u) {
  const uint32_t s = (u >> 24) & 0x80u, a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return 0x7f;
  if (a == 0x7f800000u) return static_cast<uint8_t>(s | 0x7e);
  const uint32_t m = round_magnitude(a, 3, 7, true);
  return static_cast<uint8_t>(s | (m > 0x7e ? 0x7eu : m));
}

// DeepGEMM's per_token_cast_to_fp4 E2M1 (deepgemm-ops.md §2.8 step 3): code = #{b ∈ (0.25, 0.75, 1.25, 1.75, 2.5,
// 3.5, 5) : |y| > b}; the sign bit only for y < 0 with a non-zero code; NaN → 0.
GO_QHD uint8_t enc_e2m1_deepgemm(float y) {
  const float a = u2f(f2u(y) & 0x7fffffffu);
  uint8_t c = static_cast<uint8_t>((a > 0.25f) + (a > 0.75f) + (a > 1.25f) + (a > 1.75f) + (a > 2.5f) + (a > 3.5f) +
                                   (a > 5.0f));
  if (y < 0.0f && c != 0) c |= 8;
  return c;
}

// E2M1 RNE saturating to ±6 (sign kept, −0 → 0x8) for finite and infinite inputs.
GO_QHD uint8_t enc_e2m1_rn_sat(uint32_t u) {
  const uint32_t s = (u >> 28) & 0x8u, a = u & 0x7fffffffu;
  if (a >= 0x7f800000u) return static_cast<uint8_t>(s | 0x7);
  const uint32_t m = round_magnitude(a, 1, 1, true);
  return static_cast<uint8_t>(s | (m > 0x7 ? 0x7u : m));
}

// torchao f32_to_f4_unpacked (numerics.md §3.3; profile torchao_f4): RNE, saturate to ±6; a NaN takes the code's
// normal-number path (reference/formats/profiles.ts torchaoF4Nan).
GO_QHD uint8_t enc_e2m1_torchao(uint32_t u) {
  const uint32_t a = u & 0x7fffffffu;
  if (a > 0x7f800000u) {
    const uint32_t odd = (a >> 22) & 1u;
    const int32_t t = static_cast<int32_t>(a + (static_cast<uint32_t>(1 - 127) << 23) + 0x1fffffu + odd);
    return static_cast<uint8_t>(((t >> 22) & 0xff) | ((u >> 31) << 3));
  }
  return enc_e2m1_rn_sat(u);
}

// __nv_cvt_float_to_fp4(x, __NV_E2M1, cudaRoundNearest) (numerics.md §3.3; cuda_fp4_rn): RNE satfinite, NaN → +6.
GO_QHD uint8_t enc_e2m1_cuda_rn(uint32_t u) {
  if ((u & 0x7fffffffu) > 0x7f800000u) return 0x7;
  return enc_e2m1_rn_sat(u);
}

// The value of an E4M3FN code (deepgemm-ops.md §1); 0x7F / 0xFF are NaN.
GO_QHD float dec_e4m3(uint8_t c) {
  const uint32_t s = (c & 0x80u) << 24, e = (c >> 3) & 0xfu, m = c & 7u;
  if (e == 0xf && m == 7) return u2f(s | 0x7fc00000u);
  if (e == 0) return u2f(s | f2u(static_cast<float>(m) * 0.001953125f));  // m · 2^-9, exact
  return u2f(s | ((e - 7 + 127) << 23) | (m << 20));
}

// ---- scales --------------------------------------------------------------------------------------------------------

// ceil_to_ue8m0 on fp32 bits (deepgemm-ops.md §2.2): exponent field + (mantissa ≠ 0), clamped to [1, 254].
GO_QHD uint32_t ceil_ue8m0_bits(uint32_t bits) {
  const uint32_t a = bits & 0x7fffffffu;
  int e = static_cast<int>(a >> 23) + ((a & 0x7fffffu) != 0 ? 1 : 0);
  e = e < 1 ? 1 : (e > 254 ? 254 : e);
  return static_cast<uint32_t>(e) << 23;
}

// DeepGEMM's group scale from amax (deepgemm-ops.md §2.4 steps 2–4, §2.8 step 1): sf = amax.clamp(1e-4) / D with the
// device's scalar division, optionally ceil_to_ue8m0; *r = fl32(1/sf).
GO_QHD float deepgemm_scale(float amax, float divisor, bool gpu, bool ue8m0, float* r) {
  const float floor_1e4 = u2f(0x38d1b717u);  // 1e-4 as fp32
  const float a = amax < floor_1e4 ? floor_1e4 : amax;  // NaN stays NaN
  float s = divide_by_scalar(a, divisor, gpu);
  if (ue8m0) s = u2f(ceil_ue8m0_bits(f2u(s)));
  *r = rcp_rn(s);
  return s;
}

// MX element formats: emax (exponent of the largest normal), mantissa bits, largest finite value (numerics.md §5.1).
struct MxElem {
  int emax, mbits;
  float max;
};

GO_QHD MxElem mx_elem(int kind) {
  if (kind == kMxfp8E5m2) return MxElem{15, 2, 57344.0f};
  if (kind == kMxfp4) return MxElem{2, 1, 6.0f};
  return MxElem{8, 3, 448.0f};
}

// The E8M0 scale code of one MX block from its amax bits, by torchao's rule (reference/quant/mx.ts mxScaleCode).
GO_QHD uint8_t mx_scale_code(uint32_t amax_bits, int kind, int rule) {
  const MxElem e = mx_elem(kind);
  if (rule == kRceil) {
    const uint32_t b = f2u(mul_rn(u2f(amax_bits), rcp_rn(e.max)));  // descale = amax · fl32(1/max_elem)
    if ((b & 0x7f800000u) == 0x7f800000u) return 0xff;
    const uint32_t exp = (b >> 23) & 0xffu, man = b & 0x7fffffu;
    const bool up = exp == 0 ? man > 0x400000u : man != 0;
    return static_cast<uint8_t>(exp + (up ? 1 : 0));
  }
  uint32_t bits = amax_bits;
  if (rule == kEven && (bits & 0x7fffffffu) <= 0x7f800000u) bits = (bits + (1u << (22 - e.mbits))) & 0xff800000u;
  if ((bits & 0x7f800000u) == 0x7f800000u) return 0xff;
  int exp = static_cast<int>((bits >> 23) & 0xffu) - 127;
  if (rule == kCeil && (bits & 0x7fffffu) != 0) exp += 1;
  int unbiased = exp - e.emax;
  unbiased = unbiased < -127 ? -127 : (unbiased > 128 ? 128 : unbiased);
  return static_cast<uint8_t>((unbiased + 127) & 0xff);
}

// torchao's _e8m0_scale_to_reciprocal_fp32: 2^(127 − code); code 254 → 2^-127, code 255 → NaN (mx.ts mxReciprocal).
GO_QHD float mx_reciprocal(uint8_t code) {
  const uint32_t r = (254u - code) & 0xffu;
  if (r == 255) return u2f(0x7fc00000u);
  return u2f(r == 0 ? 0x00400000u : r << 23);
}

// One MX element code from x and the block's reciprocal r (mx.ts mxQuantize): fl32(x · r), clamped to ±max first for
// floor/ceil/even with E4M3/E5M2, then PyTorch's cast (E4M3/E5M2) or torchao's f4 cast (E2M1).
GO_QHD uint8_t mx_element(float x, float r, int kind, int rule, bool gpu) {
  const MxElem e = mx_elem(kind);
  float p = mul_rn(x, r);
  if (rule != kRceil && kind != kMxfp4) p = clamp_keep_nan(p, -e.max, e.max);
  const uint32_t bits = is_nan(p) ? nan_product_bits(gpu, f2u(x), is_nan(r)) : f2u(p);
  if (kind == kMxfp4) return enc_e2m1_torchao(bits);
  return kind == kMxfp8E5m2 ? enc_e5m2_torch(bits) : enc_e4m3_torch(bits);
}

// NVFP4, TransformerEngine's order (nvfp4.ts nvfp4QuantizeTe): from the tensor's amax, S_enc = fl32(2688 / amax)
// capped at FLT_MAX (1 when amax is 0), S_dec = fl32(1 / S_enc), and fl32(S_enc · fl32(1/6)).
struct Nvfp4TeGlobal {
  float s_dec, s_enc_over6;
};

GO_QHD Nvfp4TeGlobal nvfp4_te_global(float global_amax) {
  const float flt_max = u2f(0x7f7fffffu);
  float s_enc = fmin_c(div_rn(2688.0f, global_amax), flt_max);
  if (global_amax == 0.0f || s_enc == 0.0f) s_enc = 1.0f;
  return Nvfp4TeGlobal{rcp_rn(s_enc), mul_rn(s_enc, rcp_rn(6.0f))};
}

// TE block: scale code = E4M3 satfinite of fl32(block_amax · S_enc/6); inv = fminf(fl32(1/fl32(e4m3(s) · S_dec)), FLT_MAX).
GO_QHD uint8_t nvfp4_te_block(float block_amax, Nvfp4TeGlobal g, float* inv) {
  const uint8_t sc = enc_e4m3_satfinite(f2u(mul_rn(block_amax, g.s_enc_over6)));
  *inv = fmin_c(rcp_rn(mul_rn(dec_e4m3(sc), g.s_dec)), u2f(0x7f7fffffu));
  return sc;
}

// TE element: E2M1 RN satfinite of fl32(x · inv).
GO_QHD uint8_t nvfp4_te_element(float x, float inv) { return enc_e2m1_cuda_rn(f2u(mul_rn(x, inv))); }

// NVFP4, torchao's order (nvfp4.ts nvfp4QuantizeTorchao, per_tensor_scale "auto"): pts = amax / 2688 (scalar
// division); block: E4M3(clamp(fl32(fl32(block_amax / 6) / pts), 2^-6, 448)); mult = fl32(fl32(1/pts) / e4m3(scale)).
GO_QHD float nvfp4_torchao_pts(float global_amax, bool gpu) { return divide_by_scalar(global_amax, 2688.0f, gpu); }

GO_QHD uint8_t nvfp4_torchao_block(float block_amax, float pts, bool gpu, float* mult) {
  const float block_scale = divide_by_scalar(block_amax, 6.0f, gpu);
  const float v = clamp_keep_nan(div_rn(block_scale, pts), 0.015625f, 448.0f);
  const uint8_t sc = enc_e4m3_torch(is_nan(v) ? nan_product_bits(gpu, 0, false) : f2u(v));
  *mult = div_rn(rcp_rn(pts), dec_e4m3(sc));
  return sc;
}

// torchao element: torchao f4 cast of clamp(fl32(x · mult), −6, 6).
GO_QHD uint8_t nvfp4_torchao_element(float x, float mult, bool gpu) {
  const float p = clamp_keep_nan(mul_rn(x, mult), -6.0f, 6.0f);
  return enc_e2m1_torchao(is_nan(p) ? nan_product_bits(gpu, f2u(x), is_nan(mult)) : f2u(p));
}

// ---- group geometry ------------------------------------------------------------------------------------------------

// The group shape of a recipe: bm rows × bn columns (gran_k: DeepGEMM's group size along K).
GO_QHD void group_shape(int kind, int gran_k, int* bm, int* bn) {
  switch (kind) {
    case kPerChannelCastToFp8: *bm = gran_k; *bn = 1; return;
    case kPerBlockCastToFp8: *bm = gran_k; *bn = gran_k; return;
    case kMxfp8E4m3:
    case kMxfp8E5m2:
    case kMxfp4: *bm = 1; *bn = 32; return;
    case kNvfp4Te:
    case kNvfp4Torchao: *bm = 1; *bn = 16; return;
    default: *bm = 1; *bn = gran_k; return;
  }
}

// Whether the recipe's codes are FP4 (two per byte, element 2j in the low nibble of byte j, deepgemm-ops.md §2.8).
GO_QHD bool packs_fp4(int kind) {
  return kind == kPerTokenCastToFp4 || kind == kMxfp4 || kind == kNvfp4Te || kind == kNvfp4Torchao;
}

// The per-group state the element codes need, from the group's amax and (NVFP4) the tensor's amax.
struct GroupState {
  float r;         // multiplier of x (DeepGEMM: fl32(1/sf); MX: 2^-scale; NVFP4: inv / mult)
  float sf;        // DeepGEMM: the fp32 scale written to sf
  uint8_t code;    // MX: E8M0 code; NVFP4: E4M3 block-scale code
};

GO_QHD GroupState group_state(int kind, float amax, bool gpu, bool ue8m0, int rule, float global) {
  GroupState st{0.0f, 0.0f, 0};
  switch (kind) {
    case kPerTokenCastToFp8:
    case kPerChannelCastToFp8:
    case kPerBlockCastToFp8: st.sf = deepgemm_scale(amax, 448.0f, gpu, ue8m0, &st.r); break;
    case kPerTokenCastToFp4: st.sf = deepgemm_scale(amax, 6.0f, gpu, ue8m0, &st.r); break;
    case kMxfp8E4m3:
    case kMxfp8E5m2:
    case kMxfp4:
      st.code = mx_scale_code(f2u(amax), kind, rule);
      st.r = mx_reciprocal(st.code);
      break;
    case kNvfp4Te: st.code = nvfp4_te_block(amax, nvfp4_te_global(global), &st.r); break;
    default: st.code = nvfp4_torchao_block(amax, nvfp4_torchao_pts(global, gpu), gpu, &st.r); break;
  }
  return st;
}

// The code of one element of a group.
GO_QHD uint8_t element_code(int kind, float x, const GroupState& st, bool gpu, int rule) {
  switch (kind) {
    case kPerTokenCastToFp8:
    case kPerChannelCastToFp8:
    case kPerBlockCastToFp8: return enc_e4m3_torch(product_bits(x, st.r, gpu));
    case kPerTokenCastToFp4: return enc_e2m1_deepgemm(mul_rn(x, st.r));  // a NaN product codes 0 either way
    case kMxfp8E4m3:
    case kMxfp8E5m2:
    case kMxfp4: return mx_element(x, st.r, kind, rule, gpu);
    case kNvfp4Te: return nvfp4_te_element(x, st.r);
    default: return nvfp4_torchao_element(x, st.r, gpu);
  }
}

// A quantization problem: x [m, n] (element (i, j) at x_at(i, j)), its recipe and options.
struct Problem {
  int kind;
  int64_t m, n;
  int gran_k;     // DeepGEMM recipes: group size along K
  bool gpu;       // PyTorch CUDA semantics (model gpu) or CPU semantics (model cpu)
  bool ue8m0;     // use_ue8m0
  int rule;       // MX scale rule
  int bm, bn;     // group shape (group_shape)
  int64_t gr, gc; // groups along m and n: ceil(m/bm), ceil(n/bn)
};

GO_QHD Problem make_problem(int kind, int64_t m, int64_t n, int gran_k, bool gpu, bool ue8m0, int rule) {
  Problem p{kind, m, n, gran_k, gpu, ue8m0, rule, 1, 1, 0, 0};
  group_shape(kind, gran_k, &p.bm, &p.bn);
  p.gr = (m + p.bm - 1) / p.bm;
  p.gc = (n + p.bn - 1) / p.bn;
  return p;
}

// Group g's rows [*r0, *r1) and columns [*c0, *c1) (groups row-major over [gr, gc]; partial groups at the edges
// hold fewer elements: zero padding does not change amax).
GO_QHD void group_bounds(const Problem& p, int64_t g, int64_t* r0, int64_t* r1, int64_t* c0, int64_t* c1) {
  const int64_t gi = g / p.gc, gj = g % p.gc;
  *r0 = gi * p.bm;
  *r1 = *r0 + p.bm < p.m ? *r0 + p.bm : p.m;
  *c0 = gj * p.bn;
  *c1 = *c0 + p.bn < p.n ? *c0 + p.bn : p.n;
}

// The per-tensor scale NVFP4 writes to global_sf: TE's S_dec, torchao's per_tensor_scale.
GO_QHD float nvfp4_global_sf(int kind, float global_amax, bool gpu) {
  return kind == kNvfp4Te ? nvfp4_te_global(global_amax).s_dec : nvfp4_torchao_pts(global_amax, gpu);
}

}  // namespace go_quant
