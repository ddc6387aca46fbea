/**
 * The strict JSON parser for safetensors headers: one pass over the header text that checks the JSON grammar and
 * the rules `JSON.parse` is lax about, and records what the reader needs in flat typed arrays ({@link HeaderTable})
 * instead of building an object tree, so a header of a million tensors costs a few typed arrays, not millions of
 * objects (bench/safetensors_bench.ts compares it with `JSON.parse`).
 *
 * The rules follow the reference reader, huggingface/safetensors, whose header is whatever `serde_json` accepts into
 * its `HashMetadata` struct (safetensors/src/tensor.rs: `read_metadata` calls `serde_json::from_str`; README.md:
 * "the subset of JSON is implicitly decided by `serde_json`"):
 * - duplicate keys are refused at every level (README.md: "Duplicate keys are disallowed"); keys are compared after
 *   unescaping, so `"\u0061"` duplicates `"a"`;
 * - a `\u` escape of a lone surrogate is refused in every string, key or value (serde-rs/json src/read.rs,
 *   `parse_unicode_escape`: `LoneLeadingSurrogateInHexEscape` / `UnexpectedEndOfHexEscape`). Raw surrogates cannot
 *   reach the parser: the UTF-8 decoder refuses their encodings;
 * - `shape` and `data_offsets` are `Vec<usize>` and `(usize, usize)` (safetensors/src/tensor.rs, `TensorInfo`), so
 *   their numbers must be spelled as plain digits: serde_json reads a fraction or an exponent as an f64
 *   (serde-rs/json src/de.rs, `parse_number`) and `-0` as an f64 too ("Convert into a float if we underflow, or on
 *   `-0`"), and `usize` refuses both. Leading zeros are not JSON at all. Values above 2^53 − 1 (a valid `usize`, but
 *   not exact in JavaScript) are refused as well;
 * - nesting is limited ({@link MAX_DEPTH}; serde_json's own limit is 128, src/de.rs `remaining_depth`).
 *
 * Grammar faults throw a SyntaxError naming the character offset. Faults of the header's schema (a field of the wrong
 * type, a number spelled as a float, an unexpected key) are recorded on the entry and left to the reader to report,
 * so a header with a grammar fault anywhere is always reported as invalid JSON first.
 * @module
 * @private
 */

/** Deepest nesting accepted: the top-level object is depth 0. */
export const MAX_DEPTH = 64;

/** Schema faults of one tensor entry (each a message without the tensor's name, except `entry`). */
export interface EntryFaults {
  /** The entry is not an object, or has an unexpected key (a complete message). */
  entry?: string;
  /** `dtype` is missing or not a string. */
  dtype?: string;
  /** `shape` is missing, not an array, or holds something other than plain non-negative integers. */
  shape?: string;
  /** `data_offsets` is missing, not an array of two plain non-negative integers. */
  offsets?: string;
}

/**
 * A parsed header: tensor entry `i` (0 ≤ i < count, in header order) has its name, dtype, shape and offsets in the
 * arrays below; entries with a schema fault have it in `faults`. Arrays may be longer than `count`.
 */
export interface HeaderTable {
  /** The header text (names are slices of it). */
  readonly text: string;
  /** Number of tensor entries. */
  readonly count: number;
  /** Name of entry i: `text.slice(nameStart[i], nameEnd[i])`, or `escapedNames[-1 - nameStart[i]]` when < 0. */
  readonly nameStart: Int32Array;
  /** See {@link nameStart}. */
  readonly nameEnd: Int32Array;
  /** Names written with escapes, decoded. */
  readonly escapedNames: readonly string[];
  /** Index into `dtypeNames`, or -1 when `dtype` is unusable (see `faults`). */
  readonly dtype: Int32Array;
  /** The distinct dtype strings seen. */
  readonly dtypeNames: readonly string[];
  /** Entry i's shape is `dims[shapeAt[i] .. shapeAt[i] + rank[i]]` (valid when it has no shape fault). */
  readonly shapeAt: Int32Array;
  /** See {@link shapeAt}. */
  readonly rank: Int32Array;
  /** All shapes, one after another. */
  readonly dims: Float64Array;
  /** `data_offsets[0]` (valid when the entry has no offsets fault). */
  readonly begin: Float64Array;
  /** `data_offsets[1]`. */
  readonly end: Float64Array;
  /** Schema faults by entry index (most headers: none). */
  readonly faults: ReadonlyMap<number, EntryFaults>;
  /** `__metadata__` pairs in header order (string values only). */
  readonly metadata: readonly [string, string][];
  /** Why `__metadata__` is unusable (a complete message), if it is. */
  readonly metadataFault: string | undefined;
}

