// The SM90 FP8 models as integer work on 16 output columns at a time (see sm90_fast.hpp).
//
// Why the integer form is the model (numerics.md §8.1–8.2, tensor_core.hpp fused_dot_add<13, 13>). An FP8 operand is
// sig·2^(e − F) (F = 3 for e4m3, 2 for e5m2; subnormals have e clamped to the format's minimum), so a product is
// p·2^(ea + eb − FA − FB) with p = sig_a·sig_b, |p| ≤ 225. One k32 step with E = max(exponent of the carried c, every
// ea + eb) turns each product into trunc(p · 2^(L − d)) with L = 13 − FA − FB (7, 8 or 9) and d = E − ea − eb ≥ 0:
// that is sign(p) · ((|p| << L) >> d), a logical shift of a magnitude below 2^15 (225 << 7, 105 << 8, 49 << 9), so
// truncation toward zero is exact in 16-bit lanes, and a shift by 16 or more gives 0. The carried c is
// trunc(P · 2^(13 − E)) with P an fp32 of at most 14 significant bits (an exact power-of-two scaling, then a truncating
// conversion). The sum of 32 terms and c is below 2^21 in magnitude: exact in int32, and exact when converted to fp32,
// where clearing the 10 low fraction bits is the RZ to 13 fraction bits; scaling by 2^(E − 13) gives the step's P.
// Nonzero products have exponents ≥ −28 and a nonzero P is ≥ 2^−41, so every value stays a normal fp32 far from
// overflow. Zero operands get exponent −64 (MMA-Sim: −126): a product with a zero factor then has exponent ≤ −49, below
// every nonzero term, and when every term of a step is zero its sum is 0 whatever E is. So K is padded with zeros to a
// multiple of 32: a padded step that has only zero products gives E = exponent of P, its c term is P exactly, and the
// RZ keeps it: the identity. NaN / Inf operands (e4m3 S.1111.111, e5m2 S.11111.xx) are packed as zeros and their rows /
// columns recomputed by the generic model (sm90_element), which gives the special results.
//
// Layout. B (one matrix per distinct B base, K, B scale row and scale column) is packed per block of 16 columns and per
// pair of K values: three vectors of 32 int16, lane 2·c + h holding column c, K index 2·kp + h: exponent, |sig| and
// the sign as ±1. A is packed per row and K pair as three 32-bit words (two int16 halves): exponents, |sig| << L, and
// the sign as a mask (0 or 0xFFFE per half) that XOR-ed into B's ±1 gives the product's sign. Per K pair and row, the
// AVX-512 kernel then computes 32 products of 16 columns with: add (exponents), sub (d = E − e), mullo (|p| << L),
// srlv (the truncating shift), xor (sign), madd (sign·term, the pair summed into int32) and add; pass 1 before it
// finds E with add + max. A tile is 4 rows × 16 columns; its F stays in registers for the whole K.
#include "sm90_fast.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <tuple>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define GO_X86 1
#else
#define GO_X86 0
#endif

