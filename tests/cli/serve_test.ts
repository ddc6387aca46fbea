import assert from "node:assert/strict";
import denoConfig from "../../deno.json" with { type: "json" };
import { PACKED_UE8M0_KEY, readSafetensors, writeSafetensors } from "../../io/mod.ts";
import { collectCases } from "../../cli/verify/devices.ts";
import { referenceOp as runOp, referenceOpNames as runOpNames } from "../../reference/registry.ts";
import { Tensor } from "../../reference/tensor/mod.ts";
import { readLines } from "../../cli/serve.ts";
import { runCli, withTempDir } from "./_run.ts";

const CLI = new URL("../../cli.ts", import.meta.url).pathname;

/** `oracle serve` as a child process: one request line out, one answer line back. */
class Server {
  readonly #child: Deno.ChildProcess;
  readonly #lines: AsyncIterator<string>;
  readonly #writer: WritableStreamDefaultWriter<Uint8Array>;
  readonly #stderr: Promise<string>;

  constructor() {
    this.#child = new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", CLI, "serve"],
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
      env: { NO_COLOR: "1" },
    }).spawn();
    this.#lines = readLines(this.#child.stdout)[Symbol.asyncIterator]();
    this.#writer = this.#child.stdin.getWriter();
    this.#stderr = new Response(this.#child.stderr).text();
  }

  /** The next stdout line, parsed (every stdout line must be a JSON object). */
  async read(): Promise<Record<string, unknown>> {
    const next = await this.#lines.next();
    assert.ok(!next.done, "the server ended its stdout early");
    const value = JSON.parse(next.value);
    assert.equal(typeof value, "object");
    return value;
  }

  /** Writes raw text to the server's stdin. */
  async write(text: string): Promise<void> {
    await this.#writer.write(new TextEncoder().encode(text));
  }

  /** Sends one raw line and reads the answer. */
  async line(text: string): Promise<Record<string, unknown>> {
    await this.write(text + "\n");
    return await this.read();
  }

  /** Sends one request object and reads the answer. */
  send(request: Record<string, unknown>): Promise<Record<string, unknown>> {
    return this.line(JSON.stringify(request));
  }

  /** Closes stdin; resolves to the exit status, what stdout still held, and stderr. */
  async close(): Promise<{ code: number; rest: string[]; stderr: string }> {
    await this.#writer.close();
    const rest: string[] = [];
    for (let n = await this.#lines.next(); !n.done; n = await this.#lines.next()) rest.push(n.value);
    const { code } = await this.#child.status;
    return { code, rest, stderr: await this.#stderr };
  }
}

function bytesOf(t: Tensor): number[] {
  const c = t.contiguous();
  return [...new Uint8Array(c.data.buffer, c.data.byteOffset, c.data.byteLength)];
}

/** A = 1 (e4m3 0x38), B = 0.5 (0x30), K = 32, unit scales: D = 16 everywhere (bf16 0x4180). */
async function writeTinyGemm(path: string): Promise<void> {
  await writeSafetensors(path, {
    a: Tensor.from("e4m3", [1, 32], new Uint8Array(32).fill(0x38)),
    b: Tensor.from("e4m3", [8, 32], new Uint8Array(256).fill(0x30)),
    sfa: Tensor.from("f32", [1, 1], new Float32Array([1])),
    sfb: Tensor.from("f32", [1, 1], new Float32Array([1])),
  });
}

Deno.test("oracle serve", async (t) => {
  const server = new Server();
  await withTempDir(async (dir) => {
    await t.step("says hello with every op's inputs, outputs, scalars and models", async () => {
      const hello = await server.read();
      assert.equal(hello.protocol, "gemm-oracle-serve");
      assert.equal(hello.version, 1);
      assert.equal(hello.oracle, denoConfig.version);
      const ops = hello.ops as Record<string, Record<string, unknown>>;
      assert.deepEqual(Object.keys(ops), runOpNames());
      const op = runOp("fp8_gemm_nt")!;
      assert.deepEqual(ops.fp8_gemm_nt, {
        inputs: [...op.inputs],
        outputs: [...op.outputs],
        scalars: { ...op.scalars },
        models: [...op.models],
        default_model: "sm90_1d2d",
      });
    });

    await t.step("runs a reference and writes its outputs", async () => {
      await writeTinyGemm(`${dir}/in.safetensors`);
      const answer = await server.send({
        id: 1,
        cmd: "run",
        op: "fp8_gemm_nt",
        inputs: `${dir}/in.safetensors`,
        outputs: `${dir}/out.safetensors`,
        model: null,
        scalars: {},
      });
      assert.deepEqual(answer, { id: 1, status: "ok", model: "sm90_1d2d", outputs: ["d"] });
      const out = await readSafetensors(`${dir}/out.safetensors`);
      assert.equal(out.fileDtypes.get("d"), "BF16");
      assert.deepEqual([...out.tensors.get("d")!.data], new Array(8).fill(0x4180));
      assert.equal(out.metadata.model, "sm90_1d2d");
      const exact = await server.send({
        id: 2,
        cmd: "run",
        op: "fp8_gemm_nt",
        inputs: `${dir}/in.safetensors`,
        outputs: `${dir}/exact.safetensors`,
        model: "exact",
      });
      assert.equal(exact.model, "exact");
    });

    await t.step("lists cases by suite and op glob", async () => {
      const all = [...await collectCases("fixtures", 0.02, 0), ...await collectCases("edge", 0.02, 0)];
      const list = async (
        op: string,
        suite: string,
      ) => ((await server.send({ id: 3, cmd: "cases", op, suite })).cases as Record<string, string>[]);
      const fixtures = await list("*", "fixtures");
      assert.deepEqual(fixtures.map((c) => c.id), all.filter((c) => c.suite === "fixtures").map((c) => c.id));
      const edge = await list("fp8_gemm_nt", "edge");
      assert.ok(edge.length > 0 && edge.every((c) => c.op === "fp8_gemm_nt" && c.suite === "edge"));
      assert.deepEqual(edge[0], {
        id: "edge/fp8_nt_m1",
        op: "fp8_gemm_nt",
        layout: "nt, m = 1 (§14.6)",
        suite: "edge",
      });
      const both = await list("fp8_gemm_??", "all");
      assert.deepEqual(
        new Set(both.map((c) => c.op)),
        new Set(["fp8_gemm_nt", "fp8_gemm_nn", "fp8_gemm_tn", "fp8_gemm_tt"]),
      );
      assert.ok(!both.some((c) => c.id.startsWith("deepseek")));
    });

    await t.step("writes a case's inputs (packed UE8M0 scales listed) and answers its scalars", async () => {
      const all = [...await collectCases("fixtures", 0.02, 0)];
      const packed = all.find((c) =>
        Object.entries(c.build().inputs).some(([n, x]) => x.dtype === "i32" && /(^|_)sf[ab]?$/.test(n))
      )!;
      const built = packed.build();
      const answer = await server.send({ id: 4, cmd: "case", case: packed.id, inputs: `${dir}/case.safetensors` });
      assert.deepEqual(answer, {
        id: 4,
        status: "ok",
        case: packed.id,
        op: packed.op,
        layout: packed.layout,
        suite: "fixtures",
        scalars: JSON.parse(JSON.stringify(built.scalars)),
      });
      const file = await readSafetensors(`${dir}/case.safetensors`);
      assert.deepEqual([...file.tensors.keys()].sort(), Object.keys(built.inputs).sort());
      for (const [name, x] of Object.entries(built.inputs)) {
        assert.deepEqual(bytesOf(file.tensors.get(name)!), bytesOf(x));
      }
      const listed = JSON.parse(file.metadata[PACKED_UE8M0_KEY]) as string[];
      assert.ok(listed.length > 0 && listed.every((n) => file.tensors.get(n)!.dtype === "i32"));
      // The form of the protocol's table: the case id as "id", echoed back.
      const byId = await server.send({ id: "edge/fp8_nt_m7", cmd: "case", inputs: `${dir}/m7.safetensors` });
      assert.equal(byId.id, "edge/fp8_nt_m7");
      assert.equal(byId.status, "ok");
    });

    await t.step("runs a case from its file to the in-memory reference's bits (MN-major operands too)", async () => {
      const edge = await collectCases("edge", 0.02, 0);
      for (const id of ["edge/fp8_tt", "edge/fp8_nn", "edge/fp8_nt_1d1d_c"]) {
        const c = edge.find((x) => x.id === id)!;
        const built = c.build();
        const want = runOp(c.op)!.run(built.inputs, built.scalars, {});
        const path = `${dir}/${id.replace("/", "_")}`;
        assert.equal((await server.send({ id: 5, cmd: "case", case: id, inputs: `${path}.in` })).status, "ok");
        const answer = await server.send({
          id: 6,
          cmd: "run",
          op: c.op,
          inputs: `${path}.in`,
          outputs: `${path}.out`,
          scalars: built.scalars,
        });
        assert.equal(answer.status, "ok", JSON.stringify(answer));
        const got = (await readSafetensors(`${path}.out`)).tensors;
        for (const [name, x] of Object.entries(want)) assert.deepEqual(bytesOf(got.get(name)!), bytesOf(x), id);
      }
    });

    await t.step("answers every faulty request with an error and reads on", async () => {
      const cases: [string, unknown, RegExp][] = [
        ["not json", null, /^the line is not JSON/],
        ["[1, 2]", null, /^a request must be a JSON object, got an array$/],
        ['{"cmd": "cases"}', null, /^"id" must be a positive integer, got nothing$/],
        ['{"id": 7}', 7, /^the request has no "cmd"$/],
        ['{"id": 8, "cmd": "frob"}', 8, /^unknown cmd "frob"; known: run, cases, case, identify$/],
        ['{"id": 9, "cmd": "run", "op": "fp9_gemm"}', 9, /^unknown op "fp9_gemm"; known: bf16_gemm_nn, /],
        ['{"id": 10, "cmd": "run", "op": "fp8_gemm_nt", "inputs": 3}', 10, /^"inputs" must be a string, got number 3$/],
        [
          `{"id": 11, "cmd": "run", "op": "fp8_gemm_nt", "inputs": "${dir}/in.safetensors", "outputs": "${dir}/o", "scalars": {"alpah": 1}}`,
          11,
          /^fp8_gemm_nt has no scalar "alpah"; its scalars: arch, recipe, recipe_a, recipe_b$/,
        ],
        [
          `{"id": 12, "cmd": "run", "op": "fp8_gemm_nt", "inputs": "${dir}/missing", "outputs": "${dir}/o"}`,
          12,
          /^cannot access a file: /,
        ],
        [
          `{"id": 13, "cmd": "run", "op": "bf16_gemm_nt", "inputs": "${dir}/in.safetensors", "outputs": "${dir}/o"}`,
          13,
          /^unusable input: bf16_gemm_nt: "a" has dtype e4m3; expected bf16$/,
        ],
        [
          `{"id": 14, "cmd": "run", "op": "fp8_gemm_nt", "inputs": "${dir}/in.safetensors", "outputs": "${dir}/o", "model": "sm70"}`,
          14,
          /^unusable input: Unknown kernel model "sm70"/,
        ],
        [
          '{"id": 15, "cmd": "cases", "suite": "deepseek-v3"}',
          15,
          /^unknown suite "deepseek-v3"; known: fixtures, edge, all$/,
        ],
        [`{"id": 16, "cmd": "case", "case": "edge/none", "inputs": "${dir}/x"}`, 16, /^no case "edge\/none"/],
      ];
      await Deno.writeTextFile(`${dir}/bad.safetensors`, "not a safetensors file");
      cases.push([
        `{"id": 17, "cmd": "run", "op": "fp8_gemm_nt", "inputs": "${dir}/bad.safetensors", "outputs": "${dir}/o"}`,
        17,
        /bad\.safetensors: /,
      ]);
      for (const [line, id, message] of cases) {
        const answer = await server.line(line);
        assert.equal(answer.status, "error", line);
        assert.equal(answer.id, id, line);
        assert.match(answer.message as string, message, line);
      }
      assert.equal((await server.send({ id: 18, cmd: "cases", op: "einsum", suite: "all" })).status, "ok");
    });

    await t.step("exits 0 at the end of input with nothing else on stdout", async () => {
      await server.write("\n  \n"); // blank lines are not requests: no answer
      const { code, rest, stderr } = await server.close();
      assert.equal(code, 0, stderr);
      assert.deepEqual(rest, []);
    });
  });
});

Deno.test("oracle serve --help and bad arguments", async () => {
  const help = await runCli(["serve", "--help"]);
  assert.equal(help.code, 0);
  assert.match(help.stdout, /^Usage: oracle serve/);
  const stray = await runCli(["serve", "extra"]);
  assert.equal(stray.code, 2);
  assert.match(stray.stderr, /serve takes no file arguments/);
});
