/**
 * Register-bank pressure of a kernel's FFMAs, from `cuobjdump -sass` text: per function, how many FFMAs read two or
 * more source registers from one bank, under a model of the banks (`reg mod B`, B = 2 and 4 by default) and of the
 * operand reuse cache (a source whose slot in the previous instruction, an FFMA too, held the same register marked
 * `.reuse` comes from the cache, not from a bank). Hopper's register banks are not published; the two models are
 * the layouts reverse-engineered for earlier GPUs (four 32-bit banks, Maxwell; two 64-bit banks, Volta), so the counts
 * compare two kernels' allocations, they do not predict a cost. At 4096×7168×16384 (BLOCK_M 256 × BLOCK_N 128) the
 * promotion's FFMAs of ours and of DeepGEMM's kernel: 54 % and 56 % with two banks, 44 % and 21 % with four; the
 * same FFMAs in another order took ours to 11 % with four banks and ran level (docs/performance-history.md,
 * twenty-fourth round), so the four-bank count is not what costs cycles there.
 *
 *     cuobjdump -sass kernel.cubin > kernel.sass
 *     deno run -A bench/sass_banks.ts kernel.sass [other.sass | other.cubin ...] [--banks 2,4] [--first 1024]
 *
 * `--first N` counts each function's first N FFMAs only (the K loop's, where it comes first). A `.cubin` is read
 * without cuobjdump (this machine has none): its `.text.<function>` sections decoded as 16-byte SM90 instructions, of
 * which only the all-register FFMA matters here (`decodeFfma`).
 *
 * @module
 */
import { benchArgs, readInput } from "./_args.ts";
import { type ElfSection, elfSections, opcodeOf, SM90_OPCODES, textFunctions } from "./sass_layout.ts";

/** One source operand: its register number (undefined for RZ, constants and immediates) and its reuse flag. */
export interface SassSource {
  reg?: number;
  reuse: boolean;
}

/** One instruction: its function, its opcode (without predicate and modifiers) and its first three sources. */
export interface SassLine {
  fn: string;
  opcode: string;
  sources: SassSource[];
}

/** Bank conflicts of one function's FFMAs under one bank count. */
export interface BankCount {
  fn: string;
  banks: number;
  ffma: number;
  /** FFMAs with at least two register-file reads in one bank. */
  conflicted: number;
}

const INSTR = /^\s*\/\*[0-9a-f]+\*\/\s+([^;]*);/;
const FUNCTION = /^\s*Function : (\S+)/;

/**
 * The instructions of `cuobjdump -sass` text, with the function each belongs to.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseSass } from "./sass_banks.ts";
 * const at = (a: string) => `/${"*"}${a}${"*"}/`; // cuobjdump's address comment
 * const [l] = parseSass(`Function : k\n        ${at("0010")}   @P0 FFMA R1, R2, R3.reuse, RZ ;\n`);
 * assert.deepEqual(l, { fn: "k", opcode: "FFMA", sources: [{ reg: 2, reuse: false }, { reg: 3, reuse: true }, { reuse: false }] });
 * ```
 */
export function parseSass(text: string): SassLine[] {
  const out: SassLine[] = [];
  let fn = "";
  for (const line of text.split("\n")) {
    const f = FUNCTION.exec(line);
    if (f) {
      fn = f[1];
      continue;
    }
    const m = INSTR.exec(line);
    if (!m) continue;
    const body = m[1].replace(/^@!?U?P\w+\s+/, "").trim();
    const sp = body.indexOf(" ");
    const opcode = (sp < 0 ? body : body.slice(0, sp)).split(".")[0];
    const operands = sp < 0 ? [] : body.slice(sp + 1).split(",").map((o) => o.trim());
    const sources = operands.slice(1, 4).map((o) => {
      const r = /^-?\|?R(\d+)(\.reuse)?/.exec(o);
      return r ? { reg: Number(r[1]), reuse: r[2] !== undefined } : { reuse: false };
    });
    out.push({ fn, opcode, sources });
  }
  return out;
}

/**
 * Per function, the FFMAs (the first `first` of them, if given) and how many read two or more registers from one bank
 * (`reg mod banks`), the reuse cache modelled as the module doc says.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { bankConflicts, parseSass } from "./sass_banks.ts";
 * const at = (a: string) => `/${"*"}${a}${"*"}/`; // cuobjdump's address comment
 * const sass = [
 *   "Function : k",
 *   `${at("0000")} FFMA R8, R24, R5, R8 ;`, // banks (4): 0, 1, 0: a conflict
 *   `${at("0010")} FFMA R9, R26, R5.reuse, R13 ;`, // 2, 1, 1: a conflict (R5 read from its bank, kept for the next)
 *   `${at("0020")} FFMA R10, R28, R5, R14 ;`, // R5 from the cache: 0, 2: none (two banks: 0, 0)
 * ].join("\n");
 * assert.deepEqual(bankConflicts(parseSass(sass), 4), [{ fn: "k", banks: 4, ffma: 3, conflicted: 2 }]);
 * assert.deepEqual(bankConflicts(parseSass(sass), 4, 2), [{ fn: "k", banks: 4, ffma: 2, conflicted: 2 }]);
 * assert.deepEqual(bankConflicts(parseSass(sass), 2), [{ fn: "k", banks: 2, ffma: 3, conflicted: 3 }]);
 * ```
 */
