/**
 * Named conversion profiles: the fp32 → format behaviour of real libraries, as data over the generic encoder
 * ({@link encoderFor}). Each row cites `numerics.md`; `status` says how it is known (`verified` = reproduced on an
 * H200 per the spec, `from_source` = read in the library's source, `unverified` = a documented guess).
 *
 * Decisions recorded here:
 * - torch bf16/fp16 NaN spellings differ between CPU and CUDA (numerics.md §3.5): `torch_2_11` uses the CPU
 *   spellings (bf16 0xFFFF, fp16 quiet payload); `torch_2_11_cuda` is the same profile with the CUDA spellings
 *   (0x7FFF). Finite values are identical in both.
 * - `ml_dtypes` fp16 is numpy's `float16` cast (ml_dtypes has no fp16 of its own): payload kept, 0 payload → 1.
 * - `jax_cpu` differs from `ml_dtypes` only for E2M1 NaN (JAX writes 0x8 for both signs, §3.3).
 * - `torch_2_12plus` E4M3: finite overflow saturates (PR #178817, [reported]); ±Inf → NaN is a guess (§3.1 says
 *   unknown), so that rule is marked `unverified`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { getConverter } from "./profiles.ts";
 * assert.equal(getConverter("torch_2_11", "e4m3")(0x43f00000), 0x7f); // 480 → NaN
 * assert.equal(getConverter("cuda_satfinite", "e4m3")(0x43f00000), 0x7e); // 480 → 448
 * ```
 * @module
 */

import { type EncodeOptions, type Encoder, encoderFor } from "./codec.ts";
import { FORMAT_NAMES, type FormatName, formatSpec } from "./format_table.ts";
import { lookUp } from "./_look_up.ts";

/** Names of the conversion profiles. */
export type ProfileName =
  | "ml_dtypes"
  | "jax_cpu"
  | "jax_gpu"
  | "torch_2_11"
  | "torch_2_11_cuda"
  | "torch_2_12plus"
  | "cuda_satfinite"
  | "cuda_nosat"
  | "cuda_fp4_rn"
  | "cuda_fp4_rz"
  | "cuda_e8m0_rz_sat"
  | "cuda_e8m0_rz_nosat"
  | "cuda_e8m0_rp_sat"
  | "cuda_e8m0_rp_nosat"
  | "torchao_f4"
  | "deepgemm_fp4"
  | "microxcaling_nearest"
  | "microxcaling_floor"
  | "microxcaling_even";

/** How a rule is known. */
export type ProfileStatus = "verified" | "from_source" | "unverified";

/** One format's rule inside a profile: encoder options plus provenance. */
export interface FormatRule extends EncodeOptions {
  /** How this rule is known (overrides the profile's status). */
  readonly status?: ProfileStatus;
  /** Why, where the rule is not obvious. */
  readonly note?: string;
}

/** A conversion profile: the rules of one library (or hardware path) for every format it defines. */
export interface ProfileSpec {
  /** What the profile reproduces. */
  readonly description: string;
  /** Where the rules come from (spec sections). */
  readonly source: string;
  /** How the rules are known, unless a format rule says otherwise. */
  readonly status: ProfileStatus;
  /** The formats this profile defines. */
  readonly formats: Readonly<Partial<Record<FormatName, FormatRule>>>;
}

// Shared rows ---------------------------------------------------------------------------------------------------

// ml_dtypes E4M3: RNE; rounded > 0x7E (|x| > 464) and ±Inf → NaN 0x7F with the sign kept (§3.1).
const ML_E4M3: FormatRule = { rounding: "rne", overflow: "nan", nan: { code: 0x7f, sign: "keep" } };
// ml_dtypes E5M2: overflow → ±Inf; NaN → 0x7E/0xFE (quiet NaN, mantissa 10) (§3.2).
const ML_E5M2: FormatRule = { rounding: "rne", overflow: "inf", nan: { code: 0x7e, sign: "keep" } };
// ml_dtypes/JAX UE8M0: "RNE" on the fp32 grid (ties 1.5·2^e go up; anything above 2^-127 → 2^-126);
// overflow, ±0, negatives and NaN → 0xFF (§3.4).
const ML_UE8M0: FormatRule = {
  rounding: "rne",
  overflow: "nan",
  underflowGrid: "ieee_subnormal",
  zero: "nan",
  negative: "nan",
};
// torch E4M3 (c10 fp8e4m3fn_from_fp32_value): |x| ≥ 480 → NaN, RNE otherwise, so (464, 480) carries into NaN (§3.1).
const TORCH_E4M3: FormatRule = { rounding: "rne", overflow: "nan", nan: { code: 0x7f, sign: "keep" } };
// torch E5M2: overflow → ±Inf; NaN → 0x7F/0xFF (§3.2).
const TORCH_E5M2: FormatRule = { rounding: "rne", overflow: "inf", nan: { code: 0x7f, sign: "keep" } };
// torch UE8M0: same rounding as ml_dtypes, but ±0 → 0x00 and negatives encode |x| (§3.4).
const TORCH_UE8M0: FormatRule = { ...ML_UE8M0, zero: "min", negative: "abs" };
// CUDA NaN spelling: always the positive canonical code (§3.1, §3.2, §3.5).
const CUDA_BF16: FormatRule = { rounding: "rne", overflow: "inf", nan: { code: 0x7fff, sign: "fixed" } };
const CUDA_FP16: FormatRule = {
  rounding: "rne",
  overflow: "inf",
  nan: { code: 0x7fff, sign: "fixed" },
  note: "torch CUDA fp16 observation (§3.5); `__float2half_rn` itself was not run",
};

