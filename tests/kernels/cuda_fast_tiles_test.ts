// The fast SM90 FP8 GEMM's tile walk writes the same elements, once each, with the same B group and kind (computed or
// zero) at BLOCK_M 64 and 256, BLOCK_N 64 / 128 / 144 and multicast 1 / 2 as at BLOCK_M 128, the tiling checked bit
// for bit on an H200, for dense, contiguous (classic, psum) and masked layouts; split K runs every (tile, K block) of a
// dense walk exactly once; the TMA-store epilogue never rewrites a staging buffer that a store of its may still read;
// the grouped index rules and error words of grouped_gate.h hold at their bounds; the walk's divisions by prepared
// divisors (FastDiv) are exact; a last round split in halves writes the same elements; masked A loaded by 64-row
// chunk holds every chunk a math warpgroup computes from.
// tests/kernels/fast_tiles_check.cu runs the kernel header's fast_tile, fast_chunk_tma, fast_epi_pending and
// fast_idle_waves on the host: nvcc, no GPU, so CI runs it. tests/kernels/fast_walk_balance.cu, a program of its own,
// says how evenly the persistent grid shares each benchmark shape's computed tiles at the heuristic's configuration.
import assert from "node:assert/strict";
import { PYTHON, pythonMissing } from "../_python.ts";
import { nvccTest, runNvcc } from "./_nvcc.ts";

const ROOT = new URL("../../", import.meta.url).pathname;

/** A host program of kernels/cuda's headers, built by nvcc into `exe` from `sources` (paths under the root). */
async function buildHost(exe: string, sources: string[]): Promise<void> {
  const build = await runNvcc([
    "-std=c++17",
    "-O2",
    "-I",
    `${ROOT}kernels/cuda`,
    "-o",
    exe,
    ...sources.map((f) => ROOT + f),
  ]);
  assert.ok(build.ok, build.log);
}

await nvccTest("fast FP8 GEMM tile walk", "go-fast-tiles-", async (t, dir) => {
  await t.step(
    "BLOCK_M 64 and 256 write what BLOCK_M 128 writes, in every mode; split K covers K once; TMA stores keep their buffers",
    async () => {
      const exe = `${dir}/fast_tiles_check`;
      await buildHost(exe, ["tests/kernels/fast_tiles_check.cu"]);
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
  await t.step(
    "fast_walk_balance: 4096 x 2112 x 7168's 352 tiles leave the last round a third empty; masked Mmax 128 at BLOCK_M 64 idles every other CTA",
    async () => {
      const exe = `${dir}/fast_walk_balance`;
      await buildHost(exe, ["tests/kernels/fast_walk_balance.cu", "kernels/cuda/sm90_fp8_fast_heuristic.cu"]);
      const run = async (args: string[]) => {
        const r = await new Deno.Command(exe, { args, stdout: "piped", stderr: "piped" }).output();
        return { code: r.code, out: new TextDecoder().decode(r.stdout), err: new TextDecoder().decode(r.stderr) };
      };
      const r = await run(["dense 4096x2112x7168", "masked 32x20x4096x2048", "contiguous 4x8192x4096x2048"]);
      assert.equal(r.code, 0, r.err);
      // 128 x 192 tiles: 32 x 11 = 352 over 132 SMs, three rounds, the last two thirds full
      assert.match(
        r.out,
        /^dense 4096x2112x7168: bm=128 bn=192 .*: units 352 over 132 clusters, .* max 3\.0 mean 2\.67, idle 0, balance 0\.889$/m,
      );
      assert.match(r.out, /^masked 32x20x4096x2048: bm=128 bn=128 .* max 8\.0 mean 7\.76, idle 0, balance 0\.970$/m);
      // 256 x 128 in clusters of 2: 2048 units over 66 clusters, the last round's 2 split in halves
      assert.match(
        r.out,
        /^contiguous 4x8192x4096x2048: bm=256 bn=128 .*multicast=2.*: units 2050 over 66 clusters, .* max 31\.5 /m,
      );
      // BLOCK_M 64 where masked_m = 20 and Mmax = 128: the zero row blocks (rows 64-127) fall on the odd CTAs
      const b64 = await run(["--cfg", "bm=64", "masked 32x20x4096x2048"]);
      assert.match(b64.out, /: units 2048 over 132 clusters, .* max 16\.0 mean 7\.76, idle 66, balance 0\.485$/m);
      const bad = await run(["masked 32x20"]);
      assert.equal(bad.code, 2);
      assert.match(bad.err, /"masked 32x20": expected/);
    },
  );
  await t.step({
    name: "fast_walk_balance has an instance for the heuristic's configuration of every one of the benchmark's 45",
    ignore: pythonMissing([]) !== undefined, // tests/gpu/shapes.py prints their names
    fn: async () => {
      const names = await new Deno.Command(PYTHON, { args: [`${ROOT}tests/gpu/shapes.py`], stdout: "piped" }).output();
      const list = new TextDecoder().decode(names.stdout).trim().split("\n");
      assert.equal(list.length, 45);
      const all = await new Deno.Command(`${dir}/fast_walk_balance`, { args: list, stdout: "piped", stderr: "piped" })
        .output();
      assert.equal(all.code, 0, new TextDecoder().decode(all.stderr));
      assert.equal(new TextDecoder().decode(all.stdout).trim().split("\n").length, 45);
    },
  });
});
