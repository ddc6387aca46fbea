import assert from "node:assert/strict";
import {
  encodeArray,
  getConverter,
  PROFILE_NAMES,
  profileRule,
  PROFILES,
  profileSpec,
} from "../../reference/formats/mod.ts";
import { type Fmt, REF_RULES, refEncode, testInputs } from "./_reference.ts";

const hex = (x: number) => "0x" + (x >>> 0).toString(16).toUpperCase();
const f32bits = (x: number) => new Uint32Array(new Float32Array([x]).buffer)[0];

/** Profiles (and formats) whose RNE rule is the one every reference agrees on for finite in-range inputs (§2). */
function rneProfiles(format: Fmt): string[] {
  return PROFILE_NAMES.filter((p) => REF_RULES[p]?.[format]?.round === "rne");
}

// numerics.md §2 test vectors, verbatim: [format, input bits, output code].
const SECTION_2: [Fmt, number, number][] = [
  ["e4m3", 0x3A800000, 0x00],
  ["e4m3", 0x3A800001, 0x01],
  ["e4m3", 0x3B400000, 0x02],
  ["e4m3", 0x3BA00000, 0x02],
  ["e4m3", 0x3C700000, 0x08],
  ["e4m3", 0x3F880000, 0x38],
  ["e4m3", 0x3F880001, 0x39],
  ["e4m3", 0x3F980000, 0x3A],
  ["e4m3", 0x43700000, 0x77],
  ["e4m3", 0x43E00000, 0x7E],
  ["e4m3", 0x43E80000, 0x7E],
  ["e4m3", 0xBA000000, 0x80],
  ["e5m2", 0x37000000, 0x00],
  ["e5m2", 0x37000001, 0x01],
  ["e5m2", 0x37C00000, 0x02],
  ["e5m2", 0x3F900000, 0x3C],
  ["e5m2", 0x3FB00000, 0x3E],
  ["e5m2", 0x476FFFFF, 0x7B],
  ["e2m1", 0x3E800000, 0x0],
  ["e2m1", 0x3E800001, 0x1],
  ["e2m1", 0x3F400000, 0x2],
  ["e2m1", 0x3FA00000, 0x2],
  ["e2m1", 0x3FE00000, 0x4],
  ["e2m1", 0x40200000, 0x4],
  ["e2m1", 0x40600000, 0x6],
  ["e2m1", 0x40A00000, 0x6],
  ["e2m1", 0x40A00001, 0x7],
];