/** The name of entry `i`. */
export function entryName(h: HeaderTable, i: number): string {
  const a = h.nameStart[i];
  return a >= 0 ? h.text.slice(a, h.nameEnd[i]) : h.escapedNames[-1 - a];
}

/** A key or name as it appears in messages: JSON-quoted, long ones shortened. */
export function quote(s: string): string {
  const q = JSON.stringify(s);
  return q.length > 120 ? `${q.slice(0, 100)}…" (${s.length} characters)` : q;
}

/** The kind of a JSON value, as in "got an array". */
type Kind = "null" | "a boolean" | "a number" | "a string" | "an array" | "an object";

const HEX = new Int8Array(128).fill(-1);
for (let c = 0; c < 10; c++) HEX[48 + c] = c;
for (let c = 0; c < 6; c++) HEX[65 + c] = HEX[97 + c] = 10 + c;

const SIMPLE_ESCAPE: string[] = [];
SIMPLE_ESCAPE[0x22] = '"';
SIMPLE_ESCAPE[0x5c] = "\\";
SIMPLE_ESCAPE[0x2f] = "/";
SIMPLE_ESCAPE[0x62] = "\b";
SIMPLE_ESCAPE[0x66] = "\f";
SIMPLE_ESCAPE[0x6e] = "\n";
SIMPLE_ESCAPE[0x72] = "\r";
SIMPLE_ESCAPE[0x74] = "\t";

const C_TAB = 0x09;
const C_LF = 0x0a;
const C_CR = 0x0d;
const C_SPACE = 0x20;
const C_QUOTE = 0x22;
const C_PLUS = 0x2b;
const C_COMMA = 0x2c;
const C_MINUS = 0x2d;
const C_DOT = 0x2e;
const C_ZERO = 0x30;
const C_NINE = 0x39;
const C_COLON = 0x3a;
const C_UPPER_E = 0x45;
const C_L_BRACKET = 0x5b;
const C_BACKSLASH = 0x5c;
const C_R_BRACKET = 0x5d;
const C_LOWER_E = 0x65;
const C_L_BRACE = 0x7b;
const C_R_BRACE = 0x7d;

/** Field bits of a tensor entry, for duplicate detection. */
const DTYPE = 1, SHAPE = 2, OFFSETS = 4;
/** Dtype strings compared by scanning before falling back to a Map. */
const DTYPE_SCAN_LIMIT = 16;
/** `name()`'s answer for the `__metadata__` key. */
const METADATA = -1;
const FNV_PRIME = 0x01000193;
/** Answers of `place()`. */
const PLACED = 0, DUPLICATE = 1, FLOODED = 2;

function hexOf(u: number): string {
  return u.toString(16).padStart(4, "0");
}

function shortRaw(t: string): string {
  return t.length > 40 ? `${t.slice(0, 37)}...` : t;
}

/** murmur3's finalizer: spreads every bit of the running hash over the low bits the table uses. */
function fmix(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return h ^ (h >>> 16);
}

function grown<T extends Int32Array | Float64Array>(a: T, size: number): T {
  const b = new (a.constructor as new (n: number) => T)(size);
  b.set(a);
  return b;
}

class Parser implements HeaderTable {
  readonly text: string;
  readonly n: number;
  i = 0;

  count = 0;
  nameStart = new Int32Array(256);
  nameEnd = new Int32Array(256);
  escapedNames: string[] = [];
  dtype = new Int32Array(256);
  dtypeNames: string[] = [];
  shapeAt = new Int32Array(256);
  rank = new Int32Array(256);
  dims = new Float64Array(1024);
  dimsLen = 0;
  begin = new Float64Array(256);
  end = new Float64Array(256);
  faults = new Map<number, EntryFaults>();
  metadata: [string, string][] = [];
  metadataFault: string | undefined;

