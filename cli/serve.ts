/**
 * `oracle serve`: the reference as a long-lived process speaking JSON lines on stdin / stdout
 * (docs/backend-protocol.md §5), the server the Python package `gemm_oracle` talks to.
 *
 * The first stdout line is the hello (every op with its inputs, outputs, scalars and models); then each stdin line is
 * one request and gets exactly one answer line, in order:
 *
 * - `run`: runs an op's reference on the tensors of a safetensors file and writes its outputs to another;
 * - `cases`: lists the fixture and edge cases (`verify`'s suites, without the large DeepSeek-V3 shapes);
 * - `case`: writes one case's inputs to a file and answers its op, layout and scalars;
 * - `identify`: names the rounding behaviour (model variant) that produced the outputs in a file, or the nearest
 *   variants with where they differ (`oracle identify`).
 *
 * A request that fails, or a line that is not a request, is answered with `{"id", "status": "error", "message"}`
 * (`id` null when it cannot be read) and the server reads on. It exits 0 at the end of its input.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ServeSession } from "./serve.ts";
 * const session = new ServeSession();
 * const hello = session.hello();
 * assert.equal(hello.protocol, "gemm-oracle-serve");
 * assert.deepEqual(hello.ops.fp8_gemm_nt.outputs, ["d"]);
 * const bad = await session.handleLine("not json");
 * assert.equal(bad.id, null);
 * assert.equal(bad.status, "error");
 * assert.match(bad.message!, /^the line is not JSON/);
 * const answer = await session.handleLine('{"id": 7, "cmd": "cases", "op": "fp8_gemm_tt", "suite": "edge"}');
 * assert.equal(answer.status, "ok");
 * assert.deepEqual(answer.cases, [{ id: "edge/fp8_tt", op: "fp8_gemm_tt", layout: "tt", suite: "edge" }]);
 * ```
 * @module
 */
import type { ModelOptions } from "../reference/kernel_models/kernel_models.ts";
import type { Tensor } from "../reference/tensor/mod.ts";
import { readLines } from "./host/lines.ts";
import { PACKED_UE8M0_KEY, packedUe8m0Names, readSafetensors, SafetensorsError, writeSafetensors } from "../io/mod.ts";
import denoConfig from "../deno.json" with { type: "json" };
import { type CliIo, type Command, EXIT, expectPositionals, parseCommandArgs, UsageError } from "./command.ts";
import { identifyOutputs } from "./identify.ts";
import {
  type OpSpec as RunnableOp,
  referenceOp as runOp,
  referenceOpNames as runOpNames,
} from "../reference/registry.ts";
import { collectCases } from "./verify/devices.ts";
import { K_MAJOR_FAULT, kMajorLayout } from "./k_major.ts";
import { userPath } from "./paths.ts";
import type { VerifyCase } from "./verify/runner.ts";

export { K_MAJOR_FAULT, kMajorLayout };

/** The hello's `protocol`. */
export const SERVE_PROTOCOL = "gemm-oracle-serve";
/** The protocol version this server speaks. */
export const SERVE_VERSION = 1;
/** The suites `cases` lists: `all` is fixtures and edge (the DeepSeek-V3 shapes are too large to serve). */
export const SERVE_SUITES: readonly string[] = Object.freeze(["fixtures", "edge", "all"]);
/** The requests, by `cmd`. */
export const SERVE_COMMANDS: readonly string[] = Object.freeze(["run", "cases", "case", "identify"]);

/** One op as the hello describes it. */
export interface ServedOp {
  /** Tensor arguments, DeepGEMM's names. */
  inputs: string[];
  /** Output tensors the reference writes (masks such as `logits_defined` included). */
  outputs: string[];
  /** Scalar arguments and what they mean. */
  scalars: Record<string, string>;
  /** The models that make sense for the op. */
  models: string[];
  /** The model used when a request names none. */
  default_model: string;
}

