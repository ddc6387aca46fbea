/**
 * Where a kernel's instructions lie, read from a cubin without a disassembler (this machine has no cuobjdump): each
 * `.text.<function>` section (`elfSections`, which bench/sass_banks.ts and bench/sass_control.ts read cubins through
 * too) as 16-byte SM90 instructions, told apart by the opcode in their low 12 bits. The opcodes (`SM90_OPCODES`, the
 * one table of them) are those nvcc 13.0 gives kernels of one instruction each, which tests/kernels/sass_layout_test.ts
 * compiles and reads back (the FFMA's: tests/kernels/sass_control_test.ts). The same test pins what the layout showed
 * of the fast FP8 kernel: the producer's setmaxnreg and first TMA copy lie past the math's code, and the profiling
 * build loads the trace buffer's address from constant bank 4 before its first clock read (docs/performance-history.md,
 * twenty-sixth round, where DeepGEMM's kernel is compared).
 *
 *     deno run -A bench/sass_layout.ts kernel.cubin [other.cubin ...]
 *
 * @module
 */
import { benchArgs, readInput } from "./_args.ts";

/** SM90 opcodes (the low 12 bits of an instruction) of the instructions the SASS scripts name. */
export const SM90_OPCODES = {
  /** SETMAXNREG (setmaxnreg.inc / .dec); the register count is the instruction's byte 4. */
  setmaxnreg: 0x9c8,
  /** UTMALDG, a TMA copy (cp.async.bulk.tensor) from global memory. */
  tmaLoad: 0x5b4,
  /** UTMASTG, a TMA copy from shared to global memory: the epilogue's store of D. */
  tmaStore: 0x3b5,
  /** QGMMA, a wgmma of FP8 operands (wgmma.mma_async ... e4m3). */
  qgmma: 0x9f3,
  /** LDC, a load from a constant bank; the bank is bits 54-58. */
  ldc: 0xb82,
  /** CS2R; reading SR_CLOCKLO (clock64) where byte 9 is 0x50. */
  cs2r: 0x805,
  /** FFMA with all-register operands (bench/sass_banks.ts decodes its registers, bench/sass_control.ts its control
   * bits). */
  ffma: 0x223,
  /** LDGSTS, a copy from global to shared memory (cp.async): the fast kernel's SFB loader and SFA copies. */
  cpAsync: 0xfae,
  /** STL and LDL, a store to and a load from local memory: where ptxas spills registers. */
  stl: 0x387,
  ldl: 0x983,
  /** The control instructions bench/sass_flow.ts follows: BRA and CALL.REL (their target in 4-byte units, bits 16-23
   * and 34-81), BSSY (a reconvergence point, in bytes, bits 32-81), BSYNC, EXIT and RET. */
  bra: 0x947,
  call: 0x944,
  bssy: 0x945,
  bsync: 0x941,
  exit: 0x94d,
  ret: 0x950,
} as const;

/**
 * The opcode of one 16-byte SM90 instruction: the low 12 bits of its low word.
 * @param instruction the instruction's bytes, little-endian
 * @returns the opcode
 * @example
 * ```ts
 * import { opcodeOf, SM90_OPCODES } from "./sass_layout.ts";
 * if (opcodeOf(new Uint8Array([0x23, 0x72, 0, 0])) !== SM90_OPCODES.ffma) throw new Error();
 * ```
 */
export function opcodeOf(instruction: Uint8Array): number {
  return (instruction[0] | (instruction[1] << 8)) & 0xfff;
}

/** One function of a cubin: its name and its 16-byte instructions in code order. */
export interface TextFunction {
  fn: string;
  instructions: Uint8Array[];
}

/** A named section of an ELF64 file (a cubin): its name and bytes. */
export interface ElfSection {
  name: string;
  bytes: Uint8Array;
}

/**
 * The sections of an ELF64 file, in header order; [] where the bytes are not ELF64.
 *
 * @example
 * ```ts
 * import { elfSections } from "./sass_layout.ts";
 * if (elfSections(new Uint8Array(64)).length !== 0) throw new Error("not ELF");
 * ```
 */
