// The native reference of verify's sampled FP8 GEMMs (cli/verify/native_reference.ts) against the TypeScript
// reference: on seeded random cases of dense fp8_gemm_nt, m-grouped contiguous (classic with −1 rows and empty groups,
// psum with and without zero padding) and masked (masked_m 0, full, in between; block_m 64/128/256), sampled at
// several fractions and seeds and unsampled, the outputs and the sample masks are equal bit for bit. Also: what it
// leaves to the TypeScript reference, the real-M suite's shape table, the fast input builders, and a sampled case
// through runCase against the CPU backend.
import assert from "node:assert/strict";
import { openBackend } from "../../ffi/backend.ts";
import { inProcessExecutor } from "../../cli/verify/executors.ts";
import { contiguousFast, denseFast, fillE4m3, fillScales, maskedFast } from "../../cli/verify/fast_inputs.ts";
import {
  closeNativeReference,
  nativeReference,
  nativeReferenceBackend,
  planNative,
} from "../../cli/verify/native_reference.ts";
import { runCase, type VerifyCase } from "../../cli/verify/runner.ts";
import { deepseekV3FullSuite } from "../../cli/verify/suites.ts";
import { collectCases } from "../../cli/verify/devices.ts";
import { gemmOp } from "../../reference/registry.ts";
import { f32FromBits } from "../../reference/fp32.ts";
import { Prng } from "../../reference/random/prng.ts";
import { Tensor } from "../../reference/tensor/tensor.ts";
import type { SampleOptions } from "../../reference/kernel_models/kernel_models.ts";

type Case = { op: string; inputs: Record<string, Tensor>; scalars: Record<string, unknown>; what: string };

/** E4M3 codes: uniform (no NaN), with a NaN code now and then when `specials`. */
function codes(p: Prng, shape: number[], specials: boolean): Tensor {
  const n = shape.reduce((x, y) => x * y, 1);
  const data = Uint8Array.from({ length: n }, () => {
    const c = p.int(256);
    return (c & 0x7f) === 0x7f ? 0x38 : c;
  });
  if (specials && n > 0) data[p.int(n)] = 0x7f;
  return Tensor.from("e4m3", shape, data);
}

function scales(p: Prng, shape: number[]): Tensor {
  const n = shape.reduce((x, y) => x * y, 1);
  return Tensor.from(
    "f32",
    shape,
    Float32Array.from({ length: n }, () => f32FromBits(((118 + p.int(12)) << 23) | p.int(1 << 23))),
  );
}

function denseCase(p: Prng): Case {
  const M = 1 + p.int(300), N = 8 * (1 + p.int(40)), K = 1 + p.int(600);
  const sfk = Math.ceil(K / 128);
  return {
    op: p.int(4) === 0 ? "fp8_fp4_gemm_nt" : "fp8_gemm_nt",
    inputs: {
      a: codes(p, [M, K], p.int(4) === 0),
      sfa: scales(p, [M, sfk]),
      b: codes(p, [N, K], false),
      sfb: scales(p, [Math.ceil(N / 128), sfk]),
    },
    scalars: {},
    what: `dense ${M}×${N}×${K}`,
  };
}

