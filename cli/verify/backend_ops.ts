/**
 * How `verify` runs a DeepGEMM operation on a native backend: one row per op name, mapping DeepGEMM's argument names
 * (`a`, `sfa`, `b`, `sfb`, `c`, `grouped_layout`, `masked_m`, `ks`, ...) and scalars (`recipe`, `use_psum_layout`, ...)
 * onto the typed ABI wrappers of `ffi/`. The layout letters (`nt/nn/tn/tt`) become strided views, as DeepGEMM's
 * own host code turns `nn/tn/tt` into `nt` by transposing the views and their scale factors (`deepgemm-ops.md` §5.1).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { backendOp } from "./backend_ops.ts";
 * assert.equal(backendOp("fp8_gemm_nt")?.family, "fp8_gemm");
 * assert.equal(backendOp("no_such_op"), undefined);
 * ```
 * @module
 */
import type { Backend } from "../../ffi/backend.ts";
import type { ModelName } from "../../ffi/models.ts";
import { Tensor } from "../../reference/tensor/tensor.ts";

/** A native call for one op: the ABI family (key of the backend-info "models") and the call itself. */
export interface BackendOp {
  /** ABI family, as in `go_backend_info` "models". */
  readonly family: string;
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
    run(backend, inputs, _scalars, model, out) {
      const op = `bf16_gemm_${letters}`;
      const a = view(need(inputs, "a", op), aT), b = view(need(inputs, "b", op), bN);
      backend.bf16Gemm({ a, b, c: inputs.c ?? null, d: out.d, model: model as ModelName });
    },
  };
}

const mGroupedFp8Contiguous = (bN: boolean): BackendOp => ({
  family: "m_grouped_fp8_gemm_contiguous",
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
  m_grouped_fp8_gemm_nt_contiguous: mGroupedFp8Contiguous(false),
  m_grouped_fp8_gemm_nn_contiguous: mGroupedFp8Contiguous(true),
  m_grouped_fp8_gemm_nt_masked: {
    family: "m_grouped_fp8_gemm_masked",
    run(backend, inputs, scalars, model, out) {
      const op = "m_grouped_fp8_gemm_nt_masked";
      backend.mGroupedFp8GemmMasked({
        ...fp8Args(inputs, scalars, op),
        d: out.d,
        maskedM: need(inputs, "masked_m", op),
        model: model as ModelName,
      });
    },
  },
  k_grouped_fp8_gemm_nt_contiguous: {
    family: "k_grouped_fp8_gemm",
    run(backend, inputs, scalars, model, out) {
      const op = "k_grouped_fp8_gemm_nt_contiguous";
      const ks = inputs.ks ?? need(inputs, "grouped_layout", op);
      const { a, sfa, b, sfb } = fp8Args(inputs, scalars, op);
      backend.kGroupedFp8Gemm({
        a,
        sfa,
        b,
        sfb,
        c: inputs.c ?? null,
        d: out.d,
        ks,
        ksHost: Array.from(ks.contiguous().data as Int32Array),
        layout: "sm90_nt_flat",
        granK: 128,
        model: model as ModelName,
      });
    },
  },
  fp8_gemm_nt_skip_head_mid: {
    family: "fp8_gemm_skip_head_mid",
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

/** The native call of an op, or undefined when the ABI has none. */
export function backendOp(op: string): BackendOp | undefined {
  return Object.hasOwn(BACKEND_OPS, op) ? BACKEND_OPS[op] : undefined;
}

/** A fresh copy of a tensor (contiguous), so a backend can write into it without touching the reference's. */
export function cloneTensor(t: Tensor): Tensor {
  const c = t.contiguous();
  return c === t ? Tensor.from(t.dtype, t.shape, t.data.slice()) : c;
}
