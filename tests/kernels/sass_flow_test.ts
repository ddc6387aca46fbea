// bench/sass_flow.ts decodes branch targets from the bytes: on PTX kernels whose branches ptxas places where the test
// knows them (a guarded branch over 40 stores to its reconvergence point, a loop's branch back to its top, the branch
// to itself that ends every kernel), and on the fast FP8 kernel, whose producer's shortest path from its setmaxnreg to
// a TMA copy branches over the SFB loader's code (docs/performance-history.md, fortieth round). Runs wherever nvcc
// exists.
import assert from "node:assert/strict";
import { branchOf, producerPath, shortestPath } from "../../bench/sass_flow.ts";
import { elfSections, opcodeOf, SM90_OPCODES, textFunctions } from "../../bench/sass_layout.ts";
import { compileFastKernel, SMALL_M_KERNEL } from "./_fast_kernel_source.ts";
import { nvccTest, runNvcc } from "./_nvcc.ts";
import { runBench } from "../bench/_run.ts";

/** The instructions of the one function of a kernel compiled from PTX. */
async function ptxInstructions(dir: string, name: string, body: string): Promise<Uint8Array[]> {
  const ptx = `.version 8.0\n.target sm_90a\n.address_size 64\n.visible .entry k(.param .u64 p) {
  .reg .pred %p; .reg .b32 %r<8>; .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [p];
  cvta.to.global.u64 %rd2, %rd1;
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %r1;
${body}
  ret;
}\n`;
  await Deno.writeTextFile(`${dir}/${name}.ptx`, ptx);
  const out = await runNvcc(
    ["-cubin", "-gencode=arch=compute_90a,code=sm_90a", "-o", `${dir}/${name}.cubin`, `${dir}/${name}.ptx`],
  );
  assert.ok(out.ok, out.log);
  const [f] = textFunctions(elfSections(await Deno.readFile(`${dir}/${name}.cubin`)));
  return f.instructions;
}

/** STG, a store to global memory: the stores these kernels write (their only instruction of that opcode). */
const STG = 0x986;

const stores = (n: number) =>
  Array.from({ length: n }, (_, j) => `  add.u32 %r2, %r2, ${j + 3};\n  st.global.u32 [%rd2+${4 * j}], %r2;`).join(
    "\n",
  );

await nvccTest("sass_flow", "go-sass-flow-", async (t, dir) => {
  await t.step("a guarded branch over 40 stores goes to their reconvergence point, BSSY past it", async () => {
    const ins = await ptxInstructions(
      dir,
      "over",
      `  setp.eq.u32 %p, %r1, 0;\n  @%p bra L;\n${stores(40)}\nL:\n  st.global.u32 [%rd2+8000], %r1;`,
    );
    const branches = ins.map((w, at) => branchOf(w, at)).filter((b) => b !== undefined);
    const bsync = ins.findIndex((w) => opcodeOf(w) === SM90_OPCODES.bsync);
    const over = branches.find((b) => b.kind === "bra" && b.conditional);
    assert.ok(over && bsync > over.at, JSON.stringify(branches));
    assert.equal(over.target, bsync, "the guarded branch skips the stores to the BSYNC");
    const storesSkipped = ins.slice(over.at + 1, bsync).filter((w) => opcodeOf(w) === STG).length;
    assert.equal(storesSkipped, 40);
    assert.equal(branches.find((b) => b.kind === "bssy")!.target, bsync + 1);
    const last = branches.filter((b) => b.kind === "bra").at(-1)!;
    assert.deepEqual([last.target, last.conditional], [last.at, false], "the closing branch to itself");
    // Thread 0's way to the last store skips the 40: shorter than the way through them.
    const end = ins.findLastIndex((w) => opcodeOf(w) === STG);
    assert.ok(shortestPath(ins, 0, (at) => at === end)!.instructions < end, "a branch taken");
  });

  await t.step("a loop's branch goes back to its top", async () => {
    const ins = await ptxInstructions(
      dir,
      "loop",
      `  mov.u32 %r3, 0;\nTOP:\n  add.u32 %r2, %r2, %r3;\n  st.volatile.global.u32 [%rd2], %r2;\n` +
        `  add.u32 %r3, %r3, 1;\n  setp.lt.u32 %p, %r3, %r1;\n  @%p bra TOP;`,
    );
    // ptxas may guard the loop's entry with a forward branch too; the loop's own branch is the one that goes back.
    const branches = ins.map((w, at) => branchOf(w, at));
    const back = branches.find((b) => b?.kind === "bra" && b.conditional && b.target < b.at);
    assert.ok(back, JSON.stringify(branches.filter((b) => b)));
    assert.ok(
      ins.slice(back.target, back.at).some((w) => opcodeOf(w) === STG),
      "the loop's body, its store among it, lies between the top and the branch",
    );
  });

  await t.step(
    "the fast kernel's branches all land in it; its producer's shortest path to a TMA copy branches over the loader",
    async () => {
      const c = SMALL_M_KERNEL;
      const r = await compileFastKernel(c, `${dir}/fast.cubin`);
      assert.ok(r.ok, r.log);
      const [f] = textFunctions(elfSections(await Deno.readFile(`${dir}/fast.cubin`)));
      const n = f.instructions.length;
      const kinds: number[] = [SM90_OPCODES.bra, SM90_OPCODES.call, SM90_OPCODES.bssy];
      const control = f.instructions.map((w, at) => [w, at] as const).filter(([w]) => kinds.includes(opcodeOf(w)));
      const decoded = control.map(([w, at]) => branchOf(w, at));
      assert.ok(decoded.every((b) => b && b.target >= 0 && b.target < n), "every target decodes inside the kernel");
      const p = producerPath(f.instructions);
      assert.ok(p && p.runs.length > 1, `${JSON.stringify(p)}: a branch taken`);
      assert.ok(p.instructions < p.end - p.from + 1, `${JSON.stringify(p)}: shorter than the code in between`);
      const cli = await runBench("sass_flow.ts", `${dir}/fast.cubin`);
      assert.equal(cli.code, 0, cli.stderr);
      assert.match(cli.stdout, /; producer \(\d+-\d+\): \d+ \/ \d+ \/ \d+ \[\d+-\d+( \d+-\d+)+\];/);
      // The epilogue's path: from a wgmma to the TMA store of D.
      assert.match(cli.stdout, /; wgmma -> TMA store \(\d+-\d+\): \d+ \/ \d+ \/ \d+ /);
    },
  );

  await t.step("the command exits 2 without a cubin or on a file that is not one", async () => {
    assert.equal((await runBench("sass_flow.ts")).code, 2);
    await Deno.writeTextFile(`${dir}/not.cubin`, "text");
    const bad = await runBench("sass_flow.ts", `${dir}/not.cubin`);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /not\.cubin: not a cubin with a \.text section/);
  });
});
