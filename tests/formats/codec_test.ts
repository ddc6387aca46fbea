import assert from "node:assert/strict";
import {
  decode,
  encode,
  type EncodeOptions,
  encoderFor,
  type FormatName,
  isNanCode,
} from "../../reference/formats/mod.ts";
import {
  exactEqual,
  exactOfCode,
  exactOfNumber,
  type Fmt,
  LAYOUT,
  refEncode,
  type RefRule,
  testInputs,
} from "./_reference.ts";
import { Prng } from "../../reference/random/prng.ts";

const hex = (x: number) => "0x" + (x >>> 0).toString(16).toUpperCase();

Deno.test("decode()", async (t) => {
  for (const f of Object.keys(LAYOUT) as Fmt[]) {
    const L = LAYOUT[f];
    const n = L.signed ? 2 ** (1 + L.e + L.m) : 256;
    await t.step(`decodes all ${n} ${f} codes to the exact value of the spec formula`, () => {
      for (let c = 0; c < n; c++) {
        const want = exactOfCode(f, c);
        const got = decode(f, c);
        assert.ok(exactEqual(exactOfNumber(got), want), `${f} ${hex(c)}: got ${got}`);
      }
    });
  }

  await t.step("keeps the sign of negative zero", () => {
    assert.ok(Object.is(decode("e4m3", 0x80), -0));
    assert.ok(Object.is(decode("e2m1", 0x8), -0));
    assert.ok(Object.is(decode("bf16", 0x8000), -0));
  });

  await t.step("decodes UE8M0 0x00 to 2^-127, not zero", () => assert.equal(decode("ue8m0", 0), 2 ** -127));

  await t.step("decodes f32 bit patterns", () => {
    assert.equal(decode("f32", 0x3f800000), 1);
    assert.equal(decode("f32", 0x00000001), 2 ** -149);
    assert.ok(Number.isNaN(decode("f32", 0xffc00000)));
  });

  await t.step("throws RangeError for a code outside the format", () => {
    assert.throws(() => decode("e2m1", 16), RangeError);
    assert.throws(() => decode("e4m3", -1), RangeError);
    assert.throws(() => decode("bf16", 1.5), RangeError);
    assert.throws(() => decode("e9m9" as FormatName, 0), /valid formats are/);
  });

  await t.step("throws TypeError for a non-number code", () => {
    assert.throws(() => decode("e4m3", "1" as unknown as number), TypeError);
  });
});

Deno.test("isNanCode()", async (t) => {
  await t.step("finds exactly the NaN codes of each format", () => {
    const count = (f: FormatName, n: number) => {
      let k = 0;
      for (let c = 0; c < n; c++) if (isNanCode(f, c)) k++;
      return k;
    };
    assert.equal(count("e4m3", 256), 2);
    assert.equal(count("e5m2", 256), 6);
    assert.equal(count("e2m1", 16), 0);
    assert.equal(count("ue8m0", 256), 1);
    assert.equal(count("bf16", 65536), 2 * 127);
    assert.equal(count("fp16", 65536), 2 * 1023);
  });
});

// Generic encoder options checked against the independent encoder (ru/rd/rna/rz on signed formats too).
const GENERIC: [Fmt, EncodeOptions, RefRule][] = [
  ["e4m3", { rounding: "ru", overflow: "saturate" }, {
    round: "ru",
    over: "sat",
    nan: (b) => (b >>> 31 ? 0xff : 0x7f),
  }],
  ["e4m3", { rounding: "rd", overflow: "nan" }, { round: "rd", over: "nan", nan: (b) => (b >>> 31 ? 0xff : 0x7f) }],
  ["e4m3", { rounding: "rz", overflow: "nan" }, { round: "rz", over: "nan", nan: (b) => (b >>> 31 ? 0xff : 0x7f) }],
  ["e5m2", { rounding: "rna", overflow: "inf" }, { round: "rna", over: "inf", nan: (b) => (b >>> 31 ? 0xff : 0x7f) }],
  ["e5m2", { rounding: "rd", overflow: "inf", nan: { code: 0x7d, sign: "fixed" } }, {
    round: "rd",
    over: "inf",
    nan: () => 0x7d,
  }],
  ["bf16", { rounding: "rz", overflow: "inf" }, { round: "rz", over: "inf", nan: (b) => (b >>> 31 ? 0xffff : 0x7fff) }],
  ["bf16", { rounding: "ru", overflow: "inf" }, { round: "ru", over: "inf", nan: (b) => (b >>> 31 ? 0xffff : 0x7fff) }],
  ["fp16", { rounding: "rd", overflow: "saturate", infinity: "inf" }, {
    round: "rd",
    over: "sat",
    inf: "inf",
    nan: (b) => (b >>> 31 ? 0xffff : 0x7fff),
  }],
  ["fp16", { rounding: "rnz", overflow: "inf" }, {
    round: "rnz",
    over: "inf",
    nan: (b) => (b >>> 31 ? 0xffff : 0x7fff),
  }],
  ["e2m1", { rounding: "ru", overflow: "saturate", nan: { code: 0 } }, {
    round: "ru",
    over: "sat",
    nan: (b) => (b >>> 31 ? 8 : 0),
  }],
  ["ue8m0", { rounding: "rne", overflow: "saturate", zero: "min", negative: "abs" }, {
    round: "rne",
    over: "sat",
    nan: () => 0xff,
    zero: "min",
    neg: "abs",
  }],
];

