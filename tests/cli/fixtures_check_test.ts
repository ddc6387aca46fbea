// `fixtures --check` names the first difference of a changed file: the tensor, the element and both bit patterns.
import assert from "node:assert/strict";
import { fixturesCommand } from "../../cli/fixtures.ts";
import { parseSafetensors } from "../../io/mod.ts";

Deno.test("fixtures --check names the tensor and first element of a difference", async () => {
  const src = new URL("../../fixtures/", import.meta.url).pathname;
  const dir = await Deno.makeTempDir();
  for await (const e of Deno.readDir(src)) {
    if (!e.isDirectory) continue;
    await Deno.mkdir(`${dir}/${e.name}`);
    for await (const f of Deno.readDir(`${src}${e.name}`)) {
      if (f.name.endsWith(".safetensors")) {
        await Deno.copyFile(`${src}${e.name}/${f.name}`, `${dir}/${e.name}/${f.name}`);
      }
    }
  }
  await Deno.copyFile(`${src}index.json`, `${dir}/index.json`);
  // Flip the low bit of the last byte of one fixture: the last element of its last tensor.
  const rel = "fp8_gemm_nt/fp8_gemm_nt_m16_n128_k256_fp32.safetensors";
  const bytes = await Deno.readFile(`${dir}/${rel}`);
  bytes[bytes.length - 1] ^= 1;
  await Deno.writeFile(`${dir}/${rel}`, bytes);
  const last = [...parseSafetensors(bytes, rel).tensors.entries()].at(-1)!;
  let stdout = "";
  const status = await fixturesCommand.run(["--check", "--dir", dir], {
    stdout: (s) => void (stdout += s),
    stderr: () => {},
    env: () => undefined,
  });
  assert.equal(status, 1);
  const coord = last[1].shape.map((d) => d - 1).join(", ");
  assert.match(
    stdout,
    new RegExp(`differs: ${rel}: tensor "${last[0]}" element \\[${coord}\\]: stored 0x[0-9a-f]+, now 0x`),
  );
  await Deno.remove(dir, { recursive: true });
});
