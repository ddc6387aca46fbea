// The quantizer arithmetic of the CUDA backend (kernels/cuda/quant_math.cuh) against the TypeScript reference, on
// the host: the header compiles with g++ into a harness (tests/kernels/quant_math_harness.cpp) that runs the very
// functions the CUDA kernels call, group by group. Every recipe of `go_quantize`, both semantics (gpu, cpu), UE8M0 and
// the MX scale rules, on random BF16-valued data and on the special values that break quantizers (all-zero groups,
// the E4M3 overflow band, ±Inf, NaN of both signs, fp32 subnormals, exact rounding ties).
import assert from "node:assert/strict";
import { MX_SCALE_RULE_CODES, QUANT_KIND_CODES } from "../../ffi/quant_ops.ts";
import { f32Bits } from "../../reference/fp32.ts";
import { QUANT_RECIPES } from "../../reference/quant/recipes.ts";
import { Prng } from "../../reference/random/prng.ts";
import { Tensor } from "../../reference/tensor/tensor.ts";
import { toFloat32 } from "../../reference/tensor/values.ts";

const HERE = new URL(".", import.meta.url).pathname;

/** go_quant::Kind values, by recipe name (the C ABI's codes, which the harness takes). */
const KINDS: Record<string, number> = QUANT_KIND_CODES;
/** go_mx_scale_rule names, by code. */
const RULES = Object.keys(MX_SCALE_RULE_CODES) as (keyof typeof MX_SCALE_RULE_CODES)[];

