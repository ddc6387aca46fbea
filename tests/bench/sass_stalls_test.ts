// bench/sass_stalls.ts: an Nsight Compute SASS page becomes the kernel's size, its stall reasons' shares, the opcode
// and reason shares of one execution band (the math warps' per-tile code) and the instructions with the most samples;
// a file that is not a SASS page is refused with its name and the missing column.
import assert from "node:assert/strict";
import { formatSass, parseSassCsv, summarizeSass } from "../../bench/sass_stalls.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
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

Deno.test("sass_stalls' command exits 2 naming the file that is not a SASS page", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(`${dir}/raw.csv`, '"Kernel Name","k",\n"Address","Source","Instructions Executed"\n');
    const run = (...args: string[]) =>
      new Deno.Command(Deno.execPath(), {
        args: ["run", "-A", `${ROOT}bench/sass_stalls.ts`, ...args],
        stderr: "piped",
      })
        .output();
    const bad = await run(`${dir}/raw.csv`);
    assert.equal(bad.code, 2);
    assert.match(
      new TextDecoder().decode(bad.stderr),
      /raw\.csv: SASS page CSV: no column "Warp Stall Sampling \(All Samples\)"/,
    );
    assert.equal((await run(`${dir}/raw.csv`, "--executions", "12")).code, 2);
    await Deno.writeTextFile(`${dir}/p1.sass.csv`, PAGE);
    const badGrep = await run(`${dir}/p1.sass.csv`, "--grep", "(");
    assert.equal(badGrep.code, 2);
    assert.match(new TextDecoder().decode(badGrep.stderr), /^--grep: /);
    const seqAlone = await run(`${dir}/p1.sass.csv`, "--sequence");
    assert.equal(seqAlone.code, 2, "--sequence without --executions");
    assert.match(new TextDecoder().decode(seqAlone.stderr), /--sequence \(with --executions\)/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
