/**
 * Tensor-core accumulation profiles as data: one row per (architecture, instruction kind), each an instance of the
 * one parametrised algorithm in {@link ./fused_dot_add.ts} (MMA-Sim's fused dot-add, `numerics.md` §8.1).
 * The hardware knowledge lives in this table and can be reviewed line by line.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { TENSOR_CORE_PROFILES } from "./profiles.ts";
 * const p = TENSOR_CORE_PROFILES.hopper_wgmma_fp8;
 * assert.equal(p.termsPerStep, 32);
 * assert.equal(p.fractionBits, 13);
 * assert.equal(p.output, "rz_e8m13");
 * ```
 * @module
 */

/**
 * How one step's exact-after-truncation sum becomes the step's result:
 * - `rz_f32`: normalised and truncated (RZ) to fp32's 23 fraction bits;
 * - `rz_e8m13`: truncated to 13 fraction bits (an fp32 with 14 significant bits: Hopper / Ada FP8);
 * - `rne_f16`: rounded to nearest even to fp16 (the f16-output MMAs);
 * - `exact`: no rounding inside a segment; the segment's exact sum is rounded once, RNE, to fp32;
 * - `fma_rne_f32`: no fused step at all: a CUDA-core `fma.rn.f32` per term, in K order.
 */
export type StepOutput = "rz_f32" | "rz_e8m13" | "rne_f16" | "exact" | "fma_rne_f32";

/**
 * How block scales enter the unit:
 * - `none`: the instruction takes no scales (scales, if any, are applied by the kernel on CUDA cores);
 * - `mx_exponent`: one power-of-two scale per operand per step; its exponent is added to every product exponent
 *   (`tcgen05.mma kind::mxf8f6f4.block_scale`, MMA-Sim `nv_fused_dot_add` with `scale_a/scale_b`);
 * - `group16`: groups of 16 products are summed exactly, multiplied by their two scales, then the groups and c
 *   are fused (`kind::mxf4nvf4`, MMA-Sim `nv_fused_dot_add_with_block_scale`).
 */
export type BlockScaleKind = "none" | "mx_exponent" | "group16";

/** Whether a profile's parameters were checked against hardware by this project's sources. */
export type TensorCoreProfileStatus = "verified on H200" | "published, not verified here";

/** One tensor-core instruction's accumulation behaviour. */
export interface TensorCoreProfile {
  /** Key of the profile in {@link TENSOR_CORE_PROFILES}. */
  readonly name: string;
  /** The instruction it describes (PTX spelling). */
  readonly instruction: string;
  /** Operand formats the instruction accepts. */
  readonly inputs: readonly string[];
  /** Products fused per step together with the accumulator c (0 = the whole segment in one step). */
  readonly termsPerStep: number;
  /** Fraction bits kept per term after aligning to the largest exponent (n of MMA-Sim); 0 when not a fused step. */
  readonly fractionBits: number;
  /** Rounding of each step's result. */
  readonly output: StepOutput;
  /** How block scales enter the unit. */
  readonly blockScale: BlockScaleKind;
  /** fp32 operands are first truncated to TF32 (10 fraction bits, `>>13<<13`, MMA-Sim `truncate_to_tf32`). */
  readonly truncateToTf32: boolean;
  /** Evidence level. */
  readonly status: TensorCoreProfileStatus;
  /** Where the row comes from. */
  readonly source: string;
}

function row(p: TensorCoreProfile): TensorCoreProfile {
  return Object.freeze({ ...p, inputs: Object.freeze([...p.inputs]) });
}

const MMASIM = "MMA-Sim nv_ptx.py / simulator/nv.py (numerics.md §8.1)";

/**
 * Every tensor-core profile, by name. The Hopper FP8 and BF16 wgmma rows were reproduced bit for bit on an H200
 * (`numerics.md` §8.2, §8.2b); every other row is MMA-Sim's published parameter set, not re-checked here.
 * Ampere/Ada "split-k" instructions (k16 f16/bf16 = two chained steps of 8, tf32 k8 = two of 4, fp8 k32 = two of 16)
 * are written as their step size: chaining two half-width fused steps through the accumulator is exactly MMA-Sim's split.
 */
