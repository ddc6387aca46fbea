/**
 * `oracle compare EXPECTED ACTUAL [--mode bitwise|calc-diff=X|ulp=N] [--nan bits|class] [--json FILE]`: compares the
 * tensors of the same name in two safetensors files and reports, per tensor, the element count, the mismatch count,
 * the first mismatch (coordinate, both values, both bit patterns), the largest ULP distance and DeepGEMM's
 * `calc_diff` (deepgemm-ops.md §9), and for a tensor with mismatches its mismatch map: per 128×128 tile (per group
 * of a 3-D tensor) the count, bounding box and worst element, and the pattern in one line (one tile, a row or column
 * band, the tail block, NaN/Inf handling, all tiles; `reference/compare/mismatch_map.ts`). Exit status 1 when any
 * tensor is outside the tolerance, 2 on unusable input (unreadable files, a missing name, different dtypes or shapes).
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
import { calcDiff, compareBitwise, unravelIndex } from "../reference/compare/mod.ts";
import {
  formatMismatchMap,
  type MismatchMap,
  mismatchMap,
  type MismatchMapOptions,
} from "../reference/compare/mismatch_map.ts";
import type { FormatName } from "../reference/formats/mod.ts";
import type { DType, Tensor } from "../reference/tensor/mod.ts";
import { rowMajorData, toFloat32 } from "../reference/tensor/values.ts";
import { readSafetensors } from "../io/mod.ts";
import {
  type CliIo,
  type Command,
  EXIT,
  expectPositionals,
  parseCommandArgs,
  parseCount,
  UsageError,
} from "./command.ts";

/** A tolerance: bit-exact, DeepGEMM's `calc_diff ≤ limit`, or every element within `limit` ULPs. */
export type CompareMode = { kind: "bitwise" } | { kind: "calc-diff"; limit: number } | { kind: "ulp"; limit: number };

/** One side of the first mismatch. */
export interface ReportedValue {
  /** The element's value (decoded; integers as numbers). */
  value: number | string;
  /** Its bit pattern, hexadecimal (`0x3f80`). */
  bits: string;
}

/** The comparison of one tensor. */
export interface TensorComparison {
  /** Tensor name. */
  name: string;
  /** Its dtype. */
  dtype: DType;
  /** Its shape. */
  shape: number[];
  /** Number of elements. */
  elements: number;
  /** Elements whose bits differ (NaN spellings count unless `--nan class`). */
  mismatches: number;
  /** The first mismatch in row-major order, or null. */
  first: { coordinate: number[]; expected: ReportedValue; actual: ReportedValue } | null;
  /** Largest ULP distance (Infinity when a NaN meets a number). */
  maxUlp: number;
  /** DeepGEMM's calc_diff of the decoded values (NaN when either side holds NaN or ∞). */
  calcDiff: number;
  /** Inside the tolerance? */
  pass: boolean;
  /** Where the mismatches are (per 128×128 tile), when there are any and `withMap` was asked. */
  map?: MismatchMap;
}

/** The format-table name of each float dtype. */
const FORMAT_OF: Partial<Record<DType, FormatName>> = {
  f32: "f32",
  bf16: "bf16",
  f16: "fp16",
  e4m3: "e4m3",
  e5m2: "e5m2",
  ue8m0: "ue8m0",
  e2m1: "e2m1",
};

const HEX_DIGITS: Record<DType, number> = {
  f32: 8,
  bf16: 4,
  f16: 4,
  e4m3: 2,
  e5m2: 2,
  ue8m0: 2,
  e2m1: 1,
  i32: 8,
  i64: 16,
  u8: 2,
  i8: 2,
};