export function elfSections(elf: Uint8Array): ElfSection[] {
  const v = new DataView(elf.buffer, elf.byteOffset, elf.byteLength);
  if (elf.length < 64 || v.getUint32(0) !== 0x7f454c46 || elf[4] !== 2) return [];
  const shoff = Number(v.getBigUint64(0x28, true)), shentsize = v.getUint16(0x3a, true);
  const shnum = v.getUint16(0x3c, true), shstrndx = v.getUint16(0x3e, true);
  const header = (i: number) => shoff + i * shentsize;
  if (shstrndx >= shnum || header(shnum) > elf.length) return [];
  const strtab = Number(v.getBigUint64(header(shstrndx) + 0x18, true));
  const decoder = new TextDecoder();
  const out: ElfSection[] = [];
  for (let i = 0; i < shnum; ++i) {
    const at = strtab + v.getUint32(header(i), true), end = elf.indexOf(0, at);
    const offset = Number(v.getBigUint64(header(i) + 0x18, true)),
      size = Number(v.getBigUint64(header(i) + 0x20, true));
    if (end < at || offset + size > elf.length) continue;
    out.push({ name: decoder.decode(elf.subarray(at, end)), bytes: elf.subarray(offset, offset + size) });
  }
  return out;
}

/**
 * The functions of a cubin's sections: each `.text.<function>` section as its 16-byte instructions.
 * @param sections the cubin's sections (elfSections)
 * @returns one entry per function, in section order
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { textFunctions } from "./sass_layout.ts";
 * const [f] = textFunctions([{ name: ".text.k", bytes: new Uint8Array(32) }, { name: ".data", bytes: new Uint8Array(16) }]);
 * assert.deepEqual([f.fn, f.instructions.length], ["k", 2]);
 * ```
 */
export function textFunctions(sections: ElfSection[]): TextFunction[] {
  return sections.filter((s) => s.name.startsWith(".text.")).map((s) => ({
    fn: s.name.slice(".text.".length),
    instructions: Array.from(
      { length: Math.floor(s.bytes.length / 16) },
      (_, i) => s.bytes.subarray(16 * i, 16 * i + 16),
    ),
  }));
}

/**
 * A command's cubins: each file's bytes and functions, read in turn; a file that cannot be read or is not a cubin with
 * a .text section ends the command with status 2 and a line naming it (the SASS scripts' inputs).
 * @param paths the files
 * @returns each file with its functions
 */
export async function readCubins(paths: string[]): Promise<{ path: string; bytes: Uint8Array; fns: TextFunction[] }[]> {
  const out = [];
  for (const path of paths) {
    const bytes = await readInput(path);
    const fns = textFunctions(elfSections(bytes));
    if (fns.length === 0) {
      console.error(`${path}: not a cubin with a .text section`);
      Deno.exit(2);
    }
    out.push({ path, bytes, fns });
  }
  return out;
}

/**
 * The cubins a command of no options names (readCubins); none named ends it with status 2 and its usage.
 * @param usage the command's usage line
 * @returns each file with its functions
 */
export async function cubinInputs(usage: string): Promise<Awaited<ReturnType<typeof readCubins>>> {
  const { positionals } = benchArgs(usage, { options: {}, allowPositionals: true });
  if (positionals.length === 0) {
    console.error(`no cubin given\n${usage}`);
    Deno.exit(2);
  }
  return await readCubins(positionals);
}

/** One function's layout: instruction indices (16 bytes each) from the section's start. */
export interface SassLayout {
  fn: string;
  instructions: number;
  /** Each setmaxnreg and the register count it sets. */
  setmaxnreg: { at: number; regs: number }[];
  tmaLoads: number[];
  /** Each cp.async copy (LDGSTS). */
  cpAsyncs: number[];
  /** Each LDC and its constant bank (0: the kernel's parameters; 4: global symbols' addresses). */
  constLoads: { at: number; bank: number }[];
  /** Each clock64 read. */
  clockReads: number[];
  /** Each store to and load from local memory (register spills). */
  localStores: number[];
  localLoads: number[];
}

