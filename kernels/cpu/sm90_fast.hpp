// The SM90 FP8 models (sm90_1d2d, sm90_1d1d: per 128-K block four chained Hopper k32 fused dot-adds with 13 kept
// fraction bits and RZ to e8m13, then F = fma32(fl32(sa·sb), P, F)) as integer work on many output columns at once:
// an AVX-512BW kernel, an AVX2 kernel and a portable C++ kernel over the same packed operands, chosen at run time.
// All three compute the model of tensor_core.hpp bit for bit (see sm90_fast.cpp for why the integer form is exact).
#pragma once

#include "gemm_core.hpp"

namespace go {

// The kernels, weakest first.
enum class CpuIsa : int { kPortable = 0, kAvx2 = 1, kAvx512 = 2 };

// The best kernel this CPU (and OS) can run: AVX-512 needs avx512f + avx512bw, AVX2 needs avx2 + fma.
CpuIsa cpu_isa_supported();

// The kernel the next call uses: the supported one, or a weaker one named by the environment variable GO_CPU_ISA
// (portable, avx2, avx512; unset, empty or "auto": the supported one). A stronger one than the CPU has is capped at
// the supported one; any other value fails with GO_ERR_INVALID_ARGUMENT. Read at every GEMM call.
CpuIsa cpu_isa();

// cpu_isa() without failing: false (and *isa = the supported one) when GO_CPU_ISA holds an unknown value.
bool cpu_isa_requested(CpuIsa* isa);

const char* cpu_isa_name(CpuIsa isa);

// Whether run_sm90_fast computes this plan: an sm90_1d2d / sm90_1d1d plan of FP8 (e4m3 / e5m2) operands.
bool sm90_fast_applies(const GemmPlan& plan);

// Computes every element of the plan (zero rows included) on the thread pool.
void run_sm90_fast(const GemmPlan& plan);

}  // namespace go
