/**
 * A kernel's control flow, read from a cubin without a disassembler: each branch's target (BRA, CALL.REL) and
 * reconvergence point (BSSY), decoded from the instruction's bits as tests/kernels/sass_flow_test.ts pins them on PTX
 * kernels whose branches it places (a forward branch over N stores, a loop, the self-branch that ends every kernel),
 * and the shortest path between two points: how many instructions a thread runs at the least, over how many 128-byte
 * lines of code and how many taken branches. The command prints, per function, the four paths a CTA runs once at small
 * M, cold (kernelPaths: the prologue's two, the math's way to its first wgmma, the last K block's way to the TMA store
 * of D), so that two kernels (ours and DeepGEMM's, docs/performance-history.md, fortieth round) can be set side by
 * side.
 *
 *     deno run -A bench/sass_flow.ts kernel.cubin [other.cubin ...]
 *
 * @module
 */
import { cubinInputs, opcodeOf, SM90_OPCODES } from "./sass_layout.ts";

/** One branch: where it is, where it goes (instruction indices), and whether a predicate guards it. */
export interface Branch {
  at: number;
  target: number;
  kind: "bra" | "call" | "bssy";
  conditional: boolean;
}

/** The two 64-bit words of one instruction. */
function words(w: Uint8Array): [bigint, bigint] {
  const v = new DataView(w.buffer, w.byteOffset, 16);
  return [v.getBigUint64(0, true), v.getBigUint64(8, true)];
}

/** `bits` bits of x as a signed number. */
function signed(x: bigint, bits: bigint): bigint {
  return x & (1n << (bits - 1n)) ? x - (1n << bits) : x;
}

/**
 * Whether a predicate guards the instruction: bits 12-14 name it (7: PT, always true), bit 15 negates it.
 * @param w the instruction's 16 bytes
 * @returns false for an instruction that always runs
 * @example
 * ```ts
 * import { guarded } from "./sass_flow.ts";
 * if (guarded(new Uint8Array([0x47, 0x79, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]))) throw new Error("PT");
 * if (!guarded(new Uint8Array([0x47, 0x89, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]))) throw new Error("!P0");
 * ```
 */
export function guarded(w: Uint8Array): boolean {
  return ((w[1] >> 4) & 0xf) !== 7;
}

/**
 * The branch instruction `at` holds, or undefined. BRA and CALL.REL count their offset from the next instruction in
 * 4-byte units, its low 8 bits at bits 16-23 and the rest, signed, at bits 34-81; BSSY counts it in bytes at bits
 * 32-81 (the point after the matching BSYNC).
 * @param w the instruction's 16 bytes
 * @param at its index
 * @returns the branch
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { branchOf } from "./sass_flow.ts";
 * const ins = (lo: bigint, hi: bigint) => {
 *   const b = new Uint8Array(16), v = new DataView(b.buffer);
 *   v.setBigUint64(0, lo, true), v.setBigUint64(8, hi, true);
 *   return b;
 * };
 * // @!P0 BRA over 81 instructions (nvcc 13.0, a forward branch over 40 stores)
 * assert.deepEqual(branchOf(ins(0x0000000400448947n, 0x000fea0003800000n), 6),
 *   { at: 6, target: 88, kind: "bra", conditional: true });
 * // the branch to itself that ends every kernel
 * assert.deepEqual(branchOf(ins(0xfffffffc00fc7947n, 0x000fc0000383ffffn), 91),
 *   { at: 91, target: 91, kind: "bra", conditional: false });
 * // BSSY to the instruction after its BSYNC
 * assert.equal(branchOf(ins(0x0000054000007945n, 0x000fe20003800000n), 4)!.target, 89);
 * ```
 */
export function branchOf(w: Uint8Array, at: number): Branch | undefined {
  const op = opcodeOf(w);
  const [lo, hi] = words(w);
  const bits32to81 = signed((lo >> 32n) | ((hi & 0x3ffffn) << 32n), 50n);
  if (op === SM90_OPCODES.bra || op === SM90_OPCODES.call) {
    const units = ((bits32to81 >> 2n) << 8n) | ((lo >> 16n) & 0xffn);
    if (units % 4n !== 0n) return undefined;
    const kind = op === SM90_OPCODES.bra ? "bra" : "call";
    return { at, target: at + 1 + Number(units / 4n), kind, conditional: guarded(w) };
  }
  if (op === SM90_OPCODES.bssy) {
    if (bits32to81 % 16n !== 0n) return undefined;
    return { at, target: at + 1 + Number(bits32to81 / 16n), kind: "bssy", conditional: guarded(w) };
  }
  return undefined;
}

