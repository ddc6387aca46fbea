/**
 * Cases for what the adapters declare but `verify --suite all` never reaches (its suites build no m-grouped `nn`, no
 * BF16 grouped or k-grouped case, no cuBLASLt `nn/tn/tt`, no `einsum` 'bhd,hdr->bhr', no paged MQA with next_n = 1),
 * plus shape controls for the block-scaled cuBLASLt path of `adapters/torch.py` (ceil(K/128) a multiple of 4 or not,
 * bench/RESULTS.md). Each case is checked exactly as verify checks one, through verify's own case runner and a
 * backend host: the backend's declared model, bit for bit.
 *
 *   deno run -A adapters/extra_cases.ts --backend 'cmd:python3 adapters/deepgemm.py' [--json FILE] [--ops GLOB]
 *
 * Prints verify's table and summary line. Exit status: 0 every case passed or was skipped, 1 a failure or an error,
 * 2 unusable arguments or backend.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { extraCases } from "./extra_cases.ts";
 * const cases = extraCases();
 * assert.ok(cases.some((c) => c.op === "m_grouped_bf16_gemm_nn_contiguous"));
 * assert.equal(new Set(cases.map((c) => c.id)).size, cases.length);
 * ```
 * @module
 */
import { parseArgs } from "node:util";
import type { Built } from "../reference/cases/case_spec.ts";
import { fp8Dense, masked, mGroupedContiguous } from "../reference/cases/gemm_builders.ts";
import { mqa, pagedMqa } from "../reference/cases/mqa_builders.ts";
import { fp8Operand, randnTensor } from "../reference/cases/seeded_operands.ts";
import { i32, zeroRows } from "../reference/cases/tensor_assembly.ts";
import { Prng } from "../reference/random/prng.ts";
import type { Tensor } from "../reference/tensor/tensor.ts";
import { hostCommand, HostedBackend } from "../cli/host/hosted_backend.ts";
import { hostedExecutor } from "../cli/verify/executors.ts";
import { formatTable, summarize } from "../cli/verify/report.ts";
import { runCase, type VerifyCase } from "../cli/verify/runner.ts";

function transposed(built: Built, names: string[]): Built {
  const inputs = { ...built.inputs };
  for (const n of names) inputs[n] = inputs[n].transpose(-2, -1);
  return { inputs, scalars: built.scalars };
}

/** BF16 m-grouped contiguous: `sizes[g]` rows per group padded to 128 with −1 rows (zero A rows), B `[G, N, K]`. */
function bf16Contiguous(sizes: readonly number[], n: number, k: number): (p: Prng) => Built {
  return (p) => {
    const layout: number[] = [], pad: number[] = [];
    let rows = 0;
    sizes.forEach((s, g) => {
      const padded = Math.ceil(s / 128) * 128;
      for (let r = 0; r < padded; r++) {
        layout.push(r < s ? g : -1);
        if (r >= s) pad.push(rows + r);
      }
      rows += padded;
    });
    const a = randnTensor(p, [rows, k], "bf16");
    zeroRows(a, pad);
    return {
      inputs: { a, b: randnTensor(p, [sizes.length, n, k], "bf16"), grouped_layout: i32(layout) },
      scalars: {},
    };
  };
}

function bf16Masked(g: number, mMax: number, n: number, k: number, maskedM: readonly number[]): (p: Prng) => Built {
  return (p) => ({
    inputs: {
      a: randnTensor(p, [g, mMax, k], "bf16"),
      b: randnTensor(p, [g, n, k], "bf16"),
      masked_m: i32(maskedM),
    },
    scalars: { expected_m: Math.max(1, Math.round(maskedM.reduce((s, v) => s + v, 0) / g)) },
  });
}

/** BF16 k-grouped `tn`: A `[ΣK, M]`, B `[ΣK, N]` (MN-major), C `[G, M, N]` fp32. */
function bf16KGrouped(m: number, n: number, ks: readonly number[]): (p: Prng) => Built {
  return (p) => {
    const sum = ks.reduce((s, v) => s + v, 0);
    return {
      inputs: {
        a: randnTensor(p, [sum, m], "bf16"),
        b: randnTensor(p, [sum, n], "bf16"),
        c: randnTensor(p, [ks.length, m, n], "f32", 32),
        d: randnTensor(p, [ks.length, m, n], "f32", 0),
        grouped_layout: i32(ks),
      },
      scalars: { ks: [...ks] },
    };
  };
}

