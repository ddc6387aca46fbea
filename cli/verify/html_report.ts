/**
 * `verify --html FILE`: the report as one self-contained HTML page (inline CSS and SVG, one small inline script, no
 * network and no external assets): the summary, one row per (case, backend), and for each failing case its mismatch
 * heat map (one SVG per output: 128×128 tiles coloured by mismatch count, grey where nothing was compared, each
 * tile's mismatches outlined by their bounding box) with the one-line pattern, the worst tiles, and the identify
 * result.
 *
 * The script only marks the page as rendered: it sets `document.title` to start with "ok" and writes a status element
 * (`#status`), or writes any error into that element, so a headless browser's DOM dump says whether the page loaded
 * without errors.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { renderHtml } from "./html_report.ts";
 * const html = renderHtml({
 *   oracle: "0.1.0", backends: [], cases: [], complete: true,
 *   summary: { pass: 0, fail: 0, skip: 0, error: 0, crashed: 0, timedOut: 0 },
 * });
 * assert.match(html, /^<!DOCTYPE html>/);
 * assert.doesNotMatch(html, /(src|href)="(https?:)?\/\//);
 * ```
 * @module
 */
import { formatElementDiff, type MismatchMap } from "../../reference/compare/mismatch_map.ts";
import type { CaseResult, Report } from "./report.ts";

