import assert from "node:assert/strict";
import { getPagedMqaLogitsMetadata } from "../../reference/indexer/mod.ts";
import { Tensor } from "../../reference/tensor/tensor.ts";

/**
 * Schedules written by DeepGEMM's own `sm90_paged_mqa_logits_metadata` kernel on an H200 (gpu_probe/
 * deepgemm_metadata_run.cu; DeepGEMM 54e2261, CUDA 13.0, 2026-11-29) for B ∈ {1, 7, 256}, next_n ∈ {1, 2},
 * SMs ∈ {3, 78, 132}.
 */
function cases() {
  const buf = Deno.readFileSync(new URL("./gpu_probe/h200_deepgemm_metadata.bin", import.meta.url));
  const u = new Int32Array(buf.buffer);
  const out: { B: number; nextN: number; sms: number; ctx: Int32Array; meta: Int32Array }[] = [];
  for (let o = 0; o < u.length;) {
    const [B, nextN, sms] = [u[o], u[o + 1], u[o + 2]];
    o += 3;
    const ctx = u.slice(o, o += B * nextN), meta = u.slice(o, o += (sms + 1) * 2);
    out.push({ B, nextN, sms, ctx, meta });
  }
  return out;
}

Deno.test("getPagedMqaLogitsMetadata() against DeepGEMM's SM90 kernel on an H200", async (t) => {
  const all = cases();
  await t.step("covers 18 (B, next_n, SMs) combinations", () => assert.equal(all.length, 18));
  for (const c of all) {
    await t.step(`equals the kernel's schedule for B = ${c.B}, next_n = ${c.nextN}, ${c.sms} SMs`, () => {
      const m = getPagedMqaLogitsMetadata(Tensor.from("i32", [c.B, c.nextN], c.ctx), 64, c.sms);
      assert.deepEqual(Array.from(m.data as Int32Array), Array.from(c.meta));
    });
  }
});
