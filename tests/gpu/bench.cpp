// Times the CUDA backend's FP8 GEMMs through the C ABI on the DeepSeek-V3 shapes (deepgemm-ops.md §12, §13).
// Each call is synchronous (the backend synchronizes to report faults), so a host clock around it is the kernel
// time plus a few microseconds. Inputs rotate over enough sets to exceed the 60 MB L2. Median of the timed calls.
// usage: bench CUDA_SO [--quick]
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include "../../kernels/gemm_oracle.h"

struct Api {
  decltype(&go_alloc) alloc;
  decltype(&go_free) free_;
  decltype(&go_copy_in) copy_in;
  decltype(&go_last_error) last_error;
  decltype(&go_fp8_gemm) fp8_gemm;
  decltype(&go_m_grouped_fp8_gemm_contiguous) mg;
  decltype(&go_m_grouped_fp8_gemm_masked) masked;
  decltype(&go_synchronize) sync;
};

static go_tensor tensor(void* p, int dt, std::vector<int64_t> shape, std::vector<int64_t> strides) {
  go_tensor t;
  std::memset(&t, 0, sizeof t);
  t.data = p;
  t.dtype = dt;
  t.ndim = static_cast<int32_t>(shape.size());
  for (size_t i = 0; i < shape.size(); ++i) {
    t.shape[i] = shape[i];
    t.strides[i] = strides[i];
  }
  return t;
}

static void* dev_random(Api& api, size_t bytes, uint32_t seed, bool scale) {
  void* p = nullptr;
  if (api.alloc(bytes, &p) != 0) {
    std::fprintf(stderr, "alloc: %s\n", api.last_error());
    return nullptr;
  }
  std::vector<uint8_t> h(bytes);
  uint32_t s = seed * 2654435761u + 1;
  if (scale) {
    for (size_t i = 0; i + 4 <= bytes; i += 4) {
      s = s * 1664525u + 1013904223u;
      const float v = 1.0f / static_cast<float>(1 + (s >> 28));
      std::memcpy(&h[i], &v, 4);
    }
  } else {
    for (size_t i = 0; i < bytes; ++i) {
      s = s * 1664525u + 1013904223u;
      uint8_t c = static_cast<uint8_t>(s >> 24);
      if ((c & 0x7F) == 0x7F) c = 0x38;
      h[i] = c;
    }
  }
  api.copy_in(p, h.data(), bytes);
  return p;
}

