// bench/sass_layout.ts reads instructions by opcode: kernels of one instruction each, compiled with nvcc, are read back
// at the opcodes SM90_OPCODES names (setmaxnreg and its register count, a TMA copy each way, an FP8 wgmma, a cp.async
// copy, a clock read, a load from constant bank 4, local memory's stores and loads). And what the layout showed of the
// fast FP8 kernel stays true: its producer's setmaxnreg and first TMA copy lie past the math's code, and the profiling
// build loads the trace buffer's address before its first clock read (docs/performance-history.md, twenty-sixth
// round). Runs wherever nvcc exists.
import assert from "node:assert/strict";
import {
  elfSections,
  opcodeOf,
  type SassLayout,
  sassLayout,
  SM90_OPCODES,
  textFunctions,
} from "../../bench/sass_layout.ts";
import { nvccTest, runNvcc } from "./_nvcc.ts";
import { compileFastKernel, SMALL_M_KERNEL } from "./_fast_kernel_source.ts";

/** The cubin of a kernel compiled from `source` (kernels/cuda on the include path). */
async function cubinOf(dir: string, name: string, source: string): Promise<Uint8Array> {
  await Deno.writeTextFile(`${dir}/${name}.cu`, source);
  const out = await runNvcc([
    "-cubin",
    "-O3",
    "-gencode=arch=compute_90a,code=sm_90a",
    "-I",
    new URL("../../kernels/cuda/", import.meta.url).pathname,
    "-o",
    `${dir}/${name}.cubin`,
    `${dir}/${name}.cu`,
  ]);
  assert.ok(out.ok, out.log);
  return await Deno.readFile(`${dir}/${name}.cubin`);
}

/** The one function of a kernel compiled from `source`. */
async function layoutOf(dir: string, name: string, source: string): Promise<SassLayout> {
  const [l] = sassLayout(await cubinOf(dir, name, source));
  return l;
}

/** The opcodes of the one function of a kernel compiled from `source`, in code order. */
async function opcodesOf(dir: string, name: string, source: string): Promise<number[]> {
  const [f] = textFunctions(elfSections(await cubinOf(dir, name, source)));
  return f.instructions.map(opcodeOf);
}

