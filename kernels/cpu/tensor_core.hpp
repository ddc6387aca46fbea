// Tensor-core accumulation models (MMA-Sim's fused dot-add, numerics.md §8.1) and an exact accumulator, written
// for the CPU backend independently of the TypeScript reference. All arithmetic is on integers.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "common.hpp"

namespace go {

// An operand decoded as MMA-Sim decomposes it (numerics.md §8.1 step 2, MMA-Sim arithmetic.py
// extract_significand_exponent): value = sig · 2^(exp − FRAC) with the format's FRAC fraction bits; the exponent of a
// subnormal is clamped to the format's minimum (so |sig| < 2^FRAC); ZERO gets exp = −126 whatever the format.
// `val` is the value itself (exact in fp32 for e4m3, e5m2 and bf16; NaN/±Inf for specials).
struct Dec {
  float val;
  int16_t sig;      // signed significand (implicit bit included); 0 for specials
  int8_t exp;       // unbiased exponent (every operand format's exponents fit in [−126, 127])
  uint8_t special;  // 0 finite, 1 NaN, 2 +Inf, 3 −Inf
};

constexpr int kZeroExp = -126;

// Formats as data (numerics.md §1): exponent bits, fraction bits, bias, IEEE Inf/NaN or FN-style (E4M3: only S.1111.111
// is NaN, no Inf).
struct FloatFormat {
  int ebits, mbits, bias;
  bool ieee_specials;
};
constexpr FloatFormat kE4M3{4, 3, 7, false};
constexpr FloatFormat kE5M2{5, 2, 15, true};
constexpr FloatFormat kBF16{8, 7, 127, true};

inline Dec decode(uint32_t code, const FloatFormat& f) {
  uint32_t mmask = (1u << f.mbits) - 1, emask = (1u << f.ebits) - 1;
  bool neg = (code >> (f.ebits + f.mbits)) & 1u;
  uint32_t e = (code >> f.mbits) & emask, m = code & mmask;
  Dec d{0.0f, 0, 0, 0};
  if ((f.ieee_specials && e == emask) || (!f.ieee_specials && e == emask && m == mmask)) {
    bool nan = !f.ieee_specials || m != 0;
    d.special = nan ? 1 : (neg ? 3 : 2);
    d.val = nan ? std::numeric_limits<float>::quiet_NaN()
                : (neg ? -std::numeric_limits<float>::infinity() : std::numeric_limits<float>::infinity());
    return d;
  }
  if (e == 0 && m == 0) {
    d.exp = int8_t(kZeroExp);
    d.val = neg ? -0.0f : 0.0f;
    return d;
  }
  int32_t sig = e == 0 ? int32_t(m) : int32_t(m | (1u << f.mbits));
  d.sig = int16_t(neg ? -sig : sig);
  d.exp = int8_t(e == 0 ? 1 - f.bias : int(e) - f.bias);
  // sig·2^(exp − mbits) is exact in binary64 and representable in fp32 (bf16 subnormals are fp32 subnormals).
  uint64_t bits = uint64_t(d.exp - f.mbits + 1023) << 52;
  double scale;
  std::memcpy(&scale, &bits, 8);
  d.val = float(double(d.sig) * scale);
  return d;
}

// decode() of every e4m3 / e5m2 code, tabulated once.
inline const Dec* fp8_decode_table(bool e4m3) {
  struct Tables {
    Dec e4m3[256], e5m2[256];
    Tables() {
      for (uint32_t c = 0; c < 256; c++) {
        e4m3[c] = decode(c, kE4M3);
        e5m2[c] = decode(c, kE5M2);
      }
    }
  };
  static const Tables tables;
  return e4m3 ? tables.e4m3 : tables.e5m2;
}

// An fp32 value as MMA-Sim decomposes it: sig with 23 fraction bits (implicit bit included), exponent clamped at
// −126, zero -> −126.
struct F32Parts {
  int64_t sig;
  int exp;
  bool special;
};
inline F32Parts f32_parts(float x) {
  uint32_t u = f32_bits(x);
  uint32_t e = (u >> 23) & 0xFF, m = u & 0x7FFFFF;
  if (e == 0xFF) return {0, 0, true};
  int64_t sig = e == 0 ? int64_t(m) : int64_t(m | 0x800000u);
  if (u >> 31) sig = -sig;
  return {sig, (e == 0 && m == 0) ? kZeroExp : (e == 0 ? -126 : int(e) - 127), false};
}

// 2^k as a double for |k| <= 1000 (built from the bits: exact, no libm).
inline double pow2d(int k) {
  uint64_t bits = uint64_t(k + 1023) << 52;
  double d;
  std::memcpy(&d, &bits, 8);
  return d;
}

// trunc(v · 2^shift) toward zero, for |shift| of any size.
inline int64_t shift_trunc(int64_t v, int shift) {
  if (shift >= 0) return v << shift;  // callers keep shift small enough not to overflow
  if (shift <= -63) return 0;
  return v < 0 ? -((-v) >> -shift) : v >> -shift;
}

// Normalises S·2^unit_exp to fp32 with RZ to `keep` fraction bits (MMA-Sim nv_fused_dot_add "f32" keep = 23,
// "f32_e8m13" keep = 13), subnormals at 2^−126 with the same fraction count, exponent > 127 -> ±Inf; S == 0 -> +0.
inline float normalize_rz(int64_t s, int unit_exp, int keep) {
  if (s == 0) return 0.0f;
  bool neg = s < 0;
  uint64_t mag = neg ? uint64_t(-s) : uint64_t(s);
  int msb = 63 - __builtin_clzll(mag);
  int x = msb + unit_exp;  // value in [2^x, 2^(x+1))
  if (x > 127) return neg ? -std::numeric_limits<float>::infinity() : std::numeric_limits<float>::infinity();
  int lsb_exp = (x < -126 ? -126 : x) - keep;
  int drop = lsb_exp - unit_exp;
  double v;  // mag has at most 64 bits and the power of two is a normal double: the products are exact
  if (drop > 0) {
    mag = drop >= 64 ? 0 : mag >> drop;
    v = double(mag) * pow2d(lsb_exp);
  } else {
    v = double(mag) * pow2d(unit_exp);
  }
  float r = float(v);  // exact: at most keep+1 significant bits inside the fp32 range
  return neg ? -r : r;
}

// The special-value rule of MMA-Sim's fused_dot_add: the fp64 sum of the products (times the scales) plus c decides
// NaN (canonical fp32 0x7FFFFFFF) or ±Inf before any alignment happens.
inline float special_result(double fp64_sum) {
  if (std::isnan(fp64_sum)) return f32_from_bits(0x7FFFFFFFu);
  return fp64_sum > 0 ? std::numeric_limits<float>::infinity() : -std::numeric_limits<float>::infinity();
}

// One fused dot-add step D = c + Σ a_i·b_i (numerics.md §8.1): count terms, N kept fraction bits per aligned term,
// output RZ to KEEP fraction bits. scale_exp: the sum of the two block-scale exponents (block-scaled MMA adds them to
// every product exponent; 0 without scales). scale_nan: a NaN scale poisons the result.
//
// Each term is trunc(a·b · 2^(N + xs − E)) with E the largest term exponent: a·b is exact in binary64 (at most
// 16 significant bits), the power-of-two scaling is exact (the scaled value lies in [2^-300, 2^(N+2))), and the
// conversion to int64 truncates toward zero, term by term (numerics.md §8.2: 256 − 2^-6 -> 256).
template <int N, int KEEP>
inline float fused_dot_add(const Dec* a, const Dec* b, int count, float c, int scale_exp = 0, bool scale_nan = false) {
  F32Parts pc = f32_parts(c);
  int E = pc.exp;
  int special = int(pc.special) | int(scale_nan);
  int pmax = -100000;
  for (int i = 0; i < count; i++) {
    int e = a[i].exp + b[i].exp;
    pmax = e > pmax ? e : pmax;
    special |= a[i].special | b[i].special;
  }
  if (special) {
    // Special values first (MMA-Sim fused_dot_add): the fp64 sum of products·scales + c decides NaN or ±Inf.
    double sum = double(c);
    double scale = scale_nan ? std::numeric_limits<double>::quiet_NaN() : pow2d(scale_exp);
    for (int i = 0; i < count; i++) sum += double(a[i].val) * double(b[i].val) * scale;
    return special_result(sum);  // a NaN/Inf operand always makes that sum NaN or Inf
  }
  if (pmax + scale_exp > E) E = pmax + scale_exp;
  int64_t s = shift_trunc(pc.sig, N + pc.exp - E - 23);
  const int k = N + scale_exp - E;
  const double sp = pow2d(k);
  for (int i = 0; i < count; i++) s += int64_t(double(a[i].val) * double(b[i].val) * sp);
  return normalize_rz(s, E - N, KEEP);
}

// ---- exact accumulation -----------------------------------------------------------------------------------------

// A fixed-point accumulator wide enough for any sum of fp32·fp32·fp8·fp8 terms: bits from 2^−640 to 2^(1024−640).
// Positive and negative parts are kept apart, so additions never ripple through sign extension.
class ExactAcc {
 public:
  static constexpr int kLimbs = 16;
  static constexpr int kLow = -640;  // weight of bit 0

