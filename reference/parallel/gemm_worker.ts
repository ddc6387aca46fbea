/**
 * Worker entry of {@link ./worker_pool.ts}: keeps the jobs it is sent (operands in SharedArrayBuffers), evaluates
 * the tile chunks it is given and posts back D indices and values (transferred, not copied).
 * @module
 */
import { evaluateTiles, type Tile } from "../gemm/engine.ts";
import type { GemmJob } from "../gemm/job.ts";

type Message =
  | { type: "job"; id: number; job: GemmJob }
  | { type: "drop"; id: number }
  | { type: "tiles"; id: number; chunk: number; tiles: Tile[] };

const jobs = new Map<number, GemmJob>();
// deno-lint-ignore no-explicit-any
const scope = self as any;
scope.onmessage = (e: MessageEvent<Message>) => {
  const m = e.data;
  if (m.type === "job") {
    jobs.set(m.id, m.job);
    return;
  }
  if (m.type === "drop") {
    jobs.delete(m.id);
    return;
  }
  try {
    const job = jobs.get(m.id);
    if (job === undefined) throw new Error(`no job ${m.id} on this worker`);
    const res = evaluateTiles(job, m.tiles);
    scope.postMessage({ ok: true, id: m.id, chunk: m.chunk, res }, [res.index.buffer, res.value.buffer]);
  } catch (err) {
    scope.postMessage({
      ok: false,
      id: m.id,
      chunk: m.chunk,
      message: err instanceof Error ? err.message : String(err),
    });
  }
};
