// The record's chart as SVG, where Mermaid cannot draw it: one bar per candidate coloured by its
// decision, its 95% interval as a whisker, the baseline and the current best as dashed reference
// lines, and a legend. Self-contained (no script, no external font or link), so GitHub shows it
// as an image committed beside the record. Pure and deterministic; every text is XML-escaped.

export type BarOutcome = 'accepted' | 'rejected' | 'failed' | 'stopped' | 'pending' | 'running';

export interface SvgBar {
  label: string;
  /** Seconds per rollout (lower is better). */
  value: number;
  interval?: { low: number; high: number } | null;
  outcome: BarOutcome;
}

export interface SvgBarChart {
  title: string;
  yLabel: string;
  bars: readonly SvgBar[];
  references?: ReadonlyArray<{ name: string; value: number; kind: 'baseline' | 'best' }>;
}

export const OUTCOME_COLOUR: Record<BarOutcome, string> = {
  accepted: '#2da44e',
  rejected: '#cf222e',
  failed: '#6e7781',
  stopped: '#9a6700',
  pending: '#8c959f',
  running: '#1f6feb',
};
const REFERENCE_COLOUR = { baseline: '#24292f', best: '#8250df' } as const;

export function xml(s: string): string {
  return s
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

const r1 = (x: number) => String(Math.round(x * 10) / 10);

/** A "nice" axis maximum and step: 1, 2 or 5 × 10^k, at most 6 ticks. */
function axis(max: number): { top: number; step: number } {
  const raw = max / 5;
  const p = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((f) => f * p).find((s) => s >= raw) ?? 10 * p;
  return { top: Math.ceil(max / step) * step, step };
}

function short(s: string, n = 18): string {
  return s.length > n ? `${s.slice(0, n - 1)}…` : s;
}

/** The bar chart as an SVG document; '' without a finite positive value. */
export function barChartSvg(c: SvgBarChart): string {
  const bars = c.bars.filter((b) => Number.isFinite(b.value) && b.value > 0);
  if (!bars.length) return '';
  const refs = (c.references ?? []).filter((r) => Number.isFinite(r.value) && r.value > 0);
  const highest = Math.max(
    ...bars.map((b) => Math.max(b.value, b.interval?.high ?? 0)),
    ...refs.map((r) => r.value),
  );
  const { top, step } = axis(highest * 1.05);
  const slot = 64;
  const left = 64;
  const plotTop = 48;
  const plotH = 260;
  // Wide enough for the title (15 px bold ≈ 8.5 px a character).
  const plotW = Math.max(slot * bars.length, 360, c.title.length * 8.5 + 32 - left - 24);
  // The last label is rotated 30° to the right of its bar: room for 18 characters.
  const width = Math.ceil(left + plotW + 100);
  const legendY = plotTop + plotH + 70;
  const legend = legendLayout(legendItems(bars, refs), left, width);
  const height = legendY + legend.rows * 20 + 12;
  const y = (v: number) => plotTop + plotH - (plotH * Math.min(v, top)) / top;
  const plot: Plot = { left, plotW, plotTop, plotH, slot, y };
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="-apple-system, Segoe UI, Helvetica, Arial, sans-serif" font-size="12">`,
    `<title>${xml(c.title)}</title>`,
    `<rect width="${width}" height="${height}" fill="#ffffff"/>`,
    `<text x="${width / 2}" y="24" text-anchor="middle" font-size="15" font-weight="600">${xml(c.title)}</text>`,
    `<text transform="translate(16 ${plotTop + plotH / 2}) rotate(-90)" text-anchor="middle">${xml(c.yLabel)}</text>`,
  ];
  out.push(...gridLines(plot, top, step), ...barShapes(plot, bars));
  for (const r of refs)
    out.push(
      `<line class="reference" data-kind="${r.kind}" x1="${left}" x2="${left + plotW}" y1="${r1(y(r.value))}" y2="${r1(y(r.value))}" stroke="${REFERENCE_COLOUR[r.kind]}" stroke-width="2" stroke-dasharray="6 4"/>`,
    );
  out.push(`<line x1="${left}" x2="${left}" y1="${plotTop}" y2="${plotTop + plotH}" stroke="#57606a"/>`);
  out.push('<g class="legend">');
  for (const it of legend.placed)
    out.push(
      `<g class="legend-item" transform="translate(${r1(it.x)} ${legendY + it.row * 20})">${it.swatch}<text x="20" y="10">${xml(it.text)}</text></g>`,
    );
  out.push('</g>', '</svg>');
  return `${out.join('\n')}\n`;
}

/** Where the plot area is, and the y of a value. */
interface Plot {
  left: number;
  plotW: number;
  plotTop: number;
  plotH: number;
  /** The width of one bar's column. */
  slot: number;
  y: (v: number) => number;
}

/** The horizontal grid with its tick values, from 0 to the axis top. */
function gridLines({ left, plotW, y }: Plot, top: number, step: number): string[] {
  const out: string[] = [];
  for (let v = 0; v <= top + step / 2; v += step) {
    out.push(
      `<line class="grid" x1="${left}" x2="${left + plotW}" y1="${r1(y(v))}" y2="${r1(y(v))}" stroke="#d0d7de" stroke-width="1"/>`,
      `<text class="tick" x="${left - 6}" y="${r1(y(v) + 4)}" text-anchor="end">${r1(v)}</text>`,
    );
  }
  return out;
}

/** Each bar coloured by its outcome, its interval as an error bar, its label rotated below. */
function barShapes({ left, plotTop, plotH, slot, y }: Plot, bars: readonly SvgBar[]): string[] {
  const out: string[] = [];
  bars.forEach((b, i) => {
    const cx = left + slot * i + slot / 2;
    const w = slot * 0.6;
    out.push(
      `<rect class="bar" data-outcome="${b.outcome}" x="${r1(cx - w / 2)}" y="${r1(y(b.value))}" width="${r1(w)}" height="${r1(plotTop + plotH - y(b.value))}" fill="${OUTCOME_COLOUR[b.outcome]}"><title>${xml(`${b.label}: ${b.value} s (${b.outcome})`)}</title></rect>`,
    );
    if (b.interval && Number.isFinite(b.interval.low) && Number.isFinite(b.interval.high)) {
      const [lo, hi] = [y(b.interval.low), y(b.interval.high)];
      out.push(
        `<path class="interval" d="M${r1(cx)} ${r1(lo)}V${r1(hi)}M${r1(cx - 8)} ${r1(lo)}H${r1(cx + 8)}M${r1(cx - 8)} ${r1(hi)}H${r1(cx + 8)}" stroke="#24292f" stroke-width="1.5" fill="none"/>`,
      );
    }
    out.push(
      `<text class="label" transform="translate(${r1(cx)} ${plotTop + plotH + 12}) rotate(30)" text-anchor="start">${xml(short(b.label))}</text>`,
    );
  });
  return out;
}

interface LegendItem {
  swatch: string;
  text: string;
}

/** The legend: the outcomes present, the interval whisker, the reference lines. */
function legendItems(bars: readonly SvgBar[], refs: NonNullable<SvgBarChart['references']>): LegendItem[] {
  const items: LegendItem[] = [];
  for (const o of Object.keys(OUTCOME_COLOUR) as BarOutcome[])
    if (bars.some((b) => b.outcome === o))
      items.push({ swatch: `<rect width="12" height="12" fill="${OUTCOME_COLOUR[o]}"/>`, text: o });
  if (bars.some((b) => b.interval))
    items.push({
      swatch: '<path d="M6 0V12M2 0H10M2 12H10" stroke="#24292f" stroke-width="1.5"/>',
      text: '95% interval',
    });
  for (const r of refs)
    items.push({
      swatch: `<line x1="0" x2="16" y1="6" y2="6" stroke="${REFERENCE_COLOUR[r.kind]}" stroke-width="2" stroke-dasharray="4 3"/>`,
      text: `${r.kind === 'best' ? 'current best' : 'baseline'}${r.name === 'baseline' ? '' : ` ${short(r.name, 24)}`} (${r1(r.value)} s)`,
    });
  return items;
}

/** Items left to right, wrapping to a new row at the right edge (text width estimated). */
function legendLayout(items: readonly LegendItem[], left: number, width: number) {
  let x = left;
  let row = 0;
  const placed: Array<LegendItem & { x: number; row: number }> = [];
  for (const it of items) {
    const w = 28 + it.text.length * 7;
    if (x + w > width - 8 && x > left) {
      x = left;
      row++;
    }
    placed.push({ ...it, x, row });
    x += w;
  }
  return { placed, rows: row + 1 };
}
