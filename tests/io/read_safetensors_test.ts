import assert from "node:assert/strict";
import { Tensor } from "../../reference/tensor/mod.ts";
import {
  MAX_HEADER_BYTES,
  parseSafetensors,
  readSafetensors,
  SafetensorsError,
  serializeSafetensors,
} from "../../io/mod.ts";
import { Prng } from "../../reference/random/prng.ts";
import { hostileCorpus, rawFile, validSample } from "./_hostile_corpus.ts";

Deno.test("parseSafetensors()", async (t) => {
  await t.step("rejects every file of the hostile corpus (≥ 300) with a SafetensorsError naming file and fault", () => {
    const corpus = hostileCorpus();
    assert.ok(corpus.length >= 300, `corpus has ${corpus.length} cases`);
    assert.equal(new Set(corpus.map((c) => c.name)).size, corpus.length, "case names are unique");
    for (const c of corpus) {
      let err: unknown;
      try {
        parseSafetensors(c.bytes, "hostile.safetensors");
      } catch (e) {
        err = e;
      }
      assert.ok(err instanceof SafetensorsError, `${c.name}: expected SafetensorsError, got ${err}`);
      assert.equal(err.message, `hostile.safetensors: ${err.fault}`, c.name);
      assert.equal(err.file, "hostile.safetensors", c.name);
      assert.match(err.fault, c.expect, `${c.name}`);
    }
  });

  await t.step("reads a file built by hand byte for byte", () => {
    const header = '{"__metadata__":{"op":"x"},"w":{"dtype":"I32","shape":[2],"data_offsets":[0,8]}}';
    const bytes = rawFile(header, new Uint8Array([1, 0, 0, 0, 0xff, 0xff, 0xff, 0xff]));
    const f = parseSafetensors(bytes);
    assert.deepEqual([...f.tensors.get("w")!.data], [1, -1]);
    assert.deepEqual(f.metadata, { op: "x" });
    assert.equal(f.fileDtypes.get("w"), "I32");
  });

  await t.step("accepts header padding, 0-rank and empty tensors", () => {
    const header =
      '{"s":{"dtype":"F32","shape":[],"data_offsets":[0,4]},"e":{"dtype":"BF16","shape":[0,3],"data_offsets":[4,4]}}   ';
    const f = parseSafetensors(rawFile(header, new Uint8Array(new Float32Array([2.5]).buffer)));
    assert.equal(f.tensors.get("s")!.data[0], 2.5);
    assert.deepEqual(f.tensors.get("s")!.shape, []);
    assert.deepEqual(f.tensors.get("e")!.shape, [0, 3]);
  });

  await t.step("unpacks F4 with element 0 in the low nibble", () => {
    const f = parseSafetensors(
      rawFile('{"q":{"dtype":"F4","shape":[1,4],"data_offsets":[0,2]}}', new Uint8Array([0x21, 0x7f])),
    );
    assert.deepEqual([...f.tensors.get("q")!.data], [0x1, 0x2, 0xf, 0x7]);
    assert.equal(f.tensors.get("q")!.dtype, "e2m1");
  });

  await t.step("honours f4_nibble_order high_first", () => {
    const h = '{"__metadata__":{"f4_nibble_order":"high_first"},"q":{"dtype":"F4","shape":[2],"data_offsets":[0,1]}}';
    assert.deepEqual([...parseSafetensors(rawFile(h, new Uint8Array([0x21]))).tensors.get("q")!.data], [2, 1]);
  });

  await t.step("keeps metadata keys such as __proto__ as plain data", () => {
    const f = parseSafetensors(rawFile('{"__metadata__":{"__proto__":"p","a":"b"}}'));
    assert.equal(Object.getOwnPropertyDescriptor(f.metadata, "__proto__")?.value, "p");
    assert.equal(Object.getPrototypeOf(f.metadata), Object.prototype);
  });

  await t.step("copies data so the tensors do not alias the file buffer", () => {
    const bytes = serializeSafetensors({ x: Tensor.from("u8", [2], new Uint8Array([5, 6])) });
    const f = parseSafetensors(bytes);
    bytes[bytes.length - 1] = 0;
    assert.deepEqual([...f.tensors.get("x")!.data], [5, 6]);
  });

  await t.step("never throws anything but SafetensorsError on 400 seeded random mutations", () => {
    const good = validSample();
    const prng = new Prng(2026);
    let rejected = 0;
    for (let i = 0; i < 400; i++) {
      const f = good.slice();
      const flips = 1 + prng.int(4);
      for (let j = 0; j < flips; j++) f[prng.int(f.length)] = prng.int(256);
      try {
        parseSafetensors(f);
      } catch (e) {
        assert.ok(e instanceof SafetensorsError, `mutation ${i}: ${e}`);
        rejected++;
      }
    }
    assert.ok(rejected > 100, `only ${rejected} mutations rejected`);
  });

  await t.step("rejects a header length just over the limit without reading it", () => {
    const f = rawFile("{}", 0, BigInt(MAX_HEADER_BYTES + 1));
    assert.throws(() => parseSafetensors(f, "big"), /big: header length 100000001 exceeds the 100000000-byte limit/);
  });
});

