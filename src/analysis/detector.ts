// The stabilisation detector: from one candidate's series to a verdict with evidence. Pure.
//
// The objective (full-run seconds per rollout = max elapsed ÷ rollouts) is a cumulative ratio: the
// start-up and the congestion stay in it and fade only like 1/T. So the detector does not wait for
// the ratio itself to flatten; it finds where the congestion ends from the completion rate, fits
// the steady completion rate after it (batch means, so waves and cycles widen the interval instead
// of hiding in it), and projects the full-run value the run will END at. A verdict is `stable` when
// that projection has stopped moving over consecutive windows, the steady rate shows no drift and
// the projection's confidence interval is narrow enough.
import { SUBMIT_DEFAULTS, TIMELINE } from '../catalog/alpasim.js';
import type { Interval, Verdict } from '../types/generated/metrics.js';
import {
  clean,
  gaps,
  linearFit,
  mean,
  medianStep,
  round,
  type Sample,
  stdev,
  tQuantile975,
  valueAt,
} from './series.js';

/** Detector thresholds: the experiment's `stabilisation` block (experiment.schema.json) plus health limits. */
export interface DetectorSettings {
  /** Warm-up never ends before this many run-minutes after the first sample. */
  warmup_floor_minutes: number;
  /** Length of one window (and one batch of the batch-means interval). */
  window_minutes: number;
  /** Largest relative change of the projected value between consecutive windows. */
  max_relative_range: number;
  /** Largest relative drift of the steady completion rate, per hour. */
  max_relative_slope_per_hour: number;
  /** Consecutive passing windows needed for `stable`. */
  consecutive_windows: number;
  /** Largest relative half-width of the projected value's 95% interval. */
  max_ci_relative: number;
  /** No sample for this long (run-minutes) while the run should be live: targets gone. */
  stale_after_minutes: number;
  /** Rollout counter flat for this long (run-minutes) after production began: stalled. */
  stall_minutes: number;
  /** Failed share of the rollouts of the last window above which the run is unhealthy. */
  max_failure_rate: number;
  /** Smallest relative amplitude reported as a cycle. */
  min_cycle_amplitude: number;
}

/** Defaults for AlpaSim's 5-second scrape (12 samples a minute at time scale 1). */
export const DEFAULT_DETECTOR_SETTINGS: DetectorSettings = {
  warmup_floor_minutes: 10,
  window_minutes: 5,
  max_relative_range: 0.02,
  max_relative_slope_per_hour: 0.05,
  consecutive_windows: 3,
  max_ci_relative: 0.03,
  stale_after_minutes: 3,
  stall_minutes: 10,
  max_failure_rate: 0.05,
  min_cycle_amplitude: 0.1,
};

export interface DetectorInput {
  /** `alpasim:simulation_seconds_per_rollout:avg` (simulated seconds per rollout). */
  fullRun: readonly Sample[];
  /** `…:rate5m`, diagnostic only. */
  rate5m?: readonly Sample[];
  /** Rollouts counted by the objective (all statuses), cumulative. */
  completed?: readonly Sample[];
  /** Failed rollouts, cumulative. */
  failed?: readonly Sample[];
  /** Max `alpasim_simulation_elapsed_seconds` over workers (simulated seconds). */
  elapsed?: readonly Sample[];
  /** False when the run's scrape targets are gone while its job still runs; undefined when unknown. */
  targetsUp?: boolean;
  /** Run-minutes of the evaluation (defaults to the last sample). */
  now?: number;
  /** Run-minute at which the job's wall time ends (relative to the first sample). */
  runEndMinutes?: number | null;
  /** Rollouts the run will make in all (scenes × rollouts per scene); the run ends when they are done. */
  expectedRollouts?: number | null;
  settings?: Partial<DetectorSettings>;
}

