/**
 * `oracle run <op> [--model NAME] [--tensor-core P] [--promote 128|none] [--split-k S] [--out-dtype bf16|f32]
 * [--backend B] [--<scalar> VALUE]... IN OUT`: runs the reference of a DeepGEMM operation on the tensors of IN
 * (DeepGEMM's argument names; other tensors, such as a fixture's stored outputs, are ignored) and writes its outputs
 * to OUT. With `--backend` (cpu, cuda, a `.so`, `cmd:COMMAND`) the backend computes them instead, in its backend
 * host (`docs/backend-protocol.md`), so two backends can be compared on any input with `oracle compare`.
 * Scalar arguments come from `__metadata__` (a `scalars` JSON object, or one key per scalar) and are overridden by
 * flags spelled with dashes (`--expected-m 4` sets `expected_m`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseScalarText } from "./run.ts";
 * assert.equal(parseScalarText("4"), 4);
 * assert.deepEqual(parseScalarText("[1,128,128]"), [1, 128, 128]);
 * assert.equal(parseScalarText("sm90"), "sm90");
 * assert.throws(() => parseScalarText("9007199254740993"), /beyond 2\^53/);
 * assert.throws(() => parseScalarText("[1, 1e309]"), /1e309 is out of range/);
 * ```
 * @module
 */
import type { ModelOptions } from "../reference/kernel_models/kernel_models.ts";
import { KERNEL_MODELS } from "../reference/kernel_models/kernel_models.ts";
import {
  GEMM_OPS,
  type OpSpec as RunnableOp,
  referenceOp as runOp,
  referenceOpNames as runOpNames,
} from "../reference/registry.ts";
import { type Tensor, Tensor as TensorClass } from "../reference/tensor/mod.ts";
import { hostCommand, HostedBackend } from "./host/hosted_backend.ts";
import { HostStartError } from "./host/process.ts";
import {
  closeNativeReference,
  NATIVE_REFERENCE_MODEL,
  NATIVE_REFERENCE_OPS,
  nativeReference,
} from "./verify/native_reference.ts";
import {
  F4_NIBBLE_ORDER_KEY,
  PACKED_UE8M0_KEY,
  packedUe8m0Names,
  readSafetensors,
  writeSafetensors,
} from "../io/mod.ts";
import denoConfig from "../deno.json" with { type: "json" };
import {
  type CliIo,
  type Command,
  EXIT,
  type OptionSpec,
  parseCommandArgs,
  parseCount,
  UsageError,
} from "./command.ts";
import { userBackend, userPath } from "./paths.ts";
import { FIXTURE_SPECS } from "../reference/cases/all_specs.ts";
import type { FixtureSpec } from "../reference/cases/case_spec.ts";
import { fixtureFileName, loadFixture } from "../fixtures/fixture_files.ts";

/**
 * Reads a scalar's text: JSON (numbers, booleans, null, arrays, objects) when it parses, else the string itself.
 * @param text the flag or metadata value
 * @returns the value
 */
export function parseScalarText(text: string): unknown {
  let value: unknown;
  try {
    // The reviver sees each number's source text: one JSON would round (2^53 + 1) or overflow (1e309) is refused
    // instead of being taken as another value.
    value = JSON.parse(text, (_k, v, context?: { source?: string }) => {
      if (typeof v === "number" && context?.source !== undefined) checkNumber(context.source, v);
      return v;
    });
  } catch (e) {
    if (e instanceof UsageError) throw e;
    return text;
  }
  return value;
}

function checkNumber(source: string, v: number): void {
  if (!Number.isFinite(v)) throw new UsageError(`the number ${source} is out of range`);
  if (/^-?\d+$/.test(source) && !Number.isSafeInteger(v)) {
    throw new UsageError(`the integer ${source} is beyond 2^53 and would be read as ${BigInt(v)}`);
  }
}

const MODEL_FLAGS: OptionSpec = {
  model: { type: "string" },
  backend: { type: "string" },
  "case-timeout": { type: "string" },
  "tensor-core": { type: "string" },
  promote: { type: "string" },
  "split-k": { type: "string" },
  "out-dtype": { type: "string" },
};

