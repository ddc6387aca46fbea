/**
 * The scheduling control bits ptxas gives a kernel's runs of FFMAs, read from a cubin without a disassembler (this
 * machine has no cuobjdump). Every 16-byte SM90 instruction carries them in its high word, laid out as Jia et al.
 * decoded them on Volta ("Dissecting the NVIDIA Volta GPU Architecture via Microbenchmarking", arXiv:1804.06826,
 * §2.1; bits 105-125 of the instruction): stall cycles in bits 41-44 of the high word, the yield flag in 45, the write
 * and read barrier indices in 46-48 and 49-51 (7: none), the wait barrier mask in 52-57 and the operand reuse flags in
 * 58-61. A run is a stretch of at least `minLength` FFMAs with at most `maxGap` other instructions between two of them:
 * the promotion of a wave's accumulators (64 FFMAs at BLOCK_N 128) is one.
 *
 * What it showed (docs/performance-history.md, thirty-second round): at 4096×7168×16384 (BLOCK_M 256 × BLOCK_N 128,
 * clusters of 2) ptxas 13.0 gives the promotion runs of our kernel and of DeepGEMM's a stall of 1 throughout and a
 * yield flag that alternates from one FFMA to the next over each run's bulk (they differ in the few FFMAs at a run's
 * ends), so the FFMA interleaving DeepGEMM's README credits nvcc >= 12.9 with is in both kernels alike.
 *
 *     deno run -A bench/sass_control.ts kernel.cubin [other.cubin ...] [--min-run 32] [--max-gap 3] [--runs]
 *
 * It prints one line per function; `--runs` adds one per run (where it starts, its yield bits), whose starts give the
 * instructions between two waves' promotions (at that shape 195 a K block in ours, 191 in DeepGEMM's).
 *
 * @module
 */
import { benchArgs } from "./_args.ts";
import { elfSections, opcodeOf, readCubins, SM90_OPCODES, textFunctions } from "./sass_layout.ts";

/** The control fields of one instruction (the module doc says where each lies). */
export interface SassControl {
  /** The instruction's opcode: the low 12 bits of its low word. */
  opcode: number;
  /** Cycles the scheduler waits before it issues the next instruction of the warp. */
  stall: number;
  /** Bit 45 of the high word, the yield flag, as it is encoded. */
  yieldBit: 0 | 1;
  /** The scoreboard this instruction's result sets (7: none). */
  writeBarrier: number;
  /** The scoreboard this instruction's source reads set (7: none). */
  readBarrier: number;
  /** The scoreboards this instruction waits on, bit i for scoreboard i. */
  waitMask: number;
  /** Operand reuse flags, bit 0 for source a. */
  reuse: number;
}

/**
 * The control fields of one 16-byte SM90 instruction.
 * @param instruction the instruction's 16 bytes, little-endian
 * @returns its opcode and control fields
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { controlOf } from "./sass_control.ts";
 * // cuobjdump: FFMA R196, R25, R198.reuse, R196 ; /* 0x000000c619c47223 *\/ /* 0x080fe200000000c4 *\/
 * const w = new Uint8Array(16), v = new DataView(w.buffer);
 * v.setBigUint64(0, 0x000000c619c47223n, true);
 * v.setBigUint64(8, 0x080fe200000000c4n, true);
 * assert.deepEqual(controlOf(w), {
 *   opcode: 0x223, stall: 1, yieldBit: 1, writeBarrier: 7, readBarrier: 7, waitMask: 0, reuse: 0b10,
 * });
 * ```
 */
export function controlOf(instruction: Uint8Array): SassControl {
  const v = new DataView(instruction.buffer, instruction.byteOffset, 16);
  const hi = v.getBigUint64(8, true);
  const field = (at: bigint, bits: bigint) => Number((hi >> at) & ((1n << bits) - 1n));
  return {
    opcode: opcodeOf(instruction),
    stall: field(41n, 4n),
    yieldBit: field(45n, 1n) as 0 | 1,
    writeBarrier: field(46n, 3n),
    readBarrier: field(49n, 3n),
    waitMask: field(52n, 6n),
    reuse: field(58n, 4n),
  };
}

/** One run of FFMAs in a function (FfmaControl.runs). */
export interface FfmaRun {
  /** Index (16-byte instructions from the section's start) of its first FFMA. */
  start: number;
  /** Its FFMAs' yield bits in order, as a string of 0 and 1. */
  yieldBits: string;
  /** How many of its FFMAs have each stall count. */
  stalls: Record<number, number>;
  /** How many of its FFMAs carry at least one reuse flag. */
  reused: number;
}

/** One function's FFMAs: how many have each yield bit, and its runs. */
export interface FfmaControl {
  /** The function (the `.text.` section's name without its prefix). */
  fn: string;
  /** Its FFMAs with all-register operands. */
  ffma: number;
  /** FFMAs whose yield bit is 0. */
  yield0: number;
  /** Its runs, in code order. */
  runs: FfmaRun[];
}

/**
 * Each function's FFMAs and their runs, from a cubin's `.text.<function>` sections.
 * @param cubin the cubin's bytes
 * @param minLength the fewest FFMAs a run holds (default 32)
 * @param maxGap the most other instructions between two FFMAs of one run (default 3)
 * @returns one entry per function ([] for a file that is not a 64-bit ELF)
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ffmaControl } from "./sass_control.ts";
 * assert.deepEqual(ffmaControl(new Uint8Array(16)), []);
 * ```
 */
