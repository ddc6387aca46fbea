/**
 * The model space `identify` searches: a {@link Variant} is one way a kernel could compute an op's output — a named
 * kernel model with optional overrides of its tensor-core profile, promotion interval and split-K factor, the output
 * rounding (RNE as every model writes it, or RZ), and op-specific scalar variants (the TF32 conversion of the HC GEMM).
 * This file enumerates them for an op and its operands, drops the ones that compute the same thing under another name
 * (recorded as aliases), and spells each as the `oracle run` flags that reproduce it.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { gemmVariants, variantLabel } from "./variants.ts";
 * const vs = gemmVariants({ models: ["cublaslt", "exact"], aFormat: "e4m3", bFormat: "e4m3", K: 256, outDtype: "bf16" });
 * assert.ok(vs.some((v) => variantLabel(v.variant) === "cublaslt --promote none"));
 * assert.ok(vs.some((v) => variantLabel(v.variant) === "cublaslt --split-k 2"));
 * assert.equal(variantLabel(vs[0].variant), "cublaslt"); // the model as named first
 * ```
 * @module
 */
import { KERNEL_MODELS, type ModelOptions, type OutDtype } from "../kernel_models/kernel_models.ts";
import { TENSOR_CORE_PROFILES, type TensorCoreProfile } from "../tensor_core/profiles.ts";

/** Output rounding: `rne` (every model's) or `rz` (truncation of the fp32 accumulator; BF16 output without C). */
export type OutputRounding = "rne" | "rz";

/** One candidate way of computing an op's output. */
export interface Variant {
  /** Kernel model name (a key of the op's models). */
  readonly model: string;
  /** Tensor-core profile overriding the model's. */
  readonly tensorCore?: string;
  /** Promotion interval overriding the model's. */
  readonly promotion?: 128 | "none";
  /** Split-K parts overriding the model's. */
  readonly splitK?: number;
  /** Output type overriding the model's (set to the actual output's dtype). */
  readonly outDtype?: OutDtype;
  /** Output rounding (default `rne`). */
  readonly rounding?: OutputRounding;
  /** Scalar arguments overriding the input's (op-specific variants). */
  readonly scalars?: Readonly<Record<string, unknown>>;
}

/** A variant with the other names it goes by (same arithmetic, different spelling). */
export interface Candidate {
  /** The variant as searched. */
  readonly variant: Variant;
  /** Labels of the variants that compute exactly the same arithmetic. */
  readonly aliases: string[];
}

/**
 * The `oracle run` flags that reproduce a variant (RZ output has no flag: it is written as a note).
 * @param v the variant
 * @returns `sm90_1d2d --split-k 2`, `cublaslt --promote none`, `bf16 --tensor-core tcgen05 (output RZ)`
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { variantLabel } from "./variants.ts";
 * assert.equal(variantLabel({ model: "sm90_1d2d", splitK: 2, rounding: "rz" }), "sm90_1d2d --split-k 2 (output RZ)");
 * assert.equal(variantLabel({ model: "sm90", scalars: { tf32_rounding: "truncate" } }), "sm90 --tf32-rounding truncate");
 * ```
 */
export function variantLabel(v: Variant): string {
  const parts = [v.model];
  if (v.tensorCore !== undefined) parts.push(`--tensor-core ${v.tensorCore}`);
  if (v.promotion !== undefined) parts.push(`--promote ${v.promotion}`);
  if (v.splitK !== undefined) parts.push(`--split-k ${v.splitK}`);
  if (v.outDtype !== undefined) parts.push(`--out-dtype ${v.outDtype}`);
  for (const [k, x] of Object.entries(v.scalars ?? {})) {
    parts.push(`--${k.replaceAll("_", "-")} ${typeof x === "string" ? x : JSON.stringify(x)}`);
  }
  if (v.rounding === "rz") parts.push("(output RZ)");
  return parts.join(" ");
}

