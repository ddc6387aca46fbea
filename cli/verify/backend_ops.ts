/**
 * How `verify` runs a DeepGEMM operation on a native backend: one row per op name, mapping DeepGEMM's argument names
 * (`a`, `sfa`, `b`, `sfb`, `c`, `grouped_layout`, `masked_m`, `ks`, ...) and scalars (`recipe`, `use_psum_layout`, ...)
 * onto the typed ABI wrappers of `ffi/`. The layout letters (`nt/nn/tn/tt`) become strided views, as DeepGEMM's
 * own host code turns `nn/tn/tt` into `nt` by transposing the views and their scale factors (`deepgemm-ops.md` §5.1).
 * DeepGEMM's batched forms (`einsum`, `fp8_einsum`) run as one ABI GEMM per batch entry on views of the operands.
 *
 * Operations that exist only for another GPU architecture (FP4 tensor-core GEMMs, tcgen05 Mega MoE, ...) are listed in
 * {@link ARCH_ONLY}: a backend skips them with a reason naming the architecture ({@link archSkip}), never "no entry".
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { archSkip, backendOp } from "./backend_ops.ts";
 * assert.equal(backendOp("fp8_gemm_nt")?.family, "fp8_gemm");
 * assert.equal(backendOp("no_such_op"), undefined);
 * assert.match(archSkip("bf16_mega_moe", "cuda", "sm_90a") ?? "", /needs SM100 \(Blackwell\)/);
 * assert.equal(archSkip("bf16_mega_moe", "mine", "sm_100a"), undefined);
 * ```
 * @module
 */
import type { Backend } from "../../ffi/backend.ts";
import type { NativeSymbols } from "../../ffi/library.ts";
import type { ModelName } from "../../ffi/models.ts";
import { type MxScaleRuleName, QUANT_KIND_CODES, type QuantKind, quantOutputSpecs } from "../../ffi/quant_ops.ts";
import { unpackFp4 } from "../../reference/quant/fp4_packing.ts";
import { Tensor } from "../../reference/tensor/tensor.ts";

/** A native call for one op: the ABI family (key of the backend-info "models") and the call itself. */
export interface BackendOp {
  /** ABI family, as in `go_backend_info` "models". */
  readonly family: string;
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

/** An operation that DeepGEMM provides for one GPU architecture only, and what needs it. */
export interface ArchRequirement {
  /** The architecture, in DeepGEMM's words. */
  readonly arch: "SM100 (Blackwell)";
  /** What of the operation needs it. */
  readonly why: string;
}

const FP4_GEMM: ArchRequirement = {
  arch: "SM100 (Blackwell)",
  why:
    "FP4 (E2M1) operands run on tcgen05 block-scaled MMA (kind::mxf8f6f4; the kernel ABI has no FP4 operand type); " +
    "the FP8 × FP8 form is the SM90 kernel under its fp8_* name",
};
const FP4_MQA: ArchRequirement = {
  arch: "SM100 (Blackwell)",
  why: "FP4 Q and KV with packed UE8M0 scales run on tcgen05 block-scaled MMA; the FP8 form is the SM90 kernel " +
    "under its fp8_* name",
};

/**
 * The operations of the reference that only another architecture can run (deepgemm-ops.md §10, §15): DeepGEMM ships
 * them as SM100 kernels only, so an SM90 (or CPU) backend skips them with this reason.
 */
export const ARCH_ONLY: Readonly<Record<string, ArchRequirement>> = Object.freeze({
  fp8_fp4_gemm_nt: FP4_GEMM,
  fp8_fp4_gemm_nn: FP4_GEMM,
  fp8_fp4_gemm_tn: FP4_GEMM,
  fp8_fp4_gemm_tt: FP4_GEMM,
  m_grouped_fp8_fp4_gemm_nt_contiguous: FP4_GEMM,
  m_grouped_fp8_fp4_gemm_nn_contiguous: FP4_GEMM,
  m_grouped_fp8_fp4_gemm_nt_masked: FP4_GEMM,
  k_grouped_fp8_gemm_tn_contiguous: {
    arch: "SM100 (Blackwell)",
    why: "the MN-major K-grouped FP8 GEMM with in-unit UE8M0 scales is an SM100 kernel (sm100_1d1d); the SM90 form " +
      "is k_grouped_fp8_gemm_nt_contiguous",
  },
  fp8_fp4_mqa_logits: FP4_MQA,
  fp8_fp4_paged_mqa_logits: FP4_MQA,
  fp8_fp4_mega_moe: {
    arch: "SM100 (Blackwell)",
    why: "Mega MoE fuses FP8 × FP4 expert GEMMs on tcgen05 block-scaled MMA with TMEM accumulators (tcgen05_mxf8f6f4)",
  },
  bf16_mega_moe: {
    arch: "SM100 (Blackwell)",
    why: "Mega MoE fuses its BF16 expert GEMMs on tcgen05 MMA with TMEM accumulators (tcgen05)",
  },
});

/** The architecture an op needs, when it exists for one architecture only. */
export function archRequirement(op: string): ArchRequirement | undefined {
  return Object.hasOwn(ARCH_ONLY, op) ? ARCH_ONLY[op] : undefined;
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
  return v as number[];
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
  if (!Number.isSafeInteger(v)) throw new TypeError(`scalar "${name}" must be an integer`);
  return v as number;
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

/** The ABI names the SM90 MQA model `sm90_mqa`; the indexer reference calls it `sm90`. */
const mqaReferenceModel = (m: string) => (m === "sm90_mqa" ? "sm90" : m);

/** Transposes the last two dims when the layout letter says the operand is stored the other way. */
function view(t: Tensor, transposed: boolean): Tensor {
  return transposed ? t.transpose(-2, -1) : t;
}

/** A dense FP8 GEMM with layout letters: `t` for A means stored [K, M]; `n` for B means stored [K, N]. */
function fp8Dense(letters: string): BackendOp {
  const aT = letters[0] === "t", bN = letters[1] === "n";
  return {
    family: "fp8_gemm",
    entry: "go_fp8_gemm",
    run(backend, inputs, scalars, model, out) {
      const op = `fp8_gemm_${letters}`;
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
        model: model as ModelName,
      });
    },
  };
}

