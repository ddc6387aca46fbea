import assert from "node:assert/strict";
import { Prng } from "../../reference/random/prng.ts";
import { Tensor, toFloat32 } from "../../reference/tensor/mod.ts";
import { nvfp4QuantizeTe, nvfp4QuantizeTorchao } from "../../reference/quant/mod.ts";

function block(values: number[], globalAmax = 10): Tensor {
  const v = new Float32Array(32);
  v[0] = globalAmax;
  v.set(values, 16);
  return Tensor.from("f32", [1, 32], v);
}

Deno.test("nvfp4QuantizeTe()", async (t) => {
  await t.step("numerics.md §6 vector: global amax 10, block [10, 1, −2.5, 0.3, 4.1, −7, 0, 5.5]", () => {
    const r = nvfp4QuantizeTe(block([10, 1, -2.5, 0.3, 4.1, -7, 0, 5.5]));
    assert.equal(r.sf.at(0, 1), 0x7e);
    assert.deepEqual([...(r.codes.data as Uint8Array).subarray(16, 24)], [7, 1, 0xb, 0, 4, 0xe, 0, 5]);
    assert.equal(r.globalSf.at(0), Math.fround(1 / Math.fround(2688 / 10)));
  });
  await t.step("numerics.md §6 vector: small block [0.01, −0.02, 0.004] → scale 0x36, codes [5, F, 2]", () => {
    const r = nvfp4QuantizeTe(block([0.01, -0.02, 0.004, 0]));
    assert.equal(r.sf.at(0, 1), 0x36);
    assert.deepEqual([...(r.codes.data as Uint8Array).subarray(16, 20)], [5, 0xf, 2, 0]);
  });
  await t.step("an all-zero block gets scale 0x00 and zero codes", () => {
    const r = nvfp4QuantizeTe(block([]));
    assert.equal(r.sf.at(0, 1), 0x00);
    assert.ok((r.codes.data as Uint8Array).subarray(16).every((c) => c === 0));
  });
  await t.step("an all-zero tensor uses S_enc = 1", () => {
    const r = nvfp4QuantizeTe(Tensor.zeros("f32", [1, 16]));
    assert.equal(r.globalSf.at(0), 1);
    assert.equal(r.sf.at(0, 0), 0);
  });
  await t.step("stochastic rounding is deterministic in the caller's bits and brackets RN", () => {
    const rng = new Prng(3);
    const v = new Float32Array(64).map(() => Math.fround(rng.normal()));
    const x = Tensor.from("f32", [1, 64], v);
    const bits = new Uint8Array(64).map(() => rng.int(256));
    const a = nvfp4QuantizeTe(x, { rbits: bits }), b = nvfp4QuantizeTe(x, { rbits: bits });
    assert.deepEqual(a.codes.data, b.codes.data);
    const lo = nvfp4QuantizeTe(x, { rbits: new Uint8Array(64) });
    const hi = nvfp4QuantizeTe(x, { rbits: new Uint8Array(64).fill(255) });
    const l = toFloat32(lo.codes), h = toFloat32(hi.codes), m = toFloat32(a.codes);
    for (let i = 0; i < 64; i++) assert.ok(Math.abs(l[i]) <= Math.abs(m[i]) && Math.abs(m[i]) <= Math.abs(h[i]));
  });
});

Deno.test("nvfp4QuantizeTorchao()", async (t) => {
  await t.step("numerics.md §6 vectors agree with TE", () => {
    const a = nvfp4QuantizeTorchao(block([10, 1, -2.5, 0.3, 4.1, -7, 0, 5.5]));
    assert.equal(a.sf.at(0, 1), 0x7e);
    assert.deepEqual([...(a.codes.data as Uint8Array).subarray(16, 24)], [7, 1, 0xb, 0, 4, 0xe, 0, 5]);
    const b = nvfp4QuantizeTorchao(block([0.01, -0.02, 0.004, 0]));
    assert.equal(b.sf.at(0, 1), 0x36);
    assert.deepEqual([...(b.codes.data as Uint8Array).subarray(16, 20)], [5, 0xf, 2, 0]);
  });
  await t.step("an all-zero block gets the clamped scale 0x08 (2^-6), unlike TE's 0x00", () => {
    assert.equal(nvfp4QuantizeTorchao(block([])).sf.at(0, 1), 0x08);
  });
  await t.step("single-level scaling clamps the block scale to [2^-6, 448]", () => {
    const r = nvfp4QuantizeTorchao(Tensor.from("f32", [1, 16], new Float32Array(16).fill(6)), {
      perTensorScale: "none",
    });
    assert.equal(r.sf.at(0, 0), 0x38); // 6/6 = 1
    assert.equal(r.codes.at(0, 0), 7);
  });
  await t.step("an all-zero tensor gives per_tensor_scale 0 and NaN block scales (0/0), unlike TE", () => {
    const r = nvfp4QuantizeTorchao(Tensor.zeros("f32", [1, 16]));
    assert.equal(r.globalSf.at(0), 0);
    assert.equal(r.sf.at(0, 0), 0x7f);
  });
  await t.step("rejects a last dimension not divisible by 16", () => {
    assert.throws(() => nvfp4QuantizeTorchao(Tensor.zeros("f32", [1, 8])), RangeError);
    assert.throws(() => nvfp4QuantizeTe(Tensor.zeros("f32", [1, 8])), RangeError);
  });
});
