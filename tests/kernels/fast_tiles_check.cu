// Host-side check of the fast SM90 FP8 GEMM's tile walk (kernels/cuda/sm90_fp8_fast_kernel.cuh, fast_tile): for every
// mode (dense, contiguous classic and psum, masked) and a spread of layouts, BLOCK_M 64 and 256 (where the launcher
// allows it: contiguous only when fast_tiles256 says so), BLOCK_N 64 / 128 / 144 and multicast 1 / 2 must write exactly
// the elements that BLOCK_M 128 with BLOCK_N 128 writes, each once, with the same B group and the same kind (computed
// or zero), also with the last round of a grid split in halves (fast_split_tail). BLOCK_M 128 is the tiling checked bit
// for bit on an H200 (tests/gpu/check.cpp); this pins the other tilings to it without a GPU. Split K (dense): the units
// of S splits must run every (tile, K block) of the unsplit walk exactly once. The TMA-store epilogue: replayed per
// math warpgroup, no staging buffer may be rewritten while one of its stores may still read it (and the waiting rule it
// replaced must be caught doing so). The index rules and error words that the device check of grouped calls shares with
// the host check (grouped_gate.h). The B scale windows and slots of the K loop (fast_windows, fast_sfb_slots,
// fast_straddle_step). The walk's divisions by divisors the launcher prepares (FastDiv, fast_fill_blocks, which fills
// every walk below). Masked A by 64-row chunk: every wave a math warpgroup computes (fast_idle_waves) reads a chunk
// the producer loads. Run by tests/kernels/cuda_fast_tiles_test.ts (nvcc, host code only).
//
// build: nvcc -std=c++17 -O2 -I kernels/cuda -o fast_tiles_check tests/kernels/fast_tiles_check.cu
// usage: fast_tiles_check   (prints one line per case, then "SUMMARY cases=N failures=F"; exit 1 on a failure)
#include <algorithm>
#include <cstdio>
#include <iterator>
#include <string>
#include <tuple>
#include <vector>

#include "sm90_fp8_fast_kernel.cuh"

using namespace go_sm90;

