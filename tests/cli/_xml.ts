/**
 * A strict reader of the small XML subset the JUnit reports use (a declaration, elements, attributes, text, the five
 * predefined entities and character references), for tests that must prove a report is well-formed: any other
 * construct, an unbalanced tag, a duplicate attribute, a bare `&` or `<`, or a character XML 1.0 forbids (control
 * characters such as ESC from a crashed process's stderr) throws, naming the offset.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseXml } from "./_xml.ts";
 * const root = parseXml(`<?xml version="1.0"?><a x="1 &amp; 2"><b/></a>`);
 * assert.equal(root.attrs.x, "1 & 2");
 * assert.equal(root.children[0].name, "b");
 * assert.throws(() => parseXml("<a><b></a>"), /closes <b>/);
 * ```
 * @module
 * @private
 */

/** One element. */
export interface XmlElement {
  name: string;
  attrs: Record<string, string>;
  children: XmlElement[];
  /** The text directly inside, entities decoded. */
  text: string;
}

const NAME = /[A-Za-z_:][-A-Za-z0-9_:.]*/y;
const ENTITIES: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'" };
// XML 1.0 Char: #x9 | #xA | #xD | [#x20-#xD7FF] | [#xE000-#xFFFD] | [#x10000-#x10FFFF] (surrogate pairs are fine)
// deno-lint-ignore no-control-regex
const FORBIDDEN = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/;

/**
 * Parses a document into its root element.
 * @param text the whole document
 * @throws {SyntaxError} at the first construct that is not well-formed
 */
export function parseXml(text: string): XmlElement {
  const bad = FORBIDDEN.exec(text);
  if (bad) {
    throw new SyntaxError(`character U+${bad[0].charCodeAt(0).toString(16).padStart(4, "0")} at ${bad.index}`);
  }
  let i = 0;
  const fail = (what: string): never => {
    throw new SyntaxError(`${what} at offset ${i}: ${JSON.stringify(text.slice(i, i + 40))}`);
  };
  const skipSpace = () => {
    while (i < text.length && " \t\r\n".includes(text[i])) i++;
  };
  const name = (): string => {
    NAME.lastIndex = i;
    const m = NAME.exec(text);
    if (!m) fail("expected a name");
    i += m![0].length;
    return m![0];
  };
  const decode = (raw: string, at: number): string =>
    raw.replace(/&([^;]*);|&|</g, (all, ref: string | undefined) => {
      if (all === "<" || ref === undefined) throw new SyntaxError(`bare ${JSON.stringify(all)} near offset ${at}`);
      if (ref in ENTITIES) return ENTITIES[ref];
      const num = /^#(?:x([0-9A-Fa-f]+)|([0-9]+))$/.exec(ref);
      if (!num) throw new SyntaxError(`unknown entity &${ref}; near offset ${at}`);
      const code = num[1] !== undefined ? parseInt(num[1], 16) : Number(num[2]);
      const s = String.fromCodePoint(code);
      if (FORBIDDEN.test(s) || code === 0) throw new SyntaxError(`reference to a forbidden character near ${at}`);
      return s;
    });

  if (text.startsWith("<?xml")) {
    const end = text.indexOf("?>");
    if (end < 0) fail("unterminated declaration");
    i = end + 2;
  }
  skipSpace();
  const element = (): XmlElement => {
    if (text[i] !== "<") fail("expected <");
    i++;
    const el: XmlElement = { name: name(), attrs: {}, children: [], text: "" };
    for (;;) {
      const before = i;
      skipSpace();
      if (text.startsWith("/>", i)) {
        i += 2;
        return el;
      }
      if (text[i] === ">") {
        i++;
        break;
      }
      if (i === before) fail("expected white space before an attribute");
      const key = name();
      if (key in el.attrs) fail(`duplicate attribute ${key}`);
      skipSpace();
      if (text[i] !== "=") fail("expected =");
      i++;
      skipSpace();
      const q = text[i];
      if (q !== '"' && q !== "'") fail("expected a quoted value");
      const end = text.indexOf(q, i + 1);
      if (end < 0) fail("unterminated attribute value");
      el.attrs[key] = decode(text.slice(i + 1, end), i);
      i = end + 1;
    }
    for (;;) {
      const lt = text.indexOf("<", i);
      if (lt < 0) fail(`<${el.name}> is never closed`);
      el.text += decode(text.slice(i, lt), i);
      i = lt;
      if (text.startsWith("</", i)) {
        i += 2;
        const close = name();
        if (close !== el.name) fail(`</${close}> closes <${el.name}>`);
        skipSpace();
        if (text[i] !== ">") fail("expected >");
        i++;
        return el;
      }
      if (text.startsWith("<!--", i)) {
        const end = text.indexOf("-->", i);
        if (end < 0) fail("unterminated comment");
        i = end + 3;
        continue;
      }
      el.children.push(element());
    }
  };
  const root = element();
  skipSpace();
  if (i !== text.length) fail("content after the root element");
  return root;
}
