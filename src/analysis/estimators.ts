// Steady-rate estimators for a closed loop of rollouts. Pure: series in, estimates with standard errors out.
//
// Two views of the same throughput r (rollouts per run-minute):
// - completions: the increase of the rollout counter per batch (batch means). Rollouts that started
//   together finish together, so counts per batch swing with the waves; the batch means' variance
//   (corrected for autocorrelation) carries that, and a floor for the in-flight rollouts cut at the
//   ends of the window keeps the interval from ever being zero wide.
// - Little's law: r = L ÷ W, L the rollouts in flight (the `alpasim_renderer_active_rollouts` gauge
//   when exported, else the capacity the topology fixes), W the mean duration of the rollouts that
//   finished in the window (increase of the duration histogram's _sum ÷ _count). A wave changes
//   how many rollouts finish in a batch, not how long each took, so W is nearly wave-free.
// They are combined by inverse variance; the standard error of the combination is the
// perfect-correlation bound (both read the same rollouts), never smaller than the better one.
import { linearFit, mean, type Sample, stdev, tQuantile975, valueAt } from './series.js';

export type EstimatorName = 'completions' | 'littles-law' | 'combined';

export interface RateEstimate {
  /** Rollouts per run-minute. */
  rate: number;
  /** Standard error, already widened for few batches (Student t → normal scale). */
  se: number;
  method: EstimatorName;
  batches: number;
  batchMinutes: number;
  /** Per-batch rates and centres (for the drift test). */
  perBatch: Array<{ t: number; rate: number }>;
  notes: string[];
  /** A cycle taken out of the batches' scatter (Little's law with `harmonic`). */
  cycle?: { periodMinutes: number; amplitude: number };
}

/** Increase of a cumulative counter between two times (made monotone first: see `monotone` in series.ts). */
export function increase(s: readonly Sample[], a: number, b: number): number {
  return Math.max(0, (valueAt(s, b) ?? 0) - (valueAt(s, a) ?? 0));
}

/** Lag-1 autocorrelation of a sequence (0 for fewer than 4 values). */
export function lag1(xs: readonly number[]): number {
  if (xs.length < 4) return 0;
  const m = mean(xs);
  let num = 0;
  let den = 0;
  for (let i = 0; i < xs.length; i++) {
    const d = (xs[i] as number) - m;
    den += d * d;
    if (i > 0) num += d * ((xs[i - 1] as number) - m);
  }
  return den > 0 ? num / den : 0;
}

/** Variance inflation for positively autocorrelated batch means: (1 + ρ) ÷ (1 − ρ), ρ clipped to [0, 0.8]. */
function inflation(rho: number): number {
  const r = Math.min(0.8, Math.max(0, rho));
  return (1 + r) / (1 - r);
}

/** t-quantile ÷ 1.96: turns a batch-means standard error with k − 1 degrees of freedom into a normal-scale one. */
function tWiden(batches: number): number {
  return tQuantile975(batches - 1) / 1.96;
}

/**
 * Completion-rate estimator over the most recent whole batches of [from, to].
 * `inFlight` (when known) sets the floor: the rollouts in progress at both ends of the window.
 */
export function completionRate(
  n: readonly Sample[],
  from: number,
  to: number,
  batch: number,
  inFlight: number | null,
): RateEstimate | undefined {
  const k = Math.floor((to - from) / batch + 1e-9);
  if (k < 2) return undefined;
  const start = to - k * batch;
  const perBatch: RateEstimate['perBatch'] = [];
  for (let j = 0; j < k; j++) {
    const a = start + j * batch;
    perBatch.push({ t: a + batch / 2, rate: increase(n, a, a + batch) / batch });
  }
  const rates = perBatch.map((b) => b.rate);
  const r = mean(rates);
  if (!(r > 0)) return undefined;
  const rho = lag1(rates);
  const vBatch = (stdev(rates) ** 2 / k) * inflation(rho) || 0;
  // in-flight rollouts cut at the window's two ends, phases independent: L/6 rollouts² of variance
  const span = k * batch;
  const L = inFlight ?? Math.max(1, r); // unknown: about one run-minute of completions
  const vFloor = L / 6 / span ** 2 + (1e-3 * r) ** 2;
  const se = Math.sqrt(Math.max(vBatch * tWiden(k) ** 2, vFloor));
  const notes =
    rho > 0.2 ? [`completions per batch autocorrelated (ρ₁ ${rho.toFixed(2)}): interval widened`] : [];
  return { rate: r, se, method: 'completions', batches: k, batchMinutes: batch, perBatch, notes };
}

export interface InFlight {
  value: number;
  source: 'active-rollouts' | 'capacity';
}

