/**
 * Evaluates a GEMM job's tiles on Deno Workers. Tiles are dealt round-robin to `workers` Workers, each posts back
 * D indices and values, and the results are concatenated in worker order. Every element is computed on its own, so
 * the bits are identical for any worker count (tested).
 *
 * @example
 * ```ts ignore
 * const res = await evaluateParallel(job, selectTiles(job.problems), 2);
 * ```
 * @module
 */
import { evaluateTiles, type Tile, type TileResults } from "../gemm/engine.ts";
import type { GemmJob } from "../gemm/job.ts";

/** Default worker count: every core the runtime reports. */
export function defaultWorkers(): number {
  return Math.max(1, navigator.hardwareConcurrency ?? 1);
}

/**
 * Evaluates tiles on Workers (or on this thread when one worker or one tile).
 * @param job the job
 * @param tiles the tiles
 * @param workers Worker count (default: all cores)
 * @returns D indices and values
 */
export async function evaluateParallel(job: GemmJob, tiles: readonly Tile[], workers?: number): Promise<TileResults> {
  const w = Math.min(workers ?? defaultWorkers(), tiles.length);
  if (!Number.isSafeInteger(w) || w < 0) {
    throw new RangeError(`Worker count must be a positive integer, got ${workers}`);
  }
  if (w <= 1) return evaluateTiles(job, tiles);
  const parts: Tile[][] = Array.from({ length: w }, () => []);
  tiles.forEach((t, i) => parts[i % w].push(t));
  const results = await Promise.all(parts.map((part) => runWorker(job, part)));
  let n = 0;
  for (const r of results) n += r.index.length;
  const index = new Int32Array(n), value = new Float64Array(n);
  let o = 0;
  for (const r of results) {
    index.set(r.index, o);
    value.set(r.value, o);
    o += r.index.length;
  }
  return { index, value };
}

function runWorker(job: GemmJob, tiles: Tile[]): Promise<TileResults> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL("./gemm_worker.ts", import.meta.url).href, { type: "module" });
    worker.onmessage = (e: MessageEvent<{ ok: true; res: TileResults } | { ok: false; message: string }>) => {
      worker.terminate();
      if (e.data.ok) resolve(e.data.res);
      else reject(new Error(`GEMM worker failed: ${e.data.message}`));
    };
    worker.onerror = (e) => {
      e.preventDefault();
      worker.terminate();
      reject(new Error(`GEMM worker failed: ${e.message}`));
    };
    worker.postMessage({ job, tiles });
  });
}
