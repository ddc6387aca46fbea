import assert from "node:assert/strict";
import { bf16Rne } from "../../reference/fp32.ts";
import { Prng } from "../../reference/random/prng.ts";
import { Tensor } from "../../reference/tensor/mod.ts";
import {
  perTokenCastToFp4,
  QUANT_RECIPE_NAMES,
  QUANT_RECIPES,
  quantRecipe,
  unpackFp4,
} from "../../reference/quant/mod.ts";

Deno.test("QUANT_RECIPES", async (t) => {
  const rng = new Prng(1);
  const x = Tensor.from("bf16", [4, 256], new Uint16Array(1024).map(() => bf16Rne(rng.normal())));
  await t.step("has DeepGEMM's names and the MX / NVFP4 recipes", () => {
    for (
      const name of [
        "per_token_cast_to_fp8",
        "per_channel_cast_to_fp8",
        "per_block_cast_to_fp8",
        "per_token_cast_to_fp4",
        "mxfp8_e4m3",
        "mxfp8_e5m2",
        "mxfp4",
        "nvfp4_te",
        "nvfp4_torchao",
      ]
    ) {
      assert.ok(QUANT_RECIPE_NAMES.includes(name), name);
    }
  });
  await t.step("every recipe returns codes of the input's shape and scales", () => {
    const x2 = Tensor.from("bf16", [128, 256], new Uint16Array(128 * 256).map(() => bf16Rne(rng.normal())));
    for (const name of QUANT_RECIPE_NAMES) {
      const r = QUANT_RECIPES[name](x2, { useUe8m0: true });
      assert.deepEqual(r.codes.shape, [128, 256], name);
      assert.ok(r.sf.numel > 0, name);
    }
  });
  await t.step("per_token_cast_to_fp4 codes are DeepGEMM's packed bytes, unpacked", () => {
    const r = QUANT_RECIPES.per_token_cast_to_fp4(x, { useUe8m0: true, granK: 32 });
    assert.deepEqual(r.codes.data, unpackFp4(perTokenCastToFp4(x, { useUe8m0: true, granK: 32 }).q).data);
  });
  await t.step("maps scaleRule onto the MX recipes", () => {
    const a = QUANT_RECIPES.mxfp4(x, { scaleRule: "floor" }), b = QUANT_RECIPES.mxfp4(x, { scaleRule: "ceil" });
    assert.notDeepEqual(a.sf.data, b.sf.data);
  });
  await t.step("an unknown name is a RangeError listing the valid ones", () => {
    assert.throws(() => quantRecipe("fp6"), /mxfp4/);
  });
});
