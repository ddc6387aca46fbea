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
