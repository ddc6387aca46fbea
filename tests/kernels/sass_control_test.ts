// bench/sass_control.ts reads each FFMA's control bits from a cubin. What it showed of the fast kernel at 4096×7168×16384
// stays true: ptxas 13.0 gives the promotion's FFMAs (64 a wave at BLOCK_N 128) a stall of 1 and a yield flag that
// alternates from one FFMA to the next over each run's bulk, as it does in DeepGEMM's kernel, so that interleaving is
// not a difference between the two (docs/performance-history.md, thirty-second round, where patching the bits every
// other way ran slower or level). Runs wherever nvcc exists.
import assert from "node:assert/strict";
import { ffmaControl, yieldPattern } from "../../bench/sass_control.ts";
import { nvccTest, runNvcc } from "./_nvcc.ts";
import { compileFastKernel } from "./_fast_kernel_source.ts";

await nvccTest("sass_control", "go-sass-control-", async (t, dir) => {
  await t.step("the fast kernel's promotion runs at BLOCK_M 256 × BLOCK_N 128 alternate the yield flag", async () => {
    const c = { bm: 256, bn: 128, stages: 3, sets: 1, mc: 2, n: 7168, k: 16384, mode: 0, sfa: 1 };
    const built = await compileFastKernel(c, `${dir}/fast.cubin`);
    assert.ok(built.ok, built.log);
    const [f] = ffmaControl(await Deno.readFile(`${dir}/fast.cubin`));
    assert.equal(f.fn, "go_fp8_fast");
    // Two waves of 64 FFMAs per K block; the K loop is unrolled 8 times (sm90_fp8_fast_math.cuh), so at least 16
    // runs, each nearly a wave (ptxas puts the last few of a second wave's FFMAs after the next K block's barrier wait,
    // beyond the run's gap).
    assert.ok(f.runs.length >= 16, `${f.runs.length} runs`);
    for (const r of f.runs) {
      assert.ok(r.yieldBits.length >= 60 && r.yieldBits.length <= 64, `run at ${r.start}: ${r.yieldBits.length}`);
      assert.deepEqual(Object.keys(r.stalls), ["1"], `run at ${r.start}: stalls ${JSON.stringify(r.stalls)}`);
      assert.match(yieldPattern(r.yieldBits.slice(-48)), /^alternating from [01]$/, `run at ${r.start}`);
    }
    assert.ok(f.yield0 > 0 && f.yield0 < f.ffma, `${f.yield0} of ${f.ffma} FFMAs at yield bit 0`);
  });

  await t.step("counts the one FFMA of a kernel of one fused multiply-add", async () => {
    await Deno.writeTextFile(
      `${dir}/fma.cu`,
      `extern "C" __global__ void k(const float* a, const float* b, const float* c, float* d) {
  const int i = threadIdx.x;
  d[i] = __fmaf_rn(a[i], b[i], c[i]);
}`,
    );
    const out = await runNvcc(
      ["-cubin", "-O3", "-gencode=arch=compute_90a,code=sm_90a", "-o", `${dir}/fma.cubin`, `${dir}/fma.cu`],
    );
    assert.ok(out.ok, out.log);
    const [f] = ffmaControl(await Deno.readFile(`${dir}/fma.cubin`));
    assert.deepEqual({ fn: f.fn, ffma: f.ffma, runs: f.runs.length }, { fn: "k", ffma: 1, runs: 0 });
  });
});