namespace go {

// ---- ISA selection --------------------------------------------------------------------------------------------------

CpuIsa cpu_isa_supported() {
#if GO_X86
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw")) return CpuIsa::kAvx512;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return CpuIsa::kAvx2;
#endif
  return CpuIsa::kPortable;
}

const char* cpu_isa_name(CpuIsa isa) {
  switch (isa) {
    case CpuIsa::kAvx512: return "avx512";
    case CpuIsa::kAvx2: return "avx2";
    default: return "portable";
  }
}

bool cpu_isa_requested(CpuIsa* isa) {
  CpuIsa best = cpu_isa_supported();
  *isa = best;
  const char* env = std::getenv("GO_CPU_ISA");
  if (env == nullptr || env[0] == '\0' || std::strcmp(env, "auto") == 0) return true;
  CpuIsa want;
  if (std::strcmp(env, "portable") == 0) want = CpuIsa::kPortable;
  else if (std::strcmp(env, "avx2") == 0) want = CpuIsa::kAvx2;
  else if (std::strcmp(env, "avx512") == 0) want = CpuIsa::kAvx512;
  else return false;
  if (int(want) < int(best)) *isa = want;
  return true;
}

CpuIsa cpu_isa() {
  CpuIsa isa;
  if (!cpu_isa_requested(&isa)) {
    fail(GO_ERR_INVALID_ARGUMENT,
         std::string("GO_CPU_ISA=") + std::getenv("GO_CPU_ISA") + ": expected portable, avx2, avx512 or auto");
  }
  return isa;
}

bool sm90_fast_applies(const GemmPlan& plan) {
  auto fp8 = [](int32_t dtype) { return dtype == GO_E4M3 || dtype == GO_E5M2; };
  return fp8(plan.a_dtype) && fp8(plan.b_dtype) && plan.sa && plan.sb &&
         (plan.model == GO_MODEL_SM90_1D2D || plan.model == GO_MODEL_SM90_1D1D);
}

namespace {

constexpr int kCols = 16;            // output columns per column block (one AVX-512 int32 vector)
constexpr int kPairsPerStep = 16;    // K pairs per k32 step
constexpr int kStepsPerBlock = 4;    // k32 steps per 128-K promotion block
constexpr int kBVec = 2 * kCols;     // int16 lanes per packed B vector
constexpr int kBPair = 3 * kBVec;    // int16 per K pair of a column block (exponent, |sig|, sign)
constexpr int kRows = 4;             // rows per tile
constexpr int kPackZeroExp = -64;    // exponent of a zero (or special) operand in the packs
constexpr int kMinE = -100;          // E is clamped here (only reached when every term of a step is zero)
constexpr uint32_t kRz13 = 0xFFFFFC00u;  // clears the 10 low fraction bits of an fp32: RZ to 13 fraction bits

// 64-byte aligned storage that is never initialised by the allocator (the packers write every element).
template <class T>
class Buf {
 public:
  void resize(size_t n) {
    size_t bytes = std::max<size_t>(64, (n * sizeof(T) + 63) / 64 * 64);
    void* p = std::aligned_alloc(64, bytes);
    if (p == nullptr) throw std::bad_alloc();
    p_.reset(static_cast<T*>(p));
  }
  T* data() { return p_.get(); }
  const T* data() const { return p_.get(); }

