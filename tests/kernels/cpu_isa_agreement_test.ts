// The native CPU backend's FP8 SM90 kernels (kernels/cpu/sm90_fast.cpp: AVX-512, AVX2 and portable C++, chosen at run
// time) against the TypeScript reference, bit for bit, on a seeded sample of random cases across models, operand
// formats and shapes (odd M/N/K, K tails, K not a multiple of 128 or 32, N not a multiple of 16, specials, grouped
// layouts). Every case runs once per kernel the CPU can run: the dispatched one, AVX2 and the portable one, forced
// through GO_CPU_ISA.
import assert from "node:assert/strict";
import { gemmOp } from "../../reference/registry.ts";
import { bf16Rne, f32FromBits } from "../../reference/fp32.ts";
import { makeElement } from "../../reference/kernel_models/element.ts";
import { resolveModel } from "../../reference/kernel_models/kernel_models.ts";
import { operandTable } from "../../reference/tensor_core/operand_tables.ts";
import { Tensor } from "../../reference/tensor/tensor.ts";
import type { Backend } from "../../ffi/mod.ts";
import { bf16Tensor, bitsOf, rngFor } from "./_cases.ts";
import { randomScale } from "./_slow_model.ts";
import type { Prng } from "../../reference/random/prng.ts";

/** Random cases per kind; `GEMM_ORACLE_FULL=1` (`deno task test:full:kernels`) samples four times as many. */
const ROUNDS = Deno.env.get("GEMM_ORACLE_FULL") ? 4 : 1;

type Fp8 = "e4m3" | "e5m2";

/**
 * Random FP8 codes. `mix`: mostly normal values, with runs of zeros, subnormals and large values (so that the
 * alignment shifts span their whole range); `specials`: NaN codes (and Inf for e5m2) at a few places.
 */
function fp8Tensor(rng: Prng, dtype: Fp8, shape: number[], specials = false): Tensor {
  const n = shape.reduce((x, y) => x * y, 1);
  const mode = rng.int(4); // 0: uniform codes, 1: many zeros, 2: many subnormals, 3: a narrow exponent band
  const code = (): number => {
    for (;;) {
      const sign = rng.int(2) << 7;
      let c = rng.int(256);
      if (mode === 1 && rng.int(2) === 0) c = sign;
      if (mode === 2 && rng.int(2) === 0) c = sign | rng.int(dtype === "e4m3" ? 8 : 4);
      if (mode === 3) c = sign | ((dtype === "e4m3" ? 0x30 : 0x38) + rng.int(32));
      const special = dtype === "e4m3" ? (c & 0x7f) === 0x7f : (c & 0x7c) === 0x7c;
      if (!special) return c;
    }
  };
  const data = Uint8Array.from({ length: n }, code);
  if (specials) {
    for (let i = 0; i < 2; i++) {
      data[rng.int(n)] = dtype === "e4m3" ? 0x7f | (rng.int(2) << 7) : [0x7c, 0xfc, 0x7e, 0xff][rng.int(4)];
    }
  }
  return Tensor.from(dtype, shape, data);
}

/** f32 scales with full mantissas (`pow2`: powers of two, as SM100 rules require). */
function scales(rng: Prng, shape: number[], pow2 = false): Tensor {
  const n = shape.reduce((x, y) => x * y, 1);
  const v = () => pow2 ? f32FromBits((118 + rng.int(16)) << 23) : randomScale(rng);
  return Tensor.from("f32", shape, Float32Array.from({ length: n }, v));
}

/** Bits with every NaN folded to one pattern (payloads are not part of the contract; NaN-ness is). */
export function folded(t: Tensor): number[] {
  return bitsOf(t).map((b) =>
    t.dtype === "bf16" ? ((b & 0x7fff) > 0x7f80 ? 0x7fff : b) : ((b & 0x7fffffff) >>> 0 > 0x7f800000 ? 0x7fffffff : b)
  );
}

