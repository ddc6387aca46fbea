import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { fp8Dense } from "../../reference/cases/gemm_builders.ts";
import { writeSafetensors } from "../../io/mod.ts";
import { GEMM_OPS } from "../../reference/registry.ts";
import { Prng } from "../../reference/random/prng.ts";
import { Tensor } from "../../reference/tensor/tensor.ts";
import { ServeSession } from "../../cli/serve.ts";
import { PYTHON, pythonMissing } from "../_python.ts";
import { runCli, withTempDir } from "./_run.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const CUBLASLT = `${ROOT}fixtures/cublaslt_gemm_nt/cublaslt_gemm_nt_m8_n64_k256_e4m3.safetensors`;

/** A 256×256×512 fp8_gemm_nt input file and an output file of its sm90_1d2d result with one faulty 8×128 block. */
async function faultyFiles(dir: string, letters = "nt"): Promise<{ input: string; output: string; clean: string }> {
  const c = fp8Dense(256, 256, 512, letters)(new Prng(11));
  const d = GEMM_OPS[`fp8_gemm_${letters}`].run(c.inputs, c.scalars, { model: "sm90_1d2d" }).d;
  const input = `${dir}/in.safetensors`, output = `${dir}/out.safetensors`, clean = `${dir}/clean.safetensors`;
  await writeSafetensors(input, c.inputs, { scalars: JSON.stringify(c.scalars) });
  await writeSafetensors(clean, { d }, {});
  const bad = Tensor.from("bf16", d.shape, (d.data as Uint16Array).slice());
  for (let i = 40; i < 48; i++) for (let j = 128; j < 256; j++) (bad.data as Uint16Array)[i * 256 + j] ^= 1;
  await writeSafetensors(output, { d: bad }, {});
  return { input, output, clean };
}

Deno.test("oracle identify", async (t) => {
  await t.step("is listed by oracle --help", async () => {
    assert.match((await runCli(["--help"])).stdout, /^ {2}identify +name the rounding behaviour/m);
  });

  await t.step("names the kernel behaviour of a golden fixture's stored output (--actual-prefix), exit 0", async () => {
    const r = await runCli(["identify", "cublaslt_gemm_nt", CUBLASLT, CUBLASLT, "--actual-prefix", "cublaslt/"]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(
      r.stdout,
      /^bit for bit: cublaslt\n {2}= cuBLASLt FP8 \(torch\._scaled_mm\), tensor-wise scales, fast accumulation off/,
    );
    assert.match(r.stdout, /\nsearched \d+ variants of cublaslt_gemm_nt for d bf16 \[8, 64\]/);
  });

  await t.step("takes --actual-prefix with or without the slash (issue 27)", async () => {
    const slash = await runCli(["identify", "cublaslt_gemm_nt", CUBLASLT, CUBLASLT, "--actual-prefix", "cublaslt/"]);
    const bare = await runCli(["identify", "cublaslt_gemm_nt", CUBLASLT, CUBLASLT, "--actual-prefix", "cublaslt"]);
    assert.equal(bare.code, 0, bare.stderr);
    assert.equal(bare.stdout.split("\n")[0], slash.stdout.split("\n")[0]);
  });

  await t.step("reports the nearest variants and where they differ when none matches, exit 1 (--json)", async () => {
    await withTempDir(async (dir) => {
      const { input, output } = await faultyFiles(dir);
      const r = await runCli(["identify", "fp8_gemm_nt", input, output, "--top", "2", "--json", `${dir}/id.json`]);
      assert.equal(r.code, 1, r.stderr);
      assert.match(
        r.stdout,
        /^no variant reproduces the output bit for bit; the nearest \(whole output\):\n {2}1\. sm90_1d2d: 1024\/65536 mismatches/,
      );
      assert.match(
        r.stdout,
        /d: 1024\/65536 mismatches in 1 of 4 tiles \(128×128\); one tile: rows 40–47, cols 128–255/,
      );
      assert.match(r.stdout, /tile \[0, 1\] rows 40–47, cols 128–255: 1024\/16384, worst \[40, 128\]: 1 ULP/);
      assert.match(r.stdout, /\n {2}2\. /);
      const json = JSON.parse(await Deno.readTextFile(`${dir}/id.json`));
      assert.equal(json.nearest.length, 2);
      assert.deepEqual(json.nearest[0].maps.d.grid, [0, 1024, 0, 0]);
      assert.equal(json.nearest[0].maps.d.classification.kind, "one_tile");
      assert.deepEqual(json.matches, []);
    });
  });

  await t.step("reads MN-major operands from a file (fp8_gemm_tn) and names cuBLASLt's split-K 2", async () => {
    await withTempDir(async (dir) => {
      const c = fp8Dense(64, 128, 256, "tn")(new Prng(11));
      const d = GEMM_OPS.fp8_gemm_tn.run(c.inputs, c.scalars, { model: "sm90_1d2d", splitK: 2 }).d;
      await writeSafetensors(`${dir}/in.safetensors`, c.inputs, {});
      await writeSafetensors(`${dir}/out.safetensors`, { d }, {});
      const r = await runCli(["identify", "fp8_gemm_tn", `${dir}/in.safetensors`, `${dir}/out.safetensors`]);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /^bit for bit: sm90_1d2d --split-k 2\n {2}= cuBLASLt block-scaled FP8 .* with split-K 2/);
    });
  });

  await t.step("refuses unusable input with exit 2, naming the file and the fault", async () => {
    await withTempDir(async (dir) => {
      const { input, clean } = await faultyFiles(dir);
      const cases: [string[], RegExp][] = [
        [["identify", "fp8_gemm_xx", input, clean], /unknown op "fp8_gemm_xx"/],
        [["identify", "fp8_gemm_nt", `${dir}/none.safetensors`, clean], /none\.safetensors/],
        [
          ["identify", "fp8_gemm_nt", input, clean, "--actual-prefix", "x/"],
          /clean\.safetensors: holds none of fp8_gemm_nt's outputs \(d\) under the prefix "x\/"/,
        ],
        [["identify", "fp8_gemm_nt", input, clean, "--top", "0"], /--top must be at least 1/],
        [["identify", "fp8_gemm_nt", input], /needs 2 file arguments \(INPUT ACTUAL\)/],
      ];
      await writeSafetensors(`${dir}/narrow.safetensors`, { d: Tensor.zeros("bf16", [256, 128]) }, {});
      cases.push([
        ["identify", "fp8_gemm_nt", input, `${dir}/narrow.safetensors`],
        /actual "d" has shape \[256, 128\]; fp8_gemm_nt on .*in\.safetensors writes \[256, 256\]/,
      ]);
      for (const [args, message] of cases) {
        const r = await runCli(args);
        assert.equal(r.code, 2, `${args.join(" ")}: ${r.stdout}${r.stderr}`);
        assert.match(r.stderr, message);
      }
    });
  });
});