await nvccTest("sass_layout", "go-sass-layout-", async (t, dir) => {
  await t.step(
    "reads setmaxnreg with its count, a TMA copy each way, an FP8 wgmma, a cp.async copy, a clock read, a bank-4 load " +
      "and local memory",
    async () => {
      const regs = await layoutOf(
        dir,
        "regs",
        `extern "C" __global__ void __launch_bounds__(384, 1) k(int* out, int x) {
  if (threadIdx.x < 128) { asm volatile("setmaxnreg.dec.sync.aligned.u32 40;" ::: "memory"); out[0] = x; }
  else { asm volatile("setmaxnreg.inc.sync.aligned.u32 232;" ::: "memory"); out[1] = 3 * x; }
}`,
      );
      assert.deepEqual(regs.setmaxnreg.map((s) => s.regs).sort((a, b) => a - b), [40, 232]);
      // One TMA copy each way: global to shared (UTMALDG), then shared to global (UTMASTG).
      const tmaSource = `#include <cuda.h>
#include <cstdint>
extern "C" __global__ void k(const __grid_constant__ CUtensorMap m, int x, int y) {
  __shared__ alignas(128) uint8_t buf[4096];
  __shared__ alignas(8) uint64_t bar;
  const uint32_t dst = static_cast<uint32_t>(__cvta_generic_to_shared(buf));
  const uint32_t b = static_cast<uint32_t>(__cvta_generic_to_shared(&bar));
  asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4}], [%2];"
               :: "r"(dst), "l"(&m), "r"(b), "r"(x), "r"(y) : "memory");
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%2, %3}], [%1];"
               :: "l"(&m), "r"(dst), "r"(x), "r"(y) : "memory");
}`;
      const tmaCubin = await cubinOf(dir, "tma", tmaSource);
      const [tma] = sassLayout(tmaCubin);
      assert.equal(tma.tmaLoads.length, 1);
      const [tmaFn] = textFunctions(elfSections(tmaCubin));
      assert.equal(tmaFn.instructions.filter((w) => opcodeOf(w) === SM90_OPCODES.tmaStore).length, 1, "one UTMASTG");
      const mma = await opcodesOf(
        dir,
        "wgmma",
        `#include "sm90_wgmma.cuh"
extern "C" __global__ void k(float* out, uint64_t da, uint64_t db) {
  float acc[16];
  for (int i = 0; i < 16; ++i) acc[i] = 0.f;
  asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
  go_sm90::WgmmaFp8<32>::mma(acc, da, db, 0);
  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
  asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
  for (int i = 0; i < 16; ++i) out[threadIdx.x * 16 + i] = acc[i];
}`,
      );
      assert.equal(mma.filter((o) => o === SM90_OPCODES.qgmma).length, 1, "one QGMMA");
      const cp = await layoutOf(
        dir,
        "cp",
        `#include <cstdint>
extern "C" __global__ void k(const float* src) {
  __shared__ alignas(16) float buf[32];
  const uint32_t dst = static_cast<uint32_t>(__cvta_generic_to_shared(buf + threadIdx.x));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" :: "r"(dst), "l"(src + threadIdx.x) : "memory");
  asm volatile("cp.async.wait_all;" ::: "memory");
}`,
      );
      assert.equal(cp.cpAsyncs.length, 1, JSON.stringify(cp));
      const clock = await layoutOf(
        dir,
        "clock",
        `__device__ long long trace[8];
extern "C" __global__ void k() { if (threadIdx.x == 0) trace[3] = clock64(); }`,
      );
      assert.equal(clock.clockReads.length, 1);
      assert.deepEqual(clock.constLoads.filter((c) => c.bank === 4).length, 1, "the global's address from bank 4");
      const local = await layoutOf(
        dir,
        "local",
        `extern "C" __global__ void k(int* out, int i, int v) {
  int a[64];
#pragma unroll 1
  for (int j = 0; j < 64; ++j) a[(j * 7 + i) & 63] = v + j;
  out[threadIdx.x] = a[(i * 5) & 63];
}`,
      );
      assert.ok(local.localStores.length > 0 && local.localLoads.length > 0, JSON.stringify(local));
    },
  );

  await t.step(
    "the fast kernel's producer lies past the math, the SFB loader's copies before its first TMA copy; its profiling " +
      "build loads the trace address first",
    async () => {
      const c = SMALL_M_KERNEL;
      const normal = await compileFastKernel(c, `${dir}/fast.cubin`);
      assert.ok(normal.ok, normal.log);
      const [l] = sassLayout(await Deno.readFile(`${dir}/fast.cubin`));
      const math = l.setmaxnreg.find((s) => s.regs === 216), producer = l.setmaxnreg.find((s) => s.regs === 64);
      assert.ok(math && producer, JSON.stringify(l.setmaxnreg));
      assert.ok(math.at < producer.at && producer.at < l.tmaLoads[0], JSON.stringify(l));
      // Between them lies the SFB loader's code, its cp.async copies (docs/performance-history.md, thirty-ninth round).
      assert.ok(
        l.cpAsyncs.length > 0 && producer.at < l.cpAsyncs[0] && l.cpAsyncs[l.cpAsyncs.length - 1] < l.tmaLoads[0],
        JSON.stringify(l),
      );
      assert.deepEqual([l.localStores.length, l.localLoads.length], [0, 0], "no spills");
      const traced = await compileFastKernel({ ...c, debug: 128 }, `${dir}/traced.cubin`);
      assert.ok(traced.ok, traced.log);
      const [d] = sassLayout(await Deno.readFile(`${dir}/traced.cubin`));
      const bank4 = d.constLoads.find((x) => x.bank === 4);
      assert.ok(
        bank4 && bank4.at < d.clockReads[0],
        `first bank-4 load ${bank4?.at}, first clock read ${d.clockReads[0]}`,
      );
    },
  );
});
