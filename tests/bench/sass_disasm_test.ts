// bench/sass_disasm.ts reads a cubin's SASS with nvdisasm, rewriting nvcc 13.0's ELF header for an older nvdisasm. The
// text must agree with the opcodes the project's own SASS scripts decode from the bytes, at every instruction both name;
// that check needs an nvdisasm (NVDISASM or PATH; CI's image has none) and is ignored without one.
import assert from "node:assert/strict";
import { disassemble, instructionTexts, parseNvdisasm } from "../../bench/sass_disasm.ts";
import { elfSections, opcodeOf, SM90_OPCODES, textFunctions } from "../../bench/sass_layout.ts";
import { compileFastKernel, SMALL_M_KERNEL } from "../kernels/_fast_kernel_source.ts";
import { nvccTest } from "../kernels/_nvcc.ts";
import { runBench } from "./_run.ts";

const NVDISASM = Deno.env.get("NVDISASM") ?? "nvdisasm";

async function hasNvdisasm(): Promise<boolean> {
  try {
    return (await new Deno.Command(NVDISASM, { args: ["--version"], stdout: "null", stderr: "null" }).output()).success;
  } catch {
    return false;
  }
}

/** Mnemonics nvdisasm prints for the opcodes SM90_OPCODES names (those every nvdisasm that reads SM90 decodes). */
const MNEMONICS: [number, RegExp][] = [
  [SM90_OPCODES.setmaxnreg, /^USETMAXREG\b/],
  [SM90_OPCODES.tmaLoad, /^UTMALDG\b/],
  [SM90_OPCODES.cpAsync, /^(@!?U?P\d )?LDGSTS\b/],
  [SM90_OPCODES.bra, /(^|\s)BRA\b/],
  [SM90_OPCODES.bssy, /^BSSY\b/],
  [SM90_OPCODES.exit, /(^|\s)EXIT\b/],
  [SM90_OPCODES.ffma, /(^|\s)FFMA\b/],
];

const missing = !(await hasNvdisasm()) ? `no nvdisasm here (${NVDISASM}; set NVDISASM)` : "";

await nvccTest("sass_disasm on the 128 x 32 kernel", "go-sass-disasm-", async (t, dir) => {
  const c = await compileFastKernel(SMALL_M_KERNEL, `${dir}/k.cubin`);
  assert.ok(c.ok, c.log);
  const cubin = await Deno.readFile(`${dir}/k.cubin`);

  await t.step({
    name: "the text agrees with the opcodes decoded from the bytes; what nvdisasm does not decode is named by its " +
      "opcode" + (missing ? ` (ignored: ${missing})` : ""),
    ignore: missing !== "",
    async fn() {
      const r = await disassemble(NVDISASM, cubin);
      assert.ok("text" in r, "error" in r ? r.error : "");
      const [fn] = textFunctions(elfSections(cubin));
      const decoded = parseNvdisasm(r.text).get(fn.fn);
      assert.ok(decoded && decoded.size > fn.instructions.length / 2, "nvdisasm decoded under half the kernel");
      const texts = instructionTexts(fn, decoded);
      let checked = 0;
      fn.instructions.forEach((w, i) => {
        const op = opcodeOf(w);
        if (!decoded.has(i)) return assert.match(texts[i], new RegExp(`^<opcode 0x${op.toString(16)}[:>]`));
        const mnemonic = MNEMONICS.find(([o]) => o === op)?.[1];
        if (mnemonic) assert.match(texts[i], mnemonic, `instruction ${i}, opcode 0x${op.toString(16)}`), ++checked;
      });
      assert.ok(checked > 100, `only ${checked} instructions checked`);
    },
  });

  await t.step(
    "the command names the cubin and nvdisasm's failure, with status 2, where nvdisasm gives no text",
    async () => {
      const r = await runBench("sass_disasm.ts", `${dir}/k.cubin`, "--nvdisasm", `${dir}/no-such-nvdisasm`);
      assert.equal(r.code, 2);
      assert.match(r.stderr, /k\.cubin: nvdisasm gave no text: .*no-such-nvdisasm does not run/);
    },
  );
});
