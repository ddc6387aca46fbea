// The fast SM90 FP8 kernel template (kernels/cuda/sm90_fp8_fast_kernel.cuh) compiles, as the CUDA backend's JIT
// compiles it at run time (kernels/cuda/jit.h: nvcc -cubin for sm_90a), in the configurations the heuristic and the
// GPU checks use, without register spills at the default producer / math split of 56 / 224 (at 40 / 232 the producer
// spills a few bytes; an accumulator spill would cost hundreds). Runs wherever nvcc exists (CI has nvcc 13.0 and no GPU); the
// kernels themselves run in tests/gpu/run.sh on an H200.
import assert from "node:assert/strict";
import { nvccTest, runNvcc } from "./_nvcc.ts";
import { fastKernelSource } from "./_fast_kernel_source.ts";

const CUDA_DIR = new URL("../../kernels/cuda/", import.meta.url).pathname;

const CONFIGS: [
  number,
  number,
  number,
  boolean,
  number,
  number,
  number?,
  number?,
  ("tma" | "smem" | "direct")?,
  boolean?,
  boolean?,
  boolean?,
  number?,
  boolean?,
  number?,
  number?,
  number?,
  number?,
][] = [
  [128, 5, 2, true, 7168, 16384], // M = 4096 class, multicast, two accumulator sets (TMA-store epilogue, 128B boxes)
  [128, 5, 1, true, 7168, 16384, 128, 56, "smem"], // the epilogue of 16-byte stores by the math threads
  [176, 4, 2, false, 0, 0], // straddles up to 3 scale blocks, one accumulator set, generic N/K, 32B D boxes
  [112, 6, 1, true, 0, 0, 128, 40], // straddles 2 scale blocks, no multicast, DeepGEMM's 40 / 232 split
  [128, 5, 1, true, 7168, 16384], // the heuristic's M = 4096 class with BLOCK_M 128
  [56, 8, 2, true, 2112, 7168], // small-M class, unswizzled 16-byte D boxes
  [128, 3, 2, false, 7168, 16384, 256], // BLOCK_M 256: two waves per math warpgroup, multicast
  [112, 4, 1, false, 0, 0, 256], // BLOCK_M 256, straddling BLOCK_N
  [64, 12, 1, true, 7168, 16384, 64], // BLOCK_M 64 (one math warpgroup), 12 stages: the M <= 64 class
  [48, 12, 2, true, 0, 0, 64], // BLOCK_M 64, multicast, straddling BLOCK_N
  [128, 4, 1, false, 7168, 16384, 256, 56, "direct"], // BLOCK_M 256 with the register epilogue and a 4th stage
  [64, 12, 1, true, 576, 7168, 64, 56, "tma", true], // split K (raw K-block results to the workspace)
  [128, 3, 1, false, 7168, 16384, 256, 56, "tma", false, true], // acc=halves at BLOCK_M 256 (two n64 groups a wave)
  [144, 5, 2, false, 0, 0, 128, 56, "tma", false, true], // acc=halves, straddling BLOCK_N (n72 groups), generic
  [128, 3, 1, false, 7168, 16384, 256, 56, "tma", false, false, true], // ahead=1 at BLOCK_M 256 (one set)
  [128, 5, 1, true, 7168, 3072, 128, 56, "tma", false, false, true], // ahead=1 with two accumulator sets
  [96, 4, 1, false, 2112, 7168, 256, 56, "tma", false, false, true], // ahead=1, BLOCK_M 256, straddling BLOCK_N 96
  [64, 12, 1, true, 4096, 7168, 64, 56, "tma", false, false, false, 4], // group=4: K blocks issued four at a time
  [64, 10, 1, false, 4096, 7168, 64, 56, "tma", false, false, false, 1, true], // kalt=1: alternate K blocks, BLOCK_M 64
  [48, 10, 2, false, 0, 0, 64, 56, "tma", false, false, false, 1, true], // kalt=1, multicast, straddling, generic
  [64, 12, 1, true, 4096, 7168, 64, 56, "tma", false, false, false, 1, false, 1], // spread=1: three issuing threads
  [112, 5, 2, true, 0, 0, 128, 56, "tma", false, false, false, 1, false, 2], // spread=2 (SFA alone), multicast, 2 SFB slots
  [64, 12, 1, true, 4096, 7168, 64, 56, "tma", false, false, false, 1, false, 1, 64], // dbg=64: the cycle trace, no printf
  [16, 16, 1, true, 2112, 7168, 64, 56, "tma", false, false, false, 1, false, 1, 0, 2], // ktma=2: 2-deep boxes, spread=1
  [32, 8, 1, true, 4096, 7168, 128, 56, "tma", false, false, false, 1, false, 0, 0, 4], // ktma=4, one issuing thread
  [128, 4, 1, false, 0, 0, 256, 56, "tma", false, false, true, 1, false, 0, 0, 2], // ktma=2, BLOCK_M 256, ahead=1, generic
  [16, 16, 1, true, 2112, 7168, 64, 56, "tma", false, false, false, 1, false, 1, 0, 2, 4], // acc=quad, BLOCK_N 16: 52 K blocks looped, 4 in a tail
  [32, 16, 1, true, 4096, 7168, 64, 56, "tma", false, false, false, 1, false, 1, 0, 2, 3], // acc=triple: 54 looped, 2 in a tail
  [16, 10, 1, true, 2112, 7168, 128, 56, "tma", false, false, false, 1, false, 1, 0, 2, 4], // acc=quad, BLOCK_M 128
  [64, 12, 1, true, 32768, 512, 64, 56, "tma", false, false, false, 1, false, 0, 0, 1, 4], // acc=quad, 4 K blocks: no loop
  [16, 16, 1, true, 0, 0, 64, 56, "tma", false, false, false, 1, false, 1, 0, 2, 4], // acc=quad, generic N and K
  [48, 8, 2, true, 24576, 1536, 128, 56, "smem", false, false, false, 1, false, 0, 0, 1, 3], // acc=triple, multicast, 2 slots
];

