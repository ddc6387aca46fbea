/**
 * Name lookup shared by the data tables of this folder (`format_table.ts`, `profiles.ts`).
 * @module
 */

/**
 * Looks `name` up among the own keys of `table`; `kind` names the table in error messages.
 * @throws {TypeError} when `name` is not a string
 * @throws {RangeError} for an unknown name; the message lists `names`
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { lookUp } from "./_look_up.ts";
 * const table = { a: 1, b: 2 };
 * assert.equal(lookUp(table, ["a", "b"], "letter", "b"), 2);
 * assert.throws(() => lookUp(table, ["a", "b"], "letter", "toString"), /valid letters are a, b/);
 * ```
 */
export function lookUp<K extends string, V>(
  table: Readonly<Record<K, V>>,
  names: readonly K[],
  kind: string,
  name: string,
): V {
  if (typeof name !== "string") throw new TypeError(`Cannot look up ${kind}: expected a string, got ${typeof name}`);
  if (!Object.hasOwn(table, name)) {
    throw new RangeError(`Cannot look up ${kind} "${name}": valid ${kind}s are ${names.join(", ")}`);
  }
  return table[name as K];
}