function contiguousCase(p: Prng): Case {
  const G = 1 + p.int(4), N = 1 + p.int(300), K = 1 + p.int(400), sfk = Math.ceil(K / 128);
  const sizes = Array.from({ length: G }, () => (p.int(4) === 0 ? 0 : p.int(260)));
  const psum = p.int(3) === 0;
  let M: number, layout: number[];
  const scalars: Record<string, unknown> = {};
  if (psum) {
    // cumulative ends, groups starting at align(previous end, 128)
    layout = [];
    let end = 0;
    for (const s of sizes) {
      end = Math.ceil(end / 128) * 128 + s;
      layout.push(end);
    }
    M = Math.ceil(end / 128) * 128 + p.int(3) * 64;
    scalars.use_psum_layout = true;
    if (p.int(2)) scalars.ensure_zero_padding = false;
  } else {
    layout = [];
    sizes.forEach((s, g) => {
      for (let r = 0; r < s; r++) layout.push(g);
      for (let r = s; r < Math.ceil(s / 128) * 128; r++) layout.push(-1);
    });
    if (p.int(3) === 0) { for (let r = 0; r < 64; r++) layout.push(-1); // a trailing −1 chunk
     }
    M = layout.length;
  }
  if (M === 0) return contiguousCase(p); // M = 0 is the TypeScript reference's (an early return)
  return {
    op: "m_grouped_fp8_gemm_nt_contiguous",
    inputs: {
      a: codes(p, [M, K], p.int(4) === 0),
      sfa: scales(p, [M, sfk]),
      b: codes(p, [G, N, K], false),
      sfb: scales(p, [G, Math.ceil(N / 128), sfk]),
      grouped_layout: Tensor.from("i32", [layout.length], Int32Array.from(layout)),
    },
    scalars,
    what: `contiguous G ${G} sizes [${sizes}] N ${N} K ${K}${psum ? ` psum ${JSON.stringify(scalars)}` : ""}`,
  };
}

function maskedCase(p: Prng): Case {
  const G = 1 + p.int(4), Mmax = 1 + p.int(300), N = 1 + p.int(260), K = 1 + p.int(400), sfk = Math.ceil(K / 128);
  const mm = Array.from({ length: G }, () => [0, Mmax, p.int(Mmax + 1), p.int(70)][p.int(4)] % (Mmax + 1));
  const scalars: Record<string, unknown> = { expected_m: 1 + p.int(100) };
  if (p.int(2)) scalars.block_m = [64, 128, 256][p.int(3)];
  return {
    op: p.int(4) === 0 ? "fp8_m_grouped_gemm_nt_masked" : "m_grouped_fp8_gemm_nt_masked",
    inputs: {
      a: codes(p, [G, Mmax, K], p.int(4) === 0),
      sfa: scales(p, [G, Mmax, sfk]),
      b: codes(p, [G, N, K], false),
      sfb: scales(p, [G, Math.ceil(N / 128), sfk]),
      masked_m: Tensor.from("i32", [G], Int32Array.from(mm)),
    },
    scalars,
    what: `masked G ${G} Mmax ${Mmax} masked_m [${mm}] N ${N} K ${K} ${JSON.stringify(scalars)}`,
  };
}

const SAMPLES: (SampleOptions | undefined)[] = [
  undefined,
  { fraction: 0.01, seed: 0 },
  { fraction: 0.2, seed: 0 },
  { fraction: 0.5, seed: 3 },
  { fraction: 1, seed: 0 },
];

async function agree(c: Case, sample: SampleOptions | undefined): Promise<void> {
  const opts = { model: "sm90_1d2d", ...(sample ? { sample } : {}) };
  const want = gemmOp(c.op).run(c.inputs, c.scalars, opts);
  const got: Record<string, Tensor> | null = await nativeReference(c.op, c.inputs, c.scalars, {
    model: "sm90_1d2d",
    sample,
    threads: 2,
  });
  const what = `${c.op} ${c.what} sample ${JSON.stringify(sample)}`;
  if (got === null) throw new Error(`not computed natively: ${what}`);
  assert.deepEqual(Object.keys(got), Object.keys(want), what);
  for (const name of Object.keys(want)) {
    assert.deepEqual(got[name].shape, want[name].shape, `${name} shape: ${what}`);
    assert.equal(got[name].dtype, want[name].dtype, `${name} dtype: ${what}`);
    const w = Array.from(want[name].contiguous().data as ArrayLike<number>);
    const g: number[] = Array.from(got[name].contiguous().data as ArrayLike<number>);
    const first = w.findIndex((v, i) => v !== g[i]);
    assert.equal(first, -1, `${name}[${first}]: TS ${w[first]}, native ${g[first]}: ${what}`);
  }
}

