// run.sh's sanitize step: the cases' JIT kernels are compiled by one run of check outside the tool before any tool
// runs, so that no run under compute-sanitizer starts the JIT's nvcc (under compute-sanitizer 2025.3.1 memcheck, the
// cluster occupancy query after a compile in the same process killed the tool; docs/performance-history.md,
// twenty-first round). A stand-in check and compute-sanitizer record the order of the calls.
import assert from "node:assert/strict";
import { runRunSh, withRunDirs } from "./_run_sh.ts";

async function executable(path: string, text: string): Promise<void> {
  await Deno.writeTextFile(path, text);
  await Deno.chmod(path, 0o755);
}

Deno.test("run.sh's sanitize step runs check once outside the tool, then each tool on it", () =>
  withRunDirs("go-sanitize", async (out, b) => {
    const bin = `${b}/bin`, calls = `${b}/calls.txt`;
    await Deno.mkdir(bin);
    await executable(
      `${b}/check`,
      `#!/bin/bash\necho "check \${UNDER_TOOL:-no tool}" >> "${calls}"\necho "SUMMARY cases=1 failures=0"\n` +
        `[ -n "$UNDER_TOOL" ] || exit 3\n`,
    );
    await executable(
      `${bin}/compute-sanitizer`,
      `#!/bin/bash
tool=""
while [ $# -gt 0 ]; do
  case "$1" in
    --tool) tool=$2; shift 2 ;;
    --error-exitcode) shift 2; break ;;
    *) shift ;;
  esac
done
echo "compute-sanitizer $tool" >> "${calls}"
UNDER_TOOL=$tool "$@"
echo "========= ERROR SUMMARY: 0 errors"
`,
    );
    await runRunSh({
      OUT: out,
      BUILD_DIR: b,
      STEPS: "sanitize",
      SANITIZE_TOOLS: "memcheck synccheck",
      PATH: `${bin}:${Deno.env.get("PATH")}`,
    });
    assert.deepEqual((await Deno.readTextFile(calls)).trim().split("\n"), [
      "check no tool",
      "compute-sanitizer memcheck",
      "check memcheck",
      "compute-sanitizer synccheck",
      "check synccheck",
    ]);
    const summary = await Deno.readTextFile(`${out}/summary.txt`);
    assert.match(summary, /^sanitizer JIT warm-up: exit 3; SUMMARY cases=1 failures=0$/m, "the warm-up's own status");
    assert.match(summary, /^sanitizer memcheck: exit 0; ========= ERROR SUMMARY: 0 errors$/m);
    assert.match(summary, /^sanitizer synccheck: exit 0; ========= ERROR SUMMARY: 0 errors$/m);
  }));
