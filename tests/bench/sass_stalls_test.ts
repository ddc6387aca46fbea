// bench/sass_stalls.ts: an Nsight Compute SASS page becomes the kernel's size, its stall reasons' shares, the opcode
// and reason shares of one execution band (the math warps' per-tile code), the instructions with the most samples and,
// where the page has the SourceCounters columns, the shared-memory wavefronts per instruction kind, one stall
// reason's samples per opcode, and the execution counts that hold the most samples (a prologue's band beside the K
// loop's); a file that is not a SASS page, a --wavefronts page without those columns, or a --reason
// the page does not have, is refused with its name and what is missing.
import assert from "node:assert/strict";
import { runBench } from "./_run.ts";
import {
  executionBands,
  formatSass,
  parseSassCsv,
  reasonByOpcode,
  sharedWavefronts,
  summarizeSass,
} from "../../bench/sass_stalls.ts";

const HEADER = '"Address","Source","Warp Stall Sampling (All Samples)","Warp Stall Sampling (Not-issued Samples)",' +
  '"Instructions Executed","stall_barrier","stall_long_sb","stall_wait","stall_barrier (Not Issued)"';
const PAGE = [
  '"Kernel Name","go_fp8_fast",',
  HEADER,
  '"0x00","      LDC R1, c[0x0][0x28]","1","1","1,584","0","0","1","0"',
  '"0x10","      WARPGROUP.DEPBAR.LE gsb0, 0x0","30","30","32,768","30","0","0","30"',
  '"0x20","@!P0  BRA 0x50","12","12","32,768","0","12","0","0"',
  '"0x30","      FFMA R2, R3, R4, R2","4","2","32,768","0","0","4","0"',
  '"0x40","      EXIT","0","0","0","0","0","0","0"',
].join("\n");

Deno.test("sass_stalls reads the SASS page: operands with commas, counts with thousands separators", () => {
  const rows = parseSassCsv(PAGE);
  assert.deepEqual(rows.map((r) => r.opcode), ["LDC", "WARPGROUP", "BRA", "FFMA", "EXIT"]);
  assert.equal(rows[0].source, "LDC R1, c[0x0][0x28]");
  assert.equal(rows[1].executed, 32768);
  assert.deepEqual(rows[2].reasons, { barrier: 0, long_sb: 12, wait: 0 }, "Not Issued columns are not reasons");
});

Deno.test("sass_stalls gives the kernel's size, the reasons' shares and one execution band's opcode shares", () => {
  const s = summarizeSass(parseSassCsv(PAGE), { hot: 16000, executions: [32000, 34000], top: 2 });
  assert.deepEqual([s.instructions, s.executed, s.hot, s.samples], [5, 4, 3, 47]);
  assert.deepEqual(s.reasons.map(([k]) => k), ["barrier", "long_sb", "wait"]);
  assert.equal(s.band!.samples, 46);
  assert.equal(s.band!.instructions, 3);
  assert.deepEqual(s.band!.shares[0], ["WARPGROUP barrier", 30 / 46]);
  assert.deepEqual(s.top.map((r) => r.address), ["0x10", "0x20"]);
  const text = formatSass(s);
  assert.match(text, /^instructions: 5 on the page, 4 executed, 3 executed at least 16000 times$/m);
  assert.match(text, /\| 12 \| 25\.5 % \| 32768 \| `@!P0 {2}BRA 0x50` \| long_sb 12 \|/);
  assert.match(text, /^instructions executed 32000-34000 times: 3, 46 samples; by opcode and reason: /m);
  assert.equal(s.matches, undefined, "no listing without --grep");
});

