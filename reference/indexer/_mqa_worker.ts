/// <reference lib="deno.worker" />
/**
 * Worker body of {@link ./mqa_logits_parallel.ts}: evaluates a row range of `fp8_mqa_logits` and posts the rows back.
 * @module
 */
import { Tensor } from "../tensor/tensor.ts";
import type { DType } from "../tensor/dtype.ts";
import { fp8MqaLogits, type MqaLogitsOptions } from "./mqa_logits.ts";

/** A tensor as structured clone carries it. */
export interface PlainTensor {
  dtype: DType;
  shape: number[];
  data: Tensor["data"];
}

self.onmessage = (e: MessageEvent<{ inputs: Record<string, PlainTensor>; options: MqaLogitsOptions }>) => {
  try {
    const t: Record<string, Tensor> = {};
    for (const [k, v] of Object.entries(e.data.inputs)) t[k] = Tensor.from(v.dtype, v.shape, v.data);
    const [r0, r1] = e.data.options.rows!;
    const { logits, defined } = fp8MqaLogits(
      { q: t.q, q_sf: t.q_sf, kv: t.kv, kv_sf: t.kv_sf, weights: t.weights, ks: t.ks, ke: t.ke },
      e.data.options,
    );
    const rows = logits.narrow(0, r0, r1 - r0).contiguous(), def = defined.narrow(0, r0, r1 - r0).contiguous();
    self.postMessage({ ok: true, rows: rows.data, defined: def.data });
  } catch (err) {
    self.postMessage({ ok: false, message: err instanceof Error ? err.message : String(err) });
  }
};
