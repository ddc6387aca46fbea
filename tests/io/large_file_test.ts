import assert from "node:assert/strict";
import { Tensor } from "../../reference/tensor/mod.ts";
import { readSafetensors, SafetensorsError, serializeSafetensors } from "../../io/mod.ts";
import { rawFile } from "./_hostile_corpus.ts";

const GB5 = 5_000_000_000;
const MB = 1 << 20;

/** Runs `fn` on a fresh temporary file holding `bytes`, extended (sparsely, on Linux) to `size` bytes. */
async function withSparseFile(bytes: Uint8Array, size: number, fn: (path: string) => Promise<void>): Promise<void> {
  const path = await Deno.makeTempFile({ suffix: ".safetensors" });
  try {
    await Deno.writeFile(path, bytes);
    await Deno.truncate(path, size);
    await fn(path);
  } finally {
    await Deno.remove(path);
  }
}

Deno.test("readSafetensors() on a 5 GB sparse file", async (t) => {
  await t.step("refuses a 4-byte tensor followed by 5 GB of nothing without reading the data", async () => {
    const small = serializeSafetensors({ x: Tensor.from("f32", [1], new Float32Array([1])) });
    await withSparseFile(small, GB5, async (path) => {
      assert.equal((await Deno.stat(path)).size, GB5);
      const before = Deno.memoryUsage().rss;
      const err = await readSafetensors(path).then(() => undefined, (e) => e);
      const grown = Deno.memoryUsage().rss - before;
      assert.ok(err instanceof SafetensorsError, String(err));
      const dataLen = GB5 - small.length + 4;
      assert.equal(err.message, `${path}: hole in the data: bytes [4, ${dataLen}) at the end belong to no tensor`);
      assert.ok(grown < 500 * MB, `RSS grew by ${(grown / MB).toFixed(0)} MiB`);
    });
  });

  await t.step("refuses a tensor claiming the 5 GB in the wrong dtype before reading any of it", async () => {
    const header = `{"x":{"dtype":"F32","shape":[3],"data_offsets":[0,${GB5 - 72}]}}`;
    const bytes = rawFile(header.padEnd(64, " "));
    await withSparseFile(bytes, GB5, async (path) => {
      const before = Deno.memoryUsage().rss;
      await assert.rejects(() => readSafetensors(path), /needs 12 bytes but data_offsets \[0, 4999999928\]/);
      assert.ok(Deno.memoryUsage().rss - before < 500 * MB);
    });
  });

  await t.step("refuses a header length of 99,999,999 over zeros after reading only the header", async () => {
    const bytes = rawFile("{}", 0, 99_999_999n);
    await withSparseFile(bytes, GB5, async (path) => {
      const before = Deno.memoryUsage().rss;
      await assert.rejects(() => readSafetensors(path), /not valid JSON: trailing characters after JSON at offset 2/);
      assert.ok(Deno.memoryUsage().rss - before < 500 * MB);
    });
  });
});
