/**
 * The safetensors reader: validates the whole header against the file's size before touching data, then copies each
 * tensor into oracle storage (F4 unpacked to one code per byte).
 *
 * Checks, in order (interfaces.md §5; deno-notes.md §3.2 for the format; the reference reader is
 * huggingface/safetensors, safetensors/src/tensor.rs `SafeTensors::read_metadata` and `Metadata::validate`, and
 * its README.md "Format" section):
 * 1. the 8-byte length is present (tensor.rs `HeaderTooSmall`), at most 100,000,000 (`MAX_HEADER_SIZE`,
 *    `HeaderTooLarge`) and within the file (`InvalidHeaderLength`);
 * 2. the header does not start with a UTF-8 byte-order mark, is valid UTF-8 (tensor.rs `core::str::from_utf8`) and
 *    starts with `{` (README.md: "The header data MUST begin with a `{` character (0x7B)"; a BOM is not `{`);
 * 3. the header is JSON under the strict rules of `_strict_json.ts`: no duplicate keys, no lone surrogates in any
 *    string, `shape` / `data_offsets` numbers spelled as plain non-negative integers, bounded nesting;
 * 4. `__metadata__` maps strings to strings (README.md: "all values must be strings") and its `f4_nibble_order`, if
 *    any, is known;
 * 5. every entry has exactly `dtype`, `shape`, `data_offsets`; a known dtype; rank ≤ 16; an element count and byte
 *    size that do not overflow (tensor.rs `ValidationOverflow`); whole bytes (F4 needs an even element count,
 *    `MisalignedSlice`); `end − begin` equal to the byte size (`TensorInvalidInfo`);
 * 6. offsets inside the data section; sorted by offsets, the tensors are contiguous from 0 to the end of the file,
 *    no hole and no overlap (tensor.rs `validate`: `s != start || e < s` is `InvalidOffset`, and
 *    `MetadataIncompleteBuffer` when the last end is not the end of the file; README.md: "The byte buffer needs to be
 *    entirely indexed, and cannot contain holes").
 * No buffer is allocated before its length has passed these checks. {@link readSafetensors} reads the 8-byte length
 * and the header only, runs every check against the file's size, and only then reads the data, once, tensor by
 * tensor (through one bounded chunk for small tensors), so memory stays proportional to what is read.
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
import { DTYPES, numel, type Storage, Tensor } from "../reference/tensor/mod.ts";
import { entryName, type HeaderTable, parseHeaderJson, quote } from "./_strict_json.ts";
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

/** Largest rank accepted. */
const MAX_RANK = 16;

/** The contents of a safetensors file. */
export interface SafetensorsFile {
  /** Tensors by name, in file (data offset) order; all contiguous. */
  readonly tensors: Map<string, Tensor>;
  /** `__metadata__` (string → string), empty when absent. */
  readonly metadata: Record<string, string>;
  /** The safetensors dtype each tensor was stored as. */
  readonly fileDtypes: Map<string, SafetensorsDtype>;
}

/** Options of {@link readSafetensors}. */
export interface ReadSafetensorsOptions {
  /**
   * Tensors smaller than this many bytes are read through one shared buffer of this size; larger ones are read
   * straight into their own storage. Default 16 MiB.
   */
  readonly chunkBytes?: number;
}

/** The validated header: entries in offset order, their dtypes, metadata and nibble order. */
interface Layout {
  table: HeaderTable;
  /** Entry indices in offset order, or null when the header order is already offset order. */
  order: Uint32Array | null;
  /** The safetensors dtype of each of `table.dtypeNames` (all valid once the layout is). */
  dtypes: SafetensorsDtype[];
  metadata: Record<string, string>;
  lowFirst: boolean;
}

const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
const asciiFast = new TextDecoder("utf-8", { ignoreBOM: true }); // used only on pure ASCII

/**
 * Checks the 8-byte header length against the limit and the file size (tensor.rs `read_metadata`).
 * @returns the header length as a number
 */
function checkHeaderLength(file: string, fileSize: number, headerLen: bigint): number {
  if (headerLen > BigInt(MAX_HEADER_BYTES)) {
    throw new SafetensorsError(file, `header length ${headerLen} exceeds the ${MAX_HEADER_BYTES}-byte limit`);
  }
  const n = Number(headerLen);
  if (n > fileSize - 8) {
    throw new SafetensorsError(
      file,
      `header length ${n} is beyond the end of the file (${fileSize - 8} bytes follow it)`,
    );
  }
  if (n < 2) throw new SafetensorsError(file, `header length ${n} is too small for a JSON object`);
  return n;
}

function truncated(file: string, size: number): SafetensorsError {
  return new SafetensorsError(file, `truncated: ${size} bytes, fewer than the 8-byte header length`);
}

