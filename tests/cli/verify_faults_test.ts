// `verify` against backends that crash, hang or lie (docs/backend-protocol.md §4): the fault library
// (tests/fault/fault_backend.cpp, a C ABI library forwarding to the CPU backend) and the fault adapter
// (tests/fault/fault_adapter.py, a `cmd:` backend speaking the protocol by hand). Every fault must come out as the
// right row while the run goes on to the next case with a fresh host, and the run must end by itself with its exit
// status, the JSON report (every case, "complete": true) and well-formed JUnit written. A `verify` killed mid-run
// must leave a valid JSON report of the cases it finished, marked "complete": false.
//
// Each run takes `--suite fixtures --ops fp8_gemm_nt --shard 1/3`: three cases on the faulty op, so that a crash in
// the first case and the rows of the cases after it (on a restarted host) are both visible.
import assert from "node:assert/strict";
import { PYTHON, pythonMissing } from "../_python.ts";
import { fileURLToPath } from "node:url";
import { buildFaultBackend, faultEnv, type FaultOptions } from "../fault/_fault.ts";
import { parseXml, type XmlElement } from "./_xml.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const CASES = ["--suite", "fixtures", "--ops", "fp8_gemm_nt", "--shard", "1/3"];
const N = 3; // fixtures/fp8_gemm_nt holds 9 cases; shard 1/3 takes 3 of them
const ADAPTER = `cmd:${PYTHON} tests/fault/fault_adapter.py`;
/** A `verify` still running after this is killed and the test fails (no step should come near it). */
const RUN_LIMIT_MS = 90_000;

/** A row of the JSON report (the fields these tests read). */
interface Row {
  id: string;
  backend: string;
  status: "pass" | "fail" | "skip" | "error";
  mismatches: number;
  elements: number;
  message?: string;
  fault?: string;
}

/** The JSON report (the fields these tests read). */
interface JsonReport {
  complete: boolean;
  backends: { name: string; status: string; info?: Record<string, unknown> }[];
  cases: Row[];
  summary: { pass: number; fail: number; skip: number; error: number; crashed: number; timedOut: number };
}

/** What one `verify` run left behind. */
interface Run {
  code: number;
  signal: Deno.Signal | null;
  stdout: string;
  stderr: string;
  ms: number;
  /** The JSON report, parsed (null when none was written). */
  json: JsonReport | null;
  /** The JUnit report's text (null when none was written). */
  junit: string | null;
  /** Lines of GO_FAULT_PIDFILE. */
  pids: string[];
  /** What the run left in its TMPDIR (the hosts' scratch directories must be gone). */
  leftovers: string[];
}

/** Runs `oracle verify --backend BACKEND ...CASES ...extra` in a child process with the fault's environment. */
async function verify(
  dir: string,
  backend: string,
  fault: string,
  options: FaultOptions & { extra?: string[] } = {},
): Promise<Run> {
  const json = `${dir}/report.json`, junit = `${dir}/report.xml`, pidfile = `${dir}/pids`;
  for (const f of [json, junit, pidfile]) await Deno.remove(f).catch(() => {});
  const tmp = `${dir}/tmp`;
  await Deno.remove(tmp, { recursive: true }).catch(() => {});
  await Deno.mkdir(tmp);
  const env = { ...await faultEnv(fault, { pidfile, ...options }), TMPDIR: tmp };
  const args = ["run", "-A", `${ROOT}cli.ts`, "verify", "--backend", backend, ...CASES];
  // a generous case timeout: these hosts answer in milliseconds or crash; only the hangs set a short one
  args.push("--json", json, "--junit", junit, "--case-timeout", "30", ...(options.extra ?? []));
  const t0 = performance.now();
  const child = new Deno.Command(Deno.execPath(), { args, cwd: ROOT, env, stdout: "piped", stderr: "piped" }).spawn();
  const limit = setTimeout(() => child.kill("SIGKILL"), RUN_LIMIT_MS);
  const out = await child.output().finally(() => clearTimeout(limit));
  const ms = performance.now() - t0;
  const dec = new TextDecoder();
  const read = (p: string) => Deno.readTextFile(p).catch(() => null);
  const jsonText = await read(json), junitText = await read(junit);
  return {
    code: out.code,
    signal: out.signal,
    stdout: dec.decode(out.stdout),
    stderr: dec.decode(out.stderr),
    ms,
    json: jsonText === null ? null : JSON.parse(jsonText),
    junit: junitText,
    pids: ((await read(pidfile)) ?? "").split("\n").filter((l) => l.length > 0),
    leftovers: [...Deno.readDirSync(tmp)].map((e) => e.name),
  };
}

