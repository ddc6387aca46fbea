/**
 * One `verify` worker per GPU: opens the backend, selects its device (`go_set_device`), regenerates the case list
 * (every suite is deterministic), runs the cases it was given by id and posts the results back.
 * @module
 * @private
 */
/// <reference lib="deno.worker" />
import { openBackend } from "../../ffi/backend.ts";
import { inProcessExecutor } from "./executors.ts";
import { runCase } from "./runner.ts";
import type { CaseResult } from "./report.ts";
import { collectCases, type DeviceJob } from "./devices.ts";

self.onmessage = async (e: MessageEvent<DeviceJob>) => {
  const job = e.data;
  const results: CaseResult[] = [];
  try {
    using backend = await openBackend(job.backend);
    const st = backend.library.symbols.go_set_device(job.device);
    backend.library.check(st, "go_set_device");
    const name = `${job.backend}:${job.device}`;
    const cases = (await collectCases(job.suite, job.sample, job.seed)).filter((c) => job.ids.includes(c.id));
    for (const c of cases) {
      self.postMessage({ progress: `${name} ${c.id}` });
      const rows = await runCase(c, [{ name, exec: inProcessExecutor(backend) }], {
        model: job.model,
        workers: job.workers,
      });
      results.push(
        ...rows.map((r) => ({
          ...r,
          backend: job.backend,
          message: r.message ? `[device ${job.device}] ${r.message}` : r.message,
        })),
      );
    }
    self.postMessage({ results });
  } catch (err) {
    self.postMessage({ error: (err as Error).message, results });
  }
};
