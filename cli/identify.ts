/**
 * `oracle identify OP INPUT ACTUAL [--actual-prefix P] [--json FILE] [--top N] [--seed N] [--max-split-k S]
 * [--max-full N] [--<scalar> VALUE]...`: which rounding behaviour produced ACTUAL. Searches the model space of OP on
 * the tensors of INPUT (`reference/identify/`: every kernel model, tensor-core profile, promotion interval, split-K
 * factor, output rounding) and prints every variant that reproduces ACTUAL's outputs bit for bit, named by the real kernel it is
 * known to describe, or, when none does, the nearest ones with a mismatch map each: how many elements differ, in
 * which 128×128 tiles, the worst element, and the pattern in one line (one tile, a band, the tail block, masked rows).
 * Exit status 0 when a variant matches, 1 when none does, 2 on unusable input.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { formatIdentify } from "./identify.ts";
 * const lines = formatIdentify({
 *   op: "cublaslt_gemm_nt", outputs: [{ name: "d", dtype: "bf16", shape: [8, 64] }], strategy: "elements",
 *   searched: 29, notApplicable: [], survivors: { sample: 3, wide: null }, unconfirmed: [], nearest: [], ms: 9,
 *   verdict: "bit for bit: cublaslt",
 *   matches: [{ label: "cublaslt", variant: { model: "cublaslt" }, aliases: [], behaviours: ["cuBLASLt FP8"],
 *     mismatches: 0, compared: 512, scope: "full" }],
 * });
 * assert.match(lines.join("\n"), /^bit for bit: cublaslt\n  = cuBLASLt FP8/m);
 * ```
 * @module
 */
import { formatMismatchMap } from "../reference/compare/mismatch_map.ts";
import { GEMM_OPS, referenceOp as runOp, referenceOpNames as runOpNames } from "../reference/registry.ts";
import type { OpSpec } from "../reference/gemm/op_spec.ts";
import { identify, type IdentifyOptions, type IdentifyResult } from "../reference/identify/identify.ts";
import { mapContext } from "../reference/identify/map_context.ts";
import type { MismatchMapOptions } from "../reference/compare/mismatch_map.ts";
import type { Tensor } from "../reference/tensor/mod.ts";
import { readSafetensors } from "../io/mod.ts";
import {
  type CliIo,
  type Command,
  EXIT,
  expectPositionals,
  type OptionSpec,
  parseCommandArgs,
  parseCount,
  tensorPrefix,
  UsageError,
} from "./command.ts";
import { parseScalarText, scalarsFromMetadata } from "./run.ts";
import { userPath } from "./paths.ts";
import { K_MAJOR_FAULT, kMajorLayout } from "./k_major.ts";

const MASKS = new Set(["sample_mask", "logits_defined"]);

/** Options of {@link identifyOutputs}. */
export interface IdentifyCallOptions extends IdentifyOptions {
  /** Where the inputs came from, for messages (a file name). */
  source?: string;
}

/**
 * Runs `identify` as the CLI, `serve` and `verify` do: checks ACTUAL's outputs against the shapes the op writes,
 * lays out MN-major operands K-major where the op needs it (a file carries no strides), and gives each output's
 * mismatch map its context (group label, masked rows).
 * @param opName DeepGEMM's op name
 * @param inputs the op's tensors (others are ignored)
 * @param scalars its scalars
 * @param actual the outputs to explain (the op's output names; others are ignored)
 * @param options search options and the inputs' source for messages
 * @returns the result
 * @throws UsageError for an unknown op, unusable inputs, or outputs of the wrong shape
 */
export function identifyOutputs(
  opName: string,
  inputs: Record<string, Tensor>,
  scalars: Record<string, unknown>,
  actual: Record<string, Tensor>,
  options: IdentifyCallOptions = {},
): IdentifyResult {
  const op = runOp(opName) as OpSpec | undefined;
  if (op === undefined) throw new UsageError(`unknown op "${opName}"; known: ${runOpNames().join(", ")}`);
  const where = options.source ?? "the inputs";
  const gemm = Object.hasOwn(GEMM_OPS, op.name);
  const own: Record<string, Tensor> = {};
  for (const n of op.inputs) if (inputs[n] !== undefined) own[n] = inputs[n];
  const outs: Record<string, Tensor> = {};
  for (const n of op.outputs) if (!MASKS.has(n) && actual[n] !== undefined) outs[n] = actual[n];
  if (Object.keys(outs).length === 0) {
    throw new UsageError(
      `the actual outputs (${Object.keys(actual).join(", ") || "none"}) include none of ${op.name}'s outputs (${
        op.outputs.filter((n) => !MASKS.has(n)).join(", ")
      })`,
    );
  }
  // The shapes the op writes (GEMM ops on a one-tile sample: only the shapes are needed), and the K-major layout.
  const probe = (args: Record<string, Tensor>) =>
    op.run(args, scalars, { model: op.defaultModel, ...(gemm ? { sample: { fraction: 1e-9, seed: 0 } } : {}) });
  let laid = own;
  let shapes: Record<string, Tensor>;
  try {
    try {
      shapes = probe(own);
    } catch (e) {
      const k = kMajorLayout(op.name, own);
      if (!(e instanceof TypeError && K_MAJOR_FAULT.test(e.message)) || k === null) throw e;
      laid = k;
      shapes = probe(k);
    }
  } catch (e) {
    if (e instanceof TypeError || e instanceof RangeError) throw new UsageError(`${where}: ${e.message}`);
    throw e;
  }
  for (const [n, t] of Object.entries(outs)) {
    const want = shapes[n];
    if (want === undefined) continue;
    if (want.shape.length !== t.shape.length || want.shape.some((d, i) => d !== t.shape[i])) {
      throw new UsageError(
        `actual "${n}" has shape [${t.shape.join(", ")}]; ${op.name} on ${where} writes [${want.shape.join(", ")}]`,
      );
    }
  }
  const mapOptions: Record<string, MismatchMapOptions> = {};
  for (const [n, t] of Object.entries(outs)) mapOptions[n] = mapContext(op.name, laid, scalars, n, t.shape);
  try {
    return identify(op, laid, scalars, outs, { ...options, mapOptions });
  } catch (e) {
    if (e instanceof TypeError || e instanceof RangeError) throw new UsageError(`${where}: ${e.message}`);
    throw e;
  }
}

