/**
 * The Worker side of {@link WorkerPool}: a worker module calls {@link serveWorker} once with its evaluation function;
 * the pool then sends each job once (`job`), its chunks one at a time (`chunk`), and `drop` when the job is done.
 * Every reply names the job and the chunk, so results are put back in chunk order whatever the timing.
 *
 * @example
 * ```ts ignore
 * // my_worker.ts, started by WorkerPool.run({ script: new URL("./my_worker.ts", import.meta.url), ... })
 * serveWorker((job: { scale: number }, chunk: number[]) => chunk.map((x) => x * job.scale));
 * ```
 * @module
 */

/** What the pool sends a Worker. */
export type PoolMessage<J, C> =
  | { type: "job"; id: number; job: J }
  | { type: "drop"; id: number }
  | { type: "chunk"; id: number; chunk: number; item: C };

/** What a Worker replies to a chunk. */
export type PoolReply<R> =
  | { ok: true; id: number; chunk: number; res: R }
  | { ok: false; id: number; chunk: number; message: string };

/** The part of a Worker's global scope this module uses. */
interface WorkerScope {
  onmessage: ((e: MessageEvent) => void) | null;
  postMessage(message: unknown, transfer?: Transferable[]): void;
}

/**
 * Serves a pool's jobs on this Worker: keeps each job it is sent, evaluates the chunks it is given and posts back the
 * results (or the error's message).
 * @param evaluate computes one chunk's result from the job and the chunk
 * @param transfer the buffers of a result to transfer rather than copy (default: none)
 */
export function serveWorker<J, C, R>(
  evaluate: (job: J, chunk: C) => R,
  transfer: (res: R) => Transferable[] = () => [],
): void {
  const jobs = new Map<number, J>();
  const scope = globalThis as unknown as WorkerScope;
  scope.onmessage = (e: MessageEvent<PoolMessage<J, C>>) => {
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
      if (!jobs.has(m.id)) throw new Error(`no job ${m.id} on this worker`);
      const res = evaluate(jobs.get(m.id)!, m.item);
      const reply: PoolReply<R> = { ok: true, id: m.id, chunk: m.chunk, res };
      scope.postMessage(reply, transfer(res));
    } catch (err) {
      const reply: PoolReply<R> = {
        ok: false,
        id: m.id,
        chunk: m.chunk,
        message: err instanceof Error ? err.message : String(err),
      };
      scope.postMessage(reply);
    }
  };
}
