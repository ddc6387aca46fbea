/**
 * `oracle verify` (also `deno task verify`), the main job (`interfaces.md` §4): every case of the chosen suites on
 * every backend that can run here, each against the reference model that backend declares, bit for bit. A table
 * and a one-line summary go to stdout, progress to stderr; `--json` / `--junit` write reports; `--baseline` fails
 * on any case that got worse; `--shard I/N` runs every N-th case (1-based I, like Jest and Playwright).
 * Exit status: 0 all pass, 1 any failure, error or regression, 2 unusable input or environment.
 *
 * Every backend but the pseudo-backend `reference` runs out of process, in a backend host (`cli/host/`,
 * `docs/backend-protocol.md`): a segfault, abort, CUDA fault or a case past `--case-timeout` is an ERROR row naming
 * the signal or the timeout, the host is restarted, and the run goes on. The reports are rewritten after every case.
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
import { gpuPresent, openBackend } from "../ffi/backend.ts";
import { BackendNotAvailableError } from "../ffi/errors.ts";
import { MODEL_CODES } from "../ffi/models.ts";
import { type CliIo, type Command, EXIT, expectPositionals, parseCommandArgs, UsageError } from "./command.ts";
import { userBackend, userPath } from "./paths.ts";
import { referenceOp as runOp, referenceOpNames as runOpNames } from "../reference/registry.ts";
import { findRegressions, notExecuted, parseBaseline } from "./verify/baseline.ts";
import { hostCommand, HostedBackend, removeScratchDirs } from "./host/hosted_backend.ts";
import { HostStartError, killAllHosts } from "./host/process.ts";
import { hostedExecutor, inProcessExecutor } from "./verify/executors.ts";
import { type CaseResult, formatSummary, formatTable, type Report, summarize } from "./verify/report.ts";
import { diagnosisLines } from "./verify/diagnose.ts";
import { renderHtml } from "./verify/html_report.ts";
import { type Gate, ReportFiles } from "./verify/report_files.ts";
import { baseResult, runCase, type VerifyBackend, type VerifyCase } from "./verify/runner.ts";
import { collectCases, dealRoundRobin, runOnDevices } from "./verify/devices.ts";

const USAGE = `Usage: oracle verify [--backend cpu|cuda|reference|PATH.so|cmd:COMMAND]... [--ops GLOB]
                     [--suite fixtures|edge|deepseek-v3|deepseek-v3-full|all] [--model NAME] [--sample FRACTION]
                     [--seed N]
                     [--shard I/N] [--json FILE] [--junit FILE] [--baseline FILE] [--workers N]
                     [--case-timeout SECONDS] [--host-start-timeout SECONDS] [--in-process]
                     [--allow-subset] [--time-factor F] [--time-slack-ms MS] [--repeat N]
                     [--html FILE] [--no-identify]

Runs every case of the suites on every backend against the reference model the backend declares (bit for bit).
Every backend but the reference runs in a child process (a backend host, docs/backend-protocol.md): a crash or a
hang of the kernel is an ERROR row for that case, the host is restarted and the run goes on.

  --backend B      cpu (built on demand), cuda (where a GPU is present), reference (stored fixtures vs the current
                   reference), the path of any library implementing kernels/gemm_oracle.h, or cmd:COMMAND, a
                   program in any language that speaks the backend protocol (python: gemm_oracle.serve).
                   Repeatable. Default: reference, cpu and cuda (cuda reported as not available without a GPU).
  --ops GLOB       only ops whose DeepGEMM name matches (e.g. 'fp8_gemm_*', 'm_grouped_*')
  --suite S        fixtures | edge | deepseek-v3 | deepseek-v3-full | all (default: fixtures and edge; all: fixtures,
                   edge and deepseek-v3). deepseek-v3 is the DeepSeek-V3 shape table at reduced M; deepseek-v3-full
                   is the same table at its real M (the 45 shapes of tests/gpu/bench.cpp, up to 32768 rows, ≈ 10 GB
                   of operands in all, built one case at a time)
  --model NAME     check every backend against this model instead of the one it declares
  --sample F       fraction of 128×128 output tiles checked for the DeepSeek-V3 shapes (default 0.02; every M
                   block, N block and group is touched whatever F; 1: every element). The sampled FP8 GEMM
                   references (dense, m-grouped contiguous, masked under sm90_1d2d) run on the native CPU backend
                   on all cores (set GEMM_ORACLE_NATIVE_REFERENCE=0 for the TypeScript engine; same bits)
  --seed N         added to every generated case's seed (default 0: the recorded inputs)
  --shard I/N      run the I-th of N interleaved shards (1-based)
  --json FILE      write the JSON report (rewritten after every case; "complete": true once finished)
  --junit FILE     write JUnit XML (rewritten after every case)
  --baseline FILE  fail when a case got worse than in this earlier JSON report: pass → fail, error, skip or
                   missing; more mismatches; larger max ULP or calc_diff. Regressions go into the JSON report
                   ("regressions", both sides) and JUnit (a failing testcase each). Baseline cases this run did not
                   execute fail the gate too, unless --allow-subset
  --allow-subset   with --baseline: baseline cases filtered out by --ops, --shard or --suite are listed, not failed
  --time-factor F  with --baseline: also fail a case more than F× slower than in the baseline (and --time-slack-ms
                   slower); off by default, since one shared runner's times vary by more than 2×
  --time-slack-ms MS
                   the timing gate's absolute slack (default 250)
  --repeat N       time each backend call N times and report the median (default 1)
  --html FILE      write the report as one self-contained HTML page: summary, every row, and for each failing
                   case its mismatch heat map (128×128 tiles) and the identify result
  --no-identify    do not search the model space for a failing case's output (identify runs by default on every
                   failing case that is not sampled; the tile map of where it differs is always given)
  --workers N      reference Workers (default: all cores)
  --case-timeout S seconds one case may take on a backend before its host is killed (default 300)
  --host-start-timeout S
                   seconds a backend host may take to start and say hello (default 120)
  --in-process     load C ABI libraries into this process instead (no protection from their crashes or hangs)

Examples: the CPU backend on the FP8 GEMMs' fixtures with a JSON report; a Python adapter (README.md) on everything:
  deno task verify --backend cpu --ops 'fp8_gemm_*' --suite fixtures --json report.json
  deno task verify --backend 'cmd:python3 my_adapter.py' --ops fp8_gemm_nt --suite all --json report.json

Exit status: 0 all pass, 1 any failure, error, crash, timeout or regression, or no check executed at all (every case
skipped), 2 unusable input or environment.
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

/** The backends of a run, opened. */
interface Opened {
  /** Backends that run every case in one lane. */
  handles: VerifyBackend[];
  /** Backends on several GPUs: one handle per device, each taking every n-th case. */
  spread: { name: string; devices: VerifyBackend[] }[];
  /** C ABI libraries loaded in process on several GPUs (`--in-process`): name → device count (one Worker each). */
  workerDevices: Map<string, number>;
  report: Report["backends"];
  close(): Promise<void>;
}

