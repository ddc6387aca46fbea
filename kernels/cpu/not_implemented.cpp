// ABI entries the CPU backend does not compute yet: they fail cleanly with GO_ERR_UNSUPPORTED.
#include "common.hpp"

using go::fail;
using go::guard;

extern "C" {

int32_t go_fp8_mqa_logits(const go_tensor*, const go_tensor*, const go_tensor*, const go_tensor*, const go_tensor*,
                          const go_tensor*, const go_tensor*, int32_t, int32_t, int32_t) {
  return guard([] { fail(GO_ERR_UNSUPPORTED, "fp8_mqa_logits is not implemented by the CPU backend yet"); });
}

int32_t go_fp8_paged_mqa_logits(const go_tensor*, const go_tensor*, const go_tensor*, const go_tensor*,
                                const go_tensor*, const go_tensor*, int32_t, int32_t) {
  return guard([] { fail(GO_ERR_UNSUPPORTED, "fp8_paged_mqa_logits is not implemented by the CPU backend yet"); });
}

}  // extern "C"
