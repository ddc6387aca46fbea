/**
 * Builders of GEMM cases for the golden fixtures and `verify`'s generated suites: dense FP8 and BF16 GEMMs in every
 * layout, M-grouped contiguous and masked, SM90 K-grouped, and HyperConnection's `tf32_hc_prenorm_gemm`; A quantized
 * per token (1×128), B per block (128×128), grouped layouts with zeroed padding rows (`deepgemm-ops.md` §9). Each
 * builder maps a seeded PRNG to the inputs (DeepGEMM argument names) and scalars of one case.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Prng } from "../random/prng.ts";
 * import { fp8Dense } from "./gemm_builders.ts";
 * const built = fp8Dense(7, 128, 256)(new Prng(2));
 * assert.deepEqual(Object.keys(built.inputs), ["a", "sfa", "b", "sfb"]);
 * ```
 * @module
 */
import type { Prng } from "../random/prng.ts";
import type { Tensor } from "../tensor/tensor.ts";
import type { Built } from "./case_spec.ts";
import { fp8Operand, randnTensor } from "./seeded_operands.ts";
import { concatRows, i32, stack, zeroRows } from "./tensor_assembly.ts";

/** A dense FP8 GEMM `D = A·Bᵀ (+ C)` with the layout letters applied to the stored operands. */
export function fp8Dense(m: number, n: number, k: number, letters = "nt", withC = false): (p: Prng) => Built {
  return (p) => {
    const A = fp8Operand(p, m, k, "token");
    const B = fp8Operand(p, n, k, withC ? "token" : "block");
    const at = letters[0] === "t", bn = letters[1] === "n";
    const inputs: Record<string, Tensor> = {
      // SM90 FP8 needs K-major operands: nn/tn/tt take transposed *views* of K-major storage, as DeepGEMM's
      // callers pass them (deepgemm-ops.md §5.1, §15).
      a: at ? A.q.transpose() : A.q,
      sfa: at ? A.sf.transpose() : A.sf,
      b: bn ? B.q.transpose() : B.q,
      sfb: bn ? B.sf.transpose() : B.sf,
    };
    const scalars: Record<string, unknown> = {};
    if (withC) {
      inputs.c = randnTensor(p, [m, n], "f32", 32);
      inputs.d = randnTensor(p, [m, n], "f32", 0);
      scalars.recipe = [1, 1, 128];
    }
    return { inputs, scalars };
  };
}

/** A dense BF16 GEMM `D = A·Bᵀ (+ C)` with the layout letters applied to the stored operands (randn inputs). */
export function bf16Dense(m: number, n: number, k: number, letters = "nt", withC = false): (p: Prng) => Built {
  return (p) => {
    const at = letters[0] === "t", bn = letters[1] === "n";
    const inputs: Record<string, Tensor> = {
      a: randnTensor(p, at ? [k, m] : [m, k], "bf16"),
      b: randnTensor(p, bn ? [k, n] : [n, k], "bf16"),
    };
    if (withC) {
      inputs.c = randnTensor(p, [m, n], "f32", 32);
      inputs.d = randnTensor(p, [m, n], "f32", 0);
    }
    return { inputs, scalars: {} };
  };
}

/** M-grouped contiguous: `sizes[g]` rows per group, each segment padded with −1 rows to a multiple of 128. */
export function mGroupedContiguous(sizes: readonly number[], n: number, k: number, psum: boolean): (p: Prng) => Built {
  return (p) => {
    const layout: number[] = [], ends: number[] = [], padRows: number[] = [];
    let rows = 0;
    sizes.forEach((s, g) => {
      const start = rows;
      for (let r = 0; r < s; r++) layout.push(g);
      rows += s;
      ends.push(rows);
      const padded = Math.ceil(s / 128) * 128;
      for (let r = s; r < padded; r++) {
        layout.push(-1);
        padRows.push(start + r);
      }
      rows = start + padded;
    });
    const A = fp8Operand(p, rows, k, "token");
    zeroRows(A.q, padRows); // DeepGEMM's tests zero A's padding rows (deepgemm-ops.md §5.3)
    const Bs = sizes.map(() => fp8Operand(p, n, k, "block"));
    return {
      inputs: {
        a: A.q,
        sfa: A.sf,
        b: stack(Bs.map((b) => b.q)),
        sfb: stack(Bs.map((b) => b.sf)),
        grouped_layout: i32(psum ? ends : layout),
      },
      scalars: psum ? { use_psum_layout: true } : {},
    };
  };
}

/** M-grouped masked: `G` groups of `mMax` rows each, `maskedM[g]` of them computed; `expected_m` their mean. */
export function masked(G: number, mMax: number, n: number, k: number, maskedM: readonly number[]): (p: Prng) => Built {
  return (p) => {
    const As = Array.from({ length: G }, () => fp8Operand(p, mMax, k, "token"));
    const Bs = Array.from({ length: G }, () => fp8Operand(p, n, k, "block"));
    return {
      inputs: {
        a: stack(As.map((a) => a.q)),
        sfa: stack(As.map((a) => a.sf)),
        b: stack(Bs.map((b) => b.q)),
        sfb: stack(Bs.map((b) => b.sf)),
        masked_m: i32(maskedM),
      },
      scalars: { expected_m: Math.max(1, Math.round(maskedM.reduce((s, v) => s + v, 0) / G)) },
    };
  };
}

/** SM90 K-grouped (flat per-group K-major blocks, per-channel scales over K). */
export function kGrouped(m: number, n: number, ks: readonly number[]): (p: Prng) => Built {
  return (p) => {
    const aBlocks: Tensor[] = [], bBlocks: Tensor[] = [], sfa: Tensor[] = [], sfb: Tensor[] = [];
    for (const kg of ks) {
      if (kg === 0) continue;
      const A = fp8Operand(p, kg, m, "channel"); // [k_g, M] quantized per 128 K-rows, then stored K-major
      const B = fp8Operand(p, kg, n, "channel");
      aBlocks.push(A.q.transpose().contiguous());
      bBlocks.push(B.q.transpose().contiguous());
      sfa.push(A.sf);
      sfb.push(B.sf);
    }
    const flat = (ts: Tensor[]) =>
      concatRows(ts.map((t) => t.reshape([t.numel, 1]))).reshape([ts.reduce((s, t) => s + t.numel, 0)]);
    const G = ks.length;
    return {
      inputs: {
        a: flat(aBlocks),
        b: flat(bBlocks),
        sfa: concatRows(sfa).transpose(),
        sfb: concatRows(sfb).transpose(),
        c: randnTensor(p, [G, m, n], "f32", 32),
        d: randnTensor(p, [G, m, n], "f32", 0),
        grouped_layout: i32(ks), // DeepGEMM passes the k_g as grouped_layout (device) and ks_cpu (host list)
      },
      scalars: { ks: [...ks], recipe: [1, 1, 128] },
    };
  };
}

/** `tf32_hc_prenorm_gemm`: A bf16 [m, k], B f32 [n, k] (deepgemm-ops.md §7), optionally split. */
export function hcPrenorm(m: number, n: number, k: number, splits?: number): (p: Prng) => Built {
  return (p) => ({
    inputs: { a: randnTensor(p, [m, k], "bf16"), b: randnTensor(p, [n, k], "f32") },
    scalars: splits ? { num_splits: splits } : {},
  });
}
