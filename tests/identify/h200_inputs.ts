/**
 * Writes the input files of the H200 recordings `identify` still lacks (real cuBLASLt, DeepGEMM and this project's
 * CUDA kernels on GEMM ops), deterministic, so that a session on an H200 only has to run each backend on them:
 *
 * ```sh
 * deno run -A tests/identify/h200_inputs.ts DIR
 * deno task oracle run cublaslt_gemm_nt --backend 'cmd:python3 adapters/torch.py' DIR/raw_64x256x1024.safetensors OUT
 * ```
 *
 * (the full list, with the adapter for each and the variant identify must name, is printed). The recorded outputs
 * and these inputs then go to tests/identify/h200/ with a test each, as tests/identify/_h200_recordings.ts does for
 * the MQA and HC recordings.
 * @module
 */
import { fp8Dense } from "../../fixtures/case_builders.ts";
import { writeSafetensors } from "../../io/mod.ts";
import { Prng } from "../../reference/random/prng.ts";
import { Tensor } from "../../reference/tensor/tensor.ts";

const dir = Deno.args[0];
if (!dir) {
  console.error("usage: deno run -A tests/identify/h200_inputs.ts DIR");
  Deno.exit(2);
}
await Deno.mkdir(dir, { recursive: true });

function raw(m: number, n: number, k: number, seed: number): Record<string, Tensor> {
  const p = new Prng(seed);
  const codes = (count: number) => Uint8Array.from({ length: count }, () => p.int(0x7f) | (p.int(2) << 7));
  return { a: Tensor.from("e4m3", [m, k], codes(m * k)), b: Tensor.from("e4m3", [n, k], codes(n * k)) };
}

const TORCH = "cmd:python3 adapters/torch.py", DEEPGEMM = "cmd:python3 adapters/deepgemm.py";
const jobs: {
  file: string;
  op: string;
  backend: string;
  expect: string;
  inputs: Record<string, Tensor>;
  scalars?: object;
}[] = [
  {
    file: "raw_64x256x1024",
    op: "cublaslt_gemm_nt",
    backend: TORCH,
    expect: "cublaslt",
    inputs: raw(64, 256, 1024, 1),
  },
  {
    file: "raw_64x256x1024",
    op: "cublaslt_gemm_nt",
    backend: `${TORCH} --fast-accum`,
    expect: "cublaslt --promote none",
    inputs: raw(64, 256, 1024, 1),
  },
  {
    file: "dense_128x512x2048",
    op: "fp8_gemm_nt",
    backend: TORCH,
    expect: "sm90_1d2d",
    inputs: fp8Dense(128, 512, 2048)(new Prng(2)).inputs,
  },
  {
    file: "dense_64x576x7168",
    op: "fp8_gemm_nt",
    backend: TORCH,
    expect: "sm90_1d2d --split-k 2",
    inputs: fp8Dense(64, 576, 7168)(new Prng(3)).inputs,
  },
  {
    file: "dense_128x512x2048",
    op: "fp8_gemm_nt",
    backend: DEEPGEMM,
    expect: "sm90_1d2d",
    inputs: fp8Dense(128, 512, 2048)(new Prng(2)).inputs,
  },
  {
    file: "dense_200x136x640",
    op: "fp8_gemm_nt",
    backend: DEEPGEMM,
    expect: "sm90_1d2d",
    inputs: fp8Dense(200, 136, 640)(new Prng(4)).inputs,
  },
  {
    file: "dense_c_96x256x384",
    op: "fp8_gemm_nt",
    backend: DEEPGEMM,
    expect: "sm90_1d1d",
    ...(() => {
      const b = fp8Dense(96, 256, 384, "nt", true)(new Prng(5));
      return { inputs: b.inputs, scalars: b.scalars };
    })(),
  },
  {
    file: "dense_128x512x2048",
    op: "fp8_gemm_nt",
    backend: "cuda",
    expect: "sm90_1d2d",
    inputs: fp8Dense(128, 512, 2048)(new Prng(2)).inputs,
  },
];
const written = new Set<string>();
for (const j of jobs) {
  const path = `${dir}/${j.file}.safetensors`;
  if (!written.has(path)) {
    await writeSafetensors(path, j.inputs, j.scalars ? { scalars: JSON.stringify(j.scalars) } : {});
    written.add(path);
  }
  const out = `${dir}/${j.file}.${
    j.backend.replace(/^cmd:python3 adapters\//, "").replace(/[^a-z0-9]+/gi, "_")
  }.out.safetensors`;
  console.log(`deno task oracle run ${j.op} --backend '${j.backend}' ${path} ${out}`);
  console.log(`  then: deno task oracle identify ${j.op} ${path} ${out}   # must name: ${j.expect}`);
}