Deno.test({
  name: "native reference: bit for bit and mask for mask the TypeScript reference",
  sanitizeResources: false,
  fn: async (t) => {
    const backend = await nativeReferenceBackend();
    if (backend instanceof Error) throw backend; // the CPU backend builds wherever the tests run
    const p = new Prng(0x25);
    for (
      const [kind, make, n] of [["dense", denseCase, 30], ["contiguous", contiguousCase, 30], [
        "masked",
        maskedCase,
        30,
      ]] as const
    ) {
      await t.step(kind, async () => {
        for (let i = 0; i < n; i++) {
          const c = make(p);
          // every case unsampled and at one sample; a few at every sample
          const samples = i < 2 ? SAMPLES : [SAMPLES[p.int(SAMPLES.length)]];
          for (const s of samples) await agree(c, s);
        }
      });
    }
    await t.step("the real-M builders at small sizes", async () => {
      const q = new Prng(9);
      await agree({ op: "fp8_gemm_nt", ...denseFast(300, 256, 640)(q), what: "denseFast" }, { fraction: 0.1 });
      await agree(
        { op: "m_grouped_fp8_gemm_nt_contiguous", ...contiguousFast([256, 100, 0, 384], 136, 384)(q), what: "" },
        { fraction: 0.05 },
      );
      await agree(
        { op: "m_grouped_fp8_gemm_nt_masked", ...maskedFast(3, 256, 192, 256, [192, 20, 0], 71)(q), what: "" },
        { fraction: 0.3 },
      );
    });
    await closeNativeReference();
  },
});

Deno.test("native reference: what it leaves to the TypeScript reference", () => {
  const p = new Prng(1);
  const c = denseCase(p);
  const plan = (op: string, inputs: Record<string, Tensor>, scalars = {}, model = "sm90_1d2d") =>
    planNative(op, inputs, scalars, { model });
  assert.equal(typeof plan(c.op, c.inputs), "object");
  assert.match(plan(c.op, c.inputs, {}, "exact") as string, /model exact/);
  assert.match(plan("fp8_gemm_nn", c.inputs) as string, /not computed natively/);
  assert.match(plan("bf16_gemm_nt", c.inputs) as string, /not computed natively/);
  assert.match(plan(c.op, { ...c.inputs, c: Tensor.zeros("bf16", [1, 1]) }) as string, /C \/ D/);
  assert.match(plan(c.op, c.inputs, { recipe: [1, 128, 128] }) as string, /scalar recipe/);
  assert.match(plan(c.op, c.inputs, { arch: "sm100" }) as string, /SM90/);
  assert.match(plan(c.op, { ...c.inputs, a: c.inputs.a.transpose().contiguous().transpose() }) as string, /contiguous/);
  const k0 = { ...c.inputs, a: Tensor.zeros("e4m3", [4, 0]), b: Tensor.zeros("e4m3", [8, 0]) };
  assert.match(plan(c.op, k0) as string, /K = 0/);
  const g = contiguousCase(p);
  const bad = {
    ...g.inputs,
    grouped_layout: Tensor.from("i32", [g.inputs.a.shape[0]], new Int32Array(g.inputs.a.shape[0]).fill(99)),
  };
  assert.match(plan(g.op, bad, g.scalars) as string, /grouped_layout/);
  const m = maskedCase(p);
  assert.match(plan(m.op, m.inputs, { ...m.scalars, block_m: 32 }) as string, /block_m/);
  assert.match(
    plan(m.op, {
      ...m.inputs,
      masked_m: Tensor.from("i32", [m.inputs.a.shape[0]], new Int32Array(m.inputs.a.shape[0]).fill(-1)),
    }, m.scalars) as string,
    /masked_m/,
  );
});

