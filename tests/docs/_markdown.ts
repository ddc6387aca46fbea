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

/**
 * One test step per markdown file of the repository: `check` gets the file's path (relative to the root), its URL
 * and its text.
 * @example
 * ```ts
 * import { stepPerMarkdownFile } from "./_markdown.ts";
 * Deno.test("every markdown file has text", (t) =>
 *   stepPerMarkdownFile(t, (path, _url, text) => {
 *     if (text.length === 0) throw new Error(path);
 *   }));
 * ```
 */
export async function stepPerMarkdownFile(
  t: Deno.TestContext,
  check: (path: string, url: URL, text: string) => void,
): Promise<void> {
  for (const f of markdownFiles()) {
    const url = new URL(f, ROOT);
    await t.step(f, () => check(f, url, Deno.readTextFileSync(url)));
  }
}

/** One line of a markdown text: its number (from 1), its text, and whether it lies inside a fenced code block. */
export interface MarkdownLine {
  line: number;
  text: string;
  fenced: boolean;
}

/**
 * The lines of a markdown text, each marked inside or outside a fenced code block; the fence lines themselves are
 * left out.
 * @example
 * ```ts
 * import { markdownLines } from "./_markdown.ts";
 * const fence = "`".repeat(3);
 * const l = markdownLines(`a\n${fence}\nb\n${fence}\nc`);
 * if (l.map((x) => `${x.line}${x.fenced ? "f" : ""}`).join(" ") !== "1 3f 5") throw new Error();
 * ```
 */
export function markdownLines(text: string): MarkdownLine[] {
  const out: MarkdownLine[] = [];
  let fenced = false;
  text.split("\n").forEach((t, i) => {
    if (t.trimStart().startsWith("```")) fenced = !fenced;
    else out.push({ line: i + 1, text: t, fenced });
  });
  return out;
}
