import assert from "node:assert/strict";
import { entryName, type HeaderTable, MAX_DEPTH, parseHeaderJson } from "../../io/_strict_json.ts";
import { parseSafetensors, SafetensorsError } from "../../io/mod.ts";
import { Prng } from "../../reference/random/prng.ts";
import { rawFile } from "./_hostile_corpus.ts";

/** The table as plain data, in header order. */
function entries(h: HeaderTable) {
  return Array.from({ length: h.count }, (_, i) => ({
    name: entryName(h, i),
    dtype: h.dtype[i] < 0 ? undefined : h.dtypeNames[h.dtype[i]],
    shape: Array.from(h.dims.subarray(h.shapeAt[i], h.shapeAt[i] + h.rank[i])),
    offsets: [h.begin[i], h.end[i]],
    faults: h.faults.get(i),
  }));
}

/** What JSON.parse makes of a valid header, in the same form. */
function viaJsonParse(text: string) {
  const o = JSON.parse(text);
  const names = Object.keys(o).filter((k) => k !== "__metadata__");
  return {
    metadata: Object.entries<string>(o.__metadata__ ?? {}),
    entries: names.map((name) => ({
      name,
      dtype: o[name].dtype,
      shape: o[name].shape,
      offsets: o[name].data_offsets,
      faults: undefined,
    })),
  };
}

const ALPHABET = [
  "a",
  "Z",
  "0",
  "_",
  ".",
  " ",
  "é",
  "中",
  "😀",
  '"',
  "\\",
  "/",
  "\n",
  "\t",
  "\u0001",
  "\u2028",
  "\ufeff",
];

function randomName(prng: Prng): string {
  let s = "";
  const n = prng.int(6);
  for (let k = 0; k < n; k++) s += ALPHABET[prng.int(ALPHABET.length)];
  return s;
}

/** JSON text of `s` with some characters escaped as \uXXXX (surrogate pairs stay pairs). */
function spell(s: string, prng: Prng): string {
  let out = '"';
  for (const ch of s) {
    if (prng.int(3) === 0) {
      for (let k = 0; k < ch.length; k++) out += `\\u${ch.charCodeAt(k).toString(16).padStart(4, "0")}`;
    } else out += JSON.stringify(ch).slice(1, -1);
  }
  return out + '"';
}

Deno.test("parseHeaderJson()", async (t) => {
  await t.step("agrees with JSON.parse on 300 random valid headers with escapes, whitespace and odd names", () => {
    const prng = new Prng(11);
    const ws = ["", " ", "\n", "\t", "\r\n  "];
    const w = () => ws[prng.int(ws.length)];
    for (let r = 0; r < 300; r++) {
      const names = new Set<string>();
      const count = prng.int(12);
      while (names.size < count) {
        const nm = randomName(prng);
        if (nm !== "__metadata__") names.add(nm);
      }
      const parts: string[] = [];
      let off = 0;
      for (const nm of names) {
        const shape = Array.from({ length: prng.int(4) }, () => prng.int(4));
        const size = shape.reduce((a, b) => a * b, 1);
        const fields = [
          `${w()}${prng.int(2) ? '"dtype"' : '"\\u0064type"'}${w()}:${w()}${prng.int(2) ? '"U8"' : '"\\u00558"'}`,
          `${w()}"shape"${w()}:${w()}[${w()}${shape.join(`${w()},${w()}`)}${w()}]`,
          `${w()}"data_offsets"${w()}:${w()}[${off},${w()}${off + size}]`,
        ];
        off += size;
        for (let k = fields.length - 1; k > 0; k--) {
          const j = prng.int(k + 1);
          [fields[k], fields[j]] = [fields[j], fields[k]];
        }
        parts.push(`${w()}${spell(nm, prng)}${w()}:${w()}{${fields.join(",")}${w()}}`);
      }
      if (prng.int(2)) {
        const meta = Array.from(
          { length: prng.int(3) },
          (_, k) => `${spell(`k${k}`, prng)}:${spell(randomName(prng), prng)}`,
        );
        parts.splice(prng.int(parts.length + 1), 0, `"__metadata__":{${meta.join(",")}}`);
      }
      const text = `{${parts.join(",")}${w()}}${" ".repeat(prng.int(8))}`;
      // JSON.parse lists integer-like keys first, so compare in name order
      const byName = <T extends { name: string } | [string, string]>(list: T[]) =>
        list.toSorted((a, b) => {
          const x = Array.isArray(a) ? a[0] : a.name, y = Array.isArray(b) ? b[0] : b.name;
          return x < y ? -1 : x > y ? 1 : 0;
        });
      const want = viaJsonParse(text);
      const h = parseHeaderJson(text);
      assert.deepEqual(byName(entries(h)), byName(want.entries), text);
      assert.deepEqual(byName([...h.metadata]), byName(want.metadata), text);
      assert.equal(h.metadataFault, undefined);
      const again = parseHeaderJson(text, 0); // the Map path for names
      assert.deepEqual(entries(again), entries(h), text);
    }
  });

  await t.step("finds duplicates among 20000 names in the table and in its Map fallback", () => {
    const n = 20000;
    const body = Array.from({ length: n }, (_, i) => `"n${i}":{}`);
    const ok = `{${body.join(",")}}`;
    assert.equal(parseHeaderJson(ok).count, n);
    assert.equal(parseHeaderJson(ok, 0).count, n);
    for (const dup of [0, 777, n - 1]) {
      const text = `{${body.join(",")},"n${dup}":{}}`;
      for (const budget of [8, 0]) {
        assert.throws(() => parseHeaderJson(text, budget), new RegExp(`duplicate key "n${dup}"`));
      }
    }
    // the same name escaped differently: a region of the text against a decoded string
    const esc = `{${body.join(",")},"\\u006e${n >> 1}":{}}`;
    for (const budget of [8, 0]) {
      assert.throws(() => parseHeaderJson(esc, budget), new RegExp(`duplicate key "n${n >> 1}"`));
    }
  });

  await t.step("records schema faults without stopping at them, and reports grammar faults first", () => {
    const h = parseHeaderJson('{"a":{"dtype":1,"shape":[1.0],"data_offsets":[0]},"b":[]}');
    assert.deepEqual(h.faults.get(0), {
      dtype: '"dtype" must be a string, got a number',
      shape: '"shape" holds 1.0, not a non-negative integer (a fraction; integers are plain digits)',
      offsets: '"data_offsets" must hold [begin, end], got 1 numbers',
    });
    assert.deepEqual(h.faults.get(1), { entry: 'tensor "b" must be an object, got an array' });
    assert.throws(() => parseHeaderJson('{"a":{"shape":[1.0]},"b":01}'), /leading zero in a number at offset 25/);
  });

  await t.step(`limits nesting to ${MAX_DEPTH} levels`, () => {
    const nest = (k: number) => "[".repeat(k) + "]".repeat(k);
    parseHeaderJson(`{"__metadata__":{"k":${nest(MAX_DEPTH - 1)}}}`);
    assert.throws(() => parseHeaderJson(`{"__metadata__":{"k":${nest(MAX_DEPTH)}}}`), /nesting deeper than 64/);
  });
});

