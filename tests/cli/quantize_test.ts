import assert from "node:assert/strict";
import { Tensor } from "../../reference/tensor/mod.ts";
import { readSafetensors, writeSafetensors } from "../../io/mod.ts";
import { runCli, withTempDir } from "./_run.ts";

Deno.test("quantizeCommand", async (t) => {
  await t.step("runs the MX and NVFP4 recipes (E8M0 scales per 32, NVFP4 global scale)", async () => {
    await withTempDir(async (dir) => {
      await writeSafetensors(`${dir}/x.safetensors`, { w: Tensor.from("f32", [1, 32], new Float32Array(32).fill(1)) });
      const mx = await runCli(["quantize", "--recipe", "mxfp8_e4m3", `${dir}/x.safetensors`, `${dir}/m.safetensors`]);
      assert.equal(mx.code, 0, mx.stderr);
      const m = await readSafetensors(`${dir}/m.safetensors`);
      assert.equal(m.fileDtypes.get("w_sf"), "F8_E8M0");
      assert.equal(m.metadata.scale_rule, "floor");
      const nv = await runCli([
        "quantize",
        "--recipe",
        "nvfp4_torchao",
        `${dir}/x.safetensors`,
        `${dir}/n.safetensors`,
      ]);
      assert.equal(nv.code, 0, nv.stderr);
      const n = await readSafetensors(`${dir}/n.safetensors`);
      assert.deepEqual([...n.tensors.keys()].sort(), ["w", "w_global_sf", "w_sf"]);
      assert.equal(n.fileDtypes.get("w"), "F4");
    });
  });

  await t.step(
    "writes codes as <name> and fp32 scales as <name>_sf (per_token_cast_to_fp8, cpu semantics)",
    async () => {
      await withTempDir(async (dir) => {
        await writeSafetensors(`${dir}/x.safetensors`, {
          a: Tensor.from("f32", [1, 4], new Float32Array([448, -224, 1, 0])),
          grouped_layout: Tensor.from("i32", [1], new Int32Array([0])),
        });
        const r = await runCli([
          "quantize",
          "--recipe",
          "per_token_cast_to_fp8",
          "--semantics",
          "cpu",
          `${dir}/x.safetensors`,
          `${dir}/q.safetensors`,
        ]);
        assert.equal(r.code, 0, r.stderr);
        assert.match(r.stderr, /skipping integer tensor "grouped_layout"/);
        const f = await readSafetensors(`${dir}/q.safetensors`);
        assert.deepEqual([...f.tensors.keys()].sort(), ["a", "a_sf"]);
        assert.equal(f.fileDtypes.get("a"), "F8_E4M3");
        assert.deepEqual([...f.tensors.get("a")!.data], [0x7e, 0xf6, 0x38, 0x00]);
        assert.deepEqual([...f.tensors.get("a_sf")!.data], [1]);
        assert.equal(f.metadata.recipe, "per_token_cast_to_fp8");
        assert.equal(f.metadata.semantics, "cpu");
      });
    },
  );

  await t.step("writes FP4 codes as F4 and packed UE8M0 scales as I32 listed in __metadata__", async () => {
    await withTempDir(async (dir) => {
      await writeSafetensors(`${dir}/x.safetensors`, { kv: Tensor.zeros("bf16", [1, 64]) });
      const r = await runCli([
        "quantize",
        "--recipe=per_token_cast_to_fp4",
        "--gran-k",
        "32",
        "--ue8m0",
        "--packed-ue8m0",
        `${dir}/x.safetensors`,
        `${dir}/q.safetensors`,
      ]);
      assert.equal(r.code, 0, r.stderr);
      const f = await readSafetensors(`${dir}/q.safetensors`);
      assert.equal(f.fileDtypes.get("kv"), "F4");
      assert.deepEqual(f.tensors.get("kv")!.shape, [1, 64]);
      assert.equal(f.metadata.f4_nibble_order, "low_first");
      assert.equal(f.fileDtypes.get("kv_sf"), "I32");
      // all-zero groups: sf = 2^-15 (byte 0x70), padded with 1.0 (0x7f) to four bytes (deepgemm-ops.md §2.8)
      assert.deepEqual([...f.tensors.get("kv_sf")!.data], [0x7f7f7070]);
      assert.equal(f.metadata.packed_ue8m0, '["kv_sf"]');
    });
  });

  await t.step("exits 2 on bad arguments and inputs the quantizer rejects", async () => {
    await withTempDir(async (dir) => {
      const inp = `${dir}/x.safetensors`, out = `${dir}/q.safetensors`;
      await writeSafetensors(inp, { x: Tensor.zeros("bf16", [3, 5]) });
      await writeSafetensors(`${dir}/ints.safetensors`, { i: Tensor.zeros("i32", [2]) });
      const cases: [string[], RegExp][] = [
        [["quantize", inp, out], /--recipe is required/],
        [["quantize", "--recipe", "nope", inp, out], /--recipe "nope" is not one of/],
        [["quantize", "--recipe", "per_token_cast_to_fp8", "--gran-k", "0", inp, out], /--gran-k must be positive/],
        [["quantize", "--recipe", "per_token_cast_to_fp8", "--gran-k", "1.5", inp, out], /non-negative integer/],
        [["quantize", "--recipe", "per_token_cast_to_fp8", "--packed-ue8m0", inp, out], /--packed-ue8m0 needs --ue8m0/],
        [["quantize", "--recipe", "per_token_cast_to_fp8", "--semantics", "tpu", inp, out], /--semantics "tpu"/],
        [["quantize", "--recipe", "per_token_cast_to_fp4", inp, out], /tensor "x": .*odd/],
        [["quantize", "--recipe", "per_channel_cast_to_fp8", inp, out], /tensor "x": .*not a multiple of granK/],
        [["quantize", "--recipe", "per_token_cast_to_fp8", `${dir}/ints.safetensors`, out], /no floating-point tensor/],
        [["quantize", "--recipe", "per_token_cast_to_fp8", inp], /needs 2 file arguments/],
        [["quantize", "--recipe", "mxfp4", "--scale-rule", "up", inp, out], /--scale-rule "up"/],
        // A flag the recipe does not read is refused, never silently ignored.
        [["quantize", "--recipe", "mxfp4", "--gran-k", "64", inp, out], /--gran-k does not apply to mxfp4/],
        [["quantize", "--recipe", "mxfp8_e4m3", "--ue8m0", inp, out], /--ue8m0 does not apply to mxfp8_e4m3/],
        [
          ["quantize", "--recipe", "per_block_cast_to_fp8", "--ue8m0", "--packed-ue8m0", inp, out],
          /--packed-ue8m0 does not apply to per_block_cast_to_fp8/,
        ],
        [["quantize", "--recipe", "per_token_cast_to_fp8", "--scale-rule", "ceil", inp, out], /--scale-rule does not/],
        [
          ["quantize", "--recipe", "nvfp4_te", "--semantics", "cpu", inp, out],
          /--semantics does not apply to nvfp4_te/,
        ],
      ];
      for (const [args, msg] of cases) {
        const r = await runCli(args);
        assert.equal(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
        assert.match(r.stderr, msg);
      }
    });
  });
});