/** Time average of the in-flight gauge over [from, to] (samples inside), undefined without samples. */
export function meanInFlight(active: readonly Sample[], from: number, to: number): number | undefined {
  const inside = active.filter((p) => p.t >= from && p.t <= to).map((p) => p.v);
  return inside.length ? mean(inside) : undefined;
}

/**
 * Little's law over the most recent whole batches of [from, to]: r = L ÷ W̄, W̄ the ratio of the
 * increases of the duration histogram's _sum (seconds) and _count. Its standard error is the ratio
 * estimator's over batches (autocorrelation-corrected). Durations are run-seconds (simulated seconds
 * on the twin), so W̄ ÷ 60 is run-minutes whatever the time scale.
 */
export function littleRate(
  sum: readonly Sample[],
  count: readonly Sample[],
  inFlight: InFlight,
  from: number,
  to: number,
  batch: number,
  /** Take a significant cycle out of the batches' scatter (harmonicPart); none found: as without. */
  options: { harmonic?: boolean } = {},
): RateEstimate | undefined {
  const k = Math.floor((to - from) / batch + 1e-9);
  if (k < 2 || !(inFlight.value > 0)) return undefined;
  const start = to - k * batch;
  const starts = Array.from({ length: k }, (_, j) => start + j * batch);
  const centres = starts.map((a) => a + batch / 2);
  const ds = starts.map((a) => increase(sum, a, a + batch));
  const dc = starts.map((a) => increase(count, a, a + batch));
  const S = ds.reduce((a, b) => a + b, 0);
  const C = dc.reduce((a, b) => a + b, 0);
  // too few finished rollouts
  if (!(C >= 2 * k) || !(S > 0) || dc.filter((c) => c > 0).length < 2) return undefined;
  const W = S / C; // seconds
  const cBar = C / k;
  // A cycle in the durations swings the batches far more than it moves the pooled mean (only the
  // unfinished last period does): with a significant one, its fitted sinusoid leaves the scatter
  // and the per-batch rates, and what it adds to the mean over this window is kept as an error term.
  const residuals = ds.map((s, j) => s - W * (dc[j] as number));
  const cycle = options.harmonic ? harmonicPart(centres, residuals, 3 * batch, (k * batch) / 2) : undefined;
  const swing = (j: number) => (cycle ? (cycle.fitted[j] as number) : 0);
  const resid = residuals.map((e, j) => e - swing(j));
  const perBatch: RateEstimate['perBatch'] = [];
  for (let j = 0; j < k; j++) {
    const s = (ds[j] as number) - swing(j);
    const c = dc[j] as number;
    if (c > 0 && (!cycle || s > 0))
      perBatch.push({ t: centres[j] as number, rate: inFlight.value / (s / c / 60) });
  }
  if (perBatch.length < 2) return undefined;
  const partial = cycle ? cycle.fitted.reduce((a, h) => a + h, 0) / C / W : 0;
  const df = cycle ? k - 3 : k - 1;
  const rho = lag1(resid);
  const vW = (resid.reduce((a, e) => a + e * e, 0) / df / k / cBar ** 2) * inflation(rho);
  const rate = inFlight.value / (W / 60);
  // a duration mean is never known better than one rollout in a thousand; the gauge adds its own noise
  const relSe = Math.sqrt((vW / W ** 2) * tWiden(df + 1) ** 2 + partial ** 2 + 1e-6 + 1 / C ** 2);
  const amplitude = cycle ? cycle.amplitude / (W * cBar) : 0;
  const notes = littleNotes(C, W, inFlight, cycle && { ...cycle, amplitude });
  return {
    rate,
    se: rate * relSe,
    method: 'littles-law',
    batches: k,
    batchMinutes: batch,
    perBatch,
    notes,
    ...(cycle ? { cycle: { periodMinutes: cycle.period, amplitude } } : {}),
  };
}

function littleNotes(C: number, W: number, inFlight: InFlight, cycle: HarmonicFit | undefined): string[] {
  return [
    `Little's law: ${C.toFixed(0)} rollouts finished, mean duration ${(W / 60).toFixed(2)} min, ${inFlight.value.toFixed(1)} in flight (${inFlight.source === 'capacity' ? 'capacity of the topology' : 'alpasim_renderer_active_rollouts'})`,
    ...(cycle
      ? [
          `rollout durations cycle with a period of ${cycle.period.toFixed(1)} min (±${(100 * cycle.amplitude).toFixed(0)}%, F test p ${cycle.p.toExponential(1)} over ${cycle.tried} periods): the swing is taken out of the interval, the unfinished period kept in it`,
        ]
      : []),
  ];
}

