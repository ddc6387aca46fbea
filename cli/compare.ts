/**
 * `oracle compare EXPECTED ACTUAL [--mode bitwise|calc-diff=X|ulp=N] [--nan bits|class] [--json FILE]`: compares the
 * tensors of the same name in two safetensors files and reports, per tensor, the element count, the mismatch count,
 * the first mismatch (coordinate, both values, both bit patterns), the largest ULP distance and DeepGEMM's
 * `calc_diff` (deepgemm-ops.md §9), and for a tensor with mismatches its mismatch map: per 128×128 tile (per group
 * of a 3-D tensor) the count, bounding box and worst element, and the pattern in one line (one tile, a row or column
 * band, the tail block, NaN/Inf handling, all tiles; `reference/compare/mismatch_map.ts`). I16 / U16 tensors (a BF16
 * output saved as its `torch.int16` view) compare as 16-bit integers, also against a BF16 or F16 tensor of the other
 * file. The comparison itself is `reference/compare/compare_tensors.ts`. Exit status 1 when any tensor is outside the
 * tolerance, 2 on unusable input (unreadable files, a missing name, different dtypes or shapes).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseCompareMode } from "./compare.ts";
 * assert.deepEqual(parseCompareMode("ulp=2"), { kind: "ulp", limit: 2 });
 * assert.deepEqual(parseCompareMode("calc-diff=1e-3"), { kind: "calc-diff", limit: 0.001 });
 * ```
 * @module
 */
import { formatMismatchMap } from "../reference/compare/mismatch_map.ts";
import { type CompareMode, compareTensors, type TensorComparison } from "../reference/compare/compare_tensors.ts";
import { int16Reading } from "../reference/compare/compared_dtype.ts";
import type { Tensor } from "../reference/tensor/mod.ts";
import { readSafetensors } from "../io/mod.ts";
import { userPath } from "./paths.ts";
import {
  type CliIo,
  type Command,
  EXIT,
  expectPositionals,
  parseCommandArgs,
  parseCount,
  tensorPrefix,
  UsageError,
} from "./command.ts";

/**
 * Parses `--mode`.
 * @param text `bitwise`, `calc-diff=X` or `ulp=N`
 * @returns the mode
 */
export function parseCompareMode(text: string): CompareMode {
  if (text === "bitwise") return { kind: "bitwise" };
  const m = /^(calc-diff|ulp)=(.+)$/.exec(text);
  if (m) {
    const limit = Number(m[2]);
    if (m[1] === "ulp" && /^(0|[1-9][0-9]*)$/.test(m[2]) && Number.isSafeInteger(limit)) return { kind: "ulp", limit };
    if (m[1] === "calc-diff" && m[2].trim() !== "" && Number.isFinite(limit) && limit >= 0) {
      return { kind: "calc-diff", limit };
    }
  }
  throw new UsageError(`--mode ${JSON.stringify(text)} is not bitwise, calc-diff=X (X ≥ 0) or ulp=N (integer N ≥ 0)`);
}

/**
 * Compares one pair of tensors: as 16-bit integers when either is I16 / U16, else by dtype.
 * @throws {UsageError} for different dtypes or shapes (exit status 2)
 */
function comparePair(
  name: string,
  expected: Tensor,
  actual: Tensor,
  mode: CompareMode,
  nan: "bits" | "class",
): TensorComparison {
  try {
    const asInt16 = int16Reading(expected.dtype, actual.dtype);
    return compareTensors(name, expected, actual, mode, nan, true, asInt16);
  } catch (e) {
    if (!(e instanceof RangeError)) throw e;
    throw new UsageError(e.message.startsWith("tensor ") ? e.message : `tensor "${name}": ${e.message}`);
  }
}

const USAGE = `Usage: oracle compare EXPECTED ACTUAL [--mode bitwise|calc-diff=X|ulp=N] [--nan bits|class] [--json FILE]
                      [--expected-prefix P]

Compares every tensor of the safetensors file EXPECTED with the tensor of the same name in ACTUAL.
Per tensor: element count, mismatches, the first mismatch (coordinate, both values, both bit patterns),
the largest ULP distance and DeepGEMM's calc_diff = 1 - 2·Σxy / Σ(x²+y²); for a tensor with mismatches, where
they are: per 128×128 tile (per group of a 3-D tensor) the count, bounding box and worst element, and the pattern
in one line (one tile, a row or column band, the tail block, NaN/Inf handling, all tiles, scattered).
I16 / U16 tensors (a BF16 output saved as its torch.int16 view) compare as 16-bit integers, also against a
BF16 or F16 tensor of the other file: by value, with |difference| as the ULP distance.

  --mode bitwise      every bit equal (default)
  --mode calc-diff=X  calc_diff ≤ X (DeepGEMM's test thresholds: 1e-3 FP8, 1e-2 one FP4 operand, 2e-2 both)
  --mode ulp=N        every element within N units in the last place of its format
  --nan class         any NaN equals any NaN (NaN payloads differ between libraries; default: bits)
  --json FILE         also write the report as JSON (with each tensor's tile map)
  --tiles N           tiles listed per tensor with mismatches (default 4; 0: only the one-line pattern)
  --expected-prefix P only the tensors of EXPECTED named P<name>, each compared with <name> in ACTUAL: a golden
                      fixture stores each model's outputs as <model>/<name>, so
                      \`oracle compare FIXTURE MY_OUTPUT --expected-prefix sm90_1d2d/\` checks a kernel's d

Example: the output fp8_gemm_nt's reference computes on a golden case (it stands in for a kernel's output here),
checked against the bits the case stores for DeepGEMM's SM90 kernel:
  deno task oracle run fp8_gemm_nt fixtures/fp8_gemm_nt/fp8_gemm_nt_m16_n128_k256_fp32.safetensors out.safetensors
  deno task oracle compare fixtures/fp8_gemm_nt/fp8_gemm_nt_m16_n128_k256_fp32.safetensors out.safetensors --expected-prefix sm90_1d2d/

Exit status: 0 all inside the tolerance, 1 any outside, 2 unusable input (unreadable file, a tensor of
EXPECTED missing from ACTUAL, different dtypes or shapes).`;