export const TENSOR_CORE_PROFILES: Readonly<Record<string, TensorCoreProfile>> = Object.freeze({
  exact: row({
    name: "exact",
    instruction: "(ideal unit)",
    inputs: ["e4m3", "e5m2", "e2m1", "bf16", "f16", "f32"],
    termsPerStep: 0,
    fractionBits: 0,
    output: "exact",
    blockScale: "mx_exponent",
    truncateToTf32: false,
    status: "published, not verified here",
    source: "definition: no internal rounding; one RNE rounding to fp32 per promotion segment",
  }),
  fp32_sequential: row({
    name: "fp32_sequential",
    instruction: "fma.rn.f32 loop (CUDA cores)",
    inputs: ["e4m3", "e5m2", "e2m1", "bf16", "f16", "f32"],
    termsPerStep: 1,
    fractionBits: 0,
    output: "fma_rne_f32",
    blockScale: "none",
    truncateToTf32: false,
    status: "published, not verified here",
    source: "definition: acc = fma32(a_k, b_k, acc) in ascending k",
  }),
  hopper_wgmma_fp8: row({
    name: "hopper_wgmma_fp8",
    instruction: "wgmma.mma_async.m64nNk32.f32.e4m3.e4m3 (also e5m2)",
    inputs: ["e4m3", "e5m2"],
    termsPerStep: 32,
    fractionBits: 13,
    output: "rz_e8m13",
    blockScale: "none",
    truncateToTf32: false,
    status: "verified on H200",
    source: "numerics.md §8.2 (targeted vectors, 4608/4608 random outputs) and §8.2b (DeepGEMM kernels)",
  }),
  hopper_wgmma_bf16: row({
    name: "hopper_wgmma_bf16",
    instruction: "wgmma.mma_async.m64nNk16.f32.bf16.bf16",
    inputs: ["bf16", "f16"],
    termsPerStep: 16,
    fractionBits: 25,
    output: "rz_f32",
    blockScale: "none",
    truncateToTf32: false,
    status: "verified on H200",
    source: "numerics.md §8.2b (bf16_gemm_nt, fp32 result RZ to 23 fraction bits)",
  }),
  hopper_wgmma_tf32: row({
    name: "hopper_wgmma_tf32",
    instruction: "wgmma.mma_async.m64nNk8.f32.tf32.tf32",
    inputs: ["f32"],
    termsPerStep: 8,
    fractionBits: 25,
    output: "rz_f32",
    blockScale: "none",
    truncateToTf32: true,
    status: "published, not verified here",
    source: MMASIM,
  }),
  ampere_mma_bf16: row({
    name: "ampere_mma_bf16",
    instruction: "mma.sync.m16n8k16.f32.bf16.bf16.f32 (sm_80, sm_86; split into 2 steps of 8)",
    inputs: ["bf16", "f16"],
    termsPerStep: 8,
    fractionBits: 24,
    output: "rz_f32",
    blockScale: "none",
    truncateToTf32: false,
    status: "published, not verified here",
    source: MMASIM,
  }),
  ampere_mma_tf32: row({
    name: "ampere_mma_tf32",
    instruction: "mma.sync.m16n8k8.f32.tf32.tf32.f32 (split into 2 steps of 4)",
    inputs: ["f32"],
    termsPerStep: 4,
    fractionBits: 24,
    output: "rz_f32",
    blockScale: "none",
    truncateToTf32: true,
    status: "published, not verified here",
    source: MMASIM,
  }),
  ada_mma_bf16: row({
    name: "ada_mma_bf16",
    instruction: "mma.sync.m16n8k16.f32.bf16.bf16.f32 (sm_89; split into 2 steps of 8)",
    inputs: ["bf16", "f16"],
    termsPerStep: 8,
    fractionBits: 24,
    output: "rz_f32",
    blockScale: "none",
    truncateToTf32: false,
    status: "published, not verified here",
    source: MMASIM,
  }),
  ada_mma_fp8: row({
    name: "ada_mma_fp8",
    instruction: "mma.sync.m16n8k32.f32.e4m3.e4m3.f32 (sm_89; split into 2 steps of 16)",
    inputs: ["e4m3", "e5m2"],
    termsPerStep: 16,
    fractionBits: 13,
    output: "rz_e8m13",
    blockScale: "none",
    truncateToTf32: false,
    status: "published, not verified here",
    source: MMASIM,
  }),
  tcgen05: row({
    name: "tcgen05",
    instruction: "tcgen05.mma kind::f16 (bf16/f16, k16), kind::tf32 (k8), kind::f8f6f4 (k32)",
    inputs: ["bf16", "f16", "e4m3", "e5m2", "e2m1"],
    termsPerStep: 16,
    fractionBits: 25,
    output: "rz_f32",
    blockScale: "none",
    truncateToTf32: false,
    status: "published, not verified here",
    source: MMASIM + "; DeepGEMM #176 reports 25 bits on B200",
  }),
  tcgen05_f8f6f4: row({
    name: "tcgen05_f8f6f4",
    instruction: "tcgen05.mma kind::f8f6f4 (k32, no block scale)",
    inputs: ["e4m3", "e5m2", "e2m1"],
    termsPerStep: 32,
    fractionBits: 25,
    output: "rz_f32",
    blockScale: "none",
    truncateToTf32: false,
    status: "published, not verified here",
    source: MMASIM,
  }),
  tcgen05_mxf8f6f4: row({
    name: "tcgen05_mxf8f6f4",
    instruction: "tcgen05.mma kind::mxf8f6f4.block_scale (k32, ue8m0 scale per 32)",
    inputs: ["e4m3", "e5m2", "e2m1"],
    termsPerStep: 32,
    fractionBits: 25,
    output: "rz_f32",
    blockScale: "mx_exponent",
    truncateToTf32: false,
    status: "published, not verified here",
    source: MMASIM,
  }),
  tcgen05_mxf4nvf4: row({
    name: "tcgen05_mxf4nvf4",
    instruction: "tcgen05.mma kind::mxf4nvf4.block_scale (k64; ue8m0 per 32 or ue4m3 per 16)",
    inputs: ["e2m1"],
    termsPerStep: 64,
    fractionBits: 35,
    output: "rz_f32",
    blockScale: "group16",
    truncateToTf32: false,
    status: "published, not verified here",
    source: MMASIM + "; DeepGEMM #176 reports 34–37 bits",
  }),
});

/**
 * Looks a profile up by name.
 * @param name a key of {@link TENSOR_CORE_PROFILES}
 * @returns the profile
 * @throws RangeError naming the unknown profile and the known ones
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { tensorCoreProfile } from "./profiles.ts";
 * assert.equal(tensorCoreProfile("hopper_wgmma_bf16").fractionBits, 25);
 * assert.throws(() => tensorCoreProfile("volta"), RangeError);
 * ```
 */
export function tensorCoreProfile(name: string): TensorCoreProfile {
  if (typeof name !== "string" || !Object.hasOwn(TENSOR_CORE_PROFILES, name)) {
    throw new RangeError(
      `Unknown tensor-core profile "${name}"; known: ${Object.keys(TENSOR_CORE_PROFILES).join(", ")}`,
    );
  }
  return TENSOR_CORE_PROFILES[name];
}