  void clear() {
    for (int i = 0; i < kLimbs; i++) pos_[i] = neg_[i] = 0;
    special_ = 0;
    nan_ = false;
  }
  ExactAcc() { clear(); }

  // Adds (neg ? −1 : 1) · mag · 2^exp.
  void add(bool neg, unsigned __int128 mag, int exp) {
    if (mag == 0) return;
    int pos = exp - kLow;
    if (pos < 0) {  // never happens for the supported formats; keep exactness by failing loudly
      fail(GO_ERR_INTERNAL, "exact accumulator: term below its range");
    }
    uint64_t* acc = neg ? neg_ : pos_;
    int limb = pos / 64, bit = pos % 64;
    // mag · 2^bit spans up to 3 limbs.
    uint64_t w0 = uint64_t(mag << bit);
    unsigned __int128 hi = bit == 0 ? (mag >> 64) : (mag >> (64 - bit));
    uint64_t w1 = uint64_t(hi), w2 = uint64_t(hi >> 64);
    uint64_t words[3] = {w0, w1, w2};
    unsigned __int128 carry = 0;
    for (int i = limb; i < kLimbs; i++) {
      unsigned __int128 t = carry + acc[i];
      if (i - limb < 3) t += words[i - limb];
      acc[i] = uint64_t(t);
      carry = t >> 64;
      if (carry == 0 && i - limb >= 2) break;
    }
    if (carry != 0) fail(GO_ERR_INTERNAL, "exact accumulator overflow");
  }

