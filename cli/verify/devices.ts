/**
 * Spreads `verify`'s cases over every visible GPU: one Worker per device, cases dealt round-robin, results merged
 * back in case order (issue: every visible GPU). Also the case collection shared by the main thread and the workers.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { dealRoundRobin } from "./devices.ts";
 * assert.deepEqual(dealRoundRobin(["a", "b", "c"], 2), [["a", "c"], ["b"]]);
 * ```
 * @module
 */
import { loadFixtures } from "../../fixtures/fixture_files.ts";
import type { CaseResult } from "./report.ts";
import type { VerifyCase } from "./runner.ts";
import { deepseekV3FullSuite, deepseekV3Suite, edgeSuite } from "./suites.ts";

/** What a device worker is asked to do. */
export interface DeviceJob {
  backend: string;
  device: number;
  ids: string[];
  suite: string;
  sample: number;
  seed: number;
  model?: string;
  /** Reference Workers of this device's worker (the machine's cores shared among the devices). */
  workers?: number;
}

/** Deals items to `n` hands in turn. */
export function dealRoundRobin<T>(items: readonly T[], n: number): T[][] {
  const hands: T[][] = Array.from({ length: n }, () => []);
  items.forEach((x, i) => hands[i % n].push(x));
  return hands;
}

/**
 * Every case of the chosen suite (`default` = fixtures and edge; `all` = fixtures, edge and deepseek-v3, not the
 * real-M table, which only `deepseek-v3-full` selects), in a fixed order.
 * @param suite default | fixtures | edge | deepseek-v3 | deepseek-v3-full | all
 * @param sample tile fraction of the DeepSeek-V3 shapes
 * @param seed added to the generated cases' ids (0: the recorded inputs)
 */
export async function collectCases(suite: string, sample: number, seed: number): Promise<VerifyCase[]> {
  const out: VerifyCase[] = [];
  const want = (s: string) =>
    suite === "all" || suite === s || (suite === "default" && (s === "fixtures" || s === "edge"));
  if (want("fixtures")) {
    for (const f of await loadFixtures()) {
      out.push({
        id: `fixtures/${f.id}`,
        op: f.op,
        layout: f.layout,
        suite: "fixtures",
        expected: f.outputs,
        build: () => ({ inputs: f.inputs, scalars: f.scalars as Record<string, unknown> }),
      });
    }
  }
  if (want("edge")) out.push(...edgeSuite(seed));
  if (want("deepseek-v3")) out.push(...deepseekV3Suite(sample, seed));
  if (suite === "deepseek-v3-full") out.push(...deepseekV3FullSuite(sample, seed));
  return out;
}

/**
 * Runs cases on `devices` GPUs of a backend, one Worker each; resolves to the results in the order of `cases`.
 * @param job everything but the device and the ids
 * @param cases the cases to spread
 * @param devices number of devices
 * @param progress called with one line per case started
 */
export async function runOnDevices(
  job: Omit<DeviceJob, "device" | "ids">,
  cases: readonly VerifyCase[],
  devices: number,
  progress: (line: string) => void,
): Promise<CaseResult[]> {
  const hands = dealRoundRobin(cases.map((c) => c.id), devices);
  const parts = await Promise.all(hands.map((ids, device) =>
    new Promise<CaseResult[]>((resolve, reject) => {
      if (ids.length === 0) return resolve([]);
      const w = new Worker(new URL("./_device_worker.ts", import.meta.url), { type: "module" });
      w.onmessage = (e) => {
        const m = e.data as { progress?: string; results?: CaseResult[]; error?: string };
        if (m.progress) return progress(m.progress);
        w.terminate();
        if (m.error) reject(new Error(`device ${device}: ${m.error}`));
        else resolve(m.results ?? []);
      };
      w.onerror = (e) => {
        e.preventDefault();
        w.terminate();
        reject(new Error(`device ${device}: ${e.message}`));
      };
      const workers = job.workers ?? Math.max(1, Math.floor(navigator.hardwareConcurrency / devices));
      w.postMessage({ ...job, device, ids, workers } satisfies DeviceJob);
    })
  ));
  const byId = new Map<string, CaseResult[]>();
  for (const part of parts) for (const r of part) byId.set(r.id, [...(byId.get(r.id) ?? []), r]);
  return cases.flatMap((c) => byId.get(c.id) ?? []);
}
