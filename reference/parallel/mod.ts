/**
 * GEMM references on Deno Workers: a reusable pool (operands shared, tiles dealt in chunks to whichever worker is
 * free) and `evaluateParallel`, which falls back to this thread when Workers cannot pay off. Bits never depend on
 * the worker count.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { GemmWorkerPool } from "./mod.ts";
 * const pool = new GemmWorkerPool(2);
 * assert.equal(pool.size, 2);
 * pool.close(); // no Worker was started: they start with the first job
 * assert.throws(() => new GemmWorkerPool(0), RangeError);
 * ```
 * @module
 */
export * from "./evaluate_parallel.ts";
export * from "./worker_pool.ts";
