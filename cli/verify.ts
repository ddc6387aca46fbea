/**
 * `oracle verify` (also `deno task verify`), the main job (`interfaces.md` §4): every case of the chosen suites on
 * every backend that can run here, each against the reference model that backend declares, bit for bit. A table
 * and a one-line summary go to stdout, progress to stderr; `--json` / `--junit` write reports; `--baseline` fails
 * on any case that got worse; `--shard I/N` runs every N-th case (1-based I, like Jest and Playwright).
 * Exit status: 0 all pass, 1 any failure or regression, 2 unusable input or environment.
 *
 * With no `--backend`, the CPU backend always runs, CUDA runs where a GPU is present and is otherwise reported as
 * not available (its cases are skipped, never passed), and the pseudo-backend `reference` checks the stored
 * fixtures against the current reference.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseShard, selectShard } from "./verify.ts";
 * assert.deepEqual(parseShard("2/3"), [2, 3]);
 * assert.deepEqual(selectShard(["a", "b", "c", "d"], [2, 3]), ["b"]);
 * ```
 * @module
 */
import denoConfig from "../deno.json" with { type: "json" };
import { type Backend, gpuPresent, openBackend } from "../ffi/backend.ts";
import { BackendNotAvailableError } from "../ffi/errors.ts";
import { MODEL_CODES } from "../ffi/models.ts";
import { type CliIo, type Command, EXIT, expectPositionals, parseCommandArgs, UsageError } from "./command.ts";
import { runOp, runOpNames } from "./run_ops.ts";
import { findRegressions, parseBaseline } from "./verify/baseline.ts";
import { type CaseResult, formatSummary, formatTable, type Report, summarize, toJUnit } from "./verify/report.ts";
import { baseResult, runCase, type VerifyBackend } from "./verify/runner.ts";
import { collectCases, runOnDevices } from "./verify/devices.ts";

const USAGE =
  `Usage: oracle verify [--backend cpu|cuda|reference|PATH.so]... [--ops GLOB] [--suite fixtures|edge|deepseek-v3|all]
                     [--model NAME] [--sample FRACTION] [--seed N] [--shard I/N] [--json FILE] [--junit FILE]
                     [--baseline FILE] [--workers N]

Runs every case of the suites on every backend against the reference model the backend declares (bit for bit).

  --backend B      cpu (built on demand), cuda (where a GPU is present), reference (stored fixtures vs the current
                   reference), or the path of any library implementing kernels/gemm_oracle.h. Repeatable.
                   Default: reference, cpu and cuda (cuda reported as not available where there is no GPU).
  --ops GLOB       only ops whose DeepGEMM name matches (e.g. 'fp8_gemm_*', 'm_grouped_*')
  --suite S        fixtures | edge | deepseek-v3 | all (default: fixtures and edge)
  --model NAME     check every backend against this model instead of the one it declares
  --sample F       fraction of output tiles checked for the DeepSeek-V3 shapes (default 0.02)
  --seed N         added to every generated case's seed (default 0: the recorded inputs)
  --shard I/N      run the I-th of N interleaved shards (1-based)
  --json FILE      write the JSON report (interfaces.md §4)
  --junit FILE     write JUnit XML
  --baseline FILE  fail when a case got worse than in this earlier JSON report
  --workers N      reference Workers (default: all cores)

Exit status: 0 all pass, 1 any failure or regression, 2 unusable input or environment.
`;

/** Parses `I/N` (1 ≤ I ≤ N). */
export function parseShard(text: string): [number, number] {
  const m = /^([1-9][0-9]*)\/([1-9][0-9]*)$/.exec(text);
  if (!m || Number(m[1]) > Number(m[2])) {
    throw new UsageError(`--shard needs I/N with 1 ≤ I ≤ N, got ${JSON.stringify(text)}`);
  }
  return [Number(m[1]), Number(m[2])];
}

/** The I-th of N interleaved shards of a list (stable: sorted by position). */
export function selectShard<T>(items: readonly T[], shard: [number, number]): T[] {
  const [i, n] = shard;
  return items.filter((_, k) => k % n === i - 1);
}