/** Run-minutes from the first sample to the end of a default-length job (wall time less start-up). */
export function defaultRunEndMinutes(): number {
  const [h, m] = SUBMIT_DEFAULTS.time.split(':').map(Number) as [number, number];
  return h * 60 + m - TIMELINE.startupMinutes;
}

interface Prepared {
  n: Sample[]; // cumulative rollouts
  e: Sample[]; // elapsed simulated seconds
  f: Sample[]; // full-run seconds per rollout
}

/** Rollouts and elapsed series, derived from one another when a query returned nothing. */
function prepare(input: DetectorInput, evidence: string[]): Prepared {
  const f = clean(input.fullRun);
  const n = clean(input.completed);
  const e = clean(input.elapsed);
  const dropped = f.dropped + n.dropped + e.dropped;
  if (dropped > 0) evidence.push(`${dropped} NaN/Inf/negative sample(s) ignored`);
  let ns = n.samples;
  let es = e.samples;
  const t0 = Math.min(f.samples[0]?.t ?? Infinity, ns[0]?.t ?? Infinity, es[0]?.t ?? Infinity);
  if (es.length === 0) {
    // elapsed ≈ 60 simulated seconds per run-minute, or F × N when both are known
    es =
      ns.length && f.samples.length
        ? ns.map((p) => ({ t: p.t, v: (valueAt(f.samples, p.t) ?? 0) * p.v }))
        : f.samples.map((p) => ({ t: p.t, v: 60 * (p.t - t0) }));
  }
  if (ns.length === 0 && f.samples.length) {
    ns = f.samples.filter((p) => p.v > 0).map((p) => ({ t: p.t, v: (valueAt(es, p.t) ?? 0) / p.v }));
    if (ns.length) evidence.push('completed rollouts derived from elapsed ÷ full-run value');
  }
  return { n: ns, e: es, f: f.samples };
}

interface RateFit {
  /** Rollouts per run-minute. */
  rate: number;
  low: number;
  high: number;
  blocks: number;
  /** Relative drift of the rate per hour and its standard error. */
  slopeRelPerHour: number;
  slopeSeRelPerHour: number;
}

/** Steady completion rate over [from, to] by batch means with blocks of `block` minutes. */
function fitRate(n: readonly Sample[], from: number, to: number, block: number): RateFit | undefined {
  const k = Math.floor((to - from) / block);
  if (k < 2) return undefined;
  const start = to - k * block; // the most recent k whole blocks
  const rates: number[] = [];
  const centers: number[] = [];
  for (let j = 0; j < k; j++) {
    const a = start + j * block;
    rates.push(((valueAt(n, a + block) ?? 0) - (valueAt(n, a) ?? 0)) / block);
    centers.push(a + block / 2);
  }
  const r = mean(rates);
  if (!(r > 0)) return undefined;
  const half = (tQuantile975(k - 1) * stdev(rates)) / Math.sqrt(k);
  const fit = linearFit(centers, rates);
  return {
    rate: r,
    low: Math.max(r - half, r * 1e-3),
    high: r + half,
    blocks: k,
    slopeRelPerHour: (fit.b * 60) / r,
    slopeSeRelPerHour: (fit.seB * 60) / r,
  };
}

interface Horizon {
  end: number;
  reason: string;
}

/** The projected full-run value at the run's end for a steady rate r, from the state at time t. */
function project(
  p: Prepared,
  t: number,
  r: number,
  input: DetectorInput,
): { value: number; horizon: Horizon } {
  const nNow = valueAt(p.n, t) ?? 0;
  const eNow = valueAt(p.e, t) ?? 0;
  const wallEnd = input.runEndMinutes ?? defaultRunEndMinutes();
  let horizon: Horizon = {
    end: wallEnd,
    reason: input.runEndMinutes != null ? 'job wall time' : 'default wall time',
  };
  if (input.expectedRollouts != null && input.expectedRollouts > nNow) {
    const doneAt = t + (input.expectedRollouts - nNow) / r;
    if (doneAt < wallEnd) horizon = { end: doneAt, reason: `${input.expectedRollouts} rollouts done` };
  }
  const dt = Math.max(0, horizon.end - t);
  return { value: (eNow + 60 * dt) / (nNow + r * dt), horizon };
}

