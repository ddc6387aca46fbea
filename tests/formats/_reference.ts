// Independent reference for the format tests. Written from numerics.md §1–§3 and deepgemm-ops.md §2.8, without
// importing reference/formats: a BigInt decoder of the spec formula, and an encoder that searches the sorted list of
// representable values and compares the input with the neighbours' midpoint (a different algorithm from the
// bit-shifting codec under test).
import { Prng } from "../../reference/random/prng.ts";

export type Fmt = "e4m3" | "e5m2" | "e2m1" | "ue8m0" | "bf16" | "fp16";

/** The layout of each format restated from numerics.md §1 (not imported from the code under test). */
export const LAYOUT: Record<
  Fmt,
  { e: number; m: number; bias: number; signed: boolean; kind: "fn" | "ieee" | "none" | "fnu" }
> = {
  e4m3: { e: 4, m: 3, bias: 7, signed: true, kind: "fn" },
  e5m2: { e: 5, m: 2, bias: 15, signed: true, kind: "ieee" },
  e2m1: { e: 2, m: 1, bias: 1, signed: true, kind: "none" },
  ue8m0: { e: 8, m: 0, bias: 127, signed: false, kind: "fnu" },
  bf16: { e: 8, m: 7, bias: 127, signed: true, kind: "ieee" },
  fp16: { e: 5, m: 10, bias: 15, signed: true, kind: "ieee" },
};

/** An exact dyadic rational n·2^k (n a BigInt), or a special. */
export type Exact = { n: bigint; k: number } | "nan" | "+inf" | "-inf";

/** The spec formula, in BigInt: e == 0 ? m·2^(1−bias−M) : (2^M + m)·2^(e−bias−M); UE8M0 2^(c−127). */
export function exactOfCode(f: Fmt, code: number): Exact {
  const L = LAYOUT[f];
  const magBits = L.e + L.m;
  const neg = L.signed && code >> magBits === 1;
  const mag = L.signed ? code & ((1 << magBits) - 1) : code;
  const e = mag >> L.m, m = mag & ((1 << L.m) - 1);
  const eMax = (1 << L.e) - 1;
  if (L.kind === "fn" && e === eMax && m === (1 << L.m) - 1) return "nan";
  if (L.kind === "fnu" && code === 0xff) return "nan";
  if (L.kind === "ieee" && e === eMax) return m !== 0 ? "nan" : neg ? "-inf" : "+inf";
  let n: bigint, k: number;
  if (L.kind === "fnu") {
    n = 1n;
    k = code - 127;
  } else if (e === 0) {
    n = BigInt(m);
    k = 1 - L.bias - L.m;
  } else {
    n = (1n << BigInt(L.m)) + BigInt(m);
    k = e - L.bias - L.m;
  }
  return { n: neg ? -n : n, k };
}

/** The exact value of a JS number, from its binary64 bits via BigInt. */
export function exactOfNumber(x: number): Exact {
  if (Number.isNaN(x)) return "nan";
  if (x === Infinity) return "+inf";
  if (x === -Infinity) return "-inf";
  const dv = new DataView(new ArrayBuffer(8));
  dv.setFloat64(0, x);
  const b = dv.getBigUint64(0);
  const neg = b >> 63n === 1n;
  const ex = Number((b >> 52n) & 0x7ffn);
  const fr = b & ((1n << 52n) - 1n);
  const n = ex === 0 ? fr : fr | (1n << 52n);
  const k = (ex === 0 ? 1 : ex) - 1075;
  return { n: neg ? -n : n, k };
}

/** Whether two exact values are equal (normalising n·2^k). Zero compares by sign of n being irrelevant. */
export function exactEqual(a: Exact, b: Exact): boolean {
  if (typeof a === "string" || typeof b === "string") return a === b;
  if (a.n === 0n || b.n === 0n) return a.n === b.n;
  const k = Math.min(a.k, b.k);
  return (a.n << BigInt(a.k - k)) === (b.n << BigInt(b.k - k));
}

/** Sorted non-negative finite values of a format (as exact doubles) with their codes; plus the virtual value above max. */
export interface Ladder {
  values: Float64Array;
  codes: Int32Array;
  next: number; // the value one step above the largest finite (where rounding up means overflow)
}

function toNumber(x: Exact): number {
  if (typeof x === "string") throw new Error("special");
  return Number(x.n) * 2 ** x.k; // exact: |n| < 2^12 and 2^k is a power of two in range
}

