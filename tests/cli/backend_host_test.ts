// Backend hosts (docs/backend-protocol.md): the hello is checked, a host that cannot start is a named exit 2, a host
// that declares nothing gets skips (never passes), and `oracle run --backend` gives the reference's bits on the
// CPU backend. Crashes, hangs and protocol faults mid-run are pinned by tests/cli/verify_faults_test.ts.
import assert from "node:assert/strict";
import { parseAnswer, parseHello } from "../../cli/host/protocol.ts";
import { hostCommand, HostedBackend } from "../../cli/host/hosted_backend.ts";
import { Tensor } from "../../reference/tensor/tensor.ts";
import { runCliProcess } from "./_run.ts";

/** A `cmd:` backend that says `hello` and then reads requests without answering any. */
const shHost = (hello: string) => `cmd:printf '%s\\n' '${hello}'; cat >/dev/null`;

Deno.test("the protocol's messages", async (t) => {
  await t.step("a hello of another version is refused naming both versions", () => {
    assert.throws(
      () => parseHello({ protocol: "gemm-oracle-backend", version: 2, name: "x", ops: {} }),
      /speaks protocol version 2; this oracle speaks version 1/,
    );
  });
  await t.step("a hello declaring an op without a model name is refused", () => {
    assert.throws(
      () => parseHello({ protocol: "gemm-oracle-backend", version: 1, name: "x", ops: { fp8_gemm_nt: 3 } }),
      /declares op "fp8_gemm_nt" with model 3/,
    );
  });
  await t.step("an error answer needs a message, and restart is carried", () => {
    assert.throws(
      () => parseAnswer({ id: 1, status: "error" }, 1),
      /needs a non-empty string "message", got undefined/,
    );
    assert.throws(() => parseAnswer({ id: 2, status: "ok" }, 1), /the answer has id 2, the request had 1/);
    assert.deepEqual(parseAnswer({ id: 1, status: "error", message: "x", restart: true }, 1), {
      id: 1,
      status: "error",
      message: "x",
      restart: true,
    });
  });
});

Deno.test("verify with a backend host that cannot serve", async (t) => {
  await t.step("a host that exits before its hello is exit 2 with its stderr", async () => {
    const r = await runCliProcess([
      "verify",
      "--backend",
      "cmd:echo broken adapter >&2; exit 3",
      "--ops",
      "fp8_gemm_nt",
    ]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /exited with status 3 before its hello; its stderr ends:\n.*broken adapter/);
  });
  await t.step("a hello of another protocol version is exit 2 naming it", async () => {
    const r = await runCliProcess([
      "verify",
      "--backend",
      shHost('{"protocol":"gemm-oracle-backend","version":9,"name":"x","ops":{}}'),
      "--ops",
      "fp8_gemm_nt",
    ]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /speaks protocol version 9/);
  });
  await t.step("a host that never says hello is exit 2 after the start timeout", async () => {
    const r = await runCliProcess([
      "verify",
      "--backend",
      "cmd:sleep 30",
      "--ops",
      "fp8_gemm_nt",
      "--host-start-timeout",
      "1",
    ]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /no hello within 1 s/);
  });
  await t.step("ops the host does not declare are skipped with the reason, and nothing passes", async () => {
    const dir = await Deno.makeTempDir();
    const json = `${dir}/r.json`;
    const r = await runCliProcess([
      "verify",
      "--backend",
      shHost('{"protocol":"gemm-oracle-backend","version":1,"name":"x","ops":{}}'),
      "--ops",
      "fp8_gemm_nt",
      "--suite",
      "fixtures",
      "--json",
      json,
    ]);
    assert.equal(r.code, 1, "a run that executed no check is not a pass");
    assert.match(r.stdout, /no check was executed \(every case was skipped\)/);
    const report = JSON.parse(await Deno.readTextFile(json));
    assert.ok(report.cases.length > 0);
    for (const c of report.cases) {
      assert.equal(c.status, "skip");
      assert.match(c.message, /does not declare fp8_gemm_nt/);
    }
    assert.equal(report.complete, true);
    await Deno.remove(dir, { recursive: true });
  });
  await t.step("an explicit backend that says it is unavailable is exit 2 with its reason", async () => {
    const r = await runCliProcess([
      "verify",
      "--backend",
      shHost('{"protocol":"gemm-oracle-backend","version":1,"name":"x","ops":{},"unavailable":"no deep_gemm here"}'),
      "--ops",
      "fp8_gemm_nt",
    ]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /no deep_gemm here/);
  });
});

