/**
 * `oracle`: the command line of gemm-oracle (`deno task oracle <subcommand>`, interfaces.md §3).
 *
 * Subcommands come from the {@link COMMANDS} table, one file each under `cli/`. Exit statuses: 0 success,
 * 1 a result outside tolerance (or a failed check), 2 unusable input or bad arguments, always with a message.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { main } from "./cli.ts";
 * let out = "";
 * const io = { stdout: (s: string) => (out += s), stderr: () => {}, env: () => undefined };
 * assert.equal(await main(["--help"], io), 0);
 * assert.match(out, /compare/);
 * assert.equal(await main(["no-such-command"], io), 2);
 * ```
 * @module
 */
import { castCommand } from "./cli/cast.ts";
import { type CliIo, type Command, EXIT, UsageError } from "./cli/command.ts";
import { compareCommand } from "./cli/compare.ts";
import { fixturesCommand } from "./cli/fixtures.ts";
import { identifyCommand } from "./cli/identify.ts";
import { quantizeCommand } from "./cli/quantize.ts";
import { runCommand } from "./cli/run.ts";
import { serveCommand } from "./cli/serve.ts";
import { verifyCommand } from "./cli/verify.ts";
import { SafetensorsError } from "./io/mod.ts";
import denoConfig from "./deno.json" with { type: "json" };

export type { CliIo, Command } from "./cli/command.ts";

/** The subcommands, by name. */
export const COMMANDS: Readonly<Record<string, Command>> = Object.freeze({
  cast: castCommand,
  compare: compareCommand,
  quantize: quantizeCommand,
  run: runCommand,
  serve: serveCommand,
  fixtures: fixturesCommand,
  verify: verifyCommand,
  identify: identifyCommand,
});

function overview(): string {
  const width = Math.max(...Object.keys(COMMANDS).map((k) => k.length));
  return [
    "Usage: oracle <subcommand> [options]   (deno task oracle <subcommand> --help for details; --version)",
    "",
    "Subcommands:",
    ...Object.values(COMMANDS).map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    "",
    "Exit status: 0 success, 1 outside tolerance or check failed, 2 unusable input or bad arguments.",
    "",
    "Example: what fp8_gemm_nt reads and writes, and an example that runs it on a golden case:",
    "  deno task oracle run fp8_gemm_nt --help",
  ].join("\n") + "\n";
}

const encoder = new TextEncoder();

function writeAll(file: { writeSync(p: Uint8Array): number }, text: string): void {
  let bytes = encoder.encode(text);
  while (bytes.length > 0) bytes = bytes.subarray(file.writeSync(bytes));
}

/** Standard output, standard error and the process environment. */
export const processIo: CliIo = {
  stdout: (text) => writeAll(Deno.stdout, text),
  stderr: (text) => writeAll(Deno.stderr, text),
  env: (name) => Deno.env.get(name),
};

/**
 * Runs `oracle` with `args` and resolves to the exit status; errors become messages on stderr, never exceptions.
 * @param args the command line after `oracle`
 * @param io where output goes (default: the process's)
 * @returns 0, 1 or 2
 */
export async function main(args: string[], io: CliIo = processIo): Promise<number> {
  const [name, ...rest] = args;
  if (name === undefined || name === "--help" || name === "-h" || name === "help") {
    io.stdout(overview());
    return name === undefined ? EXIT.unusable : EXIT.ok;
  }
  if (name === "--version" || name === "-V") {
    io.stdout(`oracle ${denoConfig.version} (gemm-oracle; Deno ${Deno.version.deno})\n`);
    return EXIT.ok;
  }
  if (!Object.hasOwn(COMMANDS, name)) {
    io.stderr(`oracle: unknown subcommand ${JSON.stringify(name)}\n${overview()}`);
    return EXIT.unusable;
  }
  try {
    return await COMMANDS[name].run(rest, io);
  } catch (e) {
    if (e instanceof UsageError || e instanceof SafetensorsError) {
      io.stderr(`oracle ${name}: ${e.message}\n`);
    } else if (
      e instanceof Deno.errors.NotFound || e instanceof Deno.errors.PermissionDenied ||
      e instanceof Deno.errors.IsADirectory
    ) {
      io.stderr(`oracle ${name}: cannot access a file: ${(e as Error).message}\n`);
    } else if (e instanceof TypeError || e instanceof RangeError) {
      // The reference validates its inputs and throws these for wrong shapes, dtypes or values.
      io.stderr(`oracle ${name}: unusable input: ${e.message}\n`);
    } else {
      io.stderr(`oracle ${name}: internal error: ${(e as Error)?.stack ?? e}\n`);
    }
    return EXIT.unusable;
  }
}

if (import.meta.main) {
  Deno.exit(await main(Deno.args));
}
