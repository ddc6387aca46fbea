/**
 * The safetensors dtype names and how they map to the oracle's tensor dtypes, as one table.
 *
 * Sources: interfaces.md §5 (the supported set), deno-notes.md §3.2 (the safetensors `Dtype` enum and the
 * PyTorch mapping: `F8_E4M3` → `torch.float8_e4m3fn`, `F8_E8M0` → `torch.float8_e8m0fnu`, `F4` →
 * `torch.float4_e2m1fn_x2`). `I8` is not in the interfaces list but is a real safetensors dtype (→ `torch.int8`,
 * DeepGEMM's storage of packed FP4), so `i8` tensors are written as `I8` and `I8` files are read. `I16` and `U16` are
 * read and written too: a kernel's BF16 output saved as its `torch.int16` view (the way DeepGEMM's tests compare bits)
 * is an `I16` tensor.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { SAFETENSORS_DTYPES, safetensorsDtypeOf } from "./safetensors_dtype.ts";
 * assert.equal(safetensorsDtypeOf("e2m1"), "F4");
 * assert.equal(SAFETENSORS_DTYPES.F4.bits, 4);
 * ```
 * @module
 */
import type { DType } from "../reference/tensor/mod.ts";

/** The safetensors dtype names this project reads and writes. */
export type SafetensorsDtype =
  | "F32"
  | "F16"
  | "BF16"
  | "F8_E4M3"
  | "F8_E5M2"
  | "F8_E8M0"
  | "F4"
  | "I32"
  | "I64"
  | "I16"
  | "U16"
  | "U8"
  | "I8";

/** One row of the table. */
export interface SafetensorsDtypeInfo {
  /** The oracle dtype the elements load into. */
  readonly dtype: DType;
  /** Bits per element in the file (F4: 4, two elements per byte). */
  readonly bits: number;
  /** The PyTorch dtype `safetensors.torch.load_file` gives (for documentation and error messages). */
  readonly torch: string;
}

/** safetensors dtype → oracle dtype, bits per element in the file, torch dtype. */
export const SAFETENSORS_DTYPES: Readonly<Record<SafetensorsDtype, SafetensorsDtypeInfo>> = Object.freeze({
  F32: { dtype: "f32", bits: 32, torch: "torch.float32" },
  F16: { dtype: "f16", bits: 16, torch: "torch.float16" },
  BF16: { dtype: "bf16", bits: 16, torch: "torch.bfloat16" },
  F8_E4M3: { dtype: "e4m3", bits: 8, torch: "torch.float8_e4m3fn" },
  F8_E5M2: { dtype: "e5m2", bits: 8, torch: "torch.float8_e5m2" },
  F8_E8M0: { dtype: "ue8m0", bits: 8, torch: "torch.float8_e8m0fnu" },
  F4: { dtype: "e2m1", bits: 4, torch: "torch.float4_e2m1fn_x2" },
  I32: { dtype: "i32", bits: 32, torch: "torch.int32" },
  I64: { dtype: "i64", bits: 64, torch: "torch.int64" },
  I16: { dtype: "i16", bits: 16, torch: "torch.int16" },
  U16: { dtype: "u16", bits: 16, torch: "torch.uint16" },
  U8: { dtype: "u8", bits: 8, torch: "torch.uint8" },
  I8: { dtype: "i8", bits: 8, torch: "torch.int8" },
});

/**
 * safetensors dtypes that exist in the format but that the oracle does not load (they have no oracle dtype).
 * Reading one is a clear "unsupported" fault rather than "unknown" (deno-notes.md §3.2, `Dtype` enum).
 */
export const UNSUPPORTED_SAFETENSORS_DTYPES: readonly string[] = Object.freeze([
  "BOOL",
  "F6_E2M3",
  "F6_E3M2",
  "F8_E4M3FNUZ",
  "F8_E5M2FNUZ",
  "U32",
  "U64",
  "F64",
  "C64",
]);

/** Type guard: is `name` a safetensors dtype this project reads? */
export function isSafetensorsDtype(name: string): name is SafetensorsDtype {
  return Object.hasOwn(SAFETENSORS_DTYPES, name);
}

/**
 * The safetensors dtype a tensor of oracle dtype `dtype` is written as.
 * @param dtype an oracle dtype
 * @returns its safetensors name
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { safetensorsDtypeOf } from "./safetensors_dtype.ts";
 * assert.equal(safetensorsDtypeOf("ue8m0"), "F8_E8M0");
 * ```
 */
export function safetensorsDtypeOf(dtype: DType): SafetensorsDtype {
  for (const [name, info] of Object.entries(SAFETENSORS_DTYPES)) {
    if (info.dtype === dtype) return name as SafetensorsDtype;
  }
  throw new TypeError(`Dtype "${dtype}" has no safetensors spelling`);
}

/**
 * Metadata key and value recording the F4 nibble order: element 0 of each byte is the low nibble, DeepGEMM's
 * packing (deepgemm-ops.md §2.8 step 4; interfaces.md §5).
 */
export const F4_NIBBLE_ORDER_KEY = "f4_nibble_order";
/** The only F4 nibble order the writer produces. */
export const F4_LOW_FIRST = "low_first";
/** The nibble order a reader also accepts (element 0 in the high nibble, PTX `cvt.e2m1x2` operand order). */
export const F4_HIGH_FIRST = "high_first";
/**
 * Metadata key listing (as a JSON array of names) the I32 tensors that hold packed UE8M0 scales: four scale
 * bytes per int32, byte j = scale of K-group 4p+j (DeepGEMM's SM100 layout, deepgemm-ops.md §1 and §2.3).
 */
export const PACKED_UE8M0_KEY = "packed_ue8m0";

/**
 * The names of the tensors that hold packed UE8M0 scales (four codes per int32, DeepGEMM's layout): `I32` tensors
 * named like scale factors (`sf`, `sfa`, `sfb`, `x_sf`, `kv_sf`; for a path like `sm90_1d2d/sfa`, its last part),
 * sorted, as {@link PACKED_UE8M0_KEY} lists them.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Tensor } from "../reference/tensor/mod.ts";
 * import { packedUe8m0Names } from "./safetensors_dtype.ts";
 * const i = Tensor.zeros("i32", [1]), f = Tensor.zeros("f32", [1]);
 * assert.deepEqual(packedUe8m0Names([["sfb", i], ["gpu/x_sf", i], ["sfa", f], ["grouped_layout", i]]), ["gpu/x_sf", "sfb"]);
 * ```
 */
export function packedUe8m0Names(tensors: Iterable<readonly [string, { readonly dtype: DType }]>): string[] {
  const out: string[] = [];
  for (const [name, t] of tensors) {
    if (t.dtype === "i32" && /(^|_)sf[ab]?$/.test(name.split("/").pop()!)) out.push(name);
  }
  return out.sort();
}
