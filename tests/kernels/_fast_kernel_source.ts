/**
 * The instantiation text the CUDA backend's JIT compiles for one configuration of the fast SM90 FP8 kernel
 * (kernels/cuda/sm90_fp8_fast.cu, `jit_source`), for the tests that compile it without a GPU, and its compile with
 * ptxas's report. Run as a program, it prints that report for one configuration (the register spills, ptxas's
 * warnings and the kernel's instruction count that docs/performance-history.md and the validity rules quote, a hash of
 * its machine code, so that a change meant to leave the kernel as it was can be shown to, and where its instructions
 * lie: bench/sass_layout.ts), from kernels/cuda or from a copy of it
 * (`--cuda-dir`, e.g. a variant under .ab/ or `git archive` of an earlier commit), and keeps the cubin where
 * `--cubin` says (for bench/sass_control.ts, which reads the FFMAs' scheduling bits):
 *
 *     deno run -A tests/kernels/_fast_kernel_source.ts bm=128 bn=208 stages=3 sets=1
 *         [n=N k=K mc=2 ktma=2 spread=1 mode=0 sfa=1] [--cuda-dir=.ab/short/kernels/cuda] [--cubin=/tmp/k.cubin]
 *
 * @module
 */
import { describeLayout, elfSections, sassLayout } from "../../bench/sass_layout.ts";
import { runNvcc } from "./_nvcc.ts";

const CUDA_DIR = new URL("../../kernels/cuda/", import.meta.url).pathname;
/** FastConfig takes SFA_TMA_ after MODE_: a configuration cannot name the one without the other. */
const SFA_NEEDS_MODE = "sfa= is compiled in only next to mode=";

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
  /** The call's FastMode as a compile-time constant (0 dense, 1 classic contiguous, 2 psum, 3 masked; -1, the
   * default: run time). */
  mode?: number;
  /** Whether SFA comes by TMA (1) or by the producer's copies (0), compiled in next to `mode` (-1, the default: run
   * time; needs `mode`). */
  sfa?: number;
  /** Profiling switches (`dbg=N`): the profiling build's `#define`s. */
  debug?: number;
  /** FastParams passed `__grid_constant__` (`gridparams=1`), as a copy of kernels/ whose JIT text passes it so does:
   * where device code takes the block's address for a call that is not inlined, a plain parameter is copied to local
   * memory first (128 x 32 ktma=2 with the SFB loader out of line: 34 local stores at the kernel's top; docs/performance-
   * history.md, fortieth round). Unset, compileFastKernel passes it as the kernel tree's JIT text does
   * (jitGridParams). */
  gridParams?: boolean;
}

/** The 128 x 32 ktma=2 kernel that the heuristic gives dense 128 x 4096 x 7168 (the small-M prologue's figures in
 * docs/performance-history.md are read from it), which the SASS tests compile. */
export const SMALL_M_KERNEL: FastKernelConfig = {
  bm: 128,
  bn: 32,
  stages: 10,
  sets: 2,
  n: 4096,
  k: 7168,
  ktma: 2,
  spread: true,
  mode: 0,
  sfa: 1,
};

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
  const {
    bm = 128,
    bn,
    stages,
    mc = 1,
    sets = 2,
    n = 0,
    k = 0,
    split = false,
    ktma = 1,
    spread = false,
    mode = -1,
    sfa = -1,
    gridParams = false,
  } = c;
  if (sfa >= 0 && mode < 0) throw new Error(SFA_NEEDS_MODE);
  return [
    ...(c.debug ? [`#define GO_FAST_PROFILING 1`, `#define GO_FAST_DBG ${c.debug}`] : []),
    `#include "sm90_fp8_fast_kernel.cuh"`,
    `extern "C" __global__ void __launch_bounds__(go_sm90::kFastThreads, 1)`,
    `go_fp8_fast(const __grid_constant__ CUtensorMap a, const __grid_constant__ CUtensorMap b,`,
    `            const __grid_constant__ CUtensorMap sfa, const __grid_constant__ CUtensorMap d,`,
    `            const ${gridParams ? "__grid_constant__ " : ""}go_sm90::FastParams p) {`,
    `  go_sm90::fp8_fast_body<go_sm90::FastConfig<${bm}, ${bn}, ${stages}, ${mc}, ${sets}, ${n}, ${k}, ${split}, ${ktma}, ${spread}${
      mode >= 0 ? `, ${mode}` : ""
    }${sfa >= 0 ? `, ${sfa}` : ""}>>(a, b, sfa, d, p);`,
    `}`,
    ``,
  ].join("\n");
}

/** What ptxas said of one compiled configuration. */
export interface FastKernelCompile {
  ok: boolean;
  /** Everything nvcc printed (ptxas -v's register and spill lines among it). */
  log: string;
  /** The largest "bytes spill stores" ptxas reported (undefined: no report). */
  spillStores?: number;
  /** SASS instructions of the kernel: its `.text.go_fp8_fast` section's bytes / 16 (undefined: no cubin). */
  instructions?: number;
  /** SHA-256 of that section, hex: equal for two kernel trees that compile to the same machine code. */
  textSha256?: string;
}

/**
 * The size in bytes of the ELF64 section called `name` (undefined: none), read from the section headers.
 * @param elf the file's bytes
 * @param name the section's name
 * @returns its size
 * @example
 * ```ts
 * import { elfSectionSize } from "./_fast_kernel_source.ts";
 * if (elfSectionSize(new Uint8Array(64), ".text") !== undefined) throw new Error();
 * ```
 */
export function elfSectionSize(elf: Uint8Array, name: string): number | undefined {
  return elfSections(elf).find((s) => s.name === name)?.bytes.length;
}

