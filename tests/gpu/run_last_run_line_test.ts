// run.sh's verdict of a run appended to a shared log (check.log, ab/check.log, sanitizer.log): the last matching line
// after the log's last "==== " header, so that a run killed before its summary shows none, not the run before it
// (a sanitizer tool that crashed would have shown the previous tool's "0 errors").
import assert from "node:assert/strict";

const root = new URL("../../", import.meta.url).pathname;

/** last_run_line's definition, as run.sh has it. */
async function definition(): Promise<string> {
  const m = /\nlast_run_line\(\) \{\n[\s\S]*?\n\}\n/.exec(await Deno.readTextFile(`${root}tests/gpu/run.sh`));
  assert.ok(m, "run.sh lacks last_run_line");
  return m[0];
}

async function lastRunLine(log: string, ...args: string[]): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "go-last-run-" });
  try {
    await Deno.writeTextFile(`${dir}/x.log`, log);
    const script = `${await definition()}last_run_line "$@"\n`;
    const out = await new Deno.Command("bash", { args: ["-c", script, "bash", `${dir}/x.log`, ...args] }).output();
    assert.equal(out.code, 0);
    return new TextDecoder().decode(out.stdout).replace(/\n$/, "");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("run.sh's last_run_line reads the verdict of the run appended last, never an earlier run's", async () => {
  const sanitizer =
    "==== memcheck ====\n========= ERROR SUMMARY: 0 errors\n==== synccheck ====\n========= COMPUTE-SANITIZER\n";
  assert.equal(await lastRunLine(sanitizer, "ERROR SUMMARY|RACECHECK SUMMARY"), "", "synccheck crashed: no verdict");
  assert.equal(
    await lastRunLine(sanitizer + "========= ERROR SUMMARY: 1 error\n", "ERROR SUMMARY|RACECHECK SUMMARY"),
    "========= ERROR SUMMARY: 1 error",
  );
  const check = "==== check: default (heuristic) ====\nSUMMARY cases=88 failures=0\n==== check: bm=64 (x) ====\n" +
    "fp8_gemm nt 1d2d M128 N512 K1024 bf16\n";
  assert.equal(await lastRunLine(check, "SUMMARY", "none"), "none", "the fallback where the last run has none");
  assert.equal(await lastRunLine(check.split("==== check: bm")[0], "SUMMARY"), "SUMMARY cases=88 failures=0");
});
