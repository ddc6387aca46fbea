// A host-only kernel library for the tests (tests/ffi/quant_ops_test.ts): the required gemm_oracle.h entries on
// host memory, and go_quantize running the CUDA backend's own quantizer code on the host: the argument rules of
// kernels/cuda/quantize_plan.cu and the group body of kernels/cuda/quantize_group.cuh, one group after another (the
// CUDA kernel splits each group over a CTA; the arithmetic is the same functions). So the FFI wrapper, verify's
// quantizer rows and the packing of codes and scales are checked against the reference without a GPU.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "../../kernels/cuda/quantize_group.cuh"

namespace {
thread_local std::string t_err;
int32_t fail(int32_t st, const char* m) {
  t_err = m;
  return st;
}
}  // namespace

extern "C" {

int32_t go_abi_version(void) { return GO_ABI_VERSION; }
const char* go_last_error(void) { return t_err.c_str(); }

int32_t go_backend_info(char* buf, uint64_t cap, uint64_t* needed) {
  static const char j[] =
      "{\"name\":\"quant-host\",\"abi\":1,\"device\":\"host\",\"arch\":\"x86_64\",\"models\":{\"quantize\":\"gpu\"},"
      "\"supported_models\":{\"quantize\":[\"gpu\",\"cpu\"]}}";
  if (needed) *needed = sizeof j;
  if (buf == nullptr && cap == 0) return GO_OK;
  if (buf == nullptr || cap < sizeof j) return fail(GO_ERR_INVALID_ARGUMENT, "go_backend_info: buffer too small");
  std::memcpy(buf, j, sizeof j);
  return GO_OK;
}

int32_t go_device_count(int32_t* c) {
  if (!c) return fail(GO_ERR_INVALID_ARGUMENT, "count is null");
  *c = 1;
  return GO_OK;
}
int32_t go_set_device(int32_t d) { return d == 0 ? GO_OK : fail(GO_ERR_INVALID_ARGUMENT, "one device"); }
int32_t go_alloc(uint64_t bytes, void** out) {
  if (!out || bytes == 0) return fail(GO_ERR_INVALID_ARGUMENT, "go_alloc: bad arguments");
  *out = std::calloc(1, bytes + 256);
  return *out ? GO_OK : fail(GO_ERR_OUT_OF_MEMORY, "go_alloc: out of memory");
}
int32_t go_free(void* p) {
  std::free(p);
  return GO_OK;
}
int32_t go_copy_in(void* d, const void* s, uint64_t b) {
  if (b && (!d || !s)) return fail(GO_ERR_INVALID_ARGUMENT, "go_copy_in: null pointer");
  if (b) std::memcpy(d, s, b);
  return GO_OK;
}
int32_t go_copy_out(void* d, const void* s, uint64_t b) {
  if (b && (!d || !s)) return fail(GO_ERR_INVALID_ARGUMENT, "go_copy_out: null pointer");
  if (b) std::memcpy(d, s, b);
  return GO_OK;
}
int32_t go_synchronize(void) { return GO_OK; }

int32_t go_quantize(int32_t kind, const go_tensor* x, const go_tensor* q, const go_tensor* sf, const go_tensor* gsf,
                    int32_t gran_k, int32_t flags, int32_t scale_rule, int32_t model) {
  go_quant::QuantParams p;
  char msg[512] = "";
  const int32_t st = go_quant::plan_quantize(kind, x, q, sf, gsf, gran_k, flags, scale_rule, model, &p, msg, sizeof msg);
  if (st != GO_OK) return fail(st, msg);
  go_quant::quantize_host(p);
  return GO_OK;
}

// The other optional entries, as stubs: the FFI wrappers' argument checks run before any native call, and a
// well-formed call reaches the library and comes back as its status and message.
int32_t go_cublaslt_gemm(const go_tensor*, const go_tensor*, const go_tensor*, const go_tensor*, int32_t, char* algo,
                         int64_t len, int32_t) {
  if (algo && len > 0) algo[0] = '\0';
  return fail(GO_ERR_UNSUPPORTED, "cublaslt_gemm: the host library has no cuBLASLt");
}
int32_t go_get_paged_mqa_logits_metadata(const go_tensor*, int32_t, int32_t, const go_tensor*, int32_t) {
  return fail(GO_ERR_UNSUPPORTED, "get_paged_mqa_logits_metadata: the host library has no schedule");
}

}  // extern "C"