/** A glob with `*` and `?` as a RegExp over the whole name. */
export function globToRegExp(glob: string): RegExp {
  const esc = glob.replace(/[.+^${}()|[\]\\]/g, "\\$&").replace(/\*/g, ".*").replace(/\?/g, ".");
  return new RegExp(`^(?:${esc})$`);
}

interface Opened {
  handles: VerifyBackend[];
  /** GPU count per backend name (backends with more than one device run in one Worker per device). */
  devices: Map<string, number>;
  report: Report["backends"];
  close(): void;
}

async function openBackends(names: string[], explicit: boolean, io: CliIo): Promise<Opened> {
  const handles: VerifyBackend[] = [], report: Report["backends"] = [], loaded: Backend[] = [];
  const devices = new Map<string, number>();
  for (const name of names) {
    if (name === "reference") {
      handles.push({ name, backend: null, modelFor: () => undefined });
      report.push({ name, status: "available", model: "stored fixture outputs vs the current reference" });
      continue;
    }
    if (name === "cuda" && !gpuPresent()) {
      const message = "CUDA not available: no NVIDIA GPU or driver (/dev/nvidiactl absent)";
      if (explicit) throw new BackendUnavailable(message);
      report.push({ name, status: "unavailable", message });
      io.stderr(`verify: ${message}; the cuda backend is skipped, not passed\n`);
      continue;
    }
    try {
      io.stderr(`verify: loading backend ${name} (building it if needed)\n`);
      const b = await openBackend(name);
      loaded.push(b);
      const models = (b.info as unknown as { models?: Record<string, string> }).models ?? {};
      handles.push({ name, backend: b, modelFor: (f) => models[f] });
      const count = new Int32Array(1);
      if (b.library.symbols.go_device_count(count) === 0 && count[0] > 1) devices.set(name, count[0]);
      report.push({ name, status: "available", info: b.info });
    } catch (e) {
      if (e instanceof BackendNotAvailableError && !explicit) {
        report.push({ name, status: "unavailable", message: e.message });
        io.stderr(`verify: ${e.message}; the ${name} backend is skipped, not passed\n`);
        continue;
      }
      throw new BackendUnavailable(`backend ${name}: ${(e as Error).message}`);
    }
  }
  return { handles, report, devices, close: () => loaded.forEach((b) => b.close()) };
}

class BackendUnavailable extends Error {}

/**
 * Every model name `--model` accepts: the reference models of every op (`reference/registry.ts`) and the ABI's
 * model names (`ffi/models.ts`, e.g. `sm90_mqa`, `tf32`), sorted. An unknown name is exit 2 before any case runs,
 * not one error row per case.
 */
export function knownModels(): string[] {
  const names = new Set<string>(Object.keys(MODEL_CODES).filter((m) => m !== "default"));
  for (const op of runOpNames()) for (const m of runOp(op)?.models ?? []) names.add(m);
  return [...names].sort();
}