function microxcaling(rounding: "rna" | "rz" | "rne", mode: string): ProfileSpec {
  return {
    description: `microsoft/microxcaling element quantizer, round="${mode}" (saturate_normals=True)`,
    source: "numerics.md §7, §5.2 (C++/CUDA path: exact exponent from the bits)",
    status: "from_source",
    formats: {
      // Elements clamp to ±max_norm; Inf inputs are restored to ±Inf afterwards; NaN propagates (§7).
      e4m3: {
        rounding,
        overflow: "saturate",
        infinity: "nan",
        nan: { code: 0x7f, sign: "keep" },
        note: "±Inf is restored as a value E4M3 cannot hold; written as NaN with its sign, like torch's cast",
      },
      e5m2: { rounding, overflow: "saturate", infinity: "inf", nan: { code: 0x7f, sign: "keep" } },
      e2m1: {
        rounding,
        overflow: "saturate",
        infinity: "saturate",
        nan: { code: 0x7, sign: "keep" },
        status: "unverified",
        note: "E2M1 has neither Inf nor NaN: ±Inf and NaN (a value microxcaling returns) are written as ±6",
      },
    },
  };
}

function cudaE8m0(rounding: "rz" | "ru", sat: boolean): ProfileSpec {
  return {
    description: `CUDA __nv_cvt_float_to_e8m0(x, ${sat ? "__NV_SATFINITE" : "__NV_NOSAT"}, ${
      rounding === "rz" ? "cudaRoundZero" : "cudaRoundPosInf"
    }) (host = device on sm_90)`,
    source: "numerics.md §3.4",
    status: "verified",
    formats: {
      // Encodes |x|; ±0 → 0x00; SAT turns 0xFF into 0xFE for non-NaN input (Inf included); RZ never overflows
      // a finite input (→ 0xFE); RP NOSAT overflows to 0xFF.
      ue8m0: { rounding, overflow: sat ? "saturate" : "nan", zero: "min", negative: "abs" },
    },
  };
}

/**
 * torchao `_f32_to_fpx_unpacked` for NaN: the comparisons `x >= 6` and `x < 1` are false, so a NaN takes the
 * normal-number path (rebias, add `2^21 − 1 + odd`, shift by 22, truncate to uint8), then ORs the sign into bit 3
 * (pytorch/ao `torchao/prototype/custom_fp_utils.py`, read at 268bfd3; numerics.md §3.3 calls it undefined).
 */
function torchaoF4Nan(u: number): number {
  const a = u & 0x7fffffff;
  const odd = (a >>> 22) & 1;
  const t = (a + ((1 - 127) << 23) + 0x1fffff + odd) | 0;
  return ((t >> 22) & 0xff) | ((u >>> 31) << 3);
}

