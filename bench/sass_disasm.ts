/**
 * A cubin's SASS as text on a machine without the GPU image's `cuobjdump`: NVIDIA's `nvdisasm` of any CUDA version
 * (`--nvdisasm PATH`, else `$NVDISASM`, else `nvdisasm` on PATH), with the paths `bench/sass_flow.ts` measures printed
 * instruction by instruction (`--paths`), so that two kernels' prologues and epilogues can be read side by side.
 *
 * nvcc 13.0 writes its cubins in a newer ELF ABI (OS ABI 0x41, ABI version 8, the SM number in bits 8-15 of e_flags)
 * than CUDA 11.8's nvdisasm reads ("does not contain Cuda architecture information"): for such a tool the command
 * disassembles a copy whose header says OS ABI 0x33, ABI version 7, e_flags SM | SM << 16 | 0x500, as CUDA 11.8's
 * ptxas writes for sm_90 (`oldAbiHeader`). The instructions are the same bytes; an SM90 instruction that an older
 * nvdisasm does not know (11.8's lacks sm_90a's wgmma, QGMMA) is missing from its text, and is shown here by its
 * opcode, named where `SM90_OPCODES` names it. tests/bench/sass_disasm_test.ts checks the text against the opcodes at
 * the instructions bench/sass_layout.ts finds. Where to get an nvdisasm without a CUDA toolkit:
 * docs/performance-history.md, forty-first round.
 *
 *     deno run -A bench/sass_disasm.ts kernel.cubin [other.cubin ...] [--paths] [--nvdisasm PATH]
 *
 * @module
 */
import { benchArgs } from "./_args.ts";
import { describePaths, kernelPaths } from "./sass_flow.ts";
import { opcodeOf, readCubins, SM90_OPCODES, type TextFunction } from "./sass_layout.ts";

/** The ELF OS ABI byte nvcc 13.0 writes in cubins (CUDA's newer ELF ABI). */
const NEW_CUDA_OSABI = 0x41;

/**
 * A copy of a cubin with its ELF header in the older CUDA ABI (OS ABI 0x33, ABI version 7, e_flags SM | SM << 16 |
 * 0x500), or undefined where the cubin is not in the newer one (OS ABI 0x41). Only the header changes.
 * @param cubin the cubin's bytes
 * @returns the copy, or undefined
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { oldAbiHeader } from "./sass_disasm.ts";
 * const elf = new Uint8Array(64);
 * elf.set([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0x41, 8]);
 * new DataView(elf.buffer).setUint32(0x30, 0x6005a04, true);
 * const old = oldAbiHeader(elf)!;
 * assert.deepEqual([old[7], old[8], new DataView(old.buffer).getUint32(0x30, true)], [0x33, 7, 0x5a055a]);
 * ```
 */
export function oldAbiHeader(cubin: Uint8Array): Uint8Array | undefined {
  if (cubin.length < 64 || cubin[7] !== NEW_CUDA_OSABI) return undefined;
  const out = cubin.slice();
  const v = new DataView(out.buffer);
  const sm = (v.getUint32(0x30, true) >> 8) & 0xff;
  out[7] = 0x33;
  out[8] = 7;
  v.setUint32(0x30, sm | (sm << 16) | 0x500, true);
  return out;
}

/**
 * The instructions of nvdisasm's text (`nvdisasm -c`), per function: instruction index (byte offset / 16) → its text
 * without the trailing `;`.
 * @param text nvdisasm's output
 * @returns function name → index → text
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseNvdisasm } from "./sass_disasm.ts";
 * const t = "//----- .text.k -----\n        /*0000*\/                   S2R R2, SR_TID.X ;\n" +
 *   "        /*0020*\/               @P0 BRA `(.L_x_1) ;\n";
 * assert.deepEqual([...parseNvdisasm(t).get("k")!], [[0, "S2R R2, SR_TID.X"], [2, "@P0 BRA `(.L_x_1)"]]);
 * ```
 */
export function parseNvdisasm(text: string): Map<string, Map<number, string>> {
  const out = new Map<string, Map<number, string>>();
  let fn: Map<number, string> | undefined;
  for (const line of text.split("\n")) {
    const section = line.match(/^\/\/-+ \.text\.(\S+)/);
    if (section) {
      fn = new Map();
      out.set(section[1], fn);
      continue;
    }
    const ins = line.match(/^\s*\/\*([0-9a-f]+)\*\/\s+(.*?)\s*;\s*(\/\*.*)?$/);
    if (ins && fn) fn.set(parseInt(ins[1], 16) / 16, ins[2]);
  }
  return out;
}

