/**
 * The Python package `python/` (gemm_oracle) under the repository's one test command: its pytest suite against this
 * oracle, and an offline `pip install` of it. Each test is ignored, with the reason in its name, where the machine
 * lacks what it needs (python3, numpy, pytest; for the install, pip).
 * @module
 */
import assert from "node:assert/strict";

const ROOT = new URL("../../", import.meta.url).pathname.replace(/\/$/, "");
import { PYTHON } from "../_python.ts";

interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

async function python(args: string[], options: { cwd?: string; env?: Record<string, string> } = {}): Promise<Ran> {
  const out = await new Deno.Command(PYTHON, {
    args,
    cwd: options.cwd ?? ROOT,
    env: { PYTHONDONTWRITEBYTECODE: "1", NO_COLOR: "1", ...options.env },
    stdin: "null",
  }).output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

/** Why a Python test cannot run here, or undefined when it can. */
async function missing(check: string, what: string): Promise<string | undefined> {
  try {
    const r = await python(["-c", check]);
    if (r.code === 0) return undefined;
    const last = r.stderr.trim().split("\n").pop() ?? `exit status ${r.code}`;
    return `${what}: ${last}`;
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return `${PYTHON} is not on PATH`;
    throw e;
  }
}

const noPytest = await missing("import numpy, pytest", "numpy or pytest is not importable");
// The package builds with its own in-tree backend (python/_build), so pip alone is needed: no setuptools, no wheel.
const noInstall = noPytest ?? await missing("import pip", "pip is not importable");

function named(name: string, reason: string | undefined): string {
  return reason === undefined ? name : `${name} (ignored: ${reason})`;
}

function inherited(name: string): string[] {
  const v = Deno.env.get(name);
  return v ? [v] : [];
}

Deno.test({
  name: named("python package: its pytest suite passes against this oracle", noPytest),
  ignore: noPytest !== undefined,
  async fn() {
    const r = await python(["-m", "pytest", "-q", "-p", "no:cacheprovider", "python/tests"], {
      env: {
        PYTHONPATH: ["python", ...inherited("PYTHONPATH")].join(":"),
        GEMM_ORACLE_DENO: Deno.execPath(),
      },
    });
    assert.equal(r.code, 0, `pytest failed:\n${r.stdout}\n${r.stderr}`);
    const summary = r.stdout.trim().split("\n").pop() ?? "";
    assert.match(summary, /^\d+ passed/, r.stdout);
    assert.doesNotMatch(summary, /failed|error/, r.stdout);
  },
});

Deno.test({
  name: named("python package: pip installs it offline, importable with its pytest11 entry point", noInstall),
  ignore: noInstall !== undefined,
  async fn() {
    const tmp = await Deno.makeTempDir({ prefix: "gemm_oracle_pip_" });
    try {
      // Built from a copy, so nothing pip writes lands in the repository.
      const src = `${tmp}/src`;
      await Deno.mkdir(`${src}/gemm_oracle`, { recursive: true });
      await Deno.mkdir(`${src}/_build`, { recursive: true });
      for (const f of ["pyproject.toml", "README.md", "_build/gemm_oracle_build.py"]) {
        await Deno.copyFile(`${ROOT}/python/${f}`, `${src}/${f}`);
      }
      for await (const e of Deno.readDir(`${ROOT}/python/gemm_oracle`)) {
        if (e.isFile && e.name.endsWith(".py")) {
          await Deno.copyFile(`${ROOT}/python/gemm_oracle/${e.name}`, `${src}/gemm_oracle/${e.name}`);
        }
      }
      const site = `${tmp}/site`;
      const install = await python(
        ["-m", "pip", "install", "--no-build-isolation", "--no-index", "--no-deps", "--target", site, src],
        { cwd: tmp },
      );
      assert.equal(install.code, 0, `pip install failed:\n${install.stdout}\n${install.stderr}`);
      const check = [
        "import importlib.metadata as md, os, sys",
        "import gemm_oracle",
        "assert gemm_oracle.__file__.startswith(sys.argv[1]), gemm_oracle.__file__",
        "eps = [e for e in md.entry_points(group='pytest11') if e.value == 'gemm_oracle.pytest_plugin']",
        "assert eps and eps[0].name == 'gemm_oracle.pytest_plugin', eps",
        "print(gemm_oracle.cases('fp8_gemm_tt', 'edge')[0].id)",
      ].join("\n");
      const env = {
        PYTHONPATH: [site, ...inherited("PYTHONPATH")].join(":"),
        GEMM_ORACLE_HOME: ROOT,
        GEMM_ORACLE_DENO: Deno.execPath(),
      };
      const imported = await python(["-c", check, site], { cwd: tmp, env });
      assert.equal(imported.code, 0, `the installed package:\n${imported.stdout}\n${imported.stderr}`);
      assert.equal(imported.stdout.trim(), "edge/fp8_tt");
      // Installed, the plugin loads by itself (no -p): its option is in pytest's help.
      const help = await python(["-m", "pytest", "-p", "no:cacheprovider", "--help"], { cwd: tmp, env });
      assert.equal(help.code, 0, help.stderr);
      assert.match(help.stdout, /--gemm-oracle-home=DIR/);
    } finally {
      await Deno.remove(tmp, { recursive: true });
    }
  },
});
