/**
 * The child process of tests/kernels/cpu_isa_agreement_test.ts: opens the CPU backend under the GO_CPU_ISA it was
 * started with and prints one JSON line. `agree`: every random case equals the TypeScript reference (exit 1 with the
 * first mismatch otherwise). `invalid`: the kernel chosen, the error of an SM90 FP8 GEMM, and an `exact` GEMM's result.
 * @module
 * @private
 */
import { NativeError, openBackend } from "../../ffi/mod.ts";
import { Tensor } from "../../reference/tensor/tensor.ts";
import { buildCases, folded } from "./cpu_isa_agreement_test.ts";

const mode = Deno.args[0];
using be = await openBackend("cpu");
const info = be.info as unknown as Record<string, unknown>;
if (mode === "agree") {
  const cases = buildCases();
  for (const c of cases) {
    const x = folded(c.native(be)), y = folded(c.ref);
    const bad = x.length !== y.length ? 0 : x.findIndex((v, i) => v !== y[i]);
    if (bad !== -1) {
      console.error(
        `${info.isa}, ${c.name}: first mismatch at flat index ${bad}: native ${x[bad]?.toString(16)}, ` +
          `reference ${y[bad]?.toString(16)}`,
      );
      Deno.exit(1);
    }
  }
  console.log(JSON.stringify({ isa: info.isa, isa_supported: info.isa_supported, cases: cases.length }));
} else {
  const a = Tensor.from("e4m3", [1, 32], new Uint8Array(32).fill(0x38));
  const sf = Tensor.from("f32", [1, 1], new Float32Array([1]));
  const b = Tensor.from("e4m3", [8, 32], new Uint8Array(256).fill(0x38));
  const d = Tensor.zeros("bf16", [1, 8]);
  let error: string | null = null;
  try {
    be.fp8Gemm({ a, sfa: sf, b, sfb: sf, d });
  } catch (e) {
    error = e instanceof NativeError ? e.message : `not a NativeError: ${e}`;
  }
  be.fp8Gemm({ a, sfa: sf, b, sfb: sf, d, model: "exact" });
  console.log(JSON.stringify({ isa: info.isa, isa_supported: info.isa_supported, error, exact: d.at(0, 0) }));
}
