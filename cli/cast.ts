/**
 * `oracle cast --to FORMAT --profile NAME IN OUT`: converts every floating-point tensor of IN to FORMAT with a named
 * conversion profile (numerics.md §10: `ml_dtypes`, `torch_2_11`, `cuda_satfinite`, ...), keeping the names.
 * Values are first decoded to fp32 exactly (every narrow format is a subset of fp32), then encoded by the profile.
 * Integer tensors (indices, `grouped_layout`, packed UE8M0 scales) are copied unchanged.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { CAST_TARGETS } from "./cast.ts";
 * assert.equal(CAST_TARGETS.fp16.dtype, "f16");
 * ```
 * @module
 */
import { encodeArray, PROFILE_NAMES, profileRule } from "../reference/formats/mod.ts";
import type { FormatName } from "../reference/formats/mod.ts";
import { type DType, DTYPES, type Storage, Tensor } from "../reference/tensor/mod.ts";
import { toFloat32Bits } from "../reference/tensor/values.ts";
import { F4_NIBBLE_ORDER_KEY, readSafetensors, writeSafetensors } from "../io/mod.ts";
import { type CliIo, type Command, EXIT, expectPositionals, parseCommandArgs, UsageError } from "./command.ts";
import { userPath } from "./paths.ts";

/** The `--to` names (interfaces.md §3), their tensor dtype and their format-table name. */
export const CAST_TARGETS: Readonly<Record<string, { dtype: DType; format: FormatName }>> = Object.freeze({
  f32: { dtype: "f32", format: "f32" },
  bf16: { dtype: "bf16", format: "bf16" },
  fp16: { dtype: "f16", format: "fp16" },
  e4m3: { dtype: "e4m3", format: "e4m3" },
  e5m2: { dtype: "e5m2", format: "e5m2" },
  e2m1: { dtype: "e2m1", format: "e2m1" },
  ue8m0: { dtype: "ue8m0", format: "ue8m0" },
});

const USAGE = `Usage: oracle cast --to <${Object.keys(CAST_TARGETS).join("|")}> --profile <name> IN OUT

Converts every floating-point tensor of the safetensors file IN to the format given by --to, with the named
conversion profile, and writes OUT with the same tensor names. Values are decoded to fp32 exactly first.
Integer tensors are copied unchanged. --profile may be left out only for --to f32.

Profiles: ${PROFILE_NAMES.join(", ")}

Example: a golden fixture's tensors as E4M3, converted as PyTorch 2.11 converts them on the CPU:
  deno task oracle cast --to e4m3 --profile torch_2_11 fixtures/bf16_gemm_nt/bf16_gemm_nt_m8_n64_k96.safetensors e4m3.safetensors

Exit status: 0 written, 2 bad arguments or unusable input.`;

/**
 * Casts every floating-point tensor (the function behind `oracle cast`).
 * @param tensors input tensors
 * @param to a key of {@link CAST_TARGETS}
 * @param profile a conversion profile (ignored for f32)
 * @returns the converted tensors, same names
 */
export function castTensors(
  tensors: Map<string, Tensor>,
  to: string,
  profile: string | undefined,
): Map<string, Tensor> {
  if (!Object.hasOwn(CAST_TARGETS, to)) {
    throw new UsageError(`--to "${to}" is not one of ${Object.keys(CAST_TARGETS).join(", ")}`);
  }
  const target = CAST_TARGETS[to];
  if (target.format !== "f32") {
    if (profile === undefined) throw new UsageError(`--profile is required for --to ${to}`);
    try {
      profileRule(profile, target.format);
    } catch (e) {
      throw new UsageError((e as Error).message);
    }
  }
  const out = new Map<string, Tensor>();
  for (const [name, t] of tensors) {
    if (!DTYPES[t.dtype].codes && t.dtype !== "f32") {
      out.set(name, t);
      continue;
    }
    if (target.dtype === "e2m1" && t.numel % 2 !== 0) {
      throw new UsageError(
        `tensor "${name}" has ${t.numel} elements: e2m1 files pack two per byte, so the count must be even`,
      );
    }
    const bits = toFloat32Bits(t);
    const data: Storage = target.format === "f32"
      ? new Float32Array(bits.buffer)
      : encodeArray(profile!, target.format, bits) as Storage;
    out.set(name, Tensor.from(target.dtype, t.shape, data));
  }
  return out;
}

async function run(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseCommandArgs(args, {
    to: { type: "string" },
    profile: { type: "string" },
  }, "cast");
  if (values.help) {
    io.stdout(USAGE + "\n");
    return EXIT.ok;
  }
  expectPositionals("cast", positionals, ["IN", "OUT"]);
  if (typeof values.to !== "string") throw new UsageError("--to is required (see oracle cast --help)");
  const [input, output] = positionals.map((p) => userPath(io, p));
  const file = await readSafetensors(input);
  const profile = values.profile as string | undefined;
  const cast = castTensors(file.tensors, values.to, profile);
  const metadata: Record<string, string> = { ...file.metadata, cast_to: values.to };
  delete metadata[F4_NIBBLE_ORDER_KEY];
  if (profile !== undefined) metadata.profile = profile;
  await writeSafetensors(output, cast, metadata);
  io.stderr(`cast ${cast.size} tensors of ${input} to ${values.to}${profile ? ` (${profile})` : ""} → ${output}\n`);
  return EXIT.ok;
}

/** The `cast` subcommand. */
export const castCommand: Command = Object.freeze({
  name: "cast",
  summary: "convert every tensor of a file to another format with a named conversion profile",
  usage: USAGE,
  run,
});