 private:
  struct Free {
    void operator()(T* p) const { std::free(p); }
  };
  std::unique_ptr<T, Free> p_;
};

// What one tile kernel reads and writes: rows of A words (a_stride uint32 apart), their scales (sa_stride floats
// apart), one column block of B and its scales [KB][16], and the tile's F, [rows][16].
struct TileArgs {
  const uint32_t* a;
  int64_t a_stride;
  const float* sa;
  int64_t sa_stride;
  const int16_t* b;
  const float* sb;
  int64_t KP, KB;
  float* out;
};

inline float pow2f(int e) { return f32_from_bits(uint32_t(e + 127) << 23); }  // 2^e for e in [−126, 127]

// ---- portable kernel ------------------------------------------------------------------------------------------------

template <int R>
void tile_portable(const TileArgs& t) {
  float F[R][kCols] = {};
  const int64_t G = t.KP / kPairsPerStep;
  for (int64_t kb = 0; kb < t.KB; kb++) {
    float P[R][kCols] = {};
    int32_t XP[R][kCols];
    for (int r = 0; r < R; r++)
      for (int c = 0; c < kCols; c++) XP[r][c] = -127;
    const int64_t g1 = std::min<int64_t>(G, (kb + 1) * kStepsPerBlock);
    for (int64_t g = kb * kStepsPerBlock; g < g1; g++) {
      const int16_t* bg = t.b + g * kPairsPerStep * kBPair;
      const uint32_t* ag = t.a + g * kPairsPerStep * 3;
      int32_t E[R][kCols], acc[R][kCols];
      for (int r = 0; r < R; r++)
        for (int c = 0; c < kCols; c++) E[r][c] = XP[r][c];
      for (int kp = 0; kp < kPairsPerStep; kp++) {
        const int16_t* eb = bg + kp * kBPair;
        for (int r = 0; r < R; r++) {
          uint32_t w = ag[r * t.a_stride + kp * 3];
          int ea0 = int16_t(w & 0xFFFF), ea1 = int16_t(w >> 16);
          for (int c = 0; c < kCols; c++) E[r][c] = std::max(E[r][c], std::max(ea0 + eb[2 * c], ea1 + eb[2 * c + 1]));
        }
      }
      for (int r = 0; r < R; r++) {
        for (int c = 0; c < kCols; c++) {
          E[r][c] = std::max(E[r][c], kMinE);
          acc[r][c] = int32_t(P[r][c] * pow2f(13 - E[r][c]));  // exact scaling, truncation toward zero
        }
      }
      for (int kp = 0; kp < kPairsPerStep; kp++) {
        const int16_t* eb = bg + kp * kBPair;
        const int16_t* mb = eb + kBVec;
        const int16_t* sb = mb + kBVec;
        for (int r = 0; r < R; r++) {
          const uint32_t* w = ag + r * t.a_stride + kp * 3;
          const int ea[2] = {int16_t(w[0] & 0xFFFF), int16_t(w[0] >> 16)};
          const int ma[2] = {int(w[1] & 0xFFFF), int(w[1] >> 16)};
          const int sa[2] = {(w[2] & 0xFFFF) ? -1 : 1, (w[2] >> 16) ? -1 : 1};
          for (int h = 0; h < 2; h++) {
            const int eah = ea[h], mah = ma[h], sah = sa[h];
            for (int c = 0; c < kCols; c++) {  // branch-free: the signs are random
              const int d = std::min(E[r][c] - (eah + eb[2 * c + h]), 15);  // m < 2^15: m >> 15 == 0
              acc[r][c] += ((mah * mb[2 * c + h]) >> d) * (sah * sb[2 * c + h]);
            }
          }
        }
      }
      for (int r = 0; r < R; r++) {
        for (int c = 0; c < kCols; c++) {
          float f = f32_from_bits(f32_bits(float(acc[r][c])) & kRz13);
          P[r][c] = f * pow2f(E[r][c] - 13);
          XP[r][c] = int32_t((f32_bits(P[r][c]) >> 23) & 0xFF) - 127;
        }
      }
    }
    for (int r = 0; r < R; r++) {
      for (int c = 0; c < kCols; c++) {
        float s = t.sa[r * t.sa_stride + kb] * t.sb[kb * kCols + c];  // fl32(sa·sb)
        F[r][c] = std::fma(s, P[r][c], F[r][c]);
      }
    }
  }
  for (int r = 0; r < R; r++)
    for (int c = 0; c < kCols; c++) t.out[r * kCols + c] = F[r][c];
}

#if GO_X86

// ---- AVX-512 kernel -------------------------------------------------------------------------------------------------

template <int R>
__attribute__((target("avx512f,avx512bw"))) void tile_avx512(const TileArgs& t) {
  __m512 F[R];
  #pragma GCC unroll 4
  for (int r = 0; r < R; r++) F[r] = _mm512_setzero_ps();
  const __m512i lo16 = _mm512_set1_epi32(0xFFFF), ff = _mm512_set1_epi32(0xFF);
  const __m512i rz = _mm512_set1_epi32(int(kRz13)), bias = _mm512_set1_epi32(127);
  const __m512i up_bias = _mm512_set1_epi32(127 + 13), down_bias = _mm512_set1_epi32(127 - 13);
  const __m512i min_e = _mm512_set1_epi32(kMinE), lowest = _mm512_set1_epi16(-32768);
  const int64_t G = t.KP / kPairsPerStep;
  for (int64_t kb = 0; kb < t.KB; kb++) {
    __m512 P[R];
    __m512i XP[R];
    #pragma GCC unroll 4
    for (int r = 0; r < R; r++) {
      P[r] = _mm512_setzero_ps();
      XP[r] = _mm512_set1_epi32(-127);
    }
    const int64_t g1 = std::min<int64_t>(G, (kb + 1) * kStepsPerBlock);
    for (int64_t g = kb * kStepsPerBlock; g < g1; g++) {
      const int16_t* bg = t.b + g * kPairsPerStep * kBPair;
      const uint32_t* ag = t.a + g * kPairsPerStep * 3;
      // Pass 1: the largest product exponent per column (over both K halves of each lane pair).
      __m512i Em[R];
      #pragma GCC unroll 4
      for (int r = 0; r < R; r++) Em[r] = lowest;
      #pragma GCC unroll 2
      for (int kp = 0; kp < kPairsPerStep; kp++) {
        const __m512i eb = _mm512_load_si512(bg + kp * kBPair);
        #pragma GCC unroll 4
        for (int r = 0; r < R; r++) {
          const __m512i ea = _mm512_set1_epi32(int(ag[r * t.a_stride + kp * 3]));
          Em[r] = _mm512_max_epi16(Em[r], _mm512_add_epi16(ea, eb));
        }
      }
      __m512i E[R], E2[R], acc[R];
      #pragma GCC unroll 4
      for (int r = 0; r < R; r++) {
        __m512i e = _mm512_max_epi32(_mm512_srai_epi32(Em[r], 16), _mm512_srai_epi32(_mm512_slli_epi32(Em[r], 16), 16));
        e = _mm512_max_epi32(_mm512_max_epi32(e, XP[r]), min_e);
        E[r] = e;
        E2[r] = _mm512_or_si512(_mm512_and_si512(e, lo16), _mm512_slli_epi32(e, 16));
        const __m512 up = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_sub_epi32(up_bias, e), 23));  // 2^(13 − E)
        acc[r] = _mm512_cvttps_epi32(_mm512_mul_ps(P[r], up));  // the carried c, truncated toward zero
      }
      // Pass 2: every product truncated at 2^(E − 13) and summed.
      #pragma GCC unroll 2
      for (int kp = 0; kp < kPairsPerStep; kp++) {
        const int16_t* bp = bg + kp * kBPair;
        const __m512i eb = _mm512_load_si512(bp), mb = _mm512_load_si512(bp + kBVec);
        const __m512i sb = _mm512_load_si512(bp + 2 * kBVec);
        #pragma GCC unroll 4
        for (int r = 0; r < R; r++) {
          const uint32_t* w = ag + r * t.a_stride + kp * 3;
          const __m512i d = _mm512_sub_epi16(E2[r], _mm512_add_epi16(_mm512_set1_epi32(int(w[0])), eb));
          const __m512i m = _mm512_mullo_epi16(_mm512_set1_epi32(int(w[1])), mb);
          const __m512i s = _mm512_xor_si512(_mm512_set1_epi32(int(w[2])), sb);
          acc[r] = _mm512_add_epi32(acc[r], _mm512_madd_epi16(_mm512_srlv_epi16(m, d), s));
        }
      }
      // RZ to 13 fraction bits, then P = f · 2^(E − 13) and its exponent.
      #pragma GCC unroll 4
      for (int r = 0; r < R; r++) {
        const __m512 f = _mm512_castsi512_ps(_mm512_and_si512(_mm512_castps_si512(_mm512_cvtepi32_ps(acc[r])), rz));
        const __m512 down = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_add_epi32(E[r], down_bias), 23));
        P[r] = _mm512_mul_ps(f, down);
        XP[r] = _mm512_sub_epi32(_mm512_and_si512(_mm512_srli_epi32(_mm512_castps_si512(P[r]), 23), ff), bias);
      }
    }
    const __m512 sbv = _mm512_loadu_ps(t.sb + kb * kCols);
    #pragma GCC unroll 4
    for (int r = 0; r < R; r++) {
      const __m512 s = _mm512_mul_ps(_mm512_set1_ps(t.sa[r * t.sa_stride + kb]), sbv);  // fl32(sa·sb)
      F[r] = _mm512_fmadd_ps(s, P[r], F[r]);
    }
  }
  #pragma GCC unroll 4
  for (int r = 0; r < R; r++) _mm512_storeu_ps(t.out + r * kCols, F[r]);
}

