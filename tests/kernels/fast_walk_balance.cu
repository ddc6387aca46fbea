// How evenly the fast SM90 FP8 GEMM's persistent grid shares a shape's tiles (host only, no GPU): for each shape named
// on the command line, the heuristic's configuration (choose_fast_config, or --cfg as GO_CUDA_FAST_CFG over it), the
// launcher's grid (SMs / multicast clusters, the last round split in halves where fast_split_tail does) and the kernel
// header's tile walk (fast_tile); then the computed tiles each cluster walks (a half counts 0.5): the most, the mean,
// the clusters without any, and the mean over the most (1: every cluster as busy as the busiest). Tiles written as
// zeros (masked rows past masked_m) are not counted. The walk of a copy of kernels/cuda: build with -I that copy.
//
// build: nvcc -std=c++17 -O2 -I kernels/cuda -o fast_walk_balance tests/kernels/fast_walk_balance.cu \
//          kernels/cuda/sm90_fp8_fast_heuristic.cu
// usage: fast_walk_balance [--sms N] [--cfg "bm=64,..."] SHAPE ...   (names as the benchmark's tables print them:
//          "dense 4096x2112x7168", "contiguous 4x8192x4096x2048", "masked 32x20x4096x2048"; masked: Mmax = m rounded
//          up to 128, masked_m = m in every group; contiguous: g groups of m rows)
//        the benchmark's 45: python3 tests/gpu/shapes.py | xargs -d '\n' ./fast_walk_balance
// One line per shape: "<shape>: <config>: units U over C clusters, computed tiles a cluster max X mean Y, idle I,
// balance B". Exit 2 on a bad argument or a configuration outside the instances below, naming it.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "sm90_fast.h"
#include "sm90_fp8_fast_kernel.cuh"

using namespace go_sm90;

namespace {

// What fast_tile reads of a configuration; the mode is the parameters' (kMode -1).
template <int BM_, int BN_, int MC_, bool SPLIT_>
struct WalkConfig {
  static constexpr int BM = BM_, BN = BN_, kMulticast = MC_, kK = 0, kMode = -1;
  static constexpr bool kSplitK = SPLIT_;
};

struct Balance {
  int units = 0, clusters = 0, idle = 0;
  double max = 0, mean = 0;
};

template <class C>
Balance walk(FastParams p, int sms, int split_k) {
  fast_fill_blocks(p, C::BM, C::BN, C::kMulticast, split_k);
  int clusters = sms / C::kMulticast;
  if (fast_tail_halves(C::BM, C::BN, split_k)) fast_split_tail(p, clusters);
  clusters = std::max(1, std::min(p.units, clusters));
  std::vector<double> work(clusters, 0.0);
  for (int u = 0; u < p.units; ++u) {
    const FastTile t = fast_tile<C>(p, u, 0, p.N);
    if (t.valid && t.compute) work[u % clusters] += u >= p.tail_start ? 0.5 : 1.0;
  }
  Balance b;
  b.units = p.units;
  b.clusters = clusters;
  for (const double w : work) {
    b.max = std::max(b.max, w);
    b.mean += w / clusters;
    b.idle += w == 0;
  }
  return b;
}

// The BLOCK_N the heuristic picks (and 80, 176 and 48 for overrides); BLOCK_M 64, 128, 256; multicast 1, 2; split K.
constexpr int kBlockN[] = {16, 32, 48, 56, 64, 80, 96, 112, 128, 144, 176, 192};

template <int BM, int MC, bool SPLIT, std::size_t... I>
bool dispatch_bn(const FastParams& p, int sms, int bn, int split_k, Balance* b, std::index_sequence<I...>) {
  return ((bn == kBlockN[I] ? (*b = walk<WalkConfig<BM, kBlockN[I], MC, SPLIT>>(p, sms, split_k), true) : false) ||
          ...);
}

template <int BM, int MC, bool SPLIT>
bool dispatch(const FastParams& p, int sms, const FastChoice& c, Balance* b) {
  if (c.bm != BM || c.multicast != MC || (c.split_k > 1) != SPLIT) return false;
  return dispatch_bn<BM, MC, SPLIT>(p, sms, c.bn, c.split_k, b,
                                    std::make_index_sequence<sizeof kBlockN / sizeof kBlockN[0]>{});
}

bool balance(const FastParams& p, int sms, const FastChoice& c, Balance* b) {
  return dispatch<64, 1, false>(p, sms, c, b) || dispatch<128, 1, false>(p, sms, c, b) ||
         dispatch<256, 1, false>(p, sms, c, b) || dispatch<256, 2, false>(p, sms, c, b) ||
         dispatch<128, 2, false>(p, sms, c, b) || dispatch<64, 1, true>(p, sms, c, b) ||
         dispatch<128, 1, true>(p, sms, c, b);
}

}  // namespace