/**
 * The reference's element model (reference/kernel_models/element.ts over the fused dot-add of
 * reference/tensor_core) for a normal `fp8_gemm_nt` of any FP8 formats: the op-level reference (`gemmOp`) takes
 * e4m3 only, the native backend e4m3 and e5m2.
 */
function elementReference(
  model: "sm90_1d2d" | "sm90_1d1d",
  a: Tensor,
  b: Tensor,
  sfa: Tensor,
  sfb: Tensor,
  granBmn: number,
  c: Tensor | null,
  out: "bf16" | "f32",
): Tensor {
  const [M, K] = a.shape, N = b.shape[0], kb = Math.ceil(K / 128);
  const ta = operandTable(a.dtype as Fp8), tb = operandTable(b.dtype as Fp8);
  const ac = a.data as Uint8Array, bc = b.data as Uint8Array;
  const sfbRows = sfb.data as Float32Array;
  const inp = {
    av: Float64Array.from(ac, (x) => ta.values[x]),
    ae: Int32Array.from(ac, (x) => ta.exps[x]),
    bv: Float64Array.from(bc, (x) => tb.values[x]),
    be: Int32Array.from(bc, (x) => tb.exps[x]),
    sfa: Float64Array.from(sfa.data as Float32Array),
    sfaExp: null,
    sfb: Float64Array.from(
      { length: N * kb },
      (_, i) => sfbRows[Math.floor(Math.floor(i / kb) / granBmn) * kb + i % kb],
    ),
    sfbExp: null,
    granK: 128,
  };
  const el = makeElement({ ...resolveModel({ model }), outDtype: out }, a.dtype, b.dtype);
  const v = Array.from({ length: M * N }, (_, i) => {
    const m = Math.floor(i / N), n = i % N;
    return el(inp, m * K, n * K, K, m * kb, n * kb, c === null ? null : c.at(m, n));
  });
  return out === "bf16"
    ? Tensor.from("bf16", [M, N], Uint16Array.from(v, (x) => bf16Rne(x)))
    : Tensor.from("f32", [M, N], Float32Array.from(v));
}

interface Case {
  name: string;
  /** Runs the case on the backend and returns its output. */
  native(be: Backend): Tensor;
  /** The TypeScript reference's output. */
  ref: Tensor;
}

const ceil = (x: number, y: number) => Math.ceil(x / y);