// ---- AVX2 kernel ----------------------------------------------------------------------------------------------------

// x >> d per 16-bit lane (logical, 0 for d ≥ 16); AVX2 has variable shifts of 32-bit lanes only.
__attribute__((target("avx2,fma"))) inline __m256i srlv16_avx2(__m256i x, __m256i d) {
  const __m256i lo = _mm256_set1_epi32(0xFFFF);
  const __m256i l = _mm256_srlv_epi32(_mm256_and_si256(x, lo), _mm256_and_si256(d, lo));
  const __m256i h = _mm256_andnot_si256(lo, _mm256_srlv_epi32(x, _mm256_srli_epi32(d, 16)));
  return _mm256_or_si256(l, h);
}

// The same as tile_avx512 on 8-column halves of the column block (two 256-bit vectors per 512-bit one).
template <int R>
__attribute__((target("avx2,fma"))) void tile_avx2(const TileArgs& t) {
  __m256 F[R][2];
  #pragma GCC unroll 4
  for (int r = 0; r < R; r++) F[r][0] = F[r][1] = _mm256_setzero_ps();
  const __m256i lo16 = _mm256_set1_epi32(0xFFFF), ff = _mm256_set1_epi32(0xFF);
  const __m256i rz = _mm256_set1_epi32(int(kRz13)), bias = _mm256_set1_epi32(127);
  const __m256i up_bias = _mm256_set1_epi32(127 + 13), down_bias = _mm256_set1_epi32(127 - 13);
  const __m256i min_e = _mm256_set1_epi32(kMinE), lowest = _mm256_set1_epi16(-32768);
  const int64_t G = t.KP / kPairsPerStep;
  for (int64_t kb = 0; kb < t.KB; kb++) {
    __m256 P[R][2];
    __m256i XP[R][2];
    #pragma GCC unroll 4
    for (int r = 0; r < R; r++) {
      #pragma GCC unroll 2
      for (int h = 0; h < 2; h++) {
        P[r][h] = _mm256_setzero_ps();
        XP[r][h] = _mm256_set1_epi32(-127);
      }
    }
    const int64_t g1 = std::min<int64_t>(G, (kb + 1) * kStepsPerBlock);
    for (int64_t g = kb * kStepsPerBlock; g < g1; g++) {
      const int16_t* bg = t.b + g * kPairsPerStep * kBPair;
      const uint32_t* ag = t.a + g * kPairsPerStep * 3;
      __m256i Em[R][2];
      #pragma GCC unroll 4
      for (int r = 0; r < R; r++) Em[r][0] = Em[r][1] = lowest;
      #pragma GCC unroll 2
      for (int kp = 0; kp < kPairsPerStep; kp++) {
        const int16_t* bp = bg + kp * kBPair;
        const __m256i eb0 = _mm256_load_si256(reinterpret_cast<const __m256i*>(bp));
        const __m256i eb1 = _mm256_load_si256(reinterpret_cast<const __m256i*>(bp + 16));
        #pragma GCC unroll 4
        for (int r = 0; r < R; r++) {
          const __m256i ea = _mm256_set1_epi32(int(ag[r * t.a_stride + kp * 3]));
          Em[r][0] = _mm256_max_epi16(Em[r][0], _mm256_add_epi16(ea, eb0));
          Em[r][1] = _mm256_max_epi16(Em[r][1], _mm256_add_epi16(ea, eb1));
        }
      }
      __m256i E[R][2], E2[R][2], acc[R][2];
      #pragma GCC unroll 4
      for (int r = 0; r < R; r++) {
        #pragma GCC unroll 2
        for (int h = 0; h < 2; h++) {
          __m256i e =
              _mm256_max_epi32(_mm256_srai_epi32(Em[r][h], 16), _mm256_srai_epi32(_mm256_slli_epi32(Em[r][h], 16), 16));
          e = _mm256_max_epi32(_mm256_max_epi32(e, XP[r][h]), min_e);
          E[r][h] = e;
          E2[r][h] = _mm256_or_si256(_mm256_and_si256(e, lo16), _mm256_slli_epi32(e, 16));
          const __m256 up = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_sub_epi32(up_bias, e), 23));
          acc[r][h] = _mm256_cvttps_epi32(_mm256_mul_ps(P[r][h], up));
        }
      }
      #pragma GCC unroll 2
      for (int kp = 0; kp < kPairsPerStep; kp++) {
        const int16_t* bp = bg + kp * kBPair;
        #pragma GCC unroll 2
        for (int h = 0; h < 2; h++) {
          const __m256i eb = _mm256_load_si256(reinterpret_cast<const __m256i*>(bp + 16 * h));
          const __m256i mb = _mm256_load_si256(reinterpret_cast<const __m256i*>(bp + kBVec + 16 * h));
          const __m256i sb = _mm256_load_si256(reinterpret_cast<const __m256i*>(bp + 2 * kBVec + 16 * h));
          #pragma GCC unroll 4
          for (int r = 0; r < R; r++) {
            const uint32_t* w = ag + r * t.a_stride + kp * 3;
            const __m256i d = _mm256_sub_epi16(E2[r][h], _mm256_add_epi16(_mm256_set1_epi32(int(w[0])), eb));
            const __m256i m = _mm256_mullo_epi16(_mm256_set1_epi32(int(w[1])), mb);
            const __m256i s = _mm256_xor_si256(_mm256_set1_epi32(int(w[2])), sb);
            acc[r][h] = _mm256_add_epi32(acc[r][h], _mm256_madd_epi16(srlv16_avx2(m, d), s));
          }
        }
      }
      #pragma GCC unroll 4
      for (int r = 0; r < R; r++) {
        #pragma GCC unroll 2
        for (int h = 0; h < 2; h++) {
          const __m256 f =
              _mm256_castsi256_ps(_mm256_and_si256(_mm256_castps_si256(_mm256_cvtepi32_ps(acc[r][h])), rz));
          const __m256 down = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(E[r][h], down_bias), 23));
          P[r][h] = _mm256_mul_ps(f, down);
          XP[r][h] =
              _mm256_sub_epi32(_mm256_and_si256(_mm256_srli_epi32(_mm256_castps_si256(P[r][h]), 23), ff), bias);
        }
      }
    }
    #pragma GCC unroll 2
    for (int h = 0; h < 2; h++) {
      const __m256 sbv = _mm256_loadu_ps(t.sb + kb * kCols + 8 * h);
      #pragma GCC unroll 4
      for (int r = 0; r < R; r++) {
        const __m256 s = _mm256_mul_ps(_mm256_set1_ps(t.sa[r * t.sa_stride + kb]), sbv);
        F[r][h] = _mm256_fmadd_ps(s, P[r][h], F[r][h]);
      }
    }
  }
  #pragma GCC unroll 4
  for (int r = 0; r < R; r++)
    #pragma GCC unroll 2
    for (int h = 0; h < 2; h++) _mm256_storeu_ps(t.out + r * kCols + 8 * h, F[r][h]);
}