/** How backends are opened. */
interface OpenOptions {
  explicit: boolean;
  inProcess: boolean;
  caseTimeoutMs: number;
  startTimeoutMs: number;
}

async function openBackends(names: string[], options: OpenOptions, io: CliIo): Promise<Opened> {
  const opened: Opened = {
    handles: [],
    spread: [],
    workerDevices: new Map(),
    report: [],
    close: async () => {
      for (const c of closers.reverse()) await c();
    },
  };
  const closers: (() => void | Promise<void>)[] = [];
  const unavailable = (name: string, message: string) => {
    if (options.explicit) throw new BackendUnavailable(`backend ${name}: ${message}`);
    opened.report.push({ name, status: "unavailable", message });
    io.stderr(`verify: ${message}; the ${name} backend is skipped, not passed\n`);
  };
  const log = (line: string) => io.stderr(`verify: ${line}\n`);
  try {
    for (const name of names) {
      // A library path resolves against the caller's directory; reports keep the name as typed.
      const spec = userBackend(io, name);
      if (name === "reference") {
        opened.handles.push({ name, exec: null });
        opened.report.push({ name, status: "available", model: "stored fixture outputs vs the current reference" });
        continue;
      }
      if (name === "cuda" && !gpuPresent()) {
        unavailable(name, "CUDA not available: no NVIDIA GPU or driver (/dev/nvidiactl absent)");
        continue;
      }
      if (options.inProcess) {
        if (name.startsWith("cmd:")) throw new UsageError(`--in-process loads C ABI libraries only, not ${name}`);
        try {
          io.stderr(`verify: loading backend ${name} in process (building it if needed)\n`);
          const b = await openBackend(spec);
          closers.push(() => b.close());
          const count = new Int32Array(1);
          if (b.library.symbols.go_device_count(count) === 0 && count[0] > 1) opened.workerDevices.set(name, count[0]);
          else opened.handles.push({ name, exec: inProcessExecutor(b) });
          opened.report.push({ name, status: "available", info: b.info });
        } catch (e) {
          if (e instanceof BackendNotAvailableError) unavailable(name, e.message);
          else throw new BackendUnavailable(`backend ${name}: ${(e as Error).message}`);
        }
        continue;
      }
      io.stderr(`verify: starting the backend host of ${name}\n`);
      const hostOptions = { caseTimeoutMs: options.caseTimeoutMs, startTimeoutMs: options.startTimeoutMs, log };
      let first: HostedBackend;
      try {
        first = await HostedBackend.open(hostCommand(spec), hostOptions);
      } catch (e) {
        if (e instanceof HostStartError) throw new BackendUnavailable(`backend ${name}: ${e.message}`);
        throw e;
      }
      closers.push(() => first.close());
      if (first.hello.unavailable) {
        unavailable(name, first.hello.unavailable);
        continue;
      }
      const info = { ...first.hello.info, host: first.hello.name, ops: first.hello.ops };
      opened.report.push({ name, status: "available", info });
      const devices = Number(first.hello.info?.devices ?? 1);
      if (!(Number.isSafeInteger(devices) && devices > 1)) {
        opened.handles.push({ name, exec: hostedExecutor(first) });
        continue;
      }
      // One host per GPU, each pinned to its device; the first host runs on device 0.
      io.stderr(`verify: ${name} sees ${devices} devices: one backend host per device\n`);
      const hosts = [first];
      for (let d = 1; d < devices; d++) {
        const h = await HostedBackend.open(hostCommand(spec, d), hostOptions).catch((e) => {
          throw new BackendUnavailable(`backend ${name} on device ${d}: ${(e as Error).message}`);
        });
        closers.push(() => h.close());
        hosts.push(h);
      }
      opened.spread.push({ name, devices: hosts.map((h) => ({ name, exec: hostedExecutor(h) })) });
    }
  } catch (e) {
    await opened.close();
    throw e;
  }
  return opened;
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

/** A positive number of seconds from a flag, in milliseconds. */
function seconds(flag: string, value: unknown, dflt: number): number {
  if (value === undefined) return dflt * 1000;
  const v = Number(value);
  if (!(Number.isFinite(v) && v > 0)) {
    throw new UsageError(`--${flag} needs a positive number of seconds, got ${value}`);
  }
  return v * 1000;
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
    "case-timeout": { type: "string" },
    "host-start-timeout": { type: "string" },
    "in-process": { type: "boolean" },
    "allow-subset": { type: "boolean" },
    "time-factor": { type: "string" },
    "time-slack-ms": { type: "string" },
    repeat: { type: "string" },
    html: { type: "string" },
    "no-identify": { type: "boolean" },
  }, "verify");
  if (values.help) {
    io.stdout(USAGE);
    return EXIT.ok;
  }
  expectPositionals("verify", positionals, []);
  // The files the user named resolve against the caller's directory (INIT_CWD under deno task, cli/paths.ts).
  for (const flag of ["json", "junit", "baseline", "html"]) {
    if (typeof values[flag] === "string") values[flag] = userPath(io, values[flag] as string);
  }
  if (values.model !== undefined && !knownModels().includes(values.model as string)) {
    throw new UsageError(
      `--model ${JSON.stringify(values.model)} is not a known model; known: ${knownModels().join(", ")}`,
    );
  }
  const suite = (values.suite as string | undefined) ?? "default";
  if (!["default", "fixtures", "edge", "deepseek-v3", "deepseek-v3-full", "all"].includes(suite)) {
    throw new UsageError(
      `--suite must be fixtures, edge, deepseek-v3, deepseek-v3-full or all, got ${JSON.stringify(suite)}`,
    );
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
  const caseTimeoutMs = seconds("case-timeout", values["case-timeout"], 300);
  const startTimeoutMs = seconds("host-start-timeout", values["host-start-timeout"], 120);
  const shard = values.shard === undefined ? null : parseShard(values.shard as string);
  const timeFactor = values["time-factor"] === undefined ? undefined : Number(values["time-factor"]);
  if (timeFactor !== undefined && !(Number.isFinite(timeFactor) && timeFactor >= 1)) {
    throw new UsageError(`--time-factor needs a number ≥ 1, got ${values["time-factor"]}`);
  }
  const timeSlackMs = values["time-slack-ms"] === undefined ? 250 : Number(values["time-slack-ms"]);
  if (!(Number.isFinite(timeSlackMs) && timeSlackMs >= 0)) {
    throw new UsageError(`--time-slack-ms needs a non-negative number, got ${values["time-slack-ms"]}`);
  }
  const repeat = values.repeat === undefined ? 1 : Number(values.repeat);
  if (!(Number.isSafeInteger(repeat) && repeat >= 1)) {
    throw new UsageError(`--repeat needs a positive integer, got ${values.repeat}`);
  }
  if (values.baseline === undefined) {
    for (const f of ["allow-subset", "time-factor", "time-slack-ms"]) {
      if (values[f] !== undefined) throw new UsageError(`--${f} applies only with --baseline`);
    }
  }
  let baseline: Report | null = null;
  if (values.baseline !== undefined) {
    const text = await Deno.readTextFile(values.baseline as string).catch((e) => {
      throw new UsageError(`cannot read baseline "${values.baseline}": ${e.message}`);
    });
    try {
      baseline = parseBaseline(text, values.baseline as string);
    } catch (e) {
      throw new UsageError((e as Error).message);
    }
  }
  if (baseline && values.model !== undefined && !baseline.cases.some((c) => c.model === values.model)) {
    throw new UsageError(
      `--model ${values.model} matches no case of baseline "${values.baseline}": it would gate nothing`,
    );
  }

  const explicit = values.backend !== undefined;
  const names = explicit ? (values.backend as string[]) : ["reference", "cpu", "cuda"];
  for (const n of names) {
    if (n.startsWith("cmd:") && !n.slice(4).trim()) throw new UsageError(`--backend ${n}: "cmd:" needs a command`);
  }

  let cases = await collectCases(suite, sample, seed);
  if (values.ops !== undefined) {
    const re = globToRegExp(values.ops as string);
    cases = cases.filter((c) => re.test(c.op));
  }
  if (shard) cases = selectShard(cases, shard);
  if (cases.length === 0) throw new UsageError("no case matches the chosen suite, --ops and --shard");

  let opened: Opened;
  try {
    opened = await openBackends(names, {
      explicit,
      inProcess: values["in-process"] === true,
      caseTimeoutMs,
      startTimeoutMs,
    }, io);
  } catch (e) {
    if (e instanceof BackendUnavailable) {
      io.stderr(`verify: ${e.message}\n`);
      return EXIT.unusable;
    }
    throw e;
  }
  const files = new ReportFiles(
    { json: values.json as string | undefined, junit: values.junit as string | undefined },
    denoConfig.version,
    opened.report,
  );
  const results: CaseResult[] = [];
  const model = values.model as string | undefined;
  // Interrupted (Ctrl-C, a CI job's SIGTERM): end every host and its children, which would otherwise outlive us and
  // hold their GPUs; the reports on disk already hold every finished case ("complete": false).
  const interrupted = (signal: "SIGINT" | "SIGTERM") => () => {
    const n = killAllHosts();
    removeScratchDirs();
    io.stderr(`verify: ${signal}: ${n} backend host(s) killed; the reports hold the ${results.length} finished rows\n`);
    Deno.exit(signal === "SIGINT" ? 130 : 143);
  };
  const listeners = (["SIGINT", "SIGTERM"] as const).map((sig) => [sig, interrupted(sig)] as const);
  for (const [sig, f] of listeners) Deno.addSignalListener(sig, f);
  try {
    await files.update(results, false);
    const record = async (rows: CaseResult[]) => {
      results.push(...rows);
      await files.update(results, false);
    };
    // Lanes run side by side: the single-device backends over every case, and each device of a backend on several
    // GPUs over every n-th case.
    const lane = async (label: string, backends: VerifyBackend[], laneCases: readonly VerifyCase[]) => {
      for (const [i, c] of laneCases.entries()) {
        io.stderr(`verify: ${label}[${i + 1}/${laneCases.length}] ${c.id}\n`);
        await record(await runCase(c, backends, { model, workers, repeat, identify: !values["no-identify"] }));
      }
    };
    const lanes: Promise<void>[] = [];
    if (opened.handles.length) lanes.push(lane("", opened.handles, cases));
    for (const { name, devices } of opened.spread) {
      const hands = dealRoundRobin(cases, devices.length);
      devices.forEach((d, i) => lanes.push(lane(`${name}:${i} `, [d], hands[i])));
    }
    for (const [name, n] of opened.workerDevices) {
      io.stderr(`verify: spreading ${cases.length} cases over ${n} ${name} devices (in process)\n`);
      lanes.push(
        runOnDevices(
          { backend: userBackend(io, name), suite, sample, seed, model },
          cases,
          n,
          (l) => io.stderr(`verify: ${l}\n`),
        )
          .then(record),
      );
    }
    await Promise.all(lanes);
    // The unavailable backends: one skipped row per case, so the summary counts them as skipped, never passed.
    for (const b of opened.report.filter((r) => r.status === "unavailable")) {
      for (const c of cases) results.push({ ...baseResult(c, b.name, "-", "-"), message: b.message });
    }
  } finally {
    for (const [sig, f] of listeners) Deno.removeSignalListener(sig, f);
    await opened.close();
  }
  // Case order, then the order the backends were named in.
  const caseIndex = new Map(cases.map((c, i) => [c.id, i]));
  const backendIndex = new Map(names.map((n, i) => [n, i]));
  results.sort((x, y) =>
    (caseIndex.get(x.id)! - caseIndex.get(y.id)!) || (backendIndex.get(x.backend)! - backendIndex.get(y.backend)!)
  );
  let status: number = EXIT.ok;
  const gate: Gate = {};
  const summaryNow = summarize(results);
  if (summaryNow.fail + summaryNow.error > 0) status = EXIT.failure;
  const notes: string[] = [];
  if (summaryNow.pass + summaryNow.fail + summaryNow.error === 0) {
    notes.push("verify: no check was executed (every case was skipped): nothing was verified");
    status = EXIT.failure;
  }
  if (baseline) {
    const executed = new Set(cases.map((c) => c.id));
    const regressions = findRegressions(results, baseline.cases, { executed, timeFactor, timeSlackMs });
    const missing = notExecuted(baseline.cases, executed);
    gate.regressions = regressions;
    gate.notExecuted = missing.map(({ id, backend, model }) => ({ id, backend, model }));
    for (const r of regressions) notes.push(`REGRESSION ${r.backend} ${r.id} [${r.model}]: ${r.reason}`);
    if (regressions.length) status = EXIT.failure;
    if (missing.length) {
      const ids = new Set(missing.map((m) => m.id));
      notes.push(
        `baseline: ${ids.size} of its cases (${missing.length} rows) were not executed by this run (--ops, --shard, --suite)${
          values["allow-subset"]
            ? "; allowed by --allow-subset"
            : "; the gate fails (pass --allow-subset to gate a subset)"
        }`,
      );
      if (!values["allow-subset"]) status = EXIT.failure;
    }
  }
  await files.update(results, true, gate);
  const report = files.report(results, true, gate);
  if (typeof values.html === "string") await Deno.writeTextFile(values.html, renderHtml(report));
  io.stdout(formatTable(results.filter((r) => !(r.status === "skip" && r.shape === "-")), diagnosisLines) + "\n");
  for (const n of notes) io.stdout(n + "\n");
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