/** Decodes the header bytes: refuses a BOM and invalid UTF-8. */
function decodeHeader(file: string, h: Uint8Array): string {
  // README.md (huggingface/safetensors): the header MUST begin with '{' (0x7B); EF BB BF is not '{', and a decoder
  // that strips the mark silently would accept it.
  if (h.length >= 3 && h[0] === 0xef && h[1] === 0xbb && h[2] === 0xbf) {
    throw new SafetensorsError(file, "header starts with a UTF-8 byte-order mark (EF BB BF), not '{'");
  }
  let ascii = true;
  for (let i = 0; i < h.length; i++) {
    if (h[i] >= 0x80) {
      ascii = false;
      break;
    }
  }
  if (ascii) return asciiFast.decode(h); // pure ASCII: the fast decoder gives the same text
  try {
    return utf8.decode(h); // tensor.rs: core::str::from_utf8 (also refuses encoded surrogates and overlongs)
  } catch {
    throw new SafetensorsError(file, "header is not valid UTF-8");
  }
}

function tensorFault(file: string, h: HeaderTable, i: number, fault: string): SafetensorsError {
  return new SafetensorsError(file, `tensor ${quote(entryName(h, i))}: ${fault}`);
}

function shapeOf(h: HeaderTable, i: number): number[] {
  return Array.from(h.dims.subarray(h.shapeAt[i], h.shapeAt[i] + h.rank[i]));
}

/**
 * Checks entry `i`'s fields (step 5 of the module doc).
 * @param bits bits per element of each of `h.dtypeNames`, 0 for an unknown or unsupported one
 */
function checkEntry(file: string, h: HeaderTable, i: number, bits: number[]): void {
  const f = h.faults.size === 0 ? undefined : h.faults.get(i);
  if (f?.entry !== undefined) throw new SafetensorsError(file, f.entry);
  if (f?.dtype !== undefined) throw tensorFault(file, h, i, f.dtype);
  const code = h.dtype[i];
  const b = bits[code];
  if (b === 0) {
    const dt = h.dtypeNames[code];
    const known = UNSUPPORTED_SAFETENSORS_DTYPES.includes(dt);
    throw tensorFault(
      file,
      h,
      i,
      `${known ? "unsupported" : "unknown"} dtype ${quote(dt)} (supported: ${
        Object.keys(SAFETENSORS_DTYPES).join(" ")
      })`,
    );
  }
  if (f?.shape !== undefined) throw tensorFault(file, h, i, f.shape);
  const rank = h.rank[i], at = h.shapeAt[i], dims = h.dims;
  if (rank > MAX_RANK) throw tensorFault(file, h, i, `rank ${rank} exceeds ${MAX_RANK}`);
  if (f?.offsets !== undefined) throw tensorFault(file, h, i, f.offsets);
  const begin = h.begin[i], end = h.end[i];
  if (end < begin) throw tensorFault(file, h, i, `data_offsets [${begin}, ${end}] end before begin`);
  // tensor.rs `validate`: element count and bit count with checked arithmetic (ValidationOverflow).
  let count = 1;
  for (let k = 0; k < rank; k++) {
    count *= dims[at + k];
    if (count > Number.MAX_SAFE_INTEGER) {
      throw tensorFault(file, h, i, `shape [${shapeOf(h, i).join(", ")}] has too many elements`);
    }
  }
  // tensor.rs `validate`: nbits % 8 != 0 is MisalignedSlice.
  if ((count * b) % 8 !== 0) {
    throw tensorFault(
      file,
      h,
      i,
      `${count} ${h.dtypeNames[code]} elements do not fill whole bytes (an F4 tensor needs an even element count)`,
    );
  }
  const size = (count * b) / 8;
  if (!Number.isSafeInteger(size)) throw tensorFault(file, h, i, "byte size overflows");
  // tensor.rs `validate`: e - s != size is TensorInvalidInfo.
  if (end - begin !== size) {
    throw tensorFault(
      file,
      h,
      i,
      `shape [${shapeOf(h, i).join(", ")}] × ${
        h.dtypeNames[code]
      } needs ${size} bytes but data_offsets [${begin}, ${end}] span ${end - begin}`,
    );
  }
}

/**
 * Validates a header against the size of the data section that follows it (steps 2–6 of the module doc).
 * @param file name for messages
 * @param bytes the header bytes
 * @param dataLen bytes after the header
 */