export function bankConflicts(lines: SassLine[], banks: number, first?: number): BankCount[] {
  const out = new Map<string, BankCount>();
  let prev: SassLine | undefined;
  for (const l of lines) {
    if (l.opcode !== "FFMA") {
      prev = undefined;
      continue;
    }
    const c = out.get(l.fn) ?? { fn: l.fn, banks, ffma: 0, conflicted: 0 };
    out.set(l.fn, c);
    const before = prev;
    prev = l;
    if (first !== undefined && c.ffma >= first) continue;
    const cached = (s: SassSource, k: number) =>
      before !== undefined && before.fn === l.fn && before.sources[k]?.reuse === true &&
      before.sources[k].reg === s.reg;
    const reads = l.sources.filter((s, k) => s.reg !== undefined && !cached(s, k)).map((s) => s.reg! % banks);
    c.ffma += 1;
    if (new Set(reads).size < reads.length) c.conflicted += 1;
  }
  return [...out.values()];
}

/**
 * One 16-byte SM90 instruction as an SassLine, where it is an FFMA with four register operands (SM90_OPCODES.ffma in the
 * low 12 bits): Rd, Ra, Rb in bits 16-23, 24-31, 32-39 of the low word, Rc in bits 0-7 of the high word, the reuse
 * flags of a, b, c in the high word's bits 58, 59, 60, register 255 is RZ (read off cuobjdump's encodings of the fast
 * kernel and DeepGEMM's, docs/performance-history.md, sixteenth round). Anything else: opcode "?", which ends the
 * reuse cache as any other instruction does.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { decodeFfma } from "./sass_banks.ts";
 * // cuobjdump: FFMA R196, R25, R198.reuse, R196 ; /* 0x000000c619c47223 *\/ /* 0x080fe200000000c4 *\/
 * const w = new Uint8Array(16), v = new DataView(w.buffer);
 * v.setBigUint64(0, 0x000000c619c47223n, true);
 * v.setBigUint64(8, 0x080fe200000000c4n, true);
 * assert.deepEqual(decodeFfma("k", w), {
 *   fn: "k",
 *   opcode: "FFMA",
 *   sources: [{ reg: 25, reuse: false }, { reg: 198, reuse: true }, { reg: 196, reuse: false }],
 * });
 * ```
 */
export function decodeFfma(fn: string, instruction: Uint8Array): SassLine {
  const v = new DataView(instruction.buffer, instruction.byteOffset, 16);
  const lo = v.getBigUint64(0, true), hi = v.getBigUint64(8, true);
  if (opcodeOf(instruction) !== SM90_OPCODES.ffma) return { fn, opcode: "?", sources: [] };
  const reg = (x: bigint) => Number(x & 0xffn);
  const src = (r: number, bit: bigint) => ({ ...(r === 255 ? {} : { reg: r }), reuse: ((hi >> bit) & 1n) === 1n });
  return {
    fn,
    opcode: "FFMA",
    sources: [src(reg(lo >> 24n), 58n), src(reg(lo >> 32n), 59n), src(reg(hi), 60n)],
  };
}

/** The instructions of a cubin's `.text.<function>` sections (elfSections; decodeFfma: FFMAs, the rest as "?"). */
export function parseCubin(sections: ElfSection[]): SassLine[] {
  return textFunctions(sections).flatMap(({ fn, instructions }) => instructions.map((w) => decodeFfma(fn, w)));
}

if (import.meta.main) {
  const usage = "usage: deno run -A bench/sass_banks.ts kernel.sass|kernel.cubin [...] [--banks 2,4] [--first N]";
  const { values, positionals } = benchArgs(usage, {
    allowPositionals: true,
    options: { banks: { type: "string", default: "2,4" }, first: { type: "string" } },
  });
  const banks = values.banks.split(",").map(Number);
  const first = values.first === undefined ? undefined : Number(values.first);
  if (
    positionals.length === 0 || banks.some((b) => !Number.isInteger(b) || b < 1) ||
    (first !== undefined && !(Number.isInteger(first) && first > 0))
  ) {
    console.error(usage);
    Deno.exit(2);
  }
  console.log(`| file | function | FFMAs | ${banks.map((b) => `conflicted, ${b} banks`).join(" | ")} |`);
  console.log(`|---|---|---|${banks.map(() => "---|").join("")}`);
  for (const path of positionals) {
    const bytes = await readInput(path);
    const sections = elfSections(bytes), cubin = sections.length > 0;
    const lines = cubin ? parseCubin(sections) : parseSass(new TextDecoder().decode(bytes));
    const per = banks.map((b) => bankConflicts(lines, b, first));
    if (per[0].length === 0) {
      console.error(`${path}: no FFMA in ${cubin ? "the cubin's .text sections" : "cuobjdump -sass text"}`);
      Deno.exit(2);
    }
    per[0].forEach((c, i) => {
      const cells = per.map((p) => `${p[i].conflicted} (${Math.round(100 * p[i].conflicted / p[i].ffma)} %)`);
      console.log(`| ${path} | ${c.fn.slice(0, 60)} | ${c.ffma} | ${cells.join(" | ")} |`);
    });
  }
}