/** Text as HTML (markup escaped, terminal colours dropped). */
function esc(s: unknown): string {
  return String(s)
    // deno-lint-ignore no-control-regex
    .replace(/\x1b\[[0-9;?]*[A-Za-z]/g, "")
    .replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}

/**
 * The fill of a tile with `count` mismatches out of `compared` (white-yellow-red by the fraction, log-scaled so one
 * mismatch in a tile is visible; grey for a tile with nothing compared).
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { tileColour } from "./html_report.ts";
 * assert.equal(tileColour(-1, 0), "#d9d9d9");
 * assert.equal(tileColour(0, 100), "#f4fbf4");
 * assert.notEqual(tileColour(1, 16384), tileColour(16384, 16384));
 * ```
 */
export function tileColour(count: number, compared: number): string {
  if (count < 0) return "#d9d9d9";
  if (count === 0) return "#f4fbf4";
  // t in (0, 1]: log-scaled fraction, one mismatch of 16384 ≈ 0.15
  const f = compared > 0 ? count / compared : 1;
  const t = Math.min(1, Math.max(0.12, 1 + Math.log10(f) / 4.5));
  const r = 255, g = Math.round(235 - 200 * t), b = Math.round(120 - 110 * t);
  return `rgb(${r},${g},${Math.max(0, b)})`;
}

/** Elements per tile (for the colour scale): the tile's area, clipped at the tensor's edges. */
function tileArea(map: MismatchMap, ti: number, tj: number): number {
  const h = Math.min(map.tile, map.rows - ti * map.tile), w = Math.min(map.tile, map.cols - tj * map.tile);
  return Math.max(1, h) * Math.max(1, w);
}

/**
 * One output's heat map as inline SVG: a grid per group (up to 16 groups drawn), each cell a 128×128 tile.
 * @param name the output's name
 * @param map its mismatch map
 * @returns the SVG element's markup
 */
export function heatMapSvg(name: string, map: MismatchMap): string {
  const TR = map.tileRows, TC = map.tileCols;
  // One cell per 128×128 tile, drawn to scale (a tail tile is narrower, but at least 8 px), at most 160 px a tile.
  const cell = Math.max(4, Math.min(160, Math.floor(480 / Math.max(TR, TC))));
  const axis = (len: number) => (n: number) => {
    const t = Math.floor(n / map.tile), size = Math.min(map.tile, len - t * map.tile);
    if (size <= 0) return t * cell;
    const width = size === map.tile ? cell : Math.max(8, Math.round((cell * size) / map.tile));
    return t * cell + Math.round(((n - t * map.tile) * width) / size);
  };
  const pxRow = axis(map.rows), pxCol = axis(map.cols);
  const groups = Math.min(map.groups, 16);
  const gap = 14, label = 16;
  const w = pxCol(map.cols), h = pxRow(map.rows);
  const perRow = Math.max(1, Math.floor(760 / (w + gap)));
  const width = Math.max(200, Math.min(groups, perRow) * (w + gap));
  const height = Math.ceil(groups / perRow) * (h + label + gap) + 4;
  const parts: string[] = [
    `<svg class="heat" xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" ` +
    `viewBox="0 0 ${width} ${height}" role="img" aria-label="${esc(`${name} mismatch heat map`)}">`,
  ];
  for (let g = 0; g < groups; g++) {
    const x0 = (g % perRow) * (w + gap), y0 = Math.floor(g / perRow) * (h + label + gap);
    const title = map.groups > 1 ? `${map.groupLabel} ${g}` : `${name} [${map.shape.join("×")}]`;
    parts.push(`<text x="${x0}" y="${y0 + 11}" class="glabel">${esc(title)}</text>`);
    for (let i = 0; i < TR; i++) {
      for (let j = 0; j < TC; j++) {
        const count = map.grid[(g * TR + i) * TC + j];
        const r0 = i * map.tile, c0 = j * map.tile;
        const tip = count < 0
          ? `rows ${r0}–${Math.min(map.rows, r0 + map.tile) - 1}, cols ${c0}–${
            Math.min(map.cols, c0 + map.tile) - 1
          }: not compared`
          : `rows ${r0}–${Math.min(map.rows, r0 + map.tile) - 1}, cols ${c0}–${
            Math.min(map.cols, c0 + map.tile) - 1
          }: ${count} mismatches`;
        const x = pxCol(c0), y = pxRow(r0);
        const cw = pxCol(Math.min(map.cols, c0 + map.tile)) - x, ch = pxRow(Math.min(map.rows, r0 + map.tile)) - y;
        parts.push(
          `<rect class="tile${count > 0 ? " bad" : ""}" x="${x0 + x}" y="${y0 + label + y}" ` +
            `width="${Math.max(2, cw - 1)}" height="${Math.max(2, ch - 1)}" ` +
            `fill="${tileColour(count, tileArea(map, i, j))}"><title>${esc(tip)}</title></rect>`,
        );
      }
    }
    // The bounding box of each tile's mismatches, outlined (a bug in 8 rows of a tile shows as a thin box).
    for (const t of map.tiles) {
      if (t.group !== g) continue;
      const x = pxCol(t.cols[0]), y = pxRow(t.rows[0]);
      const bw = Math.max(2, pxCol(t.cols[1] + 1) - x - 1), bh = Math.max(2, pxRow(t.rows[1] + 1) - y - 1);
      parts.push(
        `<rect class="bbox" x="${x0 + x}" y="${y0 + label + y}" width="${bw}" height="${bh}" fill="none" ` +
          `stroke="#5a0000" stroke-width="1.5"/>`,
      );
    }
  }
  parts.push("</svg>");
  return parts.join("");
}

function mapSection(name: string, map: MismatchMap): string {
  const top = [...map.tiles].sort((x, y) => y.count - x.count).slice(0, 6);
  const rows = top.map((t) =>
    `<tr><td>${map.groups > 1 ? `${esc(map.groupLabel)} ${t.group} ` : ""}[${t.tile.join(", ")}]</td>` +
    `<td>${t.rows[0]}–${t.rows[1]}</td><td>${t.cols[0]}–${t.cols[1]}</td><td>${t.count}/${t.compared}</td>` +
    `<td class="mono">${esc(formatElementDiff(t.worst))}</td></tr>`
  ).join("");
  const more = map.tiles.length > top.length
    ? `<p class="note">… and ${map.tiles.length - top.length} more tiles</p>`
    : "";
  const groupsNote = map.groups > 16
    ? `<p class="note">first 16 of ${map.groups} ${esc(map.groupLabel)}s drawn</p>`
    : "";
  return `<div class="map"><h4>${esc(name)}: ${map.mismatches}/${map.compared} mismatches</h4>` +
    `<p class="pattern">${esc(map.classification.text)}</p>${heatMapSvg(name, map)}${groupsNote}` +
    `<table class="tiles"><thead><tr><th>tile</th><th>rows</th><th>cols</th><th>mismatches</th>` +
    `<th>worst element</th></tr></thead><tbody>${rows}</tbody></table>${more}</div>`;
}

function identifySection(c: CaseResult): string {
  const d = c.diagnosis!;
  if (!d.identify) {
    return d.identifySkipped ? `<p class="identify">identify: not run (${esc(d.identifySkipped)})</p>` : "";
  }
  const id = d.identify;
  const items = id.matches.length
    ? id.matches.map((m) =>
      `<li><code>${esc(m.label)}</code>${m.behaviours.length ? ` — ${esc(m.behaviours[0])}` : ""}</li>`
    ).join("") + (id.moreMatches ? `<li>… ${id.moreMatches} more</li>` : "")
    : id.nearest.map((n) =>
      `<li><code>${esc(n.label)}</code>: ${n.mismatches}/${n.compared} mismatches` +
      (n.where.length ? `<br><span class="where">${esc(n.where.join("; "))}</span>` : "") + `</li>`
    ).join("");
  return `<div class="identify"><h4>identify</h4><p><b>${esc(id.verdict)}</b></p>` +
    `<ol>${items}</ol><p class="note">${id.searched} variants searched (${id.notApplicable} do not apply), ` +
    `${id.ms} ms</p></div>`;
}

const CSS = `
body{font:14px/1.4 system-ui,-apple-system,Segoe UI,sans-serif;margin:24px;color:#222;background:#fff}
h1{font-size:20px;margin:0 0 8px}h2{font-size:17px;margin:28px 0 8px}h3{font-size:15px;margin:0 0 6px}
h4{font-size:14px;margin:10px 0 4px}
table{border-collapse:collapse;margin:6px 0;max-width:100%}td,th{border:1px solid #ddd;padding:3px 7px;
text-align:left;vertical-align:top;overflow-wrap:anywhere}th{background:#f3f3f3}
.pass{color:#17692b}.fail{color:#b3261e;font-weight:600}.error{color:#8a2be2;font-weight:600}.skip{color:#777}
.mono,code{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12.5px}
.case{border:1px solid #e3c0bd;border-radius:6px;padding:10px 14px;margin:14px 0;background:#fffafa}
.pattern{font-weight:600;margin:2px 0 6px}.note{color:#666;font-size:12.5px;margin:2px 0}
.where{color:#444;font-size:12.5px}.glabel{font:11px system-ui,sans-serif;fill:#444}
svg.heat{display:block;margin:4px 0}.legend span{display:inline-block;width:18px;height:12px;margin-right:4px;
vertical-align:middle;border:1px solid #ccc}
#status{color:#666;font-size:12px}`;

/**
 * The whole report as one self-contained HTML page.
 * @param report the verify report (as written to `--json`)
 * @returns the page
 */
export function renderHtml(report: Report): string {
  const s = report.summary;
  const rows = report.cases.filter((c) => !(c.status === "skip" && c.shape === "-")).map((c, i) =>
    `<tr><td class="${c.status}">${c.status.toUpperCase()}</td><td>${esc(c.backend)}</td><td>${esc(c.op)}</td>` +
    `<td>${esc(c.layout)}</td><td>${esc(c.shape)}</td><td>${esc(c.model)}</td><td>${c.elements}</td>` +
    `<td>${c.mismatches}</td><td>${esc(c.maxUlp)}</td><td>${c.ms.toFixed(1)}</td><td>${
      c.diagnosis && c.status === "fail" ? `<a href="#case-${i}">details</a>` : esc(c.message ?? "")
    }</td></tr>`
  ).join("\n");
  const shown = report.cases.filter((c) => !(c.status === "skip" && c.shape === "-"));
  const failing = shown.map((c, i) => ({ c, i })).filter(({ c }) => c.status === "fail" && c.diagnosis);
  const sections = failing.map(({ c, i }) =>
    `<section class="case" id="case-${i}"><h3>${esc(c.backend)} · ${esc(c.id)} [${esc(c.model)}]</h3>` +
    `<p class="mono">${esc(c.message ?? "")}</p>` +
    Object.entries(c.diagnosis!.maps).map(([n, m]) => mapSection(n, m)).join("") + identifySection(c) +
    `</section>`
  ).join("\n");
  const backends = report.backends.map((b) =>
    `<li>${esc(b.name)}: ${b.status}${b.message ? ` (${esc(b.message)})` : ""}</li>`
  ).join("");
  const legend = `<p class="legend note"><span style="background:${tileColour(0, 1)}"></span>no mismatch ` +
    `<span style="background:${tileColour(1, 16384)}"></span>a few ` +
    `<span style="background:${tileColour(16384, 16384)}"></span>every element ` +
    `<span style="background:${tileColour(-1, 0)}"></span>not compared</p>`;
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:">
<title>gemm-oracle verify</title><style>${CSS}</style></head>
<body>
<h1>gemm-oracle verify</h1>
<p id="summary">${report.cases.length} checks: <span class="pass">${s.pass} passed</span>, <span class="fail">${s.fail} failed</span>,
<span class="error">${s.error} errors</span>${
    s.crashed + s.timedOut ? ` (${s.crashed} crashed, ${s.timedOut} timed out)` : ""
  }, <span class="skip">${s.skip} skipped</span>${report.complete ? "" : " — <b>incomplete run</b>"}.
oracle ${esc(report.oracle)}.</p>
<ul>${backends}</ul>
<h2>Cases</h2>
<table id="cases"><thead><tr><th>status</th><th>backend</th><th>op</th><th>layout</th><th>shape</th><th>model</th>
<th>checked</th><th>mismatch</th><th>maxUlp</th><th>ms</th><th>message</th></tr></thead>
<tbody>
${rows}
</tbody></table>
<h2>Failing cases: where and how they differ</h2>
${failing.length ? legend : "<p>None.</p>"}
${sections}
<p id="status">rendering…</p>
<script>
try {
  var bad = document.querySelectorAll("rect.tile.bad").length;
  var maps = document.querySelectorAll("svg.heat").length;
  document.getElementById("status").textContent = "rendered: " + maps + " heat maps, " + bad + " tiles with mismatches";
  document.title = "ok: " + document.title;
} catch (e) {
  var el = document.getElementById("status");
  if (el) el.textContent = "script error: " + e;
  document.title = "error: " + e;
}
</script>
</body></html>
`;
}
