/**
 * The instantiation text the CUDA backend's JIT compiles for one configuration of the fast SM90 FP8 kernel
 * (kernels/cuda/sm90_fp8_fast.cu, `jit_source`), for the tests that compile it without a GPU.
 * @module
 */

/**
 * One configuration's .cu text.
 * @param bn BLOCK_N
 * @param stages pipeline stages
 * @param mc CTAs per cluster sharing A (1 or 2)
 * @param doubleAcc two accumulator sets
 * @param n N as a compile-time constant (0: run time)
 * @param k K as a compile-time constant (0: run time)
 * @param bm BLOCK_M (64, 128 or 256)
 * @param producerRegs setmaxnreg of the producer warpgroup: 56 (math 224, the default) or 40 (math 232)
 * @param epi the epilogue (`epi=`): TMA stores (the default), 16-byte stores by the math threads, or from registers
 * @param split split K (`split=N`, N > 1): the kernel stores raw K-block results instead of promoting
 * @param halves `acc=halves`: one accumulator set issued as two groups of BN / 2 columns
 * @param ahead `ahead=1`: the next tile's first K block is issued before this tile's epilogue
 * @param loadGroup `group=N` (N > 1): the producer issues N consecutive K blocks together (a `#define`, as the JIT writes it)
 * @param kalt `kalt=1` (BLOCK_M 64): the two math warpgroups take alternate K blocks
 * @param spread `spread=1|2`: three or four producer threads issue a stage's copies (a `#define`, as the JIT writes it)
 * @param debug `dbg=N`: the profiling switches (a `#define`; nonzero builds give wrong results)
 * @param ktma `ktma=N` (N > 1): TMA boxes N K blocks deep, each filling N stages (a `#define`, as the JIT writes it)
 * @param accSets with `doubleAcc`, `acc=triple|quad` (3 or 4): that many accumulator sets in turn (a `#define`)
 * @returns the text
 * @example
 * ```ts
 * import { fastKernelSource } from "./_fast_kernel_source.ts";
 * if (!fastKernelSource(128, 5, 1, true, 0, 0).includes("FastConfig<128, 5, 1, true, 0, 0, 4, false, 128, go_sm90::kEpiTma, false, false, false, false>")) {
 *   throw new Error();
 * }
 * ```
 */
export function fastKernelSource(
  bn: number,
  stages: number,
  mc: number,
  doubleAcc: boolean,
  n: number,
  k: number,
  bm = 128,
  producerRegs = 56,
  epi: "tma" | "smem" | "direct" = "tma",
  split = false,
  halves = false,
  ahead = false,
  loadGroup = 1,
  kalt = false,
  spread = 0,
  debug = 0,
  ktma = 1,
  accSets = 2,
): string {
  const epiName = { tma: "kEpiTma", smem: "kEpiSmem", direct: "kEpiDirect" }[epi];
  return [
    `#define GO_FAST_PRODUCER_REGS ${producerRegs}`,
    `#define GO_FAST_MATH_REGS ${producerRegs === 56 ? 224 : 232}`,
    ...(loadGroup > 1 ? [`#define GO_FAST_LOAD_GROUP ${loadGroup}`] : []),
    ...(debug ? [`#define GO_FAST_DBG ${debug}`] : []),
    ...(spread ? [`#define GO_FAST_SPREAD ${spread}`] : []),
    ...(ktma > 1 ? [`#define GO_FAST_KTMA ${ktma}`] : []),
    ...(doubleAcc && accSets > 2 ? [`#define GO_FAST_ACC_SETS ${accSets}`] : []),
    `#include "sm90_fp8_fast_kernel.cuh"`,
    `extern "C" __global__ void __launch_bounds__(go_sm90::kFastThreads, 1)`,
    `go_fp8_fast(const __grid_constant__ CUtensorMap a, const __grid_constant__ CUtensorMap b,`,
    `            const __grid_constant__ CUtensorMap sfa, const __grid_constant__ CUtensorMap d,`,
    `            const go_sm90::FastParams p) {`,
    `  go_sm90::fp8_fast_body<go_sm90::FastConfig<${bn}, ${stages}, ${mc}, ${doubleAcc}, ${n}, ${k}, 4, false, ${bm}, go_sm90::${epiName}, ${split}, ${halves}, ${ahead}, ${kalt}>>(a, b, sfa, d, p);`,
    `}`,
    ``,
  ].join("\n");
}