const LADDERS = new Map<Fmt, Ladder>();
export function ladder(f: Fmt): Ladder {
  let l = LADDERS.get(f);
  if (l) return l;
  const L = LAYOUT[f];
  const limit = L.signed ? 1 << (L.e + L.m) : 256;
  const vals: number[] = [], codes: number[] = [];
  for (let c = 0; c < limit; c++) {
    const x = exactOfCode(f, c);
    if (typeof x === "string") continue;
    vals.push(toNumber(x));
    codes.push(c);
  }
  const n = vals.length;
  // ue8m0 values double at each step; the others have a uniform spacing in their top binade.
  const next = f === "ue8m0" ? 2 * vals[n - 1] : 2 * vals[n - 1] - vals[n - 2];
  l = { values: Float64Array.from(vals), codes: Int32Array.from(codes), next };
  LADDERS.set(f, l);
  return l;
}

/** The profile rules restated from the spec tables (numerics.md §3, deepgemm-ops.md §2.8, §7). */
export interface RefRule {
  round: "rne" | "rna" | "rnz" | "rz" | "ru" | "rd" | "ml_e8m0";
  /** finite overflow and ±Inf (when `inf` is absent) */
  over: "nan" | "sat" | "inf";
  inf?: "nan" | "sat" | "inf";
  nan: (bits: number) => number;
  zero?: "nan" | "min";
  neg?: "nan" | "abs";
  noNegZero?: boolean;
}

const keep = (c: number, sb: number) => (bits: number) => (bits >>> 31 ? c | sb : c);
const fixed = (c: number) => () => c;
const E4_ML: RefRule = { round: "rne", over: "nan", nan: keep(0x7f, 0x80) };
const E5_ML: RefRule = { round: "rne", over: "inf", nan: keep(0x7e, 0x80) };
const E5_TORCH: RefRule = { round: "rne", over: "inf", nan: keep(0x7f, 0x80) };
const U8_ML: RefRule = { round: "ml_e8m0", over: "nan", nan: fixed(0xff), zero: "nan", neg: "nan" };
const U8_TORCH: RefRule = { round: "ml_e8m0", over: "nan", nan: fixed(0xff), zero: "min", neg: "abs" };
// numpy float16: payload's top 10 bits, 0 → 1, sign kept (§3.5)
const F16_NUMPY = (bits: number) => {
  const m = (bits & 0x7fffff) >>> 13;
  return (bits >>> 31 ? 0x8000 : 0) | 0x7c00 | (m === 0 ? 1 : m);
};
// torch CPU float16: quiet bit set, payload kept, sign kept (§3.5)
const F16_TORCH_CPU = (bits: number) => (bits >>> 31 ? 0x8000 : 0) | 0x7e00 | ((bits & 0x7fffff) >>> 13);
// torchao: NaN runs through the normal branch: RNE of (a − 126·2^23)/2^22, low 8 bits, sign in bit 3 (ao custom_fp_utils.py)
const F4_TORCHAO = (bits: number) => {
  const a = (bits & 0x7fffffff) - 126 * 2 ** 23;
  const q0 = Math.floor(a / 2 ** 22), r = a - q0 * 2 ** 22;
  const q = r > 2 ** 21 || (r === 2 ** 21 && q0 % 2 === 1) ? q0 + 1 : q0;
  return (q % 256) | (bits >>> 31 ? 8 : 0);
};
function mx(round: "rna" | "rz" | "rne"): Partial<Record<Fmt, RefRule>> {
  return {
    e4m3: { round, over: "sat", inf: "nan", nan: keep(0x7f, 0x80) },
    e5m2: { round, over: "sat", inf: "inf", nan: keep(0x7f, 0x80) },
    e2m1: { round, over: "sat", nan: keep(0x7, 0x8) },
  };
}
function e8(round: "rz" | "ru", sat: boolean): Partial<Record<Fmt, RefRule>> {
  return { ue8m0: { round, over: sat ? "sat" : "nan", nan: fixed(0xff), zero: "min", neg: "abs" } };
}
export const REF_RULES: Record<string, Partial<Record<Fmt, RefRule>>> = {
  ml_dtypes: {
    e4m3: E4_ML,
    e5m2: E5_ML,
    e2m1: { round: "rne", over: "sat", nan: (b) => (b >>> 31 ? 0x0 : 0x8) },
    ue8m0: U8_ML,
    bf16: { round: "rne", over: "inf", nan: keep(0x7fc0, 0x8000) },
    fp16: { round: "rne", over: "inf", nan: F16_NUMPY },
  },
  jax_cpu: { e4m3: E4_ML, e5m2: E5_ML, e2m1: { round: "rne", over: "sat", nan: fixed(0x8) }, ue8m0: U8_ML },
  jax_gpu: {
    e4m3: { round: "rne", over: "nan", nan: fixed(0x7f) },
    e5m2: { round: "rne", over: "inf", nan: fixed(0x7f) },
    e2m1: { round: "rne", over: "sat", nan: fixed(0x8) },
    ue8m0: U8_ML,
  },
  torch_2_11: {
    e4m3: E4_ML,
    e5m2: E5_TORCH,
    ue8m0: U8_TORCH,
    bf16: { round: "rne", over: "inf", nan: fixed(0xffff) },
    fp16: { round: "rne", over: "inf", nan: F16_TORCH_CPU },
  },
  torch_2_11_cuda: {
    e4m3: E4_ML,
    e5m2: E5_TORCH,
    ue8m0: U8_TORCH,
    bf16: { round: "rne", over: "inf", nan: fixed(0x7fff) },
    fp16: { round: "rne", over: "inf", nan: fixed(0x7fff) },
  },
  torch_2_12plus: {
    e4m3: { round: "rne", over: "sat", inf: "nan", nan: keep(0x7f, 0x80) },
    e5m2: E5_TORCH,
    ue8m0: U8_TORCH,
    bf16: { round: "rne", over: "inf", nan: fixed(0xffff) },
    fp16: { round: "rne", over: "inf", nan: F16_TORCH_CPU },
  },
  cuda_satfinite: {
    e4m3: { round: "rne", over: "sat", nan: fixed(0x7f) },
    e5m2: { round: "rne", over: "sat", nan: fixed(0x7f) },
  },
  cuda_nosat: {
    e4m3: { round: "rne", over: "nan", nan: fixed(0x7f) },
    e5m2: { round: "rne", over: "inf", nan: fixed(0x7f) },
    bf16: { round: "rne", over: "inf", nan: fixed(0x7fff) },
    fp16: { round: "rne", over: "inf", nan: fixed(0x7fff) },
  },
  cuda_fp4_rn: { e2m1: { round: "rne", over: "sat", nan: fixed(0x7) } },
  cuda_fp4_rz: { e2m1: { round: "rz", over: "sat", nan: fixed(0x7) } },
  cuda_e8m0_rz_sat: e8("rz", true),
  cuda_e8m0_rz_nosat: e8("rz", false),
  cuda_e8m0_rp_sat: e8("ru", true),
  cuda_e8m0_rp_nosat: e8("ru", false),
  torchao_f4: { e2m1: { round: "rne", over: "sat", nan: F4_TORCHAO } },
  deepgemm_fp4: { e2m1: { round: "rnz", over: "sat", nan: fixed(0), noNegZero: true } },
  microxcaling_nearest: mx("rna"),
  microxcaling_floor: mx("rz"),
  microxcaling_even: mx("rne"),
};

