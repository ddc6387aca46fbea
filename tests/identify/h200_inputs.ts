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
import { writeSafetensors } from "../../io/mod.ts";
import { jobs, outputName } from "./_h200_gemm_jobs.ts";

const dir = Deno.args[0];
if (!dir) {
  console.error("usage: deno run -A tests/identify/h200_inputs.ts DIR");
  Deno.exit(2);
}
await Deno.mkdir(dir, { recursive: true });

const written = new Set<string>();
for (const j of jobs) {
  const path = `${dir}/${j.file}.safetensors`;
  if (!written.has(path)) {
    await writeSafetensors(path, j.inputs, j.scalars ? { scalars: JSON.stringify(j.scalars) } : {});
    written.add(path);
  }
  const out = `${dir}/${outputName(j)}`;
  console.log(`deno task oracle run ${j.op} --backend '${j.backend}' ${path} ${out}`);
  console.log(`  then: deno task oracle identify ${j.op} ${path} ${out}   # must name: ${j.expect}`);
}