function checkHeader(file: string, bytes: Uint8Array, dataLen: number): Layout {
  const text = decodeHeader(file, bytes);
  if (text.charCodeAt(0) !== 0x7b) throw new SafetensorsError(file, "header does not start with '{'");
  let h: HeaderTable;
  try {
    h = parseHeaderJson(text);
  } catch (e) {
    if (!(e instanceof SyntaxError)) throw e;
    throw new SafetensorsError(file, `header is not valid JSON: ${e.message}`);
  }

  if (h.metadataFault !== undefined) throw new SafetensorsError(file, h.metadataFault);
  const metadata: Record<string, string> = {};
  for (const [k, v] of h.metadata) {
    Object.defineProperty(metadata, k, { value: v, enumerable: true, writable: true, configurable: true });
  }
  const nibbleOrder = Object.hasOwn(metadata, F4_NIBBLE_ORDER_KEY) ? metadata[F4_NIBBLE_ORDER_KEY] : F4_LOW_FIRST;
  if (nibbleOrder !== F4_LOW_FIRST && nibbleOrder !== F4_HIGH_FIRST) {
    throw new SafetensorsError(
      file,
      `"__metadata__.${F4_NIBBLE_ORDER_KEY}" is ${quote(nibbleOrder)}, not "${F4_LOW_FIRST}" or "${F4_HIGH_FIRST}"`,
    );
  }

  const bits = h.dtypeNames.map((d) => isSafetensorsDtype(d) ? SAFETENSORS_DTYPES[d].bits : 0);
  const n = h.count, begin = h.begin, end = h.end;
  let sorted = true;
  for (let i = 0; i < n; i++) {
    checkEntry(file, h, i, bits);
    if (i > 0 && (begin[i] < begin[i - 1] || (begin[i] === begin[i - 1] && end[i] < end[i - 1]))) sorted = false;
  }
  for (let i = 0; i < n; i++) {
    if (end[i] > dataLen) {
      throw tensorFault(
        file,
        h,
        i,
        `data_offsets [${begin[i]}, ${end[i]}] out of range of the ${dataLen}-byte data section`,
      );
    }
  }
  // tensor.rs `TryFrom<HashMetadata>`: entries sorted by data_offsets, then `validate` requires each to start where
  // the previous one ended.
  let order: Uint32Array | null = null;
  if (!sorted) {
    order = new Uint32Array(n);
    for (let i = 0; i < n; i++) order[i] = i;
    order.sort((a, b) => begin[a] - begin[b] || end[a] - end[b]);
  }
  let pos = 0;
  for (let k = 0; k < n; k++) {
    const i = order === null ? k : order[k];
    if (begin[i] > pos) {
      throw new SafetensorsError(
        file,
        `hole in the data: bytes [${pos}, ${begin[i]}) belong to no tensor (before ${quote(entryName(h, i))})`,
      );
    }
    if (begin[i] < pos) {
      throw new SafetensorsError(file, `tensor ${quote(entryName(h, i))} overlaps another tensor at byte ${begin[i]}`);
    }
    pos = end[i];
  }
  // tensor.rs `read_metadata`: MetadataIncompleteBuffer when the tensors do not reach the end of the file.
  if (pos !== dataLen) {
    throw new SafetensorsError(file, `hole in the data: bytes [${pos}, ${dataLen}) at the end belong to no tensor`);
  }
  return {
    table: h,
    order,
    dtypes: h.dtypeNames as SafetensorsDtype[],
    metadata,
    lowFirst: nibbleOrder === F4_LOW_FIRST,
  };
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
  if (bytes.length < 8) throw truncated(file, bytes.length);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const n = checkHeaderLength(file, bytes.length, view.getBigUint64(0, true));
  const dataStart = 8 + n;
  const layout = checkHeader(file, bytes.subarray(8, dataStart), bytes.length - dataStart);
  const tensors = new Map<string, Tensor>();
  const fileDtypes = new Map<string, SafetensorsDtype>();
  const { table: h, order, dtypes } = layout;
  for (let k = 0; k < h.count; k++) {
    const i = order === null ? k : order[k];
    const name = entryName(h, i), dt = dtypes[h.dtype[i]];
    const raw = bytes.subarray(dataStart + h.begin[i], dataStart + h.end[i]);
    tensors.set(name, decodeTensor(dt, shapeOf(h, i), raw, layout.lowFirst, false));
    fileDtypes.set(name, dt);
  }
  return { tensors, metadata: layout.metadata, fileDtypes };
}

/** True on little-endian hosts; safetensors data is little-endian. */
const HOST_LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/**
 * Decodes one tensor's bytes.
 * @param owned `raw` is a fresh buffer of exactly this tensor (used as storage without a copy)
 */
