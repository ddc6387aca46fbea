import assert from "node:assert/strict";
import { isSafetensorsDtype, SAFETENSORS_DTYPES, safetensorsDtypeOf } from "../../io/mod.ts";
import { type DType, DTYPES } from "../../reference/tensor/mod.ts";

Deno.test("safetensorsDtypeOf()", async (t) => {
  await t.step("maps every oracle dtype to a safetensors dtype and back", () => {
    for (const d of Object.keys(DTYPES) as DType[]) {
      const st = safetensorsDtypeOf(d);
      assert.equal(SAFETENSORS_DTYPES[st].dtype, d);
    }
  });
  await t.step("spells the issue's mapping", () => {
    assert.deepEqual(
      ["f32", "f16", "bf16", "e4m3", "e5m2", "ue8m0", "e2m1", "i32", "i64", "u8", "i8"].map((d) =>
        safetensorsDtypeOf(d as DType)
      ),
      ["F32", "F16", "BF16", "F8_E4M3", "F8_E5M2", "F8_E8M0", "F4", "I32", "I64", "U8", "I8"],
    );
  });
});

Deno.test("isSafetensorsDtype()", async (t) => {
  await t.step("rejects prototype names and lowercase spellings", () => {
    assert.equal(isSafetensorsDtype("F4"), true);
    assert.equal(isSafetensorsDtype("f32"), false);
    assert.equal(isSafetensorsDtype("toString"), false);
  });
});