Deno.test("parseSafetensors() accepts", async (t) => {
  const one = (name: string, dtype = '"U8"') => `${name}:{"dtype":${dtype},"shape":[1],"data_offsets":[0,1]}`;
  const cases: [string, string, string][] = [
    ["a BOM character inside a name", `{${one('"\ufeffx"')}}`, "\ufeffx"],
    ["an escaped BOM character in a name", `{${one('"\\ufeffx"')}}`, "\ufeffx"],
    ["a raw astral character", `{${one('"😀"')}}`, "😀"],
    ["an escaped surrogate pair", `{${one('"\\ud83d\\ude00"')}}`, "😀"],
    ["an upper-case escaped surrogate pair", `{${one('"\\uD83D\\uDE00"')}}`, "😀"],
    ["an escaped dtype", `{${one('"w"', '"\\u0055\\u0038"')}}`, "w"],
    ["escaped quotes and backslashes", `{${one('"a\\"b\\\\c"')}}`, 'a"b\\c'],
    ["__proto__ as a name", `{${one('"__proto__"')}}`, "__proto__"],
    ["an empty name", `{${one('""')}}`, ""],
  ];
  for (const [what, header, name] of cases) {
    await t.step(what, () => {
      const f = parseSafetensors(rawFile(header, new Uint8Array([42])));
      assert.deepEqual([...f.tensors.keys()], [name]);
      assert.equal(f.tensors.get(name)!.data[0], 42);
    });
  }

  await t.step("tensors in any header order, returned in offset order, with zero-size ones anywhere", () => {
    const header = '{"c":{"dtype":"U8","shape":[2],"data_offsets":[3,5]},' +
      '"z":{"dtype":"F32","shape":[0,4],"data_offsets":[1,1]},' +
      '"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},' +
      '"e":{"dtype":"I64","shape":[0],"data_offsets":[5,5]},' +
      '"b":{"dtype":"U8","shape":[2],"data_offsets":[1,3]}}';
    const f = parseSafetensors(rawFile(header, new Uint8Array([1, 2, 3, 4, 5])));
    assert.deepEqual([...f.tensors.keys()], ["a", "z", "b", "c", "e"]);
    assert.deepEqual([...f.tensors.get("c")!.data], [4, 5]);
    assert.deepEqual(f.tensors.get("z")!.shape, [0, 4]);
  });

  await t.step("whitespace around every token and JSON whitespace as padding", () => {
    const header = ' {\n\t"a" : { "dtype" :\r\n "U8" , "shape" : [ 1 ] , "data_offsets" : [ 0 , 1 ] } \n}\t\r\n ';
    assert.throws(() => parseSafetensors(rawFile(header, 1)), /does not start with '\{'/);
    const f = parseSafetensors(rawFile(header.slice(1), 1));
    assert.deepEqual([...f.tensors.keys()], ["a"]);
  });

  await t.step("0 and the largest safe integer as plain digits", () => {
    const f = parseSafetensors(rawFile('{"a":{"dtype":"U8","shape":[0,9007199254740991],"data_offsets":[0,0]}}'));
    assert.deepEqual(f.tensors.get("a")!.shape, [0, 9007199254740991]);
  });

  await t.step("and refuses the same header behind a BOM", () => {
    const text = new TextEncoder().encode(`\ufeff{${one('"a"')}}`);
    assert.throws(() => parseSafetensors(rawFile(text, 1), "bom.safetensors"), (e: Error) => {
      assert.ok(e instanceof SafetensorsError);
      assert.equal(e.message, "bom.safetensors: header starts with a UTF-8 byte-order mark (EF BB BF), not '{'");
      return true;
    });
  });
});