export function buildCases(): Case[] {
  const rng = rngFor(9090);
  const cases: Case[] = [];
  const pick = <T>(xs: readonly T[]): T => xs[rng.int(xs.length)];
  const fmt = (): Fp8 => (rng.int(4) === 0 ? "e5m2" : "e4m3");
  // K: tails of every kind (1, < 32, not a multiple of 32, of 128, and multi-block).
  const randK = () =>
    pick([1 + rng.int(31), 1 + rng.int(127), 32 * (1 + rng.int(8)), 1 + rng.int(700), 128 * (1 + rng.int(4))]);

  for (let round = 0; round < 40 * ROUNDS; round++) {
    // sm90_1d2d under SM90 rules: BF16 out, no C, recipe (1, 128, 128), n % 8 == 0.
    {
      const M = 1 + rng.int(37), N = 8 * (1 + rng.int(9)), K = randK(), fa = fmt(), fb = fmt();
      const specials = rng.int(4) === 0;
      const a = fp8Tensor(rng, fa, [M, K], specials), b = fp8Tensor(rng, fb, [N, K], specials);
      const sfa = scales(rng, [M, ceil(K, 128)]), sfb = scales(rng, [ceil(N, 128), ceil(K, 128)]);
      const ref = fa === "e4m3" && fb === "e4m3"
        ? gemmOp("fp8_gemm_nt").run({ a, sfa, b, sfb }, {}, { model: "sm90_1d2d" }).d
        : elementReference("sm90_1d2d", a, b, sfa, sfb, 128, null, "bf16");
      cases.push({
        name: `sm90_1d2d ${fa}×${fb} bf16 (${M}, ${N}, ${K})${specials ? " with specials" : ""}`,
        native(be) {
          const d = Tensor.zeros("bf16", [M, N]);
          be.fp8Gemm({ a, sfa, b, sfb, d, model: "sm90_1d2d" });
          return d;
        },
        ref,
      });
    }
    // sm90_1d1d under SM90 rules: FP32 out with C, recipe (1, 1, 128), any n.
    {
      const M = 1 + rng.int(29), N = 1 + rng.int(70), K = randK(), fa = fmt(), fb = fmt();
      const specials = rng.int(4) === 0;
      const a = fp8Tensor(rng, fa, [M, K], specials), b = fp8Tensor(rng, fb, [N, K], specials);
      const sfa = scales(rng, [M, ceil(K, 128)]), sfb = scales(rng, [N, ceil(K, 128)]);
      const c = scales(rng, [M, N]);
      const ref = fa === "e4m3" && fb === "e4m3"
        ? gemmOp("fp8_gemm_nt").run({ a, sfa, b, sfb, c }, { recipe: [1, 1, 128] }, { model: "sm90_1d1d" }).d
        : elementReference("sm90_1d1d", a, b, sfa, sfb, 1, c, "f32");
      cases.push({
        name: `sm90_1d1d ${fa}×${fb} f32 + C (${M}, ${N}, ${K})${specials ? " with specials" : ""}`,
        native(be) {
          const d = Tensor.zeros("f32", [M, N]);
          be.fp8Gemm({ a, sfa, b, sfb, c, d, recipeB: [1, 128], model: "sm90_1d1d" });
          return d;
        },
        ref,
      });
    }
    // sm90_1d2d under SM100's argument rules (power-of-two scales): any n, BF16 out with a BF16 C.
    {
      const M = 1 + rng.int(23), N = 1 + rng.int(50), K = randK();
      const a = fp8Tensor(rng, "e4m3", [M, K]), b = fp8Tensor(rng, "e4m3", [N, K]);
      const sfa = scales(rng, [M, ceil(K, 128)], true), sfb = scales(rng, [ceil(N, 128), ceil(K, 128)], true);
      const c = bf16Tensor(rng, [M, N]);
      const ref = gemmOp("fp8_gemm_nt").run({ a, sfa, b, sfb, c }, { arch: "sm100" }, { model: "sm90_1d2d" }).d;
      cases.push({
        name: `sm90_1d2d e4m3 bf16 + C, any n (${M}, ${N}, ${K})`,
        native(be) {
          const d = Tensor.zeros("bf16", [M, N]);
          be.fp8Gemm({ a, sfa, b, sfb, c, d, model: "sm90_1d2d" });
          return d;
        },
        ref,
      });
    }
    // The other FP8 models (element by element in the backend): exact and sm100_1d1d.
    {
      const model = pick(["exact", "sm100_1d1d"] as const);
      const M = 1 + rng.int(13), N = 1 + rng.int(30), K = randK();
      const a = fp8Tensor(rng, "e4m3", [M, K]), b = fp8Tensor(rng, "e4m3", [N, K]);
      const sfa = scales(rng, [M, ceil(K, 128)], true), sfb = scales(rng, [ceil(N, 128), ceil(K, 128)], true);
      const ref = gemmOp("fp8_gemm_nt").run({ a, sfa, b, sfb }, { arch: "sm100" }, { model }).d;
      cases.push({
        name: `${model} e4m3 bf16 (${M}, ${N}, ${K})`,
        native(be) {
          const d = Tensor.zeros("bf16", [M, N]);
          be.fp8Gemm({ a, sfa, b, sfb, d, model });
          return d;
        },
        ref,
      });
    }
    // BF16 GEMMs (bf16 tensor-core model and exact).
    {
      const model = pick(["bf16", "exact"] as const);
      const M = 1 + rng.int(13), N = 1 + rng.int(30), K = 1 + rng.int(300);
      const a = bf16Tensor(rng, [M, K]), b = bf16Tensor(rng, [N, K]);
      const ref = gemmOp("bf16_gemm_nt").run({ a, b }, {}, { model, outDtype: "f32" }).d;
      cases.push({
        name: `bf16_gemm ${model} f32 (${M}, ${N}, ${K})`,
        native(be) {
          const d = Tensor.zeros("f32", [M, N]);
          be.bf16Gemm({ a, b, d, model });
          return d;
        },
        ref,
      });
    }
  }

  for (let round = 0; round < 10 * ROUNDS; round++) {
    // m-grouped contiguous (classic layout, 128-row tiles of random groups, some -1 chunks): one packed B per group.
    {
      const G = 1 + rng.int(3), N = 8 * (1 + rng.int(5)), K = randK(), tiles = 1 + rng.int(3), M = 128 * tiles;
      const labels = new Int32Array(M);
      for (let t = 0; t < tiles; t++) {
        const g = rng.int(4) === 0 ? -1 : rng.int(G), padded = rng.int(3) === 0; // padded: a -1 second chunk
        for (let i = 0; i < 128; i++) labels[t * 128 + i] = i >= 64 && padded ? -1 : g;
      }
      const a = fp8Tensor(rng, "e4m3", [M, K]), b = fp8Tensor(rng, "e4m3", [G, N, K]);
      const sfa = scales(rng, [M, ceil(K, 128)]), sfb = scales(rng, [G, ceil(N, 128), ceil(K, 128)]);
      const gl = Tensor.from("i32", [M], labels);
      const ref = gemmOp("m_grouped_fp8_gemm_nt_contiguous").run({ a, sfa, b, sfb, grouped_layout: gl }, {}, {}).d;
      cases.push({
        name: `m-grouped contiguous G=${G} (${M}, ${N}, ${K})`,
        native(be) {
          const d = Tensor.zeros("bf16", [M, N]);
          be.mGroupedFp8GemmContiguous({ a, sfa, b, sfb, d, groupedLayout: gl });
          return d;
        },
        ref,
      });
    }
    // m-grouped masked.
    {
      const G = 1 + rng.int(3), Mmax = 64 * (1 + rng.int(3)), N = 8 * (1 + rng.int(4)), K = randK();
      const mm = Tensor.from("i32", [G], Int32Array.from({ length: G }, () => rng.int(Mmax + 1)));
      const a = fp8Tensor(rng, "e4m3", [G, Mmax, K]), b = fp8Tensor(rng, "e4m3", [G, N, K]);
      const sfa = scales(rng, [G, Mmax, ceil(K, 128)]), sfb = scales(rng, [G, ceil(N, 128), ceil(K, 128)]);
      const ref = gemmOp("m_grouped_fp8_gemm_nt_masked").run({ a, sfa, b, sfb, masked_m: mm }, { expected_m: 64 }, {})
        .d;
      cases.push({
        name: `m-grouped masked G=${G} Mmax=${Mmax} (${N}, ${K}) masked_m=[${[...mm.data]}]`,
        native(be) {
          const d = Tensor.zeros("bf16", [G, Mmax, N]);
          be.mGroupedFp8GemmMasked({ a, sfa, b, sfb, d, maskedM: mm });
          return d;
        },
        ref,
      });
    }
    // k-grouped (SM90 flat blocks, sm90_1d1d with C): one packed B per group, scale columns offset per group.
    {
      const G = 1 + rng.int(3), M = 1 + rng.int(9), N = 1 + rng.int(20);
      const ks = Array.from({ length: G }, () => 128 * rng.int(3));
      if (!ks.some((k) => k > 0)) ks[0] = 128;
      const sumK = ks.reduce((x, y) => x + y, 0), sumKb = sumK / 128;
      const a = fp8Tensor(rng, "e4m3", [M * sumK]), b = fp8Tensor(rng, "e4m3", [N * sumK]);
      const sfa = scales(rng, [M, sumKb]), sfb = scales(rng, [N, sumKb]);
      const c = scales(rng, [G, M, N]);
      const ksT = Tensor.from("i32", [G], Int32Array.from(ks));
      const ref = gemmOp("k_grouped_fp8_gemm_nt_contiguous").run(
        { a, sfa, b, sfb, c, d: Tensor.zeros("f32", [G, M, N]), grouped_layout: ksT },
        { ks },
        {},
      ).d;
      cases.push({
        name: `k-grouped ks=[${ks}] (${M}, ${N})`,
        native(be) {
          const d = Tensor.zeros("f32", [G, M, N]);
          be.kGroupedFp8Gemm({ a, sfa, b, sfb, c, d, ks: ksT, ksHost: ks });
          return d;
        },
        ref,
      });
    }
    // skip_head_mid (columns mapped around the skipped heads).
    {
      const l = 1 + rng.int(7), m = 1 + rng.int(4), r = 8 - l; // SM90 1D2D needs n % 8 == 0
      const heads = 1 + rng.int(4), N = heads * (l + r), M = 1 + rng.int(11), K = randK();
      const a = fp8Tensor(rng, "e4m3", [M, K]), b = fp8Tensor(rng, "e4m3", [N, K]);
      const sfa = scales(rng, [M, ceil(K, 128)]), sfb = scales(rng, [ceil(N, 128), ceil(K, 128)]);
      const W = N + heads * m;
      const ref = gemmOp("fp8_gemm_nt_skip_head_mid").run({ a, sfa, b, sfb, d: Tensor.zeros("bf16", [M, W]) }, {
        head_splits: [l, m, r],
      }, {}).d;
      cases.push({
        name: `skip_head_mid (${l}, ${m}, ${r}) (${M}, ${N}, ${K})`,
        native(be) {
          const d = Tensor.zeros("bf16", [M, W]);
          be.fp8GemmSkipHeadMid({ a, sfa, b, sfb, d, headSplits: [l, m, r] });
          return d;
        },
        ref,
      });
    }
  }
  return cases;
}