function seconds(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
}

/**
 * The result as text lines: the verdict, the matching variants (with the kernels they describe and their other
 * spellings) or the nearest ones with their mismatch maps, and what was searched.
 * @param r the result
 * @returns lines without newlines
 */
export function formatIdentify(r: IdentifyResult): string[] {
  const lines: string[] = [];
  if (r.matches.length > 0) {
    const [m, ...rest] = r.matches;
    lines.push(`bit for bit: ${m.label}`);
    for (const b of m.behaviours) lines.push(`  = ${b}`);
    if (m.aliases.length) lines.push(`  same arithmetic as: ${m.aliases.slice(0, 6).join("; ")}`);
    if (rest.length) {
      lines.push(`also bit for bit on this input (${rest.length}; the input cannot tell them apart):`);
      for (const x of rest.slice(0, 12)) {
        lines.push(`  ${x.label}${x.behaviours.length ? `  (= ${x.behaviours[0].split(":")[0]})` : ""}`);
      }
      if (rest.length > 12) lines.push(`  ... and ${rest.length - 12} more`);
    }
  } else if (r.nearest.length > 0) {
    lines.push(`no variant reproduces the output bit for bit; the nearest (whole output):`);
    r.nearest.forEach((n, i) => {
      lines.push(
        `  ${i + 1}. ${n.label}: ${n.mismatches}/${n.compared} mismatches${
          n.behaviours.length ? `  (= ${n.behaviours[0].split(":")[0]})` : ""
        }`,
      );
      for (const [name, map] of Object.entries(n.maps ?? {})) {
        if (map.mismatches === 0) continue;
        for (const l of formatMismatchMap(name, map, i === 0 ? 4 : 1)) lines.push(`     ${l}`);
      }
    });
  } else {
    lines.push(r.verdict);
  }
  if (r.unconfirmed.length) {
    lines.push(
      `${r.unconfirmed.length} more variant(s) agreed with every sampled element but were not run in full ` +
        `(--max-full to check them): ${r.unconfirmed.slice(0, 6).map((u) => u.label).join("; ")}`,
    );
  }
  const outs = r.outputs.map((o) => `${o.name} ${o.dtype} [${o.shape.join(", ")}]`).join(", ");
  const wide = r.survivors.wide === null ? "" : `, ${r.survivors.wide} after a wider one`;
  lines.push(
    `searched ${r.searched} variants of ${r.op} for ${outs} (${r.notApplicable.length} do not apply to this input); ` +
      `${r.survivors.sample} matched a first sample${wide}; ${seconds(r.ms)}`,
  );
  return lines;
}

const USAGE = `Usage: oracle identify OP INPUT ACTUAL [--actual-prefix P] [--json FILE] [--top N] [--seed N]
                       [--max-split-k S] [--max-full N] [--<scalar> VALUE]...

Names the rounding behaviour that produced ACTUAL: searches OP's model space on the tensors of INPUT (named as
DeepGEMM's arguments; scalars from INPUT's __metadata__ and from flags, as for 'oracle run') and prints every
variant that reproduces ACTUAL's outputs (d, ...) bit for bit, with the real kernel it is known to describe
(cuBLASLt with or without fast accumulation, block-scaled with split-K, DeepGEMM SM90 1D2D / 1D1D, exact, ...),
or, when none does, the nearest variants by mismatch count with a mismatch map each (per 128×128 tile: count,
bounding box, worst element; the pattern in one line: one tile, a row or column band, the tail block, masked rows,
NaN/Inf handling, all tiles).

The space: every kernel model of the op; every tensor-core profile taking the operand formats; promotion every
128 K or never; split-K 1 to 8; RNE or RZ output (BF16 output without C); op-specific variants (the HC GEMM's TF32
conversion). Candidates are first run on a sample of output elements, and only those that match it are run in full.

  --actual-prefix P  read ACTUAL's tensors named P<name> (a golden fixture stores each model's outputs as
                     <model>/<name>: --actual-prefix sm90_1d2d, with or without the slash)
  --json FILE        also write the result as JSON (with each nearest variant's tile map)
  --top N            nearest variants reported when none matches (default 5)
  --seed N           sampling seed (default 0)
  --max-split-k S    largest split-K factor searched (default 8)
  --max-full N       variants that agree with every sampled element run on the whole output (default 6; outputs
                     of at most 4096 elements: all of them); the others are listed as not confirmed

Example: which variants reproduce the SM90 output a golden fixture stores (sm90_1d2d, and what it cannot tell apart):
  deno task oracle identify fp8_gemm_nt fixtures/fp8_gemm_nt/fp8_gemm_nt_m16_n128_k256_fp32.safetensors fixtures/fp8_gemm_nt/fp8_gemm_nt_m16_n128_k256_fp32.safetensors --actual-prefix sm90_1d2d

Exit status: 0 a variant reproduces ACTUAL bit for bit, 1 none does, 2 unusable input or bad arguments.`;

