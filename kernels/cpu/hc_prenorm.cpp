// tf32_hc_prenorm_gemm (deepgemm-ops.md §7): placeholder until the TF32 model lands.
#include "common.hpp"

using go::fail;
using go::guard;

extern "C" int32_t go_tf32_hc_prenorm_gemm(const go_tensor*, const go_tensor*, const go_tensor*, const go_tensor*,
                                           int32_t, int32_t, int32_t) {
  return guard([] { fail(GO_ERR_UNSUPPORTED, "tf32_hc_prenorm_gemm is not implemented by the CPU backend yet"); });
}
