/**
 * A backend behind the protocol, as `verify` and `oracle run --backend` use it: tensors go to the host as safetensors
 * files in a scratch directory, outputs come back checked against the names, dtypes and shapes asked for, and a host
 * that crashed, hung, broke the protocol or asked for a restart is replaced before the next case
 * (`docs/backend-protocol.md` §4).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { hostCommand } from "./hosted_backend.ts";
 * assert.deepEqual(hostCommand("cmd:python3 my_adapter.py").argv, ["/bin/sh", "-c", "python3 my_adapter.py"]);
 * assert.equal(hostCommand("cpu").argv.at(-1), "cpu");
 * assert.deepEqual(hostCommand("cuda", 1).argv.slice(-3), ["cuda", "--device", "1"]);
 * ```
 * @module
 */
import {
  PACKED_UE8M0_KEY,
  packedUe8m0Names,
  readSafetensors,
  safetensorsDtypeOf,
  serializeSafetensors,
} from "../../io/mod.ts";
import type { Tensor } from "../../reference/tensor/tensor.ts";
import { type HostCommand, HostProcess, HostStartError } from "./process.ts";
import type { Hello, OutSpec } from "./protocol.ts";

const ABI_HOST = new URL("./abi_host.ts", import.meta.url).pathname;

/**
 * How to start the host of a backend spec: `cmd:COMMAND` runs COMMAND under `/bin/sh -c` in the directory the user
 * ran the oracle from (`INIT_CWD`, which `deno task` sets to it, else the current directory);
 * `cpu`, `cuda` and library paths run the C ABI host (`cli/host/abi_host.ts`) in a fresh Deno.
 * @param spec the `--backend` value
 * @param device the GPU the host selects (C ABI hosts; `cmd:` hosts get `CUDA_VISIBLE_DEVICES`)
 */
export function hostCommand(spec: string, device?: number): HostCommand {
  if (spec.startsWith("cmd:")) {
    const command = spec.slice(4).trim();
    if (!command) throw new TypeError(`backend "${spec}": "cmd:" needs a command`);
    return {
      name: spec,
      argv: ["/bin/sh", "-c", command],
      cwd: Deno.env.get("INIT_CWD") || Deno.cwd(),
      ...(device !== undefined ? { env: { CUDA_VISIBLE_DEVICES: String(device) } } : {}),
    };
  }
  const lib = spec === "cpu" || spec === "cuda" || spec.startsWith("/") ? spec : `${Deno.cwd()}/${spec}`;
  return {
    name: spec,
    argv: [
      Deno.execPath(),
      "run",
      "-A",
      "--no-check",
      ABI_HOST,
      lib,
      ...(device !== undefined ? ["--device", String(device)] : []),
    ],
  };
}

/** What one op call on a hosted backend came to. */
export type HostedOutcome =
  | { readonly kind: "ok"; readonly outputs: Record<string, Tensor> }
  | { readonly kind: "unsupported"; readonly message: string }
  | { readonly kind: "error" | "crash" | "timeout" | "protocol"; readonly message: string };

/** Options of {@link HostedBackend.open}. */
export interface HostedOptions {
  /** Longest wait for one answer (`--case-timeout`). */
  caseTimeoutMs: number;
  /** Longest wait for a hello (`--host-start-timeout`). */
  startTimeoutMs: number;
  /** Where the host's stderr and stray stdout lines go. */
  log: (line: string) => void;
}

/** Scratch directories of open backends, removed by {@link removeScratchDirs} when the oracle is interrupted. */
const SCRATCH = new Set<string>();

/** Removes every open backend's scratch directory (synchronously: for a signal handler about to exit). */
export function removeScratchDirs(): void {
  for (const dir of SCRATCH) {
    try {
      Deno.removeSync(dir, { recursive: true });
    } catch { /* already gone */ }
  }
  SCRATCH.clear();
}

/** Hosts started in a row without a hello before the backend is given up. */
const MAX_FAILED_STARTS = 3;

/** A backend whose host is started, restarted and stopped here. */
export class HostedBackend {
  /** The first host's hello. */
  readonly hello: Hello;
  readonly #cmd: HostCommand;
  readonly #options: HostedOptions;
  readonly #scratch: string;
  #host: HostProcess | null;
  #nextId = 1;
  #failedStarts = 0;
  #gaveUp: string | null = null;

  private constructor(cmd: HostCommand, options: HostedOptions, scratch: string, host: HostProcess) {
    this.#cmd = cmd;
    this.#options = options;
    this.#scratch = scratch;
    this.#host = host;
    this.hello = host.hello;
  }

  /**
   * Starts the first host.
   * @throws {HostStartError} when it gives no valid hello
   */
  static async open(cmd: HostCommand, options: HostedOptions): Promise<HostedBackend> {
    const host = await HostProcess.start(cmd, options);
    const scratch = await Deno.makeTempDir({ prefix: "gemm-oracle-host-" });
    SCRATCH.add(scratch);
    return new HostedBackend(cmd, options, scratch, host);
  }

  /** The backend's name in reports. */
  get name(): string {
    return this.#cmd.name;
  }

