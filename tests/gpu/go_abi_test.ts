// tests/gpu/head_to_head.py runs on the H200 only (torch, DeepGEMM, the CUDA backend); here, without them, the GPU
// scripts parse, and its view of the C ABI (tests/gpu/go_abi.py: dtype and model numbers, go_tensor's fields, the
// argument counts of the three GEMM entries, go_ext_fast_prepare's modes) is pinned to kernels/gemm_oracle.h and the
// CUDA backend, so that an ABI change cannot leave the script calling our kernels with stale arguments; and
// go_abi.py's calls run on the CPU backend (tests/gpu/go_abi_check.py) against a float64 product of the same operands.
// The benchmark's shape names (tests/gpu/shapes.py, head_to_head.py's --shape) parse back (tests/gpu/shapes_check.py).
// How the benchmarks launch DeepGEMM (tests/gpu/deepgemm_launch.py: with and without its PDL) passes its doctests.
import assert from "node:assert/strict";
import { buildBackend } from "../../kernels/build.ts";
import { PYTHON, pythonMissing } from "../_python.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const script = Deno.readTextFileSync(`${ROOT}tests/gpu/go_abi.py`);
const header = Deno.readTextFileSync(`${ROOT}kernels/gemm_oracle.h`);
const missing = pythonMissing([]);
const missingNumpy = pythonMissing(["numpy"]);

Deno.test({
  name: "every Python script of the GPU checks parses",
  ignore: missing !== undefined,
  fn: async () => {
    const files = [...Deno.readDirSync(`${ROOT}tests/gpu`)].filter((e) => e.name.endsWith(".py")).map((e) => e.name);
    assert.ok(files.includes("head_to_head.py") && files.includes("bench_torch.py"), files.join(", "));
    for (const f of files) {
      const code = `import ast, sys; ast.parse(open(sys.argv[1]).read(), sys.argv[1])`;
      const out = await new Deno.Command(PYTHON, { args: ["-c", code, `${ROOT}tests/gpu/${f}`], stderr: "piped" })
        .output();
      assert.equal(out.code, 0, `${f}: ${new TextDecoder().decode(out.stderr)}`);
    }
  },
});

Deno.test("go_abi.py's dtype and model numbers are gemm_oracle.h's", () => {
  const enumValue = (name: string) => {
    const m = header.match(new RegExp(`\\b${name} = (-?\\d+)`));
    assert.ok(m, `${name} not in gemm_oracle.h`);
    return Number(m[1]);
  };
  const tuple = script.match(/^GO_F32, GO_BF16, GO_E4M3, GO_I32 = (\d+), (\d+), (\d+), (\d+)$/m);
  assert.ok(tuple, "go_abi.py's dtype line");
  assert.deepEqual(tuple.slice(1).map(Number), ["GO_F32", "GO_BF16", "GO_E4M3", "GO_I32"].map(enumValue));
  const model = script.match(/^GO_MODEL_SM90_1D2D = (\d+)$/m);
  assert.ok(model);
  assert.equal(Number(model[1]), enumValue("GO_MODEL_SM90_1D2D"));
});

Deno.test("go_abi.py's go_tensor and argument counts are the C ABI's", () => {
  const struct = header.match(/typedef struct go_tensor \{([^}]*)\} go_tensor;/);
  assert.ok(struct);
  assert.deepEqual(
    struct[1].trim().split(/\s*;\s*/).filter(Boolean),
    ["void* data", "int32_t dtype", "int32_t ndim", "int64_t shape[4]", "int64_t strides[4]"],
  );
  const fields = [
    String.raw`\("data", ctypes\.c_void_p\), \("dtype", ctypes\.c_int32\), \("ndim", ctypes\.c_int32\),`,
    String.raw`\s*\("shape", ctypes\.c_int64 \* 4\), \("strides", ctypes\.c_int64 \* 4\)`,
  ];
  assert.match(script, new RegExp(fields.join("")));
  for (const fn of ["go_fp8_gemm", "go_m_grouped_fp8_gemm_contiguous", "go_m_grouped_fp8_gemm_masked"]) {
    const proto = header.match(new RegExp(`int32_t ${fn}\\(([^)]*)\\);`));
    assert.ok(proto, fn);
    const params = proto[1].split(",").length;
    const argtypes = script.match(new RegExp(`lib\\.${fn}\\.argtypes = \\[([^\\]]*)\\]`));
    assert.ok(argtypes, `${fn}.argtypes in go_abi.py`);
    assert.equal(argtypes[1].split(",").length, params, fn);
  }
  const backend = Deno.readTextFileSync(`${ROOT}kernels/cuda/backend.cu`);
  assert.match(backend, /go_ext_fast_prepare: mode %d \(0 dense, 1 contiguous, 2 masked\)/);
  assert.match(script, /KIND_MODE = \{"dense": 0, "contiguous": 1, "masked": 2\}/);
});

Deno.test({
  name: "go_abi.py's GEMM calls on the CPU backend give the float64 product of their operands, and refusals raise",
  ignore: missingNumpy !== undefined,
  fn: async () => {
    const lib = (await buildBackend("cpu")).path;
    const out = await new Deno.Command(PYTHON, {
      args: [`${ROOT}tests/gpu/go_abi_check.py`, lib],
      stdout: "piped",
      stderr: "piped",
    }).output();
    const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
    assert.equal(out.code, 0, text);
    for (const kind of ["dense", "contiguous", "masked"]) assert.match(text, new RegExp(`^PASS ${kind} `, "m"));
    assert.match(text, /^PASS a refused call raises: go_fp8_gemm: status 1: a: dtype f32/m);
    assert.match(text, /^4 passed, 0 failed$/m);
  },
});

/** Runs a torch-free check script of tests/gpu and asserts it exits 0 printing "<name>: ok". */
async function pythonCheck(script: string, name: string): Promise<void> {
  const out = await new Deno.Command(PYTHON, { args: [`${ROOT}tests/gpu/${script}`], stdout: "piped", stderr: "piped" })
    .output();
  const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
  assert.equal(out.code, 0, text);
  assert.match(text, new RegExp(`^${name}: ok$`, "m"));
}

Deno.test({
  name: "head_to_head.py's shape names parse back to the 45 shapes, and a bad --shape name is refused with its fault",
  ignore: missing !== undefined,
  fn: () => pythonCheck("shapes_check.py", "shapes_check"),
});

Deno.test({
  name: "the benchmarks launch DeepGEMM with PDL set for a whole batch and set back after it, sides rotating per round",
  ignore: missing !== undefined,
  fn: () => pythonCheck("deepgemm_launch.py", "deepgemm_launch"),
});
