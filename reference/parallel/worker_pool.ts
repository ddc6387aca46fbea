/**
 * A pool of Deno Workers that evaluate GEMM tiles. The workers are started once and reused for every chunk (and,
 * when the caller keeps the pool, for every later job); a job's operand arrays are copied once into
 * SharedArrayBuffers, so each worker sees them without a copy; tiles go out in contiguous chunks, handed to
 * whichever worker is free (a busy or slower core simply takes fewer chunks). Results come back per chunk and are
 * concatenated in chunk order, so the output never depends on timing — and every element is computed on its own,
 * so the bits equal a single thread's (tested).
 *
 * @example
 * ```ts ignore
 * const pool = new GemmWorkerPool(2);
 * try {
 *   const res = await pool.evaluate(job, selectTiles(job.problems));
 * } finally {
 *   pool.close();
 * }
 * ```
 * @module
 */
import type { Tile, TileResults } from "../gemm/engine.ts";
import type { GemmJob } from "../gemm/job.ts";

/**
 * Default worker count: every core the runtime reports.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { defaultWorkers } from "./worker_pool.ts";
 * assert.equal(defaultWorkers(), navigator.hardwareConcurrency);
 * ```
 */
export function defaultWorkers(): number {
  return Math.max(1, navigator.hardwareConcurrency ?? 1);
}

type Shareable = Uint8Array | Uint16Array | Int32Array | Float64Array;

function share<T extends Shareable>(a: T): T;
function share<T extends Shareable>(a: T | null): T | null;
function share<T extends Shareable>(a: T | null): T | null {
  if (a === null || a.buffer instanceof SharedArrayBuffer) return a;
  const ctor = a.constructor as new (b: SharedArrayBuffer) => T;
  const out = new ctor(new SharedArrayBuffer(a.byteLength));
  out.set(a as never);
  return out;
}

/** The job with its large arrays in SharedArrayBuffers (the problems' index arrays are small and cloned). */
function shareJob(job: GemmJob): GemmJob {
  return { ...job, a: share(job.a), b: share(job.b), sfa: share(job.sfa), sfb: share(job.sfb), c: share(job.c) };
}

/** Splits tiles into at most `n` contiguous, nearly equal chunks. */
function chunksOf(tiles: readonly Tile[], n: number): Tile[][] {
  const out: Tile[][] = [];
  for (let i = 0; i < n; i++) {
    const lo = Math.floor((tiles.length * i) / n), hi = Math.floor((tiles.length * (i + 1)) / n);
    if (hi > lo) out.push(tiles.slice(lo, hi));
  }
  return out;
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

type Reply =
  | { ok: true; id: number; chunk: number; res: TileResults }
  | { ok: false; id: number; chunk: number; message: string };

/**
 * A reusable set of GEMM Workers (call {@link GemmWorkerPool.close} when done: live Workers keep Deno running).
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { GemmWorkerPool } from "./worker_pool.ts";
 * const pool = new GemmWorkerPool(2);
 * assert.equal(pool.size, 2);
 * pool.close();
 * ```
 */
export class GemmWorkerPool {
  #size: number;
  #workers: Worker[] = [];
  #jobs = 0;
  #queue: Promise<unknown> = Promise.resolve();
  #closed = false;

  /**
   * @param size number of Workers (default: every core)
   * @throws RangeError unless size is a positive integer
   */
  constructor(size: number = defaultWorkers()) {
    if (!Number.isSafeInteger(size) || size < 1) {
      throw new RangeError(`Worker count must be a positive integer, got ${size}`);
    }
    this.#size = size;
  }

  /** Number of Workers the pool runs at most. */
  get size(): number {
    return this.#size;
  }

  /**
   * Evaluates tiles of a job on the pool (jobs queue up one after another).
   * @param job the job
   * @param tiles the tiles
   * @param chunksPerWorker chunks per worker (default 4: enough to balance a contended machine)
   * @returns D indices and values, in tile order
   */
  evaluate(job: GemmJob, tiles: readonly Tile[], chunksPerWorker = 4): Promise<TileResults> {
    const run = this.#queue.then(() => this.#run(job, tiles, chunksPerWorker));
    this.#queue = run.catch(() => undefined);
    return run;
  }

  /** Terminates every Worker; the pool cannot be used afterwards. */
  close(): void {
    this.#closed = true;
    for (const w of this.#workers) w.terminate();
    this.#workers = [];
  }

  #run(job: GemmJob, tiles: readonly Tile[], chunksPerWorker: number): Promise<TileResults> {
    if (this.#closed) return Promise.reject(new Error("GemmWorkerPool is closed"));
    if (tiles.length === 0) return Promise.resolve({ index: new Int32Array(0), value: new Float64Array(0) });
    const chunks = chunksOf(tiles, Math.min(tiles.length, this.#size * Math.max(1, chunksPerWorker)));
    const n = Math.min(this.#size, chunks.length);
    while (this.#workers.length < n) {
      this.#workers.push(new Worker(new URL("./gemm_worker.ts", import.meta.url).href, { type: "module" }));
    }
    const workers = this.#workers.slice(0, n);
    const id = ++this.#jobs;
    const shared = shareJob(job);
    const results: TileResults[] = new Array(chunks.length);
    return new Promise<TileResults>((resolve, reject) => {
      let next = 0, done = 0, failed = false;
      const finish = (err: Error | null) => {
        for (const w of workers) {
          w.onmessage = null;
          w.onerror = null;
          w.postMessage({ type: "drop", id });
        }
        if (err) reject(err);
        else resolve(concat(results));
      };
      const give = (w: Worker) => {
        if (next < chunks.length) {
          const c = next++;
          w.postMessage({ type: "tiles", id, chunk: c, tiles: chunks[c] });
        }
      };
      for (const w of workers) {
        w.onmessage = (e: MessageEvent<Reply>) => {
          const m = e.data;
          if (failed || m.id !== id) return; // a late reply of an earlier (failed) job
          if (!m.ok) {
            failed = true;
            finish(new Error(`GEMM worker failed: ${m.message}`));
            return;
          }
          results[m.chunk] = m.res;
          if (++done === chunks.length) finish(null);
          else give(w);
        };
        w.onerror = (e) => {
          e.preventDefault();
          if (failed) return;
          failed = true;
          finish(new Error(`GEMM worker failed: ${e.message}`));
        };
        w.postMessage({ type: "job", id, job: shared });
        give(w);
      }
    });
  }
}