int main(int argc, char** argv) {
  int sms = 132;
  const char* cfg = nullptr;
  std::vector<std::string> names;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--sms") == 0 && i + 1 < argc) sms = std::atoi(argv[++i]);
    else if (std::strcmp(argv[i], "--cfg") == 0 && i + 1 < argc) cfg = argv[++i];
    else names.emplace_back(argv[i]);
  }
  if (names.empty() || sms < 1) {
    std::fprintf(stderr, "usage: fast_walk_balance [--sms N] [--cfg \"bm=64,...\"] \"dense MxNxK\" | "
                         "\"contiguous GxMxNxK\" | \"masked GxMxNxK\" ...\n");
    return 2;
  }
  for (const std::string& name : names) {
    char kind[16] = {0};
    long d[4] = {0, 0, 0, 0};
    const int got = std::sscanf(name.c_str(), "%15s %ldx%ldx%ldx%ld", kind, &d[0], &d[1], &d[2], &d[3]);
    const bool dense = std::strcmp(kind, "dense") == 0, masked = std::strcmp(kind, "masked") == 0;
    if (!((dense && got == 4) || ((masked || std::strcmp(kind, "contiguous") == 0) && got == 5)) || d[0] < 1 ||
        d[1] < 1 || d[2] < 1 || (!dense && d[3] < 1)) {
      std::fprintf(stderr, "\"%s\": expected \"dense MxNxK\", \"contiguous GxMxNxK\" or \"masked GxMxNxK\"\n",
                   name.c_str());
      return 2;
    }
    const int g = dense ? 1 : static_cast<int>(d[0]), m = static_cast<int>(dense ? d[0] : d[1]);
    FastParams p{};
    p.G = g;
    p.N = static_cast<int>(dense ? d[1] : d[2]);
    p.K = static_cast<int>(dense ? d[2] : d[3]);
    p.mk_align = 128;
    std::vector<int32_t> idx;
    if (dense) {
      p.mode = kFastNormal;
      p.M = m;
    } else if (masked) {
      p.mode = kFastMasked;
      p.M = (m + 127) / 128 * 128;
      idx.assign(g, m);
      p.masked_m = idx.data();
    } else {
      p.mode = kFastClassic;
      p.M = g * m;
      idx.resize(p.M);
      for (int r = 0; r < p.M; ++r) idx[r] = r / m;
      p.gl = idx.data();
      p.tiles256 = fast_tiles256(idx.data(), p.M, p.M, false, p.mk_align) ? 1 : 0;
    }
    FastChoice c;
    std::string err;
    if (!choose_fast_config(p, sms, cfg, &c, &err)) {
      std::fprintf(stderr, "%s: %s\n", name.c_str(), err.c_str());
      return 2;
    }
    Balance b;
    if (!balance(p, sms, c, &b)) {
      std::fprintf(stderr, "%s: bm=%d bn=%d mc=%d split=%d has no instance here (kBlockN, balance())\n", name.c_str(),
                   c.bm, c.bn, c.multicast, c.split_k);
      return 2;
    }
    std::printf("%s: %s: units %d over %d clusters, computed tiles a cluster max %.1f mean %.2f, idle %d, "
                "balance %.3f\n",
                name.c_str(), describe_fast_config(c, "").c_str(), b.units, b.clusters, b.max, b.mean, b.idle,
                b.max > 0 ? b.mean / b.max : 0.0);
  }
  return 0;
}
