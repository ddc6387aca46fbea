/**
 * Mega MoE as op specs (`OpSpec`): `fp8_fp4_mega_moe` and `bf16_mega_moe` (tcgen05 expert GEMMs, SM100).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { bf16MegaMoeOp, fp8Fp4MegaMoeOp } from "./mega_moe_ops.ts";
 * assert.equal(bf16MegaMoeOp.defaultModel, "tcgen05");
 * assert.equal(fp8Fp4MegaMoeOp.defaultModel, "tcgen05_mxf8f6f4");
 * ```
 * @module
 */
import type { OpSpec } from "../gemm/op_spec.ts";
import { megaMoe } from "../mega_moe/mega_moe.ts";
import type { SiluSource } from "../mega_moe/silu.ts";
import { need, scalar, sync } from "./_arguments.ts";

function megaMoeOp(name: string): OpSpec {
  return sync({
    name,
    family: "mega_moe",
    inputs: [
      "x",
      "x_sf",
      "topk_idx",
      "topk_weights",
      "l1",
      "l1_sf",
      "l2",
      "l2_sf",
      "cumulative_local_expert_recv_stats",
    ],
    outputs: ["y", "cumulative_local_expert_recv_stats"],
    scalars: {
      activation_clamp: "SwiGLU clamp (converted to bf16), absent = none",
      fast_math: "SiLU with __expf + rcp.approx (default true) or expf + IEEE division",
      silu_source: "correctly_rounded (default) | h200_measured",
    },
    defaultModel: name === "bf16_mega_moe" ? "tcgen05" : "tcgen05_mxf8f6f4",
    models: name === "bf16_mega_moe" ? ["tcgen05", "exact"] : ["tcgen05_mxf8f6f4", "exact"],
    run(inputs, scalars, model) {
      const x = need(inputs, "x", name);
      if ((name === "bf16_mega_moe") !== (x.dtype === "bf16")) {
        throw new TypeError(`${name}: x must be ${name === "bf16_mega_moe" ? "bf16" : "e4m3"}, got ${x.dtype}`);
      }
      const r = megaMoe({
        x,
        x_sf: inputs.x_sf,
        topk_idx: need(inputs, "topk_idx", name),
        topk_weights: need(inputs, "topk_weights", name),
        l1: need(inputs, "l1", name),
        l1_sf: inputs.l1_sf,
        l2: need(inputs, "l2", name),
        l2_sf: inputs.l2_sf,
        cumulative_local_expert_recv_stats: inputs.cumulative_local_expert_recv_stats,
      }, {
        clamp: scalar<number | undefined>(scalars, "activation_clamp", name, "number", undefined),
        fastMath: scalar(scalars, "fast_math", name, "boolean", true),
        siluSource: scalar<SiluSource>(scalars, "silu_source", name, "string", "correctly_rounded"),
        tensorCore: model.tensorCore ?? model.model,
      });
      return { y: r.y, cumulative_local_expert_recv_stats: r.recv_stats };
    },
  });
}

/** `fp8_fp4_mega_moe`: FP8 activations × FP4 experts (block-scaled tcgen05). */
export const fp8Fp4MegaMoeOp: OpSpec = megaMoeOp("fp8_fp4_mega_moe");

/** `bf16_mega_moe`: BF16 activations and experts (tcgen05). */
export const bf16MegaMoeOp: OpSpec = megaMoeOp("bf16_mega_moe");
