// go_quantize through the FFI wrapper and verify's quantizer rows, on a host library (quant_host_backend.cpp) that
// runs the CUDA backend's own quantizer code (argument rules, group body, arithmetic) on the host: every stored
// quantizer fixture bit for bit under each of its models, f16 inputs, the wrapper's argument checks and the library's
// refusals; and the argument checks of the cuBLASLt and paged-metadata wrappers (stub entries in the host library).
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { backendOp } from "../../cli/verify/backend_ops.ts";
import { inProcessExecutor } from "../../cli/verify/executors.ts";
import { Backend } from "../../ffi/backend.ts";
import { NativeError } from "../../ffi/errors.ts";
import { NativeLibrary } from "../../ffi/library.ts";
import { QUANT_KIND_CODES } from "../../ffi/quant_ops.ts";
import { loadFixtures } from "../../fixtures/mod.ts";
import { QUANT_RECIPES } from "../../reference/quant/recipes.ts";
import { Tensor } from "../../reference/tensor/tensor.ts";
import { Staging } from "../../ffi/tensor_args.ts";

const KERNELS = fileURLToPath(new URL("../../kernels/", import.meta.url));
const HERE = fileURLToPath(new URL(".", import.meta.url));

async function buildHostLibrary(dir: string): Promise<string> {
  const lib = `${dir}/libquant_host.so`;
  const out = await new Deno.Command("g++", {
    args: [
      "-std=c++17",
      "-O2",
      "-ffp-contract=off",
      "-shared",
      "-fPIC",
      "-I",
      KERNELS,
      "-o",
      lib,
      "-x",
      "c++",
      `${HERE}quant_host_backend.cpp`,
      `${KERNELS}cuda/quantize_plan.cu`,
    ],
    stderr: "piped",
  }).output();
  assert.ok(out.success, new TextDecoder().decode(out.stderr));
  return lib;
}

function bytes(t: Tensor): number[] {
  const c = t.contiguous();
  return [...new Uint8Array(c.data.buffer, c.data.byteOffset, c.data.byteLength)];
}