/**
 * The layout of each `.text.<function>` section of a cubin (none for a file that is not a 64-bit ELF).
 * @param cubin the cubin's bytes
 * @returns one layout per function
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { sassLayout } from "./sass_layout.ts";
 * assert.deepEqual(sassLayout(new Uint8Array(16)), []);
 * ```
 */
export function sassLayout(cubin: Uint8Array): SassLayout[] {
  return textFunctions(elfSections(cubin)).map(({ fn, instructions }) => {
    const l: SassLayout = {
      fn,
      instructions: instructions.length,
      setmaxnreg: [],
      tmaLoads: [],
      cpAsyncs: [],
      constLoads: [],
      clockReads: [],
      localStores: [],
      localLoads: [],
    };
    instructions.forEach((w, at) => {
      const op = opcodeOf(w);
      if (op === SM90_OPCODES.setmaxnreg) l.setmaxnreg.push({ at, regs: w[4] });
      else if (op === SM90_OPCODES.tmaLoad) l.tmaLoads.push(at);
      else if (op === SM90_OPCODES.cpAsync) l.cpAsyncs.push(at);
      else if (op === SM90_OPCODES.ldc) l.constLoads.push({ at, bank: (w[6] >> 6 | w[7] << 2) & 0x1f });
      else if (op === SM90_OPCODES.cs2r && w[9] === 0x50) l.clockReads.push(at);
      else if (op === SM90_OPCODES.stl) l.localStores.push(at);
      else if (op === SM90_OPCODES.ldl) l.localLoads.push(at);
    });
    return l;
  });
}

/**
 * One line of a layout: the instruction count, each setmaxnreg, the first TMA copy, the span of the cp.async copies,
 * the first clock read, the first load from constant bank 4 and the spills (local stores and loads) where there are
 * any.
 * @param l the layout
 * @returns the line
 * @example
 * ```ts
 * import { describeLayout } from "./sass_layout.ts";
 * const l = {
 *   fn: "k", instructions: 9, setmaxnreg: [{ at: 1, regs: 64 }], tmaLoads: [5], cpAsyncs: [2, 3], constLoads: [],
 *   clockReads: [], localStores: [7], localLoads: [8],
 * };
 * const want = "k: 9 instructions; setmaxnreg 64 at 1; first TMA copy at 5; 2 cp.async copies at 2-3; " +
 *   "1 local stores and 1 local loads (spills) from 7";
 * if (describeLayout(l) !== want) throw new Error(describeLayout(l));
 * ```
 */
export function describeLayout(l: SassLayout): string {
  const bank4 = l.constLoads.find((c) => c.bank === 4);
  return [
    `${l.fn}: ${l.instructions} instructions`,
    ...l.setmaxnreg.map((s) => `setmaxnreg ${s.regs} at ${s.at}`),
    ...(l.tmaLoads.length ? [`first TMA copy at ${l.tmaLoads[0]}`] : []),
    ...(l.cpAsyncs.length
      ? [`${l.cpAsyncs.length} cp.async copies at ${l.cpAsyncs[0]}-${l.cpAsyncs[l.cpAsyncs.length - 1]}`]
      : []),
    ...(l.clockReads.length ? [`first clock read at ${l.clockReads[0]}`] : []),
    ...(bank4 ? [`first load from constant bank 4 at ${bank4.at}`] : []),
    ...(l.localStores.length || l.localLoads.length
      ? [
        `${l.localStores.length} local stores and ${l.localLoads.length} local loads (spills) from ${
          Math.min(...l.localStores, ...l.localLoads)
        }`,
      ]
      : []),
  ].join("; ");
}

if (import.meta.main) {
  for (
    const { path, bytes } of await cubinInputs("usage: deno run -A bench/sass_layout.ts kernel.cubin [other.cubin ...]")
  ) {
    for (const l of sassLayout(bytes)) console.log(`${path}: ${describeLayout(l)}`);
  }
}