namespace {

// What one output element received: 0 nothing, 1 zeros, 2 + g computed with B group g; -1: written twice; -2 (every
// element): a tile outside the output.
using WriteMap = std::vector<int>;

struct Layout {
  std::string name;
  FastParams p;              // mode, M, N, G, gl / masked_m, mk_align, psum_flags
  std::vector<int32_t> idx;  // grouped_layout or masked_m (p points into it)
};

// kClusters > 0: the walk of a grid of that many clusters, its last round split in halves where fast_split_tail does
// (BLOCK_M 256).
template <class C, int kClusters = 0>
WriteMap walk(FastParams p) {
  const int Z = p.mode == kFastMasked ? p.G : 1;
  fast_fill_blocks(p, C::BM, C::BN, C::kMulticast, 1);  // the launcher's units and walk divisors
  if (kClusters > 0) fast_split_tail(p, kClusters);
  WriteMap w(static_cast<size_t>(Z) * p.M * p.N, 0);
  for (int u = 0; u < p.units; ++u) {
    for (int rank = 0; rank < C::kMulticast; ++rank) {
      const FastTile ti = fast_tile<C>(p, u, rank, p.N);
      if (!ti.valid) continue;
      for (int chunk = 0; chunk < C::BM / 64; ++chunk) {
        const bool zero = ti.zero[chunk] || !ti.compute;
        for (int r = 0; r < std::min(64, ti.rows_left[chunk]); ++r) {
          const int row = ti.m0 + 64 * chunk + r;
          if (ti.z < 0 || ti.z >= Z || row < 0 || row >= p.M || ti.n0 < 0) {  // a walk that leaves the output
            w.assign(w.size(), -2);
            return w;
          }
          for (int c = ti.n0; c < ti.n0 + C::BN && c < p.N; ++c) {
            int& e = w[(static_cast<size_t>(ti.z) * p.M + row) * p.N + c];
            e = e != 0 ? -1 : zero ? 1 : 2 + ti.g;
          }
        }
      }
    }
  }
  return w;
}

// The walk of a kernel with the call's mode compiled in (FastConfig's MODE_, as the JIT's shape-class kernels have it):
// the same tiles as the kernel that reads the mode at run time.
template <int BM, int BN, int STAGES, int MC, int SETS, int kClusters = 0>
WriteMap walk_mode_compiled(FastParams p) {
  using Normal = FastConfig<BM, BN, STAGES, MC, SETS, 0, 0, false, 1, false, kFastNormal>;
  using Classic = FastConfig<BM, BN, STAGES, MC, SETS, 0, 0, false, 1, false, kFastClassic>;
  using Psum = FastConfig<BM, BN, STAGES, MC, SETS, 0, 0, false, 1, false, kFastPsum>;
  using Masked = FastConfig<BM, BN, STAGES, MC, SETS, 0, 0, false, 1, false, kFastMasked>;
  // Indexed by FastMode.
  WriteMap (*const by_mode[])(FastParams) = {&walk<Normal, kClusters>, &walk<Classic, kClusters>,
                                             &walk<Psum, kClusters>, &walk<Masked, kClusters>};
  return by_mode[p.mode](p);
}

// Split K: how often each (tile, K block) runs when the dense walk's units are split S ways over nkb K blocks; empty
// when every one runs once, else the first that does not.
template <class C>
std::string split_walk(FastParams p, int nkb, int S) {
  p.K = nkb * kFBK;
  fast_fill_blocks(p, C::BM, C::BN, C::kMulticast, S);
  std::vector<int> runs(static_cast<size_t>(p.m_blocks) * p.n_blocks * nkb, 0);
  for (int u = 0; u < p.units; ++u) {
    const FastTile ti = fast_tile<C>(p, u, 0, p.N);
    if (!ti.valid || ti.kb0 < 0 || ti.kb1 > nkb || ti.kb0 >= ti.kb1) return "unit " + std::to_string(u) + ": no K blocks";
    if (ti.m0 < 0 || ti.m0 >= p.M || ti.n0 < 0 || ti.n0 >= p.N) return "unit " + std::to_string(u) + ": outside the output";
    for (int kb = ti.kb0; kb < ti.kb1; ++kb)
      ++runs[(static_cast<size_t>(ti.m0 / C::BM) * p.n_blocks + ti.n0 / C::BN) * nkb + kb];
  }
  for (size_t i = 0; i < runs.size(); ++i)
    if (runs[i] != 1)
      return "tile " + std::to_string(i / nkb) + " K block " + std::to_string(i % nkb) + " runs " +
             std::to_string(runs[i]) + " times";
  return "";
}

// epi=tma: replays each math warpgroup's epilogue chunks in the order its CTA walks its units (a grid of `ctas`
// clusters) and checks that no staging buffer is rewritten while a TMA store (bulk group) may still read it, the
// warpgroup waiting as `pending` says (the kernel's rule: fast_epi_pending). Every chunk's TMA choice is the kernel's
// (fast_chunk_tma, D with a map). Empty when no buffer is rewritten early, else the first that is.
template <class C, bool kSplitTail = false>
std::string epi_buffers(FastParams p, int ctas, int (*pending)(bool, int)) {
  p.d_tma = 1;
  fast_fill_blocks(p, C::BM, C::BN, C::kMulticast, 1);
  if (kSplitTail) fast_split_tail(p, ctas);
  for (int cluster = 0; cluster < ctas; ++cluster)
    for (int rank = 0; rank < C::kMulticast; ++rank)
      for (int w = 0; w < C::kMathWGs; ++w) {
        std::vector<int> groups;  // bulk groups that may still read (a bit per buffer each), oldest first
        bool prev = false;
        const int c0 = C::kMathWGs == 2 && w == 1 ? 1 : 0;
        for (int u = cluster; u < p.units; u += ctas) {
          const FastTile ti = fast_tile<C>(p, u, rank, p.N);
          if (!ti.valid) continue;
          // Two waves both stored by TMA: the kernel waits for every group, then stores both buffers as one group.
          if (C::kWaves == 2 && fast_chunk_tma(p, ti.rows_left[c0], ti.m0 + 64 * c0, ti.n0, p.N) &&
              fast_chunk_tma(p, ti.rows_left[2 + c0], ti.m0 + 64 * (2 + c0), ti.n0, p.N)) {
            groups.assign(1, 3 << (w * C::kWaves));
            prev = false;
            continue;
          }
          for (int wave = 0; wave < C::kWaves; ++wave) {
            const int chunk = 2 * wave + c0, buffer = w * C::kWaves + wave;
            const int keep = pending(prev, C::kWaves);
            if (static_cast<int>(groups.size()) > keep) groups.erase(groups.begin(), groups.end() - keep);
            for (int g : groups)
              if (g & (1 << buffer))
                return "CTA " + std::to_string(cluster * C::kMulticast + rank) + " warpgroup " + std::to_string(w) +
                       " rewrites buffer " + std::to_string(buffer) + " at unit " + std::to_string(u) + " wave " +
                       std::to_string(wave) + " while its TMA store may read it";
            prev = fast_chunk_tma(p, ti.rows_left[chunk], ti.m0 + 64 * chunk, ti.n0, p.N);
            if (prev) groups.push_back(1 << buffer);
          }
        }
      }
  return "";
}
// Masked A by 64-row chunk (fast_a_by_chunk): the producer loads a tile's chunks up to the last one that is not a zero
// chunk (it starts below masked_m) and has rows to store (sm90_fp8_fast_producer.cuh), so every wave a math warpgroup
// computes must lie in such a chunk; `idle` is the rule that says which waves it skips (the kernel's fast_idle_waves,
// or one under test). Empty when every computed wave reads a loaded chunk, else the first that does not; *left_out
// counts the tiles where the producer leaves a chunk out (-1: it loads A by the whole box here).
using IdleRule = int (*)(const FastParams&, const FastTile&, int);
template <class C, int kClusters = 0>
std::string a_chunks_read(FastParams p, IdleRule idle, int* left_out) {
  fast_fill_blocks(p, C::BM, C::BN, C::kMulticast, 1);
  if (kClusters > 0) fast_split_tail(p, kClusters);
  if (!fast_a_by_chunk(p.mode, p.split_k, C::BM, C::kMulticast, C::kKtma, p.M)) {
    *left_out = -1;
    return "";
  }
  for (int u = 0; u < p.units; ++u) {
    const FastTile ti = fast_tile<C>(p, u, 0, p.N);         // the producer's view
    const FastTile tm = fast_tile<C, false>(p, u, 0, p.N);  // the math warpgroups' (no zero flags)
    if (!ti.valid || !ti.compute) continue;
    const auto loaded = [&](int c) { return !ti.zero[c] && ti.rows_left[c] > 0; };
    for (int c = 0; c < C::BM / 64; ++c)
      if (!loaded(c)) {
        ++*left_out;
        break;
      }
    for (int w = 0; w < C::kMathWGs; ++w) {
      const int skipped = idle(p, tm, w);
      for (int v = 0; v < C::kWaves; ++v) {
        const int c = 2 * v + w;  // wave v of warpgroup w: rows 128 v + 64 w .. + 63 of the tile
        if (!((skipped >> v) & 1) && !loaded(c))
          return "unit " + std::to_string(u) + " (group " + std::to_string(ti.z) + ", rows " + std::to_string(ti.m0) +
                 "): warpgroup " + std::to_string(w) + " computes wave " + std::to_string(v) + " from chunk " +
                 std::to_string(c) + ", which the producer does not load";
      }
    }
  }
  return "";
}
int idle_none(const FastParams&, const FastTile&, int) { return 0; }  // a rule that computes every wave

int kernel_pending(bool prev, int waves) { return fast_epi_pending(prev, waves); }
int always_waves_minus_one(bool, int waves) { return waves - 1; }  // the rule before a chunk stored by the threads

// The first element where two maps differ, described; empty when they agree.
std::string compare(const WriteMap& want, const WriteMap& got, const FastParams& p) {
  auto kind = [](int v) {
    return v == 0    ? std::string("unwritten")
           : v == 1  ? std::string("zero")
           : v == -1 ? std::string("written twice")
           : v == -2 ? std::string("a tile outside the output")
                     : "group " + std::to_string(v - 2);
  };
  for (size_t i = 0; i < want.size(); ++i) {
    if (got[i] == want[i] && got[i] >= 0) continue;
    const size_t per = static_cast<size_t>(p.M) * p.N;
    char b[200];
    std::snprintf(b, sizeof b, "z %zu row %zu col %zu: %s, BLOCK_M 128 gives %s", i / per, i % per / p.N, i % p.N,
                  kind(got[i]).c_str(), kind(want[i]).c_str());
    return b;
  }
  return "";
}

Layout dense(int M, int N) {
  Layout l;
  l.name = "dense M" + std::to_string(M) + " N" + std::to_string(N);
  l.p = FastParams{};
  l.p.mode = kFastNormal;
  l.p.M = M;
  l.p.N = N;
  l.p.G = 1;
  l.p.mk_align = 128;
  return l;
}

// Contiguous classic: each group's rows padded (-1) up to mk, then `tail` rows in no group.
Layout classic(std::vector<int> ms, int N, int mk, int tail) {
  Layout l;
  l.name = "classic m=[";
  for (size_t g = 0; g < ms.size(); ++g) {
    l.name += (g ? "," : "") + std::to_string(ms[g]);
    for (int r = 0; r < ms[g]; ++r) l.idx.push_back(static_cast<int32_t>(g));
    while (l.idx.size() % mk) l.idx.push_back(-1);
  }
  for (int r = 0; r < tail; ++r) l.idx.push_back(-1);
  l.name += "] mk" + std::to_string(mk) + " N" + std::to_string(N);
  l.p = FastParams{};
  l.p.mode = kFastClassic;
  l.p.M = static_cast<int>(l.idx.size());
  l.p.N = N;
  l.p.G = static_cast<int>(ms.size());
  l.p.mk_align = mk;
  return l;
}

// Contiguous psum: group g's rows from its previous end aligned up to mk to its end; flags bit 1 pads to mk.
Layout psum(std::vector<int> ms, int N, int mk, int flags) {
  Layout l;
  l.name = std::string(flags & 2 ? "psum+zero_pad" : "psum") + " m=[";
  int end = 0;
  for (size_t g = 0; g < ms.size(); ++g) {
    l.name += (g ? "," : "") + std::to_string(ms[g]);
    end = (end + mk - 1) / mk * mk + ms[g];
    l.idx.push_back(end);
  }
  l.name += "] mk" + std::to_string(mk) + " N" + std::to_string(N);
  l.p = FastParams{};
  l.p.mode = kFastPsum;
  l.p.M = (end + mk - 1) / mk * mk + 37;
  l.p.N = N;
  l.p.G = static_cast<int>(ms.size());
  l.p.mk_align = mk;
  l.p.psum_flags = flags;
  return l;
}

Layout masked(std::vector<int> mm, int Mmax, int N) {
  Layout l;
  l.name = "masked Mmax" + std::to_string(Mmax) + " m=[";
  for (size_t g = 0; g < mm.size(); ++g) l.name += (g ? "," : "") + std::to_string(mm[g]);
  l.name += "] N" + std::to_string(N);
  l.idx.assign(mm.begin(), mm.end());
  l.p = FastParams{};
  l.p.mode = kFastMasked;
  l.p.M = Mmax;
  l.p.N = N;
  l.p.G = static_cast<int>(mm.size());
  l.p.mk_align = 128;
  return l;
}

}  // namespace

