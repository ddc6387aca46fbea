/**
 * Benchmark of the batch format conversions (issue 2): fp32 → E4M3 encode (`cuda_satfinite`) and E4M3 → fp32 decode,
 * single thread, measured in the same run as a `g++ -O2` C loop of the same table-lookup algorithm
 * (bench/c/encode_e4m3.c, compiled here into .cache/bench/). Targets: TS encode ≥ 0.5× the C loop and ≥ 100 M
 * elements/s. Times are wall-clock minima over `--reps` runs (reported numbers only; no reference bits depend on them).
 *
 * Usage: deno run -A bench/formats_bench.ts [--n 16777216] [--reps 7] [--write]   (--write appends to bench/RESULTS.md)
 * @module
 */
import { benchArgs } from "./_args.ts";
import { decodeArray, encodeArray, getConverter } from "../reference/formats/mod.ts";
import { Prng } from "../reference/random/prng.ts";

const { values: args } = benchArgs("usage: deno run -A bench/formats_bench.ts [--n 16777216] [--reps 7] [--write]", {
  options: {
    n: { type: "string", default: String(1 << 24) },
    reps: { type: "string", default: "7" },
    write: { type: "boolean" },
  },
});
const n = Number(args.n), reps = Number(args.reps);
if (!Number.isInteger(n) || n < 1 || !Number.isInteger(reps) || reps < 1) {
  throw new RangeError("--n and --reps must be positive integers");
}

const root = new URL("../", import.meta.url);
const cacheDir = new URL(".cache/bench/", root);
await Deno.mkdir(cacheDir, { recursive: true });

// Inputs: approximately normal values times 2^k, k in [-12, 10], so every E4M3 binade, subnormals and overflow occur.
const rng = new Prng(42);
const input = new Float32Array(n);
for (let i = 0; i < n; i++) input[i] = Math.fround(rng.normal() * 2 ** (rng.int(23) - 12));

// The same 2^17-entry table the batch encoder builds (from the exact scalar converter).
const conv = getConverter("cuda_satfinite", "e4m3");
const table = new Uint8Array(1 << 17);
for (let hi = 0; hi < 0x10000; hi++) {
  table[2 * hi] = conv((hi << 16) >>> 0);
  table[2 * hi + 1] = conv(((hi << 16) | 1) >>> 0);
}
const inPath = new URL("input.f32", cacheDir), tablePath = new URL("e4m3_satfinite_table.u8", cacheDir);
const outPath = new URL("c_out.u8", cacheDir), exe = new URL("encode_e4m3", cacheDir);
await Deno.writeFile(inPath, new Uint8Array(input.buffer));
await Deno.writeFile(tablePath, table);

function best(fn: () => void): number {
  fn(); // warm-up (JIT, table build)
  fn();
  let t = Infinity;
  for (let r = 0; r < reps; r++) {
    const t0 = performance.now();
    fn();
    t = Math.min(t, performance.now() - t0);
  }
  return t / 1000;
}

const codes = new Uint8Array(n);
const values = new Float32Array(n);
const tsEncode = n / best(() => encodeArray("cuda_satfinite", "e4m3", input, codes));
const tsDecode = n / best(() => decodeArray("e4m3", codes, values));

const cc = await new Deno.Command("g++", {
  args: ["-O2", "-x", "c++", new URL("bench/c/encode_e4m3.c", root).pathname, "-o", exe.pathname],
}).output();
if (!cc.success) throw new Error(`g++ failed: ${new TextDecoder().decode(cc.stderr)}`);
const run = await new Deno.Command(exe.pathname, {
  args: [inPath.pathname, tablePath.pathname, String(reps + 2), outPath.pathname],
}).output();
if (!run.success) throw new Error(`C loop failed: ${new TextDecoder().decode(run.stderr)}`);
const c = JSON.parse(new TextDecoder().decode(run.stdout));
const cCodes = await Deno.readFile(outPath);
let mismatches = 0;
for (let i = 0; i < n; i++) if (cCodes[i] !== codes[i]) mismatches++;

const M = (x: number) => (x / 1e6).toFixed(0);
const cpu = (() => {
  try {
    return Deno.readTextFileSync("/proc/cpuinfo").match(/model name\s*:\s*(.*)/)?.[1] ?? Deno.build.arch;
  } catch {
    return Deno.build.arch;
  }
})();
const ratio = tsEncode / c.encode_table_eps;
const report = [
  `| ${new Date().toISOString().slice(0, 10)} | ${cpu} | Deno ${Deno.version.deno} | ${n} | ${M(tsEncode)} | ${
    M(c.encode_table_eps)
  } | ` +
  `${M(c.encode_bits_eps)} | ${ratio.toFixed(2)} | ${M(tsDecode)} | ${M(c.decode_eps)} | ${mismatches} |`,
];
console.log(`fp32 → E4M3 (cuda_satfinite), ${n} elements, best of ${reps}:`);
console.log(`  TS encode      ${M(tsEncode)} M elements/s`);
console.log(`  C  table loop  ${M(c.encode_table_eps)} M elements/s   (TS/C = ${ratio.toFixed(2)})`);
console.log(
  `  C  bit loop    ${M(c.encode_bits_eps)} M elements/s   (C table vs bits differences: ${c.table_vs_bits_diff})`,
);
console.log(`  TS decode      ${M(tsDecode)} M elements/s;  C decode ${M(c.decode_eps)} M elements/s`);
console.log(`  codes TS vs C: ${mismatches} mismatches`);
console.log(
  `  targets: TS ≥ 0.5× C ${ratio >= 0.5 ? "met" : "NOT met"}; TS ≥ 100 M/s ${tsEncode >= 1e8 ? "met" : "NOT met"}`,
);
if (args.write) {
  const path = new URL("bench/RESULTS.md", root);
  let text = "";
  try {
    text = await Deno.readTextFile(path);
  } catch {
    text = "# Benchmark results\n";
  }
  const heading = "## formats_bench: fp32 → E4M3 batch encode / decode (single thread, M elements/s)";
  if (!text.includes(heading)) {
    text +=
      `\n${heading}\n\n| date | machine | runtime | n | TS encode | C table encode (g++ -O2) | C bit-algorithm encode | TS/C | ` +
      `TS decode | C decode | TS≠C codes |\n|---|---|---|---|---|---|---|---|---|---|---|\n`;
  }
  // append the row right after the table of this heading
  const at = text.indexOf(heading);
  const next = text.indexOf("\n## ", at + heading.length);
  const end = next < 0 ? text.length : next;
  const body = text.slice(0, end).replace(/\n*$/, "\n") + report[0] + "\n";
  await Deno.writeTextFile(path, body + text.slice(end));
  console.log(`appended to ${path.pathname}`);
}
if (mismatches !== 0 || c.table_vs_bits_diff !== 0) Deno.exit(1);
