/**
 * `oracle quantize --recipe NAME [--gran-k N] [--ue8m0] [--packed-ue8m0] [--semantics gpu|cpu] IN OUT`: runs one of
 * DeepGEMM's utility quantizers (deepgemm-ops.md §2) on every tensor of IN and writes, per input tensor `<name>`,
 * the codes as `<name>` and the scales as `<name>_sf` (interfaces.md §3), using the recipe registry
 * `QUANT_RECIPES` (DeepGEMM's quantizers and the MX / NVFP4 recipes). FP4 codes are written as `F4` (element 0 in the
 * low nibble, byte for byte DeepGEMM's packed int8); packed UE8M0 scales are `I32` and listed in
 * `__metadata__.packed_ue8m0`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { quantizeCommand } from "./quantize.ts";
 * assert.match(quantizeCommand.usage, /per_token_cast_to_fp8/);
 * ```
 * @module
 */
import type { Tensor } from "../reference/tensor/mod.ts";
import { QUANT_RECIPE_NAMES, QUANT_RECIPES, type RecipeResult } from "../reference/quant/recipes.ts";
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

const SCALE_RULES = ["floor", "ceil", "even", "rceil"] as const;

const USAGE =
  `Usage: oracle quantize --recipe <name> [--gran-k N] [--ue8m0] [--packed-ue8m0] [--semantics gpu|cpu] IN OUT

Quantizes every tensor of the safetensors file IN (2-D, any float dtype; integer tensors are skipped) with one of
DeepGEMM's utility quantizers and writes, for each tensor <name>, the codes as <name> and the scales as <name>_sf.

  --recipe NAME      ${QUANT_RECIPE_NAMES.join(", ")}
  --gran-k N         elements per scale group along K (default 128)
  --ue8m0            round scales up to powers of two (ceil_to_ue8m0; DeepGEMM's use_ue8m0)
  --packed-ue8m0     pack four UE8M0 scale bytes per int32 (DeepGEMM's SM100 layout; needs --ue8m0)
  --semantics S      gpu (default): amax / 448 computed as amax · fl32(1/448) like PyTorch on CUDA; cpu: true division
  --scale-rule R     MX recipes: floor (default, OCP MX v1.0), ceil, even, rceil

An option the recipe does not read is an error (MX blocks are always 32 elements, NVFP4 blocks 16).

FP4 codes are written as F4 (two per byte, element 0 in the low nibble: byte for byte DeepGEMM's packed int8;
in PyTorch \`t.view(torch.int8)\`). NVFP4 recipes also write the per-tensor scale as <name>_global_sf.

Exit status: 0 written, 2 bad arguments or unusable input.`;

/** The options each recipe reads (reference/quant/recipes.ts); any other option given is an error, not ignored. */
const RECIPE_FLAGS: Readonly<Record<string, readonly string[]>> = {
  per_token_cast_to_fp8: ["gran-k", "ue8m0", "packed-ue8m0", "semantics"],
  per_channel_cast_to_fp8: ["gran-k", "ue8m0", "semantics"],
  per_block_cast_to_fp8: ["gran-k", "ue8m0", "semantics"],
  per_token_cast_to_fp4: ["gran-k", "ue8m0", "packed-ue8m0", "semantics"],
  mxfp8_e4m3: ["semantics", "scale-rule"],
  mxfp8_e5m2: ["semantics", "scale-rule"],
  mxfp4: ["semantics", "scale-rule"],
  nvfp4_te: [],
  nvfp4_torchao: ["semantics"],
};

