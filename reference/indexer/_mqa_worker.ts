/**
 * Worker entry of {@link ./mqa_logits_parallel.ts}: evaluates a row range of `fp8_mqa_logits` per chunk and posts the
 * rows back.
 * @module
 */
import { serveWorker } from "../parallel/serve_worker.ts";
import { Tensor } from "../tensor/tensor.ts";
import { fp8MqaLogits } from "./mqa_logits.ts";
import type { MqaRows, MqaRowsJob } from "./mqa_logits_parallel.ts";

serveWorker<MqaRowsJob, [number, number], MqaRows>((job, [r0, r1]) => {
  const t: Record<string, Tensor> = {};
  for (const [k, v] of Object.entries(job.inputs)) t[k] = Tensor.from(v.dtype, v.shape, v.data);
  const { logits, defined } = fp8MqaLogits(
    { q: t.q, q_sf: t.q_sf, kv: t.kv, kv_sf: t.kv_sf, weights: t.weights, ks: t.ks, ke: t.ke },
    { ...job.options, rows: [r0, r1] },
  );
  const rows = logits.narrow(0, r0, r1 - r0).contiguous(), def = defined.narrow(0, r0, r1 - r0).contiguous();
  return { rows: rows.data, defined: def.data as Uint8Array };
});
