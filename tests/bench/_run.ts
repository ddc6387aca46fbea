/**
 * Test helper: runs one of bench/'s scripts as its own Deno process (`deno run -A bench/<script> args...`), for the
 * exit codes and messages its command line gives.
 * @module
 * @private
 */

/** What one run produced, its output decoded. */
export interface BenchRun {
  code: number;
  stdout: string;
  stderr: string;
}

const BENCH = new URL("../../bench/", import.meta.url).pathname;

/**
 * Runs `bench/<script>` with `args`.
 * @example
 * ```ts
 * import { runBench } from "./_run.ts";
 * const r = await runBench("sass_banks.ts");
 * if (r.code !== 2 || !r.stderr.includes("usage")) throw new Error(r.stderr);
 * ```
 */
export async function runBench(script: string, ...args: string[]): Promise<BenchRun> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", `${BENCH}${script}`, ...args],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder();
  return { code: out.code, stdout: text.decode(out.stdout), stderr: text.decode(out.stderr) };
}
