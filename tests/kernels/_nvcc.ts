/**
 * Whether `nvcc` runs here: the CUDA tests that compile (CI has nvcc 13.0 and no GPU) are ignored without it.
 * @module
 */

/**
 * True when `nvcc --version` succeeds.
 * @returns whether nvcc is on PATH and runs
 * @example
 * ```ts
 * import { hasNvcc } from "./_nvcc.ts";
 * if (typeof (await hasNvcc()) !== "boolean") throw new Error();
 * ```
 */
export async function hasNvcc(): Promise<boolean> {
  try {
    return (await new Deno.Command("nvcc", { args: ["--version"], stdout: "null", stderr: "null" }).output()).success;
  } catch {
    return false;
  }
}

/**
 * Runs nvcc with `args` and returns whether it succeeded and everything it printed (stderr, then stdout).
 * @param args nvcc's arguments
 * @returns `{ ok, log }`
 * @example
 * ```ts
 * import { hasNvcc, runNvcc } from "./_nvcc.ts";
 * if (await hasNvcc()) {
 *   const r = await runNvcc(["--version"]);
 *   if (!r.ok || !r.log.includes("nvcc")) throw new Error(r.log);
 * }
 * ```
 */
export async function runNvcc(args: string[]): Promise<{ ok: boolean; log: string }> {
  const out = await new Deno.Command("nvcc", { args, stdout: "piped", stderr: "piped" }).output();
  const text = new TextDecoder();
  return { ok: out.success, log: text.decode(out.stderr) + text.decode(out.stdout) };
}

/**
 * Registers a test that compiles with nvcc: ignored (with nvcc's absence as the reason) where nvcc does not run, and
 * given a scratch directory that is removed afterwards, whatever the test does.
 * @param name the test's name
 * @param prefix the scratch directory's name prefix
 * @param fn the test body, with its context and the directory
 * @example
 * ```ts
 * import { nvccTest } from "./_nvcc.ts";
 * // In a test module (not inside another test):
 * //   await nvccTest("nvcc prints its version", "go-nvcc-", async (_t, dir) => { ... });
 * if (nvccTest.length !== 3) throw new Error();
 * ```
 */
export async function nvccTest(
  name: string,
  prefix: string,
  fn: (t: Deno.TestContext, dir: string) => Promise<void>,
): Promise<void> {
  Deno.test({
    name,
    ignore: !(await hasNvcc()),
    async fn(t) {
      const dir = await Deno.makeTempDir({ prefix });
      try {
        await fn(t, dir);
      } finally {
        await Deno.remove(dir, { recursive: true });
      }
    },
  });
}