  // Duplicate names: an open-addressing table of entry index + 1, keyed by a seeded hash of the name. If an input
  // makes probing long (a flood of colliding names), every name moves to a Map, whose hashing V8 seeds per process.
  hashes = new Int32Array(256);
  slots = new Int32Array(1024);
  probes = 0;
  names: Map<string, number> | undefined;
  readonly seed = crypto.getRandomValues(new Int32Array(1))[0];
  dtypeLookup: Map<string, number> | undefined;
  /** The fault of the last {@link ints} call. */
  intsFault: string | undefined;

  /** Probes allowed per name before the table gives way to a Map. */
  readonly probeBudget: number;

  constructor(text: string, probeBudget: number) {
    this.text = text;
    this.n = text.length;
    this.probeBudget = probeBudget;
  }

  fail(what: string, at = this.i): never {
    throw new SyntaxError(`${what} at offset ${at}`);
  }

  /** Skips JSON whitespace; returns the next character code (NaN at the end). */
  ws(): number {
    const s = this.text;
    let i = this.i, c = s.charCodeAt(i);
    while (c === C_SPACE || c === C_LF || c === C_CR || c === C_TAB) c = s.charCodeAt(++i);
    this.i = i;
    return c;
  }

  /** After a value: skips whitespace and consumes `,` (true) or `close` (false). */
  next(close: number, what: string): boolean {
    const c = this.ws();
    if (c === C_COMMA) {
      this.i++;
      return true;
    }
    if (c === close) {
      this.i++;
      return false;
    }
    return this.fail(Number.isNaN(c) ? "unexpected end of JSON" : `expected ',' or '${what}'`);
  }

  colon(): void {
    if (this.ws() !== C_COLON) this.fail("expected ':'");
    this.i++;
  }

  /** Fails unless a string starts at this.i. */
  expectKey(): void {
    const c = this.text.charCodeAt(this.i);
    if (c !== C_QUOTE) this.fail(Number.isNaN(c) ? "unexpected end of JSON" : "expected a string key");
  }

  /** Reads a string starting at the opening quote (this.i). */
  str(): string {
    const s = this.text;
    const start = this.i + 1;
    let i = start;
    for (;;) {
      const c = s.charCodeAt(i);
      if (c === C_QUOTE) {
        this.i = i + 1;
        return s.slice(start, i);
      }
      if (c === C_BACKSLASH) return this.escaped(start, i);
      if (!(c >= 0x20)) this.fail(Number.isNaN(c) ? "unterminated string" : "control character in string", i);
      i++;
    }
  }

  /** The slow path of {@link str}: the string has escapes; `i` is the first backslash. */
  escaped(start: number, i: number): string {
    const s = this.text;
    let out = s.slice(start, i);
    let run = i;
    for (;;) {
      const c = s.charCodeAt(i);
      if (c === C_QUOTE) {
        this.i = i + 1;
        return out + s.slice(run, i);
      }
      if (!(c >= 0x20)) this.fail(Number.isNaN(c) ? "unterminated string" : "control character in string", i);
      if (c !== C_BACKSLASH) {
        i++;
        continue;
      }
      out += s.slice(run, i);
      const e = s.charCodeAt(i + 1);
      if (e === 0x75) {
        const u = this.hex4(i);
        if (u >= 0xdc00 && u <= 0xdfff) this.fail(`lone surrogate \\u${hexOf(u)} in a string`, i);
        if (u >= 0xd800 && u <= 0xdbff) {
          const lo = s.charCodeAt(i + 6) === C_BACKSLASH && s.charCodeAt(i + 7) === 0x75 ? this.hex4(i + 6) : -1;
          if (lo < 0xdc00 || lo > 0xdfff) this.fail(`lone surrogate \\u${hexOf(u)} in a string`, i);
          out += String.fromCharCode(u, lo);
          i += 12;
        } else {
          out += String.fromCharCode(u);
          i += 6;
        }
      } else {
        const simple = SIMPLE_ESCAPE[e];
        if (simple === undefined) this.fail(Number.isNaN(e) ? "unterminated string" : "bad escape", i);
        out += simple;
        i += 2;
      }
      run = i;
    }
  }