interface CycleFound {
  period: number;
  amplitude: number;
}

/** A periodic completion rate after the warm-up: autocorrelation peak and the folded profile's amplitude. */
function findCycle(
  n: readonly Sample[],
  from: number,
  to: number,
  minStep: number,
  minAmp: number,
  minPeriod: number,
): CycleFound | undefined {
  // steps long enough to hold ~10 completions, so counting noise is not read as a cycle
  const overall = ((valueAt(n, to) ?? 0) - (valueAt(n, from) ?? 0)) / Math.max(to - from, 1e-9);
  if (!(overall > 0)) return undefined;
  const step = Math.max(minStep, 10 / overall);
  const m = Math.floor((to - from) / step);
  if (m < 12) return undefined;
  const inc: number[] = [];
  for (let i = 0; i < m; i++) {
    const a = from + i * step;
    inc.push(((valueAt(n, a + step) ?? 0) - (valueAt(n, a) ?? 0)) / step);
  }
  const mu = mean(inc);
  if (!(mu > 0)) return undefined;
  // remove a linear trend so a drift is not read as a long cycle
  const xs = inc.map((_, i) => i);
  const fit = linearFit(xs, inc);
  const d = inc.map((y, i) => y - fit.a - fit.b * i);
  const var0 = d.reduce((s, x) => s + x * x, 0);
  if (var0 <= 0) return undefined;
  const acf = (lag: number) => {
    let s = 0;
    for (let i = 0; i + lag < d.length; i++) s += (d[i] as number) * (d[i + lag] as number);
    return s / var0;
  };
  const maxLag = Math.floor(m / 3); // at least three periods in the data
  let sawNegative = false;
  for (let lag = 2; lag <= maxLag; lag++) {
    const c = acf(lag);
    if (c < 0) sawNegative = true;
    if (sawNegative && c > 0.3 && c >= acf(lag - 1) && c >= acf(lag + 1)) {
      // a fundamental shorter than a window is the completion waves of rollouts that started
      // together (their harmonics would follow): batches average them out, no throughput cycle
      if (lag * step < minPeriod) return undefined;
      // fold over the period for the amplitude
      const bins = new Array<number>(lag).fill(0);
      const counts = new Array<number>(lag).fill(0);
      d.forEach((x, i) => {
        bins[i % lag] = (bins[i % lag] as number) + x;
        counts[i % lag] = (counts[i % lag] as number) + 1;
      });
      const profile = bins.map((b, i) => b / (counts[i] as number));
      const amplitude = (Math.max(...profile) - Math.min(...profile)) / 2 / mu;
      if (amplitude >= minAmp) return { period: lag * step, amplitude };
      return undefined;
    }
  }
  return undefined;
}

function interval(value: number, a: number, b: number, digits = 4): Interval {
  return {
    value: round(value, digits),
    low: round(Math.min(a, b), digits),
    high: round(Math.max(a, b), digits),
  };
}

