/**
 * `fp8_mqa_logits` evaluated on the Workers of {@link WorkerPool}: query rows are cut into contiguous ranges, one per
 * Worker, and each Worker runs the same single-threaded reference on its rows. Every logit is computed on its own, so
 * the bits equal {@link fp8MqaLogits}'s for any worker count.
 * @module
 */
import { defaultWorkers, WorkerPool } from "../parallel/worker_pool.ts";
import { sharedCopy } from "../parallel/shared_copy.ts";
import { splitRange } from "../parallel/split_range.ts";
import type { DType } from "../tensor/dtype.ts";
import type { Tensor } from "../tensor/tensor.ts";
import { fp8MqaLogits, type MqaLogitsInputs, type MqaLogitsOptions, type MqaLogitsResult } from "./mqa_logits.ts";

/** A tensor as a Worker receives it (contiguous; the data in a SharedArrayBuffer). */
export interface PlainTensor {
  /** Element type. */
  dtype: DType;
  /** Shape. */
  shape: number[];
  /** Row-major storage. */
  data: Tensor["data"];
}

/** What every Worker of one call receives once: the inputs and the options (its chunks are row ranges). */
export interface MqaRowsJob {
  /** The inputs by name. */
  inputs: Record<string, PlainTensor>;
  /** The options, less the row range. */
  options: MqaLogitsOptions;
}

/** One row range's result. */
export interface MqaRows {
  /** The logits of the rows, row-major. */
  rows: Tensor["data"];
  /** 1 where a logit is defined. */
  defined: Uint8Array;
}

const MQA_WORKER = new URL("./_mqa_worker.ts", import.meta.url);

/**
 * The parallel form of {@link fp8MqaLogits}.
 * @param inputs the inputs of {@link fp8MqaLogits}
 * @param options its options (`rows` limits the query rows computed)
 * @param workers Worker count (default: the pool's size, or every core the runtime reports)
 * @param pool a pool to use (and keep) instead of a fresh one closed on return
 * @returns the logits and where they are defined
 * @example
 * ```ts ignore
 * const { logits } = await fp8MqaLogitsParallel(inputs, {}, 2);
 * ```
 */
export async function fp8MqaLogitsParallel(
  inputs: MqaLogitsInputs,
  options: MqaLogitsOptions = {},
  workers?: number,
  pool?: WorkerPool,
): Promise<MqaLogitsResult> {
  const S = inputs.q.shape[0];
  const [r0, r1] = options.rows ?? [0, S];
  const w = Math.min(workers ?? pool?.size ?? defaultWorkers(), Math.max(1, r1 - r0));
  if (!Number.isSafeInteger(w) || w < 1) {
    throw new RangeError(`Worker count must be a positive integer, got ${workers}`);
  }
  // Validates everything (and allocates the output) on this thread: errors surface here, not in a Worker.
  const out = fp8MqaLogits(inputs, { ...options, rows: [r0, r0] });
  if (w <= 1) return fp8MqaLogits(inputs, { ...options, rows: [r0, r1] });
  const plain: Record<string, PlainTensor> = {};
  for (const [k, v] of Object.entries(inputs)) {
    if (v === undefined) continue; // optional inputs (q_sf of the FP8 path)
    const c = (v as Tensor).contiguous();
    plain[k] = { dtype: c.dtype, shape: [...c.shape], data: sharedCopy(c.data) };
  }
  const ranges = splitRange(r1 - r0, w).map(([a, b]): [number, number] => [r0 + a, r0 + b]);
  const own = pool ?? new WorkerPool(w);
  let parts: MqaRows[];
  try {
    parts = await own.run<MqaRowsJob, [number, number], MqaRows>({
      script: MQA_WORKER,
      name: "MQA",
      job: { inputs: plain, options },
      chunks: ranges,
    });
  } finally {
    if (pool === undefined) own.close();
  }
  const width = out.logits.shape[1], stride = out.logits.strides[0];
  // deno-lint-ignore no-explicit-any
  const data = out.logits.data as any, def = out.defined.data as Uint8Array;
  ranges.forEach(([a, b], i) => {
    for (let r = a; r < b; r++) {
      for (let c = 0; c < width; c++) data[out.logits.offset + r * stride + c] = parts[i].rows[(r - a) * width + c];
    }
    def.set(parts[i].defined, a * width);
  });
  return out;
}