  /** The code unit of the `\uXXXX` escape at `at` (the backslash). */
  hex4(at: number): number {
    const s = this.text;
    let v = 0;
    for (let k = at + 2; k < at + 6; k++) {
      const c = s.charCodeAt(k);
      const d = c < 128 ? HEX[c] : -1;
      if (!(d >= 0)) this.fail("bad \\u escape", at);
      v = (v << 4) | d;
    }
    return v;
  }

  /**
   * Scans a number token (JSON grammar). Returns its value when it is spelled as plain digits, or -1 when it has a
   * sign, fraction or exponent (so is not an unsigned integer as serde reads one).
   */
  num(): number {
    const s = this.text;
    let i = this.i, c = s.charCodeAt(i), v = 0, plain = true;
    if (c === C_MINUS) {
      plain = false;
      c = s.charCodeAt(++i);
    }
    if (c === C_ZERO) {
      c = s.charCodeAt(++i);
      if (c >= C_ZERO && c <= C_NINE) this.fail("leading zero in a number", i - 1);
    } else if (c > C_ZERO && c <= C_NINE) {
      do {
        v = v * 10 + (c - C_ZERO);
        c = s.charCodeAt(++i);
      } while (c >= C_ZERO && c <= C_NINE);
    } else {
      this.fail("bad number", i);
    }
    if (c === C_DOT) {
      plain = false;
      c = s.charCodeAt(++i);
      if (!(c >= C_ZERO && c <= C_NINE)) this.fail("bad number: no digit after '.'", i);
      do c = s.charCodeAt(++i); while (c >= C_ZERO && c <= C_NINE);
    }
    if (c === C_LOWER_E || c === C_UPPER_E) {
      plain = false;
      c = s.charCodeAt(++i);
      if (c === C_PLUS || c === C_MINUS) c = s.charCodeAt(++i);
      if (!(c >= C_ZERO && c <= C_NINE)) this.fail("bad number: no digit in the exponent", i);
      do c = s.charCodeAt(++i); while (c >= C_ZERO && c <= C_NINE);
    }
    this.i = i;
    return plain ? v : -1;
  }

  /** Checks any JSON value (keys unique, strings well-formed, depth bounded); returns its kind. */
  any(depth: number): Kind {
    if (depth > MAX_DEPTH) this.fail(`nesting deeper than ${MAX_DEPTH}`);
    const s = this.text;
    const c = this.ws();
    if (c === C_QUOTE) {
      this.str();
      return "a string";
    }
    if (c === C_L_BRACE) {
      this.members(() => this.any(depth + 1));
      return "an object";
    }
    if (c === C_L_BRACKET) {
      this.i++;
      if (this.ws() === C_R_BRACKET) {
        this.i++;
        return "an array";
      }
      do this.any(depth + 1); while (this.next(C_R_BRACKET, "]"));
      return "an array";
    }
    if (c === C_MINUS || (c >= C_ZERO && c <= C_NINE)) {
      this.num();
      return "a number";
    }
    if (s.startsWith("true", this.i)) {
      this.i += 4;
      return "a boolean";
    }
    if (s.startsWith("false", this.i)) {
      this.i += 5;
      return "a boolean";
    }
    if (s.startsWith("null", this.i)) {
      this.i += 4;
      return "null";
    }
    return this.fail(Number.isNaN(c) ? "unexpected end of JSON" : `unexpected character ${JSON.stringify(s[this.i])}`);
  }

