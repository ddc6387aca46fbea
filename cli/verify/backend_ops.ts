/**
 * How `verify` runs a DeepGEMM operation on a native backend: the operation registry (`reference/registry.ts`) says
 * which C ABI family calls each op (`native`) and which ops only another architecture runs (`arch`); this file holds
 * one call per ABI family, mapping DeepGEMM's argument names (`a`, `sfa`, `b`, `sfb`, `c`, `grouped_layout`,
 * `masked_m`, `ks`, ...) and scalars (`recipe`, `use_psum_layout`, ...) onto the typed ABI wrappers of `ffi/`. The
 * layout letters (`nt/nn/tn/tt`) become strided views, as DeepGEMM's own host code turns `nn/tn/tt` into `nt` by
 * transposing the views and their scale factors (`deepgemm-ops.md` §5.1). DeepGEMM's batched forms (`einsum`,
 * `fp8_einsum`) run as one ABI GEMM per batch entry on views of the operands.
 *
 * Operations that exist only for another GPU architecture (FP4 tensor-core GEMMs, tcgen05 Mega MoE, ...) carry their
 * {@link ArchRequirement} in the registry: a backend skips them with a reason naming the architecture
 * ({@link archSkip}), never "no entry".
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { archSkip, backendOp } from "./backend_ops.ts";
 * assert.equal(backendOp("fp8_gemm_nt")?.family, "fp8_gemm");
 * assert.equal(backendOp("fp8_gemm_nt")?.entry, "go_fp8_gemm");
 * assert.equal(backendOp("no_such_op"), undefined);
 * assert.match(archSkip("bf16_mega_moe", "cuda", "sm_90a") ?? "", /needs SM100 \(Blackwell\)/);
 * assert.equal(archSkip("bf16_mega_moe", "mine", "sm_100a"), undefined);
 * ```
 * @module
 */
import type { Backend } from "../../ffi/backend.ts";
import type { NativeSymbols } from "../../ffi/library.ts";
import { abiModelName } from "../../ffi/models.ts";
import { FAMILY_ENTRIES } from "../../ffi/symbols.ts";
import {
  MX_SCALE_RULE_CODES,
  type MxScaleRuleName,
  QUANT_KIND_CODES,
  type QuantKind,
  quantOutputSpecs,
} from "../../ffi/quant_ops.ts";
import {
  type AbiFamily,
  type ArchRequirement,
  type GemmLayout,
  type NativeCall,
  operation,
  OPERATIONS,
} from "../../reference/registry.ts";
import { hasAbiAliases, quantizerModel, referenceModelName } from "../../reference/kernel_models/model_table.ts";
import { unpackFp4 } from "../../reference/quant/fp4_packing.ts";
import { Tensor } from "../../reference/tensor/tensor.ts";

export type { ArchRequirement } from "../../reference/registry.ts";

/** A native call for one op: the ABI family (key of the backend-info "models") and the call itself. */
export interface BackendOp {
  /** ABI family, as in `go_backend_info` "models". */
  readonly family: AbiFamily;
  /** The C ABI function the call needs (an optional entry a library may not export). */
  readonly entry: keyof NativeSymbols;
  /** The reference's name for a model the ABI names differently (ABI `sm90_mqa` is the indexer's `sm90`). */
  readonly referenceModel?: (abiModel: string) => string;
  /**
   * Runs the op. `out` holds the output tensors pre-filled exactly as the reference starts them (C copied, zeros, ...);
   * the call writes into them.
   */
  run(
    backend: Backend,
    inputs: Record<string, Tensor>,
    scalars: Record<string, unknown>,
    model: string,
    out: Record<string, Tensor>,
  ): void;
}

/** The architecture an op needs, when it exists for one architecture only (the registry's `arch`). */
export function archRequirement(op: string): ArchRequirement | undefined {
  return operation(op)?.arch;
}

/**
 * Why a backend skips an op that only another architecture can run, or undefined for an op without that limit (or a
 * backend that reports that architecture, `sm_100a` and later, which runs it through its own entries).
 * @param op DeepGEMM op name
 * @param backend the backend's name
 * @param arch the architecture the backend reports (`go_backend_info` "arch"), if any
 */
