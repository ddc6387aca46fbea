/**
 * One backend host process (`docs/backend-protocol.md`): started in a session of its own (so a hung host is killed
 * with every process it started), read line by line, and watched, so that a crash, a hang or a malformed line
 * becomes a described outcome and never an exception or a stall in the oracle.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { describeExit } from "./process.ts";
 * assert.equal(describeExit({ success: false, code: 139, signal: "SIGSEGV" }), "killed by SIGSEGV (signal 11)");
 * assert.equal(describeExit({ success: false, code: 134, signal: null }), "exited with status 134 (SIGABRT, signal 6)");
 * assert.equal(describeExit({ success: false, code: 3, signal: null }), "exited with status 3");
 * ```
 * @module
 */
import { readLines } from "./lines.ts";
import { type Answer, type Hello, parseAnswer, parseHello, ProtocolError, type RunRequest } from "./protocol.ts";

/** How to start a host. */
export interface HostCommand {
  /** The backend's name in reports (`cpu`, `cmd:python3 my_adapter.py`, ...). */
  readonly name: string;
  /** argv, program first. */
  readonly argv: readonly string[];
  /** Working directory (default: the oracle's). */
  readonly cwd?: string;
  /** Extra environment variables. */
  readonly env?: Readonly<Record<string, string>>;
}

/** What one request came to. */
export type CallOutcome =
  | { readonly kind: "answer"; readonly answer: Answer }
  | { readonly kind: "crash" | "timeout" | "protocol"; readonly message: string };

/** A host that did not start: no valid hello before the start timeout, or it exited first. */
export class HostStartError extends Error {
  override name = "HostStartError";
}

/** Signal numbers of the signals a crashing kernel raises (Linux x86-64 and arm64). */
const SIGNALS: Readonly<Record<string, number>> = {
  SIGHUP: 1,
  SIGINT: 2,
  SIGQUIT: 3,
  SIGILL: 4,
  SIGTRAP: 5,
  SIGABRT: 6,
  SIGBUS: 7,
  SIGFPE: 8,
  SIGKILL: 9,
  SIGSEGV: 11,
  SIGPIPE: 13,
  SIGALRM: 14,
  SIGTERM: 15,
  SIGXCPU: 24,
};
const SIGNAL_NAMES = Object.fromEntries(Object.entries(SIGNALS).map(([k, v]) => [v, k]));

/**
 * A process's end in words. A shell (`cmd:` backends run under `/bin/sh -c`) reports a child killed by signal N as
 * status 128 + N, which is named too.
 */
export function describeExit(status: Deno.CommandStatus): string {
  if (status.signal) return `killed by ${status.signal} (signal ${SIGNALS[status.signal] ?? status.code - 128})`;
  const sig = status.code > 128 ? SIGNAL_NAMES[status.code - 128] : undefined;
  return sig
    ? `exited with status ${status.code} (${sig}, signal ${status.code - 128})`
    : `exited with status ${status.code}`;
}

/** Lines of a byte stream ({@link readLines}), delivered one at a time to whoever asks; `null` at the end. */
class LineReader {
  #lines: string[] = [];
  #waiters: ((line: string | null) => void)[] = [];
  #ended = false;