/**
 * Runs tests/kernels/_cpu_isa_child.ts in a process of its own with GO_CPU_ISA set: the variable is read by the
 * library on every call, and test files run in parallel share this process's environment (setting it here once made
 * another file's GEMMs fail with "GO_CPU_ISA=sse9").
 */
async function child(isa: string, mode: "agree" | "invalid"): Promise<Record<string, unknown>> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", new URL("./_cpu_isa_child.ts", import.meta.url).pathname, mode],
    env: { GO_CPU_ISA: isa },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout), err = new TextDecoder().decode(out.stderr);
  assert.equal(out.code, 0, `GO_CPU_ISA=${isa} ${mode}: exit ${out.code}\n${text}\n${err}`);
  return JSON.parse(text.trim().split("\n").at(-1)!);
}

Deno.test("CPU backend = TypeScript reference on random cases, with every FP8 kernel the CPU can run", async (t) => {
  const dispatched = await child("auto", "agree");
  const supported = String(dispatched.isa_supported);
  const order = ["avx512", "avx2", "portable"];
  const isas = order.slice(order.indexOf(supported));
  assert.ok(isas.includes("portable"), `isa_supported = ${supported}`);
  assert.equal(dispatched.isa, supported, "auto picks the best kernel the CPU has");
  for (const isa of isas.slice(1)) {
    await t.step(`${isa}: every case equals the reference`, async () => {
      const r = await child(isa, "agree");
      assert.equal(r.isa, isa, "GO_CPU_ISA picks the kernel");
      assert.ok(Number(r.cases) > 0);
    });
  }
});

Deno.test("GO_CPU_ISA: a kernel the CPU lacks is capped, an unknown name is a clear error", async () => {
  const supported = String((await child("auto", "agree")).isa_supported);
  assert.equal((await child("avx512", "invalid")).isa, supported);
  const r = await child("sse9", "invalid");
  assert.equal(r.isa, "invalid GO_CPU_ISA");
  assert.match(String(r.error), /GO_CPU_ISA=sse9: expected portable, avx2, avx512 or auto/);
  assert.equal(r.exact, 0x4200); // models that do not use the FP8 SM90 kernels ignore the variable: 32.0
});
