// A TMA copy issued under a per-thread condition (`threadIdx.x == 0`) compiles, with nvcc 13.0 for sm_90a, into a loop
// over the active threads' operand values around each copy (ELECT, R2UR, UTMALDG, BRA.U.ANY), which one issued under
// elect.sync does not need: ptxas knows that code under an elected predicate runs on one thread. The fast kernel's
// producer issues its copies under `tid == 0` (docs/performance-history.md, "Issue 26, ninth round", where this
// probe's instruction counts are quoted: 144 / 192 / 240 against 120 / 152 / 176 for 1 / 2 / 3 copies a loop pass).
import assert from "node:assert/strict";
import { nvccTest, runNvcc } from "./_nvcc.ts";
import { elfSectionSize } from "./_fast_kernel_source.ts";

/** A kernel whose chosen thread issues `copies` TMA copies per pass of a loop, chosen by `threadIdx.x == 0` or by
 * elect.sync over warp 0. */
function probe(copies: number, elected: boolean): string {
  const issue = Array.from(
    { length: copies },
    (_, j) =>
      `    tma_load_2d(base + (i % 3) * 16384 + ${j * 4096}, &map, base + 65536 + 8 * (i % 3), i * 128, r + ${
        32 * j
      });`,
  ).join("\n");
  return `#include <cuda.h>
#include <cstdint>
__device__ __forceinline__ void tma_load_2d(uint32_t dst, const CUtensorMap* map, uint32_t bar, int x, int y) {
  asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
               :: "r"(dst), "l"(reinterpret_cast<uint64_t>(map)), "r"(x), "r"(y), "r"(bar) : "memory");
}
__device__ __forceinline__ bool elect_one() {
  uint32_t pred = 0;
  asm volatile("{\\n.reg .pred p;\\n.reg .b32 r;\\nelect.sync r|p, %1;\\nselp.u32 %0, 1, 0, p;\\n}" : "=r"(pred) : "r"(0xffffffffu));
  return pred != 0;
}
extern __shared__ uint8_t sm[];
__global__ void __launch_bounds__(128) probe(const __grid_constant__ CUtensorMap map, int n, const int* rows) {
  const uint32_t base = static_cast<uint32_t>(__cvta_generic_to_shared(sm));
  if (${elected ? "threadIdx.x < 32 && elect_one()" : "threadIdx.x == 0"}) {
    for (int i = 0; i < n; ++i) {
      const int r = rows[i];
${issue}
    }
  }
}
`;
}

await nvccTest(
  "a TMA copy under elect.sync needs no loop over the active threads' values",
  "go-tma-probe-",
  async (t, dir) => {
    for (const copies of [1, 2, 3]) {
      await t.step(`${copies} copies a pass`, async () => {
        const size = async (elected: boolean) => {
          const cu = `${dir}/probe_${copies}_${elected}.cu`, cubin = cu.replace(/\.cu$/, ".cubin");
          await Deno.writeTextFile(cu, probe(copies, elected));
          const r = await runNvcc(["-cubin", "-O3", "-gencode=arch=compute_90a,code=sm_90a", "-o", cubin, cu]);
          assert.ok(r.ok, r.log);
          const text = elfSectionSize(await Deno.readFile(cubin), ".text._Z5probe14CUtensorMap_stiPKi");
          assert.ok(text !== undefined, "the cubin has the probe's .text section");
          return text / 16;
        };
        const plain = await size(false), elected = await size(true);
        // nvcc 13.0: 144 / 192 / 240 against 120 / 152 / 176 instructions; at least 16 fewer for each copy.
        assert.ok(plain - elected >= 16 * copies, `threadIdx.x == 0: ${plain} instructions, elect.sync: ${elected}`);
      });
    }
  },
);
