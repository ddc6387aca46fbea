// The index tensors of grouped GEMMs (grouped_layout, masked_m), checked on the device for the fast FP8 kernels, so
// that a call never waits for the GPU to copy them to the host. A contiguous layout: one small kernel reads it, writes
// what the call's GEMM kernels need (is the layout valid, do its groups fit 256-row tiles) into a per-device gate
// block, and keeps the first error it finds until the host looks (after the call's synchronisation, or go_synchronize
// under GO_CUDA_ASYNC=1); the GEMM kernels read the gate first and launch no work on a bad layout (D is left as it was)
// or when they were launched for the other tile height (sm90_fp8_fast.cu launches a BLOCK_M 256 kernel and a BLOCK_M
// 128 one where the host cannot know which fits, and one of them returns at once). masked_m: no gate kernel; the GEMM
// kernel checks its G counts itself by the same rule and keeps the first error in the same block (fast_masked_bad).
#pragma once
#include <cuda_runtime.h>

#include <cstdint>
#include <string>

namespace go_sm90 {

/// What the gate checks: a classic contiguous layout (M entries: -1 or a group), a psum layout (G non-decreasing
/// ends <= M), or masked_m (G counts in [0, Mmax]).
enum GateKind : int { kGateNone = 0, kGateClassic = 1, kGatePsum = 2, kGateMasked = 3 };

/// Slots of the gate block (int32 each). kGateBad, kGateFits256: the current call's layout; the kGateErr* slots: the
/// first error since the host last looked (kGateErrKind 0: none).
enum GateSlot : int {
  kGateBad = 0,
  kGateFits256 = 1,
  kGateErrKind = 2,
  kGateErrIndex = 3,
  kGateErrValue = 4,
  kGateErrBound = 5,
  kGateSlots = 8
};

/// Which GEMM kernels of a call run (FastParams::gate_want): every one if the layout is valid, or only the one for
/// groups that fit 256-row tiles, or only the one for groups that do not.
enum GateWant : int { kWantValid = 0, kWantFits256 = 1, kWantNot256 = 2 };

/// Whether 256-row tiles (BLOCK_M 256) can run a contiguous layout: classic, no 256-row block holds rows of two
/// groups, or group rows after padding rows (-1); psum, every group starts (its previous end aligned up to mk) on a
/// multiple of 256. The gate kernel and the host's check of the simple path share these two rules.
__host__ __device__ inline bool fits256_classic(int32_t at_m0, int32_t at_m0_plus_128) {
  return at_m0_plus_128 == at_m0 || at_m0_plus_128 == -1;
}
__host__ __device__ inline bool fits256_psum(int64_t previous_end, int mk) { return (previous_end + mk - 1) / mk * mk % 256 == 0; }

/// Whether entry x of an index tensor of this kind breaks its rule: classic, -1 or a group in [0, G); psum, an end
/// at least the previous one (`previous`: the entry before, 0 for the first) and at most M; masked, a count in
/// [0, M] (M: Mmax). The gate kernel and the host check of the simple kernels apply the same rule.
__host__ __device__ inline bool gate_entry_bad(int kind, int64_t x, int64_t previous, int64_t M, int64_t G) {
  if (kind == kGateClassic) return x < -1 || x >= G;
  if (kind == kGatePsum) return x < previous || x > M;
  return x < 0 || x > M;
}

/// The bound a bad entry of this kind is reported against: G (classic) or M (psum; masked: Mmax).
__host__ __device__ inline int64_t gate_bound(int kind, int64_t M, int64_t G) { return kind == kGateClassic ? G : M; }

/// The error for bad entry `index` = `value`, worded alike by both checks, e.g. "grouped_layout[130] = 5 is neither
/// -1 nor a group in [0, 2)".
inline std::string gate_message(int kind, int64_t index, int64_t value, int64_t bound) {
  const std::string at = (kind == kGateMasked ? "masked_m[" : "grouped_layout[") + std::to_string(index) + "] = " +
                         std::to_string(value);
  if (kind == kGateClassic) return at + " is neither -1 nor a group in [0, " + std::to_string(bound) + ")";
  if (kind == kGatePsum) return at + ": psum ends must be non-decreasing and <= M = " + std::to_string(bound);
  return at + " is outside [0, " + std::to_string(bound) + "]";
}

/// Launches the check of `v` (n entries) on `stream` into this device's gate block, which *gate receives. M: rows
/// (classic, psum) or Mmax (masked); G: groups. With `pdl` the check is launched with programmatic stream
/// serialization: it may be scheduled while the kernel before it still runs (it waits for that kernel before reading
/// v or writing the block), and it lets the GEMM kernel after it be scheduled at once.
cudaError_t launch_gate_check(GateKind kind, const int32_t* v, int64_t n, int64_t M, int64_t G, int mk, bool pdl,
                              cudaStream_t stream, int32_t** gate);

/// This device's gate block, into *gate, for a GEMM kernel that checks its index tensor itself (masked_m: the fast
/// kernel reads its G counts anyway, fp8_fast_body), so that the host looks at the block after the call. Launches
/// nothing.
cudaError_t gate_block(int32_t** gate);

/// The first error the gate kernels of this device found since the last look, as the host check of the simple path
/// words it ("grouped_layout[7] = 9 is neither -1 nor a group in [0, 4)"); empty if none. The device must have
/// finished the calls (the caller synchronises). Clears the error.
cudaError_t gate_take_error(std::string* msg);

}  // namespace go_sm90