async function buildHarness(dir: string): Promise<string> {
  const exe = `${dir}/quant_math_harness`;
  const out = await new Deno.Command("g++", {
    args: ["-std=c++17", "-O2", "-ffp-contract=off", "-o", exe, `${HERE}quant_math_harness.cpp`],
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.ok(out.success, new TextDecoder().decode(out.stderr));
  return exe;
}

/** Random BF16-valued fp32 data over many binades, with special rows (see the module comment). */
function inputs(seed: number, m: number, n: number): Float32Array {
  const p = new Prng(seed);
  const v = new Float32Array(m * n);
  const u = new Uint32Array(v.buffer);
  for (let i = 0; i < v.length; i++) {
    const row = Math.floor(i / n);
    // row r spans 2^(±(r mod 7)·4) so scaled values reach the formats' subnormals
    const e = (row % 7) * 4 * (row % 2 ? -1 : 1);
    u[i] = f32Bits(p.normal() * 2 ** e) & 0xffff0000;
  }
  if (m > 2 && n >= 64) {
    v.fill(0, 0, 32); // an all-zero group (amax floor 1e-4, MX code 0, NVFP4 zero block)
    const specials = [448, 464, 464.5, 479.9, 480, -480, 0.0625, 1.0625, 3.5, 5, 2.5, 0.75, 0.25, -0, 2 ** -130, 57344];
    v.set(specials.map((s) => Math.fround(s)), n);
    v.set(specials.map((s) => Math.fround(s * 2 ** -7)), n + 16);
  }
  if (m > 5 && n >= 64) {
    u[3 * n + 5] = 0x7fc00000; // +NaN
    u[4 * n + 40] = 0xffc00001; // −NaN with a payload
    v[5 * n + 7] = Infinity;
    v[5 * n + 50] = -Infinity;
  }
  return v;
}

interface Run {
  codes: Uint8Array;
  sf: Float32Array | Uint8Array;
  globalSf?: number;
}

async function harness(
  exe: string,
  kind: number,
  m: number,
  n: number,
  granK: number,
  gpu: boolean,
  ue8m0: boolean,
  rule: number,
  x: Float32Array,
): Promise<Run> {
  const child = new Deno.Command(exe, { stdin: "piped", stdout: "piped", stderr: "piped" }).spawn();
  const w = child.stdin.getWriter();
  await w.write(new Uint8Array(Int32Array.from([kind, m, n, granK, gpu ? 1 : 0, ue8m0 ? 1 : 0, rule]).buffer));
  await w.write(new Uint8Array(x.buffer, x.byteOffset, x.byteLength));
  await w.close();
  const out = await child.output();
  assert.ok(out.success, new TextDecoder().decode(out.stderr));
  const bytes = out.stdout;
  const codes = bytes.slice(0, m * n);
  const rest = bytes.slice(m * n);
  if (kind <= 3) return { codes, sf: new Float32Array(rest.buffer, rest.byteOffset, rest.byteLength / 4) };
  const groups = kind >= 7 ? rest.length - 4 : rest.length;
  const r: Run = { codes, sf: rest.slice(0, groups) };
  if (kind >= 7) r.globalSf = new Float32Array(rest.slice(groups).buffer)[0];
  return r;
}

/** fp32 bits equal, or both NaN (the reference's NaN spelling of a scale is the JS engine's). */
function sameF32(a: number, b: number): boolean {
  return (a !== a && b !== b) || f32Bits(a) === f32Bits(b);
}

async function check(
  exe: string,
  recipe: string,
  m: number,
  n: number,
  granK: number,
  semantics: "gpu" | "cpu",
  useUe8m0: boolean,
  rule: number,
  seed: number,
): Promise<number> {
  const x = inputs(seed, m, n);
  const ref = QUANT_RECIPES[recipe](Tensor.from("f32", [m, n], x.slice()), {
    granK,
    useUe8m0,
    semantics,
    scaleRule: RULES[rule],
  });
  const got = await harness(exe, KINDS[recipe], m, n, granK, semantics === "gpu", useUe8m0, rule, x);
  const what = `${recipe} ${m}x${n} gran ${granK} ${semantics} ue8m0=${useUe8m0} rule=${RULES[rule]}`;
  const want = ref.codes.contiguous().data as Uint8Array;
  for (let i = 0; i < want.length; i++) {
    if (want[i] !== got.codes[i]) {
      assert.fail(
        `${what}: code [${Math.floor(i / n)}, ${i % n}] of x = ${x[i]} (0x${f32Bits(x[i]).toString(16)}): ` +
          `reference 0x${want[i].toString(16)}, header 0x${got.codes[i].toString(16)}`,
      );
    }
  }
  if (got.sf instanceof Float32Array) {
    const ws = toFloat32(ref.sf);
    assert.equal(ws.length, got.sf.length, what);
    for (let i = 0; i < ws.length; i++) {
      assert.ok(sameF32(ws[i], got.sf[i]), `${what}: sf[${i}] ${ws[i]} vs ${got.sf[i]}`);
    }
  } else {
    assert.deepEqual([...got.sf], [...(ref.sf.contiguous().data as Uint8Array)], `${what}: scale codes`);
  }
  if (ref.globalSf) assert.ok(sameF32(ref.globalSf.at(0), got.globalSf!), `${what}: global scale`);
  return want.length;
}

Deno.test("quant_math.cuh (the CUDA quantizers' arithmetic) on the host", async (t) => {
  const dir = await Deno.makeTempDir({ prefix: "go-quant-math-" });
  try {
    const exe = await buildHarness(dir);
    await t.step(
      "DeepGEMM's FP8 casts: per token, per channel, per block; gpu and cpu; fp32 and UE8M0 scales",
      async () => {
        let seed = 1;
        for (const semantics of ["gpu", "cpu"] as const) {
          for (const ue8m0 of [false, true]) {
            await check(exe, "per_token_cast_to_fp8", 8, 256, 128, semantics, ue8m0, 0, seed++);
            await check(exe, "per_token_cast_to_fp8", 7, 200, 32, semantics, ue8m0, 0, seed++);
            await check(exe, "per_channel_cast_to_fp8", 256, 72, 128, semantics, ue8m0, 0, seed++);
            await check(exe, "per_channel_cast_to_fp8", 64, 66, 32, semantics, ue8m0, 0, seed++);
            await check(exe, "per_block_cast_to_fp8", 130, 200, 128, semantics, ue8m0, 0, seed++);
          }
        }
      },
    );
    await t.step("DeepGEMM's FP4 cast (strict thresholds, ties toward zero)", async () => {
      let seed = 100;
      for (const semantics of ["gpu", "cpu"] as const) {
        for (const ue8m0 of [false, true]) {
          await check(exe, "per_token_cast_to_fp4", 8, 256, 32, semantics, ue8m0, 0, seed++);
          await check(exe, "per_token_cast_to_fp4", 7, 96, 128, semantics, ue8m0, 0, seed++);
        }
      }
    });
    await t.step("MX (E4M3, E5M2, E2M1) under every scale rule", async () => {
      let seed = 200;
      for (const recipe of ["mxfp8_e4m3", "mxfp8_e5m2", "mxfp4"]) {
        for (const semantics of ["gpu", "cpu"] as const) {
          for (let rule = 0; rule < 4; rule++) await check(exe, recipe, 8, 256, 32, semantics, false, rule, seed++);
        }
      }
    });
    await t.step("NVFP4 in TransformerEngine's and torchao's orders", async () => {
      let seed = 300;
      await check(exe, "nvfp4_te", 8, 256, 16, "gpu", false, 0, seed++);
      await check(exe, "nvfp4_te", 3, 48, 16, "gpu", false, 0, seed++);
      for (const semantics of ["gpu", "cpu"] as const) {
        await check(exe, "nvfp4_torchao", 8, 256, 16, semantics, false, 0, seed++);
        await check(exe, "nvfp4_torchao", 3, 48, 16, semantics, false, 0, seed++);
      }
    });
    await t.step("a tensor of zeros: amax floors and zero blocks", async () => {
      for (const recipe of Object.keys(KINDS)) {
        const x = new Float32Array(32 * 64);
        const granK = recipe.startsWith("per_") ? 32 : 16;
        const ref = QUANT_RECIPES[recipe](Tensor.from("f32", [32, 64], x.slice()), { granK, useUe8m0: true });
        const got = await harness(exe, KINDS[recipe], 32, 64, granK, true, true, 0, x);
        assert.deepEqual([...got.codes], [...(ref.codes.contiguous().data as Uint8Array)], recipe);
        if (ref.globalSf) assert.ok(sameF32(ref.globalSf.at(0), got.globalSf!), recipe);
      }
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