  /** The model the host declares for an op, or undefined. */
  declared(op: string): string | undefined {
    return Object.hasOwn(this.hello.ops, op) ? this.hello.ops[op] : undefined;
  }

  async #ensureHost(): Promise<HostProcess | string> {
    if (this.#host && !this.#host.exited) return this.#host;
    if (this.#gaveUp) return this.#gaveUp;
    for (;;) {
      try {
        this.#host = await HostProcess.start(this.#cmd, this.#options);
        this.#failedStarts = 0;
        return this.#host;
      } catch (e) {
        if (!(e instanceof HostStartError)) throw e;
        if (++this.#failedStarts >= MAX_FAILED_STARTS) {
          this.#gaveUp = `backend host could not be restarted (${MAX_FAILED_STARTS} starts failed): ${
            e.message.trim().split("\n").join(" | ")
          }`;
          return this.#gaveUp;
        }
      }
    }
  }

  async #retire(): Promise<void> {
    const h = this.#host;
    this.#host = null;
    if (h) {
      h.kill();
      await h.close();
    }
  }

  /**
   * Runs an op on the host.
   * @param op DeepGEMM op name
   * @param inputs the op's tensors by DeepGEMM's argument names
   * @param scalars the op's scalars
   * @param model the reference model the outputs are checked against
   * @param out every output to bring back: name → a tensor of its dtype and shape
   */
  async run(
    op: string,
    inputs: Record<string, Tensor>,
    scalars: Record<string, unknown>,
    model: string,
    out: Record<string, Tensor>,
  ): Promise<HostedOutcome> {
    const host = await this.#ensureHost();
    if (typeof host === "string") return { kind: "error", message: host };
    const id = this.#nextId++;
    const inPath = `${this.#scratch}/${id}.in.safetensors`, outPath = `${this.#scratch}/${id}.out.safetensors`;
    const packed = packedUe8m0Names(Object.entries(inputs));
    await Deno.writeFile(
      inPath,
      serializeSafetensors(inputs, packed.length ? { [PACKED_UE8M0_KEY]: JSON.stringify(packed) } : {}),
    );
    const spec: Record<string, OutSpec> = {};
    for (const [name, t] of Object.entries(out)) {
      spec[name] = { dtype: safetensorsDtypeOf(t.dtype), shape: [...t.shape] };
    }
    try {
      const got = await host.request(
        { id, op, model, inputs: inPath, outputs: outPath, scalars: jsonScalars(scalars), out: spec },
        this.#options.caseTimeoutMs,
      );
      if (got.kind !== "answer") {
        await this.#retire();
        return got;
      }
      const a = got.answer;
      if (a.restart) await this.#retire();
      if (a.status === "unsupported") return { kind: "unsupported", message: a.message! };
      if (a.status === "error") return { kind: "error", message: a.message! };
      const read = await readOutputs(outPath, out);
      if (typeof read === "string") {
        await this.#retire();
        return { kind: "protocol", message: `protocol error: ${read}` };
      }
      return { kind: "ok", outputs: read };
    } finally {
      await Deno.remove(inPath).catch(() => {});
      await Deno.remove(outPath).catch(() => {});
    }
  }

  /** Stops the host and removes the scratch directory. */
  async close(): Promise<void> {
    await this.#host?.close();
    this.#host = null;
    await Deno.remove(this.#scratch, { recursive: true }).catch(() => {});
    SCRATCH.delete(this.#scratch);
  }
}

/** Scalars as JSON (bigints become numbers when safe; anything else JSON cannot hold is refused). */
function jsonScalars(scalars: Record<string, unknown>): Record<string, unknown> {
  return JSON.parse(JSON.stringify(scalars, (_k, v) => {
    if (typeof v === "bigint") {
      if (v > BigInt(Number.MAX_SAFE_INTEGER) || v < -BigInt(Number.MAX_SAFE_INTEGER)) {
        throw new TypeError(`scalar ${v} does not fit a JSON number`);
      }
      return Number(v);
    }
    return v;
  }));
}

/** The outputs the host wrote, or what is wrong with them. */
async function readOutputs(path: string, want: Record<string, Tensor>): Promise<Record<string, Tensor> | string> {
  let tensors: Map<string, Tensor>;
  try {
    tensors = (await readSafetensors(path)).tensors;
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return `the host answered ok but wrote no output file ${path}`;
    return `the output file is not valid safetensors: ${(e as Error).message}`;
  }
  const got: Record<string, Tensor> = {};
  for (const [name, w] of Object.entries(want)) {
    const t = tensors.get(name);
    if (!t) return `the output file lacks "${name}" (it holds ${[...tensors.keys()].join(", ") || "nothing"})`;
    if (t.dtype !== w.dtype) {
      return `output "${name}" is ${safetensorsDtypeOf(t.dtype)}, expected ${safetensorsDtypeOf(w.dtype)}`;
    }
    if (t.shape.length !== w.shape.length || t.shape.some((d, i) => d !== w.shape[i])) {
      return `output "${name}" has shape [${t.shape.join(", ")}], expected [${w.shape.join(", ")}]`;
    }
    got[name] = t;
  }
  return got;
}
