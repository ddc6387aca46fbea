/**
 * A pool of Deno Workers, the one every parallel reference runs on (GEMM tiles, MQA query rows). Workers are started
 * once per worker module and reused for every chunk and every later job while the caller keeps the pool; a job is
 * sent once to each Worker that takes part (arrays in SharedArrayBuffers are shared, not copied), its chunks are
 * handed one at a time to whichever Worker is free (a busy or slower core simply takes fewer), and the results come
 * back in chunk order, so the output never depends on timing. Jobs queue up one after another.
 *
 * The worker modules call {@link serveWorker}; this folder imports no reference, so every reference can use it.
 *
 * @example
 * ```ts ignore
 * const pool = new WorkerPool(2);
 * try {
 *   const parts = await pool.run({ script: new URL("./my_worker.ts", import.meta.url), name: "demo", job, chunks });
 * } finally {
 *   pool.close();
 * }
 * ```
 * @module
 */
import type { PoolReply } from "./serve_worker.ts";

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

/** One job for {@link WorkerPool.run}. */
export interface WorkerTask<J, C> {
  /** The worker module (it calls `serveWorker`); the pool keeps a set of Workers per module. */
  readonly script: URL;
  /** What the Workers compute, for error messages (`GEMM` gives "GEMM worker failed: ..."). */
  readonly name: string;
  /** Sent once to each Worker that takes part. */
  readonly job: J;
  /** The chunks, each evaluated on its own by one Worker. */
  readonly chunks: readonly C[];
}

/**
 * A reusable set of Workers (call {@link WorkerPool.close} when done: live Workers keep Deno running).
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { WorkerPool } from "./worker_pool.ts";
 * const pool = new WorkerPool(2);
 * assert.equal(pool.size, 2);
 * pool.close(); // no Worker was started: they start with the first job
 * assert.throws(() => new WorkerPool(0), RangeError);
 * ```
 */
export class WorkerPool {
  #size: number;
  #workers = new Map<string, Worker[]>();
  #jobs = 0;
  #queue: Promise<unknown> = Promise.resolve();
  #closed = false;

  /**
   * A pool of at most `size` Workers per worker module; none is started before the first job.
   * @param size number of Workers per worker module (default: every core)
   * @throws RangeError unless size is a positive integer
   */
  constructor(size: number = defaultWorkers()) {
    if (!Number.isSafeInteger(size) || size < 1) {
      throw new RangeError(`Worker count must be a positive integer, got ${size}`);
    }
    this.#size = size;
  }

  /** Number of Workers the pool runs at most (per worker module). */
  get size(): number {
    return this.#size;
  }

  /**
   * Evaluates every chunk of a job on the pool's Workers of `task.script`.
   * @param task the worker module, a name for messages, the job and its chunks
   * @returns one result per chunk, in chunk order
   */
  run<J, C, R>(task: WorkerTask<J, C>): Promise<R[]> {
    const run = this.#queue.then(() => this.#run<J, C, R>(task));
    this.#queue = run.catch(() => undefined);
    return run;
  }

  /** Terminates every Worker; the pool cannot be used afterwards. */
  close(): void {
    this.#closed = true;
    for (const set of this.#workers.values()) for (const w of set) w.terminate();
    this.#workers.clear();
  }

  #run<J, C, R>(task: WorkerTask<J, C>): Promise<R[]> {
    if (this.#closed) return Promise.reject(new Error("WorkerPool is closed"));
    const { chunks, name } = task;
    if (chunks.length === 0) return Promise.resolve([]);
    const n = Math.min(this.#size, chunks.length);
    const key = task.script.href;
    const set = this.#workers.get(key) ?? [];
    this.#workers.set(key, set);
    while (set.length < n) set.push(new Worker(key, { type: "module" }));
    const workers = set.slice(0, n);
    const id = ++this.#jobs;
    const results: R[] = new Array(chunks.length);
    return new Promise<R[]>((resolve, reject) => {
      let next = 0, done = 0, failed = false;
      const finish = (err: Error | null) => {
        for (const w of workers) {
          w.onmessage = null;
          w.onerror = null;
          w.postMessage({ type: "drop", id });
        }
        if (err) reject(err);
        else resolve(results);
      };
      const give = (w: Worker) => {
        if (next < chunks.length) {
          const c = next++;
          w.postMessage({ type: "chunk", id, chunk: c, item: chunks[c] });
        }
      };
      for (const w of workers) {
        w.onmessage = (e: MessageEvent<PoolReply<R>>) => {
          const m = e.data;
          if (failed || m.id !== id) return; // a late reply of an earlier (failed) job
          if (!m.ok) {
            failed = true;
            finish(new Error(`${name} worker failed: ${m.message}`));
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
          finish(new Error(`${name} worker failed: ${e.message}`));
        };
        w.postMessage({ type: "job", id, job: task.job });
        give(w);
      }
    });
  }
}