const F32 = new Float32Array(1);
const U32 = new Uint32Array(F32.buffer);

/** Finds i with values[i] ≤ x < values[i+1] (values[len] = next); x ≥ values[0]. */
function bracket(v: Float64Array, x: number): number {
  let lo = 0, hi = v.length; // invariant: v[lo] ≤ x, and x < v[hi] (v[len] = virtual next)
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    if (v[mid] <= x) lo = mid;
    else hi = mid;
  }
  return lo;
}

/** The independent encoder: fp32 bits → code, following `rule`. */
export function refEncode(f: Fmt, rule: RefRule, bits: number): number {
  const L = LAYOUT[f];
  const lad = ladder(f);
  const top = lad.values.length - 1;
  const sb = L.signed ? 2 ** (L.e + L.m) : 0;
  const maxCode = lad.codes[top];
  const special = (p: "nan" | "sat" | "inf", s: number): number => {
    const mag = p === "sat" ? maxCode : p === "inf" ? (1 << (L.e + L.m)) - (1 << L.m) : (L.signed ? sb - 1 : 0xff);
    return s ? sb + mag : mag;
  };
  bits = bits >>> 0;
  U32[0] = bits;
  const v = F32[0];
  if (Number.isNaN(v)) return rule.nan(bits);
  let s = bits >>> 31;
  if (!L.signed && s === 1 && v !== 0) {
    if (rule.neg === "nan") return 0xff;
    s = 0;
  }
  if (!L.signed) s = 0;
  if (v === 0) {
    if (f === "ue8m0") return rule.zero === "min" ? 0 : 0xff;
    return s && !rule.noNegZero ? sb : 0;
  }
  const x = Math.abs(v);
  if (x === Infinity) return special(rule.inf ?? rule.over, s);
  const vals = lad.values;
  let idx: number; // chosen index into the ladder; top + 1 = overflow
  if (x < vals[0]) {
    idx = 0; // only ue8m0 (no zero): everything below 2^-127 is 2^-127 (§3.4, every column)
  } else if (x >= lad.next) {
    idx = top + 1;
  } else {
    const i = bracket(vals, x);
    const lo = vals[i], hi = i === top ? lad.next : vals[i + 1];
    if (x === lo) idx = i;
    else {
      const twice = 2 * x, mid2 = lo + hi; // exact: dyadic values well inside binary64
      const cmp = twice > mid2 ? 1 : twice < mid2 ? -1 : 0;
      const loCode = lad.codes[i];
      switch (rule.round) {
        case "rne":
          // ties to the even code; with no fraction bits (UE8M0) both neighbours have significand 1, and the
          // references round such ties up (numerics.md §3.4: "the implicit leading 1 is the LSB, always odd")
          idx = cmp > 0 || (cmp === 0 && (L.m === 0 || (loCode & 1) === 1)) ? i + 1 : i;
          break;
        case "rna":
          idx = cmp >= 0 ? i + 1 : i;
          break;
        case "rnz":
          idx = cmp > 0 ? i + 1 : i;
          break;
        case "rz":
          idx = i;
          break;
        case "ru":
          idx = s ? i : i + 1;
          break;
        case "rd":
          idx = s ? i + 1 : i;
          break;
        case "ml_e8m0":
          // ties go up (threshold 1.5·2^e); between 2^-127 and 2^-126 anything above 2^-127 goes up (§3.4)
          idx = i === 0 || cmp >= 0 ? i + 1 : i;
          break;
      }
    }
  }
  if (idx > top) {
    const towardZero = rule.round === "rz" || (rule.round === "ru" && s === 1) || (rule.round === "rd" && s === 0);
    return towardZero ? special("sat", s) : special(rule.over, s);
  }
  const code = lad.codes[idx];
  if (code === 0 && rule.noNegZero) return 0;
  return s ? sb + code : code;
}

