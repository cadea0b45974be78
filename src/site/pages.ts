// The experiments site: every record rendered as static pages (an index, one page per experiment
// with its progress chart and best so far, one per candidate with its record entry, and the final
// report). Pure: records in, pages out; `topo site` writes them.
import { figureOf } from '../record/figure.js';
import { bestRun } from '../record/model.js';
import { recordChartSvg, runSection } from '../record/render.js';
import { renderFinalReport } from '../report/final-report.js';
import type { ExperimentRecord, RecordRun } from '../types/generated/record.js';
import { chartPoints, progressChart } from './chart.js';
import { escapeHtml, markdownToSafeHtml } from './markdown.js';

export interface SitePage {
  /** Relative to the site's root, `/`-separated. */
  path: string;
  html: string;
}

/** A file-name-safe slug (record names are validated, but the site never trusts text). */
export function slug(text: string): string {
  return text.replace(/[^A-Za-z0-9_.-]+/g, '-').replace(/^[.-]+/, '') || 'x';
}

const STYLE = `body{font:15px/1.5 -apple-system,"Segoe UI",Helvetica,Arial,sans-serif;margin:0;color:#1f2328}
header{background:#24292f;color:#fff;padding:14px 32px}header a{color:#fff}
main{max-width:1100px;margin:0 auto;padding:8px 32px 64px}table{border-collapse:collapse}
td,th{border:1px solid #d0d7de;padding:4px 8px;text-align:left}code,pre{background:#f6f8fa}
pre{padding:8px;overflow:auto}.best{font-weight:600}nav a{margin-right:12px}`;

function page(title: string, crumbs: [string, string][], body: string): string {
  const nav = crumbs
    .map(([href, text]) => `<a href="${escapeHtml(href)}">${escapeHtml(text)}</a>`)
    .join(' / ');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:">
<title>${escapeHtml(title)}</title><style>${STYLE}</style></head>
<body><header><nav>${nav}</nav><h1>${escapeHtml(title)}</h1></header><main>
${body}
</main></body></html>
`;
}

const seconds = (v: number | null) => (v === null ? '—' : `${v.toFixed(3)} s`);

function candidateFiles(record: ExperimentRecord): Map<RecordRun, string> {
  const taken = new Set<string>(['index', 'report']);
  const out = new Map<RecordRun, string>();
  for (const run of record.runs) {
    let name = slug(run.name);
    for (let i = 2; taken.has(name); i++) name = `${slug(run.name)}-${i}`;
    taken.add(name);
    out.set(run, `${name}.html`);
  }
  return out;
}

function experimentPage(record: ExperimentRecord, files: Map<RecordRun, string>): string {
  const best = bestRun(record);
  const fileOf = (name: string) =>
    files.get(record.runs.find((r) => r.name === name) as RecordRun) ?? 'index.html';
  const rows = record.runs
    .map(
      (run, i) =>
        `<tr${run === best ? ' class="best"' : ''}><td>${i + 1}</td><td><a href="${escapeHtml(files.get(run) ?? '')}">${escapeHtml(run.name)}</a></td><td>${escapeHtml(run.status)}</td><td>${escapeHtml(run.parent ?? '—')}</td><td>${seconds(figureOf(run)?.value ?? null)}</td><td>${escapeHtml(run.decision.reason ?? '')}</td></tr>`,
    )
    .join('\n');
  const bestText = best
    ? `<p class="best">Best so far: <a href="${escapeHtml(files.get(best) ?? '')}">${escapeHtml(best.name)}</a> at ${seconds(figureOf(best)?.value ?? null)} per rollout.</p>${record.current_best.decision_reasoning ? `\n<p class="why">${escapeHtml(record.current_best.decision_reasoning)}</p>` : ''}`
    : '<p>No best candidate yet.</p>';
  return [
    `<p>${escapeHtml(record.objective)}</p>`,
    bestText,
    '<h2>Progress</h2>',
    '<p>Seconds per rollout of each candidate in the order tried (lower is better): the point is its value as its decision says (its reference × (1 + the decided change); the baseline at its projected value), the bar its interval, the dashed line the current best as it stood after each candidate. Green accepted, grey rejected, red failed.</p>',
    progressChart(chartPoints(record), fileOf),
    '<h2>Candidates</h2>',
    `<table><thead><tr><th>#</th><th>candidate</th><th>status</th><th>parent</th><th>s/rollout</th><th>decision</th></tr></thead><tbody>\n${rows}\n</tbody></table>`,
    `<p><a href="report.html">Final report</a></p>`,
  ].join('\n');
}

/** Every page of the site for these records (sorted by experiment id). */
export function renderSite(records: readonly ExperimentRecord[]): SitePage[] {
  const sorted = [...records].sort((a, b) => a.experiment_id.localeCompare(b.experiment_id));
  const pages: SitePage[] = [];
  const items: string[] = [];
  for (const record of sorted) {
    const dir = slug(record.experiment_id);
    const title = record.experiment_id;
    const files = candidateFiles(record);
    const best = bestRun(record);
    items.push(
      `<tr><td><a href="${escapeHtml(dir)}/index.html">${escapeHtml(title)}</a></td><td>${record.runs.length}</td><td>${escapeHtml(best?.name ?? '—')}</td><td>${seconds(best ? (figureOf(best)?.value ?? null) : null)}</td></tr>`,
    );
    const crumbs: [string, string][] = [
      ['../index.html', 'Experiments'],
      ['index.html', title],
    ];
    pages.push({
      path: `${dir}/index.html`,
      html: page(title, crumbs.slice(0, 1), experimentPage(record, files)),
    });
    record.runs.forEach((run, i) => {
      pages.push({
        path: `${dir}/${files.get(run)}`,
        html: page(`${title}: ${run.name}`, crumbs, markdownToSafeHtml(runSection(run, i + 1))),
      });
    });
    // The final report links the record's chart (experiments/<id>.svg) by a relative path.
    const svg = recordChartSvg(record);
    if (svg) pages.push({ path: `${dir}/${record.experiment_id}.svg`, html: svg });
    pages.push({
      path: `${dir}/report.html`,
      html: page(
        `${title}: final report`,
        crumbs,
        markdownToSafeHtml(renderFinalReport(record, { recordUrl: 'index.html' })),
      ),
    });
  }
  const index =
    sorted.length === 0
      ? '<p>No experiment record yet (experiments/*.json).</p>'
      : `<table><thead><tr><th>experiment</th><th>candidates</th><th>best</th><th>s/rollout</th></tr></thead><tbody>\n${items.join('\n')}\n</tbody></table>`;
  pages.unshift({
    path: 'index.html',
    html: page('Topology experiments', [['index.html', 'Experiments']], index),
  });
  return pages;
}
