/**
 * The safetensors writer: byte-for-byte deterministic output.
 *
 * Layout rules (interfaces.md §5; deno-notes.md §3.2 for the format and the reference writer, `tensor.rs`):
 * - tensors ordered by element width, widest first (so every tensor starts aligned to its element size, as the
 *   reference writer's dtype-descending sort does), then by name (UTF-8 byte order);
 * - header JSON with no whitespace, keys in a fixed order: `__metadata__` first (keys sorted) when there is any,
 *   then each tensor as `{"dtype":…,"shape":[…],"data_offsets":[b,e]}`;
 * - header padded with spaces to a multiple of 8 bytes;
 * - `e2m1` tensors written as `F4`, two codes per byte, element 0 in the low nibble, and
 *   `__metadata__.f4_nibble_order = "low_first"` added.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Tensor } from "../reference/tensor/mod.ts";
 * import { serializeSafetensors } from "./write_safetensors.ts";
 * const bytes = serializeSafetensors({ a: Tensor.from("u8", [1], new Uint8Array([9])) });
 * const header = new TextDecoder().decode(bytes.subarray(8, bytes.length - 1));
 * assert.equal(header, '{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}   '); // padded to 56 bytes
 * ```
 * @module
 */
import { DTYPES, type Tensor } from "../reference/tensor/mod.ts";
import { F4_LOW_FIRST, F4_NIBBLE_ORDER_KEY, SAFETENSORS_DTYPES, safetensorsDtypeOf } from "./safetensors_dtype.ts";

/** Tensors to write: a Map or a plain record of name → tensor. */
export type TensorsToWrite = Map<string, Tensor> | Readonly<Record<string, Tensor>>;

const utf8 = new TextEncoder();

function compareUtf8(a: string, b: string): number {
  const x = utf8.encode(a), y = utf8.encode(b);
  const n = Math.min(x.length, y.length);
  for (let i = 0; i < n; i++) if (x[i] !== y[i]) return x[i] - y[i];
  return x.length - y.length;
}

/**
 * Refuses a string holding a lone surrogate: JSON.stringify would write it as a `\uD800` escape, which the
 * reference reader refuses (serde-rs/json src/read.rs `parse_unicode_escape`), and so does this package's reader.
 */
function wellFormed(what: string, s: string): void {
  if (!s.isWellFormed()) throw new TypeError(`${what} ${JSON.stringify(s)} holds a lone surrogate (not valid Unicode)`);
}

function entriesOf(tensors: TensorsToWrite): [string, Tensor][] {
  if (tensors instanceof Map) return [...tensors.entries()];
  if (tensors === null || typeof tensors !== "object") {
    throw new TypeError("Tensors to write must be a Map or an object");
  }
  return Object.keys(tensors).map((k) => [k, tensors[k]]);
}

function tensorBytes(name: string, t: Tensor): Uint8Array {
  const c = t.contiguous();
  const count = c.numel;
  if (c.dtype === "e2m1") {
    if (count % 2 !== 0) {
      throw new RangeError(`Tensor "${name}": F4 needs an even element count to pack two codes per byte, got ${count}`);
    }
    const out = new Uint8Array(count / 2);
    const codes = c.data as Uint8Array;
    for (let i = 0; i < count; i++) {
      const v = codes[c.offset + i];
      if (v > 0xf) throw new RangeError(`Tensor "${name}": e2m1 code ${v} at element ${i} does not fit in 4 bits`);
      out[i >> 1] |= (i & 1) === 0 ? v : v << 4;
    }
    return out;
  }
  const width = DTYPES[c.dtype].bytes;
  const src = c.data;
  const out = new Uint8Array(src.buffer, src.byteOffset + c.offset * width, count * width).slice();
  const littleEndian = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
  if (!littleEndian && width > 1) { for (let i = 0; i < out.length; i += width) out.subarray(i, i + width).reverse(); }
  return out;
}

/**
 * Serializes tensors and metadata into safetensors bytes (deterministic; see the module doc).
 * @param tensors name → tensor (any strides; written row-major)
 * @param metadata string → string, stored as `__metadata__`
 * @returns the file's bytes
 * @throws {TypeError} for a non-string metadata value, a reserved / non-string name, or a name, metadata key or
 * value holding a lone surrogate
 * @throws {RangeError} for an odd F4 element count or an e2m1 code above 15
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Tensor } from "../reference/tensor/mod.ts";
 * import { serializeSafetensors } from "./write_safetensors.ts";
 * const codes = Tensor.from("e2m1", [2], new Uint8Array([0x1, 0x2]));
 * const bytes = serializeSafetensors({ q: codes });
 * assert.equal(bytes[bytes.length - 1], 0x21); // element 0 in the low nibble
 * ```
 */