#endif  // GO_X86

using TileFn = void (*)(const TileArgs&);

struct Kernels {
  TileFn full;  // kRows rows
  TileFn one;   // one row (the tail of a row list)
};

Kernels kernels_for(CpuIsa isa) {
#if GO_X86
  if (isa == CpuIsa::kAvx512) return {tile_avx512<kRows>, tile_avx512<1>};
  if (isa == CpuIsa::kAvx2) return {tile_avx2<kRows>, tile_avx2<1>};
#endif
  (void)isa;
  return {tile_portable<kRows>, tile_portable<1>};
}

// ---- packing --------------------------------------------------------------------------------------------------------

// One packed B: the columns of one (B base, K, B scale row, scale column) key.
struct BPack {
  int64_t N = 0, K = 0, KP = 0, KB = 0, NCB = 0;
  const Dec* base = nullptr;
  int64_t sb_row0 = 0, sf_col0 = 0;
  Buf<int16_t> data;  // [NCB][KP][3][32]
  Buf<float> sb;      // [NCB][KB][16]
  std::vector<uint8_t> special;  // per column
};

// The rows of the plan that share one B key, packed.
struct Segment {
  int bpack = 0;
  std::vector<int64_t> jobs;  // plan.rows indices
  int64_t rows_padded = 0;
  Buf<uint32_t> a;            // [rows_padded][KP][3]
  Buf<float> sa;              // [rows_padded][KB]
  std::vector<uint8_t> special;  // per row
};

