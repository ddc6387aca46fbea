// The fast SM90 FP8 kernel template (kernels/cuda/sm90_fp8_fast_kernel.cuh) compiles, as the CUDA backend's JIT
// compiles it at run time (kernels/cuda/jit.h: nvcc -cubin for sm_90a), in the configurations the heuristic and the
// GPU checks use, without register spills at the producer / math split of 64 / 216 (an accumulator spill would cost
// hundreds of bytes) or serialised wgmmas, each with its SASS instruction count; a normal build refuses the profiling
// switches. Shape-class kernels have the call's mode compiled in (mode: 0 dense, 1-3 grouped) and how SFA arrives
// (sfa: 1 by TMA, 0 copied), and so do profiling kernels of one or two accumulator sets; generic kernels and profiling
// kernels of three sets read both at run time (sm90_fp8_fast.cu's jit_source says why). Runs wherever nvcc exists
// (CI has nvcc 13.0 and no GPU); the kernels themselves run in tests/gpu/run.sh on an H200.
import assert from "node:assert/strict";
import { nvccTest, runNvcc } from "./_nvcc.ts";
import {
  compileFastKernel,
  type FastKernelConfig,
  fastKernelSource,
  parseFastKernelConfig,
} from "./_fast_kernel_source.ts";

const CUDA_DIR = new URL("../../kernels/cuda/", import.meta.url).pathname;

