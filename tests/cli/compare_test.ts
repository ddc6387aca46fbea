import assert from "node:assert/strict";
import { Tensor } from "../../reference/tensor/mod.ts";
import { readSafetensors, writeSafetensors } from "../../io/mod.ts";
import { parseCompareMode } from "../../cli/compare.ts";
import { hostileCorpus } from "../io/_hostile_corpus.ts";
import { runCli, withTempDir } from "./_run.ts";

const bf = (v: number[]) => Tensor.from("bf16", [2, 2], new Uint16Array(v));

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
      // the group's name without its slash names the same tensors
      const bare = await runCli(["compare", fixture, `${dir}/mine.safetensors`, "--expected-prefix", "sm90_1d2d"]);
      assert.equal(bare.code, 0, bare.stdout + bare.stderr);
      assert.match(bare.stdout, /PASS d bf16 \[16,128\]/);
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

/** A safetensors file of 16-bit integer tensors (I16 / U16, as torch saves an int16 / uint16 view). */
async function writeInt16File(path: string, tensors: Record<string, { dtype: "I16" | "U16"; values: number[] }>) {
  const out: Record<string, Tensor> = {};
  for (const [name, t] of Object.entries(tensors)) {
    out[name] = t.dtype === "I16"
      ? Tensor.from("i16", [t.values.length], Int16Array.from(t.values))
      : Tensor.from("u16", [t.values.length], Uint16Array.from(t.values));
  }
  await writeSafetensors(path, out);
}

Deno.test("compareCommand on I16 / U16 tensors", async (t) => {
  await t.step("compares I16 tensors as integers, bitwise and within ulp=N", async () => {
    await withTempDir(async (dir) => {
      await writeInt16File(`${dir}/e.safetensors`, { d: { dtype: "I16", values: [0x3f80, -1, 5, 0] } });
      await writeInt16File(`${dir}/a.safetensors`, { d: { dtype: "I16", values: [0x3f80, -3, 5, 0] } });
      const same = await runCli(["compare", `${dir}/e.safetensors`, `${dir}/e.safetensors`]);
      assert.equal(same.code, 0, same.stderr);
      assert.match(same.stdout, /PASS d i16 \[4\] elements 4 mismatches 0/);
      const diff = await runCli(["compare", `${dir}/e.safetensors`, `${dir}/a.safetensors`, "--json", `${dir}/r.json`]);
      assert.equal(diff.code, 1, diff.stderr);
      assert.match(diff.stdout, /first mismatch at \[1\]: expected -1 \(0xffff\), actual -3 \(0xfffd\)/);
      assert.match(diff.stdout, /max_ulp 2 /);
      const report = JSON.parse(await Deno.readTextFile(`${dir}/r.json`));
      assert.equal(report.tensors[0].dtype, "i16");
      assert.equal(report.tensors[0].map.worst.ulp, 2);
      const ulp = await runCli(["compare", `${dir}/e.safetensors`, `${dir}/a.safetensors`, "--mode", "ulp=2"]);
      assert.equal(ulp.code, 0, ulp.stderr);
    });
  });

  await t.step("compares a BF16 fixture output with a kernel's d saved as torch.int16, bit for bit", async () => {
    await withTempDir(async (dir) => {
      await writeSafetensors(`${dir}/e.safetensors`, {
        d: Tensor.from("bf16", [3], new Uint16Array([0x3f80, 0xbf80, 0x7fff])),
      });
      await writeInt16File(`${dir}/mine.safetensors`, {
        d: { dtype: "I16", values: [0x3f80, 0xbf80 - 0x10000, 0x7fff] },
      });
      const ok = await runCli(["compare", `${dir}/e.safetensors`, `${dir}/mine.safetensors`]);
      assert.equal(ok.code, 0, ok.stdout + ok.stderr);
      assert.match(ok.stdout, /PASS d i16 \[3\]/);
      await writeInt16File(`${dir}/u.safetensors`, { d: { dtype: "U16", values: [0x3f80, 0xbf81, 0x7fff] } });
      const bad = await runCli(["compare", `${dir}/u.safetensors`, `${dir}/e.safetensors`]);
      assert.equal(bad.code, 1);
      assert.match(bad.stdout, /first mismatch at \[1\]: expected 49025 \(0xbf81\), actual 49024 \(0xbf80\)/);
    });
  });

  await t.step("exits 2 for I16 against U16 or a dtype of another width", async () => {
    await withTempDir(async (dir) => {
      await writeInt16File(`${dir}/i.safetensors`, { d: { dtype: "I16", values: [1, 2] } });
      await writeInt16File(`${dir}/u.safetensors`, { d: { dtype: "U16", values: [1, 2] } });
      await writeSafetensors(`${dir}/f.safetensors`, { d: Tensor.from("f32", [2], new Float32Array([1, 2])) });
      const iu = await runCli(["compare", `${dir}/i.safetensors`, `${dir}/u.safetensors`]);
      assert.equal(iu.code, 2);
      assert.match(iu.stderr, /tensor "d": dtypes differ \(expected i16, actual u16\)/);
      const f = await runCli(["compare", `${dir}/f.safetensors`, `${dir}/i.safetensors`]);
      assert.equal(f.code, 2);
      assert.match(f.stderr, /tensor "d": dtypes differ \(expected f32, actual i16\)/);
    });
  });
});
