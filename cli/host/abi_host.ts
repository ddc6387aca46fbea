/**
 * The C ABI backend host: `deno run -A cli/host/abi_host.ts cpu|cuda|PATH.so [--device N]` loads a library that
 * implements `kernels/gemm_oracle.h` and serves it over the backend protocol (`docs/backend-protocol.md`), so that
 * `verify` survives whatever the library does. It declares every op of `cli/verify/backend_ops.ts` whose family the
 * library names a model for (`go_backend_info` "models"), under the reference's name for that model; an op only another
 * architecture runs (its `arch` in `reference/registry.ts`) is answered `unsupported` with the architecture it needs.
 *
 * A `GO_ERR_UNSUPPORTED` status answers `unsupported`; `GO_ERR_DEVICE` answers `error` with `restart`, since a CUDA
 * fault leaves the context unusable; any other failure answers `error` with the library's message.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { abiModelFor } from "./abi_host.ts";
 * assert.equal(abiModelFor("fp8_mqa_logits", "sm90"), "sm90_mqa");
 * assert.equal(abiModelFor("fp8_gemm_nt", "sm90_1d2d"), "sm90_1d2d");
 * ```
 * @module
 */
import { parseArgs } from "node:util";
import { type Backend, openBackend } from "../../ffi/backend.ts";
import { BackendNotAvailableError, NativeError } from "../../ffi/errors.ts";
import { MODEL_CODES } from "../../ffi/models.ts";
import { readSafetensors, SAFETENSORS_DTYPES, type SafetensorsDtype, writeSafetensors } from "../../io/mod.ts";
import { Tensor } from "../../reference/tensor/tensor.ts";
import {
  archSkip,
  ArchUnsupportedError,
  BACKEND_OPS,
  backendOp,
  cloneTensor,
  hasEntry,
} from "../verify/backend_ops.ts";
import { readLines } from "./lines.ts";
import { BACKEND_PROTOCOL, PROTOCOL_VERSION } from "./protocol.ts";

/**
 * The ABI's name of a reference model for an op (the ABI calls the indexer's `sm90` model `sm90_mqa` and the HC
 * prenorm's `tf32`); a name without a mapping passes through.
 */
export function abiModelFor(op: string, referenceModel: string): string {
  const bop = backendOp(op);
  if (!bop?.referenceModel) return referenceModel;
  for (const m of Object.keys(MODEL_CODES)) {
    if (bop.referenceModel(m) === referenceModel && m !== referenceModel) return m;
  }
  return referenceModel;
}

/** The ops a library declares: op → reference model, from its `go_backend_info` models per family. */
function declaredOps(backend: Backend): Record<string, string> {
  const models = (backend.info as unknown as { models?: Record<string, string> }).models ?? {};
  const ops: Record<string, string> = {};
  for (const [op, bop] of Object.entries(BACKEND_OPS)) {
    if (archSkip(op, backend.name, backend.info.arch) || !hasEntry(backend, bop)) continue;
    const m = models[bop.family];
    if (m) ops[op] = bop.referenceModel?.(m) ?? m;
  }
  return ops;
}

const encoder = new TextEncoder();

/**
 * Where protocol lines go. A kernel library may print to stdout (compile progress, debug output, half a line): on
 * Linux the host keeps a private copy of fd 1 for the protocol and points fd 1 at stderr (libc `dup`, `dup2`), so
 * nothing the library prints can reach the protocol stream. Elsewhere each protocol line starts on a fresh line.
 */
function privateStdout(): { writeSync(p: Uint8Array): number } {
  try {
    const libc = Deno.dlopen("libc.so.6", {
      dup: { parameters: ["i32"], result: "i32" },
      dup2: { parameters: ["i32", "i32"], result: "i32" },
    });
    const fd = libc.symbols.dup(1);
    if (fd < 0 || libc.symbols.dup2(2, 1) < 0) throw new Error("dup failed");
    return Deno.openSync(`/proc/self/fd/${fd}`, { write: true });
  } catch {
    return Deno.stdout;
  }
}

