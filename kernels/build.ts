/**
 * Builds the native kernel libraries on demand into a cache keyed by the sha256 of the sources, the compiler's
 * version and the flags: `.cache/kernels/<name>-<hash>/libgemm_oracle_<name>.so` (repo-local, git-ignored).
 * A cached library is reused; a failed compile throws a {@link BuildError} carrying the compiler's message.
 *
 * Run as a script (`deno task build`): builds the CPU backend always and the CUDA backend where `nvcc` exists;
 * `--cpu` / `--cuda` restrict it, `--force` rebuilds.
 *
 * @example
 * ```ts ignore
 * import { buildBackend } from "./build.ts";
 * const { path, cached } = await buildBackend("cpu");
 * ```
 * @module
 */

/** Which backend to build. */
export type BackendName = "cpu" | "cuda";

/** Options of {@link buildBackend}. */
export interface BuildOptions {
  /** Rebuild even when the cache holds the library. */
  force?: boolean;
  /** Cache root (default: `<repo>/.cache/kernels`). */
  cacheDir?: string;
  /** Source directory (default: `kernels/cpu` or `kernels/cuda`); used by tests to build broken sources. */
  sourceDir?: string;
  /** Compiler executable (default `g++` for cpu, `nvcc` for cuda). */
  compiler?: string;
}

/** Result of {@link buildBackend}. */
export interface BuildResult {
  /** Absolute path of the shared library. */
  path: string;
  /** True when the library came from the cache. */
  cached: boolean;
  /** Milliseconds spent (hashing, and compiling when not cached). */
  ms: number;
}

/** A compile failed; `stderr` is the compiler's message. */
export class BuildError extends Error {
  /** The compiler's standard error. */
  readonly stderr: string;
  /**
   * A failed build.
   * @param message what failed
   * @param stderr the compiler output
   */
  constructor(message: string, stderr = "") {
    super(stderr ? `${message}\n${stderr}` : message);
    this.name = "BuildError";
    this.stderr = stderr;
  }
}

/** The compiler is not installed (e.g. "nvcc not found"). */
export class CompilerNotFoundError extends BuildError {
  /**
   * A missing compiler.
   * @param compiler the missing executable
   */
  constructor(compiler: string) {
    super(`${compiler} not found: install it or put it on PATH`);
    this.name = "CompilerNotFoundError";
  }
}

const KERNELS_DIR = new URL(".", import.meta.url);
const REPO_DIR = new URL("..", import.meta.url);

/** Compiler flags per backend (part of the cache key). `-ffp-contract=off`: no silent FMA contraction. */
export const BUILD_FLAGS: Readonly<Record<BackendName, readonly string[]>> = {
  cpu: ["-std=c++17", "-O2", "-fPIC", "-shared", "-pthread", "-ffp-contract=off"],
  cuda: ["-std=c++17", "-O3", "-gencode=arch=compute_90a,code=sm_90a", "-Xcompiler", "-fPIC", "-shared"],
};

const SOURCE_EXT: Readonly<Record<BackendName, { compile: readonly string[]; headers: readonly string[] }>> = {
  cpu: { compile: [".cpp"], headers: [".hpp", ".h"] },
  cuda: { compile: [".cu"], headers: [".cuh", ".hpp", ".h"] },
};

async function listSources(dir: string, name: BackendName): Promise<{ compile: string[]; all: string[] }> {
  const compile: string[] = [], all: string[] = [];
  async function walk(d: string): Promise<void> {
    for await (const e of Deno.readDir(d)) {
      const p = `${d}/${e.name}`;
      if (e.isDirectory) await walk(p);
      else if (SOURCE_EXT[name].compile.some((x) => e.name.endsWith(x))) {
        compile.push(p);
        all.push(p);
      } else if (SOURCE_EXT[name].headers.some((x) => e.name.endsWith(x))) all.push(p);
    }
  }
  try {
    await walk(dir);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) throw new BuildError(`no ${name} sources: directory ${dir} does not exist`);
    throw e;
  }
  compile.sort();
  all.sort();
  return { compile, all };
}

async function compilerVersion(compiler: string): Promise<string> {
  try {
    const out = await new Deno.Command(compiler, { args: ["--version"], stdout: "piped", stderr: "piped" }).output();
    return new TextDecoder().decode(out.stdout).trim();
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) throw new CompilerNotFoundError(compiler);
    throw e;
  }
}

async function sha256Hex(parts: Uint8Array[]): Promise<string> {
  let n = 0;
  for (const p of parts) n += p.length;
  const all = new Uint8Array(n);
  let o = 0;
  for (const p of parts) {
    all.set(p, o);
    o += p.length;
  }
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", all));
  return Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
}

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.stat(path);
    return true;
  } catch {
    return false;
  }
}