// An operand's packed exponent (kPackZeroExp for zeros and specials), |sig|, and sign as ±1.
inline int16_t packed_exp(const Dec& x) { return int16_t(x.sig == 0 ? kPackZeroExp : int(x.exp)); }
inline int16_t packed_mag(const Dec& x) { return int16_t(x.sig < 0 ? -x.sig : x.sig); }
inline int16_t packed_sign(const Dec& x) { return int16_t(x.sig < 0 ? -1 : 1); }

void pack_b_block(const GemmPlan& plan, BPack& bp, int64_t cb) {
  int16_t* out = bp.data.data() + cb * bp.KP * kBPair;
  const int cols = int(std::min<int64_t>(kCols, bp.N - cb * kCols));
  const Dec* rows[kCols];
  uint8_t special[kCols] = {};
  for (int c = 0; c < cols; c++) rows[c] = bp.base + (cb * kCols + c) * bp.K;
  const int64_t full = cols == kCols ? bp.K / 2 : 0;  // K pairs of 16 columns with every operand present
  for (int64_t kp = 0; kp < full; kp++) {  // K pair outer: the packed block is written once, in order
    int16_t* v = out + kp * kBPair;
    for (int c = 0; c < kCols; c++) {
      const Dec x0 = rows[c][2 * kp], x1 = rows[c][2 * kp + 1];
      v[2 * c] = packed_exp(x0);
      v[2 * c + 1] = packed_exp(x1);
      v[kBVec + 2 * c] = packed_mag(x0);
      v[kBVec + 2 * c + 1] = packed_mag(x1);
      v[2 * kBVec + 2 * c] = packed_sign(x0);
      v[2 * kBVec + 2 * c + 1] = packed_sign(x1);
      special[c] |= x0.special | x1.special;
    }
  }
  for (int64_t kp = full; kp < bp.KP; kp++) {  // the K tail, and the columns past N (zeros)
    int16_t* v = out + kp * kBPair;
    for (int c = 0; c < kCols; c++) {
      for (int h = 0; h < 2; h++) {
        const int64_t k = 2 * kp + h;
        Dec x{0.0f, 0, 0, 0};
        if (c < cols && k < bp.K) x = rows[c][k];
        v[2 * c + h] = packed_exp(x);
        v[kBVec + 2 * c + h] = packed_mag(x);
        v[2 * kBVec + 2 * c + h] = packed_sign(x);
        if (c < cols) special[c] |= x.special;
      }
    }
  }
  for (int c = 0; c < cols; c++) bp.special[size_t(cb * kCols + c)] = special[c];
  float* sb = bp.sb.data() + cb * bp.KB * kCols;
  for (int c = 0; c < kCols; c++) {
    const int64_t n = cb * kCols + c;
    const float* srow = n < bp.N ? plan.sb->val_row(bp.sb_row0 + n / plan.gran_b_mn) + bp.sf_col0 : nullptr;
    for (int64_t kb = 0; kb < bp.KB; kb++) sb[kb * kCols + c] = srow ? srow[kb] : 0.0f;
  }
}