  /**
   * An array (at this.i) that must hold plain non-negative integers (`shape`, `data_offsets`), at depth `depth`:
   * appends them to `dims` and returns how many there are; on a schema fault sets `intsFault`.
   */
  ints(depth: number, field: string): number {
    if (depth > MAX_DEPTH) this.fail(`nesting deeper than ${MAX_DEPTH}`);
    this.i++; // '['
    this.intsFault = undefined;
    let k = 0;
    if (this.ws() === C_R_BRACKET) {
      this.i++;
      return 0;
    }
    do {
      const c = this.ws();
      const at = this.i;
      if (c === C_MINUS || (c >= C_ZERO && c <= C_NINE)) {
        const v = this.num();
        if (this.intsFault !== undefined) continue;
        if (v < 0) {
          const t = this.text.slice(at, this.i);
          const why = t.includes(".") ? "a fraction" : /[eE]/.test(t) ? "an exponent" : "a minus sign";
          this.intsFault = `"${field}" holds ${
            shortRaw(t)
          }, not a non-negative integer (${why}; integers are plain digits)`;
        } else if (v > Number.MAX_SAFE_INTEGER) {
          const t = shortRaw(this.text.slice(at, this.i));
          this.intsFault = `"${field}" holds ${t}, not a non-negative integer below 2^53`;
        } else {
          if (this.dimsLen === this.dims.length) this.dims = grown(this.dims, 2 * this.dims.length);
          this.dims[this.dimsLen++] = v;
          k++;
        }
      } else {
        this.any(depth + 1);
        this.intsFault ??= `"${field}" holds ${shortRaw(this.text.slice(at, this.i))}, not a non-negative integer`;
      }
    } while (this.next(C_R_BRACKET, "]"));
    return k;
  }

  faultsOf(idx: number): EntryFaults {
    let f = this.faults.get(idx);
    if (f === undefined) this.faults.set(idx, f = {});
    return f;
  }

  /** A dtype string at this.i: its index in `dtypeNames`. */
  dtypeCode(): number {
    const s = this.text, names = this.dtypeNames;
    const a = this.i + 1;
    let b = a, c = s.charCodeAt(b);
    while (c !== C_QUOTE && c !== C_BACKSLASH && c >= 0x20) c = s.charCodeAt(++b);
    let v: string | undefined;
    if (c === C_QUOTE) {
      this.i = b + 1;
      if (this.dtypeLookup === undefined) {
        const len = b - a;
        for (let k = 0; k < names.length; k++) if (names[k].length === len && s.startsWith(names[k], a)) return k;
      }
      v = s.slice(a, b);
    } else {
      v = this.str();
    }
    if (this.dtypeLookup === undefined) {
      const k = names.indexOf(v);
      if (k >= 0) return k;
      if (names.length < DTYPE_SCAN_LIMIT) return names.push(v) - 1;
      this.dtypeLookup = new Map(names.map((d, k) => [d, k]));
    }
    let k = this.dtypeLookup.get(v);
    if (k === undefined) this.dtypeLookup.set(v, k = names.push(v) - 1);
    return k;
  }

  /** Adds a tensor entry, growing the arrays as needed; returns its index. */
  addEntry(): number {
    const idx = this.count++;
    if (idx === this.nameStart.length) {
      const size = 2 * idx;
      this.nameStart = grown(this.nameStart, size);
      this.nameEnd = grown(this.nameEnd, size);
      this.dtype = grown(this.dtype, size);
      this.shapeAt = grown(this.shapeAt, size);
      this.rank = grown(this.rank, size);
      this.begin = grown(this.begin, size);
      this.end = grown(this.end, size);
      this.hashes = grown(this.hashes, size);
    }
    return idx;
  }

  sameName(a: number, b: number): boolean {
    const x = this.nameStart[a], y = this.nameStart[b];
    if (x >= 0 && y >= 0) {
      const len = this.nameEnd[a] - x;
      if (this.nameEnd[b] - y !== len) return false;
      const s = this.text;
      for (let k = 0; k < len; k++) if (s.charCodeAt(x + k) !== s.charCodeAt(y + k)) return false;
      return true;
    }
    return entryName(this, a) === entryName(this, b);
  }

  /** Puts entry `idx` in the name table: {@link PLACED}, {@link DUPLICATE}, or {@link FLOODED} (probing too long). */
  place(idx: number): number {
    const slots = this.slots, mask = slots.length - 1, h = this.hashes[idx];
    let slot = h & mask, v: number;
    while ((v = slots[slot]) !== 0) {
      if (++this.probes > this.probeBudget * (this.count + 512)) return FLOODED;
      if (this.hashes[v - 1] === h && this.sameName(v - 1, idx)) return DUPLICATE;
      slot = (slot + 1) & mask;
    }
    slots[slot] = idx + 1;
    return PLACED;
  }