Deno.test("oracle compare prints where the mismatches are (the tile map), and --json holds it", async () => {
  await withTempDir(async (dir) => {
    const { output, clean } = await faultyFiles(dir);
    const r = await runCli(["compare", clean, output, "--json", `${dir}/c.json`]);
    assert.equal(r.code, 1);
    assert.match(
      r.stdout,
      /\n {2}where: 1024\/65536 mismatches in 1 of 4 tiles \(128×128\); one tile: rows 40–47, cols 128–255 \(tile \[0, 1\] of 2×2\)/,
    );
    assert.match(r.stdout, /\n {4}tile \[0, 1\] rows 40–47, cols 128–255: 1024\/16384, worst \[40, 128\]/);
    const json = JSON.parse(await Deno.readTextFile(`${dir}/c.json`));
    assert.equal(json.tensors[0].map.classification.kind, "one_tile");
    const quiet = await runCli(["compare", clean, output, "--tiles", "0"]);
    assert.doesNotMatch(quiet.stdout, /tile \[0, 1\] rows/);
    assert.match(quiet.stdout, /where: .*one tile/);
    const same = await runCli(["compare", clean, clean]);
    assert.doesNotMatch(same.stdout, /where:/);
  });
});

Deno.test("oracle serve answers identify requests", async () => {
  await withTempDir(async (dir) => {
    const session = new ServeSession();
    const ok = await session.handle({
      id: 1,
      cmd: "identify",
      op: "cublaslt_gemm_nt",
      inputs: CUBLASLT,
      actual: CUBLASLT,
    });
    assert.equal(ok.status, "error"); // the fixture names its outputs <model>/d
    assert.match(ok.message!, /include none of cublaslt_gemm_nt's outputs \(d\)/);
    const { input, output } = await faultyFiles(dir);
    const found = await session.handle({
      id: 2,
      cmd: "identify",
      op: "fp8_gemm_nt",
      inputs: input,
      actual: output,
      top: 1,
    });
    assert.equal(found.status, "ok", found.message);
    assert.match(found.verdict as string, /^no variant reproduces it; nearest: sm90_1d2d with 1024\/65536/);
    assert.equal((found.nearest as unknown[]).length, 1);
    const bad = await session.handle({
      id: 3,
      cmd: "identify",
      op: "fp8_gemm_nt",
      inputs: input,
      actual: output,
      top: 0,
    });
    assert.match(bad.message!, /"top" must be a positive integer/);
  });
});

const noNumpy = pythonMissing(["numpy"]);

Deno.test({
  name: `a float64 numpy kernel is named exact, and compare against sm90_1d2d says every tile differs${
    noNumpy ? ` (ignored: ${noNumpy})` : ""
  }`,
  ignore: noNumpy !== undefined,
  async fn() {
    await withTempDir(async (dir) => {
      const c = fp8Dense(128, 256, 512)(new Prng(5));
      await writeSafetensors(`${dir}/in.safetensors`, c.inputs, {});
      const py = await new Deno.Command(PYTHON, {
        args: [`${ROOT}tests/identify/numpy_adapter.py`, "--files", `${dir}/in.safetensors`, `${dir}/np.safetensors`],
        stderr: "piped",
      }).output();
      assert.ok(py.success, new TextDecoder().decode(py.stderr));
      const r = await runCli(["identify", "fp8_gemm_nt", `${dir}/in.safetensors`, `${dir}/np.safetensors`]);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /^bit for bit: exact\n {2}= exact: the true value rounded once/);
      const ref = await runCli(["run", "fp8_gemm_nt", `${dir}/in.safetensors`, `${dir}/ref.safetensors`]);
      assert.equal(ref.code, 0, ref.stderr);
      const cmp = await runCli(["compare", `${dir}/ref.safetensors`, `${dir}/np.safetensors`]);
      assert.equal(cmp.code, 1);
      assert.match(cmp.stdout, /where: \d+\/32768 mismatches in 2 of 2 tiles \(128×128\); all tiles/);
    });
  },
});
