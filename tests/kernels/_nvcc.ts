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