export function archSkip(op: string, backend: string, arch?: unknown): string | undefined {
  const r = archRequirement(op);
  if (!r || (typeof arch === "string" && /^sm_1\d\d/.test(arch))) return undefined;
  const on = typeof arch === "string" && arch ? `; ${backend} is ${arch}` : "";
  return `${op} needs ${r.arch}: ${r.why}${on}`;
}

/** A call whose inputs need another architecture (an FP8 einsum form DeepGEMM has on SM100 only): a skip, not an error. */
export class ArchUnsupportedError extends Error {
  override name = "ArchUnsupportedError";
}

function need(inputs: Record<string, Tensor>, name: string, op: string): Tensor {
  const t = inputs[name];
  if (!t) throw new TypeError(`${op}: input "${name}" is missing`);
  return t;
}

function tuple(v: unknown, n: number, what: string): number[] | null {
  if (v === undefined || v === null) return null;
  if (!Array.isArray(v) || v.length !== n || v.some((x) => !Number.isSafeInteger(x))) {
    throw new TypeError(`${what} must be a list of ${n} integers`);
  }
  return v;
}

/** `[granA, granK]`, `[granB, granK]` from `recipe` or `recipe_a`/`recipe_b` (defaults: 1×128 and 128×128). */
function recipes(
  scalars: Record<string, unknown>,
  dflt: [number, number, number],
): [[number, number], [number, number]] {
  const r = tuple(scalars.recipe, 3, "recipe");
  const ra = tuple(scalars.recipe_a, 2, "recipe_a"), rb = tuple(scalars.recipe_b, 2, "recipe_b");
  if (ra && rb) return [[ra[0], ra[1]], [rb[0], rb[1]]];
  const x = r ?? dflt;
  return [[x[0], x[2]], [x[1], x[2]]];
}

function int(scalars: Record<string, unknown>, name: string, dflt: number): number {
  const v = scalars[name] ?? dflt;
  if (typeof v === "boolean") return v ? 1 : 0;
  if (typeof v !== "number" || !Number.isSafeInteger(v)) throw new TypeError(`scalar "${name}" must be an integer`);
  return v;
}

/** The four FP8 operands of a K-major GEMM family (`a`, `sfa`, `b`, `sfb`) and the recipes from the scalars. */
function fp8Args(inputs: Record<string, Tensor>, scalars: Record<string, unknown>, op: string) {
  const [recipeA, recipeB] = recipes(scalars, [1, 128, 128]);
  return {
    a: need(inputs, "a", op),
    sfa: need(inputs, "sfa", op),
    b: need(inputs, "b", op),
    sfb: need(inputs, "sfb", op),
    recipeA,
    recipeB,
  };
}

/** Transposes the last two dims when the layout letter says the operand is stored the other way. */
function view(t: Tensor, transposed: boolean): Tensor {
  return transposed ? t.transpose(-2, -1) : t;
}

/** `t` for A means stored [K, M]; `n` for B means stored [K, N] (the ABI's own layout is `nt`). */
function layoutViews(layout: GemmLayout = "nt"): { aT: boolean; bN: boolean } {
  return { aT: layout[0] === "t", bN: layout[1] === "n" };
}

/** The `expr` scalar of einsum / fp8_einsum, without spaces. */
function exprOf(scalars: Record<string, unknown>, op: string): string {
  const e = scalars.expr;
  if (typeof e !== "string") throw new TypeError(`${op}: scalar "expr" is required (a string)`);
  return e.replace(/\s+/g, "");
}

/**
 * `[rows, s·k]` bf16: row i holds `t[0, i, :], t[1, i, :], …`, the concatenated (b, k) reduction of einsum
 * "bmk,bnk->mn" (b outer, k inner; deepgemm-ops.md §5.6).
 */
function concatBatches(t: Tensor): Tensor {
  const [s, rows, k] = t.shape;
  const c = t.contiguous(), src = c.data as Uint16Array, dst = new Uint16Array(rows * s * k);
  for (let i = 0; i < rows; i++) {
    for (let b = 0; b < s; b++) dst.set(src.subarray((b * rows + i) * k, (b * rows + i + 1) * k), (i * s + b) * k);
  }
  return Tensor.from("bf16", [rows, s * k], dst);
}

