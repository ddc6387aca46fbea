// A markdown link to a file of the repository resolves from the file that holds it: docs/cli.md linked
// `docs/backend-protocol.md`, which from docs/ names docs/docs/backend-protocol.md.
import assert from "node:assert/strict";
import { markdownLines, stepPerMarkdownFile } from "./_markdown.ts";

/** The relative link targets of one markdown text (web addresses, mail and in-page anchors left out), with lines. */
function relativeLinks(text: string): { line: number; target: string }[] {
  const out: { line: number; target: string }[] = [];
  for (const { line, text: l, fenced } of markdownLines(text)) {
    if (fenced) continue;
    for (const m of l.matchAll(/\]\(([^)\s#]+)(#[^)]*)?\)/g)) {
      if (!/^[a-z]+:/i.test(m[1])) out.push({ line, target: m[1] });
    }
  }
  return out;
}

Deno.test("markdown links to the repository's files resolve", async (t) => {
  await t.step("the scanner keeps relative targets only", () => {
    assert.deepEqual(
      relativeLinks("[a](x.md) [b](https://e.org) [c](#top) [d](../y.md#s)\n```\n[e](z.md)\n```"),
      [{ line: 1, target: "x.md" }, { line: 1, target: "../y.md" }],
    );
  });
  await stepPerMarkdownFile(t, (f, url, text) => {
    const missing = relativeLinks(text).filter(({ target }) => {
      try {
        Deno.statSync(new URL(target, url));
        return false;
      } catch {
        return true;
      }
    });
    assert.deepEqual(missing, [], `${f}: links to files that do not exist from there`);
  });
});
