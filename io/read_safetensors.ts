/**
 * The safetensors reader: validates the whole header before touching data, then copies each tensor into
 * oracle storage (F4 unpacked to one code per byte).
 *
 * Checks, in order (interfaces.md §5; deno-notes.md §3.2 for the format): 8-byte length present; header length
 * ≤ 100,000,000 and within the file; header is UTF-8 JSON starting with `{`, with no duplicate keys; every entry
 * has exactly `dtype`, `shape`, `data_offsets`; known dtype; shape of safe non-negative integers whose element count
 * fits; F4 element counts even; `__metadata__` maps strings to strings; each tensor's byte size equals
 * `end − begin`; offsets inside the data; offsets contiguous from 0 to the end of the file (no holes, no overlap).
 * No buffer is allocated before its length has passed these checks.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Tensor } from "../reference/tensor/mod.ts";
 * import { parseSafetensors, serializeSafetensors } from "./mod.ts";
 * const bytes = serializeSafetensors({ x: Tensor.from("bf16", [2], new Uint16Array([0x3f80, 0xc000])) });
 * const { tensors } = parseSafetensors(bytes, "mem");
 * assert.deepEqual([...tensors.get("x")!.data], [0x3f80, 0xc000]);
 * ```
 * @module
 */
import { numel, type Storage, Tensor } from "../reference/tensor/mod.ts";
import { type JsonValue, parseStrictJson } from "./_strict_json.ts";
import {
  F4_HIGH_FIRST,
  F4_LOW_FIRST,
  F4_NIBBLE_ORDER_KEY,
  isSafetensorsDtype,
  SAFETENSORS_DTYPES,
  type SafetensorsDtype,
  UNSUPPORTED_SAFETENSORS_DTYPES,
} from "./safetensors_dtype.ts";
import { SafetensorsError } from "./safetensors_error.ts";

/** Largest header the reader accepts, as in the reference implementation (`MAX_HEADER_SIZE`, deno-notes.md §3.2). */
export const MAX_HEADER_BYTES = 100_000_000;

/** The contents of a safetensors file. */
export interface SafetensorsFile {
  /** Tensors by name, in file (data offset) order; all contiguous. */
  readonly tensors: Map<string, Tensor>;
  /** `__metadata__` (string → string), empty when absent. */
  readonly metadata: Record<string, string>;
  /** The safetensors dtype each tensor was stored as. */
  readonly fileDtypes: Map<string, SafetensorsDtype>;
}

interface Entry {
  name: string;
  stDtype: SafetensorsDtype;
  shape: number[];
  begin: number;
  end: number;
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

function describe(v: JsonValue): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "an array";
  if (v instanceof Map) return "an object";
  return `a ${typeof v}`;
}

function safeIndexArray(file: string, name: string, key: string, v: JsonValue | undefined): number[] {
  if (!Array.isArray(v)) {
    throw new SafetensorsError(file, `tensor "${name}": "${key}" must be an array, got ${describe(v ?? null)}`);
  }
  for (const d of v) {
    if (typeof d !== "number" || !Number.isSafeInteger(d) || d < 0) {
      throw new SafetensorsError(
        file,
        `tensor "${name}": "${key}" holds ${JSON.stringify(d)}, not a non-negative integer`,
      );
    }
  }
  return v as number[];
}

/**
 * Validates and decodes safetensors bytes.
 * @param bytes the whole file
 * @param file the name used in error messages
 * @returns tensors, metadata and the stored dtypes
 * @throws {SafetensorsError} naming the file and the fault, for every malformed input
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseSafetensors, SafetensorsError } from "./mod.ts";
 * assert.throws(() => parseSafetensors(new Uint8Array(3), "t.safetensors"), SafetensorsError);
 * ```
 */
