/**
 * `verify` at production scale (issue 25): the DeepSeek-V3 table at its real M (`--suite deepseek-v3-full`, 45
 * shapes) and the full 4096×7168×16384 `sm90_1d2d` GEMM, timed on this machine.
 *
 * Parts (`--part`, repeatable; default `reference full`):
 * - `verify`: `oracle verify --suite deepseek-v3-full --sample F --backend cpu` as a user runs it (a subprocess; the CPU
 *   backend under test computes every element of every case in its backend host, the reference only the sampled
 *   tiles), wall time in all and per case (from the progress lines), the rows' status. `--mem-guard-gb G` (default
 *   2) kills the backend host (a process this bench started) when the machine's available memory falls below G GB,
 *   so a case too large for the machine is a crash row instead of a visit from the kernel's OOM killer.
 * - `reference`: what `verify` computes on the CPU for a GPU backend, per case, in process: building the inputs and the
 *   sampled reference (native backend, `cli/verify/native_reference.ts`), with the multiply-adds it evaluated.
 * - `full`: the unsampled 4096×7168×16384 `fp8_gemm_nt` reference (`sm90_1d2d`) on the native backend.
 * - `full-verify`: `runCase` of `deepseek-v3-full/dense_m4096_n7168_k16384` at `--sample 1` against the in-process
 *   CPU backend: the full reference, the backend's full call and the bitwise compare of every element.
 *
 * `deno run -A bench/verify_bench.ts [--part verify|reference|full|full-verify]... [--sample 0.01] [--filter SUBSTR]
 * [--json FILE] [--mem-guard-gb 2]`
 * @module
 */
import { benchArgs } from "./_args.ts";
import { openBackend } from "../ffi/backend.ts";
import { inProcessExecutor } from "../cli/verify/executors.ts";
import { closeNativeReference, nativeReference, planNative } from "../cli/verify/native_reference.ts";
import { runCase } from "../cli/verify/runner.ts";
import { deepseekV3FullSuite } from "../cli/verify/suites.ts";
import { denseFast } from "../cli/verify/fast_inputs.ts";
import { selectTiles, TILE } from "../reference/gemm/engine.ts";
import type { GemmProblem } from "../reference/gemm/job.ts";
import { Prng } from "../reference/random/prng.ts";

if (import.meta.main) await main();