  constructor(stream: ReadableStream<Uint8Array>) {
    (async () => {
      try {
        for await (const line of readLines(stream)) {
          const w = this.#waiters.shift();
          if (w) w(line);
          else this.#lines.push(line);
        }
      } catch { /* the process went away mid-read */ }
      this.#ended = true;
      for (const w of this.#waiters.splice(0)) w(null);
    })();
  }

  next(): Promise<string | null> {
    if (this.#lines.length) return Promise.resolve(this.#lines.shift()!);
    if (this.#ended) return Promise.resolve(null);
    return new Promise((resolve) => this.#waiters.push(resolve));
  }
}

const STDERR_TAIL = 4096;
const HAS_SETSID = (() => {
  for (const p of ["/usr/bin/setsid", "/bin/setsid"]) {
    try {
      if (Deno.statSync(p).isFile) return p;
    } catch { /* absent */ }
  }
  return null;
})();

/** Every host process started and not yet ended, so that an interrupted oracle can end them all. */
const LIVE = new Set<Deno.ChildProcess>();

/**
 * Kills every live backend host and everything each one started (SIGKILL to their process groups). For a `verify`
 * interrupted by SIGINT or SIGTERM: a hung host would otherwise outlive it and keep its GPU.
 * @returns how many hosts were killed
 */
export function killAllHosts(): number {
  const n = LIVE.size;
  for (const child of LIVE) killGroup(child);
  LIVE.clear();
  return n;
}

type Wait<T> = { kind: "value"; value: T } | { kind: "timeout" } | { kind: "exit"; status: Deno.CommandStatus };

/** A running backend host. */
export class HostProcess {
  /** The host's hello. */
  readonly hello: Hello;
  readonly #cmd: HostCommand;
  readonly #child: Deno.ChildProcess;
  readonly #stdout: LineReader;
  readonly #stdin: WritableStreamDefaultWriter<Uint8Array>;
  readonly #exit: Promise<Deno.CommandStatus>;
  readonly #log: (line: string) => void;
  #stderrTail: { text: string };
  #exited: Deno.CommandStatus | null = null;

  private constructor(
    cmd: HostCommand,
    child: Deno.ChildProcess,
    stdout: LineReader,
    stderrTail: { text: string },
    log: (line: string) => void,
    hello: Hello,
  ) {
    this.#cmd = cmd;
    this.#child = child;
    this.#stdout = stdout;
    this.#stderrTail = stderrTail;
    this.#log = log;
    this.hello = hello;
    this.#stdin = child.stdin.getWriter();
    this.#exit = child.status.then((s) => (this.#exited = s));
  }

  /**
   * Starts a host and reads its hello.
   * @param cmd how to start it
   * @param options start timeout, and where the host's stderr lines and stray stdout lines go
   * @throws {HostStartError} when it cannot be started, exits, or sends no valid hello in time
   */
  static async start(
    cmd: HostCommand,
    options: { startTimeoutMs: number; log: (line: string) => void },
  ): Promise<HostProcess> {
    const argv = HAS_SETSID ? [HAS_SETSID, ...cmd.argv] : [...cmd.argv];
    let child: Deno.ChildProcess;
    try {
      child = new Deno.Command(argv[0], {
        args: argv.slice(1),
        cwd: cmd.cwd,
        env: { ...cmd.env },
        stdin: "piped",
        stdout: "piped",
        stderr: "piped",
      }).spawn();
    } catch (e) {
      throw new HostStartError(`cannot start ${cmd.name} (${cmd.argv.join(" ")}): ${(e as Error).message}`);
    }
    LIVE.add(child);
    child.status.then(() => LIVE.delete(child));
    const tail = { text: "" };
    const errLines = new LineReader(child.stderr);
    (async () => {
      for (let l = await errLines.next(); l !== null; l = await errLines.next()) {
        // deno-lint-ignore no-control-regex
        tail.text = (tail.text + l.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, "") + "\n").slice(-STDERR_TAIL);
        options.log(`[${cmd.name}] ${l}`);
      }
    })();
    const stdout = new LineReader(child.stdout);
    const exit = child.status;
    const got = await waitFor(HostProcess.#protocolLine(stdout, cmd.name, options.log), options.startTimeoutMs, exit);
    const fail = (why: string): never => {
      killGroup(child);
      child.stdin.close().catch(() => {});
      const t = tail.text.trim();
      throw new HostStartError(`${why}${t ? `; its stderr ends:\n${t}` : ""}`);
    };
    if (got.kind === "timeout") return fail(`no hello within ${options.startTimeoutMs / 1000} s`);
    if (got.kind === "exit") {
      await new Promise((r) => setTimeout(r, 100)); // the last stderr lines
      return fail(`the host ${describeExit(got.status)} before its hello`);
    }
    if (got.value === null) {
      const st = await exitWithin(exit, 2000);
      await new Promise((r) => setTimeout(r, 100)); // the last stderr lines
      return fail(st ? `the host ${describeExit(st)} before its hello` : "the host closed its stdout before its hello");
    }
    let hello: Hello;
    try {
      hello = parseHello(got.value);
    } catch (e) {
      return fail((e as Error).message);
    }
    return new HostProcess(cmd, child, stdout, tail, options.log, hello);
  }

  /** The next JSON object on stdout (other lines go to the log), or null at the end of the stream. */
  static async #protocolLine(lines: LineReader, name: string, log: (l: string) => void): Promise<unknown | null> {
    for (;;) {
      const line = await lines.next();
      if (line === null) return null;
      const text = line.trim();
      if (text.startsWith("{")) {
        try {
          return JSON.parse(text);
        } catch { /* not JSON after all: logged below */ }
      }
      if (text.length) log(`[${name} stdout] ${line}`);
    }
  }

  /** The last few KB of the host's stderr. */
  get stderrTail(): string {
    return this.#stderrTail.text;
  }

  /** Whether the process has ended. */
  get exited(): boolean {
    return this.#exited !== null;
  }

  /**
   * Sends a request and waits for its answer.
   * @param req the request
   * @param timeoutMs how long the answer may take
   * @returns the answer, or the crash, timeout or protocol fault it came to (the host is killed after the last two)
   */
  async request(req: RunRequest, timeoutMs: number): Promise<CallOutcome> {
    if (this.#exited) return { kind: "crash", message: `backend host ${describeExit(this.#exited)}` };
    try {
      await this.#stdin.write(new TextEncoder().encode(JSON.stringify(req) + "\n"));
    } catch {
      return this.#crash(await exitWithin(this.#exit, 2000));
    }
    const got = await waitFor(
      HostProcess.#protocolLine(this.#stdout, this.#cmd.name, this.#log),
      timeoutMs,
      this.#exit,
    );
    if (got.kind === "timeout") {
      this.kill();
      return { kind: "timeout", message: `timed out after ${formatSeconds(timeoutMs)} (the host was killed)` };
    }
    if (got.kind === "exit") return this.#crash(got.status);
    if (got.value === null) return this.#crash(await exitWithin(this.#exit, 5000));
    try {
      return { kind: "answer", answer: parseAnswer(got.value, req.id) };
    } catch (e) {
      if (!(e instanceof ProtocolError)) throw e;
      this.kill();
      return { kind: "protocol", message: `protocol error: ${e.message}` };
    }
  }

  async #crash(status: Deno.CommandStatus | null): Promise<CallOutcome> {
    if (!status) this.kill();
    await new Promise((r) => setTimeout(r, 50)); // the last stderr lines
    const why = status ? describeExit(status) : "closed its stdout";
    const tail = this.#stderrTail.text.trim();
    return {
      kind: "crash",
      message: `backend host crashed: ${why}${tail ? `; its stderr ends: ${lastLines(tail, 6)}` : ""}`,
    };
  }

  /** Kills the host and every process it started (SIGKILL to its session's process group). */
  kill(): void {
    if (!this.#exited) killGroup(this.#child);
  }

  /** Ends the host: closes its stdin (a host exits on end of input), waits up to 5 s, then kills it. */
  async close(): Promise<void> {
    await this.#stdin.close().catch(() => {});
    if ((await exitWithin(this.#exit, 5000)) === null) {
      this.kill();
      await this.#exit;
    }
  }
}

function killGroup(child: Deno.ChildProcess): void {
  try {
    if (HAS_SETSID) Deno.kill(-child.pid, "SIGKILL");
    else child.kill("SIGKILL");
  } catch {
    try {
      child.kill("SIGKILL");
    } catch { /* already gone */ }
  }
}

/** Resolves with the value, a timeout, or the process's exit, whichever comes first (no timer is left behind). */
async function waitFor<T>(p: Promise<T>, ms: number, exit: Promise<Deno.CommandStatus>): Promise<Wait<T>> {
  let timer: ReturnType<typeof setTimeout> | undefined, grace: ReturnType<typeof setTimeout> | undefined, done = false;
  try {
    return await Promise.race([
      p.then((value): Wait<T> => ({ kind: "value", value })),
      new Promise<Wait<T>>((r) => (timer = setTimeout(() => r({ kind: "timeout" }), ms))),
      // An exit counts only once stdout had its chance: a host that answers and then exits still answered.
      exit.then((status) =>
        new Promise<Wait<T>>((r) => {
          if (!done) grace = setTimeout(() => r({ kind: "exit", status }), 100);
        })
      ),
    ]);
  } finally {
    done = true;
    clearTimeout(timer);
    clearTimeout(grace);
  }
}

/** The exit status if the process ends within `ms`, else null. */
async function exitWithin(exit: Promise<Deno.CommandStatus>, ms: number): Promise<Deno.CommandStatus | null> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([exit, new Promise<null>((r) => (timer = setTimeout(() => r(null), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

function formatSeconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${(ms / 1000).toFixed(1)} s`;
}

function lastLines(text: string, n: number): string {
  return text.split("\n").slice(-n).join(" | ");
}