Deno.test("go_quantize on the host library (the CUDA backend's quantizer code)", async (t) => {
  const dir = await Deno.makeTempDir({ prefix: "go-quant-host-" });
  const backend = new Backend(NativeLibrary.open(await buildHostLibrary(dir)));
  try {
    await t.step("every quantizer fixture, under each stored model, bit for bit through verify's rows", async () => {
      const fixtures = (await loadFixtures()).filter((f) => Object.hasOwn(QUANT_KIND_CODES, f.op));
      assert.ok(fixtures.length >= 20, `${fixtures.length} quantizer fixtures`);
      for (const f of fixtures) {
        for (const [model, want] of Object.entries(f.outputs)) {
          const out: Record<string, Tensor> = {};
          for (const [name, w] of Object.entries(want)) out[name] = Tensor.zeros(w.dtype, w.shape);
          backendOp(f.op)!.run(backend, f.inputs, f.scalars, model, out);
          for (const [name, w] of Object.entries(want)) {
            assert.deepEqual(bytes(out[name]), bytes(w), `${f.id} [${model}] ${name}`);
          }
        }
      }
    });

    await t.step("f16 inputs (every finite f16 pattern) widen exactly, as the reference's", () => {
      const h = new Uint16Array(65536);
      for (let i = 0; i < h.length; i++) h[i] = (i & 0x7c00) === 0x7c00 ? 0 : i; // Inf / NaN patterns → 0
      const x = Tensor.from("f16", [512, 128], h);
      for (const recipe of ["per_token_cast_to_fp8", "mxfp8_e4m3"] as const) {
        const want = QUANT_RECIPES[recipe](x, { granK: 128, semantics: "gpu" });
        const q = Tensor.zeros(want.codes.dtype, [512, 128]), sf = Tensor.zeros(want.sf.dtype, want.sf.shape);
        backend.quantize({ recipe, x, q, sf });
        assert.deepEqual(bytes(q), bytes(want.codes), `${recipe} codes`);
        assert.deepEqual(bytes(sf), bytes(want.sf), `${recipe} scales`);
      }
    });

    await t.step("verify's in-process executor declares the quantizers under the model gpu and runs them", async () => {
      const exec = inProcessExecutor(backend);
      assert.deepEqual(exec.declaration("per_token_cast_to_fp8"), { model: "gpu" });
      assert.deepEqual(exec.declaration("nvfp4_te"), { model: "gpu" });
      const x = Tensor.from("f32", [1, 32], new Float32Array(32).fill(448));
      const got = await exec.run("mxfp8_e4m3", { x }, { scale_rule: "floor" }, "gpu", {
        q: Tensor.zeros("e4m3", [1, 32]),
        sf: Tensor.zeros("ue8m0", [1, 1]),
      });
      assert.equal(got.kind, "ok");
      if (got.kind === "ok") {
        assert.equal(got.outputs.sf.at(0, 0), 0x7f); // numerics.md §5.3: amax 448 → FLOOR 0x7F
        assert.ok([...got.outputs.q.data].every((c) => c === 0x7e));
      }
    });

    await t.step("the wrapper checks every argument before the native call", () => {
      const x = Tensor.zeros("bf16", [4, 128]);
      const q = Tensor.zeros("e4m3", [4, 128]), sf = Tensor.zeros("f32", [4, 1]);
      backend.quantize({ recipe: "per_token_cast_to_fp8", x, q, sf }); // well-formed
      assert.throws(() => backend.quantize({ recipe: "nope" as never, x, q, sf }), RangeError);
      assert.throws(
        () => backend.quantize({ recipe: "per_token_cast_to_fp8", x: Tensor.zeros("i32", [4, 128]), q, sf }),
        TypeError,
      );
      assert.throws(
        () => backend.quantize({ recipe: "per_token_cast_to_fp8", x, q: Tensor.zeros("e5m2", [4, 128]), sf }),
        TypeError,
      );
      assert.throws(
        () => backend.quantize({ recipe: "per_token_cast_to_fp8", x, q, sf: Tensor.zeros("f32", [4, 2]) }),
        TypeError,
      );
      assert.throws(
        () => backend.quantize({ recipe: "per_token_cast_to_fp8", x, q, sf, usePackedUe8m0: true }),
        RangeError,
      );
      assert.throws(
        () => backend.quantize({ recipe: "per_token_cast_to_fp8", x, q, sf, scaleRule: "floor" }),
        RangeError,
      );
      assert.throws(() => backend.quantize({ recipe: "mxfp8_e4m3", x, q, sf, useUe8m0: true }), RangeError);
      assert.throws(
        () => backend.quantize({ recipe: "per_channel_cast_to_fp8", x, q, sf: Tensor.zeros("f32", [1, 128]) }),
        /m = 4 is not a multiple of granK = 128/,
      );
      assert.throws(
        () => backend.quantize({ recipe: "per_token_cast_to_fp4", x, q: Tensor.zeros("u8", [4, 64]), sf, granK: 127 }),
        /odd granK/,
      );
      assert.throws(
        () =>
          backend.quantize({
            recipe: "nvfp4_te",
            x,
            q: Tensor.zeros("u8", [4, 64]),
            sf: Tensor.zeros("e4m3", [4, 8]),
          }),
        /globalSf \(f32 \[1\]\) is required/,
      );
      assert.throws(
        () => backend.quantize({ recipe: "per_token_cast_to_fp8", x, q, sf, model: "tpu" as never }),
        RangeError,
      );
    });

    await t.step("the library refuses what the wrapper would, with GO_ERR_INVALID_ARGUMENT / UNSUPPORTED", () => {
      const lib = backend.library;
      const f = lib.symbols.go_quantize!;
      const call = (kind: number, flags: number, rule: number, model: number, sfShape = [4, 1], granK = 128) => {
        using s = new Staging(lib);
        const st = f(
          kind,
          s.descriptor("x", Tensor.zeros("bf16", [4, 128])),
          s.descriptor("q", Tensor.zeros("e4m3", [4, 128]), true),
          s.descriptor("sf", Tensor.zeros("f32", sfShape), true),
          null,
          granK,
          flags,
          rule,
          model,
        );
        if (st !== 0) throw new NativeError(st, lib.lastError(), "go_quantize");
      };
      call(0, 1, 0, 8);
      const expect = (fn: () => void, code: string, re: RegExp) =>
        assert.throws(fn, (e: unknown) => e instanceof NativeError && e.code === code && re.test(e.message));
      expect(() => call(9, 0, 0, 8), "GO_ERR_INVALID_ARGUMENT", /unknown recipe 9/);
      expect(() => call(0, 4, 0, 8), "GO_ERR_INVALID_ARGUMENT", /unknown flag bits/);
      expect(() => call(0, 2, 0, 8), "GO_ERR_INVALID_ARGUMENT", /requires use_ue8m0/);
      expect(() => call(0, 0, 1, 8), "GO_ERR_INVALID_ARGUMENT", /scale_rule 1/);
      expect(() => call(0, 0, 0, 1), "GO_ERR_UNSUPPORTED", /models gpu \(8\) and cpu \(9\)/);
      expect(() => call(0, 0, 0, 8, [4, 2]), "GO_ERR_INVALID_ARGUMENT", /sf: dim 1 has size 2/);
      expect(() => call(0, 0, 0, 8, [4, 1], 0), "GO_ERR_INVALID_ARGUMENT", /gran_k 0/);
    });
    await t.step("cublasltGemm() and getPagedMqaLogitsMetadata() check their arguments, then call the entry", () => {
      const a = Tensor.zeros("e4m3", [8, 256]), b = Tensor.zeros("e4m3", [64, 256]), d = Tensor.zeros("bf16", [8, 64]);
      assert.throws(
        () => backend.cublasltGemm({ a, b: Tensor.zeros("bf16", [64, 256]), d }),
        /both be FP8 or both bf16/,
      );
      assert.throws(() => backend.cublasltGemm({ a, b: Tensor.zeros("e4m3", [64, 128]), d }), TypeError);
      assert.throws(() => backend.cublasltGemm({ a, b, d: Tensor.zeros("bf16", [8, 32]) }), TypeError);
      assert.throws(() => backend.cublasltGemm({ a, b, d, c: Tensor.zeros("f32", [8, 64]) }), /differs from d's/);
      assert.throws(() => backend.cublasltGemm({ a, b, d, splitK: -1 }), RangeError);
      assert.throws(() => backend.cublasltGemm({ a, b, d, splitK: 2000 }), RangeError);
      assert.throws(
        () => backend.cublasltGemm({ a, b, d }),
        (e: unknown) => e instanceof NativeError && e.code === "GO_ERR_UNSUPPORTED" && /no cuBLASLt/.test(e.message),
      );
      const cl = Tensor.from("i32", [2, 2], new Int32Array([10, 300, 5, 9]));
      const meta = Tensor.zeros("i32", [79, 2]);
      assert.throws(
        () => backend.getPagedMqaLogitsMetadata({ contextLens: cl, numSms: 0, scheduleMeta: meta }),
        RangeError,
      );
      assert.throws(
        () => backend.getPagedMqaLogitsMetadata({ contextLens: cl, numSms: 78, scheduleMeta: cl }),
        TypeError,
      );
      assert.throws(
        () =>
          backend.getPagedMqaLogitsMetadata({
            contextLens: Tensor.zeros("i32", [2, 0]),
            numSms: 78,
            scheduleMeta: meta,
          }),
        /next_n must be ≥ 1/,
      );
      assert.throws(
        () => backend.getPagedMqaLogitsMetadata({ contextLens: cl, numSms: 78, scheduleMeta: meta }),
        (e: unknown) => e instanceof NativeError && e.code === "GO_ERR_UNSUPPORTED",
      );
    });
  } finally {
    backend.close();
    await Deno.remove(dir, { recursive: true });
  }
});
