/**
 * The instantiation text the CUDA backend's JIT compiles for one configuration of the fast SM90 FP8 kernel
 * (kernels/cuda/sm90_fp8_fast.cu, `jit_source`), for the tests that compile it without a GPU.
 * @module
 */

/** One configuration: FastConfig's template arguments (kernels/cuda/sm90_fp8_fast_config.cuh). */
export interface FastKernelConfig {
  /** BLOCK_M: 64, 128 or 256 (default 128). */
  bm?: number;
  /** BLOCK_N, a multiple of 8 in [8, 256]. */
  bn: number;
  /** Pipeline stages. */
  stages: number;
  /** CTAs per cluster sharing A (1 or 2; default 1). */
  mc?: number;
  /** Accumulator sets (1, 2 or 3; default 2). */
  sets?: number;
  /** N as a compile-time constant (0, the default: run time). */
  n?: number;
  /** K as a compile-time constant (0, the default: run time). */
  k?: number;
  /** Split K: the kernel stores raw K-block results instead of promoting. */
  split?: boolean;
  /** K blocks per TMA copy (1, 2 or 4; default 1). */
  ktma?: number;
  /** Three producer threads issue a stage's copies. */
  spread?: boolean;
  /** Profiling switches (`dbg=N`): the profiling build's `#define`s. */
  debug?: number;
}

/**
 * One configuration's .cu text.
 * @param c the configuration
 * @returns the text
 * @example
 * ```ts
 * import { fastKernelSource } from "./_fast_kernel_source.ts";
 * if (!fastKernelSource({ bn: 128, stages: 5 }).includes("FastConfig<128, 128, 5, 1, 2, 0, 0, false, 1, false>")) {
 *   throw new Error();
 * }
 * ```
 */
export function fastKernelSource(c: FastKernelConfig): string {
  const { bm = 128, bn, stages, mc = 1, sets = 2, n = 0, k = 0, split = false, ktma = 1, spread = false } = c;
  return [
    ...(c.debug ? [`#define GO_FAST_PROFILING 1`, `#define GO_FAST_DBG ${c.debug}`] : []),
    `#include "sm90_fp8_fast_kernel.cuh"`,
    `extern "C" __global__ void __launch_bounds__(go_sm90::kFastThreads, 1)`,
    `go_fp8_fast(const __grid_constant__ CUtensorMap a, const __grid_constant__ CUtensorMap b,`,
    `            const __grid_constant__ CUtensorMap sfa, const __grid_constant__ CUtensorMap d,`,
    `            const go_sm90::FastParams p) {`,
    `  go_sm90::fp8_fast_body<go_sm90::FastConfig<${bm}, ${bn}, ${stages}, ${mc}, ${sets}, ${n}, ${k}, ${split}, ${ktma}, ${spread}>>(a, b, sfa, d, p);`,
    `}`,
    ``,
  ].join("\n");
}
