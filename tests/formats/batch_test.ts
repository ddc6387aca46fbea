import assert from "node:assert/strict";
import {
  decode,
  decodeArray,
  decodeTable,
  encodeArray,
  encodeArrayWith,
  getConverter,
  PROFILE_NAMES,
  PROFILES,
} from "../../reference/formats/mod.ts";
import { testInputs } from "./_reference.ts";

const INPUTS = testInputs(11);

Deno.test("encodeArray()", async (t) => {
  await t.step("equals the scalar converter for every profile and format", () => {
    for (const p of PROFILE_NAMES) {
      for (const f of Object.keys(PROFILES[p].formats)) {
        const conv = getConverter(p, f);
        const out = encodeArray(p, f, INPUTS);
        for (let i = 0; i < INPUTS.length; i++) {
          if (out[i] !== conv(INPUTS[i])) assert.fail(`${p} ${f} at ${INPUTS[i].toString(16)}`);
        }
      }
    }
  });

  await t.step("returns Uint8Array for 8- and 4-bit formats and Uint16Array for bf16/fp16", () => {
    const x = new Float32Array([1, -2]);
    assert.ok(encodeArray("ml_dtypes", "e4m3", x) instanceof Uint8Array);
    assert.ok(encodeArray("ml_dtypes", "e2m1", x) instanceof Uint8Array);
    assert.ok(encodeArray("ml_dtypes", "ue8m0", x) instanceof Uint8Array);
    assert.deepEqual(encodeArray("ml_dtypes", "bf16", x), new Uint16Array([0x3f80, 0xc000]));
  });

  await t.step("reads Float32Array values and Uint32Array bits alike, subarrays included", () => {
    const f = new Float32Array([0, 1, 3.5, -464, 1e-3]);
    const u = new Uint32Array(f.buffer);
    assert.deepEqual(
      encodeArray("torch_2_11", "e4m3", f.subarray(1)),
      encodeArray("torch_2_11", "e4m3", u.subarray(1)),
    );
    assert.deepEqual(encodeArray("torch_2_11", "e4m3", f.subarray(1)), new Uint8Array([0x38, 0x46, 0xfe, 0x01]));
  });

  await t.step("throws TypeError for other array types", () => {
    assert.throws(
      () => encodeArray("ml_dtypes", "e4m3", new Float64Array(2) as unknown as Float32Array),
      /Float64Array/,
    );
    assert.throws(() => encodeArray("ml_dtypes", "e4m3", [1, 2] as unknown as Float32Array), TypeError);
  });

  await t.step("throws RangeError for unknown profiles and formats", () => {
    assert.throws(() => encodeArray("nope", "e4m3", new Float32Array(1)), /valid profiles are/);
    assert.throws(() => encodeArray("cuda_fp4_rn", "e4m3", new Float32Array(1)), /defines e2m1/);
  });
});

Deno.test("encodeArrayWith()", async (t) => {
  await t.step("encodes with explicit options, table path and scalar path alike", () => {
    const x = new Float32Array([1.2, -1000, 2 ** -10, 3e38]);
    assert.deepEqual(
      encodeArrayWith("e4m3", { rounding: "ru", overflow: "saturate" }, x),
      new Uint8Array([0x3a, 0xfe, 0x01, 0x7e]),
    );
    assert.deepEqual(
      encodeArrayWith("fp16", { rounding: "rz", overflow: "inf" }, x),
      new Uint16Array([0x3ccc, 0xe3d0, 0x1400, 0x7bff]),
    );
  });
});

Deno.test("decodeArray()", async (t) => {
  await t.step("decodes every code like decode() for each format", () => {
    for (const f of ["e4m3", "e5m2", "ue8m0", "bf16", "fp16"] as const) {
      const n = f === "bf16" || f === "fp16" ? 65536 : 256;
      const codes = n === 256 ? new Uint8Array(n).map((_, i) => i) : new Uint16Array(n).map((_, i) => i);
      const out = decodeArray(f, codes);
      for (let c = 0; c < n; c++) {
        const want = decode(f, c);
        assert.ok(Object.is(out[c], Math.fround(want)) || (Number.isNaN(want) && Number.isNaN(out[c])), `${f} ${c}`);
      }
    }
  });

  await t.step("round-trips through encodeArray for every representable value", () => {
    const t8 = decodeTable("e4m3");
    const codes = encodeArray("ml_dtypes", "e4m3", t8);
    for (let c = 0; c < 256; c++) if (c !== 0x7f && c !== 0xff) assert.equal(codes[c], c);
  });

  await t.step("copies f32 bits unchanged", () => {
    const bits = new Uint32Array([0x7fa00001, 0x80000000, 0x3f800000]);
    assert.deepEqual(new Uint32Array(decodeArray("f32", bits).buffer), bits);
  });

  await t.step("throws TypeError for the wrong typed-array type", () => {
    assert.throws(() => decodeArray("e4m3", new Uint16Array(2)), /expected a Uint8Array, got Uint16Array/);
    assert.throws(() => decodeArray("bf16", new Uint8Array(2)), TypeError);
  });

  await t.step("throws RangeError for an E2M1 code above 15", () => {
    assert.throws(() => decodeArray("e2m1", new Uint8Array([3, 16])), /code 16 at index 1/);
  });
});

Deno.test("decodeTable()", async (t) => {
  await t.step("lists the E2M1 magnitudes and their negatives", () => {
    assert.deepEqual(
      decodeTable("e2m1"),
      new Float32Array([0, 0.5, 1, 1.5, 2, 3, 4, 6, -0, -0.5, -1, -1.5, -2, -3, -4, -6]),
    );
  });
  await t.step("maps UE8M0 0x00 to 2^-127 and 0xFF to NaN", () => {
    const t8 = decodeTable("ue8m0");
    assert.equal(t8[0], 2 ** -127);
    assert.equal(t8[0xfe], 2 ** 127);
    assert.ok(Number.isNaN(t8[0xff]));
  });
  await t.step("returns a fresh copy each time", () => {
    const a = decodeTable("e4m3");
    a[0] = 5;
    assert.equal(decodeTable("e4m3")[0], 0);
  });
  await t.step("throws RangeError for f32", () => assert.throws(() => decodeTable("f32"), RangeError));
});