await nvccTest("fast FP8 kernel JIT source", "go-jit-test-", async (t, dir) => {
  await t.step(
    "compiles for sm_90a without register spills at the default 56 / 224 split (at most 32 bytes at 40 / 232) or serialised wgmmas",
    async () => {
      const results = await Promise.all(CONFIGS.map(async (c, i) => {
        const cu = `${dir}/k${i}.cu`;
        await Deno.writeTextFile(cu, fastKernelSource(...c));
        const out = await runNvcc([
          "-cubin",
          "-O3",
          "-std=c++17",
          "-gencode=arch=compute_90a,code=sm_90a",
          "-Xptxas",
          "-v",
          "-I",
          CUDA_DIR,
          "-o",
          `${dir}/k${i}.cubin`,
          cu,
        ]);
        return {
          c,
          ok: out.ok,
          log: out.log,
        };
      }));
      for (const r of results) {
        assert.ok(r.ok, `config ${r.c.join(",")} failed to compile:\n${r.log}`);
        // ptxas reports where it serialises wgmmas (C7514, C7515) or injects a wait after them (C7517): the
        // overlap of promotion and tensor cores would be gone.
        assert.doesNotMatch(r.log, /C751[4-7]/, `config ${r.c.join(",")}: ptxas serialises the wgmmas:\n${r.log}`);
        const spills = [...r.log.matchAll(/(\d+) bytes spill stores/g)].map((m) => Number(m[1]));
        assert.ok(spills.length > 0, `no ptxas report for ${r.c.join(",")}:\n${r.log}`);
        // DeepGEMM's 40-register producer spills its barrier and descriptor addresses (24 bytes with the
        // TMA-store epilogue, 12 without it, nvcc 13.0); 56 / 224 has room for them.
        const limit = r.c[7] === 40 ? 32 : 0;
        assert.ok(
          Math.max(...spills) <= limit,
          `config ${r.c.join(",")} spills ${Math.max(...spills)} bytes (at most ${limit}):\n${r.log}`,
        );
      }
    },
  );
  await t.step(
    "the dbg=64 cubin names its trace buffer go_fast_trace, unmangled, as the launcher's cuModuleGetGlobal looks it up",
    async () => {
      const i = CONFIGS.findIndex((c) => c[15] === 64);
      const cubin = await Deno.readFile(`${dir}/k${i}.cubin`);
      // The ELF string table holds each symbol name between NULs; C++ linkage would have stored
      // _ZN7go_sm9013go_fast_traceE instead (the H200 answered CUresult 500, not found, on 2026-11-30).
      const strings = new TextDecoder("latin1").decode(cubin);
      assert.ok(strings.includes("\0go_fast_trace\0"), "no symbol go_fast_trace in the dbg=64 cubin");
      assert.ok(!strings.includes("go_fast_traceE"), "the dbg=64 cubin has a mangled go_fast_trace");
    },
  );
});
