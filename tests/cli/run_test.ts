import assert from "node:assert/strict";
import { readSafetensors, writeSafetensors } from "../../io/mod.ts";
import { FIXTURES_DIR, loadFixture } from "../../fixtures/mod.ts";
import { Tensor } from "../../reference/tensor/mod.ts";
import { parseScalarText } from "../../cli/run.ts";
import { runCli, withTempDir } from "./_run.ts";

function bytesOf(t: Tensor): number[] {
  const c = t.contiguous();
  return [...new Uint8Array(c.data.buffer, c.data.byteOffset, c.data.byteLength)];
}

Deno.test("runCommand", async (t) => {
  await t.step("runs fp8_gemm_nt on a tiny hand-made file (A = 1, B = 0.5, K = 32 → D = 16 = 0x4180)", async () => {
    await withTempDir(async (dir) => {
      await writeSafetensors(`${dir}/in.safetensors`, {
        a: Tensor.from("e4m3", [1, 32], new Uint8Array(32).fill(0x38)),
        b: Tensor.from("e4m3", [8, 32], new Uint8Array(256).fill(0x30)),
        sfa: Tensor.from("f32", [1, 1], new Float32Array([1])),
        sfb: Tensor.from("f32", [1, 1], new Float32Array([1])),
      });
      const r = await runCli([
        "run",
        "fp8_gemm_nt",
        "--model",
        "sm90_1d2d",
        `${dir}/in.safetensors`,
        `${dir}/out.safetensors`,
      ]);
      assert.equal(r.code, 0, r.stderr);
      const f = await readSafetensors(`${dir}/out.safetensors`);
      assert.equal(f.fileDtypes.get("d"), "BF16");
      assert.deepEqual([...f.tensors.get("d")!.data], new Array(8).fill(0x4180));
      assert.equal(f.metadata.op, "fp8_gemm_nt");
      assert.equal(f.metadata.model, "sm90_1d2d");
    });
  });

  await t.step(
    "reproduces a stored fixture's outputs from the fixture file itself (scalars from __metadata__)",
    async () => {
      await withTempDir(async (dir) => {
        for (
          const [id, model] of [["fp8_gemm_nt_m8_n64_k256_1d1d_c", "sm90_1d1d"], [
            "fp8_gemm_tn_m8_n128_k256_ue8m0",
            "sm100_1d1d",
          ]]
        ) {
          const c = await loadFixture(id);
          const path = `${FIXTURES_DIR}/${c.op}/${id}.safetensors`;
          const r = await runCli(["run", c.op, "--model", model, path, `${dir}/out.safetensors`]);
          assert.equal(r.code, 0, r.stderr);
          const d = (await readSafetensors(`${dir}/out.safetensors`)).tensors.get("d")!;
          assert.deepEqual(bytesOf(d), bytesOf(c.outputs[model].d), id);
        }
      });
    },
  );

  await t.step("takes scalars from flags over metadata and model overrides from flags", async () => {
    await withTempDir(async (dir) => {
      const c = await loadFixture("fp8_gemm_nt_m16_n128_k256_ue8m0");
      const path = `${FIXTURES_DIR}/${c.op}/${c.id}.safetensors`;
      const r = await runCli([
        "run",
        "fp8_gemm_nt",
        "--arch",
        "sm100",
        "--out-dtype",
        "f32",
        path,
        `${dir}/o.safetensors`,
      ]);
      assert.equal(r.code, 0, r.stderr);
      const f = await readSafetensors(`${dir}/o.safetensors`);
      assert.equal(f.tensors.get("d")!.dtype, "f32");
      assert.equal(JSON.parse(f.metadata.scalars).arch, "sm100");
    });
  });

  await t.step("exits 2 on unknown ops, bad flags, and inputs the reference rejects", async () => {
    await withTempDir(async (dir) => {
      const c = await loadFixture("fp8_gemm_nt_m16_n128_k256_fp32");
      const path = `${FIXTURES_DIR}/${c.op}/${c.id}.safetensors`;
      await writeSafetensors(`${dir}/partial.safetensors`, { a: c.inputs.a });
      const cases: [string[], RegExp][] = [
        [["run", "no_such_op", path, `${dir}/o`], /unknown op "no_such_op"/],
        [["run"], /Usage: oracle run/],
        [["run", "fp8_gemm_nt", "--promote", "64", path, `${dir}/o`], /--promote must be 128 or none/],
        [["run", "fp8_gemm_nt", "--split-k", "0", path, `${dir}/o`], /--split-k must be at least 1/],
        [["run", "fp8_gemm_nt", "--out-dtype", "f16", path, `${dir}/o`], /--out-dtype must be bf16 or f32/],
        [["run", "fp8_gemm_nt", "--model", "nope", path, `${dir}/o`], /Unknown kernel model "nope"/],
        [["run", "fp8_gemm_nt", "--expected-m", "4", path, `${dir}/o`], /Unknown option '--expected-m'/],
        [["run", "fp8_gemm_nt", `${dir}/partial.safetensors`, `${dir}/o`], /missing tensor argument "b"/],
        [["run", "fp8_gemm_nt", path], /needs at least 2 file arguments \(IN\.\.\. OUT\), got 1/],
        // The non-GEMM references (MQA, HC, Mega MoE) read only --model and --tensor-core: the others are refused.
        [["run", "fp8_mqa_logits", "--split-k", "4", path, `${dir}/o`], /--split-k does not apply to fp8_mqa_logits/],
        [["run", "tf32_hc_prenorm_gemm", "--promote", "none", path, `${dir}/o`], /--promote does not apply/],
        [["run", "bf16_mega_moe", "--out-dtype", "f32", path, `${dir}/o`], /--out-dtype does not apply/],
      ];
      for (const [args, msg] of cases) {
        const r = await runCli(args);
        assert.equal(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
        assert.match(r.stderr + r.stdout, msg);
      }
    });
  });

  await t.step(
    "reads the op's tensors from several files; a tensor or scalar two files give differently is refused",
    async () => {
      await withTempDir(async (dir) => {
        const c = await loadFixture("fp8_gemm_nt_m16_n128_k256_fp32");
        const { a, sfa, b, sfb } = c.inputs;
        await writeSafetensors(`${dir}/a.safetensors`, { a, sfa }, { scalars: '{"arch": "sm90"}' });
        await writeSafetensors(`${dir}/b.safetensors`, { b, sfb }, { arch: "sm90" });
        const r = await runCli(["run", "fp8_gemm_nt", `${dir}/a.safetensors`, `${dir}/b.safetensors`, `${dir}/o.st`]);
        assert.equal(r.code, 0, r.stderr);
        const f = await readSafetensors(`${dir}/o.st`);
        assert.deepEqual(bytesOf(f.tensors.get("d")!), bytesOf(c.outputs.sm90_1d2d.d));
        assert.equal(f.metadata.source, `${dir}/a.safetensors, ${dir}/b.safetensors`);
        await writeSafetensors(`${dir}/b2.safetensors`, { b, sfb, a }, { arch: "sm100" });
        const both = await runCli(["run", "fp8_gemm_nt", `${dir}/a.safetensors`, `${dir}/b2.safetensors`, `${dir}/o`]);
        assert.equal(both.code, 2);
        assert.match(both.stderr, /tensor "a" is in both .*a\.safetensors and .*b2\.safetensors/);
        await writeSafetensors(`${dir}/b3.safetensors`, { b, sfb }, { arch: "sm100" });
        const arch = await runCli(["run", "fp8_gemm_nt", `${dir}/a.safetensors`, `${dir}/b3.safetensors`, `${dir}/o`]);
        assert.equal(arch.code, 2);
        assert.match(arch.stderr, /scalar arch is "sm90" in .*a\.safetensors but "sm100" in .*b3\.safetensors/);
      });
    },
  );
});

Deno.test("parseScalarText()", async (t) => {
  await t.step("reads JSON when it parses and keeps other text as a string", () => {
    assert.equal(parseScalarText("true"), true);
    assert.deepEqual(parseScalarText("[1, 1, 128]"), [1, 1, 128]);
    assert.equal(parseScalarText("sm100"), "sm100");
  });
});

Deno.test("run: a scalar that is an object with a toString key gets the real complaint, naming the file", async () => {
  const input = `${FIXTURES_DIR}/fp8_gemm_nt/fp8_gemm_nt_m16_n128_k256_fp32.safetensors`;
  const r = await runCli(["run", "fp8_gemm_nt", "--arch", '{"toString":1}', input, "/dev/null"]);
  assert.equal(r.code, 2);
  assert.match(
    r.stderr,
    /fp8_gemm_nt_m16_n128_k256_fp32\.safetensors: .*"arch" must be "sm90" or "sm100", got \{"toString":1\}/,
  );
});

Deno.test("run: the FP8 GEMMs under sm90_1d2d run on the native backend with the TypeScript reference's bits", async () => {
  await withTempDir(async (dir) => {
    const input = `${FIXTURES_DIR}/m_grouped_fp8_gemm_nt_masked/m_grouped_fp8_gemm_nt_masked_g3_ue8m0.safetensors`;
    const op = "m_grouped_fp8_gemm_nt_masked";
    const tsRun = new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", new URL("../../cli.ts", import.meta.url).pathname, "run", op, input, `${dir}/ts.safetensors`],
      env: { GEMM_ORACLE_NATIVE_REFERENCE: "0" },
    }).outputSync();
    assert.equal(tsRun.code, 0, new TextDecoder().decode(tsRun.stderr));
    const r = await runCli(["run", op, input, `${dir}/native.safetensors`]);
    assert.equal(r.code, 0, r.stderr);
    const ts = await readSafetensors(`${dir}/ts.safetensors`),
      native = await readSafetensors(`${dir}/native.safetensors`);
    assert.equal(ts.metadata.engine, "TypeScript reference");
    assert.equal(native.metadata.engine, "native CPU backend", "the native path ran (not the fallback)");
    assert.deepEqual(bytesOf(native.tensors.get("d")!), bytesOf(ts.tensors.get("d")!));
  });
});
