/**
 * The fault-injection backends of the tests, ready to use: {@link buildFaultBackend} compiles
 * `tests/fault/fault_backend.cpp` (a C ABI library that forwards to a real backend and injects the fault named by
 * `GO_FAULT`) into a cache keyed by its sources, and {@link faultEnv} gives the environment that points it at the
 * CPU backend. {@link FAULT_ADAPTER} is the command backend with the same faults, spoken over the protocol.
 *
 * @example
 * ```ts ignore
 * import { buildFaultBackend, faultEnv } from "./_fault.ts";
 * const lib = await buildFaultBackend();
 * const env = await faultEnv("segv"); // GO_FAULT=segv, GO_FAULT_INNER=<the CPU backend>
 * ```
 * @module
 * @private
 */
import { fileURLToPath } from "node:url";
import { buildBackend } from "../../kernels/build.ts";

const HERE = fileURLToPath(new URL(".", import.meta.url));
const REPO = fileURLToPath(new URL("../../", import.meta.url));

/** Absolute path of the fault library's source. */
export const FAULT_BACKEND_SOURCE = `${HERE}fault_backend.cpp`;
/** Absolute path of the fault command backend (`cmd:python3 tests/fault/fault_adapter.py`, from the repo root). */
export const FAULT_ADAPTER = `${HERE}fault_adapter.py`;
/** Compiler flags (part of the cache key). */
const FLAGS = ["-std=c++17", "-O1", "-fPIC", "-shared", "-Wall", "-Wextra", "-Werror"];

async function sha256Hex(text: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)));
  return Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
}

async function output(cmd: string, args: string[]): Promise<{ ok: boolean; text: string }> {
  const out = await new Deno.Command(cmd, { args, stdout: "piped", stderr: "piped" }).output();
  const dec = new TextDecoder();
  return { ok: out.success, text: dec.decode(out.stdout) + dec.decode(out.stderr) };
}

/**
 * Builds (or finds in `.cache/fault/`) the fault library and returns its absolute path. The cache key is the
 * sha256 of the source, the ABI header, the compiler's version and the flags; the compile goes to a private name and
 * is renamed into place, so parallel test processes may build it at once.
 * @throws {Error} with the compiler's message when g++ fails
 */
export async function buildFaultBackend(): Promise<string> {
  const header = `${REPO}kernels/gemm_oracle.h`;
  const version = (await output("g++", ["--version"])).text;
  const key = [FLAGS.join(" "), version, await Deno.readTextFile(header), await Deno.readTextFile(FAULT_BACKEND_SOURCE)]
    .join("\0");
  const dir = `${REPO}.cache/fault/${(await sha256Hex(key)).slice(0, 24)}`;
  const lib = `${dir}/libgemm_oracle_fault.so`;
  try {
    await Deno.stat(lib);
    return lib;
  } catch { /* not built yet */ }
  await Deno.mkdir(dir, { recursive: true });
  const tmp = `${dir}/.tmp-${Deno.pid}-${crypto.randomUUID()}.so`;
  const r = await output("g++", [...FLAGS, "-I", `${REPO}kernels`, "-o", tmp, FAULT_BACKEND_SOURCE, "-ldl"]);
  if (!r.ok) {
    await Deno.remove(tmp).catch(() => {});
    throw new Error(`g++ failed to build ${FAULT_BACKEND_SOURCE}:\n${r.text}`);
  }
  await Deno.rename(tmp, lib);
  return lib;
}

/** Environment variables of the fault library and the fault adapter (`fault_backend.cpp`'s header lists them). */
export interface FaultOptions {
  /** The C function to fault (library only; default `go_fp8_gemm`). */
  op?: string;
  /** Fault the N-th and later calls of each process only. */
  after?: number;
  /** File that gets a line per fault (and, from the adapter, per start) with the process id. */
  pidfile?: string;
  /** Directory for the adapter's `crash_then_dead` marker. */
  state?: string;
  /** The adapter writes control characters to stderr before a crash (`GO_FAULT_NOISE=1`). */
  noise?: boolean;
}

/**
 * The environment that selects a fault, with `GO_FAULT_INNER` pointing at the CPU backend (built if needed).
 * @param fault the `GO_FAULT` value
 * @param options the other variables
 */
export async function faultEnv(fault: string, options: FaultOptions = {}): Promise<Record<string, string>> {
  const env: Record<string, string> = { GO_FAULT: fault, GO_FAULT_INNER: (await buildBackend("cpu")).path };
  if (options.op !== undefined) env.GO_FAULT_OP = options.op;
  if (options.after !== undefined) env.GO_FAULT_AFTER = String(options.after);
  if (options.pidfile !== undefined) env.GO_FAULT_PIDFILE = options.pidfile;
  if (options.state !== undefined) env.GO_FAULT_STATE = options.state;
  if (options.noise) env.GO_FAULT_NOISE = "1";
  return env;
}
