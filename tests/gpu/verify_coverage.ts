/**
 * Reads a `verify --json` report (tests/gpu/run.sh's `ops` step: `verify --backend cuda --suite all`) and checks issue
 * 28's criterion: every case passed, or was skipped because its operation needs another architecture (the message
 * names it: "needs SM100 (Blackwell)", cli/verify/backend_ops.ts ARCH_ONLY). Prints one line per operation (cases
 * passed / skipped / other) and the first message of anything else.
 *
 * usage: deno run -A tests/gpu/verify_coverage.ts REPORT.json    exit 0: criterion met; 1: not met; 2: bad report
 * @module
 */
interface Row {
  op: string;
  id: string;
  status: string;
  message?: string;
}

/**
 * The per-op tally and the rows that break the criterion.
 * @param cases the report's rows
 */
export function coverage(cases: readonly Row[]): { lines: string[]; offending: Row[] } {
  const byOp = new Map<string, { pass: number; arch: number; other: number }>();
  const offending: Row[] = [];
  for (const c of cases) {
    const t = byOp.get(c.op) ?? { pass: 0, arch: 0, other: 0 };
    if (c.status === "pass") t.pass++;
    else if (c.status === "skip" && /needs SM100 \(Blackwell\)/.test(c.message ?? "")) t.arch++;
    else {
      t.other++;
      offending.push(c);
    }
    byOp.set(c.op, t);
  }
  const lines = [...byOp].sort(([a], [b]) => a.localeCompare(b)).map(([op, t]) =>
    `${op.padEnd(40)} pass ${t.pass}  skip(arch) ${t.arch}  other ${t.other}`
  );
  return { lines, offending };
}

if (import.meta.main) {
  const path = Deno.args[0];
  if (!path) {
    console.error("usage: verify_coverage.ts REPORT.json");
    Deno.exit(2);
  }
  let rows: Row[];
  try {
    rows = JSON.parse(await Deno.readTextFile(path)).cases;
    if (!Array.isArray(rows)) throw new TypeError("no cases");
  } catch (e) {
    console.error(`verify_coverage: ${path}: ${(e as Error).message}`);
    Deno.exit(2);
  }
  const { lines, offending } = coverage(rows);
  for (const l of lines) console.log(l);
  for (const r of offending.slice(0, 20)) console.log(`NOT MET ${r.status} ${r.id}: ${r.message ?? ""}`);
  console.log(
    `coverage: ${rows.length} rows, ${offending.length} neither passed nor skipped for another architecture` +
      (offending.length ? "" : " (criterion met)"),
  );
  Deno.exit(offending.length ? 1 : 0);
}
