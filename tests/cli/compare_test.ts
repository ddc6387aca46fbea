import assert from "node:assert/strict";
import { Tensor } from "../../reference/tensor/mod.ts";
import { readSafetensors, writeSafetensors } from "../../io/mod.ts";
import { compareTensors, parseCompareMode } from "../../cli/compare.ts";
import { hostileCorpus } from "../io/_hostile_corpus.ts";
import { runCli, withTempDir } from "./_run.ts";

const bf = (v: number[]) => Tensor.from("bf16", [2, 2], new Uint16Array(v));

Deno.test("compareTensors()", async (t) => {
  await t.step("reports the first mismatch with coordinate, values and bit patterns", () => {
    const r = compareTensors("d", bf([0x3f80, 0x4000, 0x3fc0, 0]), bf([0x3f80, 0x4000, 0x3fc1, 0x8000]), {
      kind: "bitwise",
    });
    assert.equal(r.elements, 4);
    assert.equal(r.mismatches, 2);
    assert.deepEqual(r.first, {
      coordinate: [1, 0],
      expected: { value: 1.5, bits: "0x3fc0" },
      actual: { value: 1.5078125, bits: "0x3fc1" },
    });
    assert.equal(r.maxUlp, 1);
    assert.equal(r.pass, false);
  });

  await t.step("passes within ulp=1 and within calc-diff=1e-3", () => {
    const e = bf([0x3f80, 0x4000, 0x3fc0, 0x4040]), a = bf([0x3f80, 0x4000, 0x3fc1, 0x4040]);
    assert.equal(compareTensors("d", e, a, { kind: "ulp", limit: 1 }).pass, true);
    assert.equal(compareTensors("d", e, a, { kind: "ulp", limit: 0 }).pass, false);
    const r = compareTensors("d", e, a, { kind: "calc-diff", limit: 1e-3 });
    assert.ok(r.calcDiff > 0 && r.calcDiff < 1e-5, String(r.calcDiff));
    assert.equal(r.pass, true);
  });

  await t.step("compares integer tensors by value with |difference| as the distance", () => {
    const r = compareTensors(
      "k",
      Tensor.from("i64", [2], new BigInt64Array([5n, -1n])),
      Tensor.from("i64", [2], new BigInt64Array([5n, 2n])),
      {
        kind: "bitwise",
      },
    );
    assert.equal(r.maxUlp, 3);
    assert.deepEqual(r.first?.actual, { value: "2", bits: "0x0000000000000002" });
  });

  await t.step("treats NaN spellings as equal only with nan class", () => {
    const e = Tensor.from("f32", [1], new Float32Array(new Uint32Array([0x7fc00000]).buffer));
    const a = Tensor.from("f32", [1], new Float32Array(new Uint32Array([0x7fffffff]).buffer));
    assert.equal(compareTensors("x", e, a, { kind: "bitwise" }).pass, false);
    assert.equal(compareTensors("x", e, a, { kind: "bitwise" }, "class").pass, true);
  });

  await t.step("rejects different dtypes and shapes", () => {
    assert.throws(
      () => compareTensors("x", Tensor.zeros("f32", [2]), Tensor.zeros("bf16", [2]), { kind: "bitwise" }),
      /dtypes differ/,
    );
    assert.throws(
      () => compareTensors("x", Tensor.zeros("f32", [2]), Tensor.zeros("f32", [1, 2]), { kind: "bitwise" }),
      /shapes differ/,
    );
  });
});

Deno.test("parseCompareMode()", async (t) => {
  await t.step("rejects malformed tolerances", () => {
    for (
      const m of [
        "ulp",
        "ulp=-1",
        "ulp=1.5",
        "calc-diff=",
        "calc-diff=x",
        "calc-diff=-1",
        "exact",
        "calc-diff=Infinity",
      ]
    ) {
      assert.throws(() => parseCompareMode(m), /is not bitwise/, m);
    }
  });
});