/**
 * The model options of a variant (what `op.run` takes).
 * @param v the variant
 * @returns the options
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { variantOptions } from "./variants.ts";
 * assert.deepEqual(variantOptions({ model: "cublaslt", promotion: "none" }), { model: "cublaslt", promotion: "none" });
 * ```
 */
export function variantOptions(v: Variant): ModelOptions {
  const o: ModelOptions = { model: v.model };
  if (v.tensorCore !== undefined) o.tensorCore = v.tensorCore;
  if (v.promotion !== undefined) o.promotion = v.promotion;
  if (v.splitK !== undefined) o.splitK = v.splitK;
  if (v.outDtype !== undefined) o.outDtype = v.outDtype;
  return o;
}

/**
 * How far a variant is from a plain model name: overrides count one each, RZ output one, scalar variants one each.
 * Matches are listed simplest first.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { variantComplexity } from "./variants.ts";
 * assert.equal(variantComplexity({ model: "exact" }), 0);
 * assert.equal(variantComplexity({ model: "cublaslt", promotion: "none", splitK: 2 }), 2);
 * ```
 */
export function variantComplexity(v: Variant): number {
  let n = 0;
  if (v.tensorCore !== undefined) n++;
  if (v.promotion !== undefined) n++;
  if (v.splitK !== undefined) n++;
  if (v.rounding === "rz") n++;
  n += Object.keys(v.scalars ?? {}).length;
  return n;
}

/** What {@link gemmVariants} needs to know about the op and its operands. */
export interface GemmSpace {
  /** The op's models, in the op's order. */
  models: readonly string[];
  /** A's and B's operand formats (`e4m3`, `bf16`, ...). */
  aFormat: string;
  bFormat: string;
  /** The longest reduction length (split-K factors beyond its 128-blocks are not searched). */
  K: number;
  /** The actual output's dtype. */
  outDtype: OutDtype;
  /** Largest split-K factor searched (default 8). */
  maxSplitK?: number;
  /** Whether RZ output variants can be evaluated (BF16 output, no C, the accumulator reachable). */
  rz?: boolean;
}

/** The parameters of a profile that change arithmetic (two profiles equal in these compute the same bits). */
function profileKey(p: TensorCoreProfile, inUnit: boolean): string {
  return [p.termsPerStep, p.fractionBits, p.output, p.truncateToTf32, inUnit ? p.blockScale : "-"].join("/");
}

/**
 * Every GEMM variant of an op: each model, each tensor-core profile that takes the operand formats (and the model's
 * scales), promotion every 128 or never, split-K 1 to 8 (at most one part per 128-K block), RNE and (where asked) RZ
 * output. Variants equal in every parameter of the arithmetic are merged: the first spelling is kept, the others are
 * its aliases. The exact model is one variant (it rounds the true value once; no unit, no split).
 * @param space the op's models, operand formats, K and output dtype
 * @returns candidates, the op's models first in their order with the plain model before its overrides
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { gemmVariants, variantLabel } from "./variants.ts";
 * const vs = gemmVariants({ models: ["sm90_1d2d", "sm90_1d1d", "exact"], aFormat: "e4m3", bFormat: "e4m3", K: 128,
 *   outDtype: "f32" });
 * // FP32 output: sm90_1d1d is named first (its own output type), sm90_1d2d --out-dtype f32 is its alias.
 * assert.equal(variantLabel(vs[0].variant), "sm90_1d1d");
 * assert.ok(vs[0].aliases.includes("sm90_1d2d --out-dtype f32"));
 * assert.ok(!vs.some((v) => v.variant.splitK !== undefined)); // K = 128: one block, nothing to split
 * ```
 */