void pack_a_row(const GemmPlan& plan, const BPack& bp, Segment& seg, int64_t i, int shift) {
  uint32_t* out = seg.a.data() + i * bp.KP * 3;
  float* sa = seg.sa.data() + i * bp.KB;
  const RowJob* job = i < int64_t(seg.jobs.size()) ? &plan.rows[size_t(seg.jobs[size_t(i)])] : nullptr;
  const Dec* row = job ? job->arow : nullptr;
  const int64_t full = job ? bp.K / 2 : 0;
  uint8_t special = 0;
  auto word = [](int16_t lo, int16_t hi) { return uint32_t(uint16_t(lo)) | (uint32_t(uint16_t(hi)) << 16); };
  auto sign = [](const Dec& x) { return x.sig < 0 ? 0xFFFEu : 0u; };
  for (int64_t kp = 0; kp < full; kp++) {
    const Dec x0 = row[2 * kp], x1 = row[2 * kp + 1];
    out[3 * kp] = word(packed_exp(x0), packed_exp(x1));
    out[3 * kp + 1] = word(int16_t(packed_mag(x0) << shift), int16_t(packed_mag(x1) << shift));
    out[3 * kp + 2] = sign(x0) | (sign(x1) << 16);
    special |= x0.special | x1.special;
  }
  for (int64_t kp = full; kp < bp.KP; kp++) {  // the K tail, and the padding rows (zeros)
    Dec x[2] = {{0.0f, 0, 0, 0}, {0.0f, 0, 0, 0}};
    for (int h = 0; h < 2; h++) {
      if (row && 2 * kp + h < bp.K) x[h] = row[2 * kp + h];
      special |= x[h].special;
    }
    out[3 * kp] = word(packed_exp(x[0]), packed_exp(x[1]));
    out[3 * kp + 1] = word(int16_t(packed_mag(x[0]) << shift), int16_t(packed_mag(x[1]) << shift));
    out[3 * kp + 2] = sign(x[0]) | (sign(x[1]) << 16);
  }
  for (int64_t kb = 0; kb < bp.KB; kb++) sa[kb] = job ? plan.sa->val_row(job->sa_row)[job->sf_col0 + kb] : 0.0f;
  seg.special[size_t(i)] = special;
}

inline int frac_bits(int32_t dtype) { return dtype == GO_E4M3 ? 3 : 2; }

}  // namespace