function jsonSafe(_k: string, v: unknown): unknown {
  return typeof v === "number" && !Number.isFinite(v) ? String(v) : v;
}

async function run(args: string[], io: CliIo): Promise<number> {
  const opName = args[0];
  if (opName === undefined || opName === "--help" || opName === "-h") {
    io.stdout(USAGE + "\n");
    return opName === undefined ? EXIT.unusable : EXIT.ok;
  }
  const op = runOp(opName) as OpSpec | undefined;
  if (op === undefined) throw new UsageError(`unknown op "${opName}"; known: ${runOpNames().join(", ")}`);
  const flags: OptionSpec = {
    "actual-prefix": { type: "string" },
    json: { type: "string" },
    top: { type: "string" },
    seed: { type: "string" },
    "max-split-k": { type: "string" },
    "max-full": { type: "string" },
  };
  for (const k of Object.keys(op.scalars)) flags[k.replaceAll("_", "-")] = { type: "string" };
  const { values, positionals } = parseCommandArgs(args.slice(1), flags, "identify");
  if (values.help) {
    io.stdout(USAGE + "\n");
    return EXIT.ok;
  }
  expectPositionals("identify", positionals, ["INPUT", "ACTUAL"]);
  const top = values.top === undefined ? 5 : parseCount("--top", values.top as string);
  if (top < 1) throw new UsageError("--top must be at least 1");
  const seed = values.seed === undefined ? 0 : parseCount("--seed", values.seed as string);
  const maxSplitK = values["max-split-k"] === undefined
    ? 8
    : parseCount("--max-split-k", values["max-split-k"] as string);
  if (maxSplitK < 1) throw new UsageError("--max-split-k must be at least 1");
  const maxFull = values["max-full"] === undefined ? 6 : parseCount("--max-full", values["max-full"] as string);
  if (maxFull < 1) throw new UsageError("--max-full must be at least 1");
  const [inputPath, actualPath] = positionals.map((p) => userPath(io, p));
  const file = await readSafetensors(inputPath);
  const scalars = scalarsFromMetadata(op, file.metadata, inputPath);
  for (const k of Object.keys(op.scalars)) {
    const v = values[k.replaceAll("_", "-")];
    if (typeof v === "string") scalars[k] = parseScalarText(v);
  }
  const inputs: Record<string, Tensor> = {};
  for (const n of op.inputs) {
    const t = file.tensors.get(n);
    if (t !== undefined) inputs[n] = t;
  }
  const actualFile = actualPath === inputPath ? file : await readSafetensors(actualPath);
  const prefix = tensorPrefix((values["actual-prefix"] as string | undefined) ?? "", actualFile.tensors.keys());
  const actual: Record<string, Tensor> = {};
  for (const [name, t] of actualFile.tensors) if (name.startsWith(prefix)) actual[name.slice(prefix.length)] = t;
  if (!op.outputs.some((n) => !MASKS.has(n) && actual[n] !== undefined)) {
    throw new UsageError(
      `${actualPath}: holds none of ${op.name}'s outputs (${op.outputs.filter((n) => !MASKS.has(n)).join(", ")})` +
        (prefix ? ` under the prefix ${JSON.stringify(prefix)}` : ""),
    );
  }
  const result = identifyOutputs(op.name, inputs, scalars, actual, {
    top,
    seed,
    maxSplitK,
    maxFull,
    source: inputPath,
  });
  io.stdout(formatIdentify(result).join("\n") + "\n");
  if (typeof values.json === "string") {
    await Deno.writeTextFile(
      userPath(io, values.json),
      JSON.stringify({ input: inputPath, actual: actualPath, ...result }, jsonSafe, 2) + "\n",
    );
  }
  return result.matches.length > 0 ? EXIT.ok : EXIT.failure;
}

/** The `identify` subcommand. */
export const identifyCommand: Command = Object.freeze({
  name: "identify",
  summary: "name the rounding behaviour (kernel model variant) that produced an output, or where it departs",
  usage: USAGE,
  run,
});
