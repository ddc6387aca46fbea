/**
 * `verify --json` / `--junit` written as the run goes: the files are rewritten after every case (to a temporary file,
 * then renamed over the old one), so a `verify` that is killed, or whose machine goes away, leaves valid reports of
 * every case it finished, marked `"complete": false`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ReportFiles } from "./report_files.ts";
 * const dir = Deno.makeTempDirSync();
 * const files = new ReportFiles({ json: `${dir}/r.json` }, "0.1.0", []);
 * await files.update([], false);
 * assert.equal(JSON.parse(Deno.readTextFileSync(`${dir}/r.json`)).complete, false);
 * Deno.removeSync(dir, { recursive: true });
 * ```
 * @module
 */
import { type CaseResult, type Report, summarize, toJUnit } from "./report.ts";

/** The baseline gate's parts of a report. */
export type Gate = Pick<Report, "regressions" | "notExecuted">;

/** The report's paths (either may be absent). */
export interface ReportPaths {
  json?: string;
  junit?: string;
}

/** Writes the reports atomically, one write at a time. */
export class ReportFiles {
  readonly #paths: ReportPaths;
  readonly #oracle: string;
  readonly #backends: Report["backends"];
  #queue: Promise<void> = Promise.resolve();

  /**
   * @param paths where to write
   * @param oracle the oracle's version
   * @param backends the backends' report entries
   */
  constructor(paths: ReportPaths, oracle: string, backends: Report["backends"]) {
    this.#paths = paths;
    this.#oracle = oracle;
    this.#backends = backends;
  }

  /** The report of these results. */
  report(cases: readonly CaseResult[], complete: boolean, gate: Gate = {}): Report {
    return {
      oracle: this.#oracle,
      backends: this.#backends,
      cases: [...cases],
      summary: summarize(cases),
      complete,
      ...gate,
    };
  }

  /**
   * Rewrites both files with the results so far.
   * @param cases the results so far
   * @param complete whether the run has finished
   * @param gate the baseline's verdict, once known
   */
  update(cases: readonly CaseResult[], complete: boolean, gate: Gate = {}): Promise<void> {
    const report = this.report(cases, complete, gate);
    this.#queue = this.#queue.then(async () => {
      if (this.#paths.json) await atomicWrite(this.#paths.json, JSON.stringify(report, null, 2) + "\n");
      if (this.#paths.junit) await atomicWrite(this.#paths.junit, toJUnit(report));
    });
    return this.#queue;
  }
}

async function atomicWrite(path: string, text: string): Promise<void> {
  const tmp = `${path}.partial`;
  await Deno.writeTextFile(tmp, text);
  await Deno.rename(tmp, path);
}
