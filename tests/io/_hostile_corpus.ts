/**
 * A generated corpus of corrupt and hostile safetensors files, shared by the reader tests and the CLI tests.
 * Every case must be rejected with a SafetensorsError whose fault matches `expect`.
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

/** The corpus (≥ 200 cases). */
export function hostileCorpus(): HostileCase[] {
  const cases: HostileCase[] = [];
  const add = (name: string, bytes: Uint8Array, expect: RegExp) => cases.push({ name, bytes, expect });

  // 1. Truncations of a valid file at every length.
  const good = validSample();
  for (let len = 0; len < good.length; len++) {
    add(`truncated to ${len} bytes`, good.slice(0, len), /truncated|beyond the end|hole in the data|out of range/);
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
  for (const d of ["BOOL", "F64", "U16", "I16", "U32", "U64", "F6_E2M3", "F8_E4M3FNUZ"]) {
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
  return cases;
}