/** The i32 group sizes of a K-grouped call (`grouped_layout`, DeepGEMM's device copy of `ks_cpu`) and their values. */
function groupSizes(inputs: Record<string, Tensor>, op: string): { ks: Tensor; ksHost: number[] } {
  const ks = inputs.ks ?? need(inputs, "grouped_layout", op);
  return { ks, ksHost: Array.from(ks.contiguous().data as Int32Array) };
}

const isQuantKind = (name: string): name is QuantKind => Object.hasOwn(QUANT_KIND_CODES, name);
const isScaleRule = (name: string): name is MxScaleRuleName => Object.hasOwn(MX_SCALE_RULE_CODES, name);

/** The MX `scale_rule` scalar (default floor). */
function scaleRule(scalars: Record<string, unknown>, recipe: string): MxScaleRuleName {
  const v = scalars.scale_rule ?? "floor";
  if (typeof v !== "string" || !isScaleRule(v)) {
    throw new RangeError(
      `${recipe}: scale rule ${JSON.stringify(v)} (MX only: ${Object.keys(MX_SCALE_RULE_CODES).join(", ")})`,
    );
  }
  return v;
}

/** The `tf32_rounding` scalar; the reference's default is RNE (H200, `deepgemm-ops.md` §7). */
function tf32Rounding(scalars: Record<string, unknown>): "rne" | "truncate" {
  const v = scalars.tf32_rounding ?? "rne";
  if (v !== "rne" && v !== "truncate") throw new RangeError(`Unknown TF32 rounding "${v}"`);
  return v;
}

/** One ABI family's call for the op `op` of the registry, whose row says how ({@link NativeCall}). */
type FamilyCall = (
  backend: Backend,
  op: string,
  call: NativeCall,
  inputs: Record<string, Tensor>,
  scalars: Record<string, unknown>,
  model: string,
  out: Record<string, Tensor>,
) => void;

/**
 * `fp8_einsum("bhr,hdr->bhd", (x, sfx), (y, sfy), d)` (deepgemm-ops.md §5.6): DeepGEMM's SM90 batched 1D2D GEMM, one
 * FP8 GEMM per head on `x[:, h, :]`, `y[h]` and `d[:, h, :]` with their scale views. The other expressions exist on
 * SM100 only.
 */
const fp8Einsum: FamilyCall = (backend, op, _call, inputs, scalars, model, out) => {
  const expr = exprOf(scalars, op);
  if (expr !== "bhr,hdr->bhd") {
    throw new ArchUnsupportedError(
      `fp8_einsum "${expr}" needs SM100 (Blackwell): DeepGEMM has that expression as an SM100 kernel only ` +
        `(SM90 runs "bhr,hdr->bhd")`,
    );
  }
  const x = fp8Args(inputs, scalars, op);
  const c = inputs.c ?? null;
  for (let h = 0; h < x.a.shape[1]; h++) {
    backend.fp8Gemm({
      a: x.a.select(1, h),
      sfa: x.sfa.select(1, h),
      b: x.b.select(0, h),
      sfb: x.sfb.select(0, h),
      c: c && c.select(1, h),
      d: out.d.select(1, h),
      recipeA: x.recipeA,
      recipeB: x.recipeB,
      model: abiModelName(model),
    });
  }
};

/** A dense FP8 GEMM with layout letters (C with FP32 D defaults to the 1D1D recipe 1×1×128). */
const fp8Dense: FamilyCall = (backend, op, call, inputs, scalars, model, out) => {
  const { aT, bN } = layoutViews(call.layout);
  const a = view(need(inputs, "a", op), aT), b = view(need(inputs, "b", op), bN);
  const sfa = view(need(inputs, "sfa", op), aT), sfb = view(need(inputs, "sfb", op), bN);
  const [ra, rb] = recipes(scalars, out.d.dtype === "f32" && inputs.c ? [1, 1, 128] : [1, 128, 128]);
  backend.fp8Gemm({
    a,
    sfa,
    b,
    sfb,
    c: inputs.c ?? null,
    d: out.d,
    recipeA: ra,
    recipeB: rb,
    model: abiModelName(model),
  });
};

