/**
 * A generated corpus of corrupt and hostile safetensors files, shared by the reader tests and the CLI tests.
 * Every case must be rejected with a SafetensorsError whose fault matches `expect` (the message itself is
 * `<file>: <fault>`). The rules behind the verdicts are those of huggingface/safetensors (README.md "Format",
 * safetensors/src/tensor.rs `read_metadata` / `validate`) and of serde_json, which that reader parses the header
 * with (serde-rs/json src/read.rs for strings, src/de.rs for numbers); io/_strict_json.ts and
 * io/read_safetensors.ts cite them rule by rule.
 *
 * Sections: truncation at every byte; header length cut at every header byte and lengthened; header limits; JSON
 * grammar (incl. BOM, lone surrogates, number spellings, duplicates, depth); dtype; shape and size overflow; offsets
 * order, overlap, gaps and bounds; metadata types; F4 parity; zero-size tensors; resource limits.
 * @module
 * @private
 */
import { Tensor } from "../../reference/tensor/mod.ts";
import { serializeSafetensors } from "../../io/mod.ts";

/** One hostile file. */
export interface HostileCase {
  /** What the case is. */
  name: string;
  /** The file's bytes. */
  bytes: Uint8Array;
  /** The fault message must match this. */
  expect: RegExp;
}

const enc = new TextEncoder();

/** Builds a file from raw header text (padded to 8 unless `pad` is false), an explicit length and data. */
export function rawFile(
  header: string | Uint8Array,
  data: Uint8Array | number = 0,
  lengthOverride?: bigint,
): Uint8Array {
  const h = typeof header === "string" ? enc.encode(header) : header;
  const d = typeof data === "number" ? new Uint8Array(data) : data;
  const out = new Uint8Array(8 + h.length + d.length);
  new DataView(out.buffer).setBigUint64(0, lengthOverride ?? BigInt(h.length), true);
  out.set(h, 8);
  out.set(d, 8 + h.length);
  return out;
}

function entry(name: string, dtype: string, shape: unknown, offsets: unknown): string {
  return `${JSON.stringify(name)}:{"dtype":${JSON.stringify(dtype)},"shape":${JSON.stringify(shape)},"data_offsets":${
    JSON.stringify(offsets)
  }}`;
}

/** A small valid file with several dtypes (used as the base for truncations). */
export function validSample(): Uint8Array {
  return serializeSafetensors({
    a: Tensor.from("f32", [2, 2], new Float32Array([1, -2, 3.5, 0])),
    b: Tensor.from("bf16", [3], new Uint16Array([0x3f80, 0x7fc0, 0x8000])),
    q: Tensor.from("e2m1", [4], new Uint8Array([1, 9, 15, 0])),
    s: Tensor.from("ue8m0", [2], new Uint8Array([127, 0])),
  }, { op: "fp8_gemm_nt" });
}