function bf16Dense(letters: string): BackendOp {
  const aT = letters[0] === "t", bN = letters[1] === "n";
  return {
    family: "bf16_gemm",
    entry: "go_bf16_gemm",
    run(backend, inputs, _scalars, model, out) {
      const op = `bf16_gemm_${letters}`;
      const a = view(need(inputs, "a", op), aT), b = view(need(inputs, "b", op), bN);
      backend.bf16Gemm({ a, b, c: inputs.c ?? null, d: out.d, model: model as ModelName });
    },
  };
}

/**
 * `cublaslt_gemm_{nt,nn,tn,tt}` through cuBLASLt itself: the layout letters as views (as bf16Dense); scalar `split_k`
 * (default 1: the `cublaslt` model's default, so cuBLASLt is asked for an algorithm without K splits; 0 takes
 * cuBLASLt's own choice, which tests/gpu/cublaslt_check.ts matches with the model at the split-K cuBLASLt reports).
 */
function cublasltDense(letters: string): BackendOp {
  const aT = letters[0] === "t", bN = letters[1] === "n";
  return {
    family: "cublaslt_gemm",
    entry: "go_cublaslt_gemm",
    run(backend, inputs, scalars, model, out) {
      const op = `cublaslt_gemm_${letters}`;
      backend.cublasltGemm({
        a: view(need(inputs, "a", op), aT),
        b: view(need(inputs, "b", op), bN),
        c: inputs.c ?? null,
        d: out.d,
        splitK: int(scalars, "split_k", 1),
        model: model as ModelName,
      });
    },
  };
}

const mGroupedFp8Contiguous = (bN: boolean): BackendOp => ({
  family: "m_grouped_fp8_gemm_contiguous",
  entry: "go_m_grouped_fp8_gemm_contiguous",
  run(backend, inputs, scalars, model, out) {
    const op = "m_grouped_fp8_gemm_contiguous";
    const x = fp8Args(inputs, scalars, op);
    backend.mGroupedFp8GemmContiguous({
      ...x,
      b: view(x.b, bN),
      sfb: view(x.sfb, bN),
      d: out.d,
      groupedLayout: need(inputs, "grouped_layout", op),
      usePsumLayout: int(scalars, "use_psum_layout", 0) !== 0,
      mkAlignment: int(scalars, "mk_alignment", 128),
      model: model as ModelName,
    });
  },
});