export interface HarmonicFit {
  period: number;
  /** The fitted sinusoid at each point (without the mean and the trend). */
  fitted: number[];
  /** Half its peak-to-peak swing, in y's units. */
  amplitude: number;
  /** F test of the sinusoid over [1, t], Bonferroni-corrected over the periods tried. */
  p: number;
  tried: number;
}
/** A significant cycle (harmonicPart). */
export type HarmonicPart = HarmonicFit;

/**
 * The one harmonic regression of the analysis (the detector's cycle test and Little's law's cycle):
 * least squares of y on [1, t, sin ωt, cos ωt] at each trial period from `minPeriod` to `maxPeriod`
 * (×1.04 apart, skipping `exclude`d ones); the best period's sinusoid with its F test (2 and m − 4
 * degrees of freedom: P(F > f) = (1 + 2f/ν)^(−ν/2) exactly), Bonferroni-corrected over the periods
 * tried. The trend is fitted jointly, so a drift is not a long cycle. Undefined when nothing fits.
 */
export function harmonicFit(
  t: readonly number[],
  y: readonly number[],
  periods: { minPeriod: number; maxPeriod: number; exclude?: (period: number) => boolean },
): HarmonicFit | undefined {
  const m = y.length;
  if (m < 12 || !(periods.maxPeriod >= periods.minPeriod)) return undefined;
  const centre = mean(t);
  const x = t.map((v) => v - centre); // minutes since the epoch would make the normal equations singular
  const lf = linearFit(x, y);
  const sse0 = y.reduce((a, v, i) => a + (v - lf.a - lf.b * (x[i] as number)) ** 2, 0);
  if (!(sse0 > 0)) return undefined;
  let best: { period: number; sse: number; beta: number[] } | undefined;
  let tried = 0;
  for (let period = periods.minPeriod; period <= periods.maxPeriod; period *= 1.04) {
    if (periods.exclude?.(period)) continue;
    const w = (2 * Math.PI) / period;
    const rows = x.map((v) => [1, v, Math.sin(w * v), Math.cos(w * v)]);
    const beta = leastSquares(rows, y);
    if (!beta) continue;
    tried++;
    const sse = y.reduce((a, v, i) => {
      const r = rows[i] as number[];
      return a + (v - r.reduce((acc, xv, c) => acc + xv * (beta[c] as number), 0)) ** 2;
    }, 0);
    if (!best || sse < best.sse) best = { period, sse, beta };
  }
  if (!best || tried === 0) return undefined;
  const nu = m - 4;
  const f = (sse0 - best.sse) / 2 / Math.max(1e-12, best.sse / nu);
  const p = Math.min(1, tried * (1 + (2 * f) / nu) ** (-nu / 2));
  const w = (2 * Math.PI) / best.period;
  const [, , a, b] = best.beta as [number, number, number, number];
  return {
    period: best.period,
    fitted: x.map((v) => a * Math.sin(w * v) + b * Math.cos(w * v)),
    amplitude: Math.hypot(a, b),
    p,
    tried,
  };
}

/** The harmonic fit's sinusoid when significant (p < `alpha`), else undefined (Little's law's cycle). */
export function harmonicPart(
  t: readonly number[],
  y: readonly number[],
  minPeriod: number,
  maxPeriod: number,
  alpha = 1e-3,
): HarmonicPart | undefined {
  if (!(maxPeriod > minPeriod)) return undefined;
  const fit = harmonicFit(t, y, { minPeriod, maxPeriod });
  return fit && fit.p < alpha ? fit : undefined;
}

/** Ordinary least squares by the normal equations (Gauss-Jordan with pivoting); undefined when singular. */
function leastSquares(rows: readonly number[][], y: readonly number[]): number[] | undefined {
  const n = (rows[0] as number[]).length;
  const a: number[][] = Array.from({ length: n }, () => new Array<number>(n + 1).fill(0));
  rows.forEach((r, i) => {
    for (let p = 0; p < n; p++) {
      const row = a[p] as number[];
      for (let q = 0; q < n; q++) row[q] = (row[q] as number) + (r[p] as number) * (r[q] as number);
      row[n] = (row[n] as number) + (r[p] as number) * (y[i] as number);
    }
  });
  for (let c = 0; c < n; c++) {
    let piv = c;
    for (let r = c + 1; r < n; r++)
      if (Math.abs((a[r] as number[])[c] as number) > Math.abs((a[piv] as number[])[c] as number)) piv = r;
    const pivot = a[piv] as number[];
    if (!(Math.abs(pivot[c] as number) > 1e-12)) return undefined;
    a[piv] = a[c] as number[];
    a[c] = pivot;
    for (let r = 0; r < n; r++) {
      if (r === c) continue;
      const row = a[r] as number[];
      const k = (row[c] as number) / (pivot[c] as number);
      for (let q = c; q <= n; q++) row[q] = (row[q] as number) - k * (pivot[q] as number);
    }
  }
  return a.map((row, c) => (row[n] as number) / (row[c] as number));
}