async function verify(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseCommandArgs(args, {
    backend: { type: "string", multiple: true },
    ops: { type: "string" },
    suite: { type: "string" },
    model: { type: "string" },
    sample: { type: "string" },
    seed: { type: "string" },
    shard: { type: "string" },
    json: { type: "string" },
    junit: { type: "string" },
    baseline: { type: "string" },
    workers: { type: "string" },
  }, "verify");
  if (values.help) {
    io.stdout(USAGE);
    return EXIT.ok;
  }
  expectPositionals("verify", positionals, []);
  if (values.model !== undefined && !knownModels().includes(values.model as string)) {
    throw new UsageError(
      `--model ${JSON.stringify(values.model)} is not a known model; known: ${knownModels().join(", ")}`,
    );
  }
  const suite = (values.suite as string | undefined) ?? "default";
  if (!["default", "fixtures", "edge", "deepseek-v3", "all"].includes(suite)) {
    throw new UsageError(`--suite must be fixtures, edge, deepseek-v3 or all, got ${JSON.stringify(suite)}`);
  }
  const sample = values.sample === undefined ? 0.02 : Number(values.sample);
  if (!(sample > 0 && sample <= 1)) throw new UsageError(`--sample needs a fraction in (0, 1], got ${values.sample}`);
  const seed = values.seed === undefined ? 0 : Number(values.seed);
  if (!Number.isSafeInteger(seed) || seed < 0) {
    throw new UsageError(`--seed needs a non-negative integer, got ${values.seed}`);
  }
  const workers = values.workers === undefined ? undefined : Number(values.workers);
  if (workers !== undefined && !(Number.isSafeInteger(workers) && workers >= 1)) {
    throw new UsageError(`--workers needs a positive integer, got ${values.workers}`);
  }
  const shard = values.shard === undefined ? null : parseShard(values.shard as string);
  const baseline = values.baseline === undefined ? null : parseBaseline(
    await Deno.readTextFile(values.baseline as string).catch((e) => {
      throw new UsageError(`cannot read baseline "${values.baseline}": ${e.message}`);
    }),
    values.baseline as string,
  );

  const explicit = values.backend !== undefined;
  const names = explicit ? (values.backend as string[]) : ["reference", "cpu", "cuda"];

  let cases = await collectCases(suite, sample, seed);
  if (values.ops !== undefined) {
    const re = globToRegExp(values.ops as string);
    cases = cases.filter((c) => re.test(c.op));
  }
  if (shard) cases = selectShard(cases, shard);
  if (cases.length === 0) throw new UsageError("no case matches the chosen suite, --ops and --shard");

  let opened: Opened;
  try {
    opened = await openBackends(names, explicit, io);
  } catch (e) {
    if (e instanceof BackendUnavailable) {
      io.stderr(`verify: ${e.message}\n`);
      return EXIT.unusable;
    }
    throw e;
  }
  const results: CaseResult[] = [];
  try {
    const model = values.model as string | undefined;
    const local = opened.handles.filter((h) => !opened.devices.has(h.name));
    const perCase = new Map<string, CaseResult[]>();
    // Backends with several GPUs: one Worker per device, in parallel with the local backends below.
    const spread = Promise.all([...opened.devices].map(([name, n]) => {
      io.stderr(`verify: spreading ${cases.length} cases over ${n} ${name} devices\n`);
      return runOnDevices({ backend: name, suite, sample, seed, model }, cases, n, (l) => io.stderr(`verify: ${l}\n`));
    }));
    for (const [i, c] of cases.entries()) {
      io.stderr(`verify: [${i + 1}/${cases.length}] ${c.id}\n`);
      perCase.set(c.id, await runCase(c, local, { model, workers }));
    }
    for (const rows of await spread) for (const r of rows) perCase.get(r.id)?.push(r);
    for (const c of cases) results.push(...perCase.get(c.id)!);
    // The unavailable backends: one skipped row per case, so the summary counts them as skipped, never passed.
    for (const b of opened.report.filter((r) => r.status === "unavailable")) {
      for (const c of cases) results.push({ ...baseResult(c, b.name, "-", "-"), message: b.message });
    }
  } finally {
    opened.close();
  }

  const report: Report = {
    oracle: denoConfig.version,
    backends: opened.report,
    cases: results,
    summary: summarize(results),
  };
  io.stdout(formatTable(results.filter((r) => !(r.status === "skip" && r.shape === "-"))) + "\n");
  if (values.json !== undefined) {
    await Deno.writeTextFile(values.json as string, JSON.stringify(report, null, 2) + "\n");
  }
  if (values.junit !== undefined) await Deno.writeTextFile(values.junit as string, toJUnit(report));
  let status: number = report.summary.fail + report.summary.error > 0 ? EXIT.failure : EXIT.ok;
  if (baseline) {
    const regressions = findRegressions(results, baseline.cases);
    for (const r of regressions) io.stdout(`REGRESSION ${r.backend} ${r.id} [${r.model}]: ${r.reason}\n`);
    if (regressions.length) status = EXIT.failure;
  }
  io.stdout(formatSummary(report) + "\n");
  return status;
}

/** The `verify` subcommand. */
export const verifyCommand: Command = Object.freeze({
  name: "verify",
  summary: "run every case on every backend against the reference, bit for bit (the main job)",
  usage: USAGE,
  run: verify,
});
