/**
 * The bench scripts' command line: `node:util` parseArgs (strict), with `--help` / `-h` printing the script's usage
 * on stdout (exit 0) and a bad flag or a missing value printing the reason and the usage on stderr (exit 2), where
 * parseArgs alone throws an uncaught TypeError with a stack trace; and their input files (`readInput`: a file that
 * cannot be read is exit 2 with its name and the reason).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { benchArgs } from "./_args.ts";
 * const { values } = benchArgs("usage: x [--reps N]", { args: ["--reps", "3"], options: { reps: { type: "string" } } });
 * assert.equal(values.reps, "3");
 * ```
 * @module
 */
import { parseArgs, type ParseArgsConfig } from "node:util";

/**
 * Parses the script's arguments (`config.args`, else `Deno.args`), or exits: 0 after printing `usage` for `--help`,
 * 2 after printing what is wrong and `usage` for a bad argument.
 * @param usage the script's usage text ("usage: deno run -A bench/x.ts ...")
 * @param config parseArgs's configuration (strict unless it says otherwise)
 * @returns parseArgs's result
 */
export function benchArgs<T extends ParseArgsConfig>(usage: string, config: T): ReturnType<typeof parseArgs<T>> {
  const args = config.args ?? Deno.args;
  if (args.includes("--help") || args.includes("-h")) {
    console.log(usage);
    Deno.exit(0);
  }
  try {
    return parseArgs({ ...config, args }) as ReturnType<typeof parseArgs<T>>;
  } catch (e) {
    console.error(`${e instanceof Error ? e.message : e}\n${usage}`);
    Deno.exit(2);
  }
}

/**
 * The bytes of a file the script was given, or exit 2 naming the file and why it cannot be read.
 * @param path the file
 * @returns its bytes
 * @example
 * ```ts
 * import { readInput } from "./_args.ts";
 * if ((await readInput(new URL(import.meta.url).pathname)).length === 0) throw new Error();
 * ```
 */
export async function readInput(path: string): Promise<Uint8Array> {
  try {
    return await Deno.readFile(path);
  } catch (e) {
    console.error(`${path}: cannot be read: ${e instanceof Error ? e.message : e}`);
    Deno.exit(2);
  }
}