async function run(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseCommandArgs(args, {
    recipe: { type: "string" },
    "gran-k": { type: "string" },
    ue8m0: { type: "boolean" },
    "packed-ue8m0": { type: "boolean" },
    semantics: { type: "string" },
    "scale-rule": { type: "string" },
  }, "quantize");
  if (values.help) {
    io.stdout(USAGE + "\n");
    return EXIT.ok;
  }
  expectPositionals("quantize", positionals, ["IN", "OUT"]);
  const recipeName = values.recipe;
  if (typeof recipeName !== "string") {
    throw new UsageError("--recipe is required (see oracle quantize --help)");
  }
  if (!Object.hasOwn(QUANT_RECIPES, recipeName)) {
    throw new UsageError(`--recipe "${recipeName}" is not one of ${QUANT_RECIPE_NAMES.join(", ")}`);
  }
  const honoured = RECIPE_FLAGS[recipeName] ?? [];
  for (const flag of ["gran-k", "ue8m0", "packed-ue8m0", "semantics", "scale-rule"] as const) {
    if (values[flag] !== undefined && !honoured.includes(flag)) {
      throw new UsageError(
        `--${flag} does not apply to ${recipeName} (it reads ${
          honoured.length ? honoured.map((f) => `--${f}`).join(", ") : "no option"
        })`,
      );
    }
  }
  const scaleRule = (values["scale-rule"] as string | undefined) ?? "floor";
  if (!(SCALE_RULES as readonly string[]).includes(scaleRule)) {
    throw new UsageError(`--scale-rule ${JSON.stringify(scaleRule)} is not one of ${SCALE_RULES.join(", ")}`);
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
  const recipe = QUANT_RECIPES[recipeName];
  const out = new Map<string, Tensor>();
  const packed: string[] = [];
  let quantized = 0;
  for (const [name, x] of file.tensors) {
    if (x.dtype === "i32" || x.dtype === "i64" || x.dtype === "u8" || x.dtype === "i8") {
      io.stderr(`skipping integer tensor "${name}"\n`);
      continue;
    }
    for (const suffix of ["_sf", "_global_sf"]) {
      if (out.has(name + suffix) || file.tensors.has(name + suffix)) {
        throw new UsageError(`${input}: output name "${name}${suffix}" collides with an input tensor`);
      }
    }
    let r: RecipeResult;
    try {
      r = recipe(x, { useUe8m0, granK, usePackedUe8m0, semantics, scaleRule: scaleRule as typeof SCALE_RULES[number] });
    } catch (e) {
      throw new UsageError(`tensor "${name}": ${(e as Error).message}`);
    }
    if (r.codes.dtype === "e2m1" && r.codes.numel % 2 !== 0) {
      throw new UsageError(`tensor "${name}": ${r.codes.numel} FP4 codes cannot be packed two per byte`);
    }
    out.set(name, r.codes);
    out.set(`${name}_sf`, r.sf);
    if (r.globalSf) out.set(`${name}_global_sf`, r.globalSf);
    quantized++;
    if (r.sf.dtype === "i32") packed.push(`${name}_sf`);
  }
  if (quantized === 0) throw new UsageError(`${input}: has no floating-point tensor to quantize`);
  const metadata: Record<string, string> = {
    ...file.metadata,
    recipe: recipeName,
  };
  // Only the options the recipe reads are recorded (an MX block is 32 elements whatever --gran-k says).
  if (honoured.includes("gran-k")) metadata.gran_k = String(granK);
  if (honoured.includes("ue8m0")) metadata.use_ue8m0 = String(useUe8m0);
  if (honoured.includes("semantics")) metadata.semantics = semantics;
  if (honoured.includes("scale-rule")) metadata.scale_rule = scaleRule;
  delete metadata[F4_NIBBLE_ORDER_KEY];
  delete metadata[PACKED_UE8M0_KEY];
  if (packed.length > 0) metadata[PACKED_UE8M0_KEY] = JSON.stringify(packed.sort());
  await writeSafetensors(output, out, metadata);
  io.stderr(`quantized ${quantized} tensors of ${input} with ${recipeName} → ${output}\n`);
  return EXIT.ok;
}

/** The `quantize` subcommand. */
export const quantizeCommand: Command = Object.freeze({
  name: "quantize",
  summary: "quantize every tensor with a DeepGEMM quantizer (codes <name>, scales <name>_sf)",
  usage: USAGE,
  run,
});