/** The first line the server writes. */
export interface ServeHello {
  protocol: typeof SERVE_PROTOCOL;
  version: typeof SERVE_VERSION;
  /** The oracle's version (deno.json). */
  oracle: string;
  /** Every op `run` accepts. */
  ops: Record<string, ServedOp>;
}

/** One answer line: `id`, `status` and the command's fields. */
export interface ServeAnswer {
  id: unknown;
  status: "ok" | "error";
  message?: string;
  [field: string]: unknown;
}

/** A request that cannot be served: answered as an error with this message. */
class RequestError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "RequestError";
  }
}

function describe(v: unknown): string {
  if (v === undefined) return "nothing";
  if (v === null) return "null";
  if (Array.isArray(v)) return "an array";
  return typeof v === "object" ? "an object" : `${typeof v} ${JSON.stringify(v)}`;
}

function field(request: Record<string, unknown>, name: string, type: "string" | "object", optional = false): unknown {
  const v = request[name];
  if (v === undefined || v === null) {
    if (optional) return undefined;
    throw new RequestError(`the request has no "${name}"`);
  }
  const ok = type === "object" ? typeof v === "object" && !Array.isArray(v) : typeof v === "string";
  if (!ok) {
    throw new RequestError(`"${name}" must be ${type === "object" ? "an object" : "a string"}, got ${describe(v)}`);
  }
  return v;
}

/**
 * A glob over op names: `*` any run of characters, `?` one character, everything else literal.
 * @param glob the pattern
 * @returns a test for names
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { opGlob } from "./serve.ts";
 * assert.equal(opGlob("fp8_gemm_*")("fp8_gemm_nt"), true);
 * assert.equal(opGlob("fp8_gemm_*")("m_grouped_fp8_gemm_nt_masked"), false);
 * assert.equal(opGlob("bf16_gemm_n?")("bf16_gemm_nt"), true);
 * ```
 */
export function opGlob(glob: string): (name: string) => boolean {
  const source = glob.replace(/[.+^${}()|[\]\\]/g, "\\$&").replaceAll("*", ".*").replaceAll("?", ".");
  const re = new RegExp(`^${source}$`);
  return (name) => re.test(name);
}

function errorMessage(e: unknown): string {
  if (e instanceof RequestError || e instanceof SafetensorsError) return e.message;
  if (
    e instanceof Deno.errors.NotFound || e instanceof Deno.errors.PermissionDenied ||
    e instanceof Deno.errors.IsADirectory
  ) {
    return `cannot access a file: ${(e as Error).message}`;
  }
  // The references validate their arguments and throw these for wrong shapes, dtypes or values.
  if (e instanceof TypeError || e instanceof RangeError) return `unusable input: ${e.message}`;
  return `internal error: ${(e as Error)?.stack ?? String(e)}`;
}

/**
 * The state of one `oracle serve` process: the hello, the case lists (read once) and the request handlers.
 * Requests are handled one at a time, in order.
 */
export class ServeSession {
  #cases: Promise<VerifyCase[]> | undefined;
  #path: (path: string) => string;

  /**
   * @param options `path` maps each file path of a request to the one opened (`oracle serve` resolves relative
   * paths against the caller's directory, cli/paths.ts); default: as given
   */
  constructor(options: { path?: (path: string) => string } = {}) {
    this.#path = options.path ?? ((p) => p);
  }