// numerics.md §3 tables, one row per cell: [profile, format, input bits, output code].
const PLUS_BIG_E4 = 0x43E80001; // 464.00003: |x| in (464, ∞)
const SECTION_3: [string, Fmt, number, number][] = [];
function cells(format: Fmt, input: number, byProfile: Record<string, number>) {
  for (const [p, out] of Object.entries(byProfile)) SECTION_3.push([p, format, input, out]);
}
// §3.1 E4M3
const e4Big = {
  ml_dtypes: 0x7F,
  torch_2_11: 0x7F,
  cuda_nosat: 0x7F,
  cuda_satfinite: 0x7E,
  jax_cpu: 0x7F,
  jax_gpu: 0x7F,
};
cells("e4m3", PLUS_BIG_E4, e4Big);
cells("e4m3", 0x43F00000, e4Big); // 480
cells("e4m3", 0x47800000, e4Big); // 65536
const e4BigNeg = {
  ml_dtypes: 0xFF,
  torch_2_11: 0xFF,
  cuda_nosat: 0xFF,
  cuda_satfinite: 0xFE,
  jax_cpu: 0xFF,
  jax_gpu: 0xFF,
};
cells("e4m3", (PLUS_BIG_E4 | 0x80000000) >>> 0, e4BigNeg);
cells("e4m3", 0x7F800000, e4Big);
cells("e4m3", 0xFF800000, e4BigNeg);
const e4NanPos = {
  ml_dtypes: 0x7F,
  torch_2_11: 0x7F,
  cuda_nosat: 0x7F,
  cuda_satfinite: 0x7F,
  jax_cpu: 0x7F,
  jax_gpu: 0x7F,
};
cells("e4m3", 0x7FC00000, e4NanPos);
cells("e4m3", 0xFFC00000, {
  ml_dtypes: 0xFF,
  torch_2_11: 0xFF,
  cuda_nosat: 0x7F,
  cuda_satfinite: 0x7F,
  jax_cpu: 0xFF,
  jax_gpu: 0x7F,
});
cells("e4m3", 0x43E80000, { ml_dtypes: 0x7E, torch_2_11: 0x7E, cuda_satfinite: 0x7E }); // 464 → 448
// §3.2 E5M2
const e5Big = {
  ml_dtypes: 0x7C,
  torch_2_11: 0x7C,
  cuda_nosat: 0x7C,
  cuda_satfinite: 0x7B,
  jax_cpu: 0x7C,
  jax_gpu: 0x7C,
};
cells("e5m2", 0x47700000, e5Big); // 61440, the tie
cells("e5m2", 0x7F800000, e5Big);
cells("e5m2", 0xC7700000, { ml_dtypes: 0xFC, torch_2_11: 0xFC, cuda_nosat: 0xFC, cuda_satfinite: 0xFB });
cells("e5m2", 0xFF800000, { ml_dtypes: 0xFC, torch_2_11: 0xFC, cuda_nosat: 0xFC, cuda_satfinite: 0xFB });
cells("e5m2", 0x7FC00000, {
  ml_dtypes: 0x7E,
  torch_2_11: 0x7F,
  cuda_nosat: 0x7F,
  cuda_satfinite: 0x7F,
  jax_cpu: 0x7E,
  jax_gpu: 0x7F,
});
cells("e5m2", 0xFFC00000, {
  ml_dtypes: 0xFE,
  torch_2_11: 0xFF,
  cuda_nosat: 0x7F,
  cuda_satfinite: 0x7F,
  jax_cpu: 0xFE,
  jax_gpu: 0x7F,
});
cells("e5m2", 0x476FFFFF, { ml_dtypes: 0x7B, torch_2_11: 0x7B, cuda_nosat: 0x7B, cuda_satfinite: 0x7B, jax_gpu: 0x7B });
// §3.3 E2M1
const f4Big = { ml_dtypes: 0x7, cuda_fp4_rn: 0x7, cuda_fp4_rz: 0x7, jax_cpu: 0x7, jax_gpu: 0x7, torchao_f4: 0x7 };
cells("e2m1", 0x40E00000, f4Big); // 7
cells("e2m1", 0x7F800000, f4Big);
cells("e2m1", 0xFF800000, { ml_dtypes: 0xF, cuda_fp4_rn: 0xF, cuda_fp4_rz: 0xF, jax_cpu: 0xF, torchao_f4: 0xF });
cells("e2m1", 0x7FC00000, { ml_dtypes: 0x8, cuda_fp4_rn: 0x7, cuda_fp4_rz: 0x7, jax_cpu: 0x8, jax_gpu: 0x8 });
cells("e2m1", 0xFFC00000, { ml_dtypes: 0x0, cuda_fp4_rn: 0x7, cuda_fp4_rz: 0x7, jax_cpu: 0x8, jax_gpu: 0x8 });
cells("e2m1", 0x3F400000, { cuda_fp4_rz: 0x1 });
cells("e2m1", 0x3E800001, { cuda_fp4_rz: 0x0 });
cells("e2m1", 0xBE800001, { cuda_fp4_rz: 0x8 });
cells("e2m1", 0x40A00001, { cuda_fp4_rz: 0x6 });
// §3.4 UE8M0
const e8 = (ml: number, torch: number, rz: [number, number], rp: [number, number]) => ({
  ml_dtypes: ml,
  jax_cpu: ml,
  jax_gpu: ml,
  torch_2_11: torch,
  cuda_e8m0_rz_sat: rz[0],
  cuda_e8m0_rz_nosat: rz[1],
  cuda_e8m0_rp_sat: rp[0],
  cuda_e8m0_rp_nosat: rp[1],
});
cells("ue8m0", 0x00000000, e8(0xFF, 0x00, [0x00, 0x00], [0x00, 0x00]));
cells("ue8m0", 0x80000000, e8(0xFF, 0x00, [0x00, 0x00], [0x00, 0x00]));
cells("ue8m0", 0xC0000000, e8(0xFF, 0x80, [0x80, 0x80], [0x80, 0x80])); // −2: |x| encoded
cells("ue8m0", 0xBFC00000, e8(0xFF, 0x80, [0x7F, 0x7F], [0x80, 0x80])); // −1.5
cells("ue8m0", 0x00400000, e8(0x00, 0x00, [0x00, 0x00], [0x00, 0x00])); // 2^-127
cells("ue8m0", 0x00000001, e8(0x00, 0x00, [0x00, 0x00], [0x00, 0x00]));
cells("ue8m0", 0x00400001, e8(0x01, 0x01, [0x00, 0x00], [0x01, 0x01]));
cells("ue8m0", 0x005FFFFF, e8(0x01, 0x01, [0x00, 0x00], [0x01, 0x01]));
cells("ue8m0", 0x3F900000, e8(0x7F, 0x7F, [0x7F, 0x7F], [0x80, 0x80])); // 1.125: f < 0.5
cells("ue8m0", 0x3FC00000, e8(0x80, 0x80, [0x7F, 0x7F], [0x80, 0x80])); // 1.5: the tie goes up
cells("ue8m0", 0x3FBFFFFF, e8(0x7F, 0x7F, [0x7F, 0x7F], [0x80, 0x80]));
cells("ue8m0", 0x40400000, e8(0x81, 0x81, [0x80, 0x80], [0x81, 0x81])); // 3.0: tie, even field, still up
cells("ue8m0", 0x3F800000, e8(0x7F, 0x7F, [0x7F, 0x7F], [0x7F, 0x7F]));
cells("ue8m0", 0x7F400000, e8(0xFF, 0xFF, [0xFE, 0xFE], [0xFE, 0xFF]));
cells("ue8m0", 0x7F7FFFFF, e8(0xFF, 0xFF, [0xFE, 0xFE], [0xFE, 0xFF]));
cells("ue8m0", 0x7F000000, e8(0xFE, 0xFE, [0xFE, 0xFE], [0xFE, 0xFE]));
cells("ue8m0", 0x7F800000, e8(0xFF, 0xFF, [0xFE, 0xFF], [0xFE, 0xFF]));
cells("ue8m0", 0x7FC00000, e8(0xFF, 0xFF, [0xFF, 0xFF], [0xFF, 0xFF]));
cells("ue8m0", 0xFFC00000, e8(0xFF, 0xFF, [0xFF, 0xFF], [0xFF, 0xFF]));
// §3.5 BF16 / FP16 NaN spellings
for (
  const [input, ml, tCpu, tCuda, f16np, f16cpu, f16cuda] of [
    [0x7F800001, 0x7FC0, 0xFFFF, 0x7FFF, 0x7C01, 0x7E00, 0x7FFF],
    [0xFF800001, 0xFFC0, 0xFFFF, 0x7FFF, 0xFC01, 0xFE00, 0x7FFF],
    [0x7FA00000, 0x7FC0, 0xFFFF, 0x7FFF, 0x7D00, 0x7F00, 0x7FFF],
  ]
) {
  cells("bf16", input, { ml_dtypes: ml, torch_2_11: tCpu, torch_2_11_cuda: tCuda, cuda_nosat: tCuda });
  cells("fp16", input, { ml_dtypes: f16np, torch_2_11: f16cpu, torch_2_11_cuda: f16cuda });
}
cells("bf16", 0x7F7FFFFF, { ml_dtypes: 0x7F80, torch_2_11: 0x7F80, torch_2_11_cuda: 0x7F80, cuda_nosat: 0x7F80 });