/** Everything a finished run must have whatever the backend did; returns the rows of `backend`. */
function finished(r: Run, backend: string, code: 0 | 1): Row[] {
  const context = `\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`;
  assert.equal(r.signal, null, `verify itself was killed by ${r.signal}${context}`);
  assert.ok(r.ms < RUN_LIMIT_MS, `verify did not end by itself${context}`);
  assert.equal(r.code, code, `exit status${context}`);
  assert.ok(r.json, `no JSON report${context}`);
  assert.equal(r.json.complete, true, "the finished report says complete: true");
  assert.deepEqual(r.leftovers, [], "the hosts' scratch directories are removed");
  const rows = r.json.cases.filter((c) => c.backend === backend);
  assert.equal(rows.length, N, `one row per case${context}`);
  assert.equal(new Set(rows.map((c) => c.id)).size, N);
  const count = (s: Row["status"]) => r.json!.cases.filter((c) => c.status === s).length;
  const s = r.json.summary;
  assert.deepEqual([s.pass, s.fail, s.skip, s.error], [count("pass"), count("fail"), count("skip"), count("error")]);
  assert.equal(s.crashed, r.json.cases.filter((c) => c.fault === "crash").length);
  assert.equal(s.timedOut, r.json.cases.filter((c) => c.fault === "timeout").length);
  const line = r.stdout.trim().split("\n").at(-1)!;
  assert.match(
    line,
    new RegExp(`^verify: ${N} cases, ${N} checks .*: ${s.pass} passed, ${s.fail} failed, ${s.error} errors`),
  );
  if (s.crashed + s.timedOut) {
    assert.match(line, new RegExp(`${s.error} errors \\(${s.crashed} crashed, ${s.timedOut} timed out\\)`));
  } else assert.doesNotMatch(line, /crashed|timed out/);
  // JUnit: well-formed (parseXml threw otherwise), one suite for the backend, one testcase per row, the right kinds
  assert.ok(r.junit !== null, `no JUnit report${context}`);
  let junit: XmlElement;
  try {
    junit = parseXml(r.junit);
  } catch (e) {
    throw new assert.AssertionError({ message: `the JUnit report is not well-formed XML: ${(e as Error).message}` });
  }
  assert.equal(junit.name, "testsuites");
  const suite = junit.children.find((e) => e.name === "testsuite" && e.attrs.name === backend);
  assert.ok(suite, `a testsuite named ${backend}`);
  const cases = suite.children.filter((e) => e.name === "testcase");
  assert.equal(cases.length, N);
  assert.equal(suite.attrs.tests, String(N));
  const kinds = cases.map((e) => e.children[0]?.name ?? "pass");
  assert.deepEqual(
    kinds,
    rows.map((c) => ({ pass: "pass", fail: "failure", skip: "skipped", error: "error" })[c.status]),
  );
  for (const [i, e] of cases.entries()) {
    // the row's message, up to the first character XML cannot hold (the JUnit writer may drop or replace those)
    // deno-lint-ignore no-control-regex
    const xmlSafe = rows[i].message?.split(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/)[0];
    if (xmlSafe && e.children[0]) assert.ok(e.children[0].attrs.message.startsWith(xmlSafe), "the JUnit message");
  }
  return rows;
}

/** Whether a process is gone (a zombie no one has reaped yet counts as gone). */
function gone(pid: number): boolean {
  try {
    return Deno.readTextFileSync(`/proc/${pid}/stat`).split(") ")[1]?.startsWith("Z") ?? true;
  } catch {
    return true;
  }
}

/** Kills what a faulty host left running (processes these tests started); true if any was still alive. */
function reap(pids: number[]): boolean {
  let alive = false;
  for (const pid of pids) {
    if (gone(pid)) continue;
    alive = true;
    try {
      Deno.kill(pid, "SIGKILL");
    } catch { /* went away meanwhile */ }
  }
  return alive;
}

/** Pids of the pidfile's lines of one kind ("fault", "start", "child"; the library writes bare pids). */
function pidsOf(r: Run, kind?: string): number[] {
  return r.pids.map((l) => l.split(" ")).filter((p) => kind === undefined || p[0] === kind).map((p) =>
    Number(p.at(-1))
  );
}