int main() {
  std::vector<Layout> layouts = {
      dense(1, 200),
      dense(64, 136),
      dense(65, 256),
      dense(300, 520),
      dense(512, 384),
      dense(700, 144),
      classic({100, 0, 1, 257}, 384, 128, 37),
      classic({200, 0, 256, 300}, 384, 128, 37),
      classic({256, 512, 130}, 200, 128, 0),
      classic({300, 20}, 256, 256, 5),
      psum({100, 0, 1, 257}, 384, 128, 1),
      psum({200, 0, 256, 300}, 384, 128, 1),
      psum({200, 0, 256, 300}, 384, 128, 3),
      psum({512, 129, 64}, 264, 128, 3),
      masked({384, 0, 129, 300, 1, 257}, 384, 512),
      masked({20, 0, 64, 33}, 128, 384),
      masked({0, 1, 256, 100}, 256, 384),
      masked({37, 77, 200}, 200, 256),
      masked({64, 3}, 64, 200),
  };
  int cases = 0, failures = 0, old_rule_hazards = 0, split_walks = 0, chunk_tiles_left_out = 0, idle_none_caught = 0;
  for (auto& l : layouts) {
    if (l.p.mode == kFastMasked) l.p.masked_m = l.idx.data();
    else if (!l.idx.empty()) l.p.gl = l.idx.data();
    const bool contiguous = l.p.mode == kFastClassic || l.p.mode == kFastPsum;
    const bool t256 = !contiguous ||
                      fast_tiles256(l.idx.data(), static_cast<int64_t>(l.idx.size()), l.p.M, l.p.mode == kFastPsum,
                                    l.p.mk_align);
    const WriteMap want = walk<FastConfig<128, 128, 4, 1, 2>>(l.p);
    struct Variant {
      const char* name;
      WriteMap (*walk)(FastParams);
      bool needs256;
    };
    const Variant variants[] = {
        {"bm64 bn64", &walk<FastConfig<64, 64, 4, 1, 2>>, false},
        {"bm64 bn144 mc2", &walk<FastConfig<64, 144, 4, 2, 1>>, false},
        {"bm128 bn64 mc2", &walk<FastConfig<128, 64, 4, 2, 2>>, false},
        {"bm128 bn144", &walk<FastConfig<128, 144, 4, 1, 1>>, false},
        {"bm256 bn128", &walk<FastConfig<256, 128, 3, 1, 1>>, true},
        {"bm256 bn64 mc2", &walk<FastConfig<256, 64, 3, 2, 1>>, true},
        // The last round in halves (fast_split_tail), over grids where it splits some tiles or all of them.
        {"bm256 bn128 /4", &walk<FastConfig<256, 128, 3, 1, 1>, 4>, true},
        {"bm256 bn128 /7", &walk<FastConfig<256, 128, 3, 1, 1>, 7>, true},
        {"bm256 bn64 mc2 /3", &walk<FastConfig<256, 64, 3, 2, 1>, 3>, true},
        {"bm256 bn128 /64", &walk<FastConfig<256, 128, 3, 1, 1>, 64>, true},
        {"bm128 bn64 mode", &walk_mode_compiled<128, 64, 4, 1, 2>, false},
        {"bm256 bn128 /7 mode", &walk_mode_compiled<256, 128, 3, 1, 1, 7>, true},
    };
    // Where the split happens at all (the variants above must meet some).
    for (const int clusters : {4, 7, 64}) {
      FastParams q = l.p;
      fast_fill_blocks(q, 256, 128, 1, 1);
      const int units = q.units;
      fast_split_tail(q, clusters);
      if (t256 && q.units != units) ++split_walks;
    }
    for (const auto& v : variants) {
      if (v.needs256 && !t256) continue;  // the launcher keeps BLOCK_M 128 for this layout
      ++cases;
      const std::string diff = compare(want, v.walk(l.p), l.p);
      if (!diff.empty()) ++failures;
      std::printf("%-52s %-16s %s\n", l.name.c_str(), v.name, diff.empty() ? "same writes" : ("DIFFERS: " + diff).c_str());
    }
    // The reference walk itself writes nothing twice.
    for (int e : want)
      if (e < 0) {
        ++failures;
        std::printf("%-52s BLOCK_M 128 writes an element twice\n", l.name.c_str());
        break;
      }
    // epi=tma staging buffers, in a grid of 3 clusters (several units each).
    using EpiCheck = std::string (*)(FastParams, int, int (*)(bool, int));
    for (const auto& [name, check, needs256] :
         {std::tuple<const char*, EpiCheck, bool>{"bm64 bn48 tma", &epi_buffers<FastConfig<64, 48, 4, 1, 2>>, false},
          {"bm128 bn64 mc2 tma", &epi_buffers<FastConfig<128, 64, 4, 2, 2>>, false},
          {"bm256 bn128 tma", &epi_buffers<FastConfig<256, 128, 3, 1, 1>>, true},
          {"bm256 bn128 tma /3", &epi_buffers<FastConfig<256, 128, 3, 1, 1>, true>, true}}) {
      if (needs256 && !t256) continue;
      ++cases;
      const std::string diff = check(l.p, 3, &kernel_pending);
      if (!diff.empty()) ++failures;
      std::printf("%-52s %-16s %s\n", l.name.c_str(), name, diff.empty() ? "no buffer rewritten early" : ("HAZARD: " + diff).c_str());
      if (!diff.empty() || !needs256 || std::string(name).find('/') != std::string::npos) continue;
      // BLOCK_M 256 is where chunks of one tile can go both ways; the old rule's hazards, where the layout has them,
      // are counted below (the check must be able to see one).
      if (!check(l.p, 3, &always_waves_minus_one).empty()) ++old_rule_hazards;
    }
    // Masked A by chunk: every computed wave reads a loaded chunk (BLOCK_M 128, and 256 where Mmax <= 256, also with
    // the last round in halves); a rule that idles no wave must be caught where a chunk is left out.
    if (l.p.mode == kFastMasked) {
      using ChunkCheck = std::string (*)(FastParams, IdleRule, int*);
      using C128 = FastConfig<128, 128, 4, 1, 2>;
      using C256 = FastConfig<256, 128, 3, 1, 1>;
      using Row = std::tuple<const char*, ChunkCheck, IdleRule>;
      const Row rows[] = {Row{"bm128 a by chunk", &a_chunks_read<C128>, &fast_idle_waves<C128>},
                          Row{"bm256 a by chunk", &a_chunks_read<C256>, &fast_idle_waves<C256>},
                          Row{"bm256 a by chunk /7", &a_chunks_read<C256, 7>, &fast_idle_waves<C256>}};
      for (const auto& [name, check, rule] : rows) {
        ++cases;
        int left = 0, ignored = 0;
        const std::string diff = check(l.p, rule, &left);
        if (!diff.empty()) ++failures;
        if (left < 0) {
          std::printf("%-52s %-16s A by the whole box (Mmax past 256)\n", l.name.c_str(), name);
          continue;
        }
        std::printf("%-52s %-16s %s (%d tiles leave a chunk out)\n", l.name.c_str(), name,
                    diff.empty() ? "every computed wave's chunk loaded" : ("UNLOADED: " + diff).c_str(), left);
        chunk_tiles_left_out += left;
        if (left > 0 && !check(l.p, &idle_none, &ignored).empty()) ++idle_none_caught;
      }
    }
    if (l.p.mode != kFastNormal) continue;
    // Split K over the same tiles: K blocks that divide evenly and not, S up to one per K block.
    using Split64 = FastConfig<64, 64, 4, 1, 2, 0, 0, true>;
    using Split128 = FastConfig<128, 128, 4, 1, 2, 0, 0, true>;
    using SplitCheck = std::string (*)(FastParams, int, int);
    for (const auto& [nkb, S] : {std::pair<int, int>{8, 2}, {9, 2}, {56, 14}, {7, 3}, {5, 5}}) {
      for (const auto& [name, check] : {std::pair<const char*, SplitCheck>{"bm64 bn64 split", &split_walk<Split64>},
                                        {"bm128 bn128 split", &split_walk<Split128>}}) {
        ++cases;
        const std::string diff = check(l.p, nkb, S);
        if (!diff.empty()) ++failures;
        std::printf("%-52s %-16s nkb %d S %d: %s\n", l.name.c_str(), name, nkb, S,
                    diff.empty() ? "every (tile, K block) once" : ("DIFFERS: " + diff).c_str());
      }
    }
  }
  // The split walks above split something: the last round in halves met some layouts.
  ++cases;
  if (split_walks == 0) ++failures;
  std::printf("last round in halves: %d (layout, grid) pairs split (must be > 0)\n", split_walks);
  // The replay has teeth: waiting as if the previous chunk always went by TMA rewrites a buffer early somewhere.
  ++cases;
  if (old_rule_hazards == 0) ++failures;
  std::printf("epi=tma, waiting as if every chunk went by TMA: %d layouts with a hazard (must be > 0)\n", old_rule_hazards);
  // A by chunk left chunks out somewhere, and a rule that computes every wave is caught reading one.
  ++cases;
  if (chunk_tiles_left_out == 0 || idle_none_caught == 0) ++failures;
  std::printf("a by chunk: %d tiles leave a chunk out, an idle-nothing rule caught on %d (both must be > 0)\n",
              chunk_tiles_left_out, idle_none_caught);
  // The index rules of grouped_gate.h, which the device check of the fast path and the host check of the simple
  // kernels share (the messages are the GEMM calls' errors): entries at and just past each bound.
  struct Entry {
    int kind;
    int64_t x, previous, M, G;
    bool bad;
  };
  const Entry entries[] = {
      {kGateClassic, -1, 0, 256, 4, false}, {kGateClassic, 3, 0, 256, 4, false}, {kGateClassic, -2, 0, 256, 4, true},
      {kGateClassic, 4, 0, 256, 4, true},   {kGatePsum, 100, 100, 256, 4, false}, {kGatePsum, 256, 100, 256, 4, false},
      {kGatePsum, 99, 100, 256, 4, true},   {kGatePsum, 257, 100, 256, 4, true},  {kGateMasked, 0, 0, 128, 4, false},
      {kGateMasked, 128, 0, 128, 4, false}, {kGateMasked, -1, 0, 128, 4, true},  {kGateMasked, 129, 0, 128, 4, true},
  };
  for (const Entry& e : entries) {
    ++cases;
    const bool bad = gate_entry_bad(e.kind, e.x, e.previous, e.M, e.G);
    if (bad != e.bad) ++failures;
    std::printf("gate rule kind %d: %lld (previous %lld, M %lld, G %lld) %s%s\n", e.kind, static_cast<long long>(e.x),
                static_cast<long long>(e.previous), static_cast<long long>(e.M), static_cast<long long>(e.G),
                bad ? "refused" : "accepted", bad == e.bad ? "" : " DIFFERS");
  }
  const std::tuple<int, std::string> messages[] = {
      {kGateClassic, "grouped_layout[130] = 5 is neither -1 nor a group in [0, 2)"},
      {kGatePsum, "grouped_layout[130] = 5: psum ends must be non-decreasing and <= M = 2"},
      {kGateMasked, "masked_m[130] = 5 is outside [0, 2]"},
  };
  for (const auto& [kind, want] : messages) {
    ++cases;
    const std::string got = gate_message(kind, 130, 5, 2);
    if (got != want) ++failures;
    std::printf("gate message kind %d: %s%s\n", kind, got.c_str(), got == want ? "" : (" DIFFERS from " + want).c_str());
  }
  // 256-row tiles: a classic block pair fits when both halves hold one group or the second is padding; a psum group
  // fits when its start (the previous end aligned up to mk) is a multiple of 256.
  const bool fits[] = {fits256_classic(2, 2), fits256_classic(2, -1), !fits256_classic(2, 3), !fits256_classic(-1, 2),
                       fits256_psum(0, 128),   fits256_psum(256, 128), fits256_psum(129, 256), !fits256_psum(100, 128)};
  for (bool ok : fits) {
    ++cases;
    if (!ok) ++failures;
  }
  std::printf("gate 256-row rules: %s\n", std::all_of(std::begin(fits), std::end(fits), [](bool b) { return b; })
                                             ? "as documented"
                                             : "DIFFERS");
  // SFB windows: a tile's K blocks split into windows that cover them in order, each 1..kSfbWindow blocks (the double
  // buffer's size), and at least 3 (the three-set loop's minimum) wherever the tile has 3 or more.
  {
    int bad = 0;
    for (int nk = 1; nk <= 4 * kSfbWindow + 5; ++nk) {
      const int nw = fast_windows(nk);
      int prev = 0;
      for (int i = 0; i < nw; ++i) {
        const int w0 = fast_window_start(nk, nw, i), w1 = fast_window_start(nk, nw, i + 1);
        if (w0 != prev || w1 - w0 < 1 || w1 - w0 > kSfbWindow || (nk >= 3 && w1 - w0 < 3)) ++bad;
        prev = w1;
      }
      if (prev != nk) ++bad;
    }
    ++cases;
    if (bad) ++failures;
    std::printf("SFB windows for 1..%d K blocks: %s\n", 4 * kSfbWindow + 5, bad ? "BAD" : "cover every block in order");
  }
  // SFB slots: every BLOCK_N tile at every multiple of BLOCK_N touches at most fast_sfb_slots(BLOCK_N) 128-column scale
  // blocks, and the straddle column 128 - n0 % 128 is a multiple of the step fast_with_straddle dispatches over.
  {
    int bad = 0;
    for (int bn = 8; bn <= 256; bn += 8) {
      const int step = fast_straddle_step(bn);
      for (int n0 = 0; n0 < 128 * 64; n0 += bn) {
        const int touched = (n0 + bn - 1) / 128 - n0 / 128 + 1;
        if (touched > fast_sfb_slots(bn) || (128 - n0 % 128) % step != 0) ++bad;
      }
    }
    ++cases;
    if (bad) ++failures;
    std::printf("SFB slots and straddle columns for BLOCK_N 8..256: %s\n", bad ? "BAD" : "within the kernel's");
  }
  // FastDiv (the tile walk's divisions): floor(n / d) for divisors 1..4096, every power of two and the largest ones,
  // each at numerators around its multiples, around powers of two and at the 32-bit ends.
  {
    int64_t checked = 0, bad = 0;
    std::vector<uint32_t> ds;
    for (uint32_t d = 1; d <= 4096; ++d) ds.push_back(d);
    for (int b = 13; b < 32; ++b) ds.insert(ds.end(), {(1u << b) - 1, 1u << b, (1u << b) + 1});
    ds.insert(ds.end(), {0xfffffffeu, 0xffffffffu});
    for (uint32_t d : ds) {
      const FastDiv f = FastDiv::of(d);
      std::vector<uint64_t> ns = {0, 1, 0xfffffffeu, 0xffffffffu, 0xffffffffu / d * d, 0xffffffffu / d * d - 1};
      for (uint64_t q = 1; q <= 300; ++q) ns.insert(ns.end(), {q * d - 1, q * d, q * d + 1});
      for (int b = 1; b < 32; ++b) ns.insert(ns.end(), {(1ull << b) - 1, 1ull << b});
      for (uint64_t n : ns) {
        if (n > 0xffffffffu) continue;
        ++checked;
        if (f.quotient(static_cast<uint32_t>(n)) != static_cast<uint32_t>(n / d)) ++bad;
      }
    }
    ++cases;
    if (bad) ++failures;
    std::printf("FastDiv: %lld quotients, %s\n", static_cast<long long>(checked), bad ? "WRONG" : "all exact");
  }
  std::printf("SUMMARY cases=%d failures=%d\n", cases, failures);
  return failures ? 1 : 0;
}