/** The corpus (≥ 300 cases). */
export function hostileCorpus(): HostileCase[] {
  const cases: HostileCase[] = [];
  const add = (name: string, bytes: Uint8Array, expect: RegExp) => cases.push({ name, bytes, expect });

  // 1. Truncations of a valid file at every length.
  const good = validSample();
  // The sample's tensors in header order, [name, end]: a truncated data section puts the first one that ends past it
  // out of range.
  const ends: [string, number][] = [["a", 16], ["b", 22], ["s", 24], ["q", 26]];
  const outOfRange = (dataLen: number) => {
    const [name, end] = ends.find(([, e]) => e > dataLen)!;
    return new RegExp(
      `tensor "${name}": data_offsets \\[\\d+, ${end}\\] out of range of the ${dataLen}-byte data section`,
    );
  };
  const goodHeaderLen = Number(new DataView(good.buffer).getBigUint64(0, true));
  for (let len = 0; len < good.length; len++) {
    add(
      `truncated to ${len} bytes`,
      good.slice(0, len),
      len < 8
        ? /truncated: \d+ bytes, fewer than the 8-byte header length/
        : len < 8 + goodHeaderLen
        ? /header length 296 is beyond the end of the file/
        : outOfRange(len - 8 - goodHeaderLen),
    );
  }
  // 1b. The header length cut short at every byte of the header (the file unchanged): the JSON ends early, or the
  // padding spills into the data section.
  const goodText = new TextDecoder().decode(good.subarray(8, 8 + goodHeaderLen));
  const jsonEnd = goodText.lastIndexOf("}") + 1;
  for (let k = 0; k < goodHeaderLen; k++) {
    const f = good.slice();
    new DataView(f.buffer).setBigUint64(0, BigInt(k), true);
    add(
      `header length cut to ${k}`,
      f,
      k < 2
        ? /too small/
        : k < jsonEnd
        ? /header is not valid JSON: /
        : /hole in the data: bytes \[26, \d+\) at the end/,
    );
  }
  // 1c. The header length running into the data section.
  for (let k = 1; k <= 4; k++) {
    const h = `{${entry("a", "U8", [4], [0, 4])}}`;
    const lengthen = (data: Uint8Array) => rawFile(h, data, BigInt(h.length + k));
    add(`header length ${k} into ASCII data`, lengthen(enc.encode("ABCD")), /not valid JSON: trailing characters/);
    add(`header length ${k} into non-UTF-8 data`, lengthen(new Uint8Array([0x80, 0xff, 0xc0, 0xfe])), /UTF-8/);
    add(
      `header length ${k} into blank data`,
      lengthen(enc.encode("    ")),
      /tensor "a": data_offsets \[0, 4\] out of range/,
    );
  }
  // 2. Header lengths that are huge or beyond the end of the file.
  const body = good.subarray(8);
  for (
    const n of [
      0xffffffffffffffffn,
      0x8000000000000000n,
      0x100000000n,
      100_000_001n,
      BigInt(Number.MAX_SAFE_INTEGER) + 2n,
      BigInt(body.length + 1),
      BigInt(body.length + 8),
      99_999_999n,
    ]
  ) {
    const f = good.slice();
    new DataView(f.buffer).setBigUint64(0, n, true);
    add(`header length ${n}`, f, /exceeds the 100000000-byte limit|beyond the end of the file/);
  }
  for (const n of [0n, 1n]) add(`header length ${n}`, rawFile("{}", 0, n), /too small/);
  add("header length 1 holding '{'", rawFile("{"), /too small/);
  // 3. Bad JSON and bad text.
  const badJson = [
    "{ ",
    "{}}",
    '{"a"}',
    '{"a":}',
    '{"a":1,}',
    "{'a':1}",
    '{"a":[1,2}',
    '{"a":tru}',
    '{"a":nul}',
    '{"a":01}',
    '{"a":1.}',
    '{"a":-}',
    '{"a":"\\x"}',
    '{"a":"\\u12"}',
    '{"a":"unterminated}',
    '{"a":"ctl\u0001"}',
    '{"a":1} x',
    "{,}",
    '{"a" 1}',
    '{"a":1 "b":2}',
    "{" + "[".repeat(100) + "]".repeat(100) + "}",
    '{"a":' + "[".repeat(70) + "]".repeat(70) + "}",
  ];
  for (const j of badJson) add(`bad JSON ${JSON.stringify(j.slice(0, 24))}`, rawFile(j), /not valid JSON/);
  for (const j of ["[]", '"x"', "12", "null", " {}", "\u00ef\u00bb\u00bf{}"]) {
    add(
      `header not an object: ${JSON.stringify(j)}`,
      rawFile(j),
      /does not start with|not a JSON object|not valid JSON/,
    );
  }
  add("header with invalid UTF-8", rawFile(new Uint8Array([0x7b, 0xff, 0xfe, 0x7d])), /not valid UTF-8/);
  add(
    "header with a lone continuation byte",
    rawFile(new Uint8Array([0x7b, 0x22, 0x80, 0x22, 0x7d])),
    /not valid UTF-8/,
  );
  // 4. Duplicate names and keys.
  add(
    "duplicate tensor name",
    rawFile(`{${entry("a", "U8", [1], [0, 1])},${entry("a", "U8", [1], [1, 2])}}`, 2),
    /duplicate key "a"/,
  );
  add(
    "duplicate name after escape",
    rawFile(`{${entry("a", "U8", [1], [0, 1])},"\\u0061":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}}`, 2),
    /duplicate key "a"/,
  );
  add(
    "duplicate dtype key",
    rawFile('{"a":{"dtype":"U8","dtype":"I8","shape":[1],"data_offsets":[0,1]}}', 1),
    /duplicate key "dtype"/,
  );
  add("duplicate __metadata__", rawFile('{"__metadata__":{},"__metadata__":{}}'), /duplicate key "__metadata__"/);
  add("duplicate metadata key", rawFile('{"__metadata__":{"k":"1","k":"2"}}'), /duplicate key "k"/);
  // 5. Offsets: overlapping, holes, out of range, reversed, malformed.
  const two = (o1: unknown, o2: unknown, data: number) =>
    rawFile(`{${entry("a", "F32", [1], o1)},${entry("b", "F32", [1], o2)}}`, data);
  add("overlapping tensors", two([0, 4], [2, 6], 8), /overlaps|hole/);
  add("identical offsets", two([0, 4], [0, 4], 4), /overlaps/);
  add("hole between tensors", two([0, 4], [6, 10], 10), /hole in the data: bytes \[4, 6\)/);
  add("hole at the start", two([2, 6], [6, 10], 10), /hole in the data: bytes \[0, 2\)/);
  add("hole at the end", two([0, 4], [4, 8], 12), /hole in the data: bytes \[8, 12\)/);
  add("end beyond data", two([0, 4], [4, 8], 6), /out of range/);
  add("begin beyond data", rawFile(`{${entry("a", "U8", [0], [1000, 1000])}}`, 0), /out of range/);
  add("huge offsets", rawFile(`{${entry("a", "U8", [1], [2 ** 52, 2 ** 52 + 1])}}`, 0), /out of range/);
  add(
    "offsets past 2^53",
    rawFile('{"a":{"dtype":"U8","shape":[1],"data_offsets":[18446744073709551615,0]}}'),
    /not a non-negative integer/,
  );
  add("end before begin", rawFile(`{${entry("a", "U8", [0], [4, 0])}}`, 4), /end before begin/);
  for (const o of [[0], [0, 1, 2], [], "0,1", [0, -1], [-1, 0], [0.5, 1.5], [0, "1"], null, { b: 0, e: 1 }]) {
    add(`data_offsets ${JSON.stringify(o)}`, rawFile(`{${entry("a", "U8", [1], o)}}`, 1), /data_offsets/);
  }
  // 6. Shape × dtype mismatches and bad shapes.
  const dts: [string, number][] = [
    ["F32", 4],
    ["F16", 2],
    ["BF16", 2],
    ["F8_E4M3", 1],
    ["F8_E5M2", 1],
    ["F8_E8M0", 1],
    [
      "I32",
      4,
    ],
    ["I64", 8],
    ["U8", 1],
    ["I8", 1],
  ];
  for (const [dt, w] of dts) {
    add(
      `${dt} shape [3] in ${3 * w + 1} bytes`,
      rawFile(`{${entry("a", dt, [3], [0, 3 * w + 1])}}`, 3 * w + 1),
      /needs \d+ bytes/,
    );
    add(
      `${dt} shape [2,2] in ${3 * w} bytes`,
      rawFile(`{${entry("a", dt, [2, 2], [0, 3 * w])}}`, 3 * w),
      /needs \d+ bytes/,
    );
    add(`${dt} empty shape [0] with 1 byte`, rawFile(`{${entry("a", dt, [0], [0, 1])}}`, 1), /needs 0 bytes/);
  }
  for (const s of [[-1], [1.5], ["2"], [null], [[2]], "3", 3, null, { 0: 1 }, [2 ** 53]]) {
    add(`shape ${JSON.stringify(s)}`, rawFile(`{${entry("a", "U8", s, [0, 1])}}`, 1), /"shape"/);
  }
  add(
    "shape whose element count overflows",
    rawFile(`{${entry("a", "U8", [2 ** 30, 2 ** 30, 2 ** 30], [0, 1])}}`, 1),
    /too many elements/,
  );
  add("rank 17", rawFile(`{${entry("a", "U8", new Array(17).fill(1), [0, 1])}}`, 1), /rank 17/);
  add(
    "huge shape claims few bytes",
    rawFile(`{${entry("a", "F32", [2 ** 20, 2 ** 20], [0, 4])}}`, 4),
    /needs \d+ bytes/,
  );
  // 7. Odd F4 element counts.
  for (const n of [1, 3, 5, 7, 9, 15, 33, 127]) {
    add(`F4 with ${n} elements`, rawFile(`{${entry("a", "F4", [n], [0, (n + 1) / 2])}}`, (n + 1) / 2), /whole bytes/);
  }
  add("F4 shape [3,3]", rawFile(`{${entry("a", "F4", [3, 3], [0, 5])}}`, 5), /whole bytes/);
  add("F4 with 4 elements in 4 bytes", rawFile(`{${entry("a", "F4", [4], [0, 4])}}`, 4), /needs 2 bytes/);
  add(
    "unknown F4 nibble order",
    rawFile(`{"__metadata__":{"f4_nibble_order":"middle"},${entry("a", "F4", [2], [0, 1])}}`, 1),
    /f4_nibble_order/,
  );
  // 8. Non-string metadata.
  for (const v of ["1", "1.5", "null", "true", "false", "{}", '{"x":"y"}', "[]", '["a"]', "-0"]) {
    add(`metadata value ${v}`, rawFile(`{"__metadata__":{"k":${v}}}`), /must be a string/);
  }
  for (const v of ['"text"', "1", "null", "[]", "true"]) {
    add(`metadata itself ${v}`, rawFile(`{"__metadata__":${v}}`), /"__metadata__" must be an object/);
  }
  // 9. Unknown and unsupported dtypes; malformed entries.
  for (
    const d of [
      "F128",
      "f32",
      "",
      "FLOAT",
      "F8",
      "F8_E4M3FN",
      "INT4",
      "FP4",
      "F4_E2M1",
      "Q4_0",
      "F32 ",
      "__proto__",
      "constructor",
    ]
  ) {
    add(`unknown dtype ${JSON.stringify(d)}`, rawFile(`{${entry("a", d, [1], [0, 4])}}`, 4), /unknown dtype/);
  }
  for (const d of ["BOOL", "F64", "U32", "U64", "F6_E2M3", "F8_E4M3FNUZ"]) {
    add(`unsupported dtype ${d}`, rawFile(`{${entry("a", d, [1], [0, 8])}}`, 8), /unsupported dtype/);
  }
  for (const d of ["1", "null", "[]", '{"x":1}', "true"]) {
    add(`dtype ${d}`, rawFile(`{"a":{"dtype":${d},"shape":[1],"data_offsets":[0,1]}}`, 1), /"dtype" must be a string/);
  }
  add("missing dtype", rawFile('{"a":{"shape":[1],"data_offsets":[0,1]}}', 1), /"dtype" must be a string/);
  add("missing shape", rawFile('{"a":{"dtype":"U8","data_offsets":[0,1]}}', 1), /"shape" must be an array/);
  add("missing data_offsets", rawFile('{"a":{"dtype":"U8","shape":[1]}}', 1), /"data_offsets" must be an array/);
  add(
    "extra key",
    rawFile('{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1],"strides":[1]}}', 1),
    /unexpected key "strides"/,
  );
  for (const v of ["1", '"x"', "null", "[]", "true"]) {
    add(`tensor entry ${v}`, rawFile(`{"a":${v}}`), /must be an object/);
  }

  // 10. Byte-order marks: README.md (huggingface/safetensors) says the header MUST begin with '{'.
  const bom = new Uint8Array([0xef, 0xbb, 0xbf]);
  const withPrefix = (prefix: number[] | Uint8Array, text: string) => {
    const t = enc.encode(text);
    const h = new Uint8Array(prefix.length + t.length);
    h.set(prefix);
    h.set(t, prefix.length);
    return h;
  };
  add("UTF-8 BOM before {}", rawFile(withPrefix(bom, "{}")), /byte-order mark/);
  add(
    "UTF-8 BOM before a tensor",
    rawFile(withPrefix(bom, `{${entry("a", "U8", [1], [0, 1])}}`), 1),
    /byte-order mark/,
  );
  add("UTF-8 BOM alone", rawFile(bom), /byte-order mark/);
  add("UTF-8 BOM twice", rawFile(withPrefix([...bom, ...bom], "{}")), /byte-order mark/);
  add("UTF-16LE BOM", rawFile(withPrefix([0xff, 0xfe], "{}")), /not valid UTF-8/);
  add("UTF-16BE BOM", rawFile(withPrefix([0xfe, 0xff], "{}")), /not valid UTF-8/);
  add("space then UTF-8 BOM", rawFile(withPrefix([0x20, ...bom], "{}")), /does not start with '\{'/);
  add("UTF-8 BOM inside the object", rawFile("{\ufeff}"), /not valid JSON: unexpected character|expected a string key/);
  add("UTF-8 BOM in the padding", rawFile("{}  \ufeff"), /not valid JSON: trailing characters/);

  // 11. Lone surrogates in \u escapes, in every kind of string (serde-rs/json src/read.rs parse_unicode_escape).
  const lone = [
    "\\ud800",
    "\\uD800",
    "\\udbff",
    "\\udc00",
    "\\uDFFF",
    "x\\ud800",
    "\\ud800x",
    "\\ud800\\u0041",
    "\\ud800\\n",
    "\\ud800\\ud800",
    "\\udc00\\ud800",
    "\\ud83d",
    "\\ude00\\ud83d",
  ];
  for (const l of lone) {
    const t = `{"dtype":"U8","shape":[1],"data_offsets":[0,1]}`;
    add(`lone surrogate ${l} in a tensor name`, rawFile(`{"${l}":${t}}`, 1), /lone surrogate \\u[0-9a-f]{4}/);
  }
  for (const l of ["\\ud800", "\\udfff", "F32\\ud800"]) {
    add(
      `lone surrogate ${l} in a dtype`,
      rawFile(`{"a":{"dtype":"${l}","shape":[1],"data_offsets":[0,1]}}`, 1),
      /lone surrogate/,
    );
    add(`lone surrogate ${l} in a metadata key`, rawFile(`{"__metadata__":{"${l}":"v"}}`), /lone surrogate/);
    add(`lone surrogate ${l} in a metadata value`, rawFile(`{"__metadata__":{"k":"${l}"}}`), /lone surrogate/);
    add(
      `lone surrogate ${l} in an unexpected key`,
      rawFile(`{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1],"${l}":1}}`, 1),
      /lone surrogate/,
    );
    add(
      `lone surrogate ${l} in a shape`,
      rawFile(`{"a":{"dtype":"U8","shape":["${l}"],"data_offsets":[0,1]}}`, 1),
      /lone surrogate/,
    );
    add(`lone surrogate ${l} nested in metadata`, rawFile(`{"__metadata__":{"k":[{"x":"${l}"}]}}`), /lone surrogate/);
  }
  add("high surrogate then a bad escape", rawFile(`{"\\ud800\\uZZZZ":1}`), /bad \\u escape/);
  add("high surrogate at the end of the header", rawFile(`{"\\ud800`), /lone surrogate|unterminated/);

  // 12. Number spellings in shape and data_offsets: plain digits only (serde reads 1.0, 1e2 and -0 as floats, which
  // usize refuses: serde-rs/json src/de.rs parse_number; safetensors/src/tensor.rs TensorInfo).
  const floats = [
    "1.0",
    "1e0",
    "1E0",
    "1e+0",
    "1e-0",
    "0e-5",
    "0E0",
    "-0",
    "-1",
    "0.0",
    "-0.0",
    "1.5",
    "10e-1",
    "4.0e0",
  ];
  for (const sp of floats) {
    const why = /[.]/.test(sp) ? "a fraction" : /[eE]/.test(sp) ? "an exponent" : "a minus sign";
    const esc = sp.replace(/[.+]/g, "\\$&");
    add(
      `shape spelled [${sp}]`,
      rawFile(`{"a":{"dtype":"U8","shape":[${sp}],"data_offsets":[0,1]}}`, 1),
      new RegExp(`tensor "a": "shape" holds ${esc}, not a non-negative integer \\(${why}`),
    );
    add(
      `data_offsets spelled [${sp}, 1]`,
      rawFile(`{"a":{"dtype":"U8","shape":[1],"data_offsets":[${sp},1]}}`, 1),
      new RegExp(`tensor "a": "data_offsets" holds ${esc}, not a non-negative integer \\(${why}`),
    );
    add(
      `data_offsets spelled [0, ${sp}]`,
      rawFile(`{"a":{"dtype":"U8","shape":[0],"data_offsets":[0,${sp}]}}`),
      new RegExp(`tensor "a": "data_offsets" holds ${esc}, not a non-negative integer \\(${why}`),
    );
  }
  for (const sp of ["01", "00", "-01", "007", "0123", "-00"]) {
    add(
      `leading zero ${sp}`,
      rawFile(`{"a":{"dtype":"U8","shape":[${sp}],"data_offsets":[0,1]}}`, 1),
      /not valid JSON: leading zero/,
    );
  }
  for (const sp of ["1.", ".5", "1e", "1e+", "+1", "0x10", "1_0", "Infinity", "NaN", "--1"]) {
    add(`bad number ${sp}`, rawFile(`{"a":{"dtype":"U8","shape":[${sp}],"data_offsets":[0,1]}}`, 1), /not valid JSON/);
  }
  for (const sp of ["9007199254740992", "18446744073709551615", "18446744073709551616", "1" + "0".repeat(400)]) {
    add(
      `shape ${sp.slice(0, 24)}`,
      rawFile(`{"a":{"dtype":"U8","shape":[${sp}],"data_offsets":[0,1]}}`, 1),
      /"shape" holds \d+(\.\.\.)?, not a non-negative integer below 2\^53/,
    );
  }
  add(
    "shape 1e400",
    rawFile(`{"a":{"dtype":"U8","shape":[1e400],"data_offsets":[0,1]}}`, 1),
    /"shape" holds 1e400.*an exponent/,
  );
  add(
    "shape holding an object",
    rawFile(`{"a":{"dtype":"U8","shape":[{"n":1}],"data_offsets":[0,1]}}`, 1),
    /"shape" holds \{"n":1\}, not a non-negative integer/,
  );

  // 13. More duplicates: keys are compared after unescaping, at every level (README.md "Duplicate keys are
  // disallowed").
  add(
    "duplicate escaped dtype key",
    rawFile('{"a":{"dtype":"U8","\\u0064type":"I8","shape":[1],"data_offsets":[0,1]}}', 1),
    /duplicate key "dtype"/,
  );
  add(
    "duplicate shape key",
    rawFile('{"a":{"dtype":"U8","shape":[1],"shape":[1],"data_offsets":[0,1]}}', 1),
    /duplicate key "shape"/,
  );
  add(
    "duplicate data_offsets key",
    rawFile('{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1],"data_offsets":[0,1]}}', 1),
    /duplicate key "data_offsets"/,
  );
  add(
    "duplicate unexpected key",
    rawFile('{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1],"x":1,"x":2}}', 1),
    /duplicate key "x"/,
  );
  add(
    "duplicate escaped __metadata__",
    rawFile('{"__metadata__":{},"\\u005f_metadata__":{}}'),
    /duplicate key "__metadata__"/,
  );
  add("duplicate key nested in metadata", rawFile('{"__metadata__":{"k":{"x":1,"x":2}}}'), /duplicate key "x"/);
  add("duplicate key nested in a tensor entry", rawFile('{"a":{"dtype":{"x":1,"x":1}}}'), /duplicate key "x"/);
  add("duplicate key nested in a tensor value", rawFile('{"a":[{"x":1,"\\u0078":1}]}'), /duplicate key "x"/);
  add(
    "duplicate non-ASCII name, one escaped",
    rawFile(`{${entry("é", "U8", [1], [0, 1])},${entry("x", "U8", [1], [1, 2])},"\\u00e9":{}}`, 2),
    /duplicate key "é"/,
  );
  add(
    "duplicate astral name, one escaped",
    rawFile(`{${entry("😀", "U8", [1], [0, 1])},"\\ud83d\\ude00":{}}`, 1),
    /duplicate key "😀"/,
  );
  for (const count of [100, 5000]) {
    const names = Array.from({ length: count }, (_, i) => entry(`t${i}`, "U8", [1], [i, i + 1]));
    names.push(entry(`t${count >> 1}`, "U8", [1], [count, count + 1]));
    add(
      `duplicate name among ${count}`,
      rawFile(`{${names.join(",")}}`, count + 1),
      new RegExp(`duplicate key "t${count >> 1}"`),
    );
  }

  // 14. Depth (serde_json stops at 128 levels, src/de.rs remaining_depth; this reader at 64).
  const nest = (k: number) => "[".repeat(k) + "]".repeat(k);
  add(
    "metadata value nested 63 deep",
    rawFile(`{"__metadata__":{"k":${nest(63)}}}`),
    /value of "k" must be a string, got an array/,
  );
  add("metadata value nested 64 deep", rawFile(`{"__metadata__":{"k":${nest(64)}}}`), /nesting deeper than 64/);
  add("tensor value nested 64 deep", rawFile(`{"a":${nest(64)}}`), /tensor "a" must be an object, got an array/);
  add("tensor value nested 65 deep", rawFile(`{"a":${nest(65)}}`), /nesting deeper than 64/);
  add("objects nested 65 deep", rawFile(`{"a":${'{"x":'.repeat(65)}1${"}".repeat(65)}}`), /nesting deeper than 64/);
  add("nesting 10000 deep", rawFile(`{"a":${nest(10000)}}`), /nesting deeper than 64/);
  add("unclosed nesting 10000 deep", rawFile(`{"a":${"[".repeat(10000)}}`), /nesting deeper than 64/);

  // 15. Size overflow (safetensors/src/tensor.rs validate: checked_mul, ValidationOverflow).
  add("F32 byte size 2^53", rawFile(`{${entry("a", "F32", [2 ** 51], [0, 4])}}`, 4), /byte size overflows/);
  add("I64 byte size 2^53", rawFile(`{${entry("a", "I64", [2 ** 50], [0, 8])}}`, 8), /byte size overflows/);
  add("U8 count 2^54", rawFile(`{${entry("a", "U8", [2 ** 26, 2 ** 26, 4], [0, 1])}}`, 1), /too many elements/);
  add("U8 count 2^53 - 1", rawFile(`{${entry("a", "U8", [2 ** 53 - 1], [0, 1])}}`, 1), /needs 9007199254740991 bytes/);
  add(
    "zero times huge",
    rawFile(`{${entry("a", "U8", [0, 2 ** 52, 2 ** 52], [0, 1])}}`, 1),
    /too many elements|needs 0 bytes/,
  );
  add("shape [2^52, 0] with data", rawFile(`{${entry("a", "U8", [2 ** 52, 0], [0, 1])}}`, 1), /needs 0 bytes/);

  // 16. Offsets: order, overlap, gaps and bounds (safetensors/src/tensor.rs validate: sorted by offsets, each
  // tensor starts where the previous one ended; read_metadata: MetadataIncompleteBuffer).
  const three = (o: [number, number][], data: number) =>
    rawFile(`{${o.map((x, i) => entry("abc"[i], "U8", [x[1] - x[0]], x)).join(",")}}`, data);
  add("three tensors, gap after the first", three([[0, 1], [2, 3], [3, 4]], 4), /hole in the data: bytes \[1, 2\)/);
  add("three tensors, gap after the second", three([[0, 1], [1, 2], [3, 4]], 4), /hole in the data: bytes \[2, 3\)/);
  add("three tensors, reversed with a gap", three([[3, 4], [1, 3], [0, 0]], 4), /hole in the data: bytes \[0, 1\)/);
  add("three tensors, one inside another", three([[0, 4], [1, 2], [2, 3]], 4), /overlaps another tensor at byte 1/);
  add("three tensors, same begin", three([[0, 2], [0, 1], [2, 4]], 4), /overlaps another tensor at byte 0/);
  add(
    "three tensors, last past the data",
    three([[0, 1], [1, 2], [2, 5]], 4),
    /tensor "c": data_offsets \[2, 5\] out of range/,
  );
  add(
    "three tensors, one short of the data",
    three([[0, 1], [1, 2], [2, 3]], 4),
    /hole in the data: bytes \[3, 4\) at the end/,
  );
  add(
    "one tensor, data twice as long",
    rawFile(`{${entry("a", "F32", [1], [0, 4])}}`, 8),
    /hole in the data: bytes \[4, 8\) at the end/,
  );
  add("no tensors but data", rawFile("{}", 1), /hole in the data: bytes \[0, 1\) at the end/);
  add("only metadata but data", rawFile('{"__metadata__":{}}', 3), /hole in the data: bytes \[0, 3\) at the end/);
  add("offsets at 2^53 - 1", rawFile(`{${entry("a", "U8", [0], [2 ** 53 - 1, 2 ** 53 - 1])}}`), /out of range/);
  add("end at 2^53 - 1", rawFile(`{${entry("a", "U8", [1], [2 ** 53 - 2, 2 ** 53 - 1])}}`, 1), /out of range/);
  add("end before begin, both huge", rawFile(`{${entry("a", "U8", [0], [2 ** 52, 2 ** 51])}}`), /end before begin/);
  add("offsets [1, 0] on empty", rawFile(`{${entry("a", "U8", [0], [1, 0])}}`), /end before begin/);
  for (const o of ["[0,1,2,3]", "[[0],[1]]", '["0","1"]', "[true,false]", "[null,null]", "{}", '"[0,1]"', "0"]) {
    add(`data_offsets ${o}`, rawFile(`{"a":{"dtype":"U8","shape":[1],"data_offsets":${o}}}`, 1), /"data_offsets"/);
  }

  // 17. Metadata types (README.md: "all values must be strings").
  for (const v of ['[["a"]]', '{"k":"v"}', "0", "-1", "1e3", '""', "false"]) {
    const ok = v === '""';
    if (ok) continue;
    add(
      `metadata value ${v} for key "x"`,
      rawFile(`{"__metadata__":{"a":"b","x":${v}}}`),
      /value of "x" must be a string/,
    );
  }
  add(
    "metadata array of pairs",
    rawFile('{"__metadata__":[["k","v"]]}'),
    /"__metadata__" must be an object, got an array/,
  );
  add(
    "f4_nibble_order empty",
    rawFile(`{"__metadata__":{"f4_nibble_order":""},${entry("a", "F4", [2], [0, 1])}}`, 1),
    /f4_nibble_order/,
  );
  add(
    "f4_nibble_order in upper case",
    rawFile(`{"__metadata__":{"f4_nibble_order":"LOW_FIRST"},${entry("a", "F4", [2], [0, 1])}}`, 1),
    /f4_nibble_order/,
  );

  // 18. F4 parity in more shapes (safetensors/src/tensor.rs validate: MisalignedSlice).
  for (const sh of [[1, 1], [3, 5], [1, 1, 1], [7, 1, 1]]) {
    const n = sh.reduce((a, b) => a * b, 1);
    add(`F4 shape [${sh}]`, rawFile(`{${entry("a", "F4", sh, [0, (n + 1) / 2])}}`, (n + 1) / 2), /whole bytes/);
  }

  // 19. Zero-size tensors (README.md: allowed, "not storing any data in the databuffer").
  add(
    "zero-size tensor past the data",
    rawFile(`{${entry("z", "F32", [0], [5, 5])}}`, 0),
    /tensor "z": data_offsets \[5, 5\] out of range/,
  );
  add(
    "zero-size tensor past a 4-byte data section",
    rawFile(`{${entry("a", "F32", [1], [0, 4])},${entry("z", "F32", [0, 3], [8, 8])}}`, 4),
    /tensor "z": data_offsets \[8, 8\] out of range/,
  );
  add(
    "zero-size tensor inside another",
    rawFile(
      `{${entry("a", "F32", [1], [0, 4])},${entry("z", "F32", [0], [2, 2])},${entry("b", "F32", [1], [4, 8])}}`,
      8,
    ),
    /tensor "z" overlaps another tensor at byte 2/,
  );
  add(
    "zero-size tensor across a gap",
    rawFile(`{${entry("a", "U8", [1], [0, 1])},${entry("z", "U8", [0], [2, 2])},${entry("b", "U8", [1], [2, 3])}}`, 3),
    /hole in the data: bytes \[1, 2\)/,
  );
  add("zero-size tensor claiming a byte", rawFile(`{${entry("z", "I64", [4, 0], [0, 1])}}`, 1), /needs 0 bytes/);
  add(
    "only zero-size tensors but data",
    rawFile(`{${entry("z", "U8", [0], [0, 0])}}`, 2),
    /hole in the data: bytes \[0, 2\) at the end/,
  );

  // 20. Resource limits.
  add("rank 1000", rawFile(`{${entry("a", "U8", new Array(1000).fill(1), [0, 1])}}`, 1), /rank 1000 exceeds 16/);
  add("rank 17 of zeros", rawFile(`{${entry("a", "U8", new Array(17).fill(0), [0, 0])}}`), /rank 17 exceeds 16/);
  add(
    "header length just over the limit",
    rawFile("{}", 0, BigInt(100_000_001)),
    /header length 100000001 exceeds the 100000000-byte limit/,
  );
  add("header length 2^63 - 1", rawFile("{}", 0, 2n ** 63n - 1n), /exceeds the 100000000-byte limit/);
  add("header length 2^53 + 1", rawFile("{}", 0, 2n ** 53n + 1n), /exceeds the 100000000-byte limit/);
  add("header length at the limit, file short", rawFile("{}", 0, 100_000_000n), /beyond the end of the file/);
  add(
    "a 4-byte tensor claiming 4 GiB",
    rawFile(`{${entry("a", "U8", [2 ** 32], [0, 2 ** 32])}}`, 4),
    /tensor "a": data_offsets \[0, 4294967296\] out of range of the 4-byte data section/,
  );
  add(
    "1000 tensors, the last out of range",
    rawFile(`{${Array.from({ length: 1000 }, (_, i) => entry(`t${i}`, "U8", [1], [i, i + 1])).join(",")}}`, 999),
    /tensor "t999": data_offsets \[999, 1000\] out of range/,
  );
  add(
    "a 2000-character name in a fault",
    rawFile(`{${entry("n".repeat(2000), "U8", [1], [0, 2])}}`, 2),
    /tensor "n{99}…" \(2000 characters\): shape \[1\] × U8 needs 1 bytes/,
  );
  return cases;
}
