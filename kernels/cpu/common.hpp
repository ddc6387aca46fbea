// Internals shared by the CPU backend's translation units: errors, the allocation registry, tensor views with
// validation, the thread pool, and bit-level helpers. Nothing here may abort: every failure is a go::Error that the
// extern "C" entry points turn into a status code plus a thread-local message.
#pragma once

#include <cstdint>
#include <cstring>
#include <exception>
#include <functional>
#include <initializer_list>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#include "../gemm_oracle.h"

namespace go {

struct Error {
  int32_t status;
  std::string message;
};

[[noreturn]] inline void fail(int32_t status, const std::string& message) { throw Error{status, message}; }

void set_last_error(const std::string& message);

// Runs body and maps every escaping exception to a status code; the C entry points are all `return guard(...)`.
template <class F>
int32_t guard(F&& body) noexcept {
  try {
    body();
    return GO_OK;
  } catch (const Error& e) {
    set_last_error(e.message);
    return e.status;
  } catch (const std::bad_alloc&) {
    set_last_error("out of host memory");
    return GO_ERR_OUT_OF_MEMORY;
  } catch (const std::length_error&) {
    set_last_error("out of host memory (a working buffer would exceed the maximum size)");
    return GO_ERR_OUT_OF_MEMORY;
  } catch (const std::exception& e) {
    set_last_error(std::string("internal error: ") + e.what());
    return GO_ERR_INTERNAL;
  } catch (...) {
    set_last_error("internal error: unknown exception");
    return GO_ERR_INTERNAL;
  }
}

// ---- allocation registry ----------------------------------------------------------------------------------------

// Fails with GO_ERR_OUT_OF_BOUNDS unless [ptr, ptr+bytes) lies in one live allocation; `what` names the argument.
void check_in_allocation(const void* ptr, uint64_t bytes, const std::string& what);

// ---- dtypes -------------------------------------------------------------------------------------------------------

int dtype_size(int32_t dtype);  // 0 for an unknown dtype
const char* dtype_name(int32_t dtype);

// ---- tensor views -----------------------------------------------------------------------------------------------

struct View {
  char* data = nullptr;  // nullptr = absent
  int32_t dtype = -1;
  int32_t ndim = 0;
  int64_t shape[4] = {0, 0, 0, 0};
  int64_t strides[4] = {0, 0, 0, 0};
  int esize = 0;
  std::string name;
  uint64_t lo = 0, hi = 0;  // byte range [lo, hi) touched (hi == lo when empty)

  bool present() const { return data != nullptr; }
  int64_t numel() const {
    int64_t n = 1;
    for (int i = 0; i < ndim; i++) n *= shape[i];
    return n;
  }
  char* ptr1(int64_t i) const { return data + esize * (i * strides[0]); }
  char* ptr2(int64_t i, int64_t j) const { return data + esize * (i * strides[0] + j * strides[1]); }
  char* ptr3(int64_t i, int64_t j, int64_t k) const {
    return data + esize * (i * strides[0] + j * strides[1] + k * strides[2]);
  }
};

// Validates a descriptor: dtype in `dtypes`, ndim == `ndim`, non-negative shape and strides, element alignment, no
// size overflow, extent inside one live allocation. `optional`: a NULL descriptor or NULL data gives an absent view.
View view_of(const go_tensor* t, const char* name, std::initializer_list<int32_t> dtypes, int ndim,
             bool optional = false);

// a·b, failing with GO_ERR_INVALID_ARGUMENT (naming `what`) when it overflows int64.
inline int64_t checked_mul(int64_t a, int64_t b, const char* what) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) throw Error{GO_ERR_INVALID_ARGUMENT, std::string(what) + ": size overflows 64 bits"};
  return r;
}

// Fails unless v.shape == expected (names the argument and both shapes).
void expect_shape(const View& v, std::initializer_list<int64_t> expected);

// Fails when the output's bytes overlap an input's (C may be D itself: same data, shape, strides).
void expect_no_overlap(const View& out, const View& in, bool allow_identical);

// ---- threads ----------------------------------------------------------------------------------------------------

int num_threads();
void set_num_threads(int n);

// Calls body(begin, end) on contiguous chunks of [0, count) on up to num_threads() threads; rethrows the first error.
void parallel_for(int64_t count, const std::function<void(int64_t, int64_t)>& body);

// Calls body(worker, task) for every task in [0, count) on up to num_threads() threads (worker in [0, threads)),
// handing tasks out one at a time from an atomic counter so that uneven tasks still balance; after an error the
// remaining tasks are skipped and the first error is rethrown.
void parallel_tasks(int64_t count, const std::function<void(int, int64_t)>& body);

// ---- bits -------------------------------------------------------------------------------------------------------

inline uint32_t f32_bits(float x) {
  uint32_t u;
  std::memcpy(&u, &x, 4);
  return u;
}
inline float f32_from_bits(uint32_t u) {
  float x;
  std::memcpy(&x, &u, 4);
  return x;
}
inline uint64_t f64_bits(double x) {
  uint64_t u;
  std::memcpy(&u, &x, 8);
  return u;
}
inline float bf16_to_f32(uint16_t b) { return f32_from_bits(uint32_t(b) << 16); }

// fp32 -> bf16 round to nearest even; NaN -> 0x7FFF (the GPU's canonical NaN, numerics.md §1 / deepgemm-ops.md §1).
inline uint16_t bf16_rne(float x) {
  uint32_t u = f32_bits(x);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) return 0x7FFF;
  uint32_t lsb = (u >> 16) & 1u;
  return uint16_t((u + 0x7FFFu + lsb) >> 16);
}

// double -> bf16 with ONE round to nearest even (no detour through fp32, which could round twice).
uint16_t bf16_rne_from_double(double x);

// Reads element bits of a floating dtype as a double (f32, bf16, f16).
double read_float(const char* p, int32_t dtype);

}  // namespace go