Deno.test("deepseek-v3-full: the 45 shapes of tests/gpu/bench.cpp, not in --suite all", async () => {
  const cases = deepseekV3FullSuite(0.01);
  assert.equal(cases.length, 45);
  assert.equal(new Set(cases.map((c) => c.id)).size, 45);
  assert.equal(cases.filter((c) => c.op === "fp8_gemm_nt").length, 21);
  assert.equal(cases.filter((c) => c.op === "m_grouped_fp8_gemm_nt_contiguous").length, 8);
  assert.equal(cases.filter((c) => c.op === "m_grouped_fp8_gemm_nt_masked").length, 16);
  assert.ok(cases.some((c) => c.id === "deepseek-v3-full/dense_m4096_n7168_k16384"));
  assert.ok(cases.some((c) => c.id === "deepseek-v3-full/contiguous_g4_m8192_n6144_k7168"));
  assert.ok(cases.some((c) => c.id === "deepseek-v3-full/masked_g32_m192_n4096_k2048"));
  assert.ok(cases.every((c) => c.sample === 0.01 && c.suite === "deepseek-v3-full"));
  assert.ok(deepseekV3FullSuite(1, 2).every((c) => c.id.endsWith("#seed2") && c.sample === 1));
  const all = await collectCases("all", 0.02, 0);
  assert.ok(!all.some((c) => c.suite === "deepseek-v3-full"));
  assert.equal((await collectCases("deepseek-v3-full", 0.02, 0)).length, 45);
});

Deno.test("fast inputs: seeded, 4-byte words, no NaN, a Gaussian-like spread", () => {
  const a = new Uint8Array(4099), b = new Uint8Array(4099);
  fillE4m3(a, new Prng(5));
  fillE4m3(b, new Prng(5));
  assert.deepEqual(a, b);
  fillE4m3(b, new Prng(6));
  assert.notDeepEqual(a, b);
  assert.ok(a.every((c) => (c & 0x7f) !== 0x7f));
  const neg = a.filter((c) => c & 0x80).length;
  assert.ok(neg > 1800 && neg < 2300, `${neg} negative of 4099`);
  assert.ok(new Set(a).size > 60);
  // pinned: the suite's recorded inputs must not drift
  assert.deepEqual([...a.subarray(0, 8)], [0x66, 0x71, 0xeb, 0x72, 0xed, 0xea, 0xf0, 0x6b]);
  const f = new Float32Array(2);
  fillScales(f, new Prng(5));
  assert.deepEqual([...new Uint32Array(f.buffer)], [0x3c315eaf, 0x3b9fecdc]);
  const built = maskedFast(2, 128, 16, 200, [5, 128], 66)(new Prng(1));
  assert.deepEqual(built.inputs.a.shape, [2, 128, 200]);
  assert.deepEqual(built.inputs.sfb.shape, [2, 1, 2]);
  assert.deepEqual(built.scalars, { expected_m: 66 });
  const sf = built.inputs.sfa.data as Float32Array;
  assert.ok(sf.every((v) => v >= 2 ** -8 && v < 2 ** -6));
});

Deno.test({
  name: "runCase: a sampled case's reference runs natively and the CPU backend passes it",
  sanitizeResources: false,
  fn: async () => {
    using backend = await openBackend("cpu");
    const c: VerifyCase = {
      id: "test/contiguous_sampled",
      op: "m_grouped_fp8_gemm_nt_contiguous",
      layout: "contiguous",
      suite: "deepseek-v3-full",
      sample: 0.05,
      build: () => contiguousFast([384, 200, 128], 512, 384)(new Prng(3)),
    };
    const [r] = await runCase(c, [{ name: "cpu", exec: inProcessExecutor(backend) }]);
    assert.equal(r.status, "pass", r.message);
    assert.equal(r.tolerance, "bitwise (sampled 0.05)");
    assert.ok(r.elements > 0 && r.elements < 768 * 512);
    await closeNativeReference();
  },
});
