/**
 * The H200 recordings of real GEMM kernels that `oracle identify` is checked against: inputs (deterministic, rebuilt
 * from their seeds), the backend that produced each output (`tests/gpu/record_identify.sh` ran them), and the variant
 * identify must name. The recorded outputs are in `tests/identify/h200/`.
 * @module
 * @private
 */
import { fp8Dense } from "../../reference/cases/gemm_builders.ts";
import { Prng } from "../../reference/random/prng.ts";
import { Tensor } from "../../reference/tensor/tensor.ts";

function raw(m: number, n: number, k: number, seed: number): Record<string, Tensor> {
  const p = new Prng(seed);
  const codes = (count: number) => Uint8Array.from({ length: count }, () => p.int(0x7f) | (p.int(2) << 7));
  return { a: Tensor.from("e4m3", [m, k], codes(m * k)), b: Tensor.from("e4m3", [n, k], codes(n * k)) };
}

export const TORCH = "cmd:python3 adapters/torch.py", DEEPGEMM = "cmd:python3 adapters/deepgemm.py";
/** Every recording: input file stem, op, backend, the variant identify must name, inputs, scalars. */
export const jobs: {
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

/** The file name of a recording's output under `tests/identify/h200/` (as record_identify.sh writes it). */
export function outputName(j: { file: string; backend: string }): string {
  return `${j.file}.${j.backend.replace(/^cmd:python3 adapters\//, "").replace(/[^a-z0-9]+/gi, "_")}.out.safetensors`;
}