const USAGE_HEAD = `Usage: oracle run <op> [--model NAME] [--tensor-core P] [--promote 128|none] [--split-k S]
                  [--out-dtype bf16|f32] [--backend B [--case-timeout S]] [--<scalar> VALUE]... IN... OUT

Runs the reference of a DeepGEMM operation on the tensors of the safetensors files IN (named as DeepGEMM's
arguments: a, sfa, b, sfb, c, grouped_layout, masked_m, ...; several files are read as one, e.g. the outputs of
'oracle quantize --tensor a' and '--tensor b'; a name in two files is an error) and writes its outputs (d, ...) to
OUT. Scalars come from the files' __metadata__ ("scalars" as a JSON object, or one key per scalar) and from flags
(--expected-m 4 sets expected_m; values are read as JSON when they parse). 'oracle run <op> --help' lists the op's
tensors, with their dtypes and shapes, and its scalars.

  --model NAME        kernel model: ${Object.keys(KERNEL_MODELS).join(", ")} (default: the op's)
  --tensor-core P     tensor-core profile overriding the model's
  --promote 128|none  promotion interval overriding the model's
  --split-k S         split-K parts
  --out-dtype T       bf16 or f32, overriding the model's output type
  --backend B         run a backend instead of the reference: cpu, cuda, PATH.so or cmd:COMMAND, in a backend
                      host (docs/backend-protocol.md); --model then names the model asked of it (default: the one
                      it declares for the op); the output names, dtypes and shapes come from the reference
  --case-timeout S    seconds the backend may take (default 300)`;

const USAGE_EXIT =
  "Exit status: 0 written, 1 the backend failed, crashed or timed out, 2 bad arguments or unusable input.";

/** The golden case the help of an op shows: one storing the op's default model when there is one. */
function exampleCase(op: Pick<RunnableOp, "name" | "defaultModel">): { spec: FixtureSpec; model: string } | undefined {
  const specs = FIXTURE_SPECS.filter((s) => s.op === op.name);
  const spec = specs.find((s) => s.models.includes(op.defaultModel)) ?? specs[0];
  if (spec === undefined) return undefined;
  return { spec, model: spec.models.includes(op.defaultModel) ? op.defaultModel : spec.models[0] };
}

/** The help's example for an op: its reference on a golden case, then the output compared with the stored one. */
function example(op: Pick<RunnableOp, "name" | "defaultModel">): string[] {
  const c = exampleCase(op);
  if (c === undefined) return [`  deno task oracle run ${op.name} IN.safetensors OUT.safetensors`];
  const file = `fixtures/${fixtureFileName(c.spec)}`;
  const flag = c.model === op.defaultModel ? "" : ` --model ${c.model}`;
  return [
    `  deno task oracle run ${op.name}${flag} ${file} out.safetensors`,
    `  deno task oracle compare ${file} out.safetensors --expected-prefix ${c.model}/`,
  ];
}

function usage(op?: RunnableOp, section: string[] = []): string {
  if (op === undefined) {
    const names = runOpNames();
    return [
      USAGE_HEAD,
      "",
      `Operations: ${names.length > 0 ? names.join(", ") : "(none registered yet)"}`,
      "",
      "Example: a golden case's inputs through fp8_gemm_nt's default model (sm90_1d2d), then the output compared with",
      "the one the case stores for that model:",
      ...example({ name: "fp8_gemm_nt", defaultModel: "sm90_1d2d" }),
      "",
      USAGE_EXIT,
    ].join("\n");
  }
  return [
    USAGE_HEAD,
    "",
    ...section,
    "",
    `Example: ${op.name}'s reference on a golden case, then compared with the output the case stores:`,
    ...example(op),
    "",
    USAGE_EXIT,
  ].join("\n");
}

/** Rows padded into columns. */
function table(rows: string[][]): string[] {
  const widths = rows.reduce((w, r) => r.map((c, i) => Math.max(w[i] ?? 0, c.length)), [] as number[]);
  return rows.map((r) => `  ${r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]))).join("  ")}`.trimEnd());
}

/**
 * The op's part of `oracle run <op> --help`, from the registry (`runOp`: tensor and output names, scalars, models):
 * each tensor's dtype and shape as the op's golden case holds them (a tensor the case leaves out is optional), each
 * output's as the reference wrote it there, and each scalar with what it means (its default included) and its value
 * in the case.
 */