function hex(dtype: DType, bits: number | bigint): string {
  const width = HEX_DIGITS[dtype];
  const u = typeof bits === "bigint" ? BigInt.asUintN(64, bits) : BigInt(bits >>> 0) & ((1n << BigInt(4 * width)) - 1n);
  return "0x" + u.toString(16).padStart(width, "0");
}

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
 * Compares two tensors of the same dtype and shape.
 * @param name the tensor name (for the report)
 * @param expected the reference tensor
 * @param actual the tensor under test
 * @param mode the tolerance
 * @param nan `bits`: NaN spellings must match; `class`: any NaN equals any NaN
 * @param withMap also map the mismatches per tile (`true`, or the map's options: masked rows, group label)
 * @returns the comparison
 */
export function compareTensors(
  name: string,
  expected: Tensor,
  actual: Tensor,
  mode: CompareMode,
  nan: "bits" | "class" = "bits",
  withMap: boolean | MismatchMapOptions = false,
): TensorComparison {
  if (expected.dtype !== actual.dtype) {
    throw new UsageError(`tensor "${name}": dtypes differ (expected ${expected.dtype}, actual ${actual.dtype})`);
  }
  if (expected.shape.length !== actual.shape.length || expected.shape.some((d, i) => d !== actual.shape[i])) {
    throw new UsageError(
      `tensor "${name}": shapes differ (expected [${expected.shape.join(", ")}], actual [${actual.shape.join(", ")}])`,
    );
  }
  const dtype = expected.dtype;
  const shape = [...expected.shape];
  const format = FORMAT_OF[dtype];
  let mismatches = 0, maxUlp = 0;
  let first: TensorComparison["first"] = null;
  let diff: number;
  if (format !== undefined) {
    const e = rowMajorData(expected) as Uint8Array | Uint16Array | Float32Array;
    const a = rowMajorData(actual) as Uint8Array | Uint16Array | Float32Array;
    const r = compareBitwise(format, e, a, { shape, nan });
    mismatches = r.mismatches;
    maxUlp = r.maxUlp;
    if (r.first) {
      first = {
        coordinate: [...r.first.coordinate],
        expected: { value: r.first.expected.value, bits: hex(dtype, r.first.expected.bits) },
        actual: { value: r.first.actual.value, bits: hex(dtype, r.first.actual.bits) },
      };
    }
    diff = calcDiff(toFloat32(expected), toFloat32(actual));
  } else {
    const e = rowMajorData(expected) as Int32Array | Uint8Array | Int8Array | BigInt64Array;
    const a = rowMajorData(actual) as Int32Array | Uint8Array | Int8Array | BigInt64Array;
    const ev = new Float64Array(e.length), av = new Float64Array(a.length);
    for (let i = 0; i < e.length; i++) {
      const x = e[i], y = a[i];
      ev[i] = Number(x);
      av[i] = Number(y);
      if (x === y) continue;
      mismatches++;
      const d = typeof x === "bigint"
        ? Number(x > (y as bigint) ? x - (y as bigint) : (y as bigint) - x)
        : Math.abs(x - (y as number));
      if (d > maxUlp) maxUlp = d;
      if (first === null) {
        first = {
          coordinate: unravelIndex(i, shape),
          expected: { value: typeof x === "bigint" ? x.toString() : x, bits: hex(dtype, x) },
          actual: { value: typeof y === "bigint" ? y.toString() : y, bits: hex(dtype, y) },
        };
      }
    }
    diff = calcDiff(ev, av);
  }
  const pass = mode.kind === "bitwise"
    ? mismatches === 0
    : mode.kind === "ulp"
    ? maxUlp <= mode.limit
    : mismatches === 0 || diff <= mode.limit;
  const r: TensorComparison = {
    name,
    dtype,
    shape,
    elements: expected.numel,
    mismatches,
    first,
    maxUlp,
    calcDiff: diff,
    pass,
  };
  if (withMap !== false && mismatches > 0) {
    r.map = mismatchMap(expected, actual, { ...(typeof withMap === "object" ? withMap : {}), nan });
  }
  return r;
}

const USAGE = `Usage: oracle compare EXPECTED ACTUAL [--mode bitwise|calc-diff=X|ulp=N] [--nan bits|class] [--json FILE]
                      [--expected-prefix P]

Compares every tensor of the safetensors file EXPECTED with the tensor of the same name in ACTUAL.
Per tensor: element count, mismatches, the first mismatch (coordinate, both values, both bit patterns),
the largest ULP distance and DeepGEMM's calc_diff = 1 - 2·Σxy / Σ(x²+y²); for a tensor with mismatches, where
they are: per 128×128 tile (per group of a 3-D tensor) the count, bounding box and worst element, and the pattern
in one line (one tile, a row or column band, the tail block, NaN/Inf handling, all tiles, scattered).

  --mode bitwise      every bit equal (default)
  --mode calc-diff=X  calc_diff ≤ X (DeepGEMM's test thresholds: 1e-3 FP8, 1e-2 one FP4 operand, 2e-2 both)
  --mode ulp=N        every element within N units in the last place of its format
  --nan class         any NaN equals any NaN (NaN payloads differ between libraries; default: bits)
  --json FILE         also write the report as JSON (with each tensor's tile map)
  --tiles N           tiles listed per tensor with mismatches (default 4; 0: only the one-line pattern)
  --expected-prefix P only the tensors of EXPECTED named P<name>, each compared with <name> in ACTUAL: a golden
                      fixture stores each model's outputs as <model>/<name>, so
                      \`oracle compare FIXTURE MY_OUTPUT --expected-prefix sm90_1d2d/\` checks a kernel's d

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
  const [expectedPath, actualPath] = positionals;
  const expected = await readSafetensors(expectedPath);
  const actual = await readSafetensors(actualPath);
  const prefix = (values["expected-prefix"] as string | undefined) ?? "";
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
    results.push(compareTensors(name, e, a, mode, nan, true));
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
    await Deno.writeTextFile(values.json, JSON.stringify(report, null, 2) + "\n");
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
