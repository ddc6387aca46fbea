// Runs tests/gpu/run.sh from the repository root with `env` over this process's environment, for the tests of its
// steps that need no GPU; fails the test when the script exits non-zero, showing its stderr.
import assert from "node:assert/strict";

const root = new URL("../../", import.meta.url).pathname;

/** run.sh under bash with `env`; asserts exit 0. */
export async function runRunSh(env: Record<string, string>): Promise<void> {
  const out = await new Deno.Command("bash", {
    args: ["tests/gpu/run.sh"],
    cwd: root,
    env,
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
}

/** Runs `body` with two new directories, for run.sh's OUT and BUILD_DIR, and removes both after it. */
export async function withRunDirs<T>(prefix: string, body: (out: string, b: string) => Promise<T>): Promise<T> {
  const out = await Deno.makeTempDir({ prefix: `${prefix}-out-` });
  const b = await Deno.makeTempDir({ prefix: `${prefix}-b-` });
  try {
    return await body(out, b);
  } finally {
    for (const d of [out, b]) await Deno.remove(d, { recursive: true });
  }
}

/**
 * run.sh's ab step alone, one run a side and no check, against one B side whose library is an empty stand-in where
 * the build step puts it ($BUILD_DIR/ab/1); `env` adds to those settings or overrides them.
 */
export async function runAbStep(out: string, b: string, env: Record<string, string>): Promise<void> {
  await Deno.mkdir(`${b}/ab/1`, { recursive: true });
  await Deno.writeTextFile(`${b}/ab/1/libgo_cuda.so`, "");
  await runRunSh({
    OUT: out,
    BUILD_DIR: b,
    STEPS: "ab",
    AB_SOURCES: ".ab/x/kernels",
    AB_RUNS: "1",
    AB_CHECK: "0",
    ...env,
  });
}
