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
  await t.step("rejects every file of the hostile corpus (≥ 200) with a SafetensorsError naming file and fault", () => {
    const corpus = hostileCorpus();
    assert.ok(corpus.length >= 200, `corpus has ${corpus.length} cases`);
    for (const c of corpus) {
      let err: unknown;
      try {
        parseSafetensors(c.bytes, "hostile.safetensors");
      } catch (e) {
        err = e;
      }
      assert.ok(err instanceof SafetensorsError, `${c.name}: expected SafetensorsError, got ${err}`);
      assert.ok(err.message.startsWith("hostile.safetensors: "), `${c.name}: ${err.message}`);
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
});