/**
 * `einsum(expr, a, b, d, c)` (deepgemm-ops.md §5.6) as BF16 GEMMs: "bhr,hdr->bhd" and "bhd,hdr->bhr" as one GEMM per
 * head h on the views `a[:, h, :]`, `b[h]` (transposed for bhd,hdr->bhr) and `d[:, h, :]`; "bmk,bnk->mn" as one GEMM
 * over the concatenated (b, k) reduction (FP32 D accumulates onto itself: c = d).
 */
const bf16Einsum: FamilyCall = (backend, op, _call, inputs, scalars, model, out) => {
  const expr = exprOf(scalars, op);
  const a = need(inputs, "a", op), b = need(inputs, "b", op);
  if (expr === "bmk,bnk->mn") {
    const f32 = out.d.dtype === "f32";
    backend.bf16Gemm({
      a: concatBatches(a),
      b: concatBatches(b),
      c: f32 ? cloneTensor(out.d) : null,
      d: out.d,
      model: abiModelName(model),
    });
    return;
  }
  if (expr !== "bhr,hdr->bhd" && expr !== "bhd,hdr->bhr") throw new TypeError(`${op}: unsupported expr "${expr}"`);
  for (let h = 0; h < a.shape[1]; h++) {
    const bh = b.select(0, h);
    backend.bf16Gemm({
      a: a.select(1, h),
      b: expr === "bhr,hdr->bhd" ? bh : bh.transpose(),
      d: out.d.select(1, h),
      model: abiModelName(model),
    });
  }
};

/** A dense BF16 GEMM with layout letters. */
const bf16Dense: FamilyCall = (backend, op, call, inputs, _scalars, model, out) => {
  const { aT, bN } = layoutViews(call.layout);
  const a = view(need(inputs, "a", op), aT), b = view(need(inputs, "b", op), bN);
  backend.bf16Gemm({ a, b, c: inputs.c ?? null, d: out.d, model: abiModelName(model) });
};

/**
 * A quantization recipe (`reference/quant/recipes.ts`, DeepGEMM's names) through `go_quantize`: `x` `[..., n]` as
 * `[rows, n]`; scalars `gran_k`, `use_ue8m0`, `use_packed_ue8m0`, `scale_rule`; the model is the division semantics
 * (`gpu`, `cpu`). FP4 codes come back packed and are unpacked into the E2M1 output the reference writes.
 */
const quantize: FamilyCall = (backend, recipe, _call, inputs, scalars, model, out) => {
  if (!isQuantKind(recipe)) throw new RangeError(`go_quantize has no recipe "${recipe}"`);
  const x0 = need(inputs, "x", recipe);
  const n = x0.shape[x0.ndim - 1], rows = x0.numel / Math.max(1, n);
  const x = x0.ndim === 2 ? x0 : x0.contiguous().reshape([rows, n]);
  const opts = {
    granK: int(scalars, "gran_k", 128),
    useUe8m0: int(scalars, "use_ue8m0", 0) !== 0,
    usePackedUe8m0: int(scalars, "use_packed_ue8m0", 0) !== 0,
    ...(recipe.startsWith("mx") ? { scaleRule: scaleRule(scalars, recipe) } : {}),
  };
  const spec = quantOutputSpecs(recipe, rows, n, opts);
  const fp4 = spec.q.dtype === "u8";
  const q = fp4 ? Tensor.zeros("u8", spec.q.shape) : out.q.reshape(spec.q.shape);
  const sf = out.sf.reshape(spec.sf.shape);
  backend.quantize({
    recipe,
    x,
    q,
    sf,
    globalSf: spec.global_sf ? out.global_sf : null,
    ...opts,
    model: quantizerModel(model),
  });
  if (fp4) {
    const codes = unpackFp4(Tensor.from("i8", q.shape, new Int8Array(q.data.buffer, q.data.byteOffset, q.numel)));
    (out.q.data as Uint8Array).set(codes.data as Uint8Array);
  }
};

