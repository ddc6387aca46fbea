// Every `deno task NAME` that the markdown files show as code (a code span or a fenced block) names a task of
// deno.json: docs/deno-notes.md told readers to regenerate the fixtures with a `test:update` task that never existed.
import assert from "node:assert/strict";
import { markdownLines, stepPerMarkdownFile } from "./_markdown.ts";

const ROOT = new URL("../../", import.meta.url);

/** The task names that a markdown text's code (spans and fenced blocks) runs with `deno task`, with their lines. */
function taskNames(text: string): { line: number; task: string }[] {
  const out: { line: number; task: string }[] = [];
  for (const { line, text: l, fenced } of markdownLines(text)) {
    const code = fenced ? [l] : [...l.matchAll(/`([^`]+)`/g)].map((m) => m[1]);
    for (const c of code) {
      for (const m of c.matchAll(/deno(?:@[\d.]+)? task ([a-z][a-z0-9:_-]*[a-z0-9])/g)) out.push({ line, task: m[1] });
    }
  }
  return out;
}

Deno.test("the markdown files' deno task commands name tasks of deno.json", async (t) => {
  const tasks = new Set(Object.keys(JSON.parse(Deno.readTextFileSync(new URL("deno.json", ROOT))).tasks));
  await t.step("the scanner reads code spans and fenced blocks, not prose", () => {
    assert.deepEqual(
      taskNames("run `deno task test` (deno task runs here)\n```sh\nnpx -y deno@2.9.6 task verify --json r.json\n```"),
      [{ line: 1, task: "test" }, { line: 3, task: "verify" }],
    );
  });
  await stepPerMarkdownFile(t, (f, _url, text) => {
    const unknown = taskNames(text).filter(({ task }) => !tasks.has(task));
    assert.deepEqual(unknown, [], `${f}: deno task commands that deno.json does not define`);
  });
});