/**
 * Whether the kernel tree's JIT text (`sm90_fp8_fast.cu` in `cudaDir`) passes FastParams `__grid_constant__`, as a
 * variant that calls device code out of line with the block's address does (bench/variants/ldni.patch).
 * @param cudaDir kernels/cuda or a copy of it
 * @returns true where it does; false where it passes a plain parameter or has no such file
 * @example
 * ```ts
 * import { jitGridParams } from "./_fast_kernel_source.ts";
 * if (jitGridParams("/nonexistent")) throw new Error();
 * ```
 */
export function jitGridParams(cudaDir: string): boolean {
  try {
    return Deno.readTextFileSync(`${cudaDir}/sm90_fp8_fast.cu`).includes("__grid_constant__ go_sm90::FastParams");
  } catch {
    return false;
  }
}

/**
 * Compiles one configuration as the JIT does (nvcc -cubin for sm_90a, -O3) with ptxas -v, into `cubin`.
 * @param c the configuration
 * @param cubin where the cubin goes (its .cu is written beside it)
 * @param cudaDir the kernel headers' directory (kernels/cuda, or a copy of it), whose JIT text also says how the
 *   parameter block is passed where `c.gridParams` does not
 * @returns whether it compiled, the log, the spill stores and the kernel's instruction count
 */
export async function compileFastKernel(
  c: FastKernelConfig,
  cubin: string,
  cudaDir = CUDA_DIR,
): Promise<FastKernelCompile> {
  const cu = cubin.replace(/\.cubin$/, "") + ".cu";
  await Deno.writeTextFile(cu, fastKernelSource({ ...c, gridParams: c.gridParams ?? jitGridParams(cudaDir) }));
  const args = ["-cubin", "-O3", "-std=c++17", "-gencode=arch=compute_90a,code=sm_90a", "-Xptxas", "-v"];
  const { ok, log } = await runNvcc([...args, "-I", cudaDir, "-o", cubin, cu]);
  const spills = [...log.matchAll(/(\d+) bytes spill stores/g)].map((m) => Number(m[1]));
  const text = ok ? elfSections(await Deno.readFile(cubin)).find((s) => s.name === ".text.go_fp8_fast") : undefined;
  const sha = text ? new Uint8Array(await crypto.subtle.digest("SHA-256", new Uint8Array(text.bytes))) : undefined;
  return {
    ok,
    log,
    ...(spills.length ? { spillStores: Math.max(...spills) } : {}),
    ...(text !== undefined ? { instructions: text.bytes.length / 16 } : {}),
    ...(sha ? { textSha256: [...sha].map((b) => b.toString(16).padStart(2, "0")).join("") } : {}),
  };
}

/** Parses "bm=128 bn=208 stages=3 ..." (every field of FastKernelConfig; dbg=N: debug, gridparams=0|1: gridParams) into
 * a configuration. */
export function parseFastKernelConfig(args: string[]): FastKernelConfig {
  const c: Record<string, number | boolean> = {};
  for (const a of args) {
    const m = a.match(/^(bm|bn|stages|mc|sets|n|k|ktma|split|spread|mode|sfa|dbg|gridparams)=(\d+)$/);
    if (!m) {
      throw new Error(
        `${a}: expected bm=, bn=, stages=, mc=, sets=, n=, k=, ktma=, split=0|1, spread=0|1, mode=0..3, sfa=0|1, ` +
          "gridparams=0|1 or dbg=",
      );
    }
    const key = m[1] === "dbg" ? "debug" : m[1] === "gridparams" ? "gridParams" : m[1];
    c[key] = ["split", "spread", "gridparams"].includes(m[1]) ? m[2] === "1" : Number(m[2]);
  }
  if (typeof c.bn !== "number" || typeof c.stages !== "number") throw new Error("bn= and stages= are needed");
  if (c.sfa !== undefined && c.mode === undefined) throw new Error(SFA_NEEDS_MODE);
  return c as unknown as FastKernelConfig;
}

if (import.meta.main) {
  let config: FastKernelConfig;
  const dirArg = Deno.args.find((a) => a.startsWith("--cuda-dir="));
  const cudaDir = dirArg ? dirArg.slice("--cuda-dir=".length) : CUDA_DIR;
  const cubinArg = Deno.args.find((a) => a.startsWith("--cubin="));
  try {
    if (cubinArg === "--cubin=") throw new Error("--cubin= needs a path");
    config = parseFastKernelConfig(Deno.args.filter((a) => a !== dirArg && a !== cubinArg));
  } catch (e) {
    console.error(
      `usage: deno run -A tests/kernels/_fast_kernel_source.ts bm=128 bn=208 stages=3 sets=1 ...: ${
        e instanceof Error ? e.message : e
      }`,
    );
    Deno.exit(2);
  }
  // The parameter block as the tree's JIT text passes it, shown in the report's configuration where it is the grid
  // constant.
  if (config.gridParams === undefined && jitGridParams(cudaDir)) config.gridParams = true;
  const dir = await Deno.makeTempDir({ prefix: "go-fast-kernel-" });
  try {
    const r = await compileFastKernel(config, `${dir}/k.cubin`, cudaDir);
    console.log(r.log.split("\n").filter((l) => /registers|spill|error|warning/.test(l)).join("\n"));
    console.log(
      `${JSON.stringify(config)}: ${
        r.ok
          ? `${r.spillStores ?? "?"} bytes spill stores, ${r.instructions ?? "?"} instructions, .text sha256 ${
            r.textSha256 ?? "?"
          }`
          : "did not compile"
      }`,
    );
    if (!r.ok) Deno.exit(1);
    for (const l of sassLayout(await Deno.readFile(`${dir}/k.cubin`))) console.log(describeLayout(l));
    if (cubinArg) await Deno.copyFile(`${dir}/k.cubin`, cubinArg.slice("--cubin=".length));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}