/** The verdict for one candidate. Empty or NaN data never yields `stable`. */
export function detect(input: DetectorInput): Verdict {
  const s: DetectorSettings = { ...DEFAULT_DETECTOR_SETTINGS, ...definedOnly(input.settings) };
  const evidence: string[] = [];
  const p = prepare(input, evidence);
  const all = [...p.f, ...p.n];
  if (all.length === 0 || p.n.length === 0) {
    return {
      state: input.targetsUp === false ? 'unhealthy' : 'no-data',
      minutes_of_data: 0,
      warmup_end_minutes: null,
      current_full_run: null,
      value: null,
      projected_full_run: null,
      evidence: [...evidence, 'no usable seconds-per-rollout or rollout samples yet'],
    };
  }
  const t0 = Math.min(...all.map((x) => x.t));
  const tLast = Math.max(...all.map((x) => x.t));
  const now = input.now ?? tLast;
  const minutes = now - t0;
  const lastF = p.f.length ? (p.f[p.f.length - 1] as Sample).v : null;
  const base = {
    minutes_of_data: round(minutes, 2),
    current_full_run: lastF === null ? null : round(lastF, 4),
  };
  const W = s.window_minutes;
  const step = medianStep(p.n);
  for (const [a, b] of gaps(p.n)) evidence.push(`scrape gap ${round(a - t0, 1)}–${round(b - t0, 1)} min`);

  // health: targets, staleness, stalled counter, failure rate
  const unhealthy: string[] = [];
  if (input.targetsUp === false) unhealthy.push('scrape targets are gone while the job runs');
  const stale = Math.max(s.stale_after_minutes, 3 * (Number.isFinite(step) ? step : 0));
  if (now - tLast > stale)
    unhealthy.push(`no samples for ${round(now - tLast, 1)} min (last at ${round(tLast - t0, 1)} min)`);
  const nLast = (p.n[p.n.length - 1] as Sample).v;
  const firstProduction = p.n.find((x) => x.v > 0)?.t;
  if (firstProduction !== undefined && tLast - firstProduction >= s.stall_minutes) {
    const before = valueAt(p.n, tLast - s.stall_minutes) ?? 0;
    if (nLast - before <= 0)
      unhealthy.push(`rollouts stopped growing: ${nLast} for the last ${s.stall_minutes} min`);
  }
  const failed = clean(input.failed).samples;
  if (failed.length && tLast - t0 >= W) {
    const dFailed = (valueAt(failed, tLast) ?? 0) - (valueAt(failed, tLast - W) ?? 0);
    const dAll = nLast - (valueAt(p.n, tLast - W) ?? 0);
    if (dAll > 0 && dFailed / dAll > s.max_failure_rate)
      unhealthy.push(`${round((100 * dFailed) / dAll, 1)}% of the last ${W} min's rollouts failed`);
  }
  if (unhealthy.length)
    return {
      ...base,
      state: 'unhealthy',
      warmup_end_minutes: null,
      value: null,
      projected_full_run: null,
      evidence: [...evidence, ...unhealthy],
    };

  if (firstProduction === undefined) {
    return {
      ...base,
      state: 'warming',
      warmup_end_minutes: null,
      value: null,
      projected_full_run: null,
      evidence: [...evidence, 'no rollout completed yet'],
    };
  }

  // warm-up: MSER truncation (the classical initial-transient rule of simulation output analysis)
  // on the per-block completion rate, never before the floor.
  const floor = t0 + s.warmup_floor_minutes;
  const mserBlock = Math.max(W / 2, Number.isFinite(step) ? step : 0);
  // Hysteresis from the data itself: when the truncation point is unclear now but was clear a window
  // or two ago, the transient had settled then (a wave can make MSER hesitate; it does not restart it).
  let warmupEnd = mserWarmupEnd(p.n, firstProduction, tLast, mserBlock, floor);
  for (let j = 1; warmupEnd === undefined && j <= s.consecutive_windows - 1; j++)
    warmupEnd = mserWarmupEnd(p.n, firstProduction, tLast - j * W, mserBlock, floor);
  if (warmupEnd === undefined || tLast - warmupEnd < W) {
    const why =
      minutes < s.warmup_floor_minutes
        ? `inside the warm-up floor (${round(minutes, 1)} of ${s.warmup_floor_minutes} min)`
        : 'the completion rate has not settled after the congestion yet (MSER truncation in the latter half)';
    return {
      ...base,
      state: 'warming',
      warmup_end_minutes: null,
      value: null,
      projected_full_run: null,
      evidence: [...evidence, why],
    };
  }
  evidence.push(`warm-up (start-up + congestion) ends at ${round(warmupEnd - t0, 1)} min`);

  // cycles widen the batches so the interval covers whole periods
  const cycle = findCycle(
    p.n,
    warmupEnd,
    tLast,
    Math.max(W / 5, Number.isFinite(step) ? step : 0),
    s.min_cycle_amplitude,
    W,
  );
  const block = cycle ? Math.ceil(W / cycle.period - 1e-9) * cycle.period : W;

  // checkpoints at the ends of the most recent windows
  const checks: Array<{
    t: number;
    unsettled?: boolean;
    fit?: RateFit;
    proj?: ReturnType<typeof project>;
    lo?: number;
    hi?: number;
  }> = [];
  // enough checkpoints for a streak that ended up to `consecutive_windows` windows ago (hysteresis)
  for (let j = 0; j <= 2 * s.consecutive_windows; j++) {
    const t = tLast - j * W;
    // the warm-up must already have been settled at that window's end, not only now
    const settled = j === 0 || mserWarmupEnd(p.n, firstProduction, t, mserBlock, floor) !== undefined;
    const fit = settled ? fitRate(p.n, warmupEnd, t, block) : undefined;
    if (!fit) {
      checks.push({ t, unsettled: !settled });
      continue;
    }
    const proj = project(p, t, fit.rate, input);
    const hi = project(p, t, fit.low, input).value; // slower rate → higher seconds per rollout
    const lo = project(p, t, fit.high, input).value;
    checks.push({ t, fit, proj, lo, hi });
  }
  const latest = checks[0];
  if (!latest?.fit || !latest.proj) {
    return {
      ...base,
      state: 'stabilising',
      warmup_end_minutes: round(warmupEnd - t0, 2),
      value: null,
      projected_full_run: null,
      evidence: [...evidence, `need ${2 * block} min of steady data, have ${round(tLast - warmupEnd, 1)}`],
    };
  }
  const projected = interval(latest.proj.value, latest.lo as number, latest.hi as number);
  const steadyRate = latest.fit;
  const steady = interval(60 / steadyRate.rate, 60 / steadyRate.high, 60 / steadyRate.low);

  // window rules, newest first: stop at the first failing window
  const fails = (j: number, factor = 1) => windowFailure(checks[j], checks[j + 1], s, factor);
  let streak = 0;
  let firstFailure = '';
  for (let j = 0; j < s.consecutive_windows; j++) {
    const reason = fails(j);
    if (reason) {
      firstFailure = reason;
      break;
    }
    streak++;
  }
  // Hysteresis: a verdict reached a window or a few ago holds while the newer windows stay within
  // 1.5× the thresholds, so a wave does not toggle the label and the check run back and forth.
  let heldFrom = 0;
  if (streak < s.consecutive_windows) {
    for (let k = 1; k <= s.consecutive_windows && !heldFrom; k++) {
      let ok = true;
      for (let j = 0; j < k && ok; j++) ok = !fails(j, 1.5);
      for (let j = k; j < k + s.consecutive_windows && ok; j++) ok = !fails(j);
      if (ok) heldFrom = k;
    }
  }
  evidence.push(
    `steady rate ${round(steadyRate.rate, 2)} rollouts/min over ${steadyRate.blocks} × ${round(block, 1)}-min batches → ${steady.value} s/rollout at steady state`,
    `projected full-run at ${round(latest.proj.horizon.end - t0, 0)} min (${latest.proj.horizon.reason}): ${projected.value} [${projected.low}, ${projected.high}]`,
    heldFrom
      ? `verdict reached ${heldFrom} window(s) ago holds: newer windows within 1.5× the thresholds (${firstFailure})`
      : `${streak} of ${s.consecutive_windows} consecutive windows pass${firstFailure ? ` (${firstFailure})` : ''}`,
  );
  const cycleOut = cycle
    ? { period_minutes: round(cycle.period, 2), amplitude_relative: round(cycle.amplitude, 3) }
    : null;
  if (cycle)
    evidence.push(
      `cyclic completion rate: period ${round(cycle.period, 1)} min, amplitude ±${round(100 * cycle.amplitude, 1)}%`,
    );
  const done = streak >= s.consecutive_windows || heldFrom > 0;
  return {
    ...base,
    state: done ? (cycle ? 'cyclic' : 'stable') : 'stabilising',
    warmup_end_minutes: round(warmupEnd - t0, 2),
    value: done ? projected : null,
    projected_full_run: projected,
    steady_seconds_per_rollout: steady,
    run_end_minutes: round(latest.proj.horizon.end - t0, 1),
    cycle: cycleOut,
    evidence,
  };
}

