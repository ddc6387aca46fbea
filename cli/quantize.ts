/**
 * `oracle quantize --recipe NAME [--as NAME] [--gran-k N] [--ue8m0] [--packed-ue8m0] [--semantics gpu|cpu] IN OUT`:
 * runs one of DeepGEMM's utility quantizers (deepgemm-ops.md §2) on every tensor of IN and writes, per input tensor
 * `<name>`, the codes as `<name>` and the scales under the name DeepGEMM's functions give them ({@link scaleName}:
 * `sfa` for `a`, `sfb` for `b`, `<name>_sf` otherwise, as `x_sf`, `q_sf`, `kv_sf`), so the file is an input of
 * `oracle run` as it stands; `--as a` writes IN's one tensor as `a` and `sfa`. The recipe registry is
 * `QUANT_RECIPES` (DeepGEMM's quantizers and the MX / NVFP4 recipes). FP4 codes are written as `F4` (element 0 in the
 * low nibble, byte for byte DeepGEMM's packed int8); packed UE8M0 scales are `I32` and listed in
 * `__metadata__.packed_ue8m0`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { quantizeCommand, scaleName } from "./quantize.ts";
 * assert.match(quantizeCommand.usage, /per_token_cast_to_fp8/);
 * assert.equal(scaleName("a"), "sfa");
 * assert.equal(scaleName("kv"), "kv_sf");
 * ```
 * @module
 */
import { isIntegerDType, type Tensor } from "../reference/tensor/mod.ts";
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
import { userPath } from "./paths.ts";

/**
 * The name DeepGEMM's functions give the scale factors of a tensor argument: `sfa` / `sfb` for the GEMM operands
 * `a` / `b` (`fp8_gemm_nt(a, sfa, b, sfb, ...)`), `<name>_sf` for the others (`x_sf`, `q_sf`, `kv_sf`, `l1_sf` of the
 * MQA and Mega MoE operations).
 * @param name the tensor's name
 * @returns its scales' name
 */
export function scaleName(name: string): string {
  return name === "a" || name === "b" ? `sf${name}` : `${name}_sf`;
}

const SCALE_RULES = ["floor", "ceil", "even", "rceil"] as const;

/** A file of the repository with BF16 `a` [8, 96] and `b` [64, 96] (a golden fixture), for the help's example. */
const EXAMPLE_INPUT = "fixtures/bf16_gemm_nt/bf16_gemm_nt_m8_n64_k96.safetensors";

/**
 * The tensors of a file to quantize: those `--tensor` names (every floating-point tensor when none is named), each
 * with the name it is written under (`--as` renames the one tensor).
 */
function selectTensors(
  tensors: ReadonlyMap<string, Tensor>,
  wanted: readonly string[],
  rename: string | undefined,
  file: string,
  io: CliIo,
): [source: string, name: string, x: Tensor][] {
  const integer = (x: Tensor) => isIntegerDType(x.dtype);
  for (const n of wanted) {
    const x = tensors.get(n);
    if (x === undefined) {
      throw new UsageError(`${file}: has no tensor "${n}" (--tensor); it has ${[...tensors.keys()].join(", ")}`);
    }
    if (integer(x)) throw new UsageError(`${file}: tensor "${n}" (--tensor) is ${x.dtype}, not floating-point`);
  }
  const chosen = [...tensors].filter(([n, x]) => {
    if (wanted.length > 0) return wanted.includes(n);
    if (integer(x)) io.stderr(`skipping integer tensor "${n}"\n`);
    return !integer(x);
  });
  if (chosen.length === 0) throw new UsageError(`${file}: has no floating-point tensor to quantize`);
  if (rename !== undefined) {
    if (!/^[A-Za-z_][A-Za-z0-9_./-]*$/.test(rename)) {
      throw new UsageError(`--as needs a tensor name, got ${JSON.stringify(rename)}`);
    }
    if (chosen.length !== 1) {
      throw new UsageError(
        `--as ${rename} renames one tensor, but ${chosen.length} of ${file} would be quantized (${
          chosen.map(([n]) => n).join(", ")
        }): name one with --tensor`,
      );
    }
  }
  return chosen.map(([n, x]) => [n, rename ?? n, x]);
}

