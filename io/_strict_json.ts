/**
 * A small strict JSON parser for safetensors headers: rejects duplicate keys (which `JSON.parse` silently
 * merges), limits nesting depth, and returns objects as `Map`s so no key (not even `__proto__`) is special.
 * @module
 * @private
 */

/** A parsed JSON value; objects are Maps in key order. */
export type JsonValue = null | boolean | number | string | JsonValue[] | Map<string, JsonValue>;

const MAX_DEPTH = 64;
const SIMPLE_ESCAPES: Readonly<Record<string, string>> = {
  '"': '"',
  "\\": "\\",
  "/": "/",
  b: "\b",
  f: "\f",
  n: "\n",
  r: "\r",
  t: "\t",
};

/**
 * Parses `text` as one JSON value; throws a SyntaxError naming the offset of the first fault.
 * @private
 */
export function parseStrictJson(text: string): JsonValue {
  let i = 0;
  const n = text.length;
  const fail = (what: string): never => {
    throw new SyntaxError(`${what} at offset ${i}`);
  };
  const ws = () => {
    while (i < n) {
      const c = text.charCodeAt(i);
      if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) i++;
      else break;
    }
  };
  const str = (): string => {
    // text[i] === '"'
    i++;
    let out = "";
    let start = i;
    while (true) {
      if (i >= n) fail("unterminated string");
      const c = text.charCodeAt(i);
      if (c === 0x22) {
        out += text.slice(start, i);
        i++;
        return out;
      }
      if (c < 0x20) fail("control character in string");
      if (c === 0x5c) {
        out += text.slice(start, i);
        i++;
        if (i >= n) fail("unterminated escape");
        const e = text[i];
        if (Object.hasOwn(SIMPLE_ESCAPES, e)) {
          out += SIMPLE_ESCAPES[e];
          i++;
        } else if (e === "u") {
          const hex = text.slice(i + 1, i + 5);
          if (!/^[0-9a-fA-F]{4}$/.test(hex)) fail("bad \\u escape");
          out += String.fromCharCode(parseInt(hex, 16));
          i += 5;
        } else {
          fail("bad escape");
        }
        start = i;
      } else {
        i++;
      }
    }
  };
  const num = (): number => {
    const m = /^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?/.exec(text.slice(i, i + 400));
    if (!m) fail("bad number");
    i += m![0].length;
    return Number(m![0]);
  };
  const value = (depth: number): JsonValue => {
    if (depth > MAX_DEPTH) fail(`nesting deeper than ${MAX_DEPTH}`);
    ws();
    if (i >= n) fail("unexpected end of JSON");
    const c = text[i];
    if (c === "{") {
      i++;
      const obj = new Map<string, JsonValue>();
      ws();
      if (text[i] === "}") {
        i++;
        return obj;
      }
      while (true) {
        ws();
        if (text[i] !== '"') fail("expected a string key");
        const keyAt = i;
        const key = str();
        if (obj.has(key)) {
          i = keyAt;
          fail(`duplicate key ${JSON.stringify(key)}`);
        }
        ws();
        if (text[i] !== ":") fail("expected ':'");
        i++;
        obj.set(key, value(depth + 1));
        ws();
        if (text[i] === ",") {
          i++;
          continue;
        }
        if (text[i] === "}") {
          i++;
          return obj;
        }
        fail("expected ',' or '}'");
      }
    }
    if (c === "[") {
      i++;
      const arr: JsonValue[] = [];
      ws();
      if (text[i] === "]") {
        i++;
        return arr;
      }
      while (true) {
        arr.push(value(depth + 1));
        ws();
        if (text[i] === ",") {
          i++;
          continue;
        }
        if (text[i] === "]") {
          i++;
          return arr;
        }
        fail("expected ',' or ']'");
      }
    }
    if (c === '"') return str();
    if (text.startsWith("true", i)) {
      i += 4;
      return true;
    }
    if (text.startsWith("false", i)) {
      i += 5;
      return false;
    }
    if (text.startsWith("null", i)) {
      i += 4;
      return null;
    }
    if (c === "-" || (c >= "0" && c <= "9")) return num();
    return fail(`unexpected character ${JSON.stringify(c)}`);
  };
  const v = value(0);
  ws();
  if (i !== n) fail("trailing characters after JSON");
  return v;
}