/** Raw e4m3 operands for `cublaslt_gemm_<letters>` (no scales), optionally FP32 output with C. */
function rawFp8(m: number, n: number, k: number, letters: string, withC = false): (p: Prng) => Built {
  return (p) => {
    const a = fp8Operand(p, m, k, "token").q, b = fp8Operand(p, n, k, "token").q;
    const inputs: Record<string, Tensor> = {
      a: letters[0] === "t" ? a.transpose() : a,
      b: letters[1] === "n" ? b.transpose() : b,
    };
    if (withC) {
      inputs.c = randnTensor(p, [m, n], "f32", 32);
      inputs.d = randnTensor(p, [m, n], "f32", 0);
    }
    return { inputs, scalars: {} };
  };
}

function einsumBhdHdrBhr(b: number, h: number, d: number, r: number): (p: Prng) => Built {
  return (p) => ({
    inputs: { a: randnTensor(p, [b, h, d], "bf16"), b: randnTensor(p, [h, d, r], "bf16") },
    scalars: { expr: "bhd,hdr->bhr" },
  });
}

function hcPrenormSplit(m: number, n: number, k: number, splits: number): (p: Prng) => Built {
  return (p) => ({
    inputs: { a: randnTensor(p, [m, k], "bf16"), b: randnTensor(p, [n, k], "f32") },
    scalars: { num_splits: splits },
  });
}

function metadata(lens: readonly number[], nextN: number, blockKv: number, numSms: number): (p: Prng) => Built {
  return () => ({
    inputs: { context_lens: i32(lens).reshape([lens.length / nextN, nextN]) },
    scalars: { block_kv: blockKv, num_sms: numSms },
  });
}

function seedOf(id: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) h = Math.imul(h ^ id.charCodeAt(i), 0x01000193) >>> 0;
  return h;
}

/** The extra cases, in a fixed order; each id is `adapters/<name>` and seeds its own inputs. */
export function extraCases(): VerifyCase[] {
  const c = (name: string, op: string, layout: string, build: (p: Prng) => Built): VerifyCase => {
    const id = `adapters/${name}`;
    return { id, op, layout, suite: "edge", build: () => build(new Prng(seedOf(id))) };
  };
  return [
    c(
      "mgrouped_nn",
      "m_grouped_fp8_gemm_nn_contiguous",
      "nn contiguous, B stored [G, K, N], an empty group",
      (p) => transposed(mGroupedContiguous([90, 0, 128, 33], 256, 384, false)(p), ["b", "sfb"]),
    ),
    c("fp8_masked_alias", "fp8_m_grouped_gemm_nt_masked", "masked (legacy name)", masked(2, 128, 256, 256, [77, 128])),
    c(
      "bf16_contiguous",
      "m_grouped_bf16_gemm_nt_contiguous",
      "nt contiguous, −1 rows, an empty group",
      bf16Contiguous([100, 0, 130, 7], 256, 128),
    ),
    c(
      "bf16_contiguous_nn",
      "m_grouped_bf16_gemm_nn_contiguous",
      "nn contiguous, B stored [G, K, N]",
      (p) => transposed(bf16Contiguous([64, 200], 128, 192)(p), ["b"]),
    ),
    c(
      "bf16_masked",
      "m_grouped_bf16_gemm_nt_masked",
      "masked_m = 0, max, partial",
      bf16Masked(3, 128, 256, 128, [0, 128, 77]),
    ),
    c(
      "bf16_masked_alias",
      "bf16_m_grouped_gemm_nt_masked",
      "masked (legacy name)",
      bf16Masked(2, 128, 128, 256, [5, 99]),
    ),
    c(
      "bf16_kgrouped",
      "k_grouped_bf16_gemm_tn_contiguous",
      "tn, ks = (128, 0, 256, 128), C",
      bf16KGrouped(128, 256, [128, 0, 256, 128]),
    ),
    c("cublaslt_nn", "cublaslt_gemm_nn", "nn, raw e4m3", rawFp8(64, 128, 512, "nn")),
    c("cublaslt_tn", "cublaslt_gemm_tn", "tn, raw e4m3", rawFp8(64, 128, 512, "tn")),
    c("cublaslt_tt", "cublaslt_gemm_tt", "tt, raw e4m3", rawFp8(64, 128, 512, "tt")),
    c("cublaslt_nt_c", "cublaslt_gemm_nt", "nt, raw e4m3, fp32 out with C", rawFp8(64, 128, 512, "nt", true)),
    c("cublaslt_nt_k1024", "cublaslt_gemm_nt", "nt, raw e4m3, K = 1024", rawFp8(128, 256, 1024, "nt")),
    c("einsum_bhd_hdr_bhr", "einsum", "bhd,hdr->bhr", einsumBhdHdrBhr(4, 2, 128, 64)),
    c("paged_mqa_next1", "fp8_paged_mqa_logits", "next_n = 1, H = 64, D = 128", pagedMqa(2, 1, 64, 128, 64)),
    c(
      "paged_metadata_sms132",
      "get_paged_mqa_logits_metadata",
      "next_n = 1, 132 SMs",
      metadata([70, 300, 1, 511, 256], 1, 64, 132),
    ),
    c("mqa_h64_d64", "fp8_mqa_logits", "H = 64, D = 64, clean", mqa(5, 64, 64, 200, false)),
    c("hc_prenorm_n32_split4", "tf32_hc_prenorm_gemm", "n = 32 (SM90 max), split-K 4", hcPrenormSplit(64, 32, 1024, 4)),
    c("fp8_nn_c", "fp8_gemm_nn", "nn, fp32 out with C (1D1D), M = 128", fp8Dense(128, 256, 512, "nn", true)),
    // block-scaled controls: ceil(K/128) a multiple of 4 or not, more than one 128-column block of B
    c("fp8_nt_kb4", "fp8_gemm_nt", "nt, K = 512 (4 scale blocks), N = 384", fp8Dense(128, 384, 512)),
    c("fp8_nt_kb5", "fp8_gemm_nt", "nt, K = 640 (5 scale blocks), N = 384", fp8Dense(128, 384, 640)),
    c("fp8_nt_kb6_n128", "fp8_gemm_nt", "nt, K = 768 (6 scale blocks), N = 128 (one block)", fp8Dense(128, 128, 768)),
    c("fp8_nt_kb8", "fp8_gemm_nt", "nt, K = 1024 (8 scale blocks), N = 256", fp8Dense(64, 256, 1024)),
  ];
}

