// The GPU machine's test programs (tests/gpu/run.sh builds them there, where a build error costs device time) build
// here too, with the command lines run.sh itself uses: check.cpp with g++, bench.cpp, pdl_check.cu, ffma_wgmma_probe.cu
// and cluster_occupancy.cu with nvcc for sm_90a.
import assert from "node:assert/strict";
import { nvccTest } from "../kernels/_nvcc.ts";
import { PYTHON } from "../_python.ts";

const root = new URL("../../", import.meta.url).pathname;

/** run.sh's build command for `program`: the `g++` or `nvcc` command that ends in `tests/gpu/<program> -ldl`. */
function buildCommand(runSh: string, program: string): string[] {
  const m = new RegExp(`((?:g\\+\\+|nvcc) [^&()]*? tests/gpu/${program.replace(".", "\\.")} -ldl)`).exec(runSh);
  assert.ok(m, `run.sh has no build command for tests/gpu/${program}`);
  return m[1].split(/\s+/);
}

await nvccTest("the GPU test programs build with run.sh's command lines", "go-gpu-programs-", async (t, dir) => {
  const runSh = await Deno.readTextFile(`${root}tests/gpu/run.sh`);
  /** The built bench on a library that does not exist: its arguments are judged before the library is loaded. */
  const bench = async (...args: string[]) => {
    const out = await new Deno.Command(`${dir}/bench`, {
      args: ["/nonexistent/libgo_cuda.so", ...args],
      stdout: "piped",
      stderr: "piped",
    }).output();
    return { code: out.code, err: new TextDecoder().decode(out.stderr) };
  };
  for (const program of ["check.cpp", "bench.cpp", "pdl_check.cu", "ffma_wgmma_probe.cu", "cluster_occupancy.cu"]) {
    await t.step(program, async () => {
      const [cmd, ...args] = buildCommand(runSh, program);
      if (program !== "check.cpp") assert.ok(args.includes("-gencode=arch=compute_90a,code=sm_90a"), args.join(" "));
      // run.sh writes into its build directory "$B"; here, a scratch directory.
      const out = await new Deno.Command(cmd, {
        args: args.map((a) => a.replace('"$B', dir).replace(/"$/, "")),
        cwd: root,
        stdout: "piped",
        stderr: "piped",
      }).output();
      assert.ok(out.success, `${cmd} ${args.join(" ")}\n${new TextDecoder().decode(out.stderr)}`);
      assert.ok((await Deno.stat(`${dir}/${program.replace(/\.\w+$/, "")}`)).isFile);
    });
  }
  await t.step(
    "bench --shape takes and refuses the names tests/gpu/shapes.py does, with the same fault, before it loads the backend",
    async () => {
      // bench.cpp and shapes.py each check a shape name (one for C++, one for Python): the same names go through both.
      const names = [
        "dense 4096x4224x32768",
        " masked 32x20x4096x2048 ",
        "contiguous 4x8192x4096x2048",
        "dense 4096x4100x512",
        "dense 4096x4096x500",
        "dense 4097x4096x512",
        "dense 0x4096x512",
        "contiguous 4x100x4096x512",
        "grouped 4x128x4096x512",
        "dense 4096x4224",
        "dense 1x64x128y",
      ];
      const py = `import sys; sys.path.insert(0, sys.argv[1]); import shapes
for n in sys.argv[2:]:
    try:
        shapes.parse_shape_name(n); print("ok")
    except ValueError as e:
        print(str(e).split(": ", 1)[1])`;
      const ref = await new Deno.Command(PYTHON, { args: ["-c", py, `${root}tests/gpu`, ...names], stdout: "piped" })
        .output();
      const verdicts = new TextDecoder().decode(ref.stdout).trimEnd().split("\n");
      assert.equal(verdicts.length, names.length, verdicts.join("\n"));
      assert.equal(verdicts.filter((v) => v === "ok").length, 3, "three names are valid");
      for (const [i, name] of names.entries()) {
        const { code, err } = await bench("--shape", name);
        assert.equal(code, 2, err); // a refused name, or a valid one and then the missing library
        if (verdicts[i] === "ok") {
          assert.ok(err.includes("/nonexistent/libgo_cuda.so") && !err.includes("--shape"), err);
        } else assert.ok(err.includes(`--shape "${name}": ${verdicts[i]}`), `${name}: bench said ${err}`);
      }
    },
  );
  await t.step(
    "bench --once (one call a shape, for a profiler) refuses --floor and --sweep before it loads the backend",
    async () => {
      const run = (...extra: string[]) => bench("--once", ...extra);
      for (const extra of [["--floor"], ["--sweep", "bn=64"]]) {
        const r = await run(...extra);
        assert.equal(r.code, 2, r.err);
        assert.match(r.err, /--once \/ --calls call each shape untimed for a profiler: not with --sweep or --floor/);
      }
      const alone = await run("--shape", "dense 4096x7168x2048");
      assert.equal(alone.code, 2, alone.err);
      assert.ok(
        alone.err.includes("/nonexistent/libgo_cuda.so"),
        `--once alone goes on to load the library: ${alone.err}`,
      );
    },
  );
  await t.step(
    "bench --calls takes a count of calls from 1 to 1000, refuses anything else, and is --once's kind",
    async () => {
      for (const bad of ["", "0", "1001", "3x"]) {
        const r = await bench("--calls", bad);
        assert.equal(r.code, 2, r.err);
        assert.ok(r.err.includes(`--calls "${bad}": not a count of calls from 1 to 1000`), `${bad}: ${r.err}`);
      }
      const floor = await bench("--calls", "11", "--floor");
      assert.equal(floor.code, 2, floor.err);
      assert.match(floor.err, /--once \/ --calls call each shape untimed for a profiler/);
      const good = await bench("--calls", "11");
      assert.equal(good.code, 2, good.err);
      assert.ok(good.err.includes("/nonexistent/libgo_cuda.so"), `--calls 11 goes on to load the library: ${good.err}`);
    },
  );
  await t.step("bench --rotate-mb takes a count of megabytes and refuses anything else with exit 2", async () => {
    const run = (v: string) => bench("--rotate-mb", v);
    for (const bad of ["", "-1", "12x", "2097152"]) {
      const r = await run(bad);
      assert.equal(r.code, 2, r.err);
      assert.ok(r.err.includes(`--rotate-mb "${bad}": not a count of megabytes`), `${bad}: ${r.err}`);
    }
    for (const good of ["0", "512"]) {
      const r = await run(good);
      assert.equal(r.code, 2, r.err);
      assert.ok(r.err.includes("/nonexistent/libgo_cuda.so"), `${good} goes on to load the library: ${r.err}`);
    }
  });
});

await nvccTest(
  "run.sh's ab step builds one library per copy of kernels/ in AB_SOURCES, each with its copy's headers for the JIT, " +
    "and with TRACE_AB=1 its profiling build",
  "go-gpu-ab-",
  async (_t, dir) => {
    const runSh = await Deno.readTextFile(`${root}tests/gpu/run.sh`);
    // run.sh's nvcc build function, the parsing of AB_SOURCES, and the build step's block for the B libraries (from
    // its comment to its closing `fi`).
    const fn = /\n(build_cuda_so\(\) \{[\s\S]*?\n\}\n)/.exec(runSh);
    const has = /\n(has\(\) \{.*\}\n)/.exec(runSh);
    const dirs = /\n(IFS=':' read -r -a ab_dirs .*\n)/.exec(runSh);
    const m = /\n( *# The ab step's B libraries[\s\S]*?\n {4}fi\n)/.exec(runSh);
    assert.ok(
      fn && has && dirs && m,
      "run.sh has no build_cuda_so, has, AB_SOURCES parsing or build block for the B libraries",
    );
    // Two copies of kernels/ with one translation unit each: jit.cu, which compiles GO_CUDA_SOURCE_DIR in.
    const copies = [`${dir}/copy of kernels`, `${dir}/second copy`];
    for (const src of copies) {
      await Deno.mkdir(`${src}/cuda`, { recursive: true });
      await Deno.copyFile(`${root}kernels/gemm_oracle.h`, `${src}/gemm_oracle.h`);
      for await (const e of Deno.readDir(`${root}kernels/cuda`)) {
        if (/\.(cuh|h)$/.test(e.name) || e.name === "jit.cu") {
          await Deno.copyFile(`${root}kernels/cuda/${e.name}`, `${src}/cuda/${e.name}`);
        }
      }
    }
    // With the trace step and TRACE_AB=1 each copy's profiling build too (run.sh's own `has` reads STEPS).
    const out = await new Deno.Command("bash", {
      args: ["-c", `${has[1]}${fn[1]}${dirs[1]}${m[1]}wait`],
      cwd: root,
      env: { B: `${dir}/build`, AB_SOURCES: copies.join(":"), STEPS: "build ab trace", TRACE_AB: "1" },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const log = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
    for (const [i, src] of copies.entries()) {
      assert.match(log, new RegExp(`ab library ${i + 1} ok`), log);
      assert.match(log, new RegExp(`ab profiling library ${i + 1} ok`), log);
      for (const so of ["libgo_cuda.so", "prof/libgo_cuda_prof.so"]) {
        const lib = new TextDecoder("latin1").decode(await Deno.readFile(`${dir}/build/ab/${i + 1}/${so}`));
        assert.ok(lib.includes(`${src}/cuda`), `library ${i + 1}'s ${so} JIT reads ${src}/cuda`);
      }
    }
  },
);