  /** A request's file path field, resolved. */
  #file(r: Record<string, unknown>, name: string): string {
    return this.#path(field(r, name, "string") as string);
  }

  /** The hello line's object. */
  hello(): ServeHello {
    const ops: Record<string, ServedOp> = {};
    for (const name of runOpNames()) {
      const op = runOp(name)!;
      ops[name] = {
        inputs: [...op.inputs],
        outputs: [...op.outputs],
        scalars: { ...op.scalars },
        models: [...op.models],
        default_model: op.defaultModel,
      };
    }
    return { protocol: SERVE_PROTOCOL, version: SERVE_VERSION, oracle: denoConfig.version, ops };
  }

  /**
   * Answers one request line; never throws.
   * @param line the JSON text of a request
   * @returns the answer
   */
  async handleLine(line: string): Promise<ServeAnswer> {
    let request: unknown;
    try {
      request = JSON.parse(line);
    } catch (e) {
      return { id: null, status: "error", message: `the line is not JSON: ${(e as Error).message}` };
    }
    return await this.handle(request);
  }

  /**
   * Answers one parsed request; never throws.
   * @param request the request object
   * @returns the answer
   */
  async handle(request: unknown): Promise<ServeAnswer> {
    if (request === null || typeof request !== "object" || Array.isArray(request)) {
      return { id: null, status: "error", message: `a request must be a JSON object, got ${describe(request)}` };
    }
    const r = request as Record<string, unknown>;
    const id = typeof r.id === "number" || typeof r.id === "string" ? r.id : null;
    try {
      const cmd = field(r, "cmd", "string") as string;
      // `case` may name its case by a string "id" (the table of §5); every other request id is a positive integer.
      const caseById = cmd === "case" && typeof r.id === "string" && r.case === undefined;
      if (!caseById && (typeof r.id !== "number" || !Number.isSafeInteger(r.id) || r.id < 1)) {
        throw new RequestError(`"id" must be a positive integer, got ${describe(r.id)}`);
      }
      let fields: Record<string, unknown>;
      if (cmd === "run") fields = await this.#run(r);
      else if (cmd === "cases") fields = await this.#listCases(r);
      else if (cmd === "case") fields = await this.#writeCase(r);
      else if (cmd === "identify") fields = await this.#identify(r);
      else throw new RequestError(`unknown cmd ${JSON.stringify(cmd)}; known: ${SERVE_COMMANDS.join(", ")}`);
      return { id, status: "ok", ...fields };
    } catch (e) {
      return { id, status: "error", message: errorMessage(e) };
    }
  }

  async #run(r: Record<string, unknown>): Promise<Record<string, unknown>> {
    const name = field(r, "op", "string") as string;
    const op: RunnableOp | undefined = runOp(name);
    if (op === undefined) {
      throw new RequestError(`unknown op ${JSON.stringify(name)}; known: ${runOpNames().join(", ")}`);
    }
    const inputPath = this.#file(r, "inputs");
    const outputPath = this.#file(r, "outputs");
    const model = (field(r, "model", "string", true) as string | undefined) ?? op.defaultModel;
    const scalars = { ...(field(r, "scalars", "object", true) as Record<string, unknown> | undefined) };
    for (const k of Object.keys(scalars)) {
      if (!Object.hasOwn(op.scalars, k)) {
        const known = Object.keys(op.scalars);
        throw new RequestError(
          `${op.name} has no scalar ${JSON.stringify(k)}; its scalars: ${known.length ? known.join(", ") : "(none)"}`,
        );
      }
    }
    const file = await readSafetensors(inputPath);
    const inputs: Record<string, Tensor> = {};
    for (const n of op.inputs) {
      const t = file.tensors.get(n);
      if (t !== undefined) inputs[n] = t;
    }
    const options: ModelOptions = { model };
    // deno-lint-ignore no-explicit-any
    const anyOp = op as any;
    const evaluate = async (args: Record<string, Tensor>): Promise<Record<string, Tensor>> =>
      typeof anyOp.runAsync === "function"
        ? await anyOp.runAsync(args, scalars, options)
        : op.run(args, scalars, options);
    let outputs: Record<string, Tensor>;
    try {
      outputs = await evaluate(inputs);
    } catch (e) {
      // A file carries no strides. Where the model needs K-major operands (SM90 FP8) and the op's letters store one
      // MN-major, the operand is laid out K-major, as DeepGEMM's callers pass it: same values, same bits out.
      const kMajor = kMajorLayout(op.name, inputs);
      if (!(e instanceof TypeError && K_MAJOR_FAULT.test(e.message)) || kMajor === null) throw e;
      outputs = await evaluate(kMajor);
    }
    const metadata: Record<string, string> = {
      format_version: "1",
      oracle_version: denoConfig.version,
      op: op.name,
      model,
      scalars: JSON.stringify(scalars),
      source: inputPath,
    };
    const packed = packedUe8m0Names(Object.entries(outputs));
    if (packed.length > 0) metadata[PACKED_UE8M0_KEY] = JSON.stringify(packed);
    await writeSafetensors(outputPath, outputs, metadata);
    return { model, outputs: Object.keys(outputs) };
  }

  async #identify(r: Record<string, unknown>): Promise<Record<string, unknown>> {
    const name = field(r, "op", "string") as string;
    const op: RunnableOp | undefined = runOp(name);
    if (op === undefined) {
      throw new RequestError(`unknown op ${JSON.stringify(name)}; known: ${runOpNames().join(", ")}`);
    }
    const inputPath = this.#file(r, "inputs");
    const actualPath = this.#file(r, "actual");
    const scalars = { ...(field(r, "scalars", "object", true) as Record<string, unknown> | undefined) };
    for (const k of Object.keys(scalars)) {
      if (!Object.hasOwn(op.scalars, k)) throw new RequestError(`${op.name} has no scalar ${JSON.stringify(k)}`);
    }
    const top = r.top ?? 5;
    if (typeof top !== "number" || !Number.isSafeInteger(top) || top < 1) {
      throw new RequestError(`"top" must be a positive integer, got ${describe(top)}`);
    }
    const file = await readSafetensors(inputPath);
    const inputs: Record<string, Tensor> = {};
    for (const n of op.inputs) {
      const t = file.tensors.get(n);
      if (t !== undefined) inputs[n] = t;
    }
    const actual = Object.fromEntries((await readSafetensors(actualPath)).tensors);
    try {
      const result = identifyOutputs(op.name, inputs, scalars, actual, { top, source: inputPath });
      return { ...result };
    } catch (e) {
      if (e instanceof UsageError) throw new RequestError(e.message);
      throw e;
    }
  }

  #allCases(): Promise<VerifyCase[]> {
    // Read once per process: the fixtures from disk, the edge cases as lazy builders.
    this.#cases ??= Promise.all([collectCases("fixtures", 0.02, 0), collectCases("edge", 0.02, 0)]).then((
      [f, e],
    ) => [...f, ...e]);
    return this.#cases;
  }

  async #listCases(r: Record<string, unknown>): Promise<Record<string, unknown>> {
    const glob = (field(r, "op", "string", true) as string | undefined) ?? "*";
    const suite = (field(r, "suite", "string", true) as string | undefined) ?? "fixtures";
    if (!SERVE_SUITES.includes(suite)) {
      throw new RequestError(`unknown suite ${JSON.stringify(suite)}; known: ${SERVE_SUITES.join(", ")}`);
    }
    const match = opGlob(glob);
    const cases = (await this.#allCases()).filter((c) => (suite === "all" || c.suite === suite) && match(c.op));
    return { cases: cases.map((c) => ({ id: c.id, op: c.op, layout: c.layout, suite: c.suite })) };
  }

  async #writeCase(r: Record<string, unknown>): Promise<Record<string, unknown>> {
    const id = (typeof r.id === "string" && r.case === undefined ? r.id : field(r, "case", "string")) as string;
    const path = this.#file(r, "inputs");
    const c = (await this.#allCases()).find((x) => x.id === id);
    if (c === undefined) throw new RequestError(`no case ${JSON.stringify(id)} (the cmd "cases" lists them)`);
    const { inputs, scalars } = c.build();
    const metadata: Record<string, string> = {
      format_version: "1",
      oracle_version: denoConfig.version,
      id: c.id,
      op: c.op,
      layout: c.layout,
      suite: c.suite,
      scalars: JSON.stringify(scalars),
    };
    const packed = packedUe8m0Names(Object.entries(inputs));
    if (packed.length > 0) metadata[PACKED_UE8M0_KEY] = JSON.stringify(packed);
    await writeSafetensors(path, inputs, metadata);
    return { case: c.id, op: c.op, layout: c.layout, suite: c.suite, scalars };
  }
}

