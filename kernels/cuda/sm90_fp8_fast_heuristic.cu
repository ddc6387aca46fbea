// The configuration heuristic of the fast SM90 FP8 GEMM: an ordered list of named rules, each a small function with
// the measurements behind it (H200, 132 SMs, tests/gpu/bench.cpp's timing; docs/performance-history.md keeps the
// sweeps), then the override (GO_CUDA_FAST_CFG), the rules that derive fields from the tile unless the override named
// them, and one function that says whether a configuration can run at all (fast_config_invalid).
// Multicast (mc=2) only at BLOCK_M 256, dense and contiguous (multicast_a_at_block_m_256).
// The bits never depend on the choice (sm90_fp8_fast_kernel.cuh); tests/kernels/cuda_fast_heuristic_test.ts pins the
// choices and the refusals, tests/gpu/run.sh checks every family's bits on an H200.
#include <algorithm>
#include <cstdlib>
#include <sstream>
#include <string>

#include "sm90_fast.h"
#include "sm90_fp8_fast_kernel.cuh"

namespace go_sm90 {

namespace {

/// What the rules look at: the call's shape and the SMs.
struct Shape {
  const FastParams& p;
  int sms;
  int64_t nkb;  // K blocks
  /// Tiles of BLOCK_M bm x BLOCK_N bn (masked: over every group).
  int64_t tiles(int bm, int bn) const {
    return static_cast<int64_t>((p.M + bm - 1) / bm) * ((p.N + bn - 1) / bn) * (p.mode == kFastMasked ? p.G : 1);
  }
  int64_t waves(int64_t tiles) const { return (tiles + sms - 1) / sms; }
  bool dense() const { return p.mode == kFastNormal; }
  /// A dense GEMM of one row block with at least 8 K blocks.
  bool one_row_block() const { return dense() && p.M <= kFBM && nkb >= 8; }
};

/// The fields an override named, which the derived rules leave alone.
struct Named {
  bool bm = false, acc = false, split = false, ktma = false, mc = false;
};

struct Rule {
  const char* name;
  void (*apply)(const Shape& s, const Named& named, FastChoice& c);
};

// ---- tile rules, in order (before the override) ----

// 128-wide tiles where they fill the SMs, else 64; 144 (one accumulator set) where it needs at most 3/4 of 128's
// waves.
void block_n_by_waves(const Shape& s, const Named&, FastChoice& c) {
  const int64_t t128 = s.tiles(kFBM, 128), t144 = s.tiles(kFBM, 144);
  c.bn = t128 < s.sms ? 64 : 128;
  if (t128 >= s.sms && 4 * s.waves(t144) <= 3 * s.waves(t128)) c.bn = 144;
}

/// The waves of 256-row tiles BN wide, in the wave-cost model below (x 7).
int64_t wave_cost_256(const Shape& s, int bn) { return 7 * (bn + 53) * s.waves(s.tiles(256, bn)); }

// BLOCK_M 256 (dense, masked, and contiguous layouts whose groups fit 256-row tiles) with the BLOCK_N of 128, 112, 96
// or 80 whose waves cost least, where that beats BLOCK_M 128. Per-wave cost: a wave of 256-row tiles BN wide takes
// time in proportion to BN + 53 (4096 x N x 7168: 53.7 / 44.2 / 38.8 us a wave at BN 128 / 96 / 80), a wave of
// 128 x 128 tiles 4 / 7 of BN 128's, one of 128 x 144 tiles 107 (4096 x 576 x 7168, one wave each, in one process with
// DeepGEMM: 28.0 us at 128 x 144 against 34.8 at 256 x 80, twice). Only BN that are multiples of 16, whose D boxes are
// at least 32 bytes wide (88: 825 against 935 TFLOPS for 96). A narrower BLOCK_N must save 3 % (the model's margin).
// 4096 x 2112 takes 256 x 96 (then 128 x 192, the next rule), 4096 x 576 keeps 128 x 144 (107 against 133 at 256 x 80).
void block_m_256_by_wave_cost(const Shape& s, const Named&, FastChoice& c) {
  if (!(c.bn == 128 || c.bn == 144) || !(s.p.mode == kFastNormal || s.p.mode == kFastMasked || s.p.tiles256)) return;
  const int64_t cost_bm128 =
      c.bn == 144 ? 7 * 107 * s.waves(s.tiles(kFBM, 144)) : 4 * 181 * s.waves(s.tiles(kFBM, 128));  // x 7
  int64_t cost = cost_bm128;
  for (const int bn : {128, 112, 96, 80}) {
    const int64_t k = wave_cost_256(s, bn);
    if (k * 100 < cost * (bn == 128 ? 100 : 97)) cost = k, c.bm = 256, c.bn = bn;
  }
}

// A dense GEMM where BLOCK_M 256 won: 128 x 192 tiles (DeepGEMM's there; one accumulator set, scales hoisted, no
// multicast) where their waves cost 3 % less. A wave of them costs about 134 in the model above (4096 x 2112 x 7168,
// 3 waves each, in one process with DeepGEMM: 97.5 us against 108.7 at 256 x 96; 4096 x 576 x 7168, one wave: 32.7
// against 34.8 at 256 x 80, where 128 x 144, above, took 28.0). 4096 x 4096 x 7168 (6 waves against 4 of 256 x 128) and
// 4096 x 7168 x 2048 (10 against 7) stay: 212-225 against 190-196 us and 110-111 against 103 (tests/gpu/bench.cpp).
void block_128x192_for_dense(const Shape& s, const Named&, FastChoice& c) {
  if (!s.dense() || c.bm != 256) return;
  if (7 * 134 * s.waves(s.tiles(kFBM, 192)) * 100 < wave_cost_256(s, c.bn) * 97) c.bm = kFBM, c.bn = 192;
}

// BLOCK_M <= 128 at BLOCK_N 128: the narrowest of 96 and 112 that needs no more waves (the same work per wave on
// fewer columns: 128 x 24576 x 1536 516 -> 535 TFLOPS at 96, 64 x 24576 x 1536 307 -> 330). BLOCK_N 192, one wave
// of 128 tiles against two of 96 (DeepGEMM's 128 x 192 there), lost: 128 x 24576 x 1536 15.4 -> 15.7 us, 64 x 24576 x
// 1536 (64 x 192) 13.3 -> 14.1 (head_to_head.py, two alternating pairs).
void narrow_block_n(const Shape& s, const Named&, FastChoice& c) {
  if (c.bm == 256 || c.bn != 128) return;
  for (const int bn : {112, 96})
    if (s.waves(s.tiles(kFBM, bn)) == s.waves(s.tiles(kFBM, 128))) c.bn = bn;
}

// BLOCK_M 64 where A has at most 64 rows (dense M <= 64, masked Mmax <= 64): half the A bytes per stage, so 12 stages
// instead of 8 of B in flight for these memory-bound shapes (64 x 7168 x 16384: 44 against 70 us). Not for masked Mmax
// 128 with every masked_m <= 64: its zero tiles (rows 64 .. 127) fell on every other CTA, which left half the SMs
// without work (32 x 20 x 6144 x 7168: 571 us against 437 at BLOCK_M 128). A walk that gave every CTA as many computed
// tiles as BLOCK_M 128 still lost on all 8 masked 20-row shapes (32 x 20 x 4096 x 2048 76.8 -> 83.5 us, H200, ab
// step, 3 runs a side; docs/performance-history.md, "Issue 26, thirtieth round").
void block_m_64_for_short_a(const Shape& s, const Named&, FastChoice& c) {
  if ((s.p.mode == kFastNormal || s.p.mode == kFastMasked) && s.p.M <= 64) c.bm = 64;
}

// A dense GEMM of one row block whose 64-wide tiles fill at most half the SMs: BLOCK_N 32 where 32-wide tiles still
// fit one wave, twice the CTAs streaming B (128 x 2112 x 7168 23.8 -> 20.1 us, 128 x 4096 x 7168 24.1 -> 20.8,
// 64 x 4096 x 7168 245.8 -> 271.5 TFLOPS), then 16 on the same terms (128 x 2112 x 7168 191.1 -> 205.6 TFLOPS;
// 128 x 576 x 7168 52.9 at BLOCK_N 32 split 7 ways, 57.8 at 16 unsplit).
void narrow_tiles_for_one_row_block(const Shape& s, const Named&, FastChoice& c) {
  if (!s.dense() || (c.bm != 128 && c.bm != 64) || c.bn != 64 || s.p.M > kFBM) return;
  if (2 * s.tiles(kFBM, 64) <= s.sms && s.tiles(kFBM, 32) <= s.sms) c.bn = 32;
  if (c.bn == 32 && 2 * s.tiles(kFBM, 32) <= s.sms && s.tiles(kFBM, 16) <= s.sms) c.bn = 16;
}

// A dense GEMM of at most 64 rows on 64 x 64 tiles that leave SMs idle: BLOCK_N 56 where its tiles still fit one wave
// and there are at least 96 K blocks (56 does not divide 128: two B scale slots, a K loop per straddle column,
// fast_with_straddle; it paid only in deep K loops). 64 x 7168 x K, 112 tiles of 64 against 128 of 56 (us,
// head_to_head.py, two alternating pairs in one process with DeepGEMM): K = 16384 35.0 -> 33.9, 12288 26.6 -> 26.35,
// 8192 19.4 -> 19.7, 4096 11.2 -> 12.2, 2048 7.2 -> 8.15. At 128 x 7168 x 16384 (BLOCK_M 128, ktma=2) 56 was level
// (37.6 -> 37.45).
void block_n_56_fills_the_sms(const Shape& s, const Named&, FastChoice& c) {
  if (!s.dense() || c.bm != 64 || c.bn != 64 || s.nkb < 96) return;  // bm 64: A has at most 64 rows (above)
  const int64_t t56 = s.tiles(kFBM, 56);
  if (t56 <= s.sms && t56 > s.tiles(kFBM, 64)) c.bn = 56;
}

// 64 < M <= 128 on 128 x 16 tiles: BLOCK_M 64 (two row blocks; B is read twice, the second time mostly from L2) with
// the narrower of BLOCK_N 16 and 32 whose tiles fit in half the SMs: twice the CTAs, each with half the A rows
// (TFLOPS: 128 x 2112 x 7168 313.0 -> 353.1 at 64 x 32, 128 x 576 x 7168 94.0 -> 116.6 at 64 x 16; 128 x 4096 x 7168,
// whose 64 x 32 tiles would need two waves, keeps 128 x 32: 525.8 against 385.7).
void two_row_blocks_for_narrow_tiles(const Shape& s, const Named&, FastChoice& c) {
  if (!s.dense() || c.bm != 128 || c.bn != 16 || s.p.M <= 64 || s.p.M > kFBM) return;
  for (const int bn : {16, 32}) {
    if (2 * s.tiles(kFBM, bn) <= s.sms) {
      c.bm = 64;
      c.bn = bn;
      return;
    }
  }
}

// Two issuing producer threads (A and SFA; B) for a dense GEMM of one row block with at least 8 K blocks, where one
// issuing thread bounded the K loop (measured with a third thread for the B scales, which now have their own warp;
// TFLOPS: 64 x 2112 x 7168 106.3 -> 133.6, 64 x 4096 x 7168 203.1 -> 252.6, 128 x 4096 x 7168 373.5 -> 444.1; level
// at K = 512 and 64 x 576, 2-5 % slower at M = 4096, where it stays off).
void spread_for_one_row_block(const Shape& s, const Named&, FastChoice& c) { c.spread = s.one_row_block(); }

constexpr Rule kTileRules[] = {
    {"BLOCK_N 64 where 128-wide tiles leave SMs idle, 144 where it saves a quarter of the waves", block_n_by_waves},
    {"BLOCK_M 256 with the BLOCK_N whose waves cost least", block_m_256_by_wave_cost},
    {"128 x 192 for a dense GEMM where its waves cost less than BLOCK_M 256's", block_128x192_for_dense},
    {"BLOCK_N 112 or 96 at BLOCK_M 128 where that needs no more waves", narrow_block_n},
    {"BLOCK_M 64 where A has at most 64 rows", block_m_64_for_short_a},
    {"BLOCK_N 32, then 16, for one row block that fills few SMs", narrow_tiles_for_one_row_block},
    {"BLOCK_N 56 where 64-wide tiles of at most 64 rows leave SMs idle, with at least 96 K blocks",
     block_n_56_fills_the_sms},
    {"BLOCK_M 64 for 64 < M <= 128 on 16-wide tiles", two_row_blocks_for_narrow_tiles},
    {"two issuing producer threads for one row block", spread_for_one_row_block},
};

// ---- derived rules, in order (after the override; each leaves what the override named) ----

// TMA boxes two K blocks deep (ktma=2) for one row block at BLOCK_N 16 or 32, or at 128 x 64 with at least 64 K
// blocks: about 100 cycles of the issuing thread per TMA instruction whatever its bytes, and narrow tiles move few
// bytes per instruction (TFLOPS: 64 x 2112 x 7168 148.5 -> 190.1, 64 x 576 x 7168 41.7 -> 54.1, 64 x 4096 x 7168
// 272.7 -> 328.6, 128 x 2112 x 7168 256.9 -> 313.9, 128 x 7168 x 16384 757.7 -> 783.7; at 16 K blocks, 128 x 7168 x
// 2048, 450.0 -> 438.7, and level or slower at BLOCK_N 64 and wider otherwise). Then, at BLOCK_M 64 x BLOCK_N 16,
// boxes four deep with three accumulator sets where the K blocks are a multiple of 4 (64 x 2112 x 7168 188.6 ->
// 195.6, 64 x 576 x 7168 53.4 -> 58.9; ktma=4 alone 189.9 and 56.6; at 128 x 16, 313.4 -> 170.1).
void deep_boxes(const Shape& s, const Named& named, FastChoice& c) {
  if (named.ktma) return;
  const bool wide_deep = c.bm == 128 && c.bn == 64 && s.nkb >= 64;
  c.ktma = s.one_row_block() && (c.bn <= 32 || wide_deep) ? 2 : 1;
  if (!named.acc && c.ktma == 2 && c.bm == 64 && c.bn == 16 && s.p.K % kFBK == 0 && s.nkb % 4 == 0) {
    c.ktma = 4;
    c.acc_sets = 3;
  }
}

// A contiguous layout's groups start on 128-row boundaries, which a 256-row tile could straddle: BLOCK_M 256 only
// where every group fits 256-row tiles (p.tiles256). A call does not know which: the launcher asks for both and
// launches both, gated by the device check.
void contiguous_keeps_128_rows(const Shape& s, const Named&, FastChoice& c) {
  if (s.p.mode != kFastNormal && s.p.mode != kFastMasked && !s.p.tiles256 && c.bm == 256) c.bm = 128;
}

// Dense and contiguous GEMMs at BLOCK_M 256 load A once per cluster of 2 CTAs, each CTA half of it multicast to both.
// With the B scales copied per tile off the stage path (H200, same call, us, mc=1 -> mc=2): 4096 x 2112 x 7168 124.6
// -> 115.1, 4096 x 4096 x 7168 213.4 -> 199.9, 4096 x 7168 x 16384 837.5 -> 809.1, 4096 x 7168 x 2048 109.4 -> 106.8,
// 4096 x 576 x 7168 37.1 -> 35.8, level at K = 512 and 1536; contiguous 4 x 8192 x 6144 x 7168 2602 -> 2520, 6 of 8
// shapes faster (8 x 4096 x 7168 x 3072 1326 -> 1422 slower). Masked at BLOCK_M 256 stays at mc=1: 32 x 192 x 4096
// x 4096 252.7 -> 264.3, the others level; again with the last round in halves (head_to_head.py, five alternating
// pairs over the 8 masked BLOCK_M 256 shapes, docs/performance-history.md, ninth round): mc=2 -0.3 %, 4 faster and 4
// slower; on the six masked BLOCK_M 256 shapes of >= 24 K blocks (tests/gpu/run.sh's ab step, 3 runs a side, an
// unmodified copy 1.010x) mc=2 ran 0.978x at 3 stages and 0.992x at 4 (docs/performance-history.md, thirty-fifth
// round). Before the SFB change multicast was slower (846 against 824 us at 4096 x 7168 x 16384).
// Only where the N blocks pair up: a cluster walks pairs of N blocks of one M block, so an odd count runs one tile
// per M block past N (its A half feeds the peer; it stores nothing). 4096 x 4224 (33 N blocks: 544 tiles, 5 waves,
// against 528 and 4 at mc=1), head_to_head.py, two alternating pairs, ours / DeepGEMM mc=2 -> mc=1: K = 32768
// 0.869 / 0.887 -> 0.994 / 0.961, K = 16384 0.872 / 0.878 -> 0.983 / 0.978, K = 4096 0.795 / 0.809 -> 0.990 / 0.980
// (DeepGEMM runs 256 x 128 in clusters of 2 there too).
void multicast_a_at_block_m_256(const Shape& s, const Named& named, FastChoice& c) {
  // A named ktma= or split= needs mc=1 (fast_config_invalid), so it keeps it.
  if (named.mc || named.ktma || named.split || c.bm != 256 || s.p.mode == kFastMasked) return;
  const int64_t n_blocks = (s.p.N + c.bn - 1) / c.bn;
  if (n_blocks >= 2 && n_blocks % 2 == 0) c.multicast = 2;
}

// Two accumulator sets up to BLOCK_N 128 at BLOCK_M <= 128 (BLOCK_M 256 has registers for one); three only with the
// deep boxes above, and only with at least three K blocks.
void accumulator_sets(const Shape& s, const Named& named, FastChoice& c) {
  if (!named.acc && c.acc_sets != 3) c.acc_sets = c.bn <= 128 && c.bm != 256 ? 2 : 1;
  if (c.acc_sets == 3 && s.nkb < 3) c.acc_sets = 2;
}

// ktma=N falls back to 1 where K is not a multiple of 128 (the box reads the K blocks as a third dimension) or its K
// blocks not a multiple of N, and (unless named, which fast_config_invalid refuses) where multicast or split K is on
// or the stages cannot hold two groups of N; the three sets that went with ktma=4 go with it.
void ktma_where_it_fits(const Shape& s, const Named& named, FastChoice& c) {
  if (c.ktma == 1) return;
  const int fit = fast_max_stages(c.bn, c.bm, false);
  const int stages = c.stages ? c.stages : fit - fit % c.ktma;
  const bool structural = c.multicast != 1 || (named.split && c.split_k > 1) || stages % c.ktma != 0 ||
                          stages < 2 * c.ktma || stages < c.ktma + c.acc_sets - 1;
  if ((structural && !named.ktma) || s.p.K % kFBK != 0 || s.nkb % c.ktma != 0) {
    if (c.ktma == 4 && !named.acc) c.acc_sets = 2;
    c.ktma = 1;
  }
}

// As many stages as fit in 227 KB (with ktma=N, a multiple of N), past 16 only with ktma=4. 20 stages at 64 x 16
// (ktma=4, three sets) against 16, H200, tests/gpu/run.sh's ab step, 3 runs each, every run faster: 64 x 576 x 7168
// 8.6 -> 8.5 us, 64 x 2112 x 7168 9.6 -> 9.5, 128 x 576 x 7168 8.9 -> 8.8 (the other 11 small-M shapes keep their
// stages). With ktma=2 ptxas (CUDA 13.0) spilled 36 bytes from 18 stages on (64 x 16 and 64 x 32); ktma=1 past 16 was
// not measured.
// At BLOCK_M 256 x BLOCK_N 128 with multicast and at least kFourStagesFromKBlocks K blocks, the 4 stages that fit
// where the epilogue stages by box (FastSmem::by_box). 4 stages against 3, H200, tests/gpu/run.sh's ab step, 3 runs a
// side, two calls, with an epilogue that staged three boxes at once in a stage kept from the K loop, which timed level
// with the one box at a time that replaced it (FastSmem::by_box); us:
// - from 24 K blocks with multicast, faster on 7 of 8: 4096 x 7168 x 16384 768.0 -> 754.7, 4096 x 4096 x 7168 197.7 ->
//   184.5, contiguous 8 x 4096 x 7168 x 3072 1263.0 -> 1234.4, 4 x 8192 x 7168 x 3072 1251.8 -> 1226.0,
//   8 x 4096 x 6144 x 7168 2362.7 -> 2343.5; level at 4 x 8192 x 4096 x 4096 888.2 -> 889.2;
// - fewer K blocks: 4096 x 32768 x 512 (4) 144.7 -> 153.9, 4096 x 24576 x 1536 (12) 268.8 -> 272.6;
// - masked (no multicast) slower on 5 of 6 from 24 K blocks: 6 x 1024 x 4096 x 4096 154.2 -> 164.1, 6 x 1024 x 7168 x
//   3072 211.1 -> 220.7, 32 x 192 x 7168 x 3072 293.2 -> 301.4.
// (docs/performance-history.md, "Issue 26, thirty-fourth round".)
constexpr int64_t kFourStagesFromKBlocks = 24;
void stages_that_fit(const Shape& s, const Named&, FastChoice& c) {
  if (c.stages == 0) {
    const bool by_box =
        c.bm == 256 && c.bn == 128 && c.multicast == 2 && c.ktma == 1 && s.nkb >= kFourStagesFromKBlocks;
    const int fit = std::min(fast_max_stages(c.bn, c.bm, by_box), c.ktma == 4 ? kFastMaxStages : 16);
    c.stages = fit - fit % c.ktma;
  }
}

// Split K where the tiles fill at most a third of the SMs (dense, not 16 wide, no ktma): S CTAs per tile, each on
// nkb / S K blocks (at least 4), the raw block results through a workspace of nkb x M x N f32, then the promotion
// kernel. The workspace must stay well inside L2 (50 MB): 64 x 576 x 7168 (8 MB, 14 splits) went from 18.7 to
// 16.3 us and 128 x 576 x 7168 (16.5 MB) from 23.7 to 19.5, while 64 x 2112 x 7168 (30 MB, 4 splits) went from 18.9
// to 28.4: at most 20 MB. A 16-wide tile does not split (64 x 576 x 7168 ran 34.6 TFLOPS split 14 ways and 54.1 as
// 36 unsplit tiles with ktma=2).
void split_k_for_few_tiles(const Shape& s, const Named& named, FastChoice& c) {
  if (!named.split && c.bn != 16 && s.dense() && c.multicast == 1 && c.ktma == 1 && c.acc_sets != 3 && s.nkb >= 8) {
    const int64_t mb = (s.p.M + c.bm - 1) / c.bm, nb = (s.p.N + c.bn - 1) / c.bn;
    if (mb * nb * 3 <= s.sms) {
      const int64_t k = std::min<int64_t>({s.sms / (mb * nb), s.nkb / 4, 16});
      if (k >= 2 && s.nkb * mb * c.bm * nb * c.bn * 4 <= (int64_t{20} << 20)) c.split_k = static_cast<int>(k);
    }
  }
  // A named split applies to dense GEMMs (grouped calls keep 1) and to at most one split per K block.
  if (!s.dense()) c.split_k = 1;
  if (c.split_k > s.nkb) c.split_k = static_cast<int>(std::max<int64_t>(1, s.nkb));
}

constexpr Rule kDerivedRules[] = {
    {"TMA boxes 2 K blocks deep for narrow or deep tiles of one row block, 4 with three sets at 64 x 16", deep_boxes},
    {"contiguous layouts keep BLOCK_M 128 unless their groups fit 256-row tiles", contiguous_keeps_128_rows},
    {"TMA multicast of A over clusters of 2 at BLOCK_M 256, dense and contiguous, where the N blocks pair up",
     multicast_a_at_block_m_256},
    {"two accumulator sets up to BLOCK_N 128 at BLOCK_M <= 128, else one", accumulator_sets},
    {"ktma=N only where K, multicast, split and stages allow it", ktma_where_it_fits},
    {"as many stages as fit (4 at 256 x 128 with multicast from 24 K blocks, the epilogue by box)",
     stages_that_fit},
    {"split K where the tiles fill at most a third of the SMs", split_k_for_few_tiles},
};

/// Parses GO_CUDA_FAST_CFG ("bn=112,stages=6,mc=2,acc=single,shape=0"; any subset) over *c; *named says which of the
/// derived fields it named.
bool apply_override(const char* text, FastChoice* c, Named* named, std::string* err) {
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (item.empty()) continue;
    const size_t eq = item.find('=');
    const std::string k = item.substr(0, eq), v = eq == std::string::npos ? "" : item.substr(eq + 1);
    char* end = nullptr;
    const long n = std::strtol(v.c_str(), &end, 10);
    const bool num = !v.empty() && end && *end == '\0';
    if (k == "bn" && num && n >= 8 && n <= 256 && n % 8 == 0) c->bn = static_cast<int>(n);
    else if (k == "bm" && num && (n == 64 || n == 128 || n == 256)) c->bm = static_cast<int>(n), named->bm = true;
    else if (k == "stages" && num && n >= 2 && n <= kFastMaxStages) c->stages = static_cast<int>(n);
    else if (k == "mc" && num && (n == 1 || n == 2)) c->multicast = static_cast<int>(n), named->mc = true;
    else if (k == "acc" && (v == "single" || v == "double" || v == "triple"))
      c->acc_sets = v == "single" ? 1 : v == "double" ? 2 : 3, named->acc = true;
    else if (k == "shape" && num && (n == 0 || n == 1)) c->shape = n == 1;
    else if (k == "sfa" && (v == "tma" || v == "copy")) c->sfa_tma = v == "tma";
    else if (k == "split" && num && n >= 1 && n <= 64) c->split_k = static_cast<int>(n), named->split = true;
    else if (k == "ktma" && num && (n == 1 || n == 2 || n == 4)) c->ktma = static_cast<int>(n), named->ktma = true;
    else if (k == "spread" && num && (n == 0 || n == 1)) c->spread = n == 1;
    else if (k == "sms" && num && n >= 1 && n <= 1024) c->sms = static_cast<int>(n);
#ifdef GO_FAST_PROFILING
    else if (k == "dbg" && num &&
             (n & ~(kProfNoMath | kProfNoEpilogue | kProfNoDependencyWait | kProfTrace | kProfTileTrace)) == 0)
      c->debug = static_cast<int>(n);
#else
    else if (k == "dbg") {
      *err = "GO_CUDA_FAST_CFG: dbg= needs the profiling build of the CUDA backend (-DGO_FAST_PROFILING; "
             "kernels/cuda/sm90_fp8_fast_profile.cuh)";
      return false;
    }
#endif
    else {
      *err = "GO_CUDA_FAST_CFG: bad item \"" + item +
             "\" (expected bm=64|128|256, bn=8..256 step 8, stages=2.." + std::to_string(kFastMaxStages) +
             ", mc=1|2, acc=single|double|triple, shape=0|1, "
             "sfa=tma|copy, split=1..64, ktma=1|2|4, spread=0|1, sms=1..1024"
#ifdef GO_FAST_PROFILING
             ", dbg=1|4|8|64|128 and their sums"
#endif
             ")";
      return false;
    }
  }
  return true;
}

/// Why configuration c cannot run (empty: it can). The one place for the kernel's validity rules (FastConfig's
/// static_asserts say the same at compile time).
std::string fast_config_invalid(const FastChoice& c) {
  const std::string tile = " (BLOCK_M " + std::to_string(c.bm) + " x BLOCK_N " + std::to_string(c.bn) + ": " +
                           std::to_string(c.stages) + " stages)";
  const std::string ktma = "ktma=" + std::to_string(c.ktma);
  // A math thread holds BLOCK_N / 2 promoted accumulators and BLOCK_N / 2 of the wgmma's per set: at 216 registers
  // ptxas (nvcc 13.0) spills from BLOCK_N 208 on (128 x 208: 88 bytes, 128 x 256: 716), none up to 200
  // (tests/kernels/_fast_kernel_source.ts run as a program prints the report of one configuration).
  if (c.bn > 200) return "bn=" + std::to_string(c.bn) + ": past bn=200 the accumulators spill (registers)";
  if (c.acc_sets == 2 && c.bn > 128) return "acc=double needs bn <= 128 (registers)";
  if (c.acc_sets == 3 && c.bn > 64) return "acc=triple needs bn <= 64 (registers)";
  if (c.bm == 256 && (c.acc_sets != 1 || c.bn > 128)) return "bm=256 needs acc=single and bn <= 128 (registers)";
  if (c.ktma > 1) {
    if (c.multicast != 1) return ktma + " needs mc=1 (a multicast share of a deep box would not land in its stages)";
    if (c.split_k > 1) return ktma + " is not combined with split=";
    if (c.stages % c.ktma != 0) return ktma + " needs the stages to be a multiple of " + std::to_string(c.ktma) + tile;
    if (c.stages < 2 * c.ktma)
      return ktma + " needs at least two groups of " + std::to_string(c.ktma) +
             " stages (the math holds a stage of one group while it waits for the next)" + tile;
  }
  if (const int most = fast_max_stages(c.bn, c.bm, true); c.stages > most)
    return std::to_string(c.stages) + " stages of BLOCK_M " + std::to_string(c.bm) + " x BLOCK_N " +
           std::to_string(c.bn) + " need more than 227 KB of shared memory (at most " + std::to_string(most) + ")";
  // The staging by box (FastSmem::by_box) was measured at 4 stages of 256 x 128 only (FastMath's opaque stage index,
  // kByBox, keeps that K loop in registers); the other tiles and depths it would take are refused until they are.
  if (fast_smem(c.bn, c.stages, c.bm).by_box && (c.stages != 4 || c.bn != 128))
    return std::to_string(c.stages) + " stages of BLOCK_M 256 x BLOCK_N " + std::to_string(c.bn) +
           " stage the epilogue by box, measured at 4 stages of 256 x 128 only" + tile;
  if (c.acc_sets == 3 && c.stages < c.ktma + 2)
    return "acc=triple holds two stages while it waits for the next: at least " + std::to_string(c.ktma + 2) +
           " stages with " + ktma + tile;
  if (c.split_k > 1 && c.acc_sets == 3) return "split= promotes in a second kernel: not with acc=triple";
  if (c.split_k > 1 && c.multicast != 1) return "split= needs mc=1";
  return "";
}

}  // namespace