/**
 * MSER: the truncation point d minimising the variance of the mean of the rest,
 * Σ_{i≥d}(x_i − x̄_d)² / (n − d)², over block rates; undefined while the minimum lies in the
 * latter half of the data (the transient is still going on).
 */
function mserWarmupEnd(
  n: readonly Sample[],
  from: number,
  to: number,
  block: number,
  floor: number,
): number | undefined {
  const m = Math.floor((to - from) / block);
  if (m < 6) return undefined;
  const start = to - m * block;
  const x: number[] = [];
  for (let i = 0; i < m; i++) {
    const a = start + i * block;
    x.push(((valueAt(n, a + block) ?? 0) - (valueAt(n, a) ?? 0)) / block);
  }
  // suffix sums for O(m)
  let sum = 0;
  let sq = 0;
  let best = Number.POSITIVE_INFINITY;
  let bestD = -1;
  const stat: number[] = new Array(m).fill(Number.NaN);
  for (let d = m - 1; d >= 0; d--) {
    const xi = x[d] as number;
    sum += xi;
    sq += xi * xi;
    const k = m - d;
    stat[d] = Math.max(0, sq - (sum * sum) / k) / (k * k);
  }
  const limit = Math.floor(m / 2);
  for (let d = 0; d <= limit; d++) {
    const v = stat[d] as number;
    if (v < best * (1 - 1e-9) - 1e-15) {
      best = v;
      bestD = d;
    }
  }
  // a minimum on the boundary means the transient may still be going on
  if (bestD < 0 || bestD >= limit) return undefined;
  return Math.max(start + bestD * block, floor);
}

