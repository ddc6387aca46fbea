/**
 * What every `oracle` subcommand is: a name, a one-line summary, a `--help` text and a `run` function that
 * returns the exit status (interfaces.md §3: 0 success, 1 outside tolerance / failure, 2 unusable input),
 * plus the argument parsing shared by all of them (`node:util` parseArgs, strict).
 *
 * A subcommand never calls `Deno.exit` and never prints with `console`: it writes through the {@link CliIo} it is
 * given, so tests run it in-process and capture the output.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseCommandArgs, UsageError } from "./command.ts";
 * const p = parseCommandArgs(["--mode", "bitwise", "a", "b"], { mode: { type: "string" } }, "compare");
 * assert.equal(p.values.mode, "bitwise");
 * assert.deepEqual(p.positionals, ["a", "b"]);
 * assert.throws(() => parseCommandArgs(["--nope"], {}, "compare"), UsageError);
 * ```
 * @module
 */
import { parseArgs, type ParseArgsConfig } from "node:util";

/** Exit statuses of every subcommand (interfaces.md §3). */
export const EXIT = Object.freeze({ ok: 0, failure: 1, unusable: 2 });

/** Where a command writes and what it may read of its environment. */
export interface CliIo {
  /** Writes to standard output (the text is written as is; add the newline). */
  stdout(text: string): void;
  /** Writes to standard error. */
  stderr(text: string): void;
  /** Reads an environment variable. */
  env(name: string): string | undefined;
}

/** One subcommand of `oracle`. */
export interface Command {
  /** The subcommand's name (`cast`, `compare`, ...). */
  readonly name: string;
  /** One line for the command list. */
  readonly summary: string;
  /** The full `--help` text, with an `Example` section of command lines that run as printed (tests/cli/help_test.ts). */
  readonly usage: string;
  /** Runs the command; resolves to the exit status. Throws {@link UsageError} (or a SafetensorsError) for status 2. */
  run(args: string[], io: CliIo): Promise<number>;
}

/** Bad command-line arguments or unusable input: exit status 2 with the message. */
export class UsageError extends Error {
  /** @param message what is wrong, naming the argument or file */
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}

/** The options object accepted by {@link parseCommandArgs}. */
export type OptionSpec = NonNullable<ParseArgsConfig["options"]>;

/**
 * Parses arguments strictly (unknown flags and missing values are {@link UsageError}s); `--help`/`-h` is always known.
 * @param args the arguments after the subcommand name
 * @param options the command's flags
 * @param command the command's name, for messages
 * @returns the parsed values and positionals
 */
export function parseCommandArgs(
  args: string[],
  options: OptionSpec,
  command: string,
): { values: Record<string, string | boolean | (string | boolean)[] | undefined>; positionals: string[] } {
  try {
    const r = parseArgs({
      args,
      options: { ...options, help: { type: "boolean", short: "h" } },
      allowPositionals: true,
      strict: true,
    });
    return { values: r.values as Record<string, string | boolean | undefined>, positionals: r.positionals };
  } catch (e) {
    // main() prefixes every message with "oracle <command>: ", so the text itself does not repeat it.
    throw new UsageError(`${(e as Error).message} (see oracle ${command} --help)`);
  }
}

/**
 * Parses a flag value as a non-negative safe integer.
 * @param flag the flag, for the message
 * @param value the text
 * @returns the integer
 */
export function parseCount(flag: string, value: string): number {
  if (!/^(0|[1-9][0-9]*)$/.test(value) || !Number.isSafeInteger(Number(value))) {
    throw new UsageError(`${flag} needs a non-negative integer, got ${JSON.stringify(value)}`);
  }
  return Number(value);
}

/**
 * Checks the number of positional arguments.
 * @param command the command's name
 * @param positionals what was given
 * @param names the expected positional names
 */
export function expectPositionals(command: string, positionals: string[], names: readonly string[]): void {
  if (positionals.length !== names.length) {
    throw new UsageError(
      (names.length === 0
        ? `${command} takes no file arguments, got ${positionals.map((p) => JSON.stringify(p)).join(" ")}`
        : `needs ${names.length} file arguments (${names.join(" ")}), got ${positionals.length}`) +
        ` (see oracle ${command} --help)`,
    );
  }
}

/**
 * The prefix of `--expected-prefix` / `--actual-prefix` as the tensor names use it: a golden fixture stores each
 * model's outputs as `<model>/<name>`, so `sm90_1d2d` and `sm90_1d2d/` both select them. A prefix that is empty, ends
 * in `/`, or starts no name followed by `/` is kept as typed.
 * @param prefix the flag's value
 * @param names the tensor names of the file it applies to
 * @returns the prefix to strip from those names
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { tensorPrefix } from "./command.ts";
 * assert.equal(tensorPrefix("sm90_1d2d", ["a", "sm90_1d2d/d"]), "sm90_1d2d/");
 * assert.equal(tensorPrefix("sm90_1d2d/", ["sm90_1d2d/d"]), "sm90_1d2d/");
 * assert.equal(tensorPrefix("gpu_", ["gpu_d"]), "gpu_");
 * ```
 */
export function tensorPrefix(prefix: string, names: Iterable<string>): string {
  if (prefix === "" || prefix.endsWith("/")) return prefix;
  for (const n of names) if (n.startsWith(`${prefix}/`)) return `${prefix}/`;
  return prefix;
}
