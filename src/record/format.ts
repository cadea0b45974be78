// Number and text formatting shared by the record's Markdown and the final report.
import { referenceText } from '../analysis/reference.js';
import type { Decision, Interval } from '../types/generated/metrics.js';

/** Seconds with 2 decimals (3 below 1 s); an em dash when unknown. */
export function seconds(value: number | null | undefined): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return '—';
  return value < 1 ? value.toFixed(3) : value.toFixed(2);
}

/** A number with at most `digits` decimals, trailing zeros dropped; an em dash when unknown. */
export function num(value: number | null | undefined, digits = 1): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return '—';
  return String(Number(value.toFixed(digits)));
}

/** A fraction (0..1) as a percentage. */
export function percentOfFraction(value: number | null | undefined): string {
  return value === null || value === undefined ? '—' : `${num(value * 100, 0)}%`;
}

/** `12.34 s [12.10–12.60]`. */
export function interval(value: Interval | null | undefined, unit = ' s'): string {
  if (!value) return '—';
  return `${seconds(value.value)}${unit} [${seconds(value.low)}–${seconds(value.high)}]`;
}

/**
 * The monitor's decision as the record keeps it: `decided better against baseline b: change −8.1%
 * [−10.0%, −6.2%]`, or `measuring against …` when none was reached. The record shows this where a
 * decision exists (one truth: issue 25).
 */
export function decisionText(d: Decision | null | undefined): string | null {
  if (!d) return null;
  const pc = (x: number) => `${x < 0 ? '−' : x > 0 ? '+' : ''}${num(Math.abs(x) * 100)}%`;
  const change = d.relative_change
    ? `: change ${pc(d.relative_change.value)} [${pc(d.relative_change.low)}, ${pc(d.relative_change.high)}]`
    : '';
  if (d.state === 'reference') return 'the reference the others were decided against';
  const head = d.state === 'measuring' ? 'no decision (measuring)' : `decided ${d.state}`;
  return `${head} against ${referenceText(d.reference)}${change}`;
}

/** Text safe inside one Markdown table cell: one line, pipes escaped. */
export function cell(text: string | null | undefined): string {
  if (text === null || text === undefined || text === '') return '—';
  return text
    .replace(/\r?\n+/g, ' ')
    .replace(/\|/g, '\\|')
    .trim();
}