Deno.test("compareCommand", async (t) => {
  await t.step("exits 0 on identical files, 1 outside tolerance, and writes the JSON report", async () => {
    await withTempDir(async (dir) => {
      await writeSafetensors(`${dir}/e.safetensors`, { d: bf([0x3f80, 0x4000, 0x3fc0, 0]) });
      await writeSafetensors(`${dir}/a.safetensors`, {
        d: bf([0x3f80, 0x4000, 0x3fc1, 0]),
        extra: Tensor.zeros("u8", [1]),
      });
      const same = await runCli(["compare", `${dir}/e.safetensors`, `${dir}/e.safetensors`]);
      assert.equal(same.code, 0);
      assert.match(same.stdout, /ok: 1 of 1 tensors inside bitwise/);
      const diff = await runCli(["compare", `${dir}/e.safetensors`, `${dir}/a.safetensors`, "--json", `${dir}/r.json`]);
      assert.equal(diff.code, 1);
      assert.match(diff.stdout, /first mismatch at \[1, 0\]: expected 1\.5 \(0x3fc0\), actual 1\.5078125 \(0x3fc1\)/);
      assert.match(diff.stdout, /has tensors not in .*: extra/);
      const report = JSON.parse(await Deno.readTextFile(`${dir}/r.json`));
      assert.equal(report.pass, false);
      assert.equal(report.tensors[0].mismatches, 1);
      assert.deepEqual(report.tensors[0].first.coordinate, [1, 0]);
      assert.equal(
        (await runCli(["compare", `${dir}/e.safetensors`, `${dir}/a.safetensors`, "--mode", "ulp=1"])).code,
        0,
      );
    });
  });

  await t.step("exits 2 when a tensor is missing, on bad flags and on missing files", async () => {
    await withTempDir(async (dir) => {
      await writeSafetensors(`${dir}/e.safetensors`, { d: bf([0, 0, 0, 0]) });
      await writeSafetensors(`${dir}/a.safetensors`, { c: bf([0, 0, 0, 0]) });
      const cases: [string[], RegExp][] = [
        [["compare", `${dir}/e.safetensors`, `${dir}/a.safetensors`], /has no tensor "d"/],
        [["compare", `${dir}/e.safetensors`, `${dir}/e.safetensors`, "--mode", "ulp=x"], /is not bitwise/],
        [["compare", `${dir}/e.safetensors`, `${dir}/e.safetensors`, "--nan", "some"], /--nan "some"/],
        [["compare", `${dir}/e.safetensors`], /needs 2 file arguments/],
        [["compare", `${dir}/e.safetensors`, `${dir}/nothing`], /cannot access a file/],
        [["compare", dir, dir], /cannot access a file|Is a directory/],
      ];
      for (const [args, msg] of cases) {
        const r = await runCli(args);
        assert.equal(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
        assert.match(r.stderr, msg);
      }
    });
  });

  await t.step("exits 2 with a message naming the file for every hostile file of the corpus", async () => {
    await withTempDir(async (dir) => {
      const good = `${dir}/good.safetensors`;
      await writeSafetensors(good, { d: bf([0, 0, 0, 0]) });
      const corpus = hostileCorpus();
      for (let i = 0; i < corpus.length; i++) {
        const path = `${dir}/h${i}.safetensors`;
        await Deno.writeFile(path, corpus[i].bytes);
        const r = await runCli(["compare", i % 2 === 0 ? path : good, i % 2 === 0 ? good : path]);
        assert.equal(r.code, 2, corpus[i].name);
        assert.ok(r.stderr.includes(path), `${corpus[i].name}: ${r.stderr}`);
        assert.match(r.stderr, corpus[i].expect, corpus[i].name);
      }
    });
  });
});

Deno.test("compareCommand --expected-prefix", async (t) => {
  await t.step("checks a kernel's output file against one model's outputs in a golden fixture", async () => {
    await withTempDir(async (dir) => {
      const fixture = "fixtures/fp8_gemm_nt/fp8_gemm_nt_m16_n128_k256_fp32.safetensors";
      const f = await readSafetensors(fixture);
      const d = f.tensors.get("sm90_1d2d/d")!;
      await writeSafetensors(`${dir}/mine.safetensors`, { d });
      const ok = await runCli(["compare", fixture, `${dir}/mine.safetensors`, "--expected-prefix", "sm90_1d2d/"]);
      assert.equal(ok.code, 0, ok.stdout + ok.stderr);
      assert.match(ok.stdout, /PASS d bf16 \[16,128\]/);
      // the exact model's bits differ from the SM90 kernel's in this case: a kernel matching "exact" fails here
      const exact = f.tensors.get("exact/d")!;
      await writeSafetensors(`${dir}/exact.safetensors`, { d: exact });
      const bad = await runCli(["compare", fixture, `${dir}/exact.safetensors`, "--expected-prefix", "sm90_1d2d/"]);
      assert.equal(bad.code, 1);
      assert.match(bad.stdout, /first mismatch at \[/);
      const none = await runCli(["compare", fixture, `${dir}/mine.safetensors`, "--expected-prefix", "nope/"]);
      assert.equal(none.code, 2);
      assert.match(none.stderr, /no tensor name starts with "nope\/"/);
    });
  });
});