/**
 * Where a thread can go from instruction `at`: the next one, unless an unguarded BRA, EXIT or RET ends the way there;
 * a branch's target. A call goes to its callee and on after it (its RET ends a path, as no stack is followed).
 * @param ins the function's instructions
 * @param at the instruction
 * @returns the successors
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { successors } from "./sass_flow.ts";
 * const exit = new Uint8Array(16); exit[0] = 0x4d; exit[1] = 0x79;
 * const nop = new Uint8Array(16); nop[0] = 0x18; nop[1] = 0x79;
 * assert.deepEqual(successors([nop, exit, nop], 0), [1]);
 * assert.deepEqual(successors([nop, exit, nop], 1), []);
 * ```
 */
export function successors(ins: Uint8Array[], at: number): number[] {
  const w = ins[at], op = opcodeOf(w), next = at + 1 < ins.length ? [at + 1] : [];
  const b = branchOf(w, at);
  if (b && b.kind !== "bssy") {
    const ends = b.kind === "bra" && !b.conditional;
    return [...(b.target >= 0 && b.target < ins.length ? [b.target] : []), ...(ends ? [] : next)];
  }
  if ((op === SM90_OPCODES.exit || op === SM90_OPCODES.ret) && !guarded(w)) return [];
  return next;
}

/** A shortest path: the instructions a thread runs along it (both ends counted), the 128-byte lines of code they lie
 * on, and its runs of consecutive instructions (first, last), one more than the branches it takes. */
export interface Path {
  instructions: number;
  lines: number;
  runs: [number, number][];
  /** The instruction it ends at. */
  end: number;
}

/**
 * The shortest path from instruction `from` to the nearest instruction that `goal` accepts (breadth first over the
 * successors), or undefined where none is reachable.
 * @param ins the function's instructions
 * @param from where the path starts
 * @param goal which instructions end it
 * @returns the path
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { shortestPath } from "./sass_flow.ts";
 * const nop = new Uint8Array(16); nop[0] = 0x18; nop[1] = 0x79;
 * const ins = Array.from({ length: 20 }, () => nop);
 * assert.deepEqual(shortestPath(ins, 3, (i) => i === 12), { instructions: 10, lines: 2, runs: [[3, 12]], end: 12 });
 * ```
 */
export function shortestPath(ins: Uint8Array[], from: number, goal: (at: number) => boolean): Path | undefined {
  const prev = new Int32Array(ins.length).fill(-1);
  prev[from] = from;
  const queue = [from];
  for (let q = 0; q < queue.length; ++q) {
    const at = queue[q];
    if (goal(at)) {
      const path = [at];
      while (path[0] !== from) path.unshift(prev[path[0]]);
      const runs: [number, number][] = [];
      for (const p of path) {
        const last = runs[runs.length - 1];
        if (last && p === last[1] + 1) last[1] = p;
        else runs.push([p, p]);
      }
      return { instructions: path.length, lines: new Set(path.map((p) => p >> 3)).size, runs, end: at };
    }
    for (const s of successors(ins, at)) {
      if (prev[s] === -1) prev[s] = at, queue.push(s);
    }
  }
  return undefined;
}

/** The setmaxnreg with the fewest (the producer's) or the most (the math's) registers; -1 where there is none. */
function setmaxnregAt(ins: Uint8Array[], fewest: boolean): number {
  let from = -1, regs = fewest ? Infinity : -1;
  ins.forEach((w, at) => {
    if (opcodeOf(w) === SM90_OPCODES.setmaxnreg && (fewest ? w[4] < regs : w[4] > regs)) from = at, regs = w[4];
  });
  return from;
}

/** A path with its start. */
export type PathFrom = Path & { from: number };

/** The shortest path from `from` to an instruction of opcode `to`, or undefined. */
function pathTo(ins: Uint8Array[], from: number, to: number): PathFrom | undefined {
  if (from < 0) return undefined;
  const p = shortestPath(ins, from, (at) => opcodeOf(ins[at]) === to);
  return p && { ...p, from };
}