async function opSection(op: RunnableOp): Promise<string[]> {
  const c = exampleCase(op);
  const stored = c === undefined ? undefined : await loadFixture(c.spec.id);
  const describe = (t: Tensor | undefined) => t === undefined ? ["-", "-"] : [t.dtype, `[${t.shape.join(", ")}]`];
  const lines = [
    `${op.name}: models ${op.models.map((m) => (m === op.defaultModel ? `${m} (default)` : m)).join(", ")}`,
    "",
    stored === undefined
      ? "Tensors (DeepGEMM's argument names):"
      : `Tensors (DeepGEMM's argument names; dtype and shape as the golden case ${stored.id} holds them):`,
    ...table(op.inputs.map((n) => {
      const t = stored?.inputs[n];
      return [n, ...describe(t), stored === undefined || t !== undefined ? "" : "optional: not given in this case"];
    })),
    "Outputs:",
    ...table(op.outputs.map((n) => [n, ...describe(stored?.outputs[c!.model]?.[n])])),
  ];
  const scalars = Object.entries(op.scalars);
  lines.push(`Scalars (--name-with-dashes VALUE, or IN's __metadata__)${scalars.length ? ":" : ": none"}`);
  lines.push(...table(scalars.map(([k, doc]) => {
    const v = stored?.scalars[k];
    return [`--${k.replaceAll("_", "-")}`, doc + (v === undefined ? "" : `; ${JSON.stringify(v)} in this case`)];
  })));
  return lines;
}

/**
 * An op's scalars from a file's `__metadata__`: a `scalars` JSON object, or one key per scalar (read as JSON when it
 * parses); keys that are not the op's scalars are ignored.
 * @param op the op (its scalar names)
 * @param metadata the file's metadata
 * @param file the file, for messages
 * @returns the scalars found
 */
export function scalarsFromMetadata(
  op: Pick<RunnableOp, "scalars">,
  metadata: Record<string, string>,
  file: string,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (Object.hasOwn(metadata, "scalars")) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(metadata.scalars);
    } catch {
      throw new UsageError(
        `${file}: __metadata__.scalars is not JSON: ${JSON.stringify(metadata.scalars.slice(0, 80))}`,
      );
    }
    if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
      throw new UsageError(`${file}: __metadata__.scalars must be a JSON object`);
    }
    for (const [k, v] of Object.entries(parsed)) if (Object.hasOwn(op.scalars, k)) out[k] = v;
  }
  for (const k of Object.keys(op.scalars)) if (Object.hasOwn(metadata, k)) out[k] = parseScalarText(metadata[k]);
  return out;
}