Deno.test("getConverter()", async (t) => {
  await t.step("reproduces every numerics.md §2 vector in every RNE profile", () => {
    let n = 0;
    for (const [format, input, out] of SECTION_2) {
      for (const p of rneProfiles(format)) {
        assert.equal(hex(getConverter(p, format)(input)), hex(out), `${p} ${format} ${hex(input)}`);
        n++;
      }
    }
    assert.ok(n > 100);
  });

  await t.step("reproduces every numerics.md §3 table cell", () => {
    for (const [p, format, input, out] of SECTION_3) {
      assert.equal(hex(getConverter(p, format)(input)), hex(out), `${p} ${format} ${hex(input)}`);
    }
  });

  await t.step("rounds the tie at 464 down to 448 but sends 464.00003 to NaN (ml_dtypes)", () => {
    assert.equal(getConverter("ml_dtypes", "e4m3")(0x43E80000), 0x7E);
    assert.equal(getConverter("ml_dtypes", "e4m3")(0x43E80001), 0x7F);
  });

  await t.step("saturates E4M3 finite overflow in torch_2_12plus but keeps Inf as NaN (unverified guess)", () => {
    assert.equal(getConverter("torch_2_12plus", "e4m3")(0x44000000), 0x7E);
    assert.equal(getConverter("torch_2_12plus", "e4m3")(0xC4000000), 0xFE);
    assert.equal(getConverter("torch_2_12plus", "e4m3")(0x7F800000), 0x7F);
    assert.equal(PROFILES.torch_2_12plus.status, "unverified");
  });

  await t.step("reproduces the MXFP4 block example of §5.3 (element codes after FLOOR and RCEIL scales)", () => {
    const v = [7, -3.3, 0.9, 0.26, -0.24, 2.5, 1.25, 0].map(Math.fround);
    for (const p of ["ml_dtypes", "cuda_fp4_rn", "torchao_f4", "microxcaling_even", "jax_gpu"]) {
      const conv = getConverter(p, "e2m1");
      assert.deepEqual(v.map((x) => conv(f32bits(x))), [0x7, 0xD, 0x2, 0x1, 0x8, 0x4, 0x2, 0x0], `${p} X = 1`);
      assert.deepEqual(v.map((x) => conv(f32bits(x / 2))), [0x6, 0xB, 0x1, 0x0, 0x8, 0x2, 0x1, 0x0], `${p} X = 2`);
    }
  });

  await t.step(
    "rounds DeepGEMM fp4 midpoints toward zero, never writes −0 and maps NaN to 0 (deepgemm-ops §2.8)",
    () => {
      const c = getConverter("deepgemm_fp4", "e2m1");
      const code = (x: number) => c(f32bits(x));
      assert.deepEqual([0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0].map(code), [0, 1, 2, 3, 4, 5, 6]);
      assert.deepEqual([0.2500001, 0.7500001, 1.7500001, 3.5000002, 5.0000005].map(code), [1, 2, 4, 6, 7]);
      assert.equal(code(-0.1), 0);
      assert.equal(code(-0), 0);
      assert.equal(code(-0.3), 0x9);
      assert.equal(code(NaN), 0);
      assert.equal(code(-Infinity), 0xF);
      assert.equal(code(100), 0x7);
    },
  );

  await t.step("rounds microxcaling 'nearest' half away from zero and 'floor' toward zero (§7)", () => {
    const code = (p: string, x: number) => getConverter(p, "e2m1")(f32bits(x));
    assert.equal(code("microxcaling_nearest", 0.75), 0x2);
    assert.equal(code("microxcaling_nearest", 1.25), 0x3);
    assert.equal(code("microxcaling_even", 1.25), 0x2);
    assert.equal(code("microxcaling_floor", 1.75), 0x3);
    assert.equal(code("microxcaling_floor", -5.9), 0xE);
    assert.equal(code("microxcaling_nearest", 7), 0x7);
    assert.equal(getConverter("microxcaling_nearest", "e4m3")(0x43E80000), 0x7E); // 464 → 480 → clamped to 448
    assert.equal(getConverter("microxcaling_nearest", "e5m2")(0xFF800000), 0xFC); // Inf restored
  });

  await t.step("writes torchao's NaN through its normal-number branch", () => {
    const c = getConverter("torchao_f4", "e2m1");
    assert.equal(c(0x7FC00000), 0x3);
    assert.equal(c(0xFFC00000), 0xB);
    assert.equal(c(0x7FFFFFFF), 0x4);
  });

  await t.step("throws RangeError listing valid profiles for an unknown profile", () => {
    assert.throws(
      () => getConverter("numpy", "e4m3"),
      (e: Error) => e instanceof RangeError && /ml_dtypes, jax_cpu/.test(e.message),
    );
  });

  await t.step("throws RangeError listing valid formats for an unknown format", () => {
    assert.throws(
      () => getConverter("ml_dtypes", "e3m4"),
      (e: Error) => e instanceof RangeError && /e4m3, e5m2, e2m1/.test(e.message),
    );
  });

  await t.step("throws RangeError listing the defined formats for a format the profile lacks", () => {
    assert.throws(
      () => getConverter("deepgemm_fp4", "e4m3"),
      (e: Error) => e instanceof RangeError && /defines e2m1$/.test(e.message),
    );
    assert.throws(() => getConverter("ml_dtypes", "f32"), /defines e4m3, e5m2, e2m1, ue8m0, bf16, fp16/);
  });
});

