// The experiment's progress as an inline SVG: one point per candidate in the order tried, its
// interval as a bar, colour by outcome, and the best-so-far line: the record's current best as it
// stood after each candidate (src/record/best.ts), ending at the record's current best.
// Pure; no script, so the site renders the same with JavaScript off.
import { bestSteps } from '../record/best.js';
import { figureOf } from '../record/figure.js';
import type { ExperimentRecord, RecordRun } from '../types/generated/record.js';
import { escapeHtml } from './markdown.js';

export interface ChartPoint {
  name: string;
  status: RecordRun['status'];
  value: number;
  low: number;
  high: number;
  /** The best's value after this candidate (its own value before any run is accepted). */
  best: number;
}

/** Candidates with a value, in the order tried, at their figures (src/record/figure.ts) with its interval. */
export function chartPoints(record: ExperimentRecord): ChartPoint[] {
  const points: ChartPoint[] = [];
  record.runs.forEach((run, i) => {
    const figure = figureOf(run);
    if (figure === null || !Number.isFinite(figure.value)) return;
    const best = bestSteps(record.runs.slice(0, i + 1)).at(-1);
    points.push({
      name: run.name,
      status: run.status,
      value: figure.value,
      low: figure.low,
      high: figure.high,
      best: best?.value ?? points.at(-1)?.best ?? figure.value,
    });
  });
  return points;
}

const COLOURS: Record<string, string> = {
  accepted: '#1a7f37',
  rejected: '#6e7781',
  failed: '#cf222e',
  stopped: '#9a6700',
  running: '#0969da',
  pending: '#0969da',
};

export function progressChart(points: readonly ChartPoint[], href: (name: string) => string): string {
  if (points.length === 0) return '<p class="empty">No candidate has a measured value yet.</p>';
  const W = 760;
  const H = 320;
  const m = { left: 64, right: 16, top: 16, bottom: 72 };
  const lo = Math.min(...points.map((p) => p.low));
  const hi = Math.max(...points.map((p) => p.high));
  const pad = (hi - lo || hi || 1) * 0.1;
  const y0 = lo - pad;
  const y1 = hi + pad;
  const x = (i: number) => m.left + ((i + 0.5) * (W - m.left - m.right)) / points.length;
  const y = (v: number) => m.top + ((y1 - v) * (H - m.top - m.bottom)) / (y1 - y0);
  const f = (v: number) => v.toFixed(1);
  const parts: string[] = [];
  for (let k = 0; k <= 4; k++) {
    const v = y0 + ((y1 - y0) * k) / 4;
    parts.push(
      `<line class="grid" x1="${m.left}" x2="${W - m.right}" y1="${f(y(v))}" y2="${f(y(v))}" stroke="#d0d7de"/>`,
      `<text x="${m.left - 6}" y="${f(y(v) + 4)}" text-anchor="end" font-size="11">${v.toFixed(2)}</text>`,
    );
  }
  parts.push(
    `<polyline class="best" fill="none" stroke="#8250df" stroke-width="2" stroke-dasharray="6 3" points="${points.map((p, i) => `${f(x(i))},${f(y(p.best))}`).join(' ')}"/>`,
  );
  points.forEach((p, i) => {
    const c = COLOURS[p.status] ?? '#57606a';
    const label = `${p.name}: ${p.value.toFixed(3)} s/rollout [${p.low.toFixed(3)}, ${p.high.toFixed(3)}] (${p.status})`;
    parts.push(
      `<a class="point" href="${escapeHtml(href(p.name))}"><title>${escapeHtml(label)}</title>` +
        `<line x1="${f(x(i))}" x2="${f(x(i))}" y1="${f(y(p.low))}" y2="${f(y(p.high))}" stroke="${c}" stroke-width="3"/>` +
        `<circle cx="${f(x(i))}" cy="${f(y(p.value))}" r="5" fill="${c}"/></a>`,
      `<text x="${f(x(i))}" y="${H - m.bottom + 14}" font-size="11" text-anchor="end" transform="rotate(-35 ${f(x(i))} ${H - m.bottom + 14})">${escapeHtml(p.name)}</text>`,
    );
  });
  parts.push(
    `<text x="14" y="${f((H - m.bottom) / 2)}" font-size="12" transform="rotate(-90 14 ${f((H - m.bottom) / 2)})" text-anchor="middle">s per rollout</text>`,
  );
  return `<svg class="progress" role="img" aria-label="Seconds per rollout by candidate, lower is better" viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" xmlns="http://www.w3.org/2000/svg">${parts.join('')}</svg>`;
}