const OPCODE_NAMES = new Map<number, string>(Object.entries(SM90_OPCODES).map(([k, v]) => [v, k]));

/**
 * One function's instructions as text: nvdisasm's where it decoded the instruction, else `<opcode 0xNNN: name>`.
 * @param fn the function (its bytes)
 * @param decoded nvdisasm's text of it (parseNvdisasm), possibly missing some indices
 * @returns one line per instruction, in code order
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { instructionTexts } from "./sass_disasm.ts";
 * const wgmma = new Uint8Array(16); wgmma[0] = 0xf3; wgmma[1] = 0x79;
 * assert.deepEqual(instructionTexts({ fn: "k", instructions: [wgmma, wgmma] }, new Map([[1, "NOP"]])),
 *   ["<opcode 0x9f3: qgmma>", "NOP"]);
 * ```
 */
export function instructionTexts(fn: TextFunction, decoded: Map<number, string>): string[] {
  return fn.instructions.map((w, i) => {
    const text = decoded.get(i);
    if (text !== undefined) return text;
    const op = opcodeOf(w);
    const name = OPCODE_NAMES.get(op);
    return `<opcode 0x${op.toString(16)}${name ? `: ${name}` : ""}>`;
  });
}

/**
 * Runs nvdisasm on a cubin (on an old-ABI copy where the tool cannot read the cubin's own header), or says why not.
 * @param nvdisasm the tool
 * @param cubin the cubin's bytes
 * @returns nvdisasm's text, or the reason it gave none
 */
export async function disassemble(nvdisasm: string, cubin: Uint8Array): Promise<{ text: string } | { error: string }> {
  const dir = await Deno.makeTempDir({ prefix: "go-sass-disasm-" });
  try {
    let reason = "";
    for (const bytes of [cubin, oldAbiHeader(cubin)]) {
      if (!bytes) continue;
      await Deno.writeFile(`${dir}/k.cubin`, bytes);
      let out: Deno.CommandOutput;
      try {
        out = await new Deno.Command(nvdisasm, { args: ["-c", `${dir}/k.cubin`], stdout: "piped", stderr: "piped" })
          .output();
      } catch (e) {
        return { error: `${nvdisasm} does not run: ${e instanceof Error ? e.message : e}` };
      }
      if (out.success) return { text: new TextDecoder().decode(out.stdout) };
      reason = new TextDecoder().decode(out.stderr).trim();
    }
    return { error: reason };
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

if (import.meta.main) {
  const usage = "usage: deno run -A bench/sass_disasm.ts kernel.cubin [other.cubin ...] [--paths] [--nvdisasm PATH]";
  const { values, positionals } = benchArgs(usage, {
    options: { paths: { type: "boolean" }, nvdisasm: { type: "string" } },
    allowPositionals: true,
  });
  if (positionals.length === 0) {
    console.error(usage);
    Deno.exit(2);
  }
  const nvdisasm = values.nvdisasm ?? Deno.env.get("NVDISASM") ?? "nvdisasm";
  for (const { path, bytes, fns } of await readCubins(positionals)) {
    const r = await disassemble(nvdisasm, bytes);
    if ("error" in r) {
      console.error(`${path}: nvdisasm gave no text: ${r.error}`);
      Deno.exit(2);
    }
    const decoded = parseNvdisasm(r.text);
    for (const fn of fns) {
      const texts = instructionTexts(fn, decoded.get(fn.fn) ?? new Map());
      if (!values.paths) {
        console.log(`${path}: ${fn.fn}`);
        texts.forEach((t, i) => console.log(`${String(i).padStart(5)}  ${t}`));
        continue;
      }
      const paths = kernelPaths(fn.instructions);
      console.log(`${path}: ${describePaths(fn.fn, texts.length, paths)}`);
      for (const [name, p] of Object.entries(paths)) {
        if (!p) continue;
        console.log(`-- ${name} (${p.from}-${p.end})`);
        for (const [a, b] of p.runs) {
          for (let i = a; i <= b; ++i) console.log(`${String(i).padStart(5)}  ${texts[i]}`);
          console.log("  ...");
        }
      }
    }
  }
}
