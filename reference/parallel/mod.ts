/**
 * Parallel evaluation on Deno Workers: one reusable pool for every reference that runs on Workers (GEMM tiles,
 * MQA query rows), the Worker side of it, shared copies of operand arrays and the split into chunks. The folder
 * imports no reference; the references import it. Bits never depend on the worker count.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { splitRange, WorkerPool } from "./mod.ts";
 * const pool = new WorkerPool(2);
 * assert.equal(pool.size, 2);
 * pool.close(); // no Worker was started: they start with the first job
 * assert.deepEqual(splitRange(4, 2), [[0, 2], [2, 4]]);
 * ```
 * @module
 */
export * from "./worker_pool.ts";
export * from "./serve_worker.ts";
export * from "./shared_copy.ts";
export * from "./split_range.ts";