/**
 * Builds (or finds in the cache) the shared library of a backend.
 * @param name `"cpu"` (g++) or `"cuda"` (nvcc)
 * @param opts cache/compiler overrides
 * @returns the library path, whether it was cached, and the time spent
 * @throws {CompilerNotFoundError} when the compiler is missing
 * @throws {BuildError} when the compile fails (message includes the compiler's stderr)
 */
export async function buildBackend(name: BackendName, opts: BuildOptions = {}): Promise<BuildResult> {
  const t0 = performance.now();
  if (name !== "cpu" && name !== "cuda") throw new TypeError(`Unknown backend "${name}": expected "cpu" or "cuda"`);
  const compiler = opts.compiler ?? (name === "cpu" ? "g++" : "nvcc");
  const sourceDir = opts.sourceDir ?? new URL(name, KERNELS_DIR).pathname;
  const header = new URL("gemm_oracle.h", KERNELS_DIR).pathname;
  const version = await compilerVersion(compiler); // first: "nvcc not found" is the answer whatever the sources
  const { compile, all } = await listSources(sourceDir, name);
  if (compile.length === 0) {
    throw new BuildError(`no ${name} sources (${SOURCE_EXT[name].compile.join(", ")}) in ${sourceDir}`);
  }
  // The CUDA backend compiles specialised kernels at run time from these sources (kernels/cuda/jit.h).
  const defines = name === "cuda" ? [`-DGO_CUDA_SOURCE_DIR="${sourceDir}"`] : [];
  const enc = new TextEncoder();
  const parts: Uint8Array[] = [
    enc.encode(`${compiler}\0${version}\0${[...BUILD_FLAGS[name], ...defines].join(" ")}\0`),
  ];
  for (const f of [header, ...all]) {
    parts.push(enc.encode(`${f.slice(sourceDir.length)}\0`), await Deno.readFile(f), enc.encode("\0"));
  }
  const hash = (await sha256Hex(parts)).slice(0, 24);
  const cacheDir = opts.cacheDir ?? new URL(".cache/kernels", REPO_DIR).pathname;
  const outDir = `${cacheDir}/${name}-${hash}`;
  const lib = `${outDir}/libgemm_oracle_${name}.so`;
  if (!opts.force && await exists(lib)) return { path: lib, cached: true, ms: performance.now() - t0 };
  await Deno.mkdir(outDir, { recursive: true });
  // Compile to a private name, then rename: parallel test processes may build the same library at once.
  const tmp = `${outDir}/.tmp-${Deno.pid}-${crypto.randomUUID()}.so`;
  const args = [...BUILD_FLAGS[name], ...defines, "-I", new URL(".", KERNELS_DIR).pathname, "-o", tmp, ...compile];
  let out: Deno.CommandOutput;
  try {
    out = await new Deno.Command(compiler, { args, stdout: "piped", stderr: "piped" }).output();
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) throw new CompilerNotFoundError(compiler);
    throw e;
  }
  if (!out.success) {
    await Deno.remove(tmp).catch(() => {});
    const stderr = new TextDecoder().decode(out.stderr) + new TextDecoder().decode(out.stdout);
    throw new BuildError(`${compiler} failed to build the ${name} backend (exit ${out.code})`, stderr.trim());
  }
  await Deno.rename(tmp, lib);
  return { path: lib, cached: false, ms: performance.now() - t0 };
}

async function main(args: string[]): Promise<number> {
  const known = new Set(["--cpu", "--cuda", "--force", "--help"]);
  for (const a of args) {
    if (!known.has(a)) {
      console.error(`build.ts: unknown argument "${a}" (expected --cpu, --cuda, --force)`);
      return 2;
    }
  }
  if (args.includes("--help")) {
    console.log("deno task build [--cpu] [--cuda] [--force]: build the native kernel libraries into .cache/kernels");
    return 0;
  }
  const force = args.includes("--force");
  const only = args.filter((a) => a === "--cpu" || a === "--cuda").map((a) => a.slice(2) as BackendName);
  const names: BackendName[] = only.length ? only : ["cpu", "cuda"];
  let status = 0;
  for (const name of names) {
    try {
      const r = await buildBackend(name, { force });
      console.error(`${name}: ${r.cached ? "cached" : "built"} ${r.path} (${r.ms.toFixed(0)} ms)`);
    } catch (e) {
      if (e instanceof CompilerNotFoundError && name === "cuda" && only.length === 0) {
        console.error(`cuda: skipped (${e.message})`);
        continue;
      }
      console.error(`${name}: ${e instanceof Error ? e.message : String(e)}`);
      status = 1;
    }
  }
  return status;
}

if (import.meta.main) Deno.exit(await main(Deno.args));