  /** Records the name of the new entry `idx`, whose running hash is `h`; fails on a duplicate. */
  unique(idx: number, h: number, at: number): void {
    this.hashes[idx] = fmix(h);
    if (this.names === undefined && 2 * this.count > this.slots.length) {
      this.slots = new Int32Array(2 * this.slots.length);
      for (let k = 0; k < idx; k++) {
        if (this.place(k) === FLOODED) {
          this.toMap(idx);
          break;
        }
      }
    }
    if (this.names === undefined) {
      const r = this.place(idx);
      if (r === PLACED) return;
      if (r === DUPLICATE) this.fail(`duplicate key ${quote(entryName(this, idx))}`, at);
      this.toMap(idx);
    }
    const nm = entryName(this, idx);
    if (this.names!.has(nm)) this.fail(`duplicate key ${quote(nm)}`, at);
    this.names!.set(nm, idx);
  }

  /** After a flood of colliding hashes: moves the names of entries [0, upTo) into a Map, which V8 hashes seeded. */
  toMap(upTo: number): void {
    const names = this.names = new Map();
    for (let k = 0; k < upTo; k++) names.set(entryName(this, k), k);
    this.slots = new Int32Array(0);
  }

  /** A top-level key at this.i: a new entry's index, or {@link METADATA}. */
  name(): number {
    this.expectKey();
    const s = this.text, at = this.i, a = at + 1;
    let b = a, c = s.charCodeAt(b), h = this.seed ^ 0x811c9dc5;
    while (c !== C_QUOTE && c !== C_BACKSLASH && c >= 0x20) {
      h = Math.imul(h ^ c, FNV_PRIME);
      c = s.charCodeAt(++b);
    }
    let idx: number;
    if (c === C_QUOTE) {
      this.i = b + 1;
      if (b - a === 12 && s.startsWith("__metadata__", a)) return METADATA;
      idx = this.addEntry();
      this.nameStart[idx] = a;
      this.nameEnd[idx] = b;
    } else {
      const v = this.str();
      if (v === "__metadata__") return METADATA;
      h = this.seed ^ 0x811c9dc5;
      for (let k = 0; k < v.length; k++) h = Math.imul(h ^ v.charCodeAt(k), FNV_PRIME);
      idx = this.addEntry();
      this.nameStart[idx] = -1 - (this.escapedNames.push(v) - 1);
      this.nameEnd[idx] = 0;
    }
    this.unique(idx, h, at);
    return idx;
  }

  /** The value of tensor entry `idx`, at depth 1. */
  tensor(idx: number): void {
    const s = this.text;
    this.dtype[idx] = -1;
    if (this.ws() !== C_L_BRACE) {
      const kind = this.any(1);
      this.faultsOf(idx).entry = `tensor ${quote(entryName(this, idx))} must be an object, got ${kind}`;
      return;
    }
    this.i++;
    let seen = 0;
    let extra: Set<string> | undefined;
    if (this.ws() === C_R_BRACE) {
      this.i++;
    } else {
      do {
        this.ws();
        const at = this.i;
        let bit: number;
        // Fast path for the three keys spelled without escapes; anything else is unescaped and compared.
        if (s.startsWith('"dtype"', at)) {
          this.i += 7;
          bit = DTYPE;
        } else if (s.startsWith('"shape"', at)) {
          this.i += 7;
          bit = SHAPE;
        } else if (s.startsWith('"data_offsets"', at)) {
          this.i += 14;
          bit = OFFSETS;
        } else {
          this.expectKey();
          const k = this.str();
          bit = k === "dtype" ? DTYPE : k === "shape" ? SHAPE : k === "data_offsets" ? OFFSETS : 0;
          if (bit === 0) {
            extra ??= new Set();
            if (extra.has(k)) this.fail(`duplicate key ${quote(k)}`, at);
            extra.add(k);
            this.colon();
            this.any(2);
            const f = this.faultsOf(idx);
            f.entry ??= `tensor ${quote(entryName(this, idx))} has an unexpected key ${quote(k)}`;
            continue;
          }
        }
        if ((seen & bit) !== 0) {
          this.fail(`duplicate key ${bit === DTYPE ? '"dtype"' : bit === SHAPE ? '"shape"' : '"data_offsets"'}`, at);
        }
        seen |= bit;
        this.colon();
        const c = this.ws();
        if (bit === DTYPE) {
          if (c === C_QUOTE) this.dtype[idx] = this.dtypeCode();
          else this.faultsOf(idx).dtype = `"dtype" must be a string, got ${this.any(2)}`;
        } else if (bit === SHAPE) {
          if (c === C_L_BRACKET) {
            const d0 = this.dimsLen;
            const k = this.ints(2, "shape");
            if (this.intsFault !== undefined) this.faultsOf(idx).shape = this.intsFault;
            this.shapeAt[idx] = d0;
            this.rank[idx] = k;
          } else {
            this.faultsOf(idx).shape = `"shape" must be an array, got ${this.any(2)}`;
          }
        } else if (c === C_L_BRACKET) {
          const d0 = this.dimsLen;
          const k = this.ints(2, "data_offsets");
          if (this.intsFault !== undefined) this.faultsOf(idx).offsets = this.intsFault;
          else if (k !== 2) this.faultsOf(idx).offsets = `"data_offsets" must hold [begin, end], got ${k} numbers`;
          else {
            this.begin[idx] = this.dims[d0];
            this.end[idx] = this.dims[d0 + 1];
          }
          this.dimsLen = d0; // offsets are not kept in dims
        } else {
          this.faultsOf(idx).offsets = `"data_offsets" must be an array, got ${this.any(2)}`;
        }
      } while (this.next(C_R_BRACE, "}"));
    }
    if (seen !== (DTYPE | SHAPE | OFFSETS)) {
      const f = this.faultsOf(idx);
      if ((seen & DTYPE) === 0) f.dtype = `"dtype" must be a string, got nothing (the key is missing)`;
      if ((seen & SHAPE) === 0) f.shape = `"shape" must be an array, got nothing (the key is missing)`;
      if ((seen & OFFSETS) === 0) f.offsets = `"data_offsets" must be an array, got nothing (the key is missing)`;
    }
  }