export function ffmaControl(cubin: Uint8Array, minLength = 32, maxGap = 3): FfmaControl[] {
  return textFunctions(elfSections(cubin)).map(({ fn, instructions }) => {
    const out: FfmaControl = { fn, ffma: 0, yield0: 0, runs: [] };
    let run: { start: number; last: number; ctl: SassControl[] } | undefined;
    const close = () => {
      if (run && run.ctl.length >= minLength) {
        const stalls: Record<number, number> = {};
        for (const c of run.ctl) stalls[c.stall] = (stalls[c.stall] ?? 0) + 1;
        out.runs.push({
          start: run.start,
          yieldBits: run.ctl.map((c) => c.yieldBit).join(""),
          stalls,
          reused: run.ctl.filter((c) => c.reuse !== 0).length,
        });
      }
      run = undefined;
    };
    for (const [at, w] of instructions.entries()) {
      const c = controlOf(w);
      if (c.opcode !== SM90_OPCODES.ffma) continue;
      out.ffma += 1;
      if (c.yieldBit === 0) out.yield0 += 1;
      if (run && at - run.last - 1 > maxGap) close();
      run ??= { start: at, last: at, ctl: [] };
      run.last = at;
      run.ctl.push(c);
    }
    close();
    return out;
  });
}

/**
 * A run's yield pattern in words: "all 0", "all 1", "alternating from 0" (or 1: every FFMA's bit differs from the one
 * before), "alternating from 0, 3 repeats" (all but 3 FFMAs differ from the one before; at most an eighth of the run),
 * else "mixed" with the count of 0s.
 * @param bits the run's yield bits (FfmaRun.yieldBits)
 * @returns the pattern
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { yieldPattern } from "./sass_control.ts";
 * assert.equal(yieldPattern("0101"), "alternating from 0");
 * assert.equal(yieldPattern("1111"), "all 1");
 * assert.equal(yieldPattern("1101010101010101"), "alternating from 1, 1 repeat");
 * assert.equal(yieldPattern("0011"), "mixed, 2 of 4 at 0");
 * ```
 */
export function yieldPattern(bits: string): string {
  if (!bits.includes("1")) return "all 0";
  if (!bits.includes("0")) return "all 1";
  const repeats = [...bits].filter((b, i) => i > 0 && b === bits[i - 1]).length;
  if (repeats === 0) return `alternating from ${bits[0]}`;
  if (8 * repeats <= bits.length) return `alternating from ${bits[0]}, ${repeats} repeat${repeats === 1 ? "" : "s"}`;
  return `mixed, ${[...bits].filter((b) => b === "0").length} of ${bits.length} at 0`;
}

if (import.meta.main) {
  const usage =
    "usage: deno run -A bench/sass_control.ts kernel.cubin [other.cubin ...] [--min-run 32] [--max-gap 3] [--runs]";
  const { values, positionals } = benchArgs(usage, {
    allowPositionals: true,
    options: {
      "min-run": { type: "string", default: "32" },
      "max-gap": { type: "string", default: "3" },
      runs: { type: "boolean", default: false },
    },
  });
  const minRun = Number(values["min-run"]), maxGap = Number(values["max-gap"]);
  if (
    positionals.length === 0 || !(Number.isInteger(minRun) && minRun > 0) || !(Number.isInteger(maxGap) && maxGap >= 0)
  ) {
    console.error(usage);
    Deno.exit(2);
  }
  const files: { path: string; fns: FfmaControl[] }[] = [];
  for (const { path, bytes } of await readCubins(positionals)) {
    files.push({ path, fns: ffmaControl(bytes, minRun, maxGap) });
  }
  console.log(
    "| file | function | FFMAs (yield bit 0 / 1) | runs | FFMAs in runs | yield patterns of the runs | stalls |",
  );
  console.log("|---|---|---|---|---|---|---|");
  for (const { path, fns } of files) {
    for (const f of fns) {
      const patterns = new Map<string, number>(), stalls = new Map<number, number>();
      for (const r of f.runs) {
        const p = yieldPattern(r.yieldBits);
        patterns.set(p, (patterns.get(p) ?? 0) + 1);
        for (const [s, n] of Object.entries(r.stalls)) stalls.set(Number(s), (stalls.get(Number(s)) ?? 0) + n);
      }
      const inRuns = f.runs.reduce((n, r) => n + r.yieldBits.length, 0);
      const cell = (m: Map<string | number, number>, unit = "") =>
        [...m].map(([k, n]) => `${unit}${k}: ${n}`).join("; ") || "—";
      console.log(
        `| ${path} | ${f.fn.slice(0, 60)} | ${f.ffma} (${f.yield0} / ${f.ffma - f.yield0}) | ${f.runs.length} | ` +
          `${inRuns} | ${cell(patterns)} | ${cell(stalls, "stall ")} |`,
      );
    }
  }
  if (values.runs) {
    console.log("\n| file | function | run starts at | FFMAs | yield bits | stalls | FFMAs with a reuse flag |");
    console.log("|---|---|---|---|---|---|---|");
    for (const { path, fns } of files) {
      for (const f of fns) {
        for (const r of f.runs) {
          const st = Object.entries(r.stalls).map(([k, n]) => `${k}: ${n}`).join("; ");
          console.log(
            `| ${path} | ${
              f.fn.slice(0, 60)
            } | ${r.start} | ${r.yieldBits.length} | ${r.yieldBits} | ${st} | ${r.reused} |`,
          );
        }
      }
    }
  }
}
