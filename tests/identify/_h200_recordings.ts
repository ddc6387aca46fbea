/**
 * Test helpers: the outputs of DeepGEMM's own kernels recorded on an H200 (tests/indexer/gpu_probe and
 * tests/hyperconnection/gpu_probe; see the tests there for the provenance) as (op, inputs, scalars, actual outputs),
 * the form `identify` takes. Entries the kernel leaves undefined are zero: the reference's `logits_defined` mask
 * leaves them out of every comparison.
 * @module
 * @private
 */
import { getPagedMqaLogitsMetadata } from "../../reference/indexer/mod.ts";
import { Tensor } from "../../reference/tensor/tensor.ts";

/** One recorded run. */
export interface Recording {
  op: string;
  inputs: Record<string, Tensor>;
  scalars: Record<string, unknown>;
  actual: Record<string, Tensor>;
  /** Recorded output elements. */
  recorded: number;
}

function reader(path: string, header: number) {
  const buf = Deno.readFileSync(new URL(path, import.meta.url));
  const head = new Uint32Array(buf.buffer, 0, header);
  let o = header * 4;
  return { head, take: (n: number) => buf.slice(o, o += n) };
}

/** `sm90_fp8_mqa_logits` (gpu_probe/deepgemm_mqa_run.cu): 6 query rows, their in-range logits. */
export function mqaRecording(name: "mqa_h64_d128" | "mqa_h32_d64"): Recording {
  const { head, take } = reader(`../indexer/gpu_probe/h200_deepgemm_${name}.bin`, 4);
  const [R, K, H, D] = head;
  const q = take(R * H * D), kv = take(K * D);
  const sf = new Float32Array(take(K * 4).buffer), w = new Float32Array(take(R * H * 4).buffer);
  const ks = new Int32Array(take(R * 4).buffer), ke = new Int32Array(take(R * 4).buffer);
  const n = ke.reduce((a, e, i) => a + e - ks[i], 0);
  const gpu = new Float32Array(take(n * 4).buffer);
  const logits = new Float32Array(R * K);
  for (let i = 0, p = 0; i < R; i++) for (let j = ks[i]; j < ke[i]; j++) logits[i * K + j] = gpu[p++];
  return {
    op: "fp8_mqa_logits",
    inputs: {
      q: Tensor.from("e4m3", [R, H, D], q),
      kv: Tensor.from("e4m3", [K, D], kv),
      kv_sf: Tensor.from("f32", [K], sf),
      weights: Tensor.from("f32", [R, H], w),
      cu_seq_len_k_start: Tensor.from("i32", [R], ks),
      cu_seq_len_k_end: Tensor.from("i32", [R], ke),
    },
    scalars: { clean_logits: false },
    actual: { logits: Tensor.from("f32", [R, K], logits) },
    recorded: n,
  };
}

/** The SM90 metadata + paged MQA kernels (gpu_probe/deepgemm_paged_run.cu): logits with p < context_lens. */
export function pagedRecording(): Recording {
  const { head, take } = reader("../indexer/gpu_probe/h200_deepgemm_paged.bin", 8);
  const [B, N, H, D, blocks, maxBlocks, maxCtx, stride] = head;
  const q = take(B * N * H * D), cache = take(blocks * 64 * (D + 4));
  const w = new Float32Array(take(B * N * H * 4).buffer);
  const ctx = new Int32Array(take(B * N * 4).buffer), table = new Int32Array(take(B * maxBlocks * 4).buffer);
  const recorded = new Float32Array(take(B * N * stride * 4).buffer);
  const logits = new Float32Array(B * N * maxCtx);
  let n = 0;
  for (let r = 0; r < B * N; r++) {
    for (let p = 0; p < ctx[r]; p++, n++) logits[r * maxCtx + p] = recorded[r * stride + p];
  }
  const context_lens = Tensor.from("i32", [B, N], ctx);
  return {
    op: "fp8_paged_mqa_logits",
    inputs: {
      q: Tensor.from("e4m3", [B, N, H, D], q),
      kv_cache: Tensor.from("u8", [blocks, 64, 1, D + 4], cache),
      weights: Tensor.from("f32", [B * N, H], w),
      context_lens,
      block_table: Tensor.from("i32", [B, maxBlocks], table),
      schedule_meta: getPagedMqaLogitsMetadata(context_lens, 64, 132),
    },
    scalars: { max_context_len: maxCtx },
    actual: { logits: Tensor.from("f32", [B * N, maxCtx], logits) },
    recorded: n,
  };
}

/** `tf32_hc_prenorm_gemm` (gpu_probe/deepgemm_hc_run.cu): D and sqr_sum in full. */
export function hcRecording(): Recording {
  const { head, take } = reader("../hyperconnection/gpu_probe/h200_deepgemm_hc.bin", 3);
  const [M, N, K] = head;
  const a = Tensor.from("bf16", [M, K], new Uint16Array(take(M * K * 2).buffer));
  const b = Tensor.from("f32", [N, K], new Float32Array(take(N * K * 4).buffer));
  const d = Tensor.from("f32", [M, N], new Float32Array(take(M * N * 4).buffer));
  const sqr_sum = Tensor.from("f32", [M], new Float32Array(take(M * 4).buffer));
  return { op: "tf32_hc_prenorm_gemm", inputs: { a, b }, scalars: {}, actual: { d, sqr_sum }, recorded: M * N + M };
}
