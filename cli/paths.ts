/**
 * Where a path the user typed points. `deno task --config REPO/deno.json oracle ...` runs the CLI with the
 * repository as its working directory and the caller's directory in `INIT_CWD`; every command passes the paths it was
 * given (files, `--json`, `--baseline`, `--dir`, a backend `.so`, ...) through {@link userPath} before opening them,
 * so `deno task oracle cast --to bf16 in.safetensors out.safetensors` reads and writes where the user stands.
 * Paths the CLI makes itself (fixtures, the kernel cache) are never passed through it.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { userPath } from "./paths.ts";
 * const io = { stdout: () => {}, stderr: () => {}, env: (k: string) => (k === "INIT_CWD" ? "/home/me" : undefined) };
 * assert.equal(userPath(io, "x.safetensors"), "/home/me/x.safetensors");
 * assert.equal(userPath(io, "../y/x.safetensors"), "/home/y/x.safetensors");
 * assert.equal(userPath(io, "/tmp/x.safetensors"), "/tmp/x.safetensors");
 * assert.equal(userPath({ ...io, env: () => undefined }, "x.safetensors"), "x.safetensors");
 * ```
 * @module
 */
import { isAbsolute, resolve } from "node:path";
import type { CliIo } from "./command.ts";

/**
 * A path the user gave, made to resolve against the caller's directory: relative paths are joined to `INIT_CWD`
 * when it is set and is not already the working directory; absolute paths, and every path when `INIT_CWD` is unset
 * (a plain `deno run cli.ts`, where the working directory is the caller's), come back unchanged.
 * @param io the command's environment (reads `INIT_CWD`)
 * @param path the path as typed
 * @returns the path to open
 */
export function userPath(io: Pick<CliIo, "env">, path: string): string {
  const base = io.env("INIT_CWD");
  if (!base || isAbsolute(path)) return path;
  const from = resolve(base);
  return from === Deno.cwd() ? path : resolve(from, path);
}

/**
 * A `--backend` value with its library path resolved by {@link userPath}: `cpu`, `cuda`, `reference` and `cmd:...`
 * (whose command already runs in the caller's directory, `cli/host/hosted_backend.ts`) are names, not paths.
 * @param io the command's environment
 * @param backend the flag's value
 * @returns the value to open
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { userBackend } from "./paths.ts";
 * const io = { env: (k: string) => (k === "INIT_CWD" ? "/home/me" : undefined) };
 * assert.equal(userBackend(io, "cpu"), "cpu");
 * assert.equal(userBackend(io, "cmd:python3 a.py"), "cmd:python3 a.py");
 * assert.equal(userBackend(io, "build/libmine.so"), "/home/me/build/libmine.so");
 * ```
 */
export function userBackend(io: Pick<CliIo, "env">, backend: string): string {
  if (backend === "cpu" || backend === "cuda" || backend === "reference" || backend.startsWith("cmd:")) return backend;
  return userPath(io, backend);
}