export function parseSafetensors(bytes: Uint8Array, file = "<buffer>"): SafetensorsFile {
  if (!(bytes instanceof Uint8Array)) throw new TypeError("parseSafetensors() needs a Uint8Array");
  if (bytes.length < 8) {
    throw new SafetensorsError(file, `truncated: ${bytes.length} bytes, fewer than the 8-byte header length`);
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const headerLen = view.getBigUint64(0, true);
  if (headerLen > BigInt(MAX_HEADER_BYTES)) {
    throw new SafetensorsError(file, `header length ${headerLen} exceeds the ${MAX_HEADER_BYTES}-byte limit`);
  }
  const n = Number(headerLen);
  if (n > bytes.length - 8) {
    throw new SafetensorsError(
      file,
      `header length ${n} is beyond the end of the file (${bytes.length - 8} bytes follow it)`,
    );
  }
  if (n < 2) throw new SafetensorsError(file, `header length ${n} is too small for a JSON object`);
  let text: string;
  try {
    text = utf8.decode(bytes.subarray(8, 8 + n));
  } catch {
    throw new SafetensorsError(file, "header is not valid UTF-8");
  }
  if (text[0] !== "{") throw new SafetensorsError(file, "header does not start with '{'");
  let header: JsonValue;
  try {
    header = parseStrictJson(text);
  } catch (e) {
    throw new SafetensorsError(file, `header is not valid JSON: ${(e as Error).message}`);
  }
  if (!(header instanceof Map)) throw new SafetensorsError(file, "header is not a JSON object");

  const metadata: Record<string, string> = {};
  const entries: Entry[] = [];
  for (const [name, v] of header) {
    if (name === "__metadata__") {
      if (!(v instanceof Map)) throw new SafetensorsError(file, `"__metadata__" must be an object, got ${describe(v)}`);
      for (const [k, s] of v) {
        if (typeof s !== "string") {
          throw new SafetensorsError(file, `"__metadata__" value of "${k}" must be a string, got ${describe(s)}`);
        }
        Object.defineProperty(metadata, k, { value: s, enumerable: true, writable: true, configurable: true });
      }
      continue;
    }
    if (!(v instanceof Map)) throw new SafetensorsError(file, `tensor "${name}" must be an object, got ${describe(v)}`);
    for (const k of v.keys()) {
      if (k !== "dtype" && k !== "shape" && k !== "data_offsets") {
        throw new SafetensorsError(file, `tensor "${name}" has an unexpected key "${k}"`);
      }
    }
    const dt = v.get("dtype");
    if (typeof dt !== "string") throw new SafetensorsError(file, `tensor "${name}": "dtype" must be a string`);
    if (!isSafetensorsDtype(dt)) {
      const known = UNSUPPORTED_SAFETENSORS_DTYPES.includes(dt);
      throw new SafetensorsError(
        file,
        `tensor "${name}": ${known ? "unsupported" : "unknown"} dtype ${JSON.stringify(dt)} (supported: ${
          Object.keys(SAFETENSORS_DTYPES).join(" ")
        })`,
      );
    }
    const shape = safeIndexArray(file, name, "shape", v.get("shape"));
    if (shape.length > 16) throw new SafetensorsError(file, `tensor "${name}": rank ${shape.length} exceeds 16`);
    const offsets = safeIndexArray(file, name, "data_offsets", v.get("data_offsets"));
    if (offsets.length !== 2) {
      throw new SafetensorsError(
        file,
        `tensor "${name}": "data_offsets" must hold [begin, end], got ${offsets.length} numbers`,
      );
    }
    const [begin, end] = offsets;
    if (end < begin) {
      throw new SafetensorsError(file, `tensor "${name}": data_offsets [${begin}, ${end}] end before begin`);
    }
    let count = 1;
    for (const d of shape) {
      count *= d;
      if (!Number.isSafeInteger(count)) {
        throw new SafetensorsError(file, `tensor "${name}": shape [${shape.join(", ")}] has too many elements`);
      }
    }
    const bits = SAFETENSORS_DTYPES[dt].bits;
    if ((count * bits) % 8 !== 0) {
      throw new SafetensorsError(
        file,
        `tensor "${name}": ${count} ${dt} elements do not fill whole bytes (an F4 tensor needs an even element count)`,
      );
    }
    const size = (count * bits) / 8;
    if (!Number.isSafeInteger(size)) throw new SafetensorsError(file, `tensor "${name}": byte size overflows`);
    if (end - begin !== size) {
      throw new SafetensorsError(
        file,
        `tensor "${name}": shape [${
          shape.join(", ")
        }] × ${dt} needs ${size} bytes but data_offsets [${begin}, ${end}] span ${end - begin}`,
      );
    }
    entries.push({ name, stDtype: dt, shape, begin, end });
  }

  const dataStart = 8 + n;
  const dataLen = bytes.length - dataStart;
  for (const e of entries) {
    if (e.end > dataLen) {
      throw new SafetensorsError(
        file,
        `tensor "${e.name}": data_offsets [${e.begin}, ${e.end}] out of range of the ${dataLen}-byte data section`,
      );
    }
  }
  const sorted = [...entries].sort((a, b) => a.begin - b.begin || a.end - b.end);
  let pos = 0;
  for (const e of sorted) {
    if (e.begin > pos) {
      throw new SafetensorsError(
        file,
        `hole in the data: bytes [${pos}, ${e.begin}) belong to no tensor (before "${e.name}")`,
      );
    }
    if (e.begin < pos) {
      throw new SafetensorsError(file, `tensor "${e.name}" overlaps another tensor at byte ${e.begin}`);
    }
    pos = e.end;
  }
  if (pos !== dataLen) {
    throw new SafetensorsError(file, `hole in the data: bytes [${pos}, ${dataLen}) at the end belong to no tensor`);
  }

  const nibbleOrder = Object.hasOwn(metadata, F4_NIBBLE_ORDER_KEY) ? metadata[F4_NIBBLE_ORDER_KEY] : F4_LOW_FIRST;
  if (nibbleOrder !== F4_LOW_FIRST && nibbleOrder !== F4_HIGH_FIRST) {
    throw new SafetensorsError(
      file,
      `"__metadata__.${F4_NIBBLE_ORDER_KEY}" is ${
        JSON.stringify(nibbleOrder)
      }, not "${F4_LOW_FIRST}" or "${F4_HIGH_FIRST}"`,
    );
  }

  const tensors = new Map<string, Tensor>();
  const fileDtypes = new Map<string, SafetensorsDtype>();
  for (const e of sorted) {
    const raw = bytes.subarray(dataStart + e.begin, dataStart + e.end);
    tensors.set(e.name, decodeTensor(e, raw, nibbleOrder === F4_LOW_FIRST));
    fileDtypes.set(e.name, e.stDtype);
  }
  return { tensors, metadata, fileDtypes };
}

/** True on little-endian hosts; safetensors data is little-endian. */
const HOST_LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

function decodeTensor(e: Entry, raw: Uint8Array, lowFirst: boolean): Tensor {
  const info = SAFETENSORS_DTYPES[e.stDtype];
  const count = numel(e.shape);
  if (e.stDtype === "F4") {
    const codes = new Uint8Array(count);
    for (let i = 0; i < raw.length; i++) {
      const b = raw[i];
      codes[2 * i] = lowFirst ? b & 0xf : b >> 4;
      codes[2 * i + 1] = lowFirst ? b >> 4 : b & 0xf;
    }
    return Tensor.from("e2m1", e.shape, codes);
  }
  const width = info.bits / 8;
  const copy = new Uint8Array(raw.length);
  copy.set(raw);
  if (!HOST_LITTLE_ENDIAN && width > 1) {
    for (let i = 0; i < copy.length; i += width) copy.subarray(i, i + width).reverse();
  }
  let data: Storage;
  switch (info.dtype) {
    case "f32":
      data = new Float32Array(copy.buffer, 0, count);
      break;
    case "bf16":
    case "f16":
      data = new Uint16Array(copy.buffer, 0, count);
      break;
    case "i32":
      data = new Int32Array(copy.buffer, 0, count);
      break;
    case "i64":
      data = new BigInt64Array(copy.buffer, 0, count);
      break;
    case "i8":
      data = new Int8Array(copy.buffer, 0, count);
      break;
    default:
      data = copy;
  }
  return Tensor.from(info.dtype, e.shape, data);
}

/**
 * Reads and validates a safetensors file.
 * @param path the file
 * @returns its tensors and metadata
 * @throws {SafetensorsError} for malformed files; Deno's own errors when the file cannot be read
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Tensor } from "../reference/tensor/mod.ts";
 * import { readSafetensors, writeSafetensors } from "./mod.ts";
 * const path = await Deno.makeTempFile({ suffix: ".safetensors" });
 * await writeSafetensors(path, { k: Tensor.from("i32", [1], new Int32Array([7])) });
 * assert.equal((await readSafetensors(path)).tensors.get("k")!.at(0), 7);
 * await Deno.remove(path);
 * ```
 */
export async function readSafetensors(path: string): Promise<SafetensorsFile> {
  return parseSafetensors(await Deno.readFile(path), path);
}