function mGroupedBf16Contiguous(bN: boolean): BackendOp {
  return {
    family: "m_grouped_bf16_gemm_contiguous",
    entry: "go_m_grouped_bf16_gemm_contiguous",
    run(backend, inputs, scalars, model, out) {
      const op = `m_grouped_bf16_gemm_${bN ? "nn" : "nt"}_contiguous`;
      backend.mGroupedBf16GemmContiguous({
        a: need(inputs, "a", op),
        b: view(need(inputs, "b", op), bN),
        d: out.d,
        groupedLayout: need(inputs, "grouped_layout", op),
        usePsumLayout: int(scalars, "use_psum_layout", 0) !== 0,
        ensureZeroPadding: int(scalars, "ensure_zero_padding", 1) !== 0,
        mkAlignment: int(scalars, "mk_alignment", 128),
        model: model as ModelName,
      });
    },
  };
}

function fp8Masked(op: string): BackendOp {
  return {
    family: "m_grouped_fp8_gemm_masked",
    entry: "go_m_grouped_fp8_gemm_masked",
    run(backend, inputs, scalars, model, out) {
      backend.mGroupedFp8GemmMasked({
        ...fp8Args(inputs, scalars, op),
        d: out.d,
        maskedM: need(inputs, "masked_m", op),
        model: model as ModelName,
      });
    },
  };
}

function bf16Masked(op: string): BackendOp {
  return {
    family: "m_grouped_bf16_gemm_masked",
    entry: "go_m_grouped_bf16_gemm_masked",
    run(backend, inputs, _scalars, model, out) {
      backend.mGroupedBf16GemmMasked({
        a: need(inputs, "a", op),
        b: need(inputs, "b", op),
        d: out.d,
        maskedM: need(inputs, "masked_m", op),
        model: model as ModelName,
      });
    },
  };
}

/** The i32 group sizes of a K-grouped call (`grouped_layout`, DeepGEMM's device copy of `ks_cpu`) and their values. */
function groupSizes(inputs: Record<string, Tensor>, op: string): { ks: Tensor; ksHost: number[] } {
  const ks = inputs.ks ?? need(inputs, "grouped_layout", op);
  return { ks, ksHost: Array.from(ks.contiguous().data as Int32Array) };
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

/**
 * `einsum(expr, a, b, d, c)` (deepgemm-ops.md §5.6) as BF16 GEMMs: "bhr,hdr->bhd" and "bhd,hdr->bhr" as one GEMM per
 * head h on the views `a[:, h, :]`, `b[h]` (transposed for bhd,hdr->bhr) and `d[:, h, :]`; "bmk,bnk->mn" as one GEMM
 * over the concatenated (b, k) reduction (FP32 D accumulates onto itself: c = d).
 */
const einsumOp: BackendOp = {
  family: "bf16_gemm",
  entry: "go_bf16_gemm",
  run(backend, inputs, scalars, model, out) {
    const op = "einsum";
    const expr = exprOf(scalars, op);
    const a = need(inputs, "a", op), b = need(inputs, "b", op);
    if (expr === "bmk,bnk->mn") {
      const f32 = out.d.dtype === "f32";
      backend.bf16Gemm({
        a: concatBatches(a),
        b: concatBatches(b),
        c: f32 ? cloneTensor(out.d) : null,
        d: out.d,
        model: model as ModelName,
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
        model: model as ModelName,
      });
    }
  },
};

/**
 * `fp8_einsum("bhr,hdr->bhd", (x, sfx), (y, sfy), d)` (deepgemm-ops.md §5.6): DeepGEMM's SM90 batched 1D2D GEMM, one
 * FP8 GEMM per head on `x[:, h, :]`, `y[h]` and `d[:, h, :]` with their scale views. The other expressions exist on
 * SM100 only.
 */
const fp8EinsumOp: BackendOp = {
  family: "fp8_gemm",
  entry: "go_fp8_gemm",
  run(backend, inputs, scalars, model, out) {
    const op = "fp8_einsum";
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
        model: model as ModelName,
      });
    }
  },
};