  /**
   * The members of the object whose `{` is at the cursor: each key a string, unique in the object, then its value
   * parsed by `value`.
   */
  members(value: (key: string) => void): void {
    this.i++;
    if (this.ws() === C_R_BRACE) {
      this.i++;
      return;
    }
    const keys = new Set<string>();
    do {
      this.ws();
      this.expectKey();
      const at = this.i;
      const k = this.str();
      if (keys.has(k)) this.fail(`duplicate key ${quote(k)}`, at);
      keys.add(k);
      this.colon();
      value(k);
    } while (this.next(C_R_BRACE, "}"));
  }

  /** The value of `__metadata__`, at depth 1. */
  meta(): void {
    if (this.ws() !== C_L_BRACE) {
      this.metadataFault = `"__metadata__" must be an object, got ${this.any(1)}`;
      return;
    }
    this.members((k) => {
      if (this.ws() === C_QUOTE) this.metadata.push([k, this.str()]);
      else {
        const kind = this.any(2);
        this.metadataFault ??= `"__metadata__" value of ${quote(k)} must be a string, got ${kind}`;
      }
    });
  }

  header(): this {
    let sawMetadata = false;
    if (this.ws() !== C_L_BRACE) this.fail("expected '{'");
    this.i++;
    if (this.ws() === C_R_BRACE) {
      this.i++;
    } else {
      do {
        this.ws();
        const at = this.i;
        const idx = this.name();
        this.colon();
        if (idx !== METADATA) {
          this.tensor(idx);
          continue;
        }
        if (sawMetadata) this.fail(`duplicate key "__metadata__"`, at);
        sawMetadata = true;
        this.meta();
      } while (this.next(C_R_BRACE, "}"));
    }
    this.ws();
    if (this.i !== this.n) this.fail("trailing characters after JSON");
    return this;
  }
}

/**
 * Parses a safetensors header (already decoded from UTF-8).
 * @param text the header text
 * @param probeBudget hash-table probes allowed per name (on average) before duplicate detection moves to a Map;
 * tests set 0 to take that path
 * @returns the tensor entries and metadata, with schema faults recorded
 * @throws {SyntaxError} for a grammar fault (including duplicate keys, lone surrogates, leading zeros, nesting),
 * naming the character offset
 * @private
 */
export function parseHeaderJson(text: string, probeBudget = 8): HeaderTable {
  return new Parser(text, probeBudget).header();
}
