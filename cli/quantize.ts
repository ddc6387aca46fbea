/**
 * `oracle quantize --recipe NAME [--gran-k N] [--ue8m0] [--packed-ue8m0] [--semantics gpu|cpu] IN OUT`: runs one of
 * DeepGEMM's utility quantizers (deepgemm-ops.md §2) on every tensor of IN and writes, per input tensor `<name>`,
 * the codes as `<name>` and the scales as `<name>_sf` (interfaces.md §3). Packed FP4 codes are `I8` (`torch.int8`,
 * as DeepGEMM stores them); packed UE8M0 scales are `I32` and listed in `__metadata__.packed_ue8m0`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { QUANTIZE_RECIPES } from "./quantize.ts";
 * assert.ok("per_token_cast_to_fp8" in QUANTIZE_RECIPES);
 * ```
 * @module
 */
import type { Tensor } from "../reference/tensor/mod.ts";
import { perBlockCastToFp8, perChannelCastToFp8, perTokenCastToFp8 } from "../reference/quant/fp8_casts.ts";
import { perTokenCastToFp4 } from "../reference/quant/fp4_casts.ts";
import type { CastOptions, CastResult } from "../reference/quant/fp8_casts.ts";
import { F4_NIBBLE_ORDER_KEY, PACKED_UE8M0_KEY, readSafetensors, writeSafetensors } from "../io/mod.ts";
import {
  type CliIo,
  type Command,
  EXIT,
  expectPositionals,
  parseCommandArgs,
  parseCount,
  UsageError,
} from "./command.ts";

/** One quantizer reachable from the command line. */
export interface QuantizeRecipe {
  /** What it is. */
  readonly description: string;
  /** Quantizes one tensor. */
  quantize(x: Tensor, options: CastOptions): CastResult;
}

/** The recipes, keyed by DeepGEMM's function names (deepgemm-ops.md §2.4–§2.8). */
export const QUANTIZE_RECIPES: Readonly<Record<string, QuantizeRecipe>> = Object.freeze({
  per_token_cast_to_fp8: {
    description: "E4M3, one scale per row and gran_k columns (§2.4)",
    quantize: perTokenCastToFp8,
  },
  per_channel_cast_to_fp8: {
    description: "E4M3, one scale per gran_k rows of each column (§2.5)",
    quantize: perChannelCastToFp8,
  },
  per_block_cast_to_fp8: {
    description: "E4M3, one scale per gran_k × gran_k tile (§2.6)",
    quantize: perBlockCastToFp8,
  },
  per_token_cast_to_fp4: {
    description: "E2M1 packed two per int8 (low nibble = even element), one scale per row and gran_k columns (§2.8)",
    quantize: perTokenCastToFp4,
  },
});

const USAGE =
  `Usage: oracle quantize --recipe <name> [--gran-k N] [--ue8m0] [--packed-ue8m0] [--semantics gpu|cpu] IN OUT

Quantizes every tensor of the safetensors file IN (2-D, any float dtype; integer tensors are skipped) with one of
DeepGEMM's utility quantizers and writes, for each tensor <name>, the codes as <name> and the scales as <name>_sf.

  --recipe NAME      ${Object.keys(QUANTIZE_RECIPES).join(", ")}
  --gran-k N         elements per scale group along K (default 128)
  --ue8m0            round scales up to powers of two (ceil_to_ue8m0; DeepGEMM's use_ue8m0)
  --packed-ue8m0     pack four UE8M0 scale bytes per int32 (DeepGEMM's SM100 layout; needs --ue8m0)
  --semantics S      gpu (default): amax / 448 computed as amax · fl32(1/448) like PyTorch on CUDA; cpu: true division

Exit status: 0 written, 2 bad arguments or unusable input.`;

async function run(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseCommandArgs(args, {
    recipe: { type: "string" },
    "gran-k": { type: "string" },
    ue8m0: { type: "boolean" },
    "packed-ue8m0": { type: "boolean" },
    semantics: { type: "string" },
  }, "quantize");
  if (values.help) {
    io.stdout(USAGE + "\n");
    return EXIT.ok;
  }
  expectPositionals("quantize", positionals, ["IN", "OUT"]);
  const recipeName = values.recipe;
  if (typeof recipeName !== "string") {
    throw new UsageError("oracle quantize: --recipe is required (see oracle quantize --help)");
  }
  if (!Object.hasOwn(QUANTIZE_RECIPES, recipeName)) {
    throw new UsageError(`--recipe "${recipeName}" is not one of ${Object.keys(QUANTIZE_RECIPES).join(", ")}`);
  }
  const granK = values["gran-k"] === undefined ? 128 : parseCount("--gran-k", values["gran-k"] as string);
  if (granK === 0) throw new UsageError("--gran-k must be positive");
  const semantics = (values.semantics as string | undefined) ?? "gpu";
  if (semantics !== "gpu" && semantics !== "cpu") {
    throw new UsageError(`--semantics ${JSON.stringify(semantics)} is not gpu or cpu`);
  }
  const useUe8m0 = values.ue8m0 === true;
  const usePackedUe8m0 = values["packed-ue8m0"] === true;
  if (usePackedUe8m0 && !useUe8m0) throw new UsageError("--packed-ue8m0 needs --ue8m0 (packed scales are UE8M0 bytes)");
  const [input, output] = positionals;
  const file = await readSafetensors(input);
  const recipe = QUANTIZE_RECIPES[recipeName];
  const out = new Map<string, Tensor>();
  const packed: string[] = [];
  for (const [name, x] of file.tensors) {
    if (x.dtype === "i32" || x.dtype === "i64" || x.dtype === "u8" || x.dtype === "i8") {
      io.stderr(`skipping integer tensor "${name}"\n`);
      continue;
    }
    if (out.has(name) || out.has(`${name}_sf`) || file.tensors.has(`${name}_sf`)) {
      throw new UsageError(`${input}: output name "${name}_sf" collides with an input tensor`);
    }
    let r: CastResult;
    try {
      r = recipe.quantize(x, { useUe8m0, granK, usePackedUe8m0, semantics });
    } catch (e) {
      throw new UsageError(`tensor "${name}": ${(e as Error).message}`);
    }
    out.set(name, r.q);
    out.set(`${name}_sf`, r.sf);
    if (r.sf.dtype === "i32") packed.push(`${name}_sf`);
  }
  if (out.size === 0) throw new UsageError(`${input}: has no floating-point tensor to quantize`);
  const metadata: Record<string, string> = {
    ...file.metadata,
    recipe: recipeName,
    gran_k: String(granK),
    use_ue8m0: String(useUe8m0),
    semantics,
  };
  delete metadata[F4_NIBBLE_ORDER_KEY];
  delete metadata[PACKED_UE8M0_KEY];
  if (packed.length > 0) metadata[PACKED_UE8M0_KEY] = JSON.stringify(packed.sort());
  await writeSafetensors(output, out, metadata);
  io.stderr(`quantized ${out.size / 2} tensors of ${input} with ${recipeName} → ${output}\n`);
  return EXIT.ok;
}

/** The `quantize` subcommand. */
export const quantizeCommand: Command = Object.freeze({
  name: "quantize",
  summary: "quantize every tensor with a DeepGEMM quantizer (codes <name>, scales <name>_sf)",
  usage: USAGE,
  run,
});
