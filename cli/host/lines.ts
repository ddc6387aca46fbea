/**
 * The protocols' framing (`docs/backend-protocol.md`): one JSON object per `\n`-terminated line. Every reader of a
 * host's or a server's stream (the oracle reading a backend host, the C ABI host and `oracle serve` reading requests)
 * splits lines here.
 * @module
 */

/**
 * Splits a byte stream into lines (`\n`-terminated; a last line without `\n` counts; `\r\n` is accepted).
 * @param stream the bytes
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { readLines } from "./lines.ts";
 * const bytes = new TextEncoder().encode('{"a":1}\r\n\n{"b":2}');
 * const lines: string[] = [];
 * for await (const line of readLines(ReadableStream.from([bytes]))) lines.push(line);
 * assert.deepEqual(lines, ['{"a":1}', "", '{"b":2}']);
 * ```
 */
export async function* readLines(stream: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  let pending = "";
  for await (const text of stream.pipeThrough(new TextDecoderStream())) {
    pending += text;
    let nl: number;
    while ((nl = pending.indexOf("\n")) >= 0) {
      yield pending.slice(0, nl).replace(/\r$/, "");
      pending = pending.slice(nl + 1);
    }
  }
  if (pending.length > 0) yield pending.replace(/\r$/, "");
}
