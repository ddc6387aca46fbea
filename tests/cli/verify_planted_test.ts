// verify through real FFI against a backend with a planted wrong result: the CPU backend's sources compiled with
// go_fp8_gemm renamed, behind a shim that flips the lowest bit of output element [0, 0]. The run must fail naming the
// first mismatch, and a baseline from the clean library at the same path must make it fail as a regression.
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { withTempDir } from "./_run.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

const SHIM = `#include "gemm_oracle.h"
extern "C" int32_t go_fp8_gemm_real(const go_tensor*, const go_tensor*, const go_tensor*, const go_tensor*,
                                    const go_tensor*, const go_tensor*, int32_t, int32_t, int32_t, int32_t, int32_t);
extern "C" int32_t go_fp8_gemm(const go_tensor* a, const go_tensor* sfa, const go_tensor* b, const go_tensor* sfb,
                               const go_tensor* c, const go_tensor* d, int32_t gam, int32_t gak, int32_t gbm,
                               int32_t gbk, int32_t model) {
  int32_t st = go_fp8_gemm_real(a, sfa, b, sfb, c, d, gam, gak, gbm, gbk, model);
  if (st != 0 || d == nullptr || d->data == nullptr) return st;
  unsigned char low;  // little-endian: byte 0 holds the lowest mantissa bit of element [0, 0]
  if (go_copy_out(&low, d->data, 1) != 0) return st;
  low ^= 1;
  return go_copy_in(d->data, &low, 1);
}
`;

async function gxx(args: string[]): Promise<void> {
  const out = await new Deno.Command("g++", { args, stderr: "piped" }).output();
  if (!out.success) throw new Error(new TextDecoder().decode(out.stderr));
}

/** Builds the CPU backend into `lib`, planted (one flipped bit) or clean. */
async function buildCpu(dir: string, lib: string, planted: boolean): Promise<void> {
  const sources = [...Deno.readDirSync(`${ROOT}kernels/cpu`)].filter((e) => e.name.endsWith(".cpp"))
    .map((e) => `${ROOT}kernels/cpu/${e.name}`);
  const common = ["-std=c++17", "-O1", "-fPIC", "-pthread", "-I", `${ROOT}kernels`];
  if (!planted) return gxx([...common, "-shared", "-o", lib, ...sources]);
  await Deno.writeTextFile(`${dir}/shim.cpp`, SHIM);
  // the shim is compiled without the rename and linked beside the renamed backend
  await gxx([...common, "-c", "-o", `${dir}/shim.o`, `${dir}/shim.cpp`]);
  const objs: string[] = [];
  for (const [i, s] of sources.entries()) {
    await gxx([...common, "-Dgo_fp8_gemm=go_fp8_gemm_real", "-c", "-o", `${dir}/b${i}.o`, s]);
    objs.push(`${dir}/b${i}.o`);
  }
  await gxx([...common, "-shared", "-o", lib, ...objs, `${dir}/shim.o`]);
}

async function verify(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", `${ROOT}cli.ts`, "verify", ...args],
    cwd: ROOT,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

Deno.test("verify against a backend with a planted wrong result", async (t) => {
  await withTempDir(async (dir) => {
    const lib = `${dir}/libbackend.so`;
    const args = ["--backend", lib, "--suite", "edge", "--ops", "fp8_gemm_nt", "--shard", "1/3"];

    await t.step("the clean library passes and its JSON report becomes the baseline", async () => {
      await buildCpu(dir, lib, false);
      const r = await verify([...args, "--json", `${dir}/base.json`]);
      assert.equal(r.code, 0, r.stdout + r.stderr);
      assert.match(r.stdout, /0 failed, 0 errors/);
    });

    await t.step(
      "the planted library fails with the first mismatch named (coordinate and both bit patterns)",
      async () => {
        await Deno.remove(lib);
        await buildCpu(dir, lib, true);
        const r = await verify(args);
        assert.equal(r.code, 1, r.stdout + r.stderr);
        assert.match(r.stdout, /^FAIL /m);
        assert.match(
          r.stdout,
          /d: 1\/\d+ mismatches; first at \[0, 0\]: expected \S+ \(0x[0-9a-f]{4}\), got \S+ \(0x[0-9a-f]{4}\)/,
        );
      },
    );

    await t.step("against the clean baseline the planted run is a regression", async () => {
      const r = await verify([...args, "--baseline", `${dir}/base.json`]);
      assert.equal(r.code, 1);
      assert.match(
        r.stdout,
        /REGRESSION .*libbackend\.so edge\/fp8_nt_m1 \[sm90_1d2d\]: was pass, now fail; mismatches 0 → 1/,
      );
    });
  });
});
