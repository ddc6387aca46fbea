/**
 * Test helper: the repository's markdown files, for the tests that read every one.
 * @module
 * @private
 */

const ROOT = new URL("../../", import.meta.url);

/**
 * The .md files under the repository root (paths relative to it, sorted), outside hidden and dependency folders.
 * @example
 * ```ts
 * import { markdownFiles } from "./_markdown.ts";
 * if (!markdownFiles().includes("README.md")) throw new Error();
 * ```
 */
export function markdownFiles(dir = ROOT, prefix = ""): string[] {
  const out: string[] = [];
  for (const e of Deno.readDirSync(dir)) {
    if (e.name.startsWith(".") || e.name === "node_modules") continue;
    const rel = prefix + e.name;
    if (e.isDirectory) out.push(...markdownFiles(new URL(`${e.name}/`, dir), `${rel}/`));
    else if (e.name.endsWith(".md")) out.push(rel);
  }
  return out.sort();
}