/** ±0, ±Inf, NaNs of both signs (quiet, signalling, payloads), extreme subnormals and normals. */
export const SPECIALS: readonly number[] = [
  0x00000000,
  0x80000000,
  0x7f800000,
  0xff800000,
  0x7fc00000,
  0xffc00000,
  0x7f800001,
  0xff800001,
  0x7fa00000,
  0xffa00000,
  0x7fffffff,
  0xffffffff,
  0x7fbfffff,
  0xffbfffff,
  0x7fc00001,
  0x7fe00000,
  0x00000001,
  0x80000001,
  0x007fffff,
  0x807fffff,
  0x00800000,
  0x80800000,
  0x7f7fffff,
  0xff7fffff,
  0x00400000,
  0x00400001,
  0x003fffff,
];

const LOWS = [0, 1, 0xfff, 0x1000, 0x1001, 0x1fff];
const FIXED_TOPS = [0, 0x200, 0x3ff, 0x100];

/**
 * The inputs of numerics.md's sweep: both signs × every exponent field × top 10 mantissa bits × 6 low patterns,
 * then `randoms` seeded random bit patterns, then the specials. With `sample` < 1024, each (sign, exponent) gets
 * `sample` seeded values of the top 10 mantissa bits instead of all 1024.
 */
export function sweepInputs(opts: { sample: number; randoms: number; seed: number }): Uint32Array {
  const rng = new Prng(opts.seed);
  const per = Math.min(opts.sample, 1024);
  const n = 2 * 256 * per * LOWS.length + opts.randoms + SPECIALS.length;
  const out = new Uint32Array(n);
  let k = 0;
  for (let s = 0; s < 2; s++) {
    for (let e = 0; e < 256; e++) {
      for (let j = 0; j < per; j++) {
        // samples always include the top-10 patterns of exact powers of two, 1.5·2^e (the UE8M0 tie) and all ones
        const t = per === 1024 ? j : j < FIXED_TOPS.length ? FIXED_TOPS[j] : rng.int(1024);
        for (const low of LOWS) out[k++] = ((s << 31) | (e << 23) | (t << 13) | low) >>> 0;
      }
    }
  }
  for (let i = 0; i < opts.randoms; i++) out[k++] = rng.nextU32();
  for (const b of SPECIALS) out[k++] = b;
  return out;
}

/** Whether the full sweeps run (deno task test:full sets GEMM_ORACLE_FULL=1). */
export function fullSweep(): boolean {
  try {
    return Deno.env.get("GEMM_ORACLE_FULL") === "1";
  } catch {
    return false;
  }
}

/** The sweep used by the tests: the full one under test:full, a seeded sample otherwise. */
export function testInputs(seed = 2026): Uint32Array {
  return fullSweep()
    ? sweepInputs({ sample: 1024, randoms: 1_000_000, seed })
    : sweepInputs({ sample: 8, randoms: 20_000, seed });
}