static double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  const bool quick = argc > 2 && !std::strcmp(argv[2], "--quick");
  void* h = dlopen(argv[1], RTLD_NOW);
  if (!h) {
    std::fprintf(stderr, "%s\n", dlerror());
    return 2;
  }
  Api api;
  api.alloc = reinterpret_cast<decltype(api.alloc)>(dlsym(h, "go_alloc"));
  api.free_ = reinterpret_cast<decltype(api.free_)>(dlsym(h, "go_free"));
  api.copy_in = reinterpret_cast<decltype(api.copy_in)>(dlsym(h, "go_copy_in"));
  api.last_error = reinterpret_cast<decltype(api.last_error)>(dlsym(h, "go_last_error"));
  api.fp8_gemm = reinterpret_cast<decltype(api.fp8_gemm)>(dlsym(h, "go_fp8_gemm"));
  api.mg = reinterpret_cast<decltype(api.mg)>(dlsym(h, "go_m_grouped_fp8_gemm_contiguous"));
  api.masked = reinterpret_cast<decltype(api.masked)>(dlsym(h, "go_m_grouped_fp8_gemm_masked"));
  api.sync = reinterpret_cast<decltype(api.sync)>(dlsym(h, "go_synchronize"));
  struct Shape { int64_t m, n, k; };
  std::vector<Shape> shapes = {{64, 2112, 7168},   {64, 24576, 1536},  {64, 32768, 512},  {64, 7168, 16384},
                               {64, 4096, 7168},   {64, 7168, 2048},   {128, 2112, 7168}, {128, 24576, 1536},
                               {128, 32768, 512},  {128, 7168, 16384}, {128, 4096, 7168}, {128, 7168, 2048},
                               {4096, 2112, 7168}, {4096, 24576, 1536}, {4096, 32768, 512}, {4096, 7168, 16384},
                               {4096, 4096, 7168}, {4096, 7168, 2048}};
  if (quick) shapes = {{128, 7168, 2048}, {4096, 7168, 16384}};
  std::printf("%-22s %10s %10s %10s\n", "fp8_gemm_nt 1D2D M,N,K", "us", "TFLOPS", "GB/s");
  for (const Shape& sh : shapes) {
    const int64_t M = sh.m, N = sh.n, K = sh.k, KB = (K + 127) / 128;
    const size_t set_bytes = static_cast<size_t>(M * K + N * K + M * N * 2);
    const int sets = static_cast<int>(std::max<size_t>(1, std::min<size_t>(8, (200u << 20) / set_bytes + 1)));
    std::vector<void*> bufs;
    std::vector<std::vector<go_tensor>> ts;
    for (int s = 0; s < sets; ++s) {
      void* a = dev_random(api, static_cast<size_t>(M * K), 11 + s, false);
      void* b = dev_random(api, static_cast<size_t>(N * K), 23 + s, false);
      void* sa = dev_random(api, static_cast<size_t>(M * KB * 4), 37 + s, true);
      void* sb = dev_random(api, static_cast<size_t>(((N + 127) / 128) * KB * 4), 41 + s, true);
      void* d = nullptr;
      api.alloc(static_cast<size_t>(M * N * 2), &d);
      bufs.insert(bufs.end(), {a, b, sa, sb, d});
      ts.push_back({tensor(a, GO_E4M3, {M, K}, {K, 1}), tensor(sa, GO_F32, {M, KB}, {1, M}),
                    tensor(b, GO_E4M3, {N, K}, {K, 1}), tensor(sb, GO_F32, {(N + 127) / 128, KB}, {KB, 1}),
                    tensor(d, GO_BF16, {M, N}, {N, 1})});
    }
    auto call = [&](int s) {
      auto& t = ts[static_cast<size_t>(s)];
      return api.fp8_gemm(&t[0], &t[1], &t[2], &t[3], nullptr, &t[4], 1, 128, 128, 128, GO_MODEL_SM90_1D2D);
    };
    int st = call(0);
    if (st != 0) {
      std::printf("%lld,%lld,%lld: status %d %s\n", (long long)M, (long long)N, (long long)K, st, api.last_error());
    } else {
      // GO_CUDA_ASYNC=1 (set by run.sh) lets calls queue; each sample times `batch` calls then go_synchronize.
      std::vector<double> us;
      const int iters = quick ? 5 : 9, batch = 10;
      call(1 % sets);
      api.sync();
      for (int i = 0; i < iters; ++i) {
        const auto t0 = std::chrono::steady_clock::now();
        for (int j = 0; j < batch; ++j) call((i * batch + j) % sets);
        api.sync();
        const auto t1 = std::chrono::steady_clock::now();
        us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / batch);
      }
      const double t = median(us);
      const double tflops = 2.0 * M * N * K / (t * 1e-6) / 1e12;
      const double gbs = (M * K + N * K + M * N * 2.0) / (t * 1e-6) / 1e9;
      char nm[64];
      std::snprintf(nm, sizeof nm, "%lld,%lld,%lld", (long long)M, (long long)N, (long long)K);
      std::printf("%-22s %10.1f %10.1f %10.1f\n", nm, t, tflops, gbs);
    }
    for (void* p : bufs) api.free_(p);
  }
  // m-grouped contiguous and masked (each call copies its index tensor to the host for validation: one sync per call).
  struct GShape { int64_t g, m, n, k; bool masked; };
  std::vector<GShape> gshapes = {{4, 8192, 4096, 7168, false}, {8, 4096, 7168, 2048, false}, {4, 256, 4096, 7168, true},
                                 {2, 512, 7168, 2048, true}};
  if (quick) gshapes = {{4, 8192, 4096, 7168, false}, {4, 256, 4096, 7168, true}};
  std::printf("%-30s %10s %10s\n", "grouped G,m,N,K", "us", "TFLOPS");
  for (const GShape& gs : gshapes) {
    const int64_t G = gs.g, m = gs.m, N = gs.n, K = gs.k, KB = K / 128, M = G * m;
    void* a = dev_random(api, static_cast<size_t>(M * K), 5, false);
    void* b = dev_random(api, static_cast<size_t>(G * N * K), 6, false);
    void* sa = dev_random(api, static_cast<size_t>(M * KB * 4), 7, true);
    void* sb = dev_random(api, static_cast<size_t>(G * (N / 128) * KB * 4), 8, true);
    void *d = nullptr, *idx = nullptr;
    api.alloc(static_cast<size_t>(M * N * 2), &d);
    std::vector<int32_t> h;
    if (gs.masked) h.assign(static_cast<size_t>(G), static_cast<int32_t>(m));
    else for (int64_t i = 0; i < M; ++i) h.push_back(static_cast<int32_t>(i / m));
    api.alloc(h.size() * 4, &idx);
    api.copy_in(idx, h.data(), h.size() * 4);
    go_tensor ta, tsa, tb, tsb, td, ti;
    if (gs.masked) {
      ta = tensor(a, GO_E4M3, {G, m, K}, {m * K, K, 1});
      tsa = tensor(sa, GO_F32, {G, m, KB}, {m * KB, 1, m});
      td = tensor(d, GO_BF16, {G, m, N}, {m * N, N, 1});
    } else {
      ta = tensor(a, GO_E4M3, {M, K}, {K, 1});
      tsa = tensor(sa, GO_F32, {M, KB}, {1, M});
      td = tensor(d, GO_BF16, {M, N}, {N, 1});
    }
    tb = tensor(b, GO_E4M3, {G, N, K}, {N * K, K, 1});
    tsb = tensor(sb, GO_F32, {G, N / 128, KB}, {(N / 128) * KB, KB, 1});
    ti = tensor(idx, GO_I32, {static_cast<int64_t>(h.size())}, {1});
    auto call = [&]() {
      return gs.masked ? api.masked(&ta, &tsa, &tb, &tsb, &td, &ti, 1, 128, 128, 128, GO_MODEL_SM90_1D2D)
                       : api.mg(&ta, &tsa, &tb, &tsb, &td, &ti, 1, 128, 128, 128, 0, 128, GO_MODEL_SM90_1D2D);
    };
    int st = call();
    api.sync();
    char nm[64];
    std::snprintf(nm, sizeof nm, "%s %lld,%lld,%lld,%lld", gs.masked ? "masked" : "contig", (long long)G, (long long)m,
                  (long long)N, (long long)K);
    if (st != 0) {
      std::printf("%-30s status %d %s\n", nm, st, api.last_error());
    } else {
      std::vector<double> us;
      for (int i = 0; i < 7; ++i) {
        const auto t0 = std::chrono::steady_clock::now();
        for (int j = 0; j < 5; ++j) call();
        api.sync();
        us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / 5);
      }
      const double t = median(us);
      std::printf("%-30s %10.1f %10.1f\n", nm, t, 2.0 * M * N * K / (t * 1e-6) / 1e12);
    }
    for (void* p : {a, b, sa, sb, d, idx}) api.free_(p);
  }
  return 0;
}
