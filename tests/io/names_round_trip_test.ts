import assert from "node:assert/strict";
import { Tensor } from "../../reference/tensor/mod.ts";
import { parseSafetensors, serializeSafetensors } from "../../io/mod.ts";
import { Prng } from "../../reference/random/prng.ts";
import { main } from "../../cli.ts";
import { rawFile } from "./_hostile_corpus.ts";

const UNITS = [
  "a",
  "é",
  "\ud83d",
  "\ude00",
  "😀",
  "\ud800",
  "\udfff",
  '"',
  "\\",
  "\n",
  "\u0000",
  "\u2028",
  "\ufeff",
  "_",
];

function randomString(prng: Prng): string {
  let s = "";
  const n = 1 + prng.int(5);
  for (let k = 0; k < n; k++) s += UNITS[prng.int(UNITS.length)];
  return s;
}

async function oracle(args: string[]): Promise<{ code: number; stderr: string }> {
  let stderr = "";
  const code = await main(args, { stdout: () => {}, stderr: (s) => (stderr += s), env: () => undefined });
  return { code, stderr };
}

Deno.test("tensor names", async (t) => {
  await t.step("the writer writes exactly the names, metadata keys and values the reader accepts", () => {
    const prng = new Prng(5);
    let refused = 0;
    for (let r = 0; r < 500; r++) {
      const name = randomString(prng);
      const key = r % 4 === 1 ? randomString(prng) : "k", value = r % 4 === 2 ? randomString(prng) : "v";
      const wellFormed = name.isWellFormed() && key.isWellFormed() && value.isWellFormed();
      let bytes: Uint8Array;
      try {
        bytes = serializeSafetensors({ [name]: Tensor.from("u8", [1], new Uint8Array([r & 0xff])) }, { [key]: value });
      } catch (e) {
        assert.ok(e instanceof TypeError && /lone surrogate/.test(e.message), String(e));
        assert.ok(!wellFormed, JSON.stringify([name, key, value]));
        refused++;
        continue;
      }
      assert.ok(wellFormed, JSON.stringify([name, key, value]));
      const f = parseSafetensors(bytes);
      assert.deepEqual([...f.tensors.keys()], [name]);
      assert.equal(f.metadata[key], value);
    }
    assert.ok(refused > 50 && refused < 400, `${refused} refused`);
  });

  await t.step("oracle cast refuses a file with a lone-surrogate name and writes nothing", async () => {
    const dir = await Deno.makeTempDir();
    try {
      for (const spelled of ["\\ud800", "x\\udc00", "\\ud83d\\u0041"]) {
        const input = `${dir}/in.safetensors`, output = `${dir}/out.safetensors`;
        await Deno.writeFile(
          input,
          rawFile(`{"${spelled}":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}`, new Uint8Array(4)),
        );
        const r = await oracle(["cast", "--to", "bf16", "--profile", "ml_dtypes", input, output]);
        assert.equal(r.code, 2, r.stderr);
        assert.match(r.stderr, /in\.safetensors: header is not valid JSON: lone surrogate \\u[0-9a-f]{4}/);
        await assert.rejects(() => Deno.stat(output), Deno.errors.NotFound);
      }
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  });

  await t.step("oracle cast keeps well-formed odd names, which read back as they were", async () => {
    const dir = await Deno.makeTempDir();
    try {
      const names = ["😀", "\ufeffbom", 'q"uote', "back\\slash", "nul\u0000", "line\u2028sep", "__proto__"];
      const input = `${dir}/in.safetensors`, output = `${dir}/out.safetensors`;
      const tensors = Object.fromEntries(names.map((n, i) => [n, Tensor.from("f32", [1], new Float32Array([i]))]));
      await Deno.writeFile(input, serializeSafetensors(tensors));
      const r = await oracle(["cast", "--to", "bf16", "--profile", "ml_dtypes", input, output]);
      assert.equal(r.code, 0, r.stderr);
      const back = parseSafetensors(await Deno.readFile(output), output);
      assert.deepEqual([...back.tensors.keys()].sort(), [...names].sort());
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  });
});