Deno.test("PROFILES", async (t) => {
  await t.step("has exactly the profile names of the issue plus the documented extras", () => {
    const required = [
      "ml_dtypes",
      "torch_2_11",
      "torch_2_12plus",
      "cuda_satfinite",
      "cuda_nosat",
      "jax_gpu",
      "cuda_fp4_rn",
      "cuda_fp4_rz",
      "cuda_e8m0_rz_sat",
      "cuda_e8m0_rz_nosat",
      "cuda_e8m0_rp_sat",
      "cuda_e8m0_rp_nosat",
      "torchao_f4",
      "deepgemm_fp4",
      "microxcaling_nearest",
      "microxcaling_floor",
      "microxcaling_even",
    ];
    for (const r of required) assert.ok(PROFILE_NAMES.includes(r as never), r);
    assert.deepEqual([...PROFILE_NAMES].filter((p) => !required.includes(p)).sort(), ["jax_cpu", "torch_2_11_cuda"]);
  });

  await t.step("defines exactly the formats the independent rules define", () => {
    for (const p of PROFILE_NAMES) {
      assert.deepEqual(Object.keys(PROFILES[p].formats).sort(), Object.keys(REF_RULES[p]).sort(), p);
      assert.ok(profileSpec(p).source.length > 0);
    }
    assert.equal(profileRule("ml_dtypes", "e2m1").overflow, "saturate");
  });
});

const INPUTS = testInputs();

Deno.test("profile sweep", async (t) => {
  for (const p of PROFILE_NAMES) {
    for (const format of Object.keys(REF_RULES[p]) as Fmt[]) {
      await t.step(`${p} ${format} matches the independent encoder on ${INPUTS.length} inputs`, () => {
        const rule = REF_RULES[p][format]!;
        const conv = getConverter(p, format);
        const batch = encodeArray(p, format, INPUTS);
        for (let i = 0; i < INPUTS.length; i++) {
          const want = refEncode(format, rule, INPUTS[i]);
          const got = conv(INPUTS[i]);
          if (got !== want || batch[i] !== want) {
            assert.fail(
              `${p} ${format} ${hex(INPUTS[i])}: scalar ${hex(got)}, batch ${hex(batch[i])}, reference ${hex(want)}`,
            );
          }
        }
      });
    }
  }
});
