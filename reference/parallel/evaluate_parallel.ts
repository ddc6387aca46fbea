/**
 * Evaluates a GEMM job's tiles on Workers ({@link GemmWorkerPool}) or, when that cannot pay off, on this thread.
 * Every element is computed on its own, so the bits are identical for any worker count (tested).
 *
 * @example
 * ```ts ignore
 * const res = await evaluateParallel(job, selectTiles(job.problems), 2);
 * ```
 * @module
 */
import { evaluateTiles, TILE, type Tile, type TileResults } from "../gemm/engine.ts";
import type { GemmJob } from "../gemm/job.ts";
import { defaultWorkers, GemmWorkerPool } from "./worker_pool.ts";

export { defaultWorkers, GemmWorkerPool } from "./worker_pool.ts";

/**
 * Below this many multiply-adds a job runs on this thread unless a worker count is asked for: starting Workers and
 * loading the engine in each costs tens of milliseconds, about what one core does with 10⁷ multiply-adds.
 */
export const MIN_PARALLEL_MACS = 5e7;

function macs(job: GemmJob, tiles: readonly Tile[]): number {
  let n = 0;
  for (const [pi, ti, tj] of tiles) {
    const p = job.problems[pi];
    n += (Math.min(p.aOff.length, (ti + 1) * TILE) - ti * TILE) *
      (Math.min(p.bOff.length, (tj + 1) * TILE) - tj * TILE) *
      p.K;
  }
  return n;
}

/**
 * Evaluates tiles on Workers (or on this thread for one worker, one tile, or — with the default worker count — a
 * job below {@link MIN_PARALLEL_MACS}).
 * @param job the job
 * @param tiles the tiles
 * @param workers Worker count (default: all cores)
 * @param pool a pool to use (and keep) instead of a fresh one closed on return
 * @returns D indices and values
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Tensor } from "../tensor/tensor.ts";
 * import { selectTiles } from "../gemm/engine.ts";
 * import { planNormal } from "../gemm/normal_gemm.ts";
 * import { evaluateParallel } from "./evaluate_parallel.ts";
 * const A = Tensor.from("bf16", [1, 2], new Uint16Array([0x3f80, 0x4000]));
 * const B = Tensor.from("bf16", [1, 2], new Uint16Array([0x4040, 0x3f80]));
 * const { job } = planNormal({
 *   op: "demo", A, B, sfa: null, sfb: null, c: null, d: null, scalars: {}, options: {}, kind: "bf16",
 * });
 * // One worker (or a small job) runs on this thread, with the bits of every other worker count.
 * const res = await evaluateParallel(job!, selectTiles(job!.problems), 1);
 * assert.deepEqual([...res.value], [5]);
 * ```
 */
export async function evaluateParallel(
  job: GemmJob,
  tiles: readonly Tile[],
  workers?: number,
  pool?: GemmWorkerPool,
): Promise<TileResults> {
  if (workers !== undefined && (!Number.isSafeInteger(workers) || workers < 1)) {
    throw new RangeError(`Worker count must be a positive integer, got ${workers}`);
  }
  const w = Math.min(workers ?? pool?.size ?? defaultWorkers(), tiles.length);
  if (w <= 1 || (workers === undefined && pool === undefined && macs(job, tiles) < MIN_PARALLEL_MACS)) {
    return evaluateTiles(job, tiles);
  }
  if (pool) return await pool.evaluate(job, tiles);
  const own = new GemmWorkerPool(w);
  try {
    return await own.evaluate(job, tiles);
  } finally {
    own.close();
  }
}