Deno.test("readSafetensors()", async (t) => {
  await t.step("names the path in errors", async () => {
    const path = await Deno.makeTempFile({ suffix: ".safetensors" });
    try {
      await Deno.writeFile(path, new Uint8Array([1, 2, 3]));
      await assert.rejects(
        () => readSafetensors(path),
        (e: Error) => e instanceof SafetensorsError && e.message.startsWith(path),
      );
    } finally {
      await Deno.remove(path);
    }
  });

  await t.step("gives every file of the hostile corpus the same verdict as parseSafetensors()", async () => {
    const dir = await Deno.makeTempDir();
    try {
      const corpus = hostileCorpus();
      for (let i = 0; i < corpus.length; i++) {
        const c = corpus[i];
        const path = `${dir}/h${i}.safetensors`;
        await Deno.writeFile(path, c.bytes);
        let inMemory: SafetensorsError | undefined;
        try {
          parseSafetensors(c.bytes, path);
        } catch (e) {
          inMemory = e as SafetensorsError;
        }
        const err = await readSafetensors(path).then(() => undefined, (e) => e);
        assert.ok(err instanceof SafetensorsError, `${c.name}: expected SafetensorsError, got ${err}`);
        assert.equal(err.message, inMemory?.message, c.name);
        assert.ok(err.message.startsWith(`${path}: `), c.name);
        assert.match(err.fault, c.expect, c.name);
      }
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  });

  await t.step("reads what parseSafetensors() reads, through chunks of any size", async () => {
    const path = await Deno.makeTempFile({ suffix: ".safetensors" });
    try {
      const prng = new Prng(7);
      const tensors: Record<string, Tensor> = {};
      for (let i = 0; i < 40; i++) {
        const n = prng.int(40);
        const dtype = (["f32", "bf16", "u8", "i64", "e2m1", "i8"] as const)[i % 6];
        const count = dtype === "e2m1" ? 2 * n : n;
        const t = Tensor.zeros(dtype, [count]);
        const bytes = new Uint8Array(t.data.buffer);
        for (let k = 0; k < bytes.length; k++) bytes[k] = dtype === "e2m1" ? prng.int(16) : prng.int(256);
        tensors[`t${i}`] = t;
      }
      const bytes = serializeSafetensors(tensors, { op: "x" });
      await Deno.writeFile(path, bytes);
      const want = parseSafetensors(bytes);
      for (const chunkBytes of [1, 3, 8, 64, 1000, 1 << 24]) {
        const got = await readSafetensors(path, { chunkBytes });
        assert.deepEqual([...got.tensors.keys()], [...want.tensors.keys()]);
        for (const [name, t] of want.tensors) {
          const g = got.tensors.get(name)!;
          assert.equal(g.dtype, t.dtype, name);
          assert.deepEqual(g.shape, t.shape, name);
          assert.deepEqual(
            [...g.data as Uint8Array],
            [...t.data as Uint8Array],
            `${name} with chunks of ${chunkBytes}`,
          );
          assert.equal(g.data.byteOffset, 0, name); // every tensor owns its storage
        }
        assert.deepEqual(got.metadata, want.metadata);
        assert.deepEqual(got.fileDtypes, want.fileDtypes);
      }
      await assert.rejects(() => readSafetensors(path, { chunkBytes: 0 }), RangeError);
    } finally {
      await Deno.remove(path);
    }
  });

  await t.step("refuses a file that changes size while it is read", async () => {
    const path = await Deno.makeTempFile({ suffix: ".safetensors" });
    try {
      // a file whose stat size is larger than what read() returns cannot be made portably; instead a directory and
      // a missing file keep Deno's own errors
      await assert.rejects(() => readSafetensors(`${path}.missing`), Deno.errors.NotFound);
      const dir = await Deno.makeTempDir();
      await assert.rejects(() => readSafetensors(dir), Deno.errors.IsADirectory);
      await Deno.remove(dir);
    } finally {
      await Deno.remove(path);
    }
  });
});