/** Each configuration and what it covers. */
const CONFIGS: [FastKernelConfig, string][] = [
  [
    { bn: 128, stages: 5, mc: 2, n: 7168, k: 16384, mode: 0, sfa: 1 },
    "M = 4096 class, multicast, two accumulator sets, 128B D boxes",
  ],
  [{ bn: 176, stages: 4, mc: 2, sets: 1 }, "straddles up to 3 scale blocks, one accumulator set, generic N and K"],
  [{ bn: 112, stages: 6 }, "straddles 2 scale blocks, no multicast"],
  [{ bn: 128, stages: 5, n: 7168, k: 16384, mode: 0, sfa: 1 }, "the M = 4096 class at BLOCK_M 128"],
  [{ bn: 56, stages: 8, mc: 2, n: 2112, k: 7168, mode: 0, sfa: 1 }, "small-M class, unswizzled 16-byte D boxes"],
  [
    { bm: 256, bn: 128, stages: 3, mc: 2, sets: 1, n: 7168, k: 16384, mode: 0, sfa: 1 },
    "BLOCK_M 256: two waves, multicast",
  ],
  // 3 stages, the most beside a staging buffer a wave (4 would stage by box, which fast_config_invalid refuses at 112).
  [{ bm: 256, bn: 112, stages: 3, sets: 1 }, "BLOCK_M 256, straddling BLOCK_N"],
  [{ bm: 64, bn: 64, stages: 12, n: 7168, k: 16384, mode: 0, sfa: 1 }, "BLOCK_M 64 (one math warpgroup), 12 stages"],
  [{ bm: 64, bn: 48, stages: 12, mc: 2 }, "BLOCK_M 64, multicast, straddling BLOCK_N"],
  [
    { bm: 64, bn: 64, stages: 12, n: 576, k: 7168, split: true, mode: 0, sfa: 1 },
    "split K (raw K-block results to the workspace)",
  ],
  [{ bm: 64, bn: 64, stages: 12, n: 4096, k: 7168, spread: true, mode: 0, sfa: 1 }, "spread: two issuing threads"],
  [{ bn: 112, stages: 5, mc: 2, spread: true }, "spread, multicast, 2 SFB slots, generic"],
  [
    { bm: 64, bn: 64, stages: 12, n: 4096, k: 7168, spread: true, debug: 64, mode: 0, sfa: 1 },
    "profiling build: the cycle trace, two sets (mode and SFA's path compiled in)",
  ],
  [
    { bm: 128, bn: 32, stages: 10, n: 4096, k: 7168, spread: true, ktma: 2, debug: 128, mode: 0, sfa: 1 },
    "profiling build: the light trace of the heuristic's 128 x 32 class",
  ],
  [
    { bm: 64, bn: 16, stages: 20, n: 576, k: 7168, spread: true, ktma: 4, sets: 3, debug: 128 },
    "profiling build: the light trace (the first 4 iterations and the tiles), three sets: mode read at run time",
  ],
  [
    { bm: 64, bn: 16, stages: 16, n: 2112, k: 7168, spread: true, ktma: 2, mode: 0, sfa: 1 },
    "ktma=2: 2-deep boxes, spread",
  ],
  [{ bn: 32, stages: 8, n: 4096, k: 7168, ktma: 4, mode: 0, sfa: 1 }, "ktma=4, one issuing thread"],
  [{ bm: 256, bn: 128, stages: 4, sets: 1, ktma: 2 }, "ktma=2, BLOCK_M 256, generic"],
  [
    { bm: 64, bn: 16, stages: 20, n: 2112, k: 7168, spread: true, ktma: 4, sets: 3, mode: 0, sfa: 1 },
    "the heuristic's 64 x 16 class: 20 stages, ktma=4 with three sets, 56 K blocks: 54 looped, 2 in a tail",
  ],
  [
    { bm: 64, bn: 32, stages: 16, n: 4096, k: 7168, spread: true, ktma: 2, sets: 3, mode: 0, sfa: 1 },
    "three sets at BLOCK_N 32",
  ],
  [
    { bn: 16, stages: 10, n: 2112, k: 7168, spread: true, ktma: 2, sets: 3, mode: 0, sfa: 1 },
    "three sets at BLOCK_M 128",
  ],
  [
    { bm: 64, bn: 64, stages: 12, n: 32768, k: 512, sets: 3, mode: 0, sfa: 1 },
    "three sets, 4 K blocks: no loop, a tail of 4",
  ],
  [{ bm: 64, bn: 16, stages: 16, spread: true, ktma: 2, sets: 3 }, "three sets, generic N and K"],
  [{ bn: 48, stages: 8, mc: 2, n: 24576, k: 1536, sets: 3, mode: 0, sfa: 1 }, "three sets, multicast, 2 SFB slots"],
  [
    { bm: 256, bn: 96, stages: 3, sets: 1, n: 2112, k: 7168, mode: 0, sfa: 1 },
    "BLOCK_M 256 at 4096 x 2112: 4 straddle points",
  ],
  [
    { bm: 256, bn: 80, stages: 4, mc: 2, sets: 1, n: 576, k: 7168, mode: 0, sfa: 1 },
    "BLOCK_M 256 at 4096 x 576: 8 straddle points (no idle-last-wave variant: with it ptxas spilled 258 bytes)",
  ],
  [
    { bm: 256, bn: 128, stages: 4, mc: 2, sets: 1, n: 7168, k: 16384, mode: 0, sfa: 1 },
    "4 stages of BLOCK_M 256, the epilogue staged one box at a time, the K loop unrolled 8 times (opaque index)",
  ],
  [
    { bm: 256, bn: 128, stages: 4, mc: 2, sets: 1, n: 7168, k: 3072, mode: 1, sfa: 1 },
    "4 stages of BLOCK_M 256, contiguous class (the heuristic's from 24 K blocks with multicast)",
  ],
  [
    { bn: 192, stages: 4, sets: 1, n: 2112, k: 7168, mode: 0, sfa: 1 },
    "BLOCK_N 192 (DeepGEMM's tile at 4096 x 2112), scales read at promotion",
  ],
  [{ bn: 200, stages: 3, sets: 1 }, "BLOCK_N 200, the widest the validity rules allow (208 spills), generic"],
  [
    { bm: 256, bn: 128, stages: 3, mc: 2, sets: 1, n: 7168, k: 7168, mode: 3, sfa: 1 },
    "masked class (mode 3 compiled in)",
  ],
  [{ bn: 128, stages: 5, n: 4096, k: 7168, mode: 1, sfa: 1 }, "contiguous class, a group per row (mode 1 compiled in)"],
  [
    { bn: 128, stages: 5, n: 4096, k: 7168, mode: 2, sfa: 1 },
    "contiguous class, groups by prefix sums (mode 2 compiled in)",
  ],
  [
    { bm: 64, bn: 48, stages: 12, mc: 2, n: 2112, k: 7168, mode: 0, sfa: 0 },
    "SFA copied by the producer warps, compiled in (sfa=copy, or a layout TMA cannot read)",
  ],
  [{ bm: 256, bn: 128, stages: 3, sets: 1, n: 7168, k: 7168, mode: 3, sfa: 0 }, "masked class with SFA copied"],
];

/** A configuration's description and template arguments, for messages. */
const name = ([c, what]: [FastKernelConfig, string]) => `${what} (${JSON.stringify(c)})`;