async function run(args: string[], io: CliIo): Promise<number> {
  const opName = args[0];
  if (opName === undefined || opName === "--help" || opName === "-h") {
    io.stdout(usage() + "\n");
    return opName === undefined ? EXIT.unusable : EXIT.ok;
  }
  const op = runOp(opName);
  if (op === undefined) {
    const names = runOpNames();
    throw new UsageError(
      `unknown op "${opName}"; known: ${names.length > 0 ? names.join(", ") : "(none registered yet)"}`,
    );
  }
  const scalarFlags: OptionSpec = {};
  for (const k of Object.keys(op.scalars)) scalarFlags[k.replaceAll("_", "-")] = { type: "string" };
  const { values, positionals } = parseCommandArgs(args.slice(1), { ...MODEL_FLAGS, ...scalarFlags }, "run");
  if (values.help) {
    io.stdout(usage(op, await opSection(op)) + "\n");
    return EXIT.ok;
  }
  if (positionals.length < 2) {
    throw new UsageError(
      `needs at least 2 file arguments (IN... OUT), got ${positionals.length} (see oracle run --help)`,
    );
  }
  // Only the GEMM references (GEMM_OPS, reference/registry.ts) read the kernel-model parameters; the MQA, HC and Mega MoE
  // references (reference/non_gemm_ops) read --model and --tensor-core alone. A flag that would change nothing is refused.
  if (!Object.hasOwn(GEMM_OPS, op.name)) {
    for (const flag of ["promote", "split-k", "out-dtype"]) {
      if (values[flag] !== undefined) {
        throw new UsageError(`--${flag} does not apply to ${op.name} (it reads --model and --tensor-core only)`);
      }
    }
  }
  const model: ModelOptions = {};
  if (values.model !== undefined) model.model = values.model as string;
  if (values["tensor-core"] !== undefined) model.tensorCore = values["tensor-core"] as string;
  if (values.promote !== undefined) {
    if (values.promote !== "128" && values.promote !== "none") throw new UsageError(`--promote must be 128 or none`);
    model.promotion = values.promote === "128" ? 128 : "none";
  }
  if (values["split-k"] !== undefined) {
    model.splitK = parseCount("--split-k", values["split-k"] as string);
    if (model.splitK === 0) throw new UsageError("--split-k must be at least 1");
  }
  if (values["out-dtype"] !== undefined) {
    if (values["out-dtype"] !== "bf16" && values["out-dtype"] !== "f32") {
      throw new UsageError("--out-dtype must be bf16 or f32");
    }
    model.outDtype = values["out-dtype"];
  }
  const paths = positionals.map((p) => userPath(io, p));
  const output = paths.pop()!;
  const { inputs, scalars } = await readInputs(op, paths);
  const input = paths.join(", ");
  for (const k of Object.keys(op.scalars)) {
    const v = values[k.replaceAll("_", "-")];
    if (typeof v === "string") scalars[k] = parseScalarText(v);
  }
  if (values.backend !== undefined) {
    const backend = userBackend(io, values.backend as string);
    return await runOnBackend(op, backend, values, inputs, scalars, input, output, io);
  }
  // The FP8 GEMMs under DeepGEMM's SM90 1D2D model run on the native CPU backend on every core, with the TypeScript
  // reference's bits (tests/cli/native_reference_test.ts); other ops and model options, a caller's `d`, or
  // GEMM_ORACLE_NATIVE_REFERENCE=0 take the TypeScript engine.
  const plainModel = Object.keys(model).every((k) => k === "model");
  const native = plainModel && inputs.d === undefined &&
      (model.model ?? op.defaultModel) === NATIVE_REFERENCE_MODEL && Object.hasOwn(NATIVE_REFERENCE_OPS, op.name)
    ? await inputFaultAsync(input, () => nativeReference(op.name, inputs, scalars, { model: NATIVE_REFERENCE_MODEL }))
    : null;
  if (native) await closeNativeReference();
  const outputs = native ?? inputFault(input, () => op.run(inputs, scalars, model));
  const packed = packedUe8m0Names(Object.entries(outputs));
  const metadata: Record<string, string> = {
    format_version: "1",
    oracle_version: denoConfig.version,
    op: op.name,
    model: model.model ?? op.defaultModel,
    model_options: JSON.stringify(model),
    engine: native ? "native CPU backend" : "TypeScript reference",
    scalars: JSON.stringify(scalars),
    source: input,
  };
  if (packed.length > 0) metadata[PACKED_UE8M0_KEY] = JSON.stringify(packed);
  delete metadata[F4_NIBBLE_ORDER_KEY];
  await writeSafetensors(output, outputs, metadata);
  io.stderr(`${op.name} (${metadata.model}) on ${input} → ${output}: ${Object.keys(outputs).join(", ")}\n`);
  return EXIT.ok;
}

/**
 * The op's tensors and scalars from one or more files (quantized `a` / `sfa` in one, `b` / `sfb` in another, ...): a
 * tensor or a scalar that two files give differently is an error, never a silent choice.
 */
async function readInputs(
  op: RunnableOp,
  paths: readonly string[],
): Promise<{ inputs: Record<string, Tensor>; scalars: Record<string, unknown> }> {
  const inputs: Record<string, Tensor> = {};
  const scalars: Record<string, unknown> = {};
  const from = new Map<string, string>();
  for (const path of paths) {
    const file = await readSafetensors(path);
    for (const name of op.inputs) {
      const t = file.tensors.get(name);
      if (t === undefined) continue;
      if (from.has(name)) throw new UsageError(`tensor "${name}" is in both ${from.get(name)} and ${path}`);
      inputs[name] = t;
      from.set(name, path);
    }
    for (const [k, v] of Object.entries(scalarsFromMetadata(op, file.metadata, path))) {
      const key = `scalar ${k}`;
      if (from.has(key) && JSON.stringify(scalars[k]) !== JSON.stringify(v)) {
        throw new UsageError(
          `scalar ${k} is ${JSON.stringify(scalars[k])} in ${from.get(key)} but ${JSON.stringify(v)} in ${path}`,
        );
      }
      scalars[k] = v;
      from.set(key, path);
    }
  }
  return { inputs, scalars };
}