const USAGE =
  `Usage: oracle quantize --recipe <name> [--tensor NAME]... [--as NAME] [--gran-k N] [--ue8m0] [--packed-ue8m0]
                       [--semantics gpu|cpu] [--scale-rule R] IN OUT

Quantizes every tensor of the safetensors file IN (2-D, any float dtype; integer tensors are skipped) with one of
DeepGEMM's utility quantizers and writes, for each tensor <name>, the codes as <name> and the scales under the name
DeepGEMM's functions give them: sfa for a, sfb for b, <name>_sf for the others (x_sf, q_sf, kv_sf, l1_sf), so OUT
is an input of 'oracle run' as it is ('oracle run' reads several input files: A and B quantized apart).

  --recipe NAME      ${QUANT_RECIPE_NAMES.join(", ")}
  --tensor NAME      quantize only this tensor of IN (repeatable; default: every floating-point tensor)
  --as NAME          write the one tensor quantized under this name (--as a: a and sfa; --as b: b and sfb), e.g.
                     a checkpoint's weight as DeepGEMM's b
  --gran-k N         elements per scale group along K (default 128)
  --ue8m0            round scales up to powers of two (ceil_to_ue8m0; DeepGEMM's use_ue8m0)
  --packed-ue8m0     pack four UE8M0 scale bytes per int32 (DeepGEMM's SM100 layout; needs --ue8m0)
  --semantics S      gpu (default): amax / 448 computed as amax · fl32(1/448) like PyTorch on CUDA; cpu: true division
  --scale-rule R     MX recipes: floor (default, OCP MX v1.0), ceil, even, rceil

An option the recipe does not read is an error (MX blocks are always 32 elements, NVFP4 blocks 16).

FP4 codes are written as F4 (two per byte, element 0 in the low nibble: byte for byte DeepGEMM's packed int8;
in PyTorch \`t.view(torch.int8)\`). NVFP4 recipes also write the per-tensor scale as <name>_global_sf.
The recipe and the options it read are recorded in OUT's __metadata__ (quant_recipe, gran_k, use_ue8m0, ...).

Example: a BF16 GEMM's inputs made DeepGEMM's FP8 inputs, A per token (1×128) and B per 128×128 block as its tests
do, then the FP8 GEMM's reference on both files:
  deno task oracle quantize --recipe per_token_cast_to_fp8 --tensor a ${EXAMPLE_INPUT} a.safetensors
  deno task oracle quantize --recipe per_block_cast_to_fp8 --tensor b ${EXAMPLE_INPUT} b.safetensors
  deno task oracle run fp8_gemm_nt a.safetensors b.safetensors d.safetensors

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
    tensor: { type: "string", multiple: true },
    as: { type: "string" },
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
  const [input, output] = positionals.map((p) => userPath(io, p));
  const file = await readSafetensors(input);
  const chosen = selectTensors(
    file.tensors,
    (values.tensor as string[] | undefined) ?? [],
    values.as as string | undefined,
    input,
    io,
  );
  const recipe = QUANT_RECIPES[recipeName];
  const out = new Map<string, Tensor>();
  const packed: string[] = [];
  for (const [source, name, x] of chosen) {
    const names = { codes: name, sf: scaleName(name), global: `${name}_global_sf` };
    // A scale name that is also a tensor quantized here (x and x_sf both in IN) would be written twice.
    for (const n of [names.sf, names.global]) {
      if (chosen.some(([, other]) => other === n)) {
        throw new UsageError(`${input}: output name "${n}" collides with a tensor quantized too`);
      }
    }
    let r: RecipeResult;
    try {
      r = recipe(x, { useUe8m0, granK, usePackedUe8m0, semantics, scaleRule: scaleRule as typeof SCALE_RULES[number] });
    } catch (e) {
      throw new UsageError(`tensor "${source}": ${(e as Error).message}`);
    }
    if (r.codes.dtype === "e2m1" && r.codes.numel % 2 !== 0) {
      throw new UsageError(`tensor "${source}": ${r.codes.numel} FP4 codes cannot be packed two per byte`);
    }
    out.set(names.codes, r.codes);
    out.set(names.sf, r.sf);
    if (r.globalSf) out.set(names.global, r.globalSf);
    if (r.sf.dtype === "i32") packed.push(names.sf);
  }
  // Not "recipe": that is a scalar of the FP8 GEMMs, which `oracle run` reads from __metadata__.
  const metadata: Record<string, string> = { ...file.metadata, quant_recipe: recipeName };
  // Only the options the recipe reads are recorded (an MX block is 32 elements whatever --gran-k says).
  if (honoured.includes("gran-k")) metadata.gran_k = String(granK);
  if (honoured.includes("ue8m0")) metadata.use_ue8m0 = String(useUe8m0);
  if (honoured.includes("semantics")) metadata.semantics = semantics;
  if (honoured.includes("scale-rule")) metadata.scale_rule = scaleRule;
  delete metadata[F4_NIBBLE_ORDER_KEY];
  delete metadata[PACKED_UE8M0_KEY];
  if (packed.length > 0) metadata[PACKED_UE8M0_KEY] = JSON.stringify(packed.sort());
  await writeSafetensors(output, out, metadata);
  io.stderr(
    `quantized ${chosen.length} tensor${chosen.length === 1 ? "" : "s"} of ${input} with ${recipeName} → ${output}: ${
      [...out.keys()].join(", ")
    }\n`,
  );
  return EXIT.ok;
}

/** The `quantize` subcommand. */
export const quantizeCommand: Command = Object.freeze({
  name: "quantize",
  summary: "quantize every tensor with a DeepGEMM quantizer (codes a, scales sfa: the names run reads)",
  usage: USAGE,
  run,
});