await nvccTest("fast FP8 kernel JIT source", "go-jit-test-", async (t, dir) => {
  await t.step(
    "compiles for sm_90a without register spills at the 64 / 216 split or serialised wgmmas",
    async () => {
      const results = await Promise.all(
        CONFIGS.map(async (c, i) => ({ c, ...await compileFastKernel(c[0], `${dir}/k${i}.cubin`) })),
      );
      for (const r of results) {
        assert.ok(r.ok, `${name(r.c)} failed to compile:\n${r.log}`);
        // ptxas reports where it serialises wgmmas (C7514, C7515) or injects a wait after them (C7517): the
        // overlap of promotion and tensor cores would be gone.
        assert.doesNotMatch(r.log, /C751[4-7]/, `${name(r.c)}: ptxas serialises the wgmmas:\n${r.log}`);
        assert.ok(r.spillStores !== undefined, `no ptxas report for ${name(r.c)}:\n${r.log}`);
        // DeepGEMM's 40-register producer spilled its barrier and descriptor addresses (8 to 24 bytes, nvcc 13.0);
        // 64 / 216 has room for them and for the SFB loader warp.
        assert.equal(r.spillStores, 0, `${name(r.c)} spills:\n${r.log}`);
        // The kernel's size, read from the cubin's .text section, which the history quotes (at 256 x 128, K = 512, 3800
        // instructions against DeepGEMM's 1448).
        assert.ok(Number.isInteger(r.instructions) && r.instructions! > 500, `${name(r.c)}: ${r.instructions}`);
        assert.match(r.textSha256 ?? "", /^[0-9a-f]{64}$/, `${name(r.c)}: no hash of its machine code`);
      }
      // The machine code's hash (which shows a refactor left a kernel as it was) tells these configurations apart.
      assert.equal(new Set(results.map((r) => r.textSha256)).size, results.length, "two configurations hash alike");
    },
  );
  await t.step(
    "the dbg=64 cubin names its trace buffer go_fast_trace, unmangled, as the launcher's cuModuleGetGlobal looks it up",
    async () => {
      const i = CONFIGS.findIndex((c) => c[0].debug === 64);
      const cubin = await Deno.readFile(`${dir}/k${i}.cubin`);
      // The ELF string table holds each symbol name between NULs; C++ linkage would have stored
      // _ZN7go_sm9013go_fast_traceE instead (the H200 answered CUresult 500, not found, on 2026-11-30).
      const strings = new TextDecoder("latin1").decode(cubin);
      assert.ok(strings.includes("\0go_fast_trace\0"), "no symbol go_fast_trace in the dbg=64 cubin");
      assert.ok(!strings.includes("go_fast_traceE"), "the dbg=64 cubin has a mangled go_fast_trace");
    },
  );
  await t.step(
    "dense shape-class kernels prefetch B's first box into L2, then wait for the kernel before them, in the producer after its setmaxnreg; grouped and generic kernels wait at the top and prefetch nothing",
    async () => {
      // PTX order: the producer's branch opens with setmaxnreg.dec, so a wait after it is a wait inside that branch
      // (fast_late_wait, sm90_fp8_fast_producer.cuh); a wait before it is the one at the top that every thread runs.
      // The L2 prefetch (fast_prefetch_b) stands between the two in a late kernel, and nowhere in the others.
      const cases: [FastKernelConfig, "late" | "top", string][] = [
        [{ bn: 32, stages: 10, n: 4096, k: 7168, ktma: 2, spread: true, mode: 0, sfa: 1 }, "late", "dense class"],
        [{ bn: 128, stages: 5, mode: 3, sfa: 1 }, "top", "masked class"],
        [{ bn: 64, stages: 8 }, "top", "generic (mode read at run time)"],
      ];
      const ptx = await Promise.all(cases.map(async ([c], i) => {
        const cu = `${dir}/wait${i}.cu`, out = `${dir}/wait${i}.ptx`;
        await Deno.writeTextFile(cu, fastKernelSource(c));
        const r = await runNvcc(["-ptx", "-O3", "-std=c++17", "-arch=sm_90a", "-I", CUDA_DIR, "-o", out, cu]);
        assert.ok(r.ok, `${JSON.stringify(c)}: ${r.log}`);
        return await Deno.readTextFile(out);
      }));
      cases.forEach(([c, where, what], i) => {
        const wait = ptx[i].indexOf("griddepcontrol.wait"), dec = ptx[i].indexOf("setmaxnreg.dec");
        assert.ok(wait >= 0 && dec >= 0, `${what} ${JSON.stringify(c)}: no griddepcontrol.wait or setmaxnreg.dec`);
        assert.equal(wait > dec ? "late" : "top", where, `${what} ${JSON.stringify(c)}`);
        const prefetch = ptx[i].indexOf("cp.async.bulk.prefetch.tensor");
        if (where === "late") {
          assert.ok(
            dec < prefetch && prefetch < wait,
            `${what}: prefetch at ${prefetch}, not between ${dec} and ${wait}`,
          );
          assert.match(
            ptx[i],
            /cp\.async\.bulk\.prefetch\.tensor\.3d\.L2\.global\.tile/,
            `${what}: ktma=2 needs the 3d box`,
          );
        } else assert.equal(prefetch, -1, `${what} ${JSON.stringify(c)} prefetches`);
      });
    },
  );
  await t.step("a kernel of the normal build does not compile with a profiling switch", async () => {
    const cu = `${dir}/dbg_normal.cu`;
    const text = fastKernelSource({ bn: 64, stages: 8, debug: 4 }).replace("#define GO_FAST_PROFILING 1\n", "");
    await Deno.writeTextFile(cu, text);
    const out = await runNvcc(["-cubin", "-std=c++17", "-gencode=arch=compute_90a,code=sm_90a", "-I", CUDA_DIR, cu]);
    assert.ok(!out.ok, "GO_FAST_DBG compiled without GO_FAST_PROFILING");
    assert.match(out.log, /GO_FAST_DBG needs the profiling build/);
  });
});

