// Arguments that once gave silent wrong answers (exit 0 with a wrong D) are refused, naming the argument.
import assert from "node:assert/strict";
import { GEMM_OPS } from "../../reference/registry.ts";
import { Tensor } from "../../reference/tensor/tensor.ts";

const ones = (dtype: "e4m3", shape: number[]) =>
  Tensor.from(dtype, shape, new Uint8Array(shape.reduce((x, y) => x * y)).fill(0x38));
const f32 = (shape: number[]) => Tensor.from("f32", shape, new Float32Array(shape.reduce((x, y) => x * y)).fill(1));

Deno.test("grouped and dense FP8 GEMM arguments", async (t) => {
  const G = 2, Mmax = 128, N = 128, K = 128;
  const masked = {
    a: ones("e4m3", [G, Mmax, K]),
    sfa: f32([G, Mmax, 1]),
    b: ones("e4m3", [G, N, K]),
    sfb: f32([G, 1, 1]),
    masked_m: Tensor.from("i32", [G], new Int32Array([64, 128])),
  };
  await t.step("a masked block_m of 0, a negative one or one no kernel uses is refused", () => {
    for (const block_m of [0, -128, 96]) {
      assert.throws(
        () => GEMM_OPS.m_grouped_fp8_gemm_nt_masked.run(masked, { expected_m: 64, block_m }, {}),
        new RegExp(`block_m must be 64, 128 or 256, got ${block_m}`),
      );
    }
    assert.doesNotThrow(() => GEMM_OPS.m_grouped_fp8_gemm_nt_masked.run(masked, { expected_m: 64, block_m: 64 }, {}));
  });
  await t.step("an sfb with G + 1 groups is refused by the masked and contiguous ops", () => {
    assert.throws(
      () => GEMM_OPS.m_grouped_fp8_gemm_nt_masked.run({ ...masked, sfb: f32([G + 1, 1, 1]) }, { expected_m: 64 }, {}),
      /sfb has 3 groups, b has 2/,
    );
    const contiguous = {
      a: ones("e4m3", [256, K]),
      sfa: f32([256, 1]),
      b: ones("e4m3", [G, N, K]),
      sfb: f32([G + 1, 1, 1]),
      grouped_layout: Tensor.from("i32", [256], new Int32Array(256).fill(0)),
    };
    assert.throws(() => GEMM_OPS.m_grouped_fp8_gemm_nt_contiguous.run(contiguous, {}, {}), /sfb has 3 groups, b has 2/);
  });
  await t.step("a model without scales (cublaslt, bf16) is refused for an op given scale factors", () => {
    const dense = { a: ones("e4m3", [8, K]), sfa: f32([8, 1]), b: ones("e4m3", [N, K]), sfb: f32([1, 1]) };
    for (const model of ["cublaslt", "bf16"]) {
      assert.throws(() => GEMM_OPS.fp8_gemm_nt.run(dense, {}, { model }), /applies no scale factors, so sfa and sfb/);
    }
  });
});
