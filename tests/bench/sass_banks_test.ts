// bench/sass_banks.ts: cuobjdump's SASS text, or a cubin decoded here, becomes per-function FFMA counts and how many
// FFMAs read two registers from one bank, a source the previous FFMA kept in the reuse cache not counted; predicates
// and modifiers do not hide an FFMA, other instructions end the cache; a file without FFMAs or a bad option exits 2
// naming the fault.
import assert from "node:assert/strict";
import { runBench } from "./_run.ts";
import { bankConflicts, decodeFfma, parseCubin, parseSass } from "../../bench/sass_banks.ts";
import { elfSections } from "../../bench/sass_layout.ts";
import { nvccTest, runNvcc } from "../kernels/_nvcc.ts";

const at = (a: string) => `        /${"*"}${a}${"*"}/   `;
const SASS = [
  "\tcode for sm_90a",
  "\t\tFunction : first_kernel",
  `${at("0000")}FFMA R8, R24, R5.reuse, R9 ;   /${"*"} 0x000000c918b57223 ${"*"}/`,
  `        /${"*"} 0x004fe20000000005 ${"*"}/`,
  `${at("0010")}@P0 FFMA.FTZ R9, R25, R5, R13 ;`, // R5 from the cache: 1, 1 (R25, R13): a conflict
  `${at("0020")}LDS R6, [R2] ;`,
  `${at("0030")}FFMA R10, R26, R5, R14 ;`, // after an LDS: R5 read (1), R26 (2), R14 (2): a conflict
  "\t\tFunction : second_kernel",
  `${at("0000")}FFMA R8, R24, R5, RZ ;`, // RZ reads no bank: 0, 1
  `${at("0010")}FFMA R9, -R24, |R6|, R7 ;`, // 0, 2, 3
].join("\n");

Deno.test("sass_banks counts FFMAs with two reads in one bank per function, the reuse cache modelled", () => {
  const lines = parseSass(SASS);
  assert.deepEqual(lines.map((l) => `${l.fn}:${l.opcode}`), [
    "first_kernel:FFMA",
    "first_kernel:FFMA",
    "first_kernel:LDS",
    "first_kernel:FFMA",
    "second_kernel:FFMA",
    "second_kernel:FFMA",
  ]);
  assert.deepEqual(lines[5].sources, [{ reg: 24, reuse: false }, { reg: 6, reuse: false }, { reg: 7, reuse: false }]);
  assert.deepEqual(bankConflicts(lines, 4), [
    { fn: "first_kernel", banks: 4, ffma: 3, conflicted: 3 },
    { fn: "second_kernel", banks: 4, ffma: 2, conflicted: 0 },
  ]);
  assert.deepEqual(bankConflicts(lines, 4, 1), [
    { fn: "first_kernel", banks: 4, ffma: 1, conflicted: 1 },
    { fn: "second_kernel", banks: 4, ffma: 1, conflicted: 0 },
  ]);
  assert.deepEqual(
    bankConflicts(lines, 2).map((c) => c.conflicted),
    [3, 1],
    "two banks: R24 and R6 share bank 0 in the last FFMA",
  );
});

Deno.test("sass_banks' command prints a table, and exits 2 on a file without FFMAs or a bad option", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const good = `${dir}/k.sass`, empty = `${dir}/none.sass`;
    await Deno.writeTextFile(good, SASS);
    await Deno.writeTextFile(empty, "\t\tFunction : k\n");
    const ok = await runBench("sass_banks.ts", good);
    assert.equal(ok.code, 0);
    assert.match(ok.stdout, /\| first_kernel \| 3 \| 3 \(100 %\) \| 3 \(100 %\) \|/);
    const none = await runBench("sass_banks.ts", empty);
    assert.equal(none.code, 2);
    assert.match(none.stderr, /none\.sass: no FFMA in cuobjdump -sass text/);
    assert.equal((await runBench("sass_banks.ts", good, "--banks", "0")).code, 2);
    assert.equal((await runBench("sass_banks.ts", good, "--first", "x")).code, 2);
    const missing = await runBench("sass_banks.ts", `${dir}/absent.sass`);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /absent\.sass: /);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("sass_banks decodes an all-register FFMA and its reuse flags, RZ as no register, anything else as '?'", () => {
  const word = (lo: bigint, hi: bigint) => {
    const w = new Uint8Array(16), v = new DataView(w.buffer);
    v.setBigUint64(0, lo, true);
    v.setBigUint64(8, hi, true);
    return w;
  };
  // cuobjdump: FFMA R195, R24, R198, R195 ; /* 0x000000c618c37223 */ /* 0x000fc200000000c3 */
  assert.deepEqual(decodeFfma("k", word(0x000000c618c37223n, 0x000fc200000000c3n)).sources, [
    { reg: 24, reuse: false },
    { reg: 198, reuse: false },
    { reg: 195, reuse: false },
  ]);
  // The same with Ra = RZ and every reuse flag set.
  assert.deepEqual(decodeFfma("k", word(0x000000c6ffc37223n, 0x1c0fc200000000c3n)).sources, [
    { reuse: true },
    { reg: 198, reuse: true },
    { reg: 195, reuse: true },
  ]);
  // cuobjdump: WARPGROUP.DEPBAR.LE gsb0, 0x0 ; /* 0x00008000000079c5 */
  assert.equal(decodeFfma("k", word(0x00008000000079c5n, 0x000fe40000010000n)).opcode, "?");
});

await nvccTest("sass_banks reads the FFMAs of a cubin nvcc wrote", "go-sass-banks-", async (_t, dir) => {
  const cu = `${dir}/k.cu`, cubin = `${dir}/k.cubin`;
  await Deno.writeTextFile(
    cu,
    `__global__ void k(float* o, const float* a, const float* b) {
  const int i = threadIdx.x;
  o[i] = fmaf(a[i], b[i], o[i]);
}
`,
  );
  const r = await runNvcc(["-cubin", "-O3", "-gencode=arch=compute_90a,code=sm_90a", "-o", cubin, cu]);
  assert.ok(r.ok, r.log);
  const lines = parseCubin(elfSections(await Deno.readFile(cubin)));
  assert.deepEqual([...new Set(lines.map((l) => l.fn))], ["_Z1kPfPKfS1_"]);
  const [c] = bankConflicts(lines, 4);
  assert.equal(c.ffma, 1, "one FFMA with four register operands");
});