function jsonNumber(x: number): number | string {
  return Number.isFinite(x) ? x : String(x);
}

function showValue(v: number | string): string {
  return typeof v === "number" && Object.is(v, -0) ? "-0" : String(v);
}

async function run(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseCommandArgs(args, {
    mode: { type: "string" },
    nan: { type: "string" },
    json: { type: "string" },
    "expected-prefix": { type: "string" },
    tiles: { type: "string" },
  }, "compare");
  if (values.help) {
    io.stdout(USAGE + "\n");
    return EXIT.ok;
  }
  expectPositionals("compare", positionals, ["EXPECTED", "ACTUAL"]);
  const mode = parseCompareMode((values.mode as string | undefined) ?? "bitwise");
  const nan = (values.nan as string | undefined) ?? "bits";
  const tiles = values.tiles === undefined ? 4 : parseCount("--tiles", values.tiles as string);
  if (nan !== "bits" && nan !== "class") throw new UsageError(`--nan ${JSON.stringify(nan)} is not bits or class`);
  // The files the user named resolve against the caller's directory (INIT_CWD under deno task, cli/paths.ts).
  const [expectedPath, actualPath] = positionals.map((p) => userPath(io, p));
  const expected = await readSafetensors(expectedPath);
  const actual = await readSafetensors(actualPath);
  // "sm90_1d2d" and "sm90_1d2d/" name the same group of tensors.
  const prefix = tensorPrefix((values["expected-prefix"] as string | undefined) ?? "", expected.tensors.keys());
  const wanted = [...expected.tensors].filter(([name]) => name.startsWith(prefix));
  if (wanted.length === 0) {
    throw new UsageError(`${expectedPath}: no tensor name starts with ${JSON.stringify(prefix)}`);
  }
  const results: TensorComparison[] = [];
  for (const [full, e] of wanted) {
    const name = full.slice(prefix.length);
    const a = actual.tensors.get(name);
    if (a === undefined) {
      throw new UsageError(`${actualPath}: has no tensor "${name}" (present in ${expectedPath} as "${full}")`);
    }
    results.push(comparePair(name, e, a, mode, nan));
  }
  const compared = new Set(wanted.map(([full]) => full.slice(prefix.length)));
  const extra = [...actual.tensors.keys()].filter((k) => !compared.has(k));
  const lines: string[] = [];
  for (const r of results) {
    lines.push(
      `${r.pass ? "PASS" : "FAIL"} ${r.name} ${r.dtype} [${
        r.shape.join(",")
      }] elements ${r.elements} mismatches ${r.mismatches}` +
        ` max_ulp ${r.maxUlp} calc_diff ${r.calcDiff}`,
    );
    if (r.first) {
      lines.push(
        `  first mismatch at [${r.first.coordinate.join(", ")}]: expected ${
          showValue(r.first.expected.value)
        } (${r.first.expected.bits}),` +
          ` actual ${showValue(r.first.actual.value)} (${r.first.actual.bits})`,
      );
    }
    if (r.map) {
      const [head, ...rest] = formatMismatchMap(r.name, r.map, tiles);
      lines.push(`  where: ${head.slice(head.indexOf(": ") + 2)}`, ...rest.map((l) => `  ${l}`));
    }
  }
  if (extra.length > 0) lines.push(`note: ${actualPath} has tensors not in ${expectedPath}: ${extra.join(", ")}`);
  const failed = results.filter((r) => !r.pass).length;
  const modeText = mode.kind === "bitwise" ? "bitwise" : `${mode.kind}=${mode.limit}`;
  lines.push(
    `${failed === 0 ? "ok" : "FAILED"}: ${results.length - failed} of ${results.length} tensors inside ${modeText}`,
  );
  io.stdout(lines.join("\n") + "\n");
  if (typeof values.json === "string") {
    const report = {
      expected: expectedPath,
      actual: actualPath,
      mode: modeText,
      nan,
      pass: failed === 0,
      tensors: results.map((r) => ({
        ...r,
        maxUlp: jsonNumber(r.maxUlp),
        calcDiff: jsonNumber(r.calcDiff),
        first: r.first && {
          coordinate: r.first.coordinate,
          expected: {
            value: typeof r.first.expected.value === "number"
              ? jsonNumber(r.first.expected.value)
              : r.first.expected.value,
            bits: r.first.expected.bits,
          },
          actual: {
            value: typeof r.first.actual.value === "number" ? jsonNumber(r.first.actual.value) : r.first.actual.value,
            bits: r.first.actual.bits,
          },
        },
      })),
      extraTensors: extra,
    };
    await Deno.writeTextFile(userPath(io, values.json), JSON.stringify(report, null, 2) + "\n");
  }
  return failed === 0 ? EXIT.ok : EXIT.failure;
}

/** The `compare` subcommand. */
export const compareCommand: Command = Object.freeze({
  name: "compare",
  summary: "compare two safetensors files tensor by tensor (bitwise, calc_diff or ULP tolerance)",
  usage: USAGE,
  run,
});
