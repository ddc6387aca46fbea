/**
 * The kernel variants a GPU round times against the tree (tests/gpu/run.sh's ab step), kept as patches in
 * `bench/variants/NAME.patch` so that they outlive a checkout: the copies of kernels/ they were once kept as
 * (git-ignored, under .ab/) were lost with the checkout that made them. The command writes each named variant (every
 * patch, without names) as the working tree's kernels/ with its patch applied, into `DIR/NAME/kernels` (default DIR:
 * .ab, which git ignores and the device call carries), and prints the AB_SOURCES value that run.sh's ab step takes.
 * A patch that does not apply to the tree ends the command with status 2, naming the patch and git's reason.
 * `bench/variants/README.md` says what each variant changes and what was read from it without a GPU.
 *
 *     deno run -A bench/ab_variants.ts [NAME ...] [--into DIR]
 *     deno run -A tests/kernels/_fast_kernel_source.ts bm=128 bn=32 stages=10 --cuda-dir=.ab/densez/kernels/cuda
 *
 * @module
 */
import { benchArgs } from "./_args.ts";

const ROOT = new URL("../", import.meta.url).pathname;
/** Where the variants' patches are kept. */
export const VARIANTS_DIR = `${ROOT}bench/variants`;

/**
 * The variants kept: the names of `bench/variants/*.patch`, sorted.
 * @returns the names, without `.patch`
 * @example
 * ```ts
 * import { variantNames } from "./ab_variants.ts";
 * for (const name of variantNames()) if (!/^[a-z0-9_-]+$/.test(name)) throw new Error(name);
 * ```
 */
export function variantNames(): string[] {
  return [...Deno.readDirSync(VARIANTS_DIR)]
    .filter((e) => e.isFile && e.name.endsWith(".patch"))
    .map((e) => e.name.slice(0, -".patch".length))
    .sort();
}

/**
 * Writes one variant: `into/NAME/kernels` as the working tree's kernels/ with the patch `NAME.patch` applied
 * (`git apply`, all or nothing; an earlier copy there is replaced, a failed one removed).
 * @param patch the patch file (bench/variants/NAME.patch)
 * @param into the folder the copy goes into (absolute)
 * @returns the copy's kernels/ folder, or git's reason where the patch does not apply
 */
export async function writeVariant(patch: string, into: string): Promise<{ kernels: string } | { error: string }> {
  const name = patch.replace(/^.*\//, "").replace(/\.patch$/, "");
  const dir = `${into}/${name}`;
  await Deno.remove(dir, { recursive: true }).catch(() => {});
  await Deno.mkdir(dir, { recursive: true });
  const cp = await new Deno.Command("cp", { args: ["-r", `${ROOT}kernels`, dir], stderr: "piped" }).output();
  if (!cp.success) return { error: `cannot copy kernels/: ${new TextDecoder().decode(cp.stderr).trim()}` };
  // --directory with an absolute path (and --unsafe-paths, which allows it) patches the copy wherever it lies: run
  // from inside the work tree without it, git apply skips paths outside the current folder and still succeeds.
  const git = await new Deno.Command("git", {
    args: ["apply", "--unsafe-paths", `--directory=${dir}`, patch],
    cwd: ROOT,
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!git.success) {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
    return { error: new TextDecoder().decode(git.stderr).trim() || `git apply exited ${git.code}` };
  }
  return { kernels: `${dir}/kernels` };
}

if (import.meta.main) {
  const usage = "usage: deno run -A bench/ab_variants.ts [NAME ...] [--into DIR]  (NAME: bench/variants/NAME.patch)";
  const { values, positionals } = benchArgs(usage, {
    options: { into: { type: "string" } },
    allowPositionals: true,
  });
  const known = variantNames();
  const names = positionals.length > 0 ? positionals : known;
  for (const name of names) {
    if (!known.includes(name)) {
      console.error(`bench/variants/${name}.patch: no such variant (kept: ${known.join(", ") || "none"})`);
      Deno.exit(2);
    }
  }
  const into = values.into ?? ".ab";
  const abs = into.startsWith("/") ? into : `${Deno.cwd()}/${into}`;
  const sources: string[] = [];
  for (const name of names) {
    const r = await writeVariant(`${VARIANTS_DIR}/${name}.patch`, abs);
    if ("error" in r) {
      console.error(`bench/variants/${name}.patch: does not apply to kernels/: ${r.error}`);
      Deno.exit(2);
    }
    console.error(`${name}: ${r.kernels}`);
    sources.push(`${into.replace(/\/$/, "")}/${name}/kernels`);
  }
  console.log(`AB_SOURCES=${sources.join(":")}`);
}