async function main(): Promise<void> {
  const { values } = benchArgs(
    "usage: deno run -A bench/verify_bench.ts [--part verify|reference|full ...] [--sample 0.01] " +
      "[--filter SUBSTR] [--json PATH] [--mem-guard-gb 2]",
    {
      options: {
        part: { type: "string", multiple: true },
        sample: { type: "string", default: "0.01" },
        filter: { type: "string" },
        json: { type: "string" },
        "mem-guard-gb": { type: "string", default: "2" },
      },
    },
  );
  const parts = new Set(values.part ?? ["reference", "full"]);
  const sample = Number(values.sample);
  const results: Record<string, unknown> = {
    date: new Date().toISOString(),
    cpu: cpuModel(),
    cores: navigator.hardwareConcurrency,
    sample,
  };
  const s = (ms: number) => (ms / 1000).toFixed(1);

  function cpuModel(): string {
    try {
      const m = /model name\s*:\s*(.*)/.exec(Deno.readTextFileSync("/proc/cpuinfo"));
      return m ? m[1].trim() : "?";
    } catch {
      return "?";
    }
  }

  /** CPU seconds of this process (user + system). */
  function cpuSeconds(): number {
    const f = Deno.readTextFileSync("/proc/self/stat").split(") ")[1].split(" ");
    return (Number(f[11]) + Number(f[12])) / 100; // utime, stime in clock ticks (100 Hz)
  }

  /** Multiply-adds of the tiles a sample evaluates (zero chunks excluded), from the native plan. */
  function sampledMacs(c: ReturnType<typeof deepseekV3FullSuite>[number], built: ReturnType<typeof c.build>): number {
    const plan = planNative(c.op, built.inputs, built.scalars, { model: "sm90_1d2d" });
    if (typeof plan === "string") return NaN;
    const probs = plan.parts.map((p) => ({ aOff: p.aRows, bOff: { length: plan.N } }) as unknown as GemmProblem);
    let macs = 0;
    for (const [pi, ti, tj] of selectTiles(probs, { fraction: c.sample ?? 1, seed: 0 })) {
      if (plan.parts[pi].zero) continue;
      const rows = Math.min(plan.parts[pi].aRows.length, (ti + 1) * TILE) - ti * TILE;
      macs += rows * (Math.min(plan.N, (tj + 1) * TILE) - tj * TILE) * plan.K;
    }
    return macs;
  }

  if (parts.has("reference")) {
    const cases = deepseekV3FullSuite(sample).filter((c) => !values.filter || c.id.includes(values.filter));
    console.log(`## reference: build + native sampled reference (--sample ${sample}), ${cases.length} cases\n`);
    console.log("| case | build s | reference s | G MAC evaluated | G MAC/s |");
    console.log("|---|---|---|---|---|");
    const rows = [];
    let tb = 0, tr = 0, tm = 0;
    const t0 = performance.now(), c0 = cpuSeconds();
    for (const c of cases) {
      let t = performance.now();
      const built = c.build();
      const b = performance.now() - t;
      t = performance.now();
      const out = await nativeReference(c.op, built.inputs, built.scalars, {
        model: "sm90_1d2d",
        sample: { fraction: sample, seed: 0 },
      });
      const r = performance.now() - t;
      if (!out) throw new Error(`${c.id}: not computed natively`);
      const macs = sampledMacs(c, built);
      tb += b, tr += r, tm += macs;
      rows.push({ id: c.id, buildMs: b, referenceMs: r, macs });
      console.log(`| ${c.id} | ${s(b)} | ${s(r)} | ${(macs / 1e9).toFixed(1)} | ${(macs / r / 1e6).toFixed(2)} |`);
    }
    const wall = performance.now() - t0;
    console.log(
      `| **all ${cases.length}** | ${s(tb)} | ${s(tr)} | ${(tm / 1e9).toFixed(0)} | ${(tm / tr / 1e6).toFixed(2)} |\n`,
    );
    console.log(`wall ${s(wall)} s, CPU ${(cpuSeconds() - c0).toFixed(0)} s\n`);
    results.reference = { wallMs: wall, buildMs: tb, referenceMs: tr, macs: tm, cases: rows };
  }

  if (parts.has("full")) {
    const [M, N, K] = [4096, 7168, 16384];
    let t = performance.now();
    const built = denseFast(M, N, K)(new Prng(1));
    const b = performance.now() - t;
    t = performance.now();
    const c0 = cpuSeconds();
    const out = await nativeReference("fp8_gemm_nt", built.inputs, built.scalars, { model: "sm90_1d2d" });
    const r = performance.now() - t;
    if (!out) throw new Error("not computed natively");
    const macs = M * N * K;
    console.log(`## full ${M}×${N}×${K} fp8_gemm_nt sm90_1d2d reference on the native backend (unsampled)\n`);
    console.log(
      `build ${s(b)} s, reference ${s(r)} s (${(macs / r / 1e6).toFixed(2)} G MAC/s wall, CPU ${
        (cpuSeconds() - c0).toFixed(0)
      } s)\n`,
    );
    results.full = { buildMs: b, referenceMs: r, macs };
  }

  if (parts.has("full-verify")) {
    const c = deepseekV3FullSuite(1).find((c) => c.id === "deepseek-v3-full/dense_m4096_n7168_k16384")!;
    using backend = await openBackend("cpu");
    backend.setNumThreads(0);
    const t = performance.now();
    const [row] = await runCase(c, [{ name: "cpu", exec: inProcessExecutor(backend) }]);
    const wall = performance.now() - t;
    console.log(`## verify ${c.id} --sample 1 against the in-process CPU backend\n`);
    console.log(
      `wall ${s(wall)} s (backend call ${
        s(row.ms)
      } s): ${row.status}, ${row.elements} elements, ${row.mismatches} mismatches\n`,
    );
    results.fullVerify = { wallMs: wall, backendMs: row.ms, status: row.status, elements: row.elements };
  }

  await closeNativeReference();

  if (parts.has("verify")) {
    const json = await Deno.makeTempFile({ suffix: ".json" });
    const args = [
      "run",
      "-A",
      new URL("../cli.ts", import.meta.url).pathname,
      "verify",
      "--suite",
      "deepseek-v3-full",
      "--sample",
      String(sample),
      "--backend",
      "cpu",
      "--case-timeout",
      "1800",
      "--json",
      json,
    ];
    console.log(`## deno ${args.slice(2).join(" ")}\n`);
    const child = new Deno.Command(Deno.execPath(), { args, stdout: "piped", stderr: "piped" }).spawn();
    const guard = memoryGuard(child.pid, Number(values["mem-guard-gb"]) * 2 ** 30);
    const t0 = performance.now();
    const starts: { id: string; at: number }[] = [];
    const lines = async (stream: ReadableStream<Uint8Array>, on: (l: string) => void) => {
      let buf = "";
      for await (const chunk of stream.pipeThrough(new TextDecoderStream())) {
        buf += chunk;
        let i;
        while ((i = buf.indexOf("\n")) >= 0) {
          on(buf.slice(0, i));
          buf = buf.slice(i + 1);
        }
      }
    };
    let stdout = "";
    await Promise.all([
      lines(child.stderr, (l) => {
        const m = /^verify: \[(\d+)\/(\d+)\] (\S+)/.exec(l);
        if (m) starts.push({ id: m[3], at: performance.now() });
        else if (!l.startsWith("verify: starting")) console.error(`  ${l}`);
      }),
      lines(child.stdout, (l) => void (stdout += l + "\n")),
    ]);
    const status = await child.status;
    clearInterval(guard.timer);
    const wall = performance.now() - t0;
    const report = JSON.parse(await Deno.readTextFile(json));
    await Deno.remove(json);
    console.log("| case | status | case wall s | backend call s |");
    console.log("|---|---|---|---|");
    const rows = starts.map((st, i) => {
      const end = i + 1 < starts.length ? starts[i + 1].at : t0 + wall;
      const r = report.cases.find((c: { id: string }) => c.id === st.id) ?? {};
      console.log(`| ${st.id} | ${r.status} | ${s(end - st.at)} | ${s(r.ms ?? 0)} |`);
      return { id: st.id, status: r.status, wallMs: end - st.at, backendMs: r.ms, message: r.message };
    });
    console.log(`\nexit ${status.code}, wall ${s(wall)} s; ${stdout.trim().split("\n").at(-1)}`);
    if (guard.killed.length) console.log(`memory guard killed: ${guard.killed.join(", ")}`);
    results.verify = { wallMs: wall, exit: status.code, summary: report.summary, killed: guard.killed, cases: rows };
  }

  if (values.json) await Deno.writeTextFile(values.json, JSON.stringify(results, null, 2) + "\n");
}