async function withDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "verify_faults_test_" });
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("verify survives a C ABI library that crashes, hangs or lies in go_fp8_gemm", async (t) => {
  const lib = await buildFaultBackend();
  await withDir(async (dir) => {
    await t.step("the pass-through library passes every case (the fault library itself is sound)", async () => {
      const r = await verify(dir, lib, "none");
      const rows = finished(r, lib, 0);
      assert.deepEqual(rows.map((c) => c.status), ["pass", "pass", "pass"]);
      const info = r.json!.backends.find((b) => b.name === lib)?.info;
      assert.deepEqual(
        info?.fault,
        { mode: "none", op: "go_fp8_gemm", after: 1 },
        "the host's info reaches the report",
      );
    });

    await t.step("a segfault is an ERROR naming SIGSEGV with the host's stderr, on a fresh host per case", async () => {
      const r = await verify(dir, lib, "segv");
      const rows = finished(r, lib, 1);
      for (const c of rows) {
        assert.equal(c.status, "error");
        assert.equal(c.fault, "crash");
        assert.match(c.message!, /^backend host crashed: killed by SIGSEGV \(signal 11\)/);
        assert.match(c.message!, /fault backend: injecting segv into go_fp8_gemm \(call 1,/, "the stderr tail");
      }
      assert.equal(new Set(pidsOf(r)).size, N, "each case ran in a host of its own");
      assert.deepEqual([r.json!.summary.crashed, r.json!.summary.timedOut], [N, 0]);
    });

    await t.step("after a crash the restarted host runs the next case to a PASS", async () => {
      // each host process faults from its 2nd call on: PASS (call 1), crash (call 2), PASS (call 1 of a new host)
      const r = await verify(dir, lib, "segv", { after: 2 });
      const rows = finished(r, lib, 1);
      assert.deepEqual(rows.map((c) => c.status), ["pass", "error", "pass"]);
      assert.match(rows[1].message!, /killed by SIGSEGV/);
      assert.equal(r.json!.summary.crashed, 1);
    });

    await t.step("an abort is an ERROR naming SIGABRT", async () => {
      const rows = finished(await verify(dir, lib, "abort"), lib, 1);
      for (const c of rows) {
        assert.equal(c.fault, "crash");
        assert.match(c.message!, /^backend host crashed: killed by SIGABRT \(signal 6\)/);
      }
    });

    await t.step("a hang is an ERROR 'timed out' and the hung host is killed", async () => {
      const r = await verify(dir, lib, "loop", { extra: ["--case-timeout", "2"] });
      const hung = pidsOf(r);
      try {
        const rows = finished(r, lib, 1);
        for (const c of rows) {
          assert.equal(c.status, "error");
          assert.equal(c.fault, "timeout");
          assert.match(c.message!, /^timed out after 2 s/);
        }
        assert.deepEqual([r.json!.summary.crashed, r.json!.summary.timedOut], [0, N]);
        assert.equal(new Set(hung).size, N, "a fresh host after each timeout");
        assert.ok(r.ms < N * 2000 + 30_000, `the run took ${r.ms} ms`);
        assert.ok(hung.every(gone), "no hung host outlives verify");
      } finally {
        reap(hung);
      }
    });

    await t.step("a status outside the ABI's enum is an ERROR naming the status", async () => {
      const r = await verify(dir, lib, "garbage_status");
      for (const c of finished(r, lib, 1)) {
        assert.equal(c.fault, undefined, "an error status is no crash");
        assert.match(c.message!, /go_fp8_gemm failed with status 12345/);
      }
      assert.equal(r.json!.summary.crashed, 0);
    });

    await t.step("an error status whose go_last_error() is NULL is an ERROR with a readable message", async () => {
      for (const c of finished(await verify(dir, lib, "null_message"), lib, 1)) {
        assert.equal(c.status, "error");
        assert.equal(c.fault, undefined);
        assert.match(c.message!, /go_fp8_gemm failed with GO_ERR_INTERNAL/);
        assert.doesNotMatch(c.message!, /null|undefined|\[object/);
      }
    });

    await t.step("one flipped bit is a FAIL with exactly 1 mismatch at [0, 0]", async () => {
      for (const c of finished(await verify(dir, lib, "wrong_bit"), lib, 1)) {
        assert.equal(c.status, "fail");
        assert.equal(c.mismatches, 1);
        assert.match(c.message!, /^d: 1\/\d+ mismatches; first at \[0, 0\]: expected .* \(0x[0-9a-f]{4}\), got /);
      }
    });

    await t.step("a library that prints to stdout, even half a line, still passes", async () => {
      // kernel libraries log to stdout (JIT progress): the host must keep its protocol lines apart from their text
      const r = await verify(dir, lib, "chatty", { extra: ["--case-timeout", "5"] });
      const rows = finished(r, lib, 0);
      assert.deepEqual(rows.map((c) => c.status), ["pass", "pass", "pass"], rows.map((c) => c.message).join("\n"));
      assert.match(r.stderr, /fault backend chatter: a whole line on stdout/, "the library's text is passed on");
    });

    await t.step("a library that segfaults while loading is an unusable backend (exit 2, naming SIGSEGV)", async () => {
      const r = await verify(dir, lib, "segv", { op: "go_backend_info" });
      assert.equal(r.signal, null);
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, /fault backend: injecting segv into go_backend_info/, "the host's stderr");
      assert.match(r.stderr, /SIGSEGV/, "how the host ended");
    });

    await t.step("an op that writes nothing (and says GO_OK) is a FAIL on every element", async () => {
      for (const c of finished(await verify(dir, lib, "nothing"), lib, 1)) {
        assert.equal(c.status, "fail");
        assert.ok(c.mismatches > 0 && c.mismatches === c.elements, `${c.mismatches}/${c.elements}`);
      }
    });
  });
});

/** The fault adapter needs python3 with numpy. */
const NO_PYTHON = pythonMissing(["numpy"]);

Deno.test({
  name: "verify survives a command backend that crashes, hangs or breaks the protocol" +
    (NO_PYTHON ? ` (ignored: ${NO_PYTHON})` : ""),
  ignore: NO_PYTHON !== undefined,
}, async (t) => {
  await withDir(async (dir) => {
    const ok = (r: Run, code: 0 | 1) => finished(r, ADAPTER, code);
    const starts = (r: Run) => pidsOf(r, "start").length;

    await t.step("the honest adapter is skipped with its message, all cases on one host", async () => {
      const r = await verify(dir, ADAPTER, "none");
      // every case skipped: nothing was verified, which verify counts as a failed run (exit 1), not a pass
      for (const c of ok(r, 1)) {
        assert.equal(c.status, "skip");
        assert.match(c.message!, /^fault_adapter computes no GEMM \(inputs: a F8_E4M3\[\d+, \d+\], b F8_E4M3/);
      }
      assert.match(r.stdout, /nothing was verified/);
      assert.equal(starts(r), 1, "a host that behaves is never restarted");
    });

    await t.step("SIGSEGV, SIGABRT and exit 3 are ERROR rows naming them, with the host's stderr", async () => {
      const expected = {
        segv: /SIGSEGV, signal 11|SIGSEGV \(signal 11\)/,
        abort: /SIGABRT/,
        exit3: /exited with status 3$/m,
      };
      for (const [fault, why] of Object.entries(expected)) {
        const r = await verify(dir, ADAPTER, fault);
        for (const c of ok(r, 1)) {
          assert.equal(c.fault, "crash", fault);
          assert.match(c.message!, /^backend host crashed: /);
          assert.match(c.message!.split(";")[0], why);
          assert.match(c.message!, new RegExp(`fault_adapter: injecting ${fault} into request \\d+`));
        }
        assert.equal(starts(r), N, `${fault}: a fresh host per case`);
        assert.equal(r.json!.summary.crashed, N);
      }
    });

    await t.step("control characters in a crashed host's stderr leave the JUnit report well-formed", async () => {
      // finished() parses the JUnit strictly: ESC, NUL, BEL and U+FFFE may not appear in XML 1.0, even escaped
      const rows = ok(await verify(dir, ADAPTER, "segv", { noise: true }), 1);
      for (const c of rows) assert.match(c.message!, /E0101 device lost/, "the stderr tail is still in the row");
    });

    await t.step("a hang is 'timed out' and kills the host's whole process group", async () => {
      const r = await verify(dir, ADAPTER, "loop", { extra: ["--case-timeout", "2"] });
      const left = [...pidsOf(r, "fault"), ...pidsOf(r, "child")];
      try {
        for (const c of ok(r, 1)) {
          assert.equal(c.fault, "timeout");
          assert.match(c.message!, /^timed out after 2 s/);
        }
        assert.equal(pidsOf(r, "child").length, N, "each hung host had started a child");
        assert.deepEqual(left.filter((p) => !gone(p)), [], "the hosts and their children are killed");
      } finally {
        reap(left);
      }
    });

    await t.step("a non-JSON line is passed on to stderr and the status 'banana' is a protocol ERROR", async () => {
      const r = await verify(dir, ADAPTER, "garbage");
      for (const c of ok(r, 1)) {
        assert.equal(c.fault, "protocol");
        assert.match(c.message!, /unknown status "banana"/);
      }
      assert.match(r.stderr, /fault_adapter garbage: this line is not JSON/);
      assert.equal(starts(r), N, "a host that broke the protocol is replaced");
      assert.equal(r.json!.summary.crashed, 0);
    });

    await t.step("an answer with another id is a protocol ERROR", async () => {
      const r = await verify(dir, ADAPTER, "wrong_id");
      for (const c of ok(r, 1)) {
        assert.equal(c.fault, "protocol");
        assert.match(c.message!, /id \d+, the request had \d+/);
      }
      assert.equal(starts(r), N);
    });

    await t.step("'ok' without the output file is a protocol ERROR", async () => {
      for (const c of ok(await verify(dir, ADAPTER, "no_output"), 1)) {
        assert.equal(c.fault, "protocol");
        assert.match(c.message!, /wrote no output file/);
      }
    });

    await t.step("an output of the wrong shape is a protocol ERROR naming both shapes", async () => {
      for (const c of ok(await verify(dir, ADAPTER, "wrong_shape"), 1)) {
        assert.equal(c.fault, "protocol");
        assert.match(c.message!, /"d" has shape \[(\d+), (\d+)\], expected \[\d+, \2\]/);
      }
    });

    await t.step("an error answer asking for a restart is an ERROR with its message, on a fresh host", async () => {
      const r = await verify(dir, ADAPTER, "error_restart");
      for (const c of ok(r, 1)) {
        assert.equal(c.fault, undefined);
        assert.equal(c.message, "fault_adapter: sticky device error");
      }
      assert.equal(starts(r), N);
    });

    await t.step("a host that dies before its hello after a crash ends the backend, not the run", async () => {
      const state = await Deno.makeTempDir({ dir });
      const rows = ok(await verify(dir, ADAPTER, "crash_then_dead", { state }), 1);
      assert.match(rows[0].message!, /SIGSEGV/);
      for (const c of rows.slice(1)) {
        assert.equal(c.status, "error");
        assert.match(c.message!, /backend host could not be restarted/);
      }
    });

    await t.step("a hello of another protocol version is an unusable backend (exit 2, naming both)", async () => {
      const r = await verify(dir, ADAPTER, "bad_version");
      assert.equal(r.signal, null);
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, /protocol version 2; this oracle speaks version 1/);
    });

    await t.step("a host that exits before its hello is an unusable backend (exit 2, with its stderr)", async () => {
      const r = await verify(dir, ADAPTER, "no_hello");
      assert.equal(r.signal, null);
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, /exited with status 1 before its hello/, "how the host ended");
      assert.match(r.stderr, /fault_adapter: injecting no_hello: exiting before the hello/);
    });
  });
});