/** Every conversion profile, by name (data). */
export const PROFILES: Readonly<Record<ProfileName, ProfileSpec>> = Object.freeze({
  ml_dtypes: {
    description: "ml_dtypes 0.6 astype (numpy float16 for fp16)",
    source: "numerics.md §2, §3.1–§3.5",
    status: "verified",
    formats: {
      e4m3: ML_E4M3,
      e5m2: ML_E5M2,
      // |x| > 6 and ±Inf → ±6; quiet_NaN is 0b1000 and the sign toggles bit 3: +NaN → 0x8, −NaN → 0x0 (§3.3).
      e2m1: { rounding: "rne", overflow: "saturate", nan: { code: 0x8, sign: "xor" } },
      ue8m0: ML_UE8M0,
      bf16: { rounding: "rne", overflow: "inf", nan: { code: 0x7fc0, sign: "keep" } },
      fp16: { rounding: "rne", overflow: "inf", nan: { payload: "truncate", sign: "keep" } },
    },
  },
  jax_cpu: {
    description: "JAX on CPU (equal to ml_dtypes except the E2M1 NaN spelling)",
    source: "numerics.md §3.1–§3.4, §4.4",
    status: "verified",
    formats: {
      e4m3: ML_E4M3,
      e5m2: ML_E5M2,
      e2m1: { rounding: "rne", overflow: "saturate", nan: { code: 0x8, sign: "fixed" } },
      ue8m0: ML_UE8M0,
    },
  },
  jax_gpu: {
    description: "JAX on GPU (ml_dtypes rounding; NaN always positive)",
    source: "numerics.md §3.1–§3.4, §4.4",
    status: "verified",
    formats: {
      e4m3: { rounding: "rne", overflow: "nan", nan: { code: 0x7f, sign: "fixed" } },
      e5m2: { rounding: "rne", overflow: "inf", nan: { code: 0x7f, sign: "fixed" } },
      e2m1: { rounding: "rne", overflow: "saturate", nan: { code: 0x8, sign: "fixed" } },
      ue8m0: ML_UE8M0,
    },
  },
  torch_2_11: {
    description: "PyTorch ≤ 2.11 eager .to(dtype), CPU NaN spellings for bf16/fp16 (see torch_2_11_cuda)",
    source: "numerics.md §3.1, §3.2, §3.4, §3.5",
    status: "verified",
    formats: {
      e4m3: TORCH_E4M3,
      e5m2: TORCH_E5M2,
      ue8m0: TORCH_UE8M0,
      bf16: { rounding: "rne", overflow: "inf", nan: { code: 0xffff, sign: "fixed" } },
      fp16: { rounding: "rne", overflow: "inf", nan: { payload: "truncate_quiet", sign: "keep" } },
    },
  },
  torch_2_11_cuda: {
    description: "PyTorch ≤ 2.11 eager .to(dtype) on CUDA tensors (bf16/fp16 NaN → 0x7FFF)",
    source: "numerics.md §3.1, §3.2, §3.4, §3.5",
    status: "verified",
    formats: { e4m3: TORCH_E4M3, e5m2: TORCH_E5M2, ue8m0: TORCH_UE8M0, bf16: CUDA_BF16, fp16: CUDA_FP16 },
  },
  torch_2_12plus: {
    description: "PyTorch ≥ 2.12 eager .to(dtype): E4M3 saturates finite overflow (PR #178817); CPU NaN spellings",
    source: "numerics.md §3.1 ([reported]), §4.1",
    status: "unverified",
    formats: {
      e4m3: {
        rounding: "rne",
        overflow: "saturate",
        infinity: "nan",
        nan: { code: 0x7f, sign: "keep" },
        status: "unverified",
        note: "±Inf → NaN is a guess: the spec says the Inf behaviour after #178817 is unknown",
      },
      e5m2: { ...TORCH_E5M2, status: "from_source", note: "E5M2 eager casts still do not saturate (§3.1)" },
      ue8m0: TORCH_UE8M0,
      bf16: { rounding: "rne", overflow: "inf", nan: { code: 0xffff, sign: "fixed" } },
      fp16: { rounding: "rne", overflow: "inf", nan: { payload: "truncate_quiet", sign: "keep" } },
    },
  },
  cuda_satfinite: {
    description: "CUDA __NV_SATFINITE = PTX cvt.rn.satfinite = Triton tl.float8e4nv/e5m2 and inductor",
    source: "numerics.md §3.1, §3.2",
    status: "verified",
    formats: {
      // Overflow and ±Inf → ±max; every NaN → +0x7F.
      e4m3: { rounding: "rne", overflow: "saturate", nan: { code: 0x7f, sign: "fixed" } },
      e5m2: { rounding: "rne", overflow: "saturate", nan: { code: 0x7f, sign: "fixed" } },
    },
  },
  cuda_nosat: {
    description: "CUDA __NV_NOSAT fp8 conversions; bf16/fp16 by __float2bfloat16_rn / __float2half_rn",
    source: "numerics.md §3.1, §3.2, §3.5",
    status: "verified",
    formats: {
      // Overflow and ±Inf → NaN with the sign kept (0xFF for x < 0), but an input NaN always → +0x7F.
      e4m3: { rounding: "rne", overflow: "nan", nan: { code: 0x7f, sign: "fixed" } },
      e5m2: { rounding: "rne", overflow: "inf", nan: { code: 0x7f, sign: "fixed" } },
      bf16: CUDA_BF16,
      fp16: CUDA_FP16,
    },
  },
  cuda_fp4_rn: {
    description: "CUDA __nv_cvt_float_to_fp4(x, __NV_E2M1, cudaRoundNearest) (software path)",
    source: "numerics.md §3.3",
    status: "verified",
    formats: { e2m1: { rounding: "rne", overflow: "saturate", nan: { code: 0x7, sign: "fixed" } } },
  },
  cuda_fp4_rz: {
    description: "CUDA __nv_cvt_float_to_fp4(x, __NV_E2M1, cudaRoundZero)",
    source: "numerics.md §3.3",
    status: "verified",
    formats: { e2m1: { rounding: "rz", overflow: "saturate", nan: { code: 0x7, sign: "fixed" } } },
  },
  cuda_e8m0_rz_sat: cudaE8m0("rz", true),
  cuda_e8m0_rz_nosat: cudaE8m0("rz", false),
  cuda_e8m0_rp_sat: cudaE8m0("ru", true),
  cuda_e8m0_rp_nosat: cudaE8m0("ru", false),
  torchao_f4: {
    description: "torchao f32_to_f4_unpacked (RNE, saturate to ±6, no special values)",
    source: "numerics.md §3.3; pytorch/ao custom_fp_utils.py",
    status: "from_source",
    formats: {
      e2m1: {
        rounding: "rne",
        overflow: "saturate",
        nan: { custom: torchaoF4Nan },
        note: "NaN follows the normal-number branch of the code (e.g. 0x7FC00000 → 0x3)",
      },
    },
  },
  deepgemm_fp4: {
    description: "DeepGEMM per_token_cast_to_fp4: code = #{b ∈ (0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5) : |y| > b}",
    source: "deepgemm-ops.md §2.8",
    status: "from_source",
    formats: {
      // Strict > thresholds = nearest with ties toward zero; |y| > 5 → 6; NaN → 0; never −0.
      e2m1: { rounding: "rnz", overflow: "saturate", negativeZero: "positive", nan: { code: 0x0, sign: "fixed" } },
    },
  },
  microxcaling_nearest: microxcaling("rna", "nearest"),
  microxcaling_floor: microxcaling("rz", "floor"),
  microxcaling_even: microxcaling("rne", "even"),
});