/** Set by `main` (only the host process redirects its stdout; modules that import this file do not). */
let protocolOut: { writeSync(p: Uint8Array): number } = Deno.stdout;

function send(msg: unknown): void {
  const bytes = encoder.encode("\n" + JSON.stringify(msg) + "\n");
  for (let off = 0; off < bytes.length;) off += protocolOut.writeSync(bytes.subarray(off));
}

/** Answers one request. */
async function serveOne(backend: Backend, req: Record<string, unknown>): Promise<Record<string, unknown>> {
  const id = req.id;
  const op = String(req.op);
  // An op only another architecture runs is answered with the architecture it needs (it is never declared).
  const arch = archSkip(op, backend.name, backend.info.arch);
  if (arch) return { id, status: "unsupported", message: arch };
  const bop = backendOp(op);
  if (!bop || !hasEntry(backend, bop)) {
    return { id, status: "unsupported", message: `${backend.name}: the kernel ABI has no entry for ${op}` };
  }
  const file = await readSafetensors(String(req.inputs));
  const inputs = Object.fromEntries(file.tensors);
  const out: Record<string, Tensor> = {};
  for (const [name, spec] of Object.entries(req.out as Record<string, { dtype: SafetensorsDtype; shape: number[] }>)) {
    const info = SAFETENSORS_DTYPES[spec.dtype];
    if (!info) return { id, status: "error", message: `output "${name}": unknown dtype ${spec.dtype}` };
    out[name] = inputs[name] ? cloneTensor(inputs[name]) : Tensor.zeros(info.dtype, spec.shape);
  }
  try {
    bop.run(backend, inputs, (req.scalars ?? {}) as Record<string, unknown>, abiModelFor(op, String(req.model)), out);
  } catch (e) {
    if ((e instanceof NativeError && e.code === "GO_ERR_UNSUPPORTED") || e instanceof ArchUnsupportedError) {
      return { id, status: "unsupported", message: e.message };
    }
    const restart = e instanceof NativeError && e.code === "GO_ERR_DEVICE";
    return { id, status: "error", message: (e as Error).message || String(e), ...(restart ? { restart } : {}) };
  }
  await writeSafetensors(String(req.outputs), out);
  return { id, status: "ok" };
}

async function main(): Promise<number> {
  const { values, positionals } = parseArgs({
    args: Deno.args,
    options: { device: { type: "string" } },
    allowPositionals: true,
  });
  if (positionals.length !== 1) {
    console.error("usage: abi_host.ts cpu|cuda|PATH.so [--device N]");
    return 2;
  }
  const spec = positionals[0];
  protocolOut = privateStdout();
  let backend: Backend;
  try {
    backend = await openBackend(spec);
  } catch (e) {
    if (e instanceof BackendNotAvailableError) {
      send({ protocol: BACKEND_PROTOCOL, version: PROTOCOL_VERSION, name: spec, ops: {}, unavailable: e.message });
      return 0;
    }
    console.error(`abi_host: backend ${spec}: ${(e as Error).message}`);
    return 2;
  }
  const info: Record<string, unknown> = { ...(backend.info as unknown as Record<string, unknown>) };
  const count = new Int32Array(1);
  if (backend.library.symbols.go_device_count(count) === 0) info.devices = count[0];
  if (values.device !== undefined) {
    const d = Number(values.device);
    backend.library.check(backend.library.symbols.go_set_device(d), "go_set_device");
    info.device = d;
  }
  send({ protocol: BACKEND_PROTOCOL, version: PROTOCOL_VERSION, name: backend.name, ops: declaredOps(backend), info });
  for await (const raw of readLines(Deno.stdin.readable)) {
    const line = raw.trim();
    if (!line) continue;
    let req: Record<string, unknown>;
    try {
      req = JSON.parse(line);
    } catch {
      send({ id: null, status: "error", message: `not a JSON request: ${line.slice(0, 80)}` });
      continue;
    }
    try {
      send(await serveOne(backend, req));
    } catch (e) {
      send({ id: req.id, status: "error", message: (e as Error).message || String(e) });
    }
  }
  backend.close();
  return 0;
}

if (import.meta.main) Deno.exit(await main());