/**
 * The producer's path of one function: from its setmaxnreg with the fewest registers (the producer warpgroup's) to
 * the nearest TMA copy, or undefined where the function has no such pair.
 * @param ins the function's instructions
 * @returns the path and where it starts
 */
export function producerPath(ins: Uint8Array[]): PathFrom | undefined {
  return pathTo(ins, setmaxnregAt(ins, true), SM90_OPCODES.tmaLoad);
}

/**
 * The four paths of a warp-specialised GEMM kernel that run cold once a CTA at small M (docs/performance-history.md,
 * fortieth round): the kernel's entry to a TMA copy; the producer's setmaxnreg to a TMA copy; the math's setmaxnreg
 * (the most registers) to a wgmma; and from a wgmma to a TMA store of D (the last K block's wait and promotion and
 * the epilogue), the shortest over every wgmma. A path the kernel lacks is undefined.
 * @param ins the function's instructions
 * @returns the paths
 * @example
 * ```ts
 * import { kernelPaths } from "./sass_flow.ts";
 * const nop = new Uint8Array(16); nop[0] = 0x18; nop[1] = 0x79;
 * if (kernelPaths([nop, nop]).entryToLoad !== undefined) throw new Error("no TMA copy");
 * ```
 */
export function kernelPaths(ins: Uint8Array[]): Record<
  "entryToLoad" | "producer" | "mathToWgmma" | "wgmmaToStore",
  PathFrom | undefined
> {
  let epilogue: PathFrom | undefined;
  ins.forEach((w, at) => {
    if (opcodeOf(w) !== SM90_OPCODES.qgmma) return;
    const p = pathTo(ins, at, SM90_OPCODES.tmaStore);
    if (p && (!epilogue || p.instructions < epilogue.instructions)) epilogue = p;
  });
  return {
    entryToLoad: pathTo(ins, 0, SM90_OPCODES.tmaLoad),
    producer: producerPath(ins),
    mathToWgmma: pathTo(ins, setmaxnregAt(ins, false), SM90_OPCODES.qgmma),
    wgmmaToStore: epilogue,
  };
}

/**
 * One line of a function's paths: each as its ends, then instructions / 128-byte lines / branches taken, then its runs
 * of consecutive instructions (a gap between two is code the path branches over).
 * @param fn the function's name
 * @param count its instructions
 * @param paths its kernelPaths
 * @returns the line
 * @example
 * ```ts
 * import { describePaths } from "./sass_flow.ts";
 * const p = { instructions: 10, lines: 2, runs: [[3, 5], [6, 12]] as [number, number][], end: 12, from: 3 };
 * const line = describePaths("k", 20, { entryToLoad: p, producer: undefined, mathToWgmma: p, wgmmaToStore: p });
 * if (!line.startsWith("k: 20 instructions; entry -> TMA copy (3-12): 10 / 2 / 1 [3-5 6-12]; producer: none;")) {
 *   throw new Error(line);
 * }
 * ```
 */
export function describePaths(fn: string, count: number, paths: ReturnType<typeof kernelPaths>): string {
  const one = (name: string, p: PathFrom | undefined) =>
    p
      ? `${name} (${p.from}-${p.end}): ${p.instructions} / ${p.lines} / ${p.runs.length - 1} ` +
        `[${p.runs.map(([a, b]) => `${a}-${b}`).join(" ")}]`
      : `${name}: none`;
  return [
    `${fn}: ${count} instructions`,
    one("entry -> TMA copy", paths.entryToLoad),
    one("producer", paths.producer),
    one("math setmaxnreg -> wgmma", paths.mathToWgmma),
    one("wgmma -> TMA store", paths.wgmmaToStore),
  ].join("; ") + " (shortest paths: instructions / 128-byte lines / branches taken [runs])";
}

if (import.meta.main) {
  for (
    const { path, fns } of await cubinInputs("usage: deno run -A bench/sass_flow.ts kernel.cubin [other.cubin ...]")
  ) {
    for (const { fn, instructions } of fns) {
      console.log(`${path}: ${describePaths(fn, instructions.length, kernelPaths(instructions))}`);
    }
  }
}
