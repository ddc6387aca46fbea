/**
 * The backend protocol, version 1 (`docs/backend-protocol.md`): the messages a backend host and the oracle exchange
 * as JSON lines, and the checks that turn a malformed message into a named protocol fault instead of a crash.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseAnswer, parseHello } from "./protocol.ts";
 * const hello = parseHello({ protocol: "gemm-oracle-backend", version: 1, name: "mine", ops: { fp8_gemm_nt: "sm90_1d2d" } });
 * assert.equal(hello.ops.fp8_gemm_nt, "sm90_1d2d");
 * assert.deepEqual(parseAnswer({ id: 3, status: "ok" }, 3), { id: 3, status: "ok", restart: false });
 * assert.throws(() => parseAnswer({ id: 3, status: "banana" }, 3), /unknown status "banana"/);
 * ```
 * @module
 */

/** The `protocol` field of a backend host's hello. */
export const BACKEND_PROTOCOL = "gemm-oracle-backend";
/** The one protocol version this oracle speaks. */
export const PROTOCOL_VERSION = 1;

/** A host's first line: who it is and which ops it claims to match under which reference model. */
export interface Hello {
  readonly protocol: typeof BACKEND_PROTOCOL;
  readonly version: typeof PROTOCOL_VERSION;
  /** Short name for reports. */
  readonly name: string;
  /** DeepGEMM op name → the reference model the host claims to match bit for bit. */
  readonly ops: Readonly<Record<string, string>>;
  /** Free-form, copied into the report (a C ABI host puts `go_backend_info` and its device count here). */
  readonly info?: Record<string, unknown>;
  /** Set by a host that cannot run here (no GPU, library not importable): why. Its cases are skipped, never passed. */
  readonly unavailable?: string;
}

/** One output the oracle compares: safetensors dtype and shape. */
export interface OutSpec {
  readonly dtype: string;
  readonly shape: readonly number[];
}

/** A run request (oracle → host). */
export interface RunRequest {
  readonly id: number;
  readonly op: string;
  /** The reference model the outputs are checked against. */
  readonly model: string;
  /** Safetensors file with the inputs by DeepGEMM's argument names. */
  readonly inputs: string;
  /** Where the host writes its outputs. */
  readonly outputs: string;
  readonly scalars: Record<string, unknown>;
  readonly out: Readonly<Record<string, OutSpec>>;
}

/** A host's answer to one request. */
export interface Answer {
  readonly id: number;
  readonly status: "ok" | "unsupported" | "error";
  readonly message?: string;
  /** The host asks to be replaced before the next case (a sticky device fault). */
  readonly restart: boolean;
}

/** A message that breaks the protocol; the case becomes an ERROR row and the host is restarted. */
export class ProtocolError extends Error {
  override name = "ProtocolError";
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

/**
 * Checks a hello line.
 * @param v the parsed JSON
 * @returns the hello
 * @throws {ProtocolError} naming the first fault
 */
export function parseHello(v: unknown): Hello {
  if (!isObject(v)) throw new ProtocolError("the hello is not a JSON object");
  if (v.protocol !== BACKEND_PROTOCOL) {
    throw new ProtocolError(`the hello's "protocol" is ${JSON.stringify(v.protocol)}, not "${BACKEND_PROTOCOL}"`);
  }
  if (v.version !== PROTOCOL_VERSION) {
    throw new ProtocolError(
      `the host speaks protocol version ${JSON.stringify(v.version)}; this oracle speaks version ${PROTOCOL_VERSION}`,
    );
  }
  if (typeof v.name !== "string" || v.name.length === 0) throw new ProtocolError(`the hello's "name" must be a string`);
  if (!isObject(v.ops)) throw new ProtocolError(`the hello's "ops" must be an object of op name → model`);
  for (const [op, model] of Object.entries(v.ops)) {
    if (typeof model !== "string" || model.length === 0) {
      throw new ProtocolError(`the hello declares op "${op}" with model ${JSON.stringify(model)}, not a model name`);
    }
  }
  if (v.info !== undefined && !isObject(v.info)) throw new ProtocolError(`the hello's "info" must be an object`);
  if (v.unavailable !== undefined && (typeof v.unavailable !== "string" || !v.unavailable)) {
    throw new ProtocolError(`the hello's "unavailable" must be a non-empty string (why the backend cannot run here)`);
  }
  return {
    protocol: BACKEND_PROTOCOL,
    version: PROTOCOL_VERSION,
    name: v.name,
    ops: { ...(v.ops as Record<string, string>) },
    ...(v.info ? { info: v.info as Record<string, unknown> } : {}),
    ...(typeof v.unavailable === "string" ? { unavailable: v.unavailable } : {}),
  };
}

/**
 * Checks an answer line against the request it answers.
 * @param v the parsed JSON
 * @param id the request's id
 * @returns the answer
 * @throws {ProtocolError} naming the first fault
 */
export function parseAnswer(v: unknown, id: number): Answer {
  if (!isObject(v)) throw new ProtocolError("the answer is not a JSON object");
  if (v.id !== id) throw new ProtocolError(`the answer has id ${JSON.stringify(v.id)}, the request had ${id}`);
  if (v.status !== "ok" && v.status !== "unsupported" && v.status !== "error") {
    throw new ProtocolError(`the answer has unknown status ${JSON.stringify(v.status)} (ok, unsupported, error)`);
  }
  if (v.status !== "ok" && (typeof v.message !== "string" || v.message.length === 0)) {
    throw new ProtocolError(
      `a "${v.status}" answer needs a non-empty string "message", got ${JSON.stringify(v.message)}`,
    );
  }
  if (v.restart !== undefined && typeof v.restart !== "boolean") {
    throw new ProtocolError(`the answer's "restart" must be a boolean`);
  }
  return {
    id,
    status: v.status,
    ...(typeof v.message === "string" ? { message: v.message } : {}),
    restart: v.restart === true,
  };
}