function decodeTensor(
  dt: SafetensorsDtype,
  shape: number[],
  raw: Uint8Array,
  lowFirst: boolean,
  owned: boolean,
): Tensor {
  const info = SAFETENSORS_DTYPES[dt];
  const count = numel(shape);
  if (dt === "F4") {
    const codes = new Uint8Array(count);
    for (let i = 0; i < raw.length; i++) {
      const b = raw[i];
      codes[2 * i] = lowFirst ? b & 0xf : b >> 4;
      codes[2 * i + 1] = lowFirst ? b >> 4 : b & 0xf;
    }
    return Tensor.from("e2m1", shape, codes);
  }
  const width = info.bits / 8;
  const copy = owned && raw.byteOffset === 0 && raw.buffer.byteLength === raw.length ? raw : raw.slice();
  if (!HOST_LITTLE_ENDIAN && width > 1) {
    for (let i = 0; i < copy.length; i += width) copy.subarray(i, i + width).reverse();
  }
  // The dtype table's storage type, over the copy's bytes.
  const data: Storage = new DTYPES[info.dtype].storage(copy.buffer as ArrayBuffer, 0, count);
  return Tensor.from(info.dtype, shape, data);
}

const DEFAULT_CHUNK_BYTES = 16 << 20;

/** Fills `buf` from the file at byte `pos`; a short file is a fault (it changed since it was checked). */
async function readAt(f: Deno.FsFile, file: string, buf: Uint8Array, pos: number): Promise<void> {
  await f.seek(pos, Deno.SeekMode.Start);
  let off = 0;
  while (off < buf.length) {
    const got = await f.read(buf.subarray(off));
    if (got === null) {
      throw new SafetensorsError(file, `truncated: the file ends at byte ${pos + off} (it changed while being read)`);
    }
    off += got;
  }
}

/**
 * Reads and validates a safetensors file: the 8-byte length and the header first, every check against the file's
 * size, and only then the data, once (see the module doc).
 * @param path the file
 * @param options read tuning
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
export async function readSafetensors(path: string, options: ReadSafetensorsOptions = {}): Promise<SafetensorsFile> {
  const chunkBytes = options.chunkBytes ?? DEFAULT_CHUNK_BYTES;
  if (!Number.isSafeInteger(chunkBytes) || chunkBytes < 1) {
    throw new RangeError(`chunkBytes must be a positive integer, got ${chunkBytes}`);
  }
  const f = await Deno.open(path, { read: true });
  let st: Deno.FileInfo;
  try {
    st = await f.stat();
  } catch (e) {
    f.close();
    throw e;
  }
  if (!st.isFile) {
    // Not a regular file (a directory, a pipe): there is no size to check against; read it as a stream of bytes.
    f.close();
    return parseSafetensors(await Deno.readFile(path), path);
  }
  const tensors = new Map<string, Tensor>();
  const fileDtypes = new Map<string, SafetensorsDtype>();
  let layout: Layout;
  try {
    const fileSize = st.size;
    if (fileSize < 8) throw truncated(path, fileSize);
    const prefix = new Uint8Array(8);
    await readAt(f, path, prefix, 0);
    const n = checkHeaderLength(path, fileSize, new DataView(prefix.buffer).getBigUint64(0, true));
    const header = new Uint8Array(n);
    await readAt(f, path, header, 8);
    const dataStart = 8 + n, dataLen = fileSize - dataStart;
    layout = checkHeader(path, header, dataLen);

    // The entries are sorted and contiguous, so this reads the data section front to back, each byte once.
    let chunk: Uint8Array | undefined;
    let chunkBegin = 0, chunkEnd = 0; // the data offsets the chunk holds
    const { table: h, order, dtypes } = layout;
    for (let k = 0; k < h.count; k++) {
      const i = order === null ? k : order[k];
      const name = entryName(h, i), dt = dtypes[h.dtype[i]], begin = h.begin[i], end = h.end[i];
      const size = end - begin;
      let raw: Uint8Array, owned = false;
      if (size === 0) {
        raw = new Uint8Array(0);
      } else if (size >= chunkBytes) {
        raw = new Uint8Array(size);
        await readAt(f, path, raw, dataStart + begin);
        owned = true;
      } else {
        if (begin < chunkBegin || end > chunkEnd) {
          chunk ??= new Uint8Array(Math.min(chunkBytes, dataLen));
          const len = Math.min(chunk.length, dataLen - begin);
          await readAt(f, path, chunk.subarray(0, len), dataStart + begin);
          chunkBegin = begin;
          chunkEnd = begin + len;
        }
        raw = chunk!.subarray(begin - chunkBegin, end - chunkBegin);
      }
      tensors.set(name, decodeTensor(dt, shapeOf(h, i), raw, layout.lowFirst, owned));
      fileDtypes.set(name, dt);
    }
  } finally {
    f.close();
  }
  return { tensors, metadata: layout.metadata, fileDtypes };
}