Deno.test("encode()", async (t) => {
  const inputs = testInputs(7);
  for (const [f, opts, rule] of GENERIC) {
    await t.step(`${f} ${JSON.stringify(opts)} matches the independent encoder`, () => {
      for (const u of inputs) {
        const got = encode(f, u, opts), want = refEncode(f, rule, u);
        if (got !== want) assert.fail(`${f} ${hex(u)}: got ${hex(got)}, want ${hex(want)}`);
      }
    });
  }

  await t.step("gives max finite on overflow toward zero (IEEE 754 §7.4) and Inf away from it", () => {
    assert.equal(encode("bf16", 0x7f7fffff, { rounding: "rz", overflow: "inf" }), 0x7f7f);
    assert.equal(encode("bf16", 0x7f7fffff, { rounding: "ru", overflow: "inf" }), 0x7f80);
    assert.equal(encode("bf16", 0xff7fffff, { rounding: "ru", overflow: "inf" }), 0xff7f);
    assert.equal(encode("bf16", 0xff7fffff, { rounding: "rd", overflow: "inf" }), 0xff80);
  });

  await t.step("rounds ties away with rna and toward zero with rnz", () => {
    assert.equal(encode("e4m3", 0x3f880000, { rounding: "rna", overflow: "nan" }), 0x39); // 1.0625 → 1.125
    assert.equal(encode("e4m3", 0x3f980000, { rounding: "rnz", overflow: "nan" }), 0x39); // 1.1875 → 1.125
    assert.equal(encode("e4m3", 0xbf980000, { rounding: "rnz", overflow: "nan" }), 0xb9);
  });

  await t.step("keeps f32 inputs unchanged when the target is f32, NaN payloads included", () => {
    const rng = new Prng(3);
    const opts: EncodeOptions = { rounding: "rne", overflow: "inf" };
    for (let i = 0; i < 10000; i++) {
      const u = rng.nextU32();
      assert.equal(encode("f32", u, opts), u);
    }
  });

  await t.step("throws RangeError when asked for an infinity or NaN the format lacks", () => {
    assert.throws(() => encoderFor("e4m3", { rounding: "rne", overflow: "inf" }), /has no infinity/);
    assert.throws(() => encoderFor("e2m1", { rounding: "rne", overflow: "nan" }), /has no NaN/);
    const noNan = encoderFor("e2m1", { rounding: "rne", overflow: "saturate" });
    assert.equal(noNan(0x3f800000), 0x2);
    assert.throws(() => noNan(0x7fc00000), /has no NaN code/);
  });

  await t.step("throws RangeError for an unknown rounding mode or policy", () => {
    assert.throws(
      () => encode("e4m3", 0, { rounding: "nearest" as "rne", overflow: "nan" }),
      /rne, rna, rnz, rz, ru, rd/,
    );
    assert.throws(() => encode("e4m3", 0, { rounding: "rne", overflow: "clamp" as "nan" }), /nan, inf, saturate/);
  });

  await t.step("throws TypeError for non-integer bits", () => {
    assert.throws(() => encode("e4m3", 1.5, { rounding: "rne", overflow: "nan" }), TypeError);
  });
});