Deno.test("the C ABI host", async (t) => {
  await t.step("runs the CPU backend out of process with the reference's bits", async () => {
    const hosted = await HostedBackend.open(hostCommand("cpu"), {
      caseTimeoutMs: 60_000,
      startTimeoutMs: 120_000,
      log: () => {},
    });
    try {
      assert.equal(hosted.declared("fp8_gemm_nt"), "sm90_1d2d");
      assert.equal(hosted.declared("fp8_mqa_logits"), "sm90"); // the ABI's sm90_mqa, under the reference's name
      // 1 × 8 × 32: A = 1.0 (e4m3 0x38), B = 0.5 (0x30), unit scales: D = 16 (bf16 0x4180).
      const one = Tensor.from("f32", [1, 1], new Float32Array([1]));
      const got = await hosted.run(
        "fp8_gemm_nt",
        {
          a: Tensor.from("e4m3", [1, 32], new Uint8Array(32).fill(0x38)),
          sfa: one,
          b: Tensor.from("e4m3", [8, 32], new Uint8Array(256).fill(0x30)),
          sfb: one,
        },
        {},
        "sm90_1d2d",
        { d: Tensor.zeros("bf16", [1, 8]) },
      );
      assert.equal(got.kind, "ok");
      if (got.kind === "ok") assert.deepEqual([...got.outputs.d.data], new Array(8).fill(0x4180));
      const none = await hosted.run("per_token_cast_to_fp8", {}, {}, "gpu", {});
      assert.deepEqual(none, {
        kind: "unsupported",
        message: "cpu: the kernel ABI has no entry for per_token_cast_to_fp8",
      });
    } finally {
      await hosted.close();
    }
  });

  await t.step("oracle run --backend cpu writes the reference's bits", async () => {
    const dir = await Deno.makeTempDir();
    const input = new URL("../../fixtures/fp8_gemm_nt/fp8_gemm_nt_m16_n128_k256_fp32.safetensors", import.meta.url)
      .pathname;
    assert.equal((await runCliProcess(["run", "fp8_gemm_nt", input, `${dir}/ref.safetensors`])).code, 0);
    const r = await runCliProcess(["run", "fp8_gemm_nt", "--backend", "cpu", input, `${dir}/cpu.safetensors`]);
    assert.equal(r.code, 0, r.stderr);
    const cmp = await runCliProcess(["compare", `${dir}/ref.safetensors`, `${dir}/cpu.safetensors`]);
    assert.equal(cmp.code, 0, cmp.stdout);
    assert.match(cmp.stdout, /PASS d bf16 \[16,128\] elements 2048 mismatches 0/);
    const bad = await runCliProcess(["run", "fp8_gemm_nt", "--backend", "cpu", "--promote", "none", input, `${dir}/x`]);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--promote does not apply with --backend/);
    await Deno.remove(dir, { recursive: true });
  });
});

Deno.test("verify spreads a backend that reports several devices over one host per device", async () => {
  // A host that says it sees two GPUs and answers every request with the device it was pinned to.
  const script = [
    `printf '%s\\n' '{"protocol":"gemm-oracle-backend","version":1,"name":"x","ops":{"fp8_gemm_nt":"sm90_1d2d"},"info":{"devices":2}}'`,
    `while read -r line; do id=$(printf '%s' "$line" | sed 's/.*"id":\\([0-9]*\\).*/\\1/');`,
    `printf '{"id":%s,"status":"unsupported","message":"pinned to %s"}\\n' "$id" "\${CUDA_VISIBLE_DEVICES:-0}"; done`,
  ].join("\n");
  const dir = await Deno.makeTempDir();
  const r = await runCliProcess([
    "verify",
    "--backend",
    `cmd:${script}`,
    "--ops",
    "fp8_gemm_nt",
    "--suite",
    "fixtures",
    "--json",
    `${dir}/r.json`,
  ]);
  assert.equal(r.code, 1, r.stderr); // every case skipped: no check executed
  assert.match(r.stderr, /sees 2 devices: one backend host per device/);
  const report = JSON.parse(await Deno.readTextFile(`${dir}/r.json`));
  const ids = report.cases.map((c: { id: string }) => c.id);
  assert.equal(new Set(ids).size, ids.length, "every case once");
  // Dealt round-robin and merged back in case order: device 0, 1, 0, 1, ...
  report.cases.forEach((c: { status: string; message: string }, i: number) => {
    assert.equal(c.status, "skip");
    assert.equal(c.message, `pinned to ${i % 2}`);
  });
  await Deno.remove(dir, { recursive: true });
});