  void add_double(double x) {  // any finite double, exactly
    if (x == 0) return;
    if (!std::isfinite(x)) {
      add_special(x);
      return;
    }
    int e;
    double f = std::frexp(std::fabs(x), &e);  // |x| = f·2^e, f in [0.5, 1)
    uint64_t m = uint64_t(std::ldexp(f, 53));
    add(x < 0, m, e - 53);
  }

  void add_special(double x) {
    if (std::isnan(x)) nan_ = true;
    else special_ |= x > 0 ? 1 : 2;
  }

  // Rounds the exact value once to a binary format with `prec` significant bits and minimum normal exponent emin,
  // round to nearest even; returns it as a double (exactly representable in that format) or ±Inf beyond 2^(emax+1).
  double round(int prec, int emin, int emax) const;

 private:
  uint64_t pos_[kLimbs];
  uint64_t neg_[kLimbs];
  int special_;
  bool nan_;
};

inline double ExactAcc::round(int prec, int emin, int emax) const {
  if (nan_ || special_ == 3) return std::numeric_limits<double>::quiet_NaN();
  if (special_ == 1) return std::numeric_limits<double>::infinity();
  if (special_ == 2) return -std::numeric_limits<double>::infinity();
  // diff = pos − neg (two's complement over the limbs), then sign and magnitude.
  uint64_t d[kLimbs];
  unsigned __int128 borrow = 0;
  for (int i = 0; i < kLimbs; i++) {
    unsigned __int128 t = (unsigned __int128)pos_[i] - neg_[i] - borrow;
    d[i] = uint64_t(t);
    borrow = (t >> 64) ? 1 : 0;
  }
  bool negative = borrow != 0;
  if (negative) {  // negate
    unsigned __int128 carry = 1;
    for (int i = 0; i < kLimbs; i++) {
      unsigned __int128 t = (unsigned __int128)(~d[i]) + carry;
      d[i] = uint64_t(t);
      carry = t >> 64;
    }
  }
  int top = -1;
  for (int i = kLimbs - 1; i >= 0; i--) {
    if (d[i] != 0) {
      top = i * 64 + 63 - __builtin_clzll(d[i]);
      break;
    }
  }
  if (top < 0) return 0.0;
  auto bit = [&](int i) -> int { return i < 0 ? 0 : int((d[i / 64] >> (i % 64)) & 1u); };
  int x = top + kLow;
  int lsb_exp = (x < emin ? emin : x) - (prec - 1);
  int lsb = lsb_exp - kLow;
  uint64_t sig = 0;
  for (int i = top; i >= lsb && i >= 0; i--) sig = (sig << 1) | uint64_t(bit(i));
  if (lsb < 0) sig <<= -lsb;  // (cannot happen for fp32/bf16 targets; kept for completeness)
  bool round_bit = lsb >= 1 && bit(lsb - 1);
  bool sticky = false;
  for (int i = lsb - 2; i >= 0 && !sticky; i--) {
    if (i % 64 == 63 && d[i / 64] == 0) {
      i -= 63;
      continue;
    }
    sticky = bit(i) != 0;
  }
  if (round_bit && (sticky || (sig & 1u))) sig++;
  double v = std::ldexp(double(sig), lsb_exp);
  if (v >= std::ldexp(1.0, emax + 1)) v = std::numeric_limits<double>::infinity();
  return negative ? -v : v;
}

}  // namespace go