/**
 * A quantization recipe (`reference/quant/recipes.ts`, DeepGEMM's names) through `go_quantize`: `x` `[..., n]` as
 * `[rows, n]`; scalars `gran_k`, `use_ue8m0`, `use_packed_ue8m0`, `scale_rule`; the model is the division semantics
 * (`gpu`, `cpu`). FP4 codes come back packed and are unpacked into the E2M1 output the reference writes.
 */
function quantizeOp(recipe: QuantKind): BackendOp {
  return {
    family: "quantize",
    entry: "go_quantize",
    run(backend, inputs, scalars, model, out) {
      const x0 = need(inputs, "x", recipe);
      const n = x0.shape[x0.ndim - 1], rows = x0.numel / Math.max(1, n);
      const x = x0.ndim === 2 ? x0 : x0.contiguous().reshape([rows, n]);
      const opts = {
        granK: int(scalars, "gran_k", 128),
        useUe8m0: int(scalars, "use_ue8m0", 0) !== 0,
        usePackedUe8m0: int(scalars, "use_packed_ue8m0", 0) !== 0,
        ...(recipe.startsWith("mx") ? { scaleRule: (scalars.scale_rule ?? "floor") as MxScaleRuleName } : {}),
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
        model: model as "gpu" | "cpu",
      });
      if (fp4) {
        const codes = unpackFp4(Tensor.from("i8", q.shape, new Int8Array(q.data.buffer as ArrayBuffer)));
        (out.q.data as Uint8Array).set(codes.data as Uint8Array);
      }
    },
  };
}