Deno.test("sass_stalls --sequence gives the band in page order as runs of one opcode with their samples", () => {
  const page = PAGE.replace(
    '"0x40","      EXIT","0"',
    '"0x38","      FFMA R5, R3, R4, R5","2","2","32,768","0","0","2","0"\n"0x40","      EXIT","0"',
  );
  const s = summarizeSass(parseSassCsv(page), { executions: [32768, 32768], sequence: true });
  assert.deepEqual(s.band!.sequence, [["WARPGROUP", 1, 30], ["BRA", 1, 12], ["FFMA", 2, 6]]);
  assert.match(formatSass(s), /^in page order \(opcode×run \(samples\)\): WARPGROUP \(30\) BRA \(12\) FFMA×2 \(6\)$/m);
  assert.equal(summarizeSass(parseSassCsv(page), { executions: [32768, 32768] }).band!.sequence, undefined);
});

Deno.test("sass_stalls --grep lists the matching instructions in page order with their executions", () => {
  const s = summarizeSass(parseSassCsv(PAGE), { grep: /BRA|EXIT/ });
  assert.deepEqual(s.matches!.map((r) => [r.address, r.executed, r.samples]), [["0x20", 32768, 12], ["0x40", 0, 0]]);
  assert.match(formatSass(s), /^\| 0x20 \| 32768 \| 12 \| `@!P0 {2}BRA 0x50` \|$/m);
});

const WAVE_PAGE = [
  '"Kernel Name","go_fp8_fast",',
  '"Address","Source","Warp Stall Sampling (All Samples)","Instructions Executed","L1 Wavefronts Shared Excessive",' +
  '"L1 Wavefronts Shared","L1 Wavefronts Shared Ideal","stall_wait"',
  '"0x00","      QGMMA.64x128x32.F32.E4M3.E4M3 R24, gdesc[UR4], R24, gsb0","5","1,024","0","12,288","12,288","5"',
  '"0x10","      LDS R200, [UR45]","1","2,048","0","2,048","2,048","1"',
  '"0x20","@!P0  LDS R201, [UR46]","0","1,024","0","3,072","1,024","0"',
  '"0x30","      FFMA R2, R3, R4, R2","4","32,768","","","","4"',
].join("\n");

Deno.test("sass_stalls --wavefronts sums shared-memory wavefronts per mnemonic, with the excess over the ideal", () => {
  const rows = parseSassCsv(WAVE_PAGE);
  assert.deepEqual(rows.map((r) => r.mnemonic), ["QGMMA.64x128x32.F32.E4M3.E4M3", "LDS", "LDS", "FFMA"]);
  assert.deepEqual([rows[2].wavefronts, rows[2].wavefrontsIdeal], [3072, 1024], "predicated: the opcode after it");
  const s = summarizeSass(rows, { wavefronts: true });
  assert.deepEqual([s.shared!.total, s.shared!.ideal], [17408, 15360]);
  assert.deepEqual(s.shared!.kinds.map((k) => [k.mnemonic, k.executed, k.wavefronts, k.ideal]), [
    ["QGMMA.64x128x32.F32.E4M3.E4M3", 1024, 12288, 12288],
    ["LDS", 3072, 5120, 3072],
  ], "FFMA moved none: left out");
  const text = formatSass(s);
  assert.match(text, /^shared-memory wavefronts: 1\.741e\+4 \(ideal 1\.536e\+4, excess 2\.048e\+3\)$/m);
  assert.match(
    text,
    /^\| `QGMMA\.64x128x32\.F32\.E4M3\.E4M3` \| 1\.024e\+3 \| 1\.229e\+4 \| 12\.00 \| 0\.000e\+0 \|$/m,
  );
  assert.equal(summarizeSass(rows).shared, undefined, "no wavefront table without --wavefronts");
  assert.throws(() => sharedWavefronts(parseSassCsv(PAGE)), /no column "L1 Wavefronts Shared"/);
});