/**
 * Polls the machine's available memory; below `floor` bytes it SIGKILLs the largest process under `root` (the
 * backend host `verify` started), which `verify` reports as a crash of that case and replaces.
 */
function memoryGuard(root: number, floor: number): { timer: ReturnType<typeof setInterval>; killed: string[] } {
  const killed: string[] = [];
  const timer = setInterval(() => {
    try {
      const avail = Number(/MemAvailable:\s+(\d+)/.exec(Deno.readTextFileSync("/proc/meminfo"))![1]) * 1024;
      if (avail >= floor) return;
      // descendants of root, by parent pid
      const parent = new Map<number, number>();
      for (const e of Deno.readDirSync("/proc")) {
        if (!/^\d+$/.test(e.name)) continue;
        try {
          const st = Deno.readTextFileSync(`/proc/${e.name}/stat`);
          parent.set(Number(e.name), Number(st.slice(st.lastIndexOf(")") + 2).split(" ")[1]));
        } catch { /* gone */ }
      }
      const under = (pid: number): boolean => pid === root || (parent.has(pid) && pid > 1 && under(parent.get(pid)!));
      let best = -1, bestRss = 0;
      for (const pid of parent.keys()) {
        if (pid === root || !under(pid)) continue;
        const rss = Number(Deno.readTextFileSync(`/proc/${pid}/statm`).split(" ")[1]);
        if (rss > bestRss) [best, bestRss] = [pid, rss];
      }
      if (best > 0) {
        Deno.kill(best, "SIGKILL");
        killed.push(`pid ${best} (${(bestRss * 4096 / 2 ** 30).toFixed(1)} GB resident)`);
      }
    } catch { /* a process vanished mid-scan */ }
  }, 250);
  return { timer, killed };
}
