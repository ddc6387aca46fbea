/**
 * The Python interpreter the tests run: `GEMM_ORACLE_PYTHON` if set, else the first `python3` along PATH that imports
 * numpy and pytest, else the first `python3` at all. `npx` puts Node's own directory (`/usr/bin`) first on PATH, where
 * a distribution's python3 often lacks numpy while the one the machine is set up with (pyenv, a venv) has it; taking
 * the first python3 would turn every Python test into an ignored one under the README's test command.
 * @module
 */

function probe(python: string, code: string): boolean {
  try {
    return new Deno.Command(python, { args: ["-c", code], stdout: "null", stderr: "null" }).outputSync().code === 0;
  } catch {
    return false;
  }
}

function candidates(): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const dir of (Deno.env.get("PATH") ?? "").split(":")) {
    if (!dir) continue;
    const p = `${dir}/python3`;
    try {
      const real = Deno.realPathSync(p);
      if (seen.has(real) && !p.includes("/shims/")) continue;
      seen.add(real);
      out.push(p);
    } catch { /* not here */ }
  }
  return out;
}

/** The interpreter path (or "python3" when none is found: the tests then report why they are ignored). */
export const PYTHON: string = Deno.env.get("GEMM_ORACLE_PYTHON") ??
  candidates().find((p) => probe(p, "import numpy, pytest")) ?? candidates()[0] ?? "python3";

/**
 * Why Python tests cannot run here, or undefined when they can.
 * @param modules the modules they import
 */
export function pythonMissing(modules: string[] = ["numpy"]): string | undefined {
  if (!probe(PYTHON, "pass")) return "python3 is not on PATH";
  const code = modules.map((m) => `import ${m}`).join("; ");
  return probe(PYTHON, code) ? undefined : `${PYTHON} cannot import ${modules.join(", ")}`;
}
