/**
 * The error every safetensors fault raises: it names the file and what is wrong with it.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { SafetensorsError } from "./safetensors_error.ts";
 * const e = new SafetensorsError("x.safetensors", "header length 9 is beyond the end of the file");
 * assert.equal(e.message, "x.safetensors: header length 9 is beyond the end of the file");
 * assert.equal(e.fault, "header length 9 is beyond the end of the file");
 * ```
 * @module
 */

/** A malformed, hostile or unsupported safetensors file (or a tensor that cannot be written as one). */
export class SafetensorsError extends Error {
  /** The file (or the name given to an in-memory buffer). */
  readonly file: string;
  /** What is wrong, without the file name. */
  readonly fault: string;

  /**
   * An error whose message is `file: fault`.
   * @param file the file or buffer name
   * @param fault what is wrong
   */
  constructor(file: string, fault: string) {
    super(`${file}: ${fault}`);
    this.name = "SafetensorsError";
    this.file = file;
    this.fault = fault;
  }
}
