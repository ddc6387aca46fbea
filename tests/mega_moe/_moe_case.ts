import { Prng } from "../../reference/random/prng.ts";
import { Tensor } from "../../reference/tensor/tensor.ts";
import { bf16Rne } from "../../reference/fp32.ts";

/** A small FP8×FP4 Mega MoE problem; scales near 2^0 so the GEMM outputs stay in range. */
export function fp8Case(seed: number, T: number, E: number, topk: number, idx: number[], hidden = 128, I = 128) {
  const rng = new Prng(seed);
  const bytes = (n: number, f: () => number) => Uint8Array.from({ length: n }, f);
  const e4m3 = () => (rng.int(2) << 7) | ((1 + rng.int(9)) << 3) | rng.int(8);
  return {
    x: Tensor.from("e4m3", [T, hidden], bytes(T * hidden, e4m3)),
    x_sf: Tensor.from("u8", [T, hidden / 32], bytes(T * hidden / 32, () => 122 + rng.int(4))),
    topk_idx: Tensor.from("i64", [T, topk], BigInt64Array.from(idx, BigInt)),
    topk_weights: Tensor.from("f32", [T, topk], Float32Array.from({ length: T * topk }, () => 0.1 + rng.uniform())),
    l1: Tensor.from("u8", [E, 2 * I, hidden / 2], bytes(E * 2 * I * hidden / 2, () => rng.int(256))),
    l1_sf: Tensor.from("u8", [E, 2 * I, hidden / 32], bytes(E * 2 * I * hidden / 32, () => 119 + rng.int(4))),
    l2: Tensor.from("u8", [E, hidden, I / 2], bytes(E * hidden * I / 2, () => rng.int(256))),
    l2_sf: Tensor.from("u8", [E, hidden, I / 32], bytes(E * hidden * I / 32, () => 118 + rng.int(4))),
    cumulative_local_expert_recv_stats: Tensor.from("i32", [E], Int32Array.from({ length: E }, (_, e) => 10 * e)),
  };
}

/** A small BF16 Mega MoE problem. */
export function bf16Case(seed: number, T: number, E: number, topk: number, idx: number[], hidden = 128, I = 128) {
  const rng = new Prng(seed);
  const bf = (n: number, s: number) => Uint16Array.from({ length: n }, () => bf16Rne(rng.normal() * s));
  return {
    x: Tensor.from("bf16", [T, hidden], bf(T * hidden, 1)),
    topk_idx: Tensor.from("i32", [T, topk], Int32Array.from(idx)),
    topk_weights: Tensor.from("f32", [T, topk], Float32Array.from({ length: T * topk }, () => rng.uniform())),
    l1: Tensor.from("bf16", [E, 2 * I, hidden], bf(E * 2 * I * hidden, 0.2)),
    l2: Tensor.from("bf16", [E, hidden, I], bf(E * hidden * I, 0.2)),
  };
}
