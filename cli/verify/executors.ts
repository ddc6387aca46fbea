/**
 * The two ways `verify` runs an op on a backend, behind one interface: out of process through a backend host (the
 * default for every backend, `cli/host/`), or in process through `Deno.dlopen` (`--in-process`, C ABI libraries
 * only). Both take the reference's model name and answer with the outputs or the reason there are none. An op that
 * only another GPU architecture runs (`ARCH_ONLY` of `backend_ops.ts`) is skipped with the architecture it needs.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { inProcessExecutor } from "./executors.ts";
 * const exec = inProcessExecutor({ name: "cpu", info: { models: { fp8_gemm: "sm90_1d2d" } } } as never);
 * assert.deepEqual(exec.declaration("fp8_gemm_nt"), { model: "sm90_1d2d" });
 * assert.match((exec.declaration("einsum") as { skip: string }).skip, /declares no model for bf16_gemm/);
 * assert.match((exec.declaration("bf16_mega_moe") as { skip: string }).skip, /needs SM100 \(Blackwell\)/);
 * ```
 * @module
 */
import type { Backend } from "../../ffi/backend.ts";
import { NativeError } from "../../ffi/errors.ts";
import type { Tensor } from "../../reference/tensor/tensor.ts";
import { abiModelFor } from "../host/abi_host.ts";
import type { HostedBackend, HostedOutcome } from "../host/hosted_backend.ts";
import { archSkip, ArchUnsupportedError, backendOp, hasEntry } from "./backend_ops.ts";

/**
 * What a backend declares for an op: the reference model it claims to match, or why it is skipped. `absent`: the
 * backend has no such op at all, so `--model` cannot make it run either.
 */
export type Declaration = { readonly model: string } | { readonly skip: string; readonly absent: boolean };

/** A backend's way of running ops. */
export interface Executor {
  /** The backend's declaration for an op. */
  declaration(op: string): Declaration;
  /**
   * Runs an op.
   * @param op DeepGEMM op name
   * @param inputs tensors by DeepGEMM's argument names
   * @param scalars scalars by DeepGEMM's names
   * @param model the reference model the outputs are checked against
   * @param out the outputs to produce, pre-filled as the reference starts them (C copied, zeros)
   */
  run(
    op: string,
    inputs: Record<string, Tensor>,
    scalars: Record<string, unknown>,
    model: string,
    out: Record<string, Tensor>,
  ): Promise<HostedOutcome>;
}

/** A backend host (`cli/host/hosted_backend.ts`) as an executor. */
export function hostedExecutor(hosted: HostedBackend): Executor {
  return {
    declaration(op) {
      const m = hosted.declared(op);
      if (m) return { model: m };
      const arch = archSkip(op, hosted.name, hosted.hello.info?.arch);
      return { skip: arch ?? `${hosted.name} does not declare ${op}`, absent: true };
    },
    run: (op, inputs, scalars, model, out) => hosted.run(op, inputs, scalars, model, out),
  };
}

/** A C ABI library loaded into this process as an executor (`--in-process`): no protection from its faults. */
export function inProcessExecutor(backend: Backend): Executor {
  const models = (backend.info as unknown as { models?: Record<string, string> }).models ?? {};
  return {
    declaration(op) {
      const arch = archSkip(op, backend.name, backend.info.arch);
      if (arch) return { skip: arch, absent: true };
      const bop = backendOp(op);
      if (!bop || !hasEntry(backend, bop)) {
        return { skip: `${backend.name}: the kernel ABI has no entry for ${op}`, absent: true };
      }
      const m = models[bop.family];
      if (!m) return { skip: `${backend.name} declares no model for ${bop.family}`, absent: false };
      return { model: bop.referenceModel?.(m) ?? m };
    },
    run(op, inputs, scalars, model, out) {
      const arch = archSkip(op, backend.name, backend.info.arch);
      if (arch) return Promise.resolve({ kind: "unsupported", message: arch });
      const bop = backendOp(op);
      if (!bop || !hasEntry(backend, bop)) {
        return Promise.resolve({ kind: "unsupported", message: `the kernel ABI has no entry for ${op}` });
      }
      try {
        bop.run(backend, inputs, scalars, abiModelFor(op, model), out);
      } catch (e) {
        if ((e instanceof NativeError && e.code === "GO_ERR_UNSUPPORTED") || e instanceof ArchUnsupportedError) {
          return Promise.resolve({ kind: "unsupported", message: e.message });
        }
        return Promise.resolve({ kind: "error", message: (e as Error).message });
      }
      return Promise.resolve({ kind: "ok", outputs: out });
    },
  };
}