int fast_smem_bytes(int bn, int stages, int bm) { return fast_smem(bn, stages, bm).total + kFastSmemAlignSlack; }

int fast_max_stages(int bn, int bm, bool by_box) {
  int s = 2;
  for (; s < kFastMaxStages; ++s) {
    const FastSmem next = fast_smem(bn, s + 1, bm);
    if (next.total + kFastSmemAlignSlack > kFastMaxSmem || (next.by_box && !by_box)) break;
  }
  return s;
}

bool choose_fast_config(const FastParams& p, int sms, FastChoice* out, std::string* err) {
  return choose_fast_config(p, sms, std::getenv("GO_CUDA_FAST_CFG"), out, err);
}

bool choose_fast_config(const FastParams& p, int sms, const char* override_text, FastChoice* out, std::string* err) {
  const Shape s{p, sms, (p.K + kFBK - 1) / kFBK};
  FastChoice c;
  Named named;
  for (const Rule& r : kTileRules) r.apply(s, named, c);
  if (override_text) {
    const int heuristic_bn = c.bn;
    if (!apply_override(override_text, &c, &named, err)) return false;
    // A named BLOCK_M 256 over the heuristic's BLOCK_N 144 (4096 x 576) takes BLOCK_N 128, which it has room for.
    if (named.bm && c.bm == 256 && c.bn == heuristic_bn && c.bn > 128) c.bn = 128;
    // An override of BLOCK_N past 128 or of more accumulator sets takes the heuristic's BLOCK_M 256 back to 128.
    if (!named.bm && c.bm == 256 && (c.bn > 128 || (named.acc && c.acc_sets > 1))) c.bm = 128;
  }
  for (const Rule& r : kDerivedRules) r.apply(s, named, c);
  if (const std::string why = fast_config_invalid(c); !why.empty()) {
    *err = "GO_CUDA_FAST_CFG: " + why;
    return false;
  }
  *out = c;
  return true;
}

std::string describe_fast_config(const FastChoice& c, const char* how) {
  std::ostringstream s;
  s << "bm=" << c.bm << " bn=" << c.bn << " stages=" << c.stages << " multicast=" << c.multicast
    << " acc=" << (c.acc_sets == 1 ? "single" : c.acc_sets == 2 ? "double" : "triple")
    << " sfa=" << (c.sfa_tma ? "tma" : "copy");
  if (how && *how) s << " " << how;
  if (c.spread) s << " spread=1";
  if (c.ktma > 1) s << " ktma=" << c.ktma;
  if (c.split_k > 1) s << " split=" << c.split_k;
  if (c.sms > 0) s << " sms=" << c.sms;
  if (c.debug) s << " dbg=" << c.debug << " (profiling: timing only)";
  return s.str();
}

}  // namespace go_sm90
