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
    "writes codes as a and fp32 scales as sfa, DeepGEMM's names (per_token_cast_to_fp8, cpu semantics)",
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
        assert.deepEqual([...f.tensors.keys()].sort(), ["a", "sfa"]);
        assert.equal(f.fileDtypes.get("a"), "F8_E4M3");
        assert.deepEqual([...f.tensors.get("a")!.data], [0x7e, 0xf6, 0x38, 0x00]);
        assert.deepEqual([...f.tensors.get("sfa")!.data], [1]);
        assert.equal(f.metadata.quant_recipe, "per_token_cast_to_fp8");
        // "recipe" is a scalar of the FP8 GEMMs: `oracle run` would read the quantizer's name as its value.
        assert.equal(f.metadata.recipe, undefined);
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

Deno.test("quantize: the output is what oracle run reads (issue 27)", async (t) => {
  // A BF16 GEMM's inputs: a [8, 96], b [64, 96] (the quantize --help example's file).
  const bf16 = "fixtures/bf16_gemm_nt/bf16_gemm_nt_m8_n64_k96.safetensors";

  await t.step("names the scales sfa / sfb for a / b and <name>_sf for the others", async () => {
    await withTempDir(async (dir) => {
      await writeSafetensors(`${dir}/x.safetensors`, {
        a: Tensor.zeros("bf16", [2, 128]),
        b: Tensor.zeros("bf16", [2, 128]),
        q: Tensor.zeros("bf16", [2, 128]),
      });
      const r = await runCli(["quantize", "--recipe", "per_token_cast_to_fp8", `${dir}/x.safetensors`, `${dir}/q.st`]);
      assert.equal(r.code, 0, r.stderr);
      const f = await readSafetensors(`${dir}/q.st`);
      assert.deepEqual([...f.tensors.keys()].sort(), ["a", "b", "q", "q_sf", "sfa", "sfb"]);
    });
  });

  await t.step("A per token and B per block, quantized apart, run as fp8_gemm_nt without a rename", async () => {
    await withTempDir(async (dir) => {
      for (const [name, recipe] of [["a", "per_token_cast_to_fp8"], ["b", "per_block_cast_to_fp8"]]) {
        const r = await runCli(["quantize", "--recipe", recipe, "--tensor", name, bf16, `${dir}/${name}.safetensors`]);
        assert.equal(r.code, 0, r.stderr);
        const f = await readSafetensors(`${dir}/${name}.safetensors`);
        assert.deepEqual([...f.tensors.keys()].sort(), [name, `sf${name}`]);
      }
      const run = await runCli([
        "run",
        "fp8_gemm_nt",
        `${dir}/a.safetensors`,
        `${dir}/b.safetensors`,
        `${dir}/d.safetensors`,
      ]);
      assert.equal(run.code, 0, run.stderr);
      // The same bits as the tensors put in one file by hand.
      const a = await readSafetensors(`${dir}/a.safetensors`), b = await readSafetensors(`${dir}/b.safetensors`);
      await writeSafetensors(`${dir}/ab.safetensors`, {
        ...Object.fromEntries(a.tensors),
        ...Object.fromEntries(b.tensors),
      });
      const one = await runCli(["run", "fp8_gemm_nt", `${dir}/ab.safetensors`, `${dir}/d1.safetensors`]);
      assert.equal(one.code, 0, one.stderr);
      const d = (await readSafetensors(`${dir}/d.safetensors`)).tensors.get("d")!;
      assert.deepEqual(d.shape, [8, 64]);
      assert.deepEqual([...d.data], [...(await readSafetensors(`${dir}/d1.safetensors`)).tensors.get("d")!.data]);
    });
  });

  await t.step("--as writes the one tensor under DeepGEMM's name", async () => {
    await withTempDir(async (dir) => {
      await writeSafetensors(`${dir}/w.safetensors`, {
        "layers.0.weight": Tensor.zeros("bf16", [128, 128]),
        index: Tensor.zeros("i32", [4]),
      });
      const args = ["--recipe", "per_block_cast_to_fp8", "--as", "b", `${dir}/w.safetensors`, `${dir}/b.st`];
      const r = await runCli(["quantize", ...args]);
      assert.equal(r.code, 0, r.stderr);
      const f = await readSafetensors(`${dir}/b.st`);
      assert.deepEqual([...f.tensors.keys()].sort(), ["b", "sfb"]);
      assert.deepEqual(f.tensors.get("sfb")!.shape, [1, 1]);
    });
  });

  await t.step("refuses --as over several tensors, an unknown --tensor and an integer one", async () => {
    await withTempDir(async (dir) => {
      const inp = `${dir}/x.safetensors`, out = `${dir}/q.safetensors`;
      await writeSafetensors(inp, {
        x: Tensor.zeros("bf16", [1, 128]),
        y: Tensor.zeros("bf16", [1, 128]),
        y_sf: Tensor.zeros("f32", [1, 1]),
        i: Tensor.zeros("i32", [2]),
      });
      const q = ["quantize", "--recipe", "per_token_cast_to_fp8"];
      const cases: [string[], RegExp][] = [
        [
          [...q, "--as", "a", inp, out],
          /--as a renames one tensor, but 3 of .* would be quantized \(.*\): name one with --tensor/,
        ],
        [[...q, "--tensor", "z", inp, out], /has no tensor "z" \(--tensor\)/],
        [[...q, "--tensor", "i", inp, out], /tensor "i" \(--tensor\) is i32/],
        [[...q, "--tensor", "x", "--as", "", inp, out], /--as needs a tensor name/],
        [[...q, inp, out], /output name "y_sf" collides with a tensor quantized too/],
      ];
      for (const [args, msg] of cases) {
        const r = await runCli(args);
        assert.equal(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
        assert.match(r.stderr, msg);
      }
      const two = await runCli([...q, "--tensor", "x", "--tensor", "y", inp, out]);
      assert.equal(two.code, 0, two.stderr);
      assert.deepEqual([...(await readSafetensors(out)).tensors.keys()].sort(), ["x", "x_sf", "y", "y_sf"]);
    });
  });
});