/** A verify running in the background, as startHangingVerify starts it. */
interface HangingVerify {
  child: Deno.ChildProcess;
  /** Resolves with its exit status once it has ended. */
  status: Promise<Deno.CommandStatus>;
  /** Its exit status once it has ended, else null. */
  ended: Deno.CommandStatus | null;
  /** What it has printed on stderr so far. */
  stderr: string;
  /** Waits (up to 60 s, failing if verify ends first) until it announces its third case and `more` holds. */
  untilThirdCase(more?: () => Promise<boolean>): Promise<void>;
  /** Kills verify if it still runs (SIGKILL) and waits for it and its output streams. */
  settle(): Promise<void>;
  /** The pids of the backend hosts it started (their fault hook writes them to dir/pids). */
  hostPids(): Promise<number[]>;
}

/**
 * Starts `verify` on the fixtures' fp8_gemm_nt cases against the fault library whose hosts hang in the library from
 * their 3rd call: the first two cases pass, the third hangs until verify is stopped. Scratch directories go under
 * dir/tmp (TMPDIR), so a killed verify's leftovers are seen; `outputs` names the report files.
 */
async function startHangingVerify(dir: string, lib: string, outputs: string[]): Promise<HangingVerify> {
  const pidfile = `${dir}/pids`;
  await Deno.mkdir(`${dir}/tmp`);
  const env = { ...await faultEnv("loop", { after: 3, pidfile }), TMPDIR: `${dir}/tmp` };
  const args = ["run", "-A", `${ROOT}cli.ts`, "verify", "--backend", lib, "--suite", "fixtures", "--ops"];
  args.push("fp8_gemm_nt", ...outputs, "--case-timeout", "60");
  const child = new Deno.Command(Deno.execPath(), { args, cwd: ROOT, env, stdout: "piped", stderr: "piped" })
    .spawn();
  const drained = child.stdout.pipeTo(new WritableStream());
  const v: HangingVerify = {
    child,
    status: child.status,
    ended: null,
    stderr: "",
    async untilThirdCase(more = () => Promise.resolve(true)) {
      const deadline = Date.now() + 60_000;
      while (!/\[3\/9\]/.test(v.stderr) || !await more()) {
        assert.equal(v.ended, null, `verify ended before its third case:\n${v.stderr}`);
        assert.ok(Date.now() < deadline, `the first cases never finished:\n${v.stderr}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    async settle() {
      if (v.ended === null) child.kill("SIGKILL");
      await Promise.all([v.status, drained, watched]);
    },
    async hostPids() {
      return (await Deno.readTextFile(pidfile).catch(() => "")).split("\n").filter(Boolean).map(Number);
    },
  };
  const watched = (async () => {
    for await (const chunk of child.stderr.pipeThrough(new TextDecoderStream())) v.stderr += chunk;
  })();
  v.status = child.status.then((s) => (v.ended = s));
  return v;
}

Deno.test("a verify killed mid-run leaves a valid JSON report of the cases it finished", async () => {
  const lib = await buildFaultBackend();
  await withDir(async (dir) => {
    const json = `${dir}/report.json`, junit = `${dir}/report.xml`;
    // a killed verify cannot remove its hosts' scratch directory: it lies inside the test's directory
    const v = await startHangingVerify(dir, lib, ["--json", json, "--junit", junit]);
    const report = async (): Promise<JsonReport | null> => {
      try {
        return JSON.parse(await Deno.readTextFile(json));
      } catch {
        return null; // not written yet
      }
    };
    try {
      // the 3rd case announced on stderr, and the report holding the first two
      await v.untilThirdCase(async () => ((await report())?.cases.length ?? 0) >= 2);
    } finally {
      await v.settle();
      // the hung host (a session of its own) notices its parent is gone and leaves; make sure of it
      const hung = await v.hostPids();
      for (let i = 0; i < 50 && !hung.every(gone); i++) await new Promise((r) => setTimeout(r, 100));
      reap(hung);
    }
    assert.equal((await v.status).signal, "SIGKILL", "verify was still running its third case when killed");
    const r = JSON.parse(await Deno.readTextFile(json)) as JsonReport;
    assert.equal(r.complete, false);
    assert.equal(r.cases.length, 2);
    assert.deepEqual(r.cases.map((c) => c.status), ["pass", "pass"]);
    assert.deepEqual([r.summary.pass, r.summary.error], [2, 0]);
    const x = parseXml(await Deno.readTextFile(junit));
    assert.equal(x.children[0].children.filter((e) => e.name === "testcase").length, 2);
  });
});

Deno.test("a verify interrupted by SIGTERM kills its hung host and removes its scratch directory", async () => {
  const lib = await buildFaultBackend();
  await withDir(async (dir) => {
    const json = `${dir}/report.json`;
    const v = await startHangingVerify(dir, lib, ["--json", json]);
    let hung: number[] = [];
    try {
      await v.untilThirdCase();
      await new Promise((r) => setTimeout(r, 300)); // the third case is in the library's loop
      v.child.kill("SIGTERM");
      await v.status;
      hung = await v.hostPids();
      // verify killed the host's process group before exiting: it is gone at once, not after its own watchdog
      for (let i = 0; i < 10 && !hung.every(gone); i++) await new Promise((r) => setTimeout(r, 50));
      assert.ok(hung.length > 0 && hung.every(gone), `host processes ${hung} outlived the interrupted verify`);
    } finally {
      await v.settle();
      reap(hung);
    }
    assert.equal((await v.status).code, 143);
    assert.match(v.stderr, /SIGTERM: 1 backend host\(s\) killed/);
    assert.deepEqual([...Deno.readDirSync(`${dir}/tmp`)].map((e) => e.name), [], "scratch directories removed");
    const r = JSON.parse(await Deno.readTextFile(json)) as JsonReport;
    assert.equal(r.complete, false);
    assert.deepEqual(r.cases.map((c) => c.status), ["pass", "pass"]);
  });
});
