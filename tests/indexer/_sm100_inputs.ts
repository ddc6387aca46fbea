import { Prng } from "../../reference/random/prng.ts";
import { Tensor } from "../../reference/tensor/tensor.ts";
import { bf16Rne } from "../../reference/fp32.ts";
import { perTokenCastToFp4 } from "../../reference/quant/fp4_casts.ts";
import { randomF32 } from "./_helpers.ts";

/** Rows of random values with per-row magnitudes 2^-12 … 2^7 (so the UE8M0 scales vary widely). */
export function randomRows(rng: Prng, rows: number, D: number): Tensor {
  const x = new Float32Array(rows * D);
  for (let r = 0; r < rows; r++) {
    const mag = 2 ** (rng.int(20) - 12);
    for (let d = 0; d < D; d++) x[r * D + d] = Math.fround(rng.normal() * mag * (rng.int(8) === 0 ? 0 : 1));
  }
  return Tensor.from("f32", [rows, D], x);
}

/** `per_token_cast_to_fp4(x, use_ue8m0=True, gran_k=32, use_packed_ue8m0=True)` of random rows. */
export function fp4Rows(rng: Prng, rows: number, D: number): { q: Tensor; sf: Tensor } {
  const r = perTokenCastToFp4(randomRows(rng, rows, D), { useUe8m0: true, granK: 32, usePackedUe8m0: true });
  return { q: r.q, sf: r.sf };
}

/** SM100 FP4 MQA inputs (weights f32 or bf16). */
export function fp4MqaInputs(
  seed: number,
  S: number,
  H: number,
  D: number,
  Skv: number,
  ks: number[],
  ke: number[],
  weights: "f32" | "bf16" = "f32",
) {
  const rng = new Prng(seed);
  const q = fp4Rows(rng, S * H, D), kv = fp4Rows(rng, Skv, D);
  const wf = randomF32(rng, S * H, -3, 2);
  return {
    q: q.q.reshape([S, H, D / 2]),
    q_sf: q.sf.reshape([S, H]),
    kv: kv.q,
    kv_sf: kv.sf.reshape([Skv]),
    weights: weights === "f32"
      ? Tensor.from("f32", [S, H], wf)
      : Tensor.from("bf16", [S, H], Uint16Array.from(wf, (v) => bf16Rne(v))),
    ks: Tensor.from("i32", [S], Int32Array.from(ks)),
    ke: Tensor.from("i32", [S], Int32Array.from(ke)),
  };
}

/** Scale bytes of a packed UE8M0 word (byte k = scale of elements 32k …). */
export function scaleBytes(word: number): number[] {
  return [0, 1, 2, 3].map((k) => (word >>> (8 * k)) & 0xff);
}
