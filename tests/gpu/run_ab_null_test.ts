// run.sh's ab sides: AB_SOURCES' copies of kernels/ in order, and with AB_NULL=1 the working tree's own kernels/ copied
// to $B/ab-null as one more side (timed and built as the copies are, so that its distance from A is the call's noise).
import assert from "node:assert/strict";

const root = new URL("../../", import.meta.url).pathname;

/** The lines of run.sh that set the ab step's sides (ab_dirs), from the AB_SOURCES read to the AB_NULL block's end. */
async function abSides(): Promise<string> {
  const runSh = await Deno.readTextFile(`${root}tests/gpu/run.sh`);
  const m = /\nIFS=':' read -r -a ab_dirs <<<"\$\{AB_SOURCES:-\}"\nif \[ "\$\{AB_NULL:-0\}" = 1 \]; then\n[^\n]*\nfi\n/
    .exec(
      runSh,
    );
  assert.ok(m, "run.sh lacks the ab sides' lines (ab_dirs from AB_SOURCES, then AB_NULL)");
  return m[0];
}

async function sides(env: Record<string, string>): Promise<string[]> {
  const script = `${await abSides()}printf '%s\\n' "\${ab_dirs[@]}"\n`;
  const out = await new Deno.Command("bash", { args: ["-c", script], cwd: root, env, stderr: "piped" }).output();
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
  return new TextDecoder().decode(out.stdout).split("\n").filter((l) => l !== "");
}

Deno.test("run.sh's ab sides: AB_SOURCES in order, and AB_NULL=1 adds an unmodified copy of kernels/", async () => {
  const b = await Deno.makeTempDir({ prefix: "go-ab-null-" });
  try {
    assert.deepEqual(await sides({ B: b }), [], "no sources, no null: no B side");
    assert.deepEqual(await sides({ B: b, AB_SOURCES: ".ab/x/kernels:.ab/y/kernels" }), [
      ".ab/x/kernels",
      ".ab/y/kernels",
    ]);
    assert.deepEqual(await sides({ B: b, AB_SOURCES: ".ab/x/kernels", AB_NULL: "1" }), [
      ".ab/x/kernels",
      `${b}/ab-null/kernels`,
    ]);
    const copied = await Deno.readTextFile(`${b}/ab-null/kernels/cuda/sm90_fp8_fast_kernel.cuh`);
    assert.equal(copied, await Deno.readTextFile(`${root}kernels/cuda/sm90_fp8_fast_kernel.cuh`), "the tree's own");
    assert.deepEqual(await sides({ B: b, AB_NULL: "1" }), [`${b}/ab-null/kernels`], "the null side alone");
  } finally {
    await Deno.remove(b, { recursive: true });
  }
});
