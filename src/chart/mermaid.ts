// Mermaid charts for comments and the record: GitHub renders `xychart-beta` blocks in Markdown.
// Pure. Output is validated by Mermaid's own parser in test/unit/report.
import { round, type Sample, valueAt } from '../analysis/series.js';

/** Mermaid strings are double-quoted: drop what would end or break them. */
function text(s: string): string {
  return s
    .replace(/["\n\r`]/g, "'")
    .replace(/[[\]{}]/g, '')
    .slice(0, 80);
}

function num(x: number): string {
  return String(round(x, 3));
}

export interface LineChartSeries {
  name: string;
  samples: readonly Sample[];
}

export interface LineChartOptions {
  title: string;
  xLabel: string;
  yLabel: string;
  /** At most this many x positions, each labelled (series are resampled); capped at 12. */
  maxPoints?: number;
  /** Clip the y axis (values above are drawn at the top) so a start-up spike does not flatten the rest. */
  yMax?: number;
  /** Horizontal reference lines (e.g. the baseline, the current best), drawn as constant lines. */
  references?: Array<{ name: string; value: number }>;
}

/** At most this many x-axis labels: more run together on GitHub's ~700 px wide chart. */
export const MAX_AXIS_LABELS = 12;

/**
 * Line colours in drawing order, set through the chart's init directive, and the emoji square of
 * the same colour that names each line in the legend (xychart-beta draws none itself).
 */
export const PALETTE: ReadonlyArray<{ colour: string; square: string }> = [
  { colour: '#1f6feb', square: '🟦' },
  { colour: '#fb8f44', square: '🟧' },
  { colour: '#2da44e', square: '🟩' },
  { colour: '#cf222e', square: '🟥' },
  { colour: '#8250df', square: '🟪' },
  { colour: '#9a6700', square: '🟫' },
];

function initDirective(): string {
  const palette = PALETTE.map((p) => p.colour).join(',');
  return `%%{init: {"themeVariables": {"xyChart": {"plotColorPalette": "${palette}"}}}}%%`;
}

/**
 * A line chart over a shared, evenly spaced x axis (run-minutes) of at most 12 labelled points,
 * with reference lines. Lines are coloured from PALETTE; `chartLegend` names them. '' without data.
 */
export function lineChart(series: readonly LineChartSeries[], o: LineChartOptions): string {
  const withData = series.filter((s) => s.samples.length > 0);
  if (!withData.length) return '';
  const from = Math.min(...withData.map((s) => (s.samples[0] as Sample).t));
  const to = Math.max(...withData.map((s) => (s.samples[s.samples.length - 1] as Sample).t));
  const cap = Math.min(o.maxPoints ?? MAX_AXIS_LABELS, MAX_AXIS_LABELS);
  // Integer labels must stay distinct (a repeated category collapses the axis).
  const n = Math.max(2, Math.min(cap, Math.floor(to - from) + 1));
  const xs = Array.from({ length: n }, (_, i) => from + ((to - from) * i) / (n - 1));
  const lines: number[][] = [];
  for (const s of withData) lines.push(xs.map((x) => valueAt(s.samples, x) as number));
  for (const r of o.references ?? []) if (Number.isFinite(r.value)) lines.push(xs.map(() => r.value));
  const all = lines.flat().filter(Number.isFinite);
  const top = Math.min(Math.max(...all), o.yMax ?? Number.POSITIVE_INFINITY);
  const yMax = top > 0 ? top * 1.05 : 1;
  const out = [
    '```mermaid',
    initDirective(),
    'xychart-beta',
    `  title "${text(o.title)}"`,
    `  x-axis "${text(o.xLabel)}" [${xs.map((x) => String(Math.round(x))).join(', ')}]`,
    `  y-axis "${text(o.yLabel)}" 0 --> ${num(yMax)}`,
    ...lines.map(
      (l) => `  line [${l.map((v) => num(Math.min(Number.isFinite(v) ? v : 0, yMax))).join(', ')}]`,
    ),
    '```',
  ];
  return out.join('\n');
}

/** The legend: each line's colour square and name, in drawing order (xychart-beta draws none). */
export function chartLegend(
  series: readonly LineChartSeries[],
  references: LineChartOptions['references'] = [],
): string {
  const names = [
    ...series.filter((s) => s.samples.length > 0).map((s) => s.name),
    ...(references ?? []).filter((r) => Number.isFinite(r.value)).map((r) => r.name),
  ];
  return names.map((name, i) => `${PALETTE[i % PALETTE.length]?.square} ${name}`).join(' · ');
}

/**
 * A bar chart (e.g. candidates' projected seconds per rollout). Returns '' without data.
 * `line` (one value per bar, e.g. the baseline repeated) is drawn over the bars.
 */
export function barChart(
  bars: ReadonlyArray<{ label: string; value: number; line?: number }>,
  o: { title: string; yLabel: string },
): string {
  const rows = bars.filter((b) => Number.isFinite(b.value));
  if (!rows.length) return '';
  const line = rows.every((b) => b.line !== undefined && Number.isFinite(b.line))
    ? rows.map((b) => b.line as number)
    : [];
  const yMax = Math.max(...rows.map((b) => b.value), ...line) * 1.1 || 1;
  return [
    '```mermaid',
    'xychart-beta',
    `  title "${text(o.title)}"`,
    `  x-axis [${rows.map((b) => `"${text(b.label)}"`).join(', ')}]`,
    `  y-axis "${text(o.yLabel)}" 0 --> ${num(yMax)}`,
    `  bar [${rows.map((b) => num(b.value)).join(', ')}]`,
    ...(line.length ? [`  line [${line.map(num).join(', ')}]`] : []),
    '```',
  ].join('\n');
}

export interface DecidedBar {
  label: string;
  value: number;
  /** Key into `groups` (e.g. accepted, rejected): the bar's colour. */
  group: string;
}

/**
 * A bar chart whose bars are coloured by group (one bar series per group present, zero elsewhere:
 * xychart-beta draws the series over each other) with horizontal reference lines. The palette is
 * set per chart, so `legend` can name each colour. Returns { chart: '', legend: '' } without data.
 */
export function decidedBarChart(
  bars: readonly DecidedBar[],
  groups: ReadonlyArray<{ key: string; name: string; colour: string; square: string }>,
  references: ReadonlyArray<{ name: string; value: number; colour: string; square: string }>,
  o: { title: string; yLabel: string },
): { chart: string; legend: string } {
  const rows = bars.filter((b) => Number.isFinite(b.value));
  if (!rows.length) return { chart: '', legend: '' };
  const present = groups.filter((g) => rows.some((b) => b.group === g.key));
  const refs = references.filter((r) => Number.isFinite(r.value));
  const yMax = Math.max(...rows.map((b) => b.value), ...refs.map((r) => r.value)) * 1.1 || 1;
  const palette = [...present, ...refs].map((p) => p.colour).join(',');
  const chart = [
    '```mermaid',
    `%%{init: {"themeVariables": {"xyChart": {"plotColorPalette": "${palette}"}}}}%%`,
    'xychart-beta',
    `  title "${text(o.title)}"`,
    `  x-axis [${rows.map((b) => `"${text(b.label)}"`).join(', ')}]`,
    `  y-axis "${text(o.yLabel)}" 0 --> ${num(yMax)}`,
    ...present.map((g) => `  bar [${rows.map((b) => num(b.group === g.key ? b.value : 0)).join(', ')}]`),
    ...refs.map((r) => `  line [${rows.map(() => num(r.value)).join(', ')}]`),
    '```',
  ].join('\n');
  const legend = [...present, ...refs].map((p) => `${p.square} ${p.name}`).join(' · ');
  return { chart, legend };
}
