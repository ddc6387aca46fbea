// The fast SM90 FP8 GEMM's tile walk writes the same elements, once each, with the same B group and kind (computed or
// zero) at BLOCK_M 64 and 256, BLOCK_N 64 / 128 / 144 and multicast 1 / 2 as at BLOCK_M 128, the tiling checked bit
// for bit on an H200, for dense, contiguous (classic, psum) and masked layouts; split K runs every (tile, K block) of a
// dense walk exactly once; the TMA-store epilogue never rewrites a staging buffer that a store of its may still read;
// the grouped index rules and error words of grouped_gate.h hold at their bounds; the walk's divisions by prepared
// divisors (FastDiv) are exact; a last round split in halves writes the same elements; masked A loaded by 64-row
// chunk holds every chunk a math warpgroup computes from.
// tests/kernels/fast_tiles_check.cu runs the kernel header's fast_tile, fast_chunk_tma, fast_epi_pending and
// fast_idle_waves on the host: nvcc, no GPU, so CI runs it.
import assert from "node:assert/strict";
import { nvccTest, runNvcc } from "./_nvcc.ts";

const ROOT = new URL("../../", import.meta.url).pathname;

await nvccTest("fast FP8 GEMM tile walk", "go-fast-tiles-", async (t, dir) => {
  await t.step(
    "BLOCK_M 64 and 256 write what BLOCK_M 128 writes, in every mode; split K covers K once; TMA stores keep their buffers",
    async () => {
      const exe = `${dir}/fast_tiles_check`;
      const build = await runNvcc([
        "-std=c++17",
        "-O2",
        "-I",
        `${ROOT}kernels/cuda`,
        "-o",
        exe,
        `${ROOT}tests/kernels/fast_tiles_check.cu`,
      ]);
      assert.ok(build.ok, build.log);
      const run = await new Deno.Command(exe, { stdout: "piped", stderr: "piped" }).output();
      const out = new TextDecoder().decode(run.stdout);
      const failed = out.split("\n").filter((l) =>
        l.includes("DIFFERS") || l.includes("twice") || l.includes("HAZARD")
      );
      assert.deepEqual(failed, [], "tilings that write differently");
      const m = out.match(/SUMMARY cases=(\d+) failures=(\d+)/);
      assert.ok(m, out);
      assert.equal(Number(m[2]), 0);
      assert.ok(Number(m[1]) >= 220, `only ${m[1]} cases ran`);
      assert.ok(run.success);
      // Contiguous layouts whose groups do not fit 256-row tiles are not run at BLOCK_M 256 (the launcher keeps 128).
      assert.ok(!/classic m=\[100,0,1,257\].*bm256/.test(out));
      assert.ok(/classic m=\[200,0,256,300\].*bm256 bn128 +same writes/.test(out));
      // Split K is checked on the dense layouts, with K blocks that do and do not divide evenly.
      assert.ok(/dense M300 N520 +bm128 bn128 split nkb 9 S 2: every \(tile, K block\) once/.test(out));
      assert.ok(!/classic.*split/.test(out));
      // The epilogue's buffer replay runs in every mode, and the rule before a chunk stored by the threads
      // committed no group (wait as if the previous chunk went by TMA) is caught.
      assert.ok(/dense M300 N520 +bm256 bn128 tma +no buffer rewritten early/.test(out));
      assert.ok(/psum m=\[100,0,1,257\] mk128 N384 +bm64 bn48 tma +no buffer rewritten early/.test(out));
      assert.ok(/masked Mmax384 .* +bm128 bn64 mc2 tma +no buffer rewritten early/.test(out));
      // The last round in halves (fast_split_tail) writes what BLOCK_M 128 writes, over grids that split some tiles or
      // all of them, and its epilogue replay holds; some (layout, grid) pairs must split at all.
      assert.ok(/dense M300 N520 +bm256 bn128 \/4 +same writes/.test(out));
      assert.ok(/masked Mmax384 .* +bm256 bn64 mc2 \/3 same writes/.test(out));
      assert.ok(/dense M300 N520 +bm256 bn128 tma \/3 no buffer rewritten early/.test(out));
      const halves = out.match(/^last round in halves: (\d+) \(layout, grid\) pairs split/m);
      assert.ok(halves && Number(halves[1]) > 0, "the split walks must split something");
      const oldRule = out.match(/waiting as if every chunk went by TMA: (\d+) layouts with a hazard/);
      assert.ok(oldRule && Number(oldRule[1]) > 0, "the replay must catch the old waiting rule");
      // Masked A by 64-row chunk: every wave a math warpgroup computes reads a chunk the producer loads, at BLOCK_M 128
      // and at 256 where a group is one row tile (Mmax <= 256), with the last round in halves too; past 256 the box is
      // whole. Some tiles must leave a chunk out, and a rule that idles no wave must be caught reading one.
      assert.ok(
        /masked Mmax256 m=\[0,1,256,100\] N384 +bm256 a by chunk +every computed wave's chunk loaded/.test(out),
      );
      assert.ok(/masked Mmax128 .* +bm256 a by chunk \/7 every computed wave's chunk loaded/.test(out));
      assert.ok(/masked Mmax384 .* +bm256 a by chunk +A by the whole box/.test(out));
      assert.ok(!out.includes("UNLOADED"), "a computed wave reads a chunk the producer does not load");
      const chunks = out.match(/^a by chunk: (\d+) tiles leave a chunk out, an idle-nothing rule caught on (\d+)/m);
      assert.ok(chunks && Number(chunks[1]) > 0 && Number(chunks[2]) > 0, "the chunk check must have teeth");
      // The grouped index rules (grouped_gate.h): 12 entries at their bounds, the three messages, 256-row fits.
      assert.equal(out.match(/^gate rule kind \d: .* (accepted|refused)$/gm)?.length, 12);
      assert.ok(out.includes("gate message kind 1: grouped_layout[130] = 5 is neither -1 nor a group in [0, 2)\n"));
      assert.ok(out.includes("gate 256-row rules: as documented\n"));
      // The walk's divisions (FastDiv, one multiply-high each) are exact over divisors 1..4096, around every power of
      // two and at the 32-bit ends.
      const div = out.match(/^FastDiv: (\d+) quotients, all exact$/m);
      assert.ok(div && Number(div[1]) > 4_000_000, "FastDiv must be checked exact");
    },
  );
});