function windowFailure(
  c: { unsettled?: boolean; fit?: RateFit; proj?: { value: number }; lo?: number; hi?: number } | undefined,
  prev: { proj?: { value: number } } | undefined,
  s: DetectorSettings,
  factor = 1,
): string | undefined {
  if (c?.unsettled) return 'the warm-up was not settled yet at that window';
  if (!c?.fit || !c.proj || c.lo === undefined || c.hi === undefined) return 'not enough steady data';
  const v = c.proj.value;
  const ci = (c.hi - c.lo) / 2 / v;
  if (!(ci <= factor * s.max_ci_relative))
    return `interval ±${round(100 * ci, 1)}% > ±${round(100 * s.max_ci_relative, 1)}%`;
  const drift = Math.abs(c.fit.slopeRelPerHour) - c.fit.slopeSeRelPerHour;
  if (drift > factor * s.max_relative_slope_per_hour)
    return `steady rate drifts ${round(100 * c.fit.slopeRelPerHour, 1)}%/h (±${round(100 * c.fit.slopeSeRelPerHour, 1)})`;
  if (!prev?.proj) return 'no previous window';
  const range = Math.abs(v - prev.proj.value) / v;
  if (!(range <= factor * s.max_relative_range))
    return `projection moved ${round(100 * range, 1)}% in one window`;
  return undefined;
}

function definedOnly<T extends object>(o: T | undefined): Partial<T> {
  const out: Partial<T> = {};
  if (!o) return out;
  for (const [k, v] of Object.entries(o))
    if (v !== undefined && v !== null) (out as Record<string, unknown>)[k] = v;
  return out;
}