/**
 * Serves requests until the end of `lines`: writes the hello, then one answer per non-blank line.
 * @param lines the request lines
 * @param write writes one protocol line (the newline is added here)
 * @param session the server state (a fresh one by default)
 */
export async function serveLines(
  lines: AsyncIterable<string>,
  write: (line: string) => void,
  session: ServeSession = new ServeSession(),
): Promise<void> {
  write(JSON.stringify(session.hello()) + "\n");
  for await (const line of lines) {
    if (line.trim() === "") continue;
    write(JSON.stringify(await session.handleLine(line)) + "\n");
  }
}

const USAGE = `Usage: oracle serve

Runs the reference as a long-lived server: JSON lines on stdin and stdout (docs/backend-protocol.md §5), the
process the Python package gemm_oracle starts. The first stdout line is the hello, listing every op with its
inputs, outputs, scalars and models; then every request line gets one answer line:

  {"id": 1, "cmd": "run", "op": OP, "inputs": IN, "outputs": OUT, "model": MODEL|null, "scalars": {...}}
      runs OP's reference on the safetensors file IN and writes its outputs to OUT;
      answers "model" (the model used) and "outputs" (the names written)
  {"id": 2, "cmd": "cases", "op": GLOB, "suite": "fixtures"|"edge"|"all"}
      answers "cases": [{"id", "op", "layout", "suite"}, ...]
  {"id": 3, "cmd": "case", "case": CASE_ID, "inputs": FILE}
      writes the case's inputs to FILE (the packed UE8M0 scales listed in __metadata__.packed_ue8m0);
      answers "case", "op", "layout", "suite" and "scalars". {"id": CASE_ID, "cmd": "case", ...} works too
      and is answered with that id
  {"id": 4, "cmd": "identify", "op": OP, "inputs": IN, "actual": OUT, "scalars": {...}, "top": N}
      searches OP's model space for the variants that reproduce the outputs in OUT on the inputs in IN
      (oracle identify); answers "verdict", "matches" (each "label", "behaviours", "aliases"), "nearest"
      (when none matches: "label", "mismatches", "compared", "maps" with the tile grid and "classification"),
      "searched", "notApplicable", "unconfirmed", "survivors", "strategy", "outputs" and "ms"

Answers carry "status": "ok", or "error" with a "message"; an error never ends the server. Log lines go to
stderr. The server exits 0 at the end of its input.

Example: the hello, then the cases of fp8_gemm_nt:
  echo '{"id": 1, "cmd": "cases", "op": "fp8_gemm_nt"}' | deno task oracle serve

Exit status: 0 at the end of input, 2 bad arguments.`;

async function run(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseCommandArgs(args, {}, "serve");
  if (values.help) {
    io.stdout(USAGE + "\n");
    return EXIT.ok;
  }
  expectPositionals("serve", positionals, []);
  // stdout carries protocol lines only: anything the reference would log there goes to stderr while serving.
  const saved = { log: console.log, info: console.info, debug: console.debug };
  console.log = console.info = console.debug = console.error;
  try {
    await serveLines(readLines(Deno.stdin.readable), io.stdout, new ServeSession({ path: (p) => userPath(io, p) }));
  } finally {
    Object.assign(console, saved);
  }
  return EXIT.ok;
}

/** The `serve` subcommand. */
export const serveCommand: Command = Object.freeze({
  name: "serve",
  summary: "serve the reference over JSON lines on stdin/stdout (for the Python package)",
  usage: USAGE,
  run,
});

export { readLines };