/** Every ABI family's call. */
const FAMILY_CALLS: { readonly [F in AbiFamily]: FamilyCall } = {
  fp8_gemm: (backend, op, call, ...rest) => (call.einsum ? fp8Einsum : fp8Dense)(backend, op, call, ...rest),
  bf16_gemm: (backend, op, call, ...rest) => (call.einsum ? bf16Einsum : bf16Dense)(backend, op, call, ...rest),
  /**
   * `cublaslt_gemm_{nt,nn,tn,tt}` through cuBLASLt itself: scalar `split_k` (default 1: the `cublaslt` model's
   * default, so cuBLASLt is asked for an algorithm without K splits; 0 takes cuBLASLt's own choice, which
   * tests/gpu/cublaslt_check.ts matches with the model at the split-K cuBLASLt reports).
   */
  cublaslt_gemm(backend, op, call, inputs, scalars, model, out) {
    const { aT, bN } = layoutViews(call.layout);
    backend.cublasltGemm({
      a: view(need(inputs, "a", op), aT),
      b: view(need(inputs, "b", op), bN),
      c: inputs.c ?? null,
      d: out.d,
      splitK: int(scalars, "split_k", 1),
      model: abiModelName(model),
    });
  },
  m_grouped_fp8_gemm_contiguous(backend, op, call, inputs, scalars, model, out) {
    const { bN } = layoutViews(call.layout);
    const x = fp8Args(inputs, scalars, op);
    backend.mGroupedFp8GemmContiguous({
      ...x,
      b: view(x.b, bN),
      sfb: view(x.sfb, bN),
      d: out.d,
      groupedLayout: need(inputs, "grouped_layout", op),
      usePsumLayout: int(scalars, "use_psum_layout", 0) !== 0,
      mkAlignment: int(scalars, "mk_alignment", 128),
      model: abiModelName(model),
    });
  },
  m_grouped_bf16_gemm_contiguous(backend, op, call, inputs, scalars, model, out) {
    const { bN } = layoutViews(call.layout);
    backend.mGroupedBf16GemmContiguous({
      a: need(inputs, "a", op),
      b: view(need(inputs, "b", op), bN),
      d: out.d,
      groupedLayout: need(inputs, "grouped_layout", op),
      usePsumLayout: int(scalars, "use_psum_layout", 0) !== 0,
      ensureZeroPadding: int(scalars, "ensure_zero_padding", 1) !== 0,
      mkAlignment: int(scalars, "mk_alignment", 128),
      model: abiModelName(model),
    });
  },
  m_grouped_fp8_gemm_masked(backend, op, _call, inputs, scalars, model, out) {
    backend.mGroupedFp8GemmMasked({
      ...fp8Args(inputs, scalars, op),
      d: out.d,
      maskedM: need(inputs, "masked_m", op),
      model: abiModelName(model),
    });
  },
  m_grouped_bf16_gemm_masked(backend, op, _call, inputs, _scalars, model, out) {
    backend.mGroupedBf16GemmMasked({
      a: need(inputs, "a", op),
      b: need(inputs, "b", op),
      d: out.d,
      maskedM: need(inputs, "masked_m", op),
      model: abiModelName(model),
    });
  },
  k_grouped_fp8_gemm(backend, op, _call, inputs, scalars, model, out) {
    const { a, sfa, b, sfb } = fp8Args(inputs, scalars, op);
    backend.kGroupedFp8Gemm({
      a,
      sfa,
      b,
      sfb,
      c: inputs.c ?? null,
      d: out.d,
      ...groupSizes(inputs, op),
      layout: "sm90_nt_flat",
      granK: 128,
      model: abiModelName(model),
    });
  },
  k_grouped_bf16_gemm(backend, op, _call, inputs, _scalars, model, out) {
    backend.kGroupedBf16Gemm({
      a: need(inputs, "a", op),
      b: need(inputs, "b", op),
      c: inputs.c ?? null,
      d: out.d,
      ...groupSizes(inputs, op),
      model: abiModelName(model),
    });
  },
  paged_mqa_logits_metadata(backend, op, _call, inputs, scalars, model, out) {
    backend.getPagedMqaLogitsMetadata({
      contextLens: need(inputs, "context_lens", op),
      blockKv: int(scalars, "block_kv", 64),
      numSms: int(scalars, "num_sms", 132),
      scheduleMeta: out.schedule_meta,
      model: abiModelName(model),
    });
  },
  quantize,
  fp8_gemm_skip_head_mid(backend, op, _call, inputs, scalars, model, out) {
    const hs = tuple(scalars.head_splits, 3, "head_splits");
    if (!hs) throw new TypeError(`${op}: scalar "head_splits" is required`);
    backend.fp8GemmSkipHeadMid({
      ...fp8Args(inputs, scalars, op),
      d: out.d,
      headSplits: [hs[0], hs[1], hs[2]],
      model: abiModelName(model),
    });
  },
  tf32_hc_prenorm_gemm(backend, op, _call, inputs, scalars, model, out) {
    backend.tf32HcPrenormGemm({
      a: need(inputs, "a", op),
      b: need(inputs, "b", op),
      d: out.d,
      sqrSum: out.sqr_sum,
      numSplits: scalars.num_splits === undefined ? undefined : int(scalars, "num_splits", 1),
      tf32Rounding: tf32Rounding(scalars),
      model: abiModelName(model),
    });
  },
  fp8_mqa_logits(backend, op, _call, inputs, scalars, model, out) {
    backend.fp8MqaLogits({
      q: need(inputs, "q", op),
      kv: need(inputs, "kv", op),
      kvSf: need(inputs, "kv_sf", op),
      weights: need(inputs, "weights", op),
      ks: need(inputs, "cu_seq_len_k_start", op),
      ke: need(inputs, "cu_seq_len_k_end", op),
      logits: out.logits,
      cleanLogits: int(scalars, "clean_logits", 1) !== 0,
      maxSeqlenK: int(scalars, "max_seqlen_k", 0),
      model: abiModelName(model),
    });
  },
  fp8_paged_mqa_logits(backend, op, _call, inputs, _scalars, model, out) {
    backend.fp8PagedMqaLogits({
      q: need(inputs, "q", op),
      kvCache: need(inputs, "kv_cache", op),
      weights: need(inputs, "weights", op),
      contextLens: need(inputs, "context_lens", op),
      blockTable: need(inputs, "block_table", op),
      logits: out.logits,
      model: abiModelName(model),
    });
  },
};

