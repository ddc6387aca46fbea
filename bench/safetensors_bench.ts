/**
 * Benchmark of the safetensors header parser against `JSON.parse` on a hostile-size header: 1.5 M tensors, ~84 MB
 * (each `"w<base36>":{"dtype":"U8","shape":[0],"data_offsets":[0,0]}`, about 56 bytes, which keeps 1.5 M entries
 * under the format's 100 MB header limit). Target (the input-hardening issue): the strict parse no slower than 2× `JSON.parse` of the
 * same text, memory proportional to the header.
 *
 * Usage:
 * - `deno bench -A bench/safetensors_bench.ts`: Deno.bench, `JSON.parse` as the baseline of the "header" group;
 * - `deno run -A bench/safetensors_bench.ts [--reps 5]`: alternates the two in one process and prints the ratio of
 *   the best times, plus the whole-header check (UTF-8 decode, strict parse, every entry and offset check) and a
 *   full `parseSafetensors` of the 1.5 M tensors.
 *
 * Measured on the 2-core development VM (AMD EPYC, Deno 2.9.6, V8 15.0):
 * - `deno run` mode, best of 5: `JSON.parse` 1.43 s; strict parse 0.55 s (0.38×); whole-header check 0.60 s
 *   (0.42×); full parseSafetensors of the 1.5 M tensors 4.96 s (3.5×; it allocates 1.5 M Tensors and their storage);
 * - `deno bench`, averages: `JSON.parse` 1.9 s; strict parse 0.56 s (0.29×); whole-header check 0.74 s (0.39×);
 * - memory in a fresh process, growth of RSS while the result is alive: `JSON.parse` 377 MB, strict parse 155 MB,
 *   full parseSafetensors 1.1 GB.
 * Before this parser (a generic strict parser building Maps, and the file read whole): strict parse 1.7–2.0×
 * `JSON.parse` measured here (2.6× in the issue, which also reports 53 s and 3.7 GB for the whole read). Times are
 * wall-clock and noisy; no test depends on them.
 * @module
 */
import { benchArgs } from "./_args.ts";
import { parseHeaderJson } from "../io/_strict_json.ts";
import { parseSafetensors, SafetensorsError } from "../io/mod.ts";

/** The header text: `count` zero-size U8 tensors and a little metadata. */
export function bigHeader(count = 1_500_000): string {
  const parts: string[] = [];
  for (let i = 0; i < count; i++) {
    parts.push(`"w${i.toString(36)}":{"dtype":"U8","shape":[0],"data_offsets":[0,0]}`);
  }
  return `{"__metadata__":{"format":"pt"},${parts.join(",")}}`;
}

/** A file around `header` with `extra` bytes of data (1 makes every check run, then fail at the last one). */
function fileOf(header: string, extra: number): Uint8Array {
  const h = new TextEncoder().encode(header);
  const out = new Uint8Array(8 + h.length + extra);
  new DataView(out.buffer).setBigUint64(0, BigInt(h.length), true);
  out.set(h, 8);
  return out;
}

/** Runs every check of the header (the trailing byte is refused only after all of them). */
function checkWholeHeader(file: Uint8Array): void {
  try {
    parseSafetensors(file, "bench");
  } catch (e) {
    if (e instanceof SafetensorsError && /hole in the data: bytes \[0, 1\) at the end/.test(e.fault)) return;
    throw e;
  }
  throw new Error("the header checks accepted a file with a stray data byte");
}

const text = bigHeader();
const checkFile = fileOf(text, 1);
const wholeFile = fileOf(text, 0);

Deno.bench({ name: "JSON.parse", group: "header", baseline: true, n: 3, warmup: 1, fn: () => void JSON.parse(text) });
Deno.bench({
  name: "strict parse (parseHeaderJson)",
  group: "header",
  n: 3,
  warmup: 1,
  fn: () => void parseHeaderJson(text),
});
Deno.bench({ name: "whole-header check", group: "header", n: 3, warmup: 1, fn: () => checkWholeHeader(checkFile) });
Deno.bench({ name: "parseSafetensors, 1.5 M tensors", n: 2, warmup: 1, fn: () => void parseSafetensors(wholeFile) });

if (import.meta.main) {
  const { values } = benchArgs("usage: deno run -A bench/safetensors_bench.ts [--reps 5]", {
    options: { reps: { type: "string", default: "5" } },
  });
  const reps = Number(values.reps);
  const time = (fn: () => void) => {
    const t = performance.now();
    fn();
    return performance.now() - t;
  };
  const best = { json: Infinity, strict: Infinity, check: Infinity, full: Infinity };
  for (let r = 0; r < reps; r++) {
    best.json = Math.min(best.json, time(() => JSON.parse(text)));
    best.strict = Math.min(best.strict, time(() => parseHeaderJson(text)));
    best.check = Math.min(best.check, time(() => checkWholeHeader(checkFile)));
    if (r < 2) best.full = Math.min(best.full, time(() => parseSafetensors(wholeFile)));
  }
  const ms = (x: number) => `${(x / 1000).toFixed(2)} s`;
  console.log(`header: ${(text.length / 1e6).toFixed(1)} MB, 1.5 M tensors; best of ${reps}`);
  console.log(`JSON.parse            ${ms(best.json)}`);
  console.log(`strict parse          ${ms(best.strict)}  ${(best.strict / best.json).toFixed(2)}× JSON.parse`);
  console.log(`whole-header check    ${ms(best.check)}  ${(best.check / best.json).toFixed(2)}× JSON.parse`);
  console.log(`parseSafetensors      ${ms(best.full)}  ${(best.full / best.json).toFixed(2)}× JSON.parse`);
  console.log(`RSS ${(Deno.memoryUsage().rss / 2 ** 20).toFixed(0)} MiB`);
}
