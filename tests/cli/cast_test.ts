import assert from "node:assert/strict";
import { Tensor } from "../../reference/tensor/mod.ts";
import { readSafetensors, writeSafetensors } from "../../io/mod.ts";
import { castTensors } from "../../cli/cast.ts";
import { runCli, withTempDir } from "./_run.ts";

const input = () => ({
  x: Tensor.from("f32", [2, 2], new Float32Array([1, 464, 480, -0.75])),
  g: Tensor.from("i32", [2], new Int32Array([0, -1])),
});

Deno.test("castCommand", async (t) => {
  await t.step("casts to e4m3 with cuda_satfinite (480 saturates to 448) and keeps integer tensors", async () => {
    await withTempDir(async (dir) => {
      await writeSafetensors(`${dir}/in.safetensors`, input());
      const r = await runCli([
        "cast",
        "--to",
        "e4m3",
        "--profile",
        "cuda_satfinite",
        `${dir}/in.safetensors`,
        `${dir}/out.safetensors`,
      ]);
      assert.equal(r.code, 0, r.stderr);
      const f = await readSafetensors(`${dir}/out.safetensors`);
      assert.equal(f.tensors.get("x")!.dtype, "e4m3");
      assert.deepEqual([...f.tensors.get("x")!.data], [0x38, 0x7e, 0x7e, 0xb4]);
      assert.deepEqual([...f.tensors.get("g")!.data], [0, -1]);
      assert.equal(f.metadata.profile, "cuda_satfinite");
      assert.equal(f.metadata.cast_to, "e4m3");
    });
  });

  await t.step("casts 480 to the NaN code with torch_2_11 (no saturation, deepgemm-ops.md §1)", async () => {
    await withTempDir(async (dir) => {
      await writeSafetensors(`${dir}/in.safetensors`, input());
      const r = await runCli([
        "cast",
        "--to",
        "e4m3",
        "--profile",
        "torch_2_11",
        `${dir}/in.safetensors`,
        `${dir}/o.safetensors`,
      ]);
      assert.equal(r.code, 0, r.stderr);
      assert.deepEqual([...(await readSafetensors(`${dir}/o.safetensors`)).tensors.get("x")!.data], [
        0x38,
        0x7e,
        0x7f,
        0xb4,
      ]);
    });
  });

  await t.step("casts to e2m1 and back to f32 through the file's F4 packing", async () => {
    await withTempDir(async (dir) => {
      await writeSafetensors(`${dir}/in.safetensors`, {
        x: Tensor.from("f32", [4], new Float32Array([0.75, -0.1, 5, 5.5])),
      });
      assert.equal(
        (await runCli([
          "cast",
          "--to",
          "e2m1",
          "--profile",
          "deepgemm_fp4",
          `${dir}/in.safetensors`,
          `${dir}/q.safetensors`,
        ])).code,
        0,
      );
      const bytes = await Deno.readFile(`${dir}/q.safetensors`);
      assert.deepEqual([...bytes.subarray(bytes.length - 2)], [0x01, 0x76]); // codes 1, 0, 6, 7, low nibble first
      assert.equal((await runCli(["cast", "--to", "f32", `${dir}/q.safetensors`, `${dir}/back.safetensors`])).code, 0);
      assert.deepEqual([...(await readSafetensors(`${dir}/back.safetensors`)).tensors.get("x")!.data], [0.5, 0, 4, 6]);
    });
  });

  await t.step("exits 2 on bad arguments and unusable input", async () => {
    await withTempDir(async (dir) => {
      const inp = `${dir}/in.safetensors`, out = `${dir}/out.safetensors`;
      await writeSafetensors(inp, input());
      const bad: [string[], RegExp][] = [
        [["cast", "--to", "e4m3", inp, out], /--profile is required/],
        [["cast", "--to", "e3m4", "--profile", "ml_dtypes", inp, out], /--to "e3m4" is not one of/],
        [["cast", "--to", "e4m3", "--profile", "nope", inp, out], /valid profiles are/],
        [["cast", "--to", "e2m1", "--profile", "cuda_satfinite", inp, out], /does not define format "e2m1"/],
        [["cast", "--profile", "ml_dtypes", inp, out], /--to is required/],
        [["cast", "--to", "e4m3", "--profile", "ml_dtypes", inp], /needs 2 file arguments/],
        [["cast", "--to", "e4m3", "--profile", "ml_dtypes", "--bogus", inp, out], /Unknown option '--bogus'/],
        [["cast", "--to", "e4m3", "--profile", "ml_dtypes", `${dir}/missing.safetensors`, out], /cannot access a file/],
      ];
      for (const [args, msg] of bad) {
        const r = await runCli(args);
        assert.equal(r.code, 2, args.join(" "));
        assert.match(r.stderr, msg);
      }
      await assert.rejects(() => Deno.stat(out), Deno.errors.NotFound);
    });
  });

  await t.step("rejects an odd element count for e2m1", () => {
    assert.throws(
      () => castTensors(new Map([["x", Tensor.zeros("f32", [3])]]), "e2m1", "deepgemm_fp4"),
      /count must be even/,
    );
  });

  await t.step("prints its help with exit 0", async () => {
    const r = await runCli(["cast", "--help"]);
    assert.equal(r.code, 0);
    assert.match(r.stdout, /Usage: oracle cast --to/);
  });
});