Deno.test("sass_stalls --reason gives one stall reason's samples per opcode over the page, most first", () => {
  const rows = parseSassCsv(PAGE);
  const s = summarizeSass(rows, { reason: "wait" });
  assert.deepEqual(s.byOpcode, { reason: "wait", samples: 5, opcodes: [["FFMA", 4], ["LDC", 1]] });
  assert.match(formatSass(s), /^samples of wait by opcode \(5\): FFMA 4, LDC 1$/m);
  assert.match(
    formatSass(summarizeSass(rows, { reason: "long_sb" })),
    /^samples of long_sb by opcode \(12\): BRA 12$/m,
  );
  assert.equal(summarizeSass(rows).byOpcode, undefined, "no listing without --reason");
  assert.throws(() => reasonByOpcode(rows, "math"), /no stall reason "math" \(the page's: barrier, long_sb, wait\)/);
});

Deno.test("sass_stalls --bands gives the execution counts with the most samples, each with its leading reasons", () => {
  // Once per CTA (1,584: the prologue's band) beside the K loop's 32,768.
  const page = PAGE.replace(
    '"0x40","      EXIT","0"',
    '"0x38","      UTMALDG.2D [UR8], [UR4]","9","9","1,584","0","0","9","0"\n"0x40","      EXIT","0"',
  );
  const s = summarizeSass(parseSassCsv(page), { bands: 5 });
  assert.deepEqual(s.bands!.map((b) => [b.executed, b.instructions, b.samples]), [[32768, 3, 46], [1584, 2, 10]]);
  assert.deepEqual(s.bands![1].reasons, [["wait", 1]]);
  assert.match(formatSass(s), /^\| 1584 \| 2 \| 10 \| 17\.9 % \| wait 100\.0 % \|$/m);
  assert.deepEqual(executionBands(parseSassCsv(page), 1).map((b) => b.executed), [32768], "the count is a limit");
  assert.equal(summarizeSass(parseSassCsv(page)).bands, undefined, "no bands without --bands");
});

Deno.test("sass_stalls' command exits 2 naming the file that is not a SASS page", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(`${dir}/raw.csv`, '"Kernel Name","k",\n"Address","Source","Instructions Executed"\n');
    const bad = await runBench("sass_stalls.ts", `${dir}/raw.csv`);
    assert.equal(bad.code, 2);
    assert.match(
      bad.stderr,
      /raw\.csv: SASS page CSV: no column "Warp Stall Sampling \(All Samples\)"/,
    );
    assert.equal((await runBench("sass_stalls.ts", `${dir}/raw.csv`, "--executions", "12")).code, 2);
    await Deno.writeTextFile(`${dir}/p1.sass.csv`, PAGE);
    const badGrep = await runBench("sass_stalls.ts", `${dir}/p1.sass.csv`, "--grep", "(");
    assert.equal(badGrep.code, 2);
    assert.match(badGrep.stderr, /^--grep: /);
    const seqAlone = await runBench("sass_stalls.ts", `${dir}/p1.sass.csv`, "--sequence");
    assert.equal(seqAlone.code, 2, "--sequence without --executions");
    assert.match(seqAlone.stderr, /--sequence \(with --executions\)/);
    const noWave = await runBench("sass_stalls.ts", `${dir}/p1.sass.csv`, "--wavefronts");
    assert.equal(noWave.code, 2, "--wavefronts on a page without the SourceCounters columns");
    assert.match(
      noWave.stderr,
      /p1\.sass\.csv: SASS page CSV: no column "L1 Wavefronts Shared"/,
    );
    for (const n of ["0", "two", "1.5"]) {
      const badBands = await runBench("sass_stalls.ts", `${dir}/p1.sass.csv`, "--bands", n);
      assert.equal(badBands.code, 2, `--bands ${n}`);
      assert.match(badBands.stderr, /\[--bands N\]/);
    }
    const noReason = await runBench("sass_stalls.ts", `${dir}/p1.sass.csv`, "--reason", "gmma");
    assert.equal(noReason.code, 2, "--reason the page does not have");
    assert.match(noReason.stderr, /p1\.sass\.csv: SASS page CSV: no stall reason "gmma" \(the page's: barrier, /);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