export function serializeSafetensors(
  tensors: TensorsToWrite,
  metadata: Readonly<Record<string, string>> = {},
): Uint8Array {
  const list = entriesOf(tensors);
  const meta = new Map<string, string>();
  for (const k of Object.keys(metadata)) {
    const v = metadata[k];
    if (typeof v !== "string") throw new TypeError(`Metadata "${k}" must be a string, got ${typeof v}`);
    wellFormed("Metadata key", k);
    wellFormed(`Metadata value of ${JSON.stringify(k)}`, v);
    meta.set(k, v);
  }
  const seen = new Set<string>();
  for (const [name, t] of list) {
    if (typeof name !== "string") throw new TypeError("Tensor names must be strings");
    if (name === "__metadata__") throw new TypeError(`Tensor name "__metadata__" is reserved by safetensors`);
    if (seen.has(name)) throw new TypeError(`Duplicate tensor name "${name}"`);
    wellFormed("Tensor name", name);
    seen.add(name);
    if (t === null || typeof t !== "object" || !("dtype" in t) || !("shape" in t)) {
      throw new TypeError(`"${name}" is not a Tensor`);
    }
    if (t.dtype === "e2m1" && !meta.has(F4_NIBBLE_ORDER_KEY)) meta.set(F4_NIBBLE_ORDER_KEY, F4_LOW_FIRST);
  }
  if (meta.has(F4_NIBBLE_ORDER_KEY) && meta.get(F4_NIBBLE_ORDER_KEY) !== F4_LOW_FIRST) {
    throw new RangeError(`The writer only produces "${F4_NIBBLE_ORDER_KEY}": "${F4_LOW_FIRST}"`);
  }
  const bitsOf = (t: Tensor) => SAFETENSORS_DTYPES[safetensorsDtypeOf(t.dtype)].bits;
  list.sort(([an, at], [bn, bt]) => bitsOf(bt) - bitsOf(at) || compareUtf8(an, bn));

  const parts: string[] = [];
  if (meta.size > 0) {
    const keys = [...meta.keys()].sort(compareUtf8);
    parts.push(`"__metadata__":{${keys.map((k) => `${JSON.stringify(k)}:${JSON.stringify(meta.get(k))}`).join(",")}}`);
  }
  const blobs: Uint8Array[] = [];
  let offset = 0;
  for (const [name, t] of list) {
    const blob = tensorBytes(name, t);
    blobs.push(blob);
    parts.push(
      `${JSON.stringify(name)}:{"dtype":"${safetensorsDtypeOf(t.dtype)}","shape":[${
        t.shape.join(",")
      }],"data_offsets":[${offset},${offset + blob.length}]}`,
    );
    offset += blob.length;
  }
  const json = utf8.encode(`{${parts.join(",")}}`);
  const headerLen = json.length + ((8 - (json.length % 8)) % 8);
  const out = new Uint8Array(8 + headerLen + offset);
  new DataView(out.buffer).setBigUint64(0, BigInt(headerLen), true);
  out.set(json, 8);
  out.fill(0x20, 8 + json.length, 8 + headerLen);
  let p = 8 + headerLen;
  for (const b of blobs) {
    out.set(b, p);
    p += b.length;
  }
  return out;
}

/**
 * Writes tensors and metadata to a safetensors file (see {@link serializeSafetensors}).
 * @param path destination
 * @param tensors name → tensor
 * @param metadata string → string
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Tensor } from "../reference/tensor/mod.ts";
 * import { writeSafetensors } from "./write_safetensors.ts";
 * const path = await Deno.makeTempFile();
 * await writeSafetensors(path, { z: Tensor.zeros("f32", [0]) });
 * assert.equal((await Deno.stat(path)).size % 8, 0);
 * await Deno.remove(path);
 * ```
 */
export async function writeSafetensors(
  path: string,
  tensors: TensorsToWrite,
  metadata: Readonly<Record<string, string>> = {},
): Promise<void> {
  await Deno.writeFile(path, serializeSafetensors(tensors, metadata));
}