/**
 * Inverse-variance combination. When the two disagree beyond their errors (|z| > 3 and more than
 * 3% apart) Little's law is dropped: the durations may not cover the whole time a slot is busy, or
 * fewer rollouts are in flight than the topology allows.
 */
export function combineRates(
  c: RateEstimate | undefined,
  l: RateEstimate | undefined,
): RateEstimate | undefined {
  if (!c || !l) return c ?? l;
  const z = (l.rate - c.rate) / Math.sqrt(c.se ** 2 + l.se ** 2);
  if (Math.abs(z) > 3 && Math.abs(l.rate / c.rate - 1) > 0.03)
    return {
      ...c,
      notes: [
        ...c.notes,
        `Little's law (${l.rate.toFixed(2)}/min) disagrees with the completions (${c.rate.toFixed(2)}/min, z ${z.toFixed(1)}): not used`,
      ],
    };
  const wl = 1 / l.se ** 2 / (1 / l.se ** 2 + 1 / c.se ** 2);
  const rate = wl * l.rate + (1 - wl) * c.rate;
  const se = wl * l.se + (1 - wl) * c.se; // correlation 1: an upper bound
  const method: EstimatorName = wl >= 0.8 ? 'littles-law' : wl <= 0.2 ? 'completions' : 'combined';
  const main = method === 'completions' ? c : l;
  return {
    rate,
    se,
    method,
    batches: main.batches,
    batchMinutes: main.batchMinutes,
    perBatch: main.perBatch,
    notes: [
      ...l.notes,
      ...c.notes,
      `weights: Little's law ${(100 * wl).toFixed(0)}%, completions ${(100 * (1 - wl)).toFixed(0)}% (±${((100 * l.se) / l.rate).toFixed(1)}% vs ±${((100 * c.se) / c.rate).toFixed(1)}% s.e.)`,
    ],
  };
}

export interface DriftFit {
  /** Relative change of the rate per hour and its standard error. */
  slopeRelPerHour: number;
  seRelPerHour: number;
}

/**
 * Linear trend of per-batch rates, relative to their mean, per hour. With `autocorrelated`, the
 * slope's standard error is widened for correlated neighbouring batches (waves).
 */
export function driftOf(perBatch: RateEstimate['perBatch'], autocorrelated = true): DriftFit | undefined {
  if (perBatch.length < 3) return undefined;
  const r = mean(perBatch.map((b) => b.rate));
  if (!(r > 0)) return undefined;
  const fit = linearFit(
    perBatch.map((b) => b.t),
    perBatch.map((b) => b.rate),
  );
  // waves make neighbouring batches alike: the slope's standard error grows with their correlation
  const resid = perBatch.map((b) => b.rate - fit.a - fit.b * b.t);
  const widen = autocorrelated ? Math.sqrt(inflation(lag1(resid))) : 1;
  return { slopeRelPerHour: (fit.b * 60) / r, seRelPerHour: (fit.seB * 60 * widen) / r };
}

export interface CycleTest {
  period: number;
  /** Half the peak-to-peak swing of the fitted sinusoid, relative to the mean. */
  amplitude: number;
  /** p-value of the best period after the Bonferroni correction over the periods tried. */
  p: number;
  periodsTried: number;
}

/**
 * The cycle test of a rate series y(t): the harmonic fit (harmonicFit) at trial periods from
 * `minPeriod` (at least three steps) to a third of the span; `exclude` says which periods not to try
 * (the completion waves of rollouts that started together). The amplitude is relative to the mean.
 */
export function harmonicCycle(
  y: ReadonlyArray<{ t: number; v: number }>,
  minPeriod: number,
  exclude: (period: number) => boolean = () => false,
): CycleTest | undefined {
  const m = y.length;
  if (m < 12) return undefined;
  const span = (y[m - 1] as { t: number }).t - (y[0] as { t: number }).t;
  const mu = mean(y.map((p) => p.v));
  if (!(mu > 0) || !(span > 0)) return undefined;
  const step = span / (m - 1);
  const fit = harmonicFit(
    y.map((p) => p.t),
    y.map((p) => p.v),
    { minPeriod: Math.max(minPeriod, 3 * step), maxPeriod: span / 3, exclude },
  );
  return fit && { period: fit.period, amplitude: fit.amplitude / mu, p: fit.p, periodsTried: fit.tried };
}