function globToRegExp(glob: string): RegExp {
  return new RegExp(`^(?:${glob.replace(/[.+^${}()|[\]\\]/g, "\\$&").replace(/\*/g, ".*").replace(/\?/g, ".")})$`);
}

async function main(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      backend: { type: "string" },
      json: { type: "string" },
      ops: { type: "string" },
      help: { type: "boolean" },
    },
  });
  if (values.help || !values.backend) {
    console.log("usage: deno run -A adapters/extra_cases.ts --backend SPEC [--json FILE] [--ops GLOB]");
    return values.help ? 0 : 2;
  }
  let cases = extraCases();
  if (values.ops) cases = cases.filter((c) => globToRegExp(values.ops!).test(c.op));
  const log = (line: string) => console.error(`extra_cases: ${line}`);
  let hosted: HostedBackend;
  try {
    hosted = await HostedBackend.open(hostCommand(values.backend), {
      caseTimeoutMs: 300_000,
      startTimeoutMs: 120_000,
      log,
    });
  } catch (e) {
    console.error(`extra_cases: backend ${values.backend}: ${(e as Error).message}`);
    return 2;
  }
  const results = [];
  try {
    for (const c of cases) {
      log(c.id);
      results.push(...await runCase(c, [{ name: values.backend, exec: hostedExecutor(hosted) }]));
    }
  } finally {
    await hosted.close();
  }
  const summary = summarize(results);
  console.log(formatTable(results));
  console.log(
    `extra cases: ${results.length} checks: ${summary.pass} passed, ${summary.fail} failed, ${summary.error} errors, ${summary.skip} skipped`,
  );
  if (values.json) {
    await Deno.writeTextFile(
      values.json,
      JSON.stringify(
        { backends: [{ name: values.backend, info: hosted.hello.info ?? {} }], cases: results, summary },
        null,
        2,
      ) + "\n",
    );
  }
  return summary.fail + summary.error > 0 ? 1 : 0;
}

if (import.meta.main) Deno.exit(await main(Deno.args));