export function gemmVariants(space: GemmSpace): Candidate[] {
  const nb = Math.max(1, Math.ceil(space.K / 128));
  const maxS = Math.min(space.maxSplitK ?? 8, nb);
  // Models whose own output type is the actual one first: the natural name of an FP32 result is sm90_1d1d.
  const models = space.models.filter((m) => Object.hasOwn(KERNEL_MODELS, m));
  const ordered = [
    ...models.filter((m) => KERNEL_MODELS[m].outDtype === space.outDtype),
    ...models.filter((m) => KERNEL_MODELS[m].outDtype !== space.outDtype),
  ];
  const byKey = new Map<string, { variant: Variant; aliases: string[] }>();
  const order: string[] = [];
  const add = (key: string, v: Variant) => {
    const hit = byKey.get(key);
    if (hit) {
      hit.aliases.push(variantLabel(v));
      return;
    }
    byKey.set(key, { variant: v, aliases: [] });
    order.push(key);
  };
  const roundings: OutputRounding[] = space.rz && space.outDtype === "bf16" ? ["rne", "rz"] : ["rne"];
  for (const name of ordered) {
    const m = KERNEL_MODELS[name];
    const outDtype = m.outDtype === space.outDtype ? undefined : space.outDtype;
    if (m.epilogue === "exact") {
      add(`exact|${space.outDtype}`, { model: name, ...(outDtype ? { outDtype } : {}) });
      continue;
    }
    const inUnit = m.scales === "in_unit";
    const profiles = Object.values(TENSOR_CORE_PROFILES).filter((p) =>
      p.inputs.includes(space.aFormat) && p.inputs.includes(space.bFormat) && (!inUnit || p.blockScale !== "none")
    );
    // The model's own profile first, then the table's order.
    profiles.sort((x, y) => (x.name === m.tensorCore ? -1 : y.name === m.tensorCore ? 1 : 0));
    const promotions: (128 | "none")[] = m.promotion === 128 ? [128, "none"] : ["none", 128];
    for (const rounding of roundings) {
      for (const p of profiles) {
        for (const promo of promotions) {
          for (let s = 1; s <= maxS; s++) {
            const v: Variant = {
              model: name,
              ...(p.name !== m.tensorCore ? { tensorCore: p.name } : {}),
              ...(promo !== m.promotion ? { promotion: promo } : {}),
              ...(s !== m.splitK ? { splitK: s } : {}),
              ...(outDtype ? { outDtype } : {}),
              ...(rounding === "rz" ? { rounding } : {}),
            };
            add([profileKey(p, inUnit), promo, m.scales, s, m.epilogue, space.outDtype, rounding].join("|"), v);
          }
        }
      }
    }
  }
  const all = order.map((k) => byKey.get(k)!);
  // Plain model names before overrides (stable within equal complexity).
  return all.map((c, i) => ({ c, i })).sort((x, y) =>
    Math.sign(variantComplexity(x.c.variant)) - Math.sign(variantComplexity(y.c.variant)) || x.i - y.i
  ).map(({ c }) => c);
}

/** Op-specific scalar variants searched besides the models (scalar name → values). */
export const SCALAR_AXES: Readonly<Record<string, Readonly<Record<string, readonly unknown[]>>>> = Object.freeze({
  tf32_hc_prenorm_gemm: Object.freeze({ tf32_rounding: Object.freeze(["rne", "truncate"]) }),
});

/**
 * The variants of a non-GEMM op: each named model, times the op's scalar variants ({@link SCALAR_AXES}, each set
 * explicitly, the op's default first).
 * @param op the op's name
 * @param models its models
 * @returns candidates
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { opVariants, variantLabel } from "./variants.ts";
 * const labels = opVariants("tf32_hc_prenorm_gemm", ["sm90"]).map((c) => variantLabel(c.variant));
 * assert.deepEqual(labels, ["sm90 --tf32-rounding rne", "sm90 --tf32-rounding truncate"]);
 * ```
 */
export function opVariants(op: string, models: readonly string[]): Candidate[] {
  const axes = Object.entries(SCALAR_AXES[op] ?? {});
  let combos: Record<string, unknown>[] = [{}];
  for (const [name, values] of axes) {
    combos = combos.flatMap((c) => values.map((x) => ({ ...c, [name]: x })));
  }
  const out: Candidate[] = [];
  for (const model of models) {
    for (const s of combos) {
      out.push({ variant: Object.keys(s).length ? { model, scalars: s } : { model }, aliases: [] });
    }
  }
  return out;
}