/** {@link inputFault} for an async `f`. */
async function inputFaultAsync<T>(file: string, f: () => Promise<T>): Promise<T> {
  try {
    return await f();
  } catch (e) {
    if (e instanceof TypeError || e instanceof RangeError) throw new UsageError(`${file}: ${e.message}`);
    throw e;
  }
}

/** Runs `f`; the reference's complaints about the inputs (TypeError, RangeError) become usage errors naming the file. */
function inputFault<T>(file: string, f: () => T): T {
  try {
    return f();
  } catch (e) {
    if (e instanceof TypeError || e instanceof RangeError) throw new UsageError(`${file}: ${e.message}`);
    throw e;
  }
}

/**
 * `--backend`: the op on a backend host. The reference runs first on a tiny tile sample (GEMM ops; the others in
 * full) only to learn the output names, dtypes and shapes the backend must write.
 */
async function runOnBackend(
  op: RunnableOp,
  backend: string,
  values: Record<string, unknown>,
  inputs: Record<string, Tensor>,
  scalars: Record<string, unknown>,
  input: string,
  output: string,
  io: CliIo,
): Promise<number> {
  for (const flag of ["tensor-core", "promote", "split-k", "out-dtype"]) {
    if (values[flag] !== undefined) {
      throw new UsageError(
        `--${flag} does not apply with --backend (a backend computes its own arithmetic; --model names it)`,
      );
    }
  }
  const caseTimeout = values["case-timeout"] === undefined ? 300 : Number(values["case-timeout"]);
  if (!(Number.isFinite(caseTimeout) && caseTimeout > 0)) {
    throw new UsageError(`--case-timeout needs a positive number of seconds, got ${values["case-timeout"]}`);
  }
  let hosted: HostedBackend;
  try {
    hosted = await HostedBackend.open(hostCommand(backend), {
      caseTimeoutMs: caseTimeout * 1000,
      startTimeoutMs: 120_000,
      log: (l) => io.stderr(`run: ${l}\n`),
    });
  } catch (e) {
    if (e instanceof HostStartError || e instanceof TypeError) throw new UsageError(`backend ${backend}: ${e.message}`);
    throw e;
  }
  try {
    if (hosted.hello.unavailable) throw new UsageError(`backend ${backend}: ${hosted.hello.unavailable}`);
    const model = (values.model as string | undefined) ?? hosted.declared(op.name);
    if (model === undefined) {
      throw new UsageError(`backend ${backend} does not declare ${op.name}; name the model to ask of it with --model`);
    }
    const sample = Object.hasOwn(GEMM_OPS, op.name) ? { sample: { fraction: 1e-9, seed: 0 } } : {};
    const shapes = inputFault(input, () => op.run(inputs, scalars, { model, ...sample }));
    const out: Record<string, Tensor> = {};
    for (const [name, t] of Object.entries(shapes)) {
      if (name === "sample_mask" || name === "logits_defined") continue;
      out[name] = inputs[name] ? inputs[name].contiguous() : TensorClass.zeros(t.dtype, t.shape);
    }
    const got = await hosted.run(op.name, inputs, scalars, model, out);
    if (got.kind !== "ok") {
      io.stderr(`run: ${op.name} on ${backend} [${model}]: ${got.kind}: ${got.message}\n`);
      return got.kind === "unsupported" ? EXIT.unusable : EXIT.failure;
    }
    await writeSafetensors(output, got.outputs, {
      format_version: "1",
      oracle_version: denoConfig.version,
      op: op.name,
      backend,
      model,
      scalars: JSON.stringify(scalars),
      source: input,
    });
    io.stderr(`${op.name} on ${backend} [${model}] on ${input} → ${output}: ${Object.keys(got.outputs).join(", ")}\n`);
    return EXIT.ok;
  } finally {
    await hosted.close();
  }
}

/** The `run` subcommand. */
export const runCommand: Command = Object.freeze({
  name: "run",
  summary: "run the reference of a DeepGEMM operation on the tensors of a file",
  usage: usage(),
  run,
});