/** Every op `verify` can run natively, by DeepGEMM name. */
export const BACKEND_OPS: Readonly<Record<string, BackendOp>> = Object.freeze({
  fp8_gemm_nt: fp8Dense("nt"),
  fp8_gemm_nn: fp8Dense("nn"),
  fp8_gemm_tn: fp8Dense("tn"),
  fp8_gemm_tt: fp8Dense("tt"),
  bf16_gemm_nt: bf16Dense("nt"),
  bf16_gemm_nn: bf16Dense("nn"),
  bf16_gemm_tn: bf16Dense("tn"),
  bf16_gemm_tt: bf16Dense("tt"),
  cublaslt_gemm_nt: cublasltDense("nt"),
  cublaslt_gemm_nn: cublasltDense("nn"),
  cublaslt_gemm_tn: cublasltDense("tn"),
  cublaslt_gemm_tt: cublasltDense("tt"),
  m_grouped_fp8_gemm_nt_contiguous: mGroupedFp8Contiguous(false),
  m_grouped_fp8_gemm_nn_contiguous: mGroupedFp8Contiguous(true),
  m_grouped_fp8_gemm_nt_masked: fp8Masked("m_grouped_fp8_gemm_nt_masked"),
  fp8_m_grouped_gemm_nt_masked: fp8Masked("fp8_m_grouped_gemm_nt_masked"),
  k_grouped_fp8_gemm_nt_contiguous: {
    family: "k_grouped_fp8_gemm",
    entry: "go_k_grouped_fp8_gemm",
    run(backend, inputs, scalars, model, out) {
      const op = "k_grouped_fp8_gemm_nt_contiguous";
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
        model: model as ModelName,
      });
    },
  },
  m_grouped_bf16_gemm_nt_contiguous: mGroupedBf16Contiguous(false),
  m_grouped_bf16_gemm_nn_contiguous: mGroupedBf16Contiguous(true),
  m_grouped_bf16_gemm_nt_masked: bf16Masked("m_grouped_bf16_gemm_nt_masked"),
  bf16_m_grouped_gemm_nt_masked: bf16Masked("bf16_m_grouped_gemm_nt_masked"),
  k_grouped_bf16_gemm_tn_contiguous: {
    family: "k_grouped_bf16_gemm",
    entry: "go_k_grouped_bf16_gemm",
    run(backend, inputs, _scalars, model, out) {
      const op = "k_grouped_bf16_gemm_tn_contiguous";
      backend.kGroupedBf16Gemm({
        a: need(inputs, "a", op),
        b: need(inputs, "b", op),
        c: inputs.c ?? null,
        d: out.d,
        ...groupSizes(inputs, op),
        model: model as ModelName,
      });
    },
  },
  get_paged_mqa_logits_metadata: {
    family: "paged_mqa_logits_metadata",
    entry: "go_get_paged_mqa_logits_metadata",
    referenceModel: mqaReferenceModel,
    run(backend, inputs, scalars, model, out) {
      backend.getPagedMqaLogitsMetadata({
        contextLens: need(inputs, "context_lens", "get_paged_mqa_logits_metadata"),
        blockKv: int(scalars, "block_kv", 64),
        numSms: int(scalars, "num_sms", 132),
        scheduleMeta: out.schedule_meta,
        model: model as ModelName,
      });
    },
  },
  einsum: einsumOp,
  fp8_einsum: fp8EinsumOp,
  ...Object.fromEntries(Object.keys(QUANT_KIND_CODES).map((r) => [r, quantizeOp(r as QuantKind)])),
  fp8_gemm_nt_skip_head_mid: {
    family: "fp8_gemm_skip_head_mid",
    entry: "go_fp8_gemm_skip_head_mid",
    run(backend, inputs, scalars, model, out) {
      const op = "fp8_gemm_nt_skip_head_mid";
      const hs = tuple(scalars.head_splits, 3, "head_splits");
      if (!hs) throw new TypeError(`${op}: scalar "head_splits" is required`);
      backend.fp8GemmSkipHeadMid({
        ...fp8Args(inputs, scalars, op),
        d: out.d,
        headSplits: [hs[0], hs[1], hs[2]],
        model: model as ModelName,
      });
    },
  },
  tf32_hc_prenorm_gemm: {
    family: "tf32_hc_prenorm_gemm",
    entry: "go_tf32_hc_prenorm_gemm",
    // The ABI's `tf32` model is the reference's SM90 HC model (TF32 wgmma k8, 25 bits, SM90 sqr_sum lane order).
    referenceModel: (m) => (m === "tf32" ? "sm90" : m),
    run(backend, inputs, scalars, model, out) {
      const op = "tf32_hc_prenorm_gemm";
      const rounding = (scalars.tf32_rounding ?? "rne") as "rne" | "truncate"; // reference default: RNE (H200, §7)
      backend.tf32HcPrenormGemm({
        a: need(inputs, "a", op),
        b: need(inputs, "b", op),
        d: out.d,
        sqrSum: out.sqr_sum,
        numSplits: scalars.num_splits === undefined ? undefined : int(scalars, "num_splits", 1),
        tf32Rounding: rounding,
        model: model as ModelName,
      });
    },
  },
  fp8_mqa_logits: {
    family: "fp8_mqa_logits",
    entry: "go_fp8_mqa_logits",
    referenceModel: mqaReferenceModel,
    run(backend, inputs, scalars, model, out) {
      const op = "fp8_mqa_logits";
      backend.fp8MqaLogits({
        q: need(inputs, "q", op),
        kv: need(inputs, "kv", op),
        kvSf: need(inputs, "kv_sf", op),
        weights: need(inputs, "weights", op),
        ks: need(inputs, "cu_seq_len_k_start", op),
        ke: need(inputs, "cu_seq_len_k_end", op),
        logits: out.logits,
        cleanLogits: (scalars.clean_logits ?? true) as boolean,
        maxSeqlenK: int(scalars, "max_seqlen_k", 0),
        model: model as ModelName,
      });
    },
  },
  fp8_paged_mqa_logits: {
    family: "fp8_paged_mqa_logits",
    entry: "go_fp8_paged_mqa_logits",
    referenceModel: mqaReferenceModel,
    run(backend, inputs, _scalars, model, out) {
      const op = "fp8_paged_mqa_logits";
      backend.fp8PagedMqaLogits({
        q: need(inputs, "q", op),
        kvCache: need(inputs, "kv_cache", op),
        weights: need(inputs, "weights", op),
        contextLens: need(inputs, "context_lens", op),
        blockTable: need(inputs, "block_table", op),
        logits: out.logits,
        model: model as ModelName,
      });
    },
  },
});

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
