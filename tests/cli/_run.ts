/**
 * Test helpers: run `oracle` in-process and capture its output; temporary directories.
 * @module
 * @private
 */
import { main } from "../../cli.ts";

/** What one run produced. */
export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `oracle args...` in-process. */
export async function runCli(args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  let stdout = "", stderr = "";
  const code = await main(args, {
    stdout: (s) => (stdout += s),
    stderr: (s) => (stderr += s),
    env: (k) => env[k],
  });
  return { code, stdout, stderr };
}

const CLI = new URL("../../cli.ts", import.meta.url).pathname;

/**
 * Runs `oracle args...` as its own Deno process (`deno run -A cli.ts`), stdin closed, in `cwd` (default: this
 * process's) with `env` added to the environment: for what only a process shows (exit codes of a real exit, INIT_CWD,
 * hosts it starts).
 */
export async function runCliProcess(
  args: string[],
  opts: { cwd?: string; env?: Record<string, string> } = {},
): Promise<CliResult> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", CLI, ...args],
    cwd: opts.cwd,
    env: opts.env,
    stdin: "null",
  }).output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

/** Runs `fn` with a fresh temporary directory, removed afterwards. */
export async function withTempDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "oracle_cli_test_" });
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}
