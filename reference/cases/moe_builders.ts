/**
 * Small Mega MoE problems (FP8×FP4 and BF16) with scales near 2^0, so the GEMM outputs stay in range; each from its
 * own seed.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { moeBf16Case } from "./moe_builders.ts";
 * const c = moeBf16Case(1, 2, 2, 1, [0, 1]);
 * assert.deepEqual(c.l1.shape, [2, 256, 128]);
 * ```
 * @module
 */
import { bf16Rne } from "../fp32.ts";
import { Prng } from "../random/prng.ts";
import { Tensor } from "../tensor/tensor.ts";

/** The inputs of `fp8_fp4_mega_moe`, by DeepGEMM argument name. */
export type MoeFp8Inputs = Record<
  "x" | "x_sf" | "topk_idx" | "topk_weights" | "l1" | "l1_sf" | "l2" | "l2_sf" | "cumulative_local_expert_recv_stats",
  Tensor
>;

/** The inputs of `bf16_mega_moe`, by DeepGEMM argument name. */
export type MoeBf16Inputs = Record<"x" | "topk_idx" | "topk_weights" | "l1" | "l2", Tensor>;

/**
 * A Mega MoE case builder.
 * @param seed the PRNG seed
 * @param T tokens
 * @param E experts
 * @param topk experts per token
 * @param idx the expert of each (token, slot), row-major `[T, topk]`
 * @param hidden hidden size (default 128)
 * @param I intermediate size (default 128)
 * @returns the inputs
 */
export type MoeCaseBuilder<Inputs> = (
  seed: number,
  T: number,
  E: number,
  topk: number,
  idx: number[],
  hidden?: number,
  I?: number,
) => Inputs;

/** A small FP8×FP4 Mega MoE problem; scales near 2^0 so the GEMM outputs stay in range. */
export const moeFp8Case: MoeCaseBuilder<MoeFp8Inputs> = (seed, T, E, topk, idx, hidden = 128, I = 128) => {
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
};

/** A small BF16 Mega MoE problem. */
export const moeBf16Case: MoeCaseBuilder<MoeBf16Inputs> = (seed, T, E, topk, idx, hidden = 128, I = 128) => {
  const rng = new Prng(seed);
  const bf = (n: number, s: number) => Uint16Array.from({ length: n }, () => bf16Rne(rng.normal() * s));
  return {
    x: Tensor.from("bf16", [T, hidden], bf(T * hidden, 1)),
    topk_idx: Tensor.from("i32", [T, topk], Int32Array.from(idx)),
    topk_weights: Tensor.from("f32", [T, topk], Float32Array.from({ length: T * topk }, () => rng.uniform())),
    l1: Tensor.from("bf16", [E, 2 * I, hidden], bf(E * 2 * I * hidden, 0.2)),
    l2: Tensor.from("bf16", [E, hidden, I], bf(E * hidden * I, 0.2)),
  };
};
