/**
 * A GEMM job's tiles evaluated on the Workers of {@link WorkerPool} or, when that cannot pay off, on this thread.
 * The job's operand arrays are copied once into SharedArrayBuffers, the tiles go out in contiguous chunks and the
 * results come back in chunk order; every element is computed on its own, so the bits equal a single thread's for
 * any worker count (tested).
 *
 * @example
 * ```ts ignore
 * const res = await evaluateParallel(job, selectTiles(job.problems), 2);
 * ```
 * @module
 */
import { defaultWorkers, WorkerPool } from "../parallel/worker_pool.ts";
import { sharedCopy } from "../parallel/shared_copy.ts";
import { splitRange } from "../parallel/split_range.ts";
import { evaluateTiles, TILE, type Tile, type TileResults } from "./engine.ts";
import type { GemmJob } from "./job.ts";

/**
 * Below this many multiply-adds a job runs on this thread unless a worker count is asked for: starting Workers and
 * loading the engine in each costs tens of milliseconds, about what one core does with 10⁷ multiply-adds.
 */
export const MIN_PARALLEL_MACS = 5e7;

const GEMM_WORKER = new URL("./gemm_worker.ts", import.meta.url);

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

/** The job with its large arrays in SharedArrayBuffers (the problems' index arrays are small and cloned). */
function shareJob(job: GemmJob): GemmJob {
  return {
    ...job,
    a: sharedCopy(job.a),
    b: sharedCopy(job.b),
    sfa: sharedCopy(job.sfa),
    sfb: sharedCopy(job.sfb),
    c: sharedCopy(job.c),
  };
}

function concat(parts: readonly TileResults[]): TileResults {
  let n = 0;
  for (const r of parts) n += r.index.length;
  const index = new Int32Array(n), value = new Float64Array(n);
  let o = 0;
  for (const r of parts) {
    index.set(r.index, o);
    value.set(r.value, o);
    o += r.index.length;
  }
  return { index, value };
}

/**
 * Evaluates tiles of a job on a pool's Workers (jobs queue up one after another on the pool).
 * @param pool the pool
 * @param job the job
 * @param tiles the tiles
 * @param chunksPerWorker chunks per worker (default 4: enough to balance a contended machine)
 * @returns D indices and values, in tile order
 */
export async function evaluateOnPool(
  pool: WorkerPool,
  job: GemmJob,
  tiles: readonly Tile[],
  chunksPerWorker = 4,
): Promise<TileResults> {
  const ranges = splitRange(tiles.length, Math.min(tiles.length, pool.size * Math.max(1, chunksPerWorker)));
  const parts = await pool.run<GemmJob, Tile[], TileResults>({
    script: GEMM_WORKER,
    name: "GEMM",
    job: ranges.length === 0 ? job : shareJob(job),
    chunks: ranges.map(([lo, hi]) => tiles.slice(lo, hi)),
  });
  return concat(parts);
}

/**
 * A {@link WorkerPool} with a GEMM method (call {@link WorkerPool.close} when done: live Workers keep Deno running).
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { GemmWorkerPool } from "./evaluate_parallel.ts";
 * const pool = new GemmWorkerPool(2);
 * assert.equal(pool.size, 2);
 * pool.close();
 * ```
 */
export class GemmWorkerPool extends WorkerPool {
  /**
   * Evaluates tiles of a job on the pool ({@link evaluateOnPool}).
   * @param job the job
   * @param tiles the tiles
   * @param chunksPerWorker chunks per worker (default 4)
   * @returns D indices and values, in tile order
   */
  evaluate(job: GemmJob, tiles: readonly Tile[], chunksPerWorker = 4): Promise<TileResults> {
    return evaluateOnPool(this, job, tiles, chunksPerWorker);
  }
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
 * import { selectTiles } from "./engine.ts";
 * import { planNormal } from "./normal_gemm.ts";
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
  pool?: WorkerPool,
): Promise<TileResults> {
  if (workers !== undefined && (!Number.isSafeInteger(workers) || workers < 1)) {
    throw new RangeError(`Worker count must be a positive integer, got ${workers}`);
  }
  const w = Math.min(workers ?? pool?.size ?? defaultWorkers(), tiles.length);
  if (w <= 1 || (workers === undefined && pool === undefined && macs(job, tiles) < MIN_PARALLEL_MACS)) {
    return evaluateTiles(job, tiles);
  }
  if (pool) return await evaluateOnPool(pool, job, tiles);
  const own = new WorkerPool(w);
  try {
    return await evaluateOnPool(own, job, tiles);
  } finally {
    own.close();
  }
}