void run_sm90_fast(const GemmPlan& plan) {
  const Kernels kern = kernels_for(cpu_isa());
  const int64_t N = plan.N;
  const int shift = 13 - frac_bits(plan.a_dtype) - frac_bits(plan.b_dtype);  // L: |p| << L < 2^15
  const int32_t esize = plan.d_dtype == GO_F32 ? 4 : 2;

  // Rows by B key; zero rows are written here.
  std::vector<std::unique_ptr<BPack>> bpacks;
  std::vector<std::unique_ptr<Segment>> segs;
  std::map<std::tuple<const Dec*, int64_t, int64_t, int64_t>, int> key_index;
  for (size_t j = 0; j < plan.rows.size(); j++) {
    const RowJob& job = plan.rows[j];
    if (job.zero) {
      for (int64_t n = 0; n < N; n++) std::memset(job.drow + physical_column(plan, n) * plan.d_col_stride, 0, esize);
      continue;
    }
    if (job.K == 0) {  // an empty sum: F = 0, then the epilogue (with C where there is one)
      for (int64_t n = 0; n < N; n++) {
        epilogue_acc(job.drow + physical_column(plan, n) * plan.d_col_stride,
                     job.crow ? job.crow + n * plan.c_col_stride : nullptr, plan.d_dtype, 0.0f);
      }
      continue;
    }
    auto key = std::make_tuple(job.bbase, job.K, job.sb_row0, job.sf_col0);
    auto it = key_index.find(key);
    if (it == key_index.end()) {
      auto bp = std::make_unique<BPack>();
      bp->N = N;
      bp->K = job.K;
      bp->KP = (job.K + 31) / 32 * kPairsPerStep;
      bp->KB = (job.K + 127) / 128;
      bp->NCB = (N + kCols - 1) / kCols;
      bp->base = job.bbase;
      bp->sb_row0 = job.sb_row0;
      bp->sf_col0 = job.sf_col0;
      it = key_index.emplace(key, int(segs.size())).first;
      auto seg = std::make_unique<Segment>();
      seg->bpack = int(bpacks.size());
      bpacks.push_back(std::move(bp));
      segs.push_back(std::move(seg));
    }
    segs[size_t(it->second)]->jobs.push_back(int64_t(j));
  }
  if (segs.empty() || N == 0) return;

  // Pack B column blocks and A rows on the thread pool.
  std::vector<int64_t> pack_first;  // first pack task of each segment: B blocks then A rows
  int64_t pack_tasks = 0;
  for (auto& seg : segs) {
    BPack& bp = *bpacks[size_t(seg->bpack)];
    bp.data.resize(size_t(checked_mul(checked_mul(bp.NCB, bp.KP, "packed B"), kBPair, "packed B")));
    bp.sb.resize(size_t(bp.NCB * bp.KB * kCols));
    bp.special.assign(size_t(N), 0);
    seg->rows_padded = (int64_t(seg->jobs.size()) + kRows - 1) / kRows * kRows;
    seg->a.resize(size_t(checked_mul(checked_mul(seg->rows_padded, bp.KP, "packed A"), 3, "packed A")));
    seg->sa.resize(size_t(seg->rows_padded * bp.KB));
    seg->special.assign(size_t(seg->rows_padded), 0);
    pack_first.push_back(pack_tasks);
    pack_tasks += bp.NCB + seg->rows_padded;
  }
  parallel_tasks(pack_tasks, [&](int, int64_t task) {
    size_t s = size_t(std::upper_bound(pack_first.begin(), pack_first.end(), task) - pack_first.begin() - 1);
    Segment& seg = *segs[s];
    BPack& bp = *bpacks[size_t(seg.bpack)];
    int64_t i = task - pack_first[s];
    if (i < bp.NCB) pack_b_block(plan, bp, i);
    else pack_a_row(plan, bp, seg, i - bp.NCB, shift);
  });

  // Tiles of kRows rows × 16 columns, column block major within a segment (a column block of B is reused by the
  // consecutive tiles a thread takes).
  std::vector<int64_t> tile_first;
  int64_t tiles = 0;
  for (auto& seg : segs) {
    tile_first.push_back(tiles);
    tiles += (seg->rows_padded / kRows) * bpacks[size_t(seg->bpack)]->NCB;
  }
  parallel_tasks(tiles, [&](int, int64_t task) {
    size_t s = size_t(std::upper_bound(tile_first.begin(), tile_first.end(), task) - tile_first.begin() - 1);
    const Segment& seg = *segs[s];
    const BPack& bp = *bpacks[size_t(seg.bpack)];
    const int64_t row_tiles = seg.rows_padded / kRows;
    const int64_t local = task - tile_first[s];
    const int64_t cb = local / row_tiles, r0 = (local % row_tiles) * kRows;
    const int64_t rows = std::min<int64_t>(kRows, int64_t(seg.jobs.size()) - r0);
    alignas(64) float F[kRows * kCols];
    TileArgs t{seg.a.data() + r0 * bp.KP * 3, bp.KP * 3, seg.sa.data() + r0 * bp.KB, bp.KB,
               bp.data.data() + cb * bp.KP * kBPair, bp.sb.data() + cb * bp.KB * kCols, bp.KP, bp.KB, F};
    if (rows == kRows) {
      kern.full(t);
    } else {
      for (int64_t r = 0; r < rows; r++) {
        TileArgs t1 = t;
        t1.a += r * bp.KP * 3;
        t1.sa += r * bp.KB;
        t1.out = F + r * kCols;
        kern.one(t1);
      }
    }
    const int64_t n1 = std::min<int64_t>(N, (cb + 1) * kCols);
    for (int64_t r = 0; r < rows; r++) {
      const RowJob& job = plan.rows[size_t(seg.jobs[size_t(r0 + r)])];
      const bool row_special = seg.special[size_t(r0 + r)] != 0;
      for (int64_t n = cb * kCols; n < n1; n++) {
        float acc = F[r * kCols + (n - cb * kCols)];
        if (row_special || bp.special[size_t(n)]) acc = sm90_element(plan, job, n);  // NaN / Inf operands
        char* dp = job.drow + physical_column(plan, n) * plan.d_col_stride;
        const char* cp = job.crow ? job.crow + n * plan.c_col_stride : nullptr;
        epilogue_acc(dp, cp, plan.d_dtype, acc);
      }
    }
  });
}

}  // namespace go
