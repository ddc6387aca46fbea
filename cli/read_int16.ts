/**
 * Reads a safetensors file for `oracle compare`, I16 and U16 tensors included. The oracle's tensors have no 16-bit
 * integer dtype (the safetensors reader refuses both), yet a kernel's BF16 output saved as its `torch.int16` view (the
 * way DeepGEMM's tests compare bits) is an I16 tensor: here each I16 / U16 tensor is loaded as its 16-bit storage (a
 * tensor of dtype bf16 holding the bits) and named in {@link Int16File.int16}, so the comparison can read it as the
 * integers it is. Every other check of the reader applies unchanged: the header is validated with those tensors
 * spelled `BF16` (same width), and a fault about one of them names its real dtype. A file without I16 / U16 tensors
 * is read exactly as `readSafetensors` reads it.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { readSafetensorsWithInt16 } from "./read_int16.ts";
 * const header = new TextEncoder().encode('{"d":{"dtype":"I16","shape":[2],"data_offsets":[0,4]}}');
 * const bytes = new Uint8Array(8 + header.length + 4);
 * new DataView(bytes.buffer).setBigUint64(0, BigInt(header.length), true);
 * bytes.set(header, 8);
 * bytes.set([0xff, 0xff, 0x80, 0x3f], 8 + header.length); // -1, 0x3f80
 * const path = await Deno.makeTempFile({ suffix: ".safetensors" });
 * await Deno.writeFile(path, bytes);
 * const { file, int16 } = await readSafetensorsWithInt16(path);
 * assert.deepEqual([...file.tensors.get("d")!.data], [0xffff, 0x3f80]);
 * assert.equal(int16.get("d"), "i16");
 * await Deno.remove(path);
 * ```
 * @module
 */
import {
  MAX_HEADER_BYTES,
  parseSafetensors,
  readSafetensors,
  SafetensorsError,
  type SafetensorsFile,
} from "../io/mod.ts";
import type { Int16Dtype } from "../reference/compare/compared_dtype.ts";

/** A file's tensors and which of them are 16-bit integers. */
export interface Int16File {
  /** The tensors (I16 / U16 ones as bf16-typed storage; `fileDtypes` says `BF16` for them) and metadata. */
  readonly file: SafetensorsFile;
  /** The I16 (`i16`) and U16 (`u16`) tensors by name. */
  readonly int16: ReadonlyMap<string, Int16Dtype>;
}

/** The safetensors dtype an I16 / U16 entry is validated and loaded as: 16 bits, stored as a Uint16Array. */
const STAND_IN = "BF16";

/** A `"dtype": "I16"` or `"dtype": "U16"` member of the header. */
const INT16_DTYPE = /("dtype"[ \t\r\n]*:[ \t\r\n]*)"([IU]16)"/g;

/** Fills `buf` from the file's current position; false when the file ends first. */
async function readFull(f: Deno.FsFile, buf: Uint8Array): Promise<boolean> {
  for (let off = 0; off < buf.length;) {
    const got = await f.read(buf.subarray(off));
    if (got === null) return false;
    off += got;
  }
  return true;
}

/** The header's text and byte length, or null when the file is not one whose header can be read as UTF-8 text. */
async function headerOf(path: string): Promise<{ text: string; bytes: number } | null> {
  let f: Deno.FsFile;
  try {
    f = await Deno.open(path, { read: true });
  } catch {
    return null; // the reader reports it
  }
  try {
    const st = await f.stat();
    if (!st.isFile || st.size < 8) return null;
    const prefix = new Uint8Array(8);
    if (!await readFull(f, prefix)) return null;
    const n = new DataView(prefix.buffer).getBigUint64(0, true);
    if (n > BigInt(Math.min(MAX_HEADER_BYTES, st.size - 8))) return null;
    const h = new Uint8Array(Number(n));
    if (!await readFull(f, h)) return null;
    return { text: new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(h), bytes: h.length };
  } catch {
    return null;
  } finally {
    f.close();
  }
}

/** The entries of a header whose dtype is I16 or U16 (none when it is not a JSON object). */
function int16Entries(text: string): Map<string, Int16Dtype> {
  const out = new Map<string, Int16Dtype>();
  let h: unknown;
  try {
    h = JSON.parse(text);
  } catch {
    return out;
  }
  if (h === null || typeof h !== "object" || Array.isArray(h)) return out;
  for (const [name, entry] of Object.entries(h)) {
    const dtype = name === "__metadata__" ? undefined : (entry as { dtype?: unknown } | null)?.dtype;
    if (dtype === "I16" || dtype === "U16") out.set(name, dtype === "I16" ? "i16" : "u16");
  }
  return out;
}

/**
 * Reads a safetensors file, loading its I16 / U16 tensors as 16-bit storage (see the module doc).
 * @param path the file
 * @returns the file and its 16-bit integer tensors
 * @throws {SafetensorsError} for malformed files; Deno's own errors when the file cannot be read
 */
export async function readSafetensorsWithInt16(path: string): Promise<Int16File> {
  const header = await headerOf(path);
  const int16 = header === null || !/"[IU]16"/.test(header.text) ? new Map() : int16Entries(header.text);
  if (header === null || int16.size === 0) return { file: await readSafetensors(path), int16 };
  const bytes = await Deno.readFile(path);
  const text = new TextEncoder().encode(header.text.replace(INT16_DTYPE, `$1"${STAND_IN}"`));
  const data = bytes.subarray(8 + header.bytes);
  const out = new Uint8Array(8 + text.length + data.length);
  new DataView(out.buffer).setBigUint64(0, BigInt(text.length), true);
  out.set(text, 8);
  out.set(data, 8 + text.length);
  try {
    return { file: parseSafetensors(out, path), int16 };
  } catch (e) {
    if (!(e instanceof SafetensorsError)) throw e;
    let fault = e.fault;
    for (const [name, dtype] of int16) {
      if (fault.startsWith(`tensor ${JSON.stringify(name)}:`)) {
        fault = fault.replace(` × ${STAND_IN} `, ` × ${dtype.toUpperCase()} `);
      }
    }
    throw new SafetensorsError(path, fault);
  }
}