Deno.test("the JIT cache key hashes every header a JIT kernel includes (jit.cu's kHeaders)", async () => {
  const jit = await Deno.readTextFile(`${CUDA_DIR}jit.cu`);
  const list = jit.match(/kHeaders\[\] = \{([^}]*)\}/);
  assert.ok(list, "no kHeaders in jit.cu");
  const hashed = new Set([...list[1].matchAll(/"([^"]+)"/g)].map((m) => m[1]));
  // The local headers sm90_fp8_fast_kernel.cuh reaches through #include "...": an edit to one the key leaves out would
  // load a stale cubin.
  const reached = new Set<string>();
  const todo = ["sm90_fp8_fast_kernel.cuh"];
  while (todo.length > 0) {
    const h = todo.pop()!;
    if (reached.has(h)) continue;
    reached.add(h);
    const text = await Deno.readTextFile(`${CUDA_DIR}${h}`);
    for (const m of text.matchAll(/^#include "([^"]+)"/gm)) todo.push(m[1]);
  }
  assert.ok(reached.size >= 8, `only ${[...reached].join(", ")} reached`);
  assert.deepEqual([...reached].filter((h) => !hashed.has(h)).sort(), [], "headers the JIT cache key leaves out");
});

Deno.test("a configuration names SFA's path only next to its mode, as FastConfig's template takes them, dbg= its profiling switches and gridparams=1 a __grid_constant__ parameter block", () => {
  assert.match(
    fastKernelSource({ bn: 32, stages: 10, mode: 0, sfa: 1 }),
    /FastConfig<128, 32, 10, 1, 2, 0, 0, false, 1, false, 0, 1>/,
  );
  assert.match(
    fastKernelSource({ bn: 32, stages: 10, mode: 3 }),
    /FastConfig<128, 32, 10, 1, 2, 0, 0, false, 1, false, 3>/,
  );
  assert.throws(() => fastKernelSource({ bn: 32, stages: 10, sfa: 0 }), /sfa= is compiled in only next to mode=/);
  assert.deepEqual(parseFastKernelConfig(["bn=32", "stages=10", "mode=0", "sfa=0"]), {
    bn: 32,
    stages: 10,
    mode: 0,
    sfa: 0,
  });
  assert.throws(() => parseFastKernelConfig(["bn=32", "stages=10", "sfa=1"]), /only next to mode=/);
  // dbg=N is the profiling build's switches: debug, which the source turns into the profiling #defines
  const traced = parseFastKernelConfig(["bn=32", "stages=10", "dbg=128"]);
  assert.deepEqual(traced, { bn: 32, stages: 10, debug: 128 });
  assert.match(fastKernelSource(traced), /#define GO_FAST_PROFILING 1\n#define GO_FAST_DBG 128\n/);
  // gridparams=1: the parameter block __grid_constant__, as a copy of kernels/ may pass it
  const grid = parseFastKernelConfig(["bn=32", "stages=10", "gridparams=1"]);
  assert.deepEqual(grid, { bn: 32, stages: 10, gridParams: true });
  assert.match(fastKernelSource(grid), /const __grid_constant__ go_sm90::FastParams p\) \{/);
  assert.match(fastKernelSource({ bn: 32, stages: 10 }), /const go_sm90::FastParams p\) \{/);
});