/** The profile names, in table order. */
export const PROFILE_NAMES: readonly ProfileName[] = Object.freeze(Object.keys(PROFILES) as ProfileName[]);

/**
 * Looks a profile up by name.
 *
 * @throws {RangeError} for an unknown name; the message lists the valid names
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { profileSpec } from "./profiles.ts";
 * assert.ok("e2m1" in profileSpec("deepgemm_fp4").formats);
 * ```
 */
export function profileSpec(name: string): ProfileSpec {
  return lookUp(PROFILES, PROFILE_NAMES, "profile", name);
}

/**
 * The rule of `profile` for `format`.
 *
 * @throws {RangeError} for an unknown profile or format, or a format the profile does not define (the message
 * lists the formats it defines)
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { profileRule } from "./profiles.ts";
 * assert.equal(profileRule("cuda_satfinite", "e5m2").overflow, "saturate");
 * assert.throws(() => profileRule("cuda_satfinite", "e2m1"), /defines e4m3, e5m2/);
 * ```
 */
export function profileRule(profile: string, format: string): FormatRule {
  const p = profileSpec(profile);
  formatSpec(format);
  const rule = p.formats[format as FormatName];
  if (!rule) {
    const defined = FORMAT_NAMES.filter((f) => p.formats[f] !== undefined);
    throw new RangeError(`Profile "${profile}" does not define format "${format}": it defines ${defined.join(", ")}`);
  }
  return rule;
}

const CONVERTERS = new Map<string, Encoder>();

/**
 * The converter (fp32 bits → code) of `profile` for `format`; built once and cached.
 *
 * @param profile a profile name such as `"ml_dtypes"`
 * @param format a format name such as `"e4m3"`
 * @returns a function from fp32 bits (any 32-bit integer, read as unsigned) to the code
 * @throws {RangeError} listing valid names for an unknown profile or format, or the formats the profile defines
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { getConverter } from "./profiles.ts";
 * const toUe8m0 = getConverter("ml_dtypes", "ue8m0");
 * assert.equal(toUe8m0(0x3fc00000), 0x80); // 1.5 rounds up to 2
 * assert.equal(toUe8m0(0x00000000), 0xff); // no zero: NaN
 * ```
 */
export function getConverter(profile: string, format: string): Encoder {
  const key = `${profile}\u0000${format}`;
  let c = CONVERTERS.get(key);
  if (!c) {
    c = encoderFor(format as FormatName, profileRule(profile, format));
    CONVERTERS.set(key, c);
  }
  return c;
}
