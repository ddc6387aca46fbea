// Host harness of kernels/cuda/quant_math.cuh (tests/kernels/cuda_quant_math_test.ts): quantizes an fp32 [m, n]
// matrix group by group with the same functions the CUDA kernels call (kernels/cuda/quantize.cu), sequentially.
// stdin: int32 kind, m, n, gran_k, gpu, ue8m0, rule, then m·n fp32 values (row-major).
// stdout: m·n code bytes (FP4: one code per byte, unpacked), then gr·gc fp32 scales (DeepGEMM recipes) or gr·gc
// code bytes (MX: E8M0, NVFP4: E4M3), then (NVFP4) the fp32 per-tensor scale.
#include <cstdio>
#include <vector>

#include "../../kernels/cuda/quant_math.cuh"

int main() {
  int32_t hdr[7];
  if (std::fread(hdr, 4, 7, stdin) != 7) return 2;
  const int kind = hdr[0];
  const int64_t m = hdr[1], n = hdr[2];
  std::vector<float> x(static_cast<size_t>(m * n));
  if (!x.empty() && std::fread(x.data(), 4, x.size(), stdin) != x.size()) return 2;
  const go_quant::Problem p = go_quant::make_problem(kind, m, n, hdr[3], hdr[4] != 0, hdr[5] != 0, hdr[6]);
  float global = 0.0f;
  for (float v : x) global = go_quant::amax_step(global, v);
  std::vector<uint8_t> codes(x.size());
  std::vector<float> sf(static_cast<size_t>(p.gr * p.gc));
  std::vector<uint8_t> sfc(sf.size());
  for (int64_t g = 0; g < p.gr * p.gc; ++g) {
    int64_t r0, r1, c0, c1;
    go_quant::group_bounds(p, g, &r0, &r1, &c0, &c1);
    float amax = 0.0f;
    for (int64_t i = r0; i < r1; ++i)
      for (int64_t j = c0; j < c1; ++j) amax = go_quant::amax_step(amax, x[i * n + j]);
    const go_quant::GroupState st = go_quant::group_state(kind, amax, p.gpu, p.ue8m0, p.rule, global);
    sf[g] = st.sf;
    sfc[g] = st.code;
    for (int64_t i = r0; i < r1; ++i)
      for (int64_t j = c0; j < c1; ++j) codes[i * n + j] = go_quant::element_code(kind, x[i * n + j], st, p.gpu, p.rule);
  }
  std::fwrite(codes.data(), 1, codes.size(), stdout);
  if (kind <= go_quant::kPerTokenCastToFp4) std::fwrite(sf.data(), 4, sf.size(), stdout);
  else std::fwrite(sfc.data(), 1, sfc.size(), stdout);
  if (kind >= go_quant::kNvfp4Te) {
    const float gsf = go_quant::nvfp4_global_sf(kind, global, p.gpu);
    std::fwrite(&gsf, 4, 1, stdout);
  }
  return 0;
}
