// The repository's markdown tables keep their text. A `|` inside a cell must be written `\|`: unescaped, it splits the
// cell, and `deno fmt` then cuts the row back to its header's width, dropping the rest of the text. Two tables lost
// their cells that way (docs/numerics.md's rounding modes, `|A|`, and docs/backends.md's GO_CUDA_FAST_CFG row,
// `bm=64|128|256`); what such a cut leaves is a code span that never closes, which this test looks for, with rows
// wider or narrower than their header.
import assert from "node:assert/strict";
import { markdownFiles, markdownLines, stepPerMarkdownFile } from "./_markdown.ts";

/** A table row's cells, split at unescaped pipes. */
function cells(row: string): string[] {
  return row.trim().replace(/^\|/, "").replace(/\|$/, "").split(/(?<!\\)\|/);
}

/** What is wrong with the tables of one markdown text, as "line: reason" strings. */
function tableFaults(text: string): string[] {
  const faults: string[] = [];
  let width = 0, previous = 0;
  for (const { line, text: l, fenced } of markdownLines(text)) {
    const t = l.trim();
    // A table ends at any other line, a fence line (left out of markdownLines) included.
    if (fenced || !t.startsWith("|") || line !== previous + 1) width = 0;
    previous = line;
    if (fenced || !t.startsWith("|")) continue;
    const row = cells(t);
    if (width === 0) width = row.length;
    else if (row.length !== width) faults.push(`${line}: ${row.length} cells, the header has ${width}`);
    row.forEach((c, j) => {
      if ((c.match(/`/g) ?? []).length % 2) faults.push(`${line}: cell ${j + 1} opens a code span it does not close`);
    });
  }
  return faults;
}

Deno.test("markdown tables: a row as wide as its header, every code span closed", async (t) => {
  await t.step("the checker finds a cut cell and an unescaped pipe", () => {
    assert.deepEqual(tableFaults("| a | b |\n|---|---|\n| `x\\|y` | z |"), []);
    assert.deepEqual(tableFaults("| a | b |\n|---|---|\n| `floor( | A |"), [
      "3: cell 1 opens a code span it does not close",
    ]);
    assert.deepEqual(tableFaults("| a | b |\n|---|---|\n| `x|y` | z |"), [
      "3: 3 cells, the header has 2",
      "3: cell 1 opens a code span it does not close",
      "3: cell 2 opens a code span it does not close",
    ]);
    assert.deepEqual(tableFaults("```\n| a |\n| b | c |\n```"), [], "fenced code is not a table");
  });
  const files = markdownFiles();
  assert.ok(files.includes("docs/numerics.md") && files.includes("README.md"), files.join(", "));
  await stepPerMarkdownFile(t, (f, _url, text) => assert.deepEqual(tableFaults(text), [], f));
});
