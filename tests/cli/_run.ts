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

/** Runs `fn` with a fresh temporary directory, removed afterwards. */
export async function withTempDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "oracle_cli_test_" });
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}
