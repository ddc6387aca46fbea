/**
 * `fp8_mqa_logits` evaluated on Deno Workers: query rows are cut into contiguous ranges, one per Worker, each Worker
 * runs the same single-threaded reference on its rows. Every logit is computed on its own, so the bits equal
 * {@link fp8MqaLogits}'s for any worker count.
 * @module
 */
import type { Tensor } from "../tensor/tensor.ts";
import { fp8MqaLogits, type MqaLogitsInputs, type MqaLogitsOptions, type MqaLogitsResult } from "./mqa_logits.ts";

/**
 * The parallel form of {@link fp8MqaLogits}.
 * @param workers Worker count (default: every core the runtime reports)
 * @example
 * ```ts ignore
 * const { logits } = await fp8MqaLogitsParallel(inputs, {}, 2);
 * ```
 */
export async function fp8MqaLogitsParallel(
  inputs: MqaLogitsInputs,
  options: MqaLogitsOptions = {},
  workers?: number,
): Promise<MqaLogitsResult> {
  const S = inputs.q.shape[0];
  const [r0, r1] = options.rows ?? [0, S];
  const w = Math.min(workers ?? Math.max(1, navigator.hardwareConcurrency ?? 1), Math.max(1, r1 - r0));
  if (!Number.isSafeInteger(w) || w < 1) {
    throw new RangeError(`Worker count must be a positive integer, got ${workers}`);
  }
  // Validates everything (and allocates the output) on this thread: errors surface here, not in a Worker.
  const out = fp8MqaLogits(inputs, { ...options, rows: [r0, r0] });
  if (w <= 1) return fp8MqaLogits(inputs, { ...options, rows: [r0, r1] });
  const plain: Record<string, { dtype: string; shape: number[]; data: Tensor["data"] }> = {};
  for (const [k, v] of Object.entries(inputs)) {
    if (v === undefined) continue; // optional inputs (q_sf of the FP8 path)
    const c = (v as Tensor).contiguous();
    plain[k] = { dtype: c.dtype, shape: [...c.shape], data: c.data };
  }
  const n = r1 - r0, ranges: [number, number][] = [];
  for (let i = 0; i < w; i++) ranges.push([r0 + Math.floor(n * i / w), r0 + Math.floor(n * (i + 1) / w)]);
  const parts = await Promise.all(
    ranges.map((rows) =>
      new Promise<{ rows: Tensor["data"]; defined: Uint8Array }>((resolve, reject) => {
        const worker = new Worker(new URL("./_mqa_worker.ts", import.meta.url).href, { type: "module" });
        worker.onmessage = (e) => {
          worker.terminate();
          if (e.data.ok) resolve(e.data);
          else reject(new Error(`MQA worker failed: ${e.data.message}`));
        };
        worker.onerror = (e) => {
          e.preventDefault();
          worker.terminate();
          reject(new Error(`MQA worker failed: ${e.message}`));
        };
        worker.postMessage({ inputs: plain, options: { ...options, rows } });
      })
    ),
  );
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
