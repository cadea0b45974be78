// Time-series helpers for the analysis: samples in run-minutes, cleaning, interpolation, statistics.
// Pure: no I/O, no clock.

/** One observation: `t` in run-minutes (simulated minutes since the run's first sample), `v` the value. */
export interface Sample {
  t: number;
  v: number;
}

export interface Cleaned {
  samples: Sample[];
  /** Samples dropped because their value was NaN, ±Inf or negative. */
  dropped: number;
}

/** Sorts by time, drops non-finite and negative values, keeps the last value for a repeated time. */
export function clean(series: readonly Sample[] | undefined): Cleaned {
  if (!series) return { samples: [], dropped: 0 };
  let dropped = 0;
  const byTime = new Map<number, number>();
  for (const s of series) {
    if (!Number.isFinite(s.t) || !Number.isFinite(s.v) || s.v < 0) {
      dropped++;
      continue;
    }
    byTime.set(s.t, s.v);
  }
  const samples = [...byTime.entries()].sort((a, b) => a[0] - b[0]).map(([t, v]) => ({ t, v }));
  return { samples, dropped };
}

/** Index of the last sample with t <= x (−1 when none). */
function lastAtOrBefore(s: readonly Sample[], x: number): number {
  let lo = 0;
  let hi = s.length - 1;
  let found = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if ((s[mid] as Sample).t <= x) {
      found = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return found;
}

/** Linear interpolation at x, clamped to the ends; undefined for an empty series. */
export function valueAt(s: readonly Sample[], x: number): number | undefined {
  if (s.length === 0) return undefined;
  const i = lastAtOrBefore(s, x);
  if (i < 0) return (s[0] as Sample).v;
  if (i >= s.length - 1) return (s[s.length - 1] as Sample).v;
  const a = s[i] as Sample;
  const b = s[i + 1] as Sample;
  if (b.t === a.t) return b.v;
  return a.v + ((b.v - a.v) * (x - a.t)) / (b.t - a.t);
}

/** Samples with from <= t <= to. */
export function slice(s: readonly Sample[], from: number, to: number): Sample[] {
  return s.filter((p) => p.t >= from && p.t <= to);
}

export function mean(xs: readonly number[]): number {
  return xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : Number.NaN;
}

export function stdev(xs: readonly number[]): number {
  if (xs.length < 2) return Number.NaN;
  const m = mean(xs);
  return Math.sqrt(xs.reduce((a, x) => a + (x - m) ** 2, 0) / (xs.length - 1));
}

export function median(xs: readonly number[]): number {
  if (!xs.length) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
}

/** Least-squares line y = a + b·x with the standard error of the slope. */
export function linearFit(
  xs: readonly number[],
  ys: readonly number[],
): { a: number; b: number; seB: number } {
  const n = xs.length;
  const mx = mean(xs);
  const my = mean(ys);
  let sxx = 0;
  let sxy = 0;
  for (let i = 0; i < n; i++) {
    sxx += ((xs[i] as number) - mx) ** 2;
    sxy += ((xs[i] as number) - mx) * ((ys[i] as number) - my);
  }
  const b = sxx > 0 ? sxy / sxx : 0;
  const a = my - b * mx;
  let sse = 0;
  for (let i = 0; i < n; i++) sse += ((ys[i] as number) - a - b * (xs[i] as number)) ** 2;
  const seB = n > 2 && sxx > 0 ? Math.sqrt(sse / (n - 2) / sxx) : Number.POSITIVE_INFINITY;
  return { a, b, seB };
}

// Two-sided 95% Student t quantiles for 1..30 degrees of freedom.
const T975 = [
  12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.16, 2.145, 2.131,
  2.12, 2.11, 2.101, 2.093, 2.086, 2.08, 2.074, 2.069, 2.064, 2.06, 2.056, 2.052, 2.048, 2.045, 2.042,
];

/** The 97.5% quantile of Student's t with `df` degrees of freedom (95% two-sided). */
export function tQuantile975(df: number): number {
  if (df < 1) return Number.POSITIVE_INFINITY;
  return df <= 30 ? (T975[Math.floor(df) - 1] as number) : 1.96 + 2.4 / df;
}

/** Median spacing between samples (the effective scrape step), NaN for fewer than two samples. */
export function medianStep(s: readonly Sample[]): number {
  const d: number[] = [];
  for (let i = 1; i < s.length; i++) d.push((s[i] as Sample).t - (s[i - 1] as Sample).t);
  return median(d);
}

/** Gaps longer than `factor` × the median step: [from, to] pairs. */
export function gaps(s: readonly Sample[], factor = 3): Array<[number, number]> {
  const step = medianStep(s);
  if (!Number.isFinite(step) || step <= 0) return [];
  const out: Array<[number, number]> = [];
  for (let i = 1; i < s.length; i++) {
    const a = (s[i - 1] as Sample).t;
    const b = (s[i] as Sample).t;
    if (b - a > factor * step) out.push([a, b]);
  }
  return out;
}

export function round(x: number, digits = 3): number {
  if (!Number.isFinite(x)) return x;
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

/** A labelled series as a query returns it: [unix seconds, value] points. */
export interface LabeledSeries {
  labels: Record<string, string>;
  points: Array<[number, number]>;
}

/** Converts Prometheus timestamps to run-minutes: (ts − ts0) × timeScale ÷ 60. */
export function toRunMinutes(
  points: Readonly<Array<[number, number]>>,
  ts0: number,
  timeScale: number,
): Sample[] {
  return points.map(([ts, v]) => ({ t: ((ts - ts0) * timeScale) / 60, v }));
}

/** Min, mean and max of the finite values (nulls when there are none). */
export function minMeanMax(values: readonly number[]): {
  min: number | null;
  mean: number | null;
  max: number | null;
} {
  const f = values.filter(Number.isFinite);
  if (!f.length) return { min: null, mean: null, max: null };
  return { min: round(Math.min(...f)), mean: round(mean(f)), max: round(Math.max(...f)) };
}

/** A counter with its resets (a restarted worker) undone: counting resumes from the value before the drop. */
export function monotone(s: readonly Sample[]): Sample[] {
  let offset = 0;
  let prev = 0;
  return s.map((p) => {
    if (p.v < prev) offset += prev;
    prev = p.v;
    return { t: p.t, v: p.v + offset };
  });
}

/**
 * Sums cumulative counters (one series per worker) into one: each is first made monotone (a drop is
 * a restarted worker: counting resumes from its new value), then the sum is taken at every time any
 * of them has a sample (interpolated, clamped at the ends), so a worker's scrape gap is not a drop.
 */
export function sumCounters(series: ReadonlyArray<readonly Sample[]>): Sample[] {
  const mono = series
    .map((s) => clean(s).samples)
    .filter((s) => s.length)
    .map(monotone);
  const times = [...new Set(mono.flatMap((s) => s.map((p) => p.t)))].sort((a, b) => a - b);
  return times.map((t) => ({ t, v: mono.reduce((acc, s) => acc + (valueAt(s, t) ?? 0), 0) }));
}