/** Every op `verify` can run natively, by DeepGEMM name: the registry's rows with a `native` call. */
export const BACKEND_OPS: Readonly<Record<string, BackendOp>> = Object.freeze(Object.fromEntries(
  OPERATIONS.flatMap((row) => {
    const call = row.native;
    if (!call) return [];
    const group = row.group;
    const bop: BackendOp = {
      family: call.family,
      entry: FAMILY_ENTRIES[call.family],
      ...(hasAbiAliases(group) ? { referenceModel: (m: string) => referenceModelName(group, m) } : {}),
      run: (backend, inputs, scalars, model, out) =>
        FAMILY_CALLS[call.family](backend, row.name, call, inputs, scalars, model, out),
    };
    return [[row.name, Object.freeze(bop)] as const];
  }),
));

/**
 * Whether a backend's library exports the entry an op needs (a backend object without a library, a test double, is
 * taken at its word).
 */
export function hasEntry(backend: Backend, bop: BackendOp): boolean {
  const lib = (backend as { library?: { symbols?: Record<string, unknown> } }).library;
  return !lib?.symbols || (lib.symbols[bop.entry] !== null && lib.symbols[bop.entry] !== undefined);
}

/** The native call of an op, or undefined when the ABI has none. */
export function backendOp(op: string): BackendOp | undefined {
  return Object.hasOwn(BACKEND_OPS, op) ? BACKEND_OPS[op] : undefined;
}

/** A fresh copy of a tensor (contiguous), so a backend can write into it without touching the reference's. */
export function cloneTensor(t: Tensor): Tensor {
  const c = t.contiguous();
  return c === t ? Tensor.from(t.dtype, t.shape, t.data.slice()) : c;
}
