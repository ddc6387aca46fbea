/**
 * `oracle fixtures [--check | --update] [--dir DIR]`: recomputes every golden fixture from the reference and
 * compares it byte for byte with the stored files (`--check`, the default), or rewrites the files that differ
 * (`--update`, refused when the environment variable `CI` is set: CI never writes fixtures).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { fixturesCommand } from "./fixtures.ts";
 * assert.equal(fixturesCommand.name, "fixtures");
 * ```
 * @module
 */
import { syncFixtures } from "./fixtures/sync.ts";
import { userPath } from "./paths.ts";
import { type CliIo, type Command, EXIT, expectPositionals, parseCommandArgs, UsageError } from "./command.ts";

const USAGE = `Usage: oracle fixtures [--check | --update] [--dir DIR]

Recomputes every golden fixture (fixtures/<op>/<id>.safetensors and fixtures/index.json) from the reference.
  --check    compare byte for byte with the stored files (default); exit 1 when anything differs
  --update   rewrite what differs and delete obsolete files, then list the changes (refused when CI is set)
  --dir DIR  the fixtures folder (default: the repository's fixtures/)

Example: check that the reference still produces every stored fixture, byte for byte:
  deno task fixtures --check

Exit status: 0 up to date (or updated), 1 differences found by --check, 2 bad arguments or --update under CI.`;

async function run(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseCommandArgs(args, {
    check: { type: "boolean" },
    update: { type: "boolean" },
    dir: { type: "string" },
  }, "fixtures");
  if (values.help) {
    io.stdout(USAGE + "\n");
    return EXIT.ok;
  }
  expectPositionals("fixtures", positionals, []);
  if (values.check && values.update) throw new UsageError("--check and --update exclude each other");
  const update = values.update === true;
  const ci = io.env("CI");
  if (update && ci !== undefined && ci !== "" && ci !== "0" && ci.toLowerCase() !== "false") {
    throw new UsageError(
      `--update refused: the environment variable CI is set (${
        JSON.stringify(ci)
      }); fixtures are never rewritten in CI`,
    );
  }
  // A folder the user named resolves against the caller's directory (INIT_CWD under deno task, cli/paths.ts).
  const dir = values.dir === undefined ? undefined : userPath(io, values.dir as string);
  const diff = await syncFixtures({ dir, update });
  const verb = update ? ["written", "rewritten", "deleted"] : ["missing", "differs", "obsolete"];
  const lines: string[] = [];
  for (const f of diff.added) lines.push(`${verb[0]}: ${f}`);
  for (const f of diff.changed) lines.push(`${verb[1]}: ${f}: ${diff.details[f]}`);
  for (const f of diff.removed) lines.push(`${verb[2]}: ${f}`);
  if (diff.indexChanged) lines.push(`${update ? "rewritten" : "differs"}: index.json`);
  const changes = diff.added.length + diff.changed.length + diff.removed.length + (diff.indexChanged ? 1 : 0);
  lines.push(
    `${diff.unchanged.length} fixtures unchanged, ${changes} ${update ? "changes written" : "differences"}` +
      (update || changes === 0 ? "" : " (run `deno task fixtures --update` and review the diff)"),
  );
  io.stdout(lines.join("\n") + "\n");
  return !update && changes > 0 ? EXIT.failure : EXIT.ok;
}

/** The `fixtures` subcommand. */
export const fixturesCommand: Command = Object.freeze({
  name: "fixtures",
  summary: "recompute the golden fixtures and compare byte for byte (--check) or rewrite them (--update)",
  usage: USAGE,
  run,
});
