// The stabilisation detector: from one candidate's series to a verdict with evidence. Pure.
//
// The objective (full-run seconds per rollout = max elapsed ÷ rollouts) is a cumulative ratio: the
// start-up and the congestion stay in it and fade only like 1/T. So the detector does not wait for
// the ratio itself to flatten; it finds where the congestion ends from the completion rate, fits
// the steady completion rate after it (batch means, so waves and cycles widen the interval instead
// of hiding in it), and projects the full-run value the run will END at. A verdict is `stable` when
// that projection has stopped moving over consecutive windows, the steady rate shows no drift and
// the projection's confidence interval is narrow enough.
import { REQUEUE, SUBMIT_DEFAULTS, TIMELINE } from '../catalog/alpasim.js';
import type { Interval, Verdict } from '../types/generated/metrics.js';
import {
  type CycleTest,
  combineRates,
  completionRate,
  type DriftFit,
  driftOf,
  harmonicCycle,
  type InFlight,
  increase,
  littleRate,
  meanInFlight,
  type RateEstimate,
} from './estimators.js';
import { clean, gaps, linearFit, medianStep, monotone, round, type Sample, valueAt } from './series.js';

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
  /** ALPASIM_MAX_REQUEUES of the job (default AlpaSim's 20): how often it may requeue and resume. */
  maxRequeues?: number | null;
  /** Cumulative `alpasim_rollout_duration_seconds` _sum and _count over workers (run-seconds). */
  durationSum?: readonly Sample[];
  durationCount?: readonly Sample[];
  /** `alpasim_renderer_active_rollouts` summed over workers (rollouts in flight), when exported. */
  activeRollouts?: readonly Sample[];
  /** Rollouts in flight the topology allows (the minimum service capacity), when known. */
  inFlightCapacity?: number | null;
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
  /** Elapsed seconds at run-minute 0: max over samples of elapsed − 60 t (elapsed steps at completions). */
  offset: number;
  sum: Sample[]; // cumulative rollout duration seconds
  count: Sample[]; // cumulative rollouts timed
  active: Sample[]; // rollouts in flight
}

/** Rollouts and elapsed series, derived from one another when a query returned nothing. */
function prepare(input: DetectorInput, evidence: string[]): Prepared {
  const f = clean(input.fullRun);
  const n = clean(input.completed);
  const e = clean(input.elapsed);
  const dropped = f.dropped + n.dropped + e.dropped;
  if (dropped > 0) evidence.push(`${dropped} NaN/Inf/negative sample(s) ignored`);
  let ns = monotone(n.samples);
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
  // measured elapsed only: derived elapsed follows the clock by construction
  const measured = e.samples.filter((x) => x.v > 0);
  const offset = measured.length ? Math.max(...measured.map((x) => x.v - 60 * x.t)) : 0;
  return {
    n: ns,
    e: es,
    f: f.samples,
    offset: Number.isFinite(offset) ? offset : 0,
    sum: monotone(clean(input.durationSum).samples),
    count: monotone(clean(input.durationCount).samples),
    active: clean(input.activeRollouts).samples,
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
): { value: number; horizon: Horizon; future: number; total: number } {
  const nNow = valueAt(p.n, t) ?? 0;
  const eNow = valueAt(p.e, t) ?? 0;
  const wallEnd = input.runEndMinutes ?? defaultRunEndMinutes();
  let horizon: Horizon = {
    end: wallEnd,
    reason: input.runEndMinutes != null ? 'job wall time' : 'default wall time',
  };
  if (input.expectedRollouts != null && input.expectedRollouts > nNow)
    horizon = requeuedEnd(t, (input.expectedRollouts - nNow) / r, wallEnd, input) ?? horizon;
  const dt = Math.max(0, horizon.end - t);
  // elapsed is set only when a rollout finishes, so it lags the clock between completions (minutes,
  // with slow synchronized waves): project from the clock and the elapsed-to-clock offset instead
  const eEnd = dt > 0 ? Math.max(eNow, 60 * horizon.end + p.offset) : eNow;
  const total = nNow + r * dt;
  return { value: eEnd / total, horizon, future: r * dt, total };
}

/**
 * When a run with `expectedRollouts` ends: within this job's wall time, or, since AlpaSim's submit.sh
 * requeues itself 5 minutes before the limit and resumes, after as many requeued jobs as its rollouts
 * need (each restart costs the lead and a start-up without rollouts), up to maxRequeues; null when it
 * ends at this job's wall time anyway (no requeue left). `need`: production minutes still needed.
 */
function requeuedEnd(t: number, need: number, wallEnd: number, input: DetectorInput): Horizon | null {
  const n = input.expectedRollouts as number;
  if (t + need < wallEnd) return { end: t + need, reason: `${n} rollouts done` };
  const requeues = input.maxRequeues ?? REQUEUE.maxRequeues;
  // each job produces until the signal, the lead before its wall time; its restart starts up again
  const perJob = wallEnd - REQUEUE.leadMinutes;
  const gap = REQUEUE.leadMinutes + TIMELINE.startupMinutes;
  if (requeues <= 0 || perJob <= 0) return null;
  const beyond = need - Math.max(0, perJob - t);
  const jobs = Math.ceil(beyond / perJob);
  if (jobs > requeues)
    return { end: (requeues + 1) * (perJob + gap) - gap, reason: `the last of ${requeues} requeues` };
  return { end: t + need + jobs * gap, reason: `${n} rollouts done after ${jobs} requeue(s)` };
}

/** One checkpoint: the steady rate fitted up to t and the projection with its 95% interval. */
interface Fit {
  rate: RateEstimate;
  proj: ReturnType<typeof project>;
  lo: number;
  hi: number;
  /** Trend of the most recent half (the drifting verdict) and of all the steady data (the stable gate). */
  drift?: DriftFit;
  trend?: DriftFit;
}

function fitAt(p: Prepared, input: DetectorInput, plan: FitPlan, t: number): Fit | undefined {
  const c = completionRate(p.n, plan.warmupEnd, t, plan.countBatch, plan.inFlight?.value ?? null);
  // durations of different rollouts are nearly independent: about eight batches (never shorter than
  // the floor), so the t-quantile of few batches does not double the interval
  const littleBatch =
    plan.cycleBlock ?? Math.min(plan.littleBatch, Math.max(plan.littleFloor, (t - plan.littleFrom) / 8));
  const durations = plan.inFlight && p.sum.length && p.count.length ? plan.inFlight : undefined;
  // a cycle in the durations: resolved on the finest batches, taken out of the scatter
  const cyclic =
    durations && !plan.cycleBlock
      ? littleRate(p.sum, p.count, durations, plan.littleFrom, t, plan.littleFloor, { harmonic: true })
      : undefined;
  const l = durations
    ? cyclic?.cycle
      ? cyclic
      : littleRate(p.sum, p.count, durations, plan.littleFrom, t, littleBatch)
    : undefined;
  const rate = combineRates(c, l);
  if (!rate) return undefined;
  const proj = project(p, t, rate.rate, input);
  // rate error scaled by the share of the final count still to come, plus how far the count wanders
  // around its straight line (the phase of the waves decides whether one lands before or after the cut)
  const relRate = (rate.se / rate.rate) * (proj.future / proj.total);
  const endSd = proj.future > 0 ? countWander(p.n, plan.warmupEnd, t) : 0;
  const rel = Math.sqrt(relRate ** 2 + (endSd / proj.total) ** 2);
  // the trend of the most recent half (≥ 4 batches): a congestion's slow recovery is behind it,
  // a drift is not
  const half = rate.perBatch.slice(Math.floor(rate.perBatch.length / 2));
  // (the drifting verdict's own bar, 4 s.e., was set on the plain standard error)
  const drift = driftOf(half.length >= 4 ? half : rate.perBatch, false);
  const trend = driftOf(rate.perBatch);
  return {
    rate,
    proj,
    lo: proj.value * Math.exp(-1.96 * rel),
    hi: proj.value * Math.exp(1.96 * rel),
    drift,
    trend,
  };
}

interface FitPlan {
  warmupEnd: number;
  littleFrom: number;
  countBatch: number;
  /** Longest and shortest batch of Little's law; whole cycle periods when cyclic. */
  littleBatch: number;
  littleFloor: number;
  cycleBlock?: number;
  inFlight?: InFlight;
}

/** Standard deviation of the rollout counter around its straight line over [a, b] (rollouts). */
function countWander(n: readonly Sample[], a: number, b: number): number {
  const inside = n.filter((x) => x.t >= a && x.t <= b);
  if (inside.length < 4) return 0;
  const fit = linearFit(
    inside.map((x) => x.t),
    inside.map((x) => x.v),
  );
  const ss = inside.reduce((acc, x) => acc + (x.v - fit.a - fit.b * x.t) ** 2, 0);
  return Math.sqrt(ss / (inside.length - 2));
}

/** Mean rollout duration (run-minutes) of the rollouts that finished in [a, b], from the histogram. */
function meanDuration(p: Prepared, a: number, b: number): number | undefined {
  const c = increase(p.count, a, b);
  return c > 0 ? increase(p.sum, a, b) / c / 60 : undefined;
}

/** Rate per step (≥ 10 completions and ≥ minStep long) after `from`, for the cycle test. */
function rateSteps(
  n: readonly Sample[],
  from: number,
  to: number,
  minStep: number,
): Array<{ t: number; v: number }> {
  const overall = increase(n, from, to) / Math.max(to - from, 1e-9);
  if (!(overall > 0)) return [];
  const step = Math.max(minStep, 10 / overall);
  const m = Math.floor((to - from) / step);
  const out: Array<{ t: number; v: number }> = [];
  for (let i = 0; i < m; i++) {
    const a = from + i * step;
    out.push({ t: a + step / 2, v: increase(n, a, a + step) / step });
  }
  return out;
}

function interval(value: number, a: number, b: number, digits = 4): Interval {
  return {
    value: round(value, digits),
    low: round(Math.min(a, b), digits),
    high: round(Math.max(a, b), digits),
  };
}

/** What the steps of one evaluation share: the settings, the prepared series and the time line. */
interface Frame {
  input: DetectorInput;
  s: DetectorSettings;
  p: Prepared;
  /** Evidence gathered so far (the steps append to it). */
  evidence: string[];
  t0: number;
  tLast: number;
  now: number;
  /** Fields every verdict carries. */
  base: Pick<Verdict, 'minutes_of_data' | 'current_full_run'>;
  /** Median scrape step (run-minutes; NaN when unknown). */
  step: number;
}

/** The verdict for one candidate. Empty or NaN data never yields `stable`. */
export function detect(input: DetectorInput): Verdict {
  const s: DetectorSettings = { ...DEFAULT_DETECTOR_SETTINGS, ...definedOnly(input.settings) };
  const evidence: string[] = [];
  const p = prepare(input, evidence);
  if (p.f.length + p.n.length === 0 || p.n.length === 0) return noData(input, evidence);
  const f = frameOf(input, s, p, evidence);
  const unhealthy = healthProblems(f);
  if (unhealthy.length) return early(f, 'unhealthy', unhealthy);
  const firstProduction = p.n.find((x) => x.v > 0)?.t;
  if (firstProduction === undefined) return early(f, 'warming', ['no rollout completed yet']);
  const warmup = warmupOf(f, firstProduction);
  if (warmup.end === undefined || f.tLast - warmup.end < s.window_minutes)
    return unsettledVerdict(f, firstProduction, warmup.floor);
  evidence.push(`warm-up (start-up + congestion) ends at ${round(warmup.end - f.t0, 1)} min`);
  const { plan, cycle } = fitPlan(f, warmup.end);
  const checks = checkpoints(f, plan, (t) => warmup.settledAt(t));
  const latest = checks[0]?.fit;
  if (!latest)
    return {
      ...f.base,
      state: 'stabilising',
      warmup_end_minutes: round(warmup.end - f.t0, 2),
      value: null,
      projected_full_run: null,
      evidence: [
        ...evidence,
        `need two batches of steady data (${round(2 * Math.min(plan.countBatch, plan.littleBatch), 1)} min), have ${round(f.tLast - warmup.end, 1)}`,
      ],
    };
  const common = steadyFields(f, plan, latest);
  return driftingVerdict(f, plan, latest, common) ?? windowVerdict(f, checks, latest, cycle, common);
}

/** A verdict with no warm-up end and no value yet. */
function early(f: Frame, state: Verdict['state'], why: string[], more: Partial<Verdict> = {}): Verdict {
  const none = { warmup_end_minutes: null, value: null, projected_full_run: null };
  return { ...f.base, state, ...none, ...more, evidence: [...f.evidence, ...why] };
}

function noData(input: DetectorInput, evidence: string[]): Verdict {
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

/** The time line of the evaluation; scrape gaps go into the evidence. */
function frameOf(input: DetectorInput, s: DetectorSettings, p: Prepared, evidence: string[]): Frame {
  const all = [...p.f, ...p.n];
  const t0 = Math.min(...all.map((x) => x.t));
  const tLast = Math.max(...all.map((x) => x.t));
  const now = input.now ?? tLast;
  const lastF = p.f.length ? (p.f[p.f.length - 1] as Sample).v : null;
  const base = {
    minutes_of_data: round(now - t0, 2),
    current_full_run: lastF === null ? null : round(lastF, 4),
  };
  for (const [a, b] of gaps(p.n)) evidence.push(`scrape gap ${round(a - t0, 1)}–${round(b - t0, 1)} min`);
  return { input, s, p, evidence, t0, tLast, now, base, step: medianStep(p.n) };
}

/** Health: targets gone, samples stale, the rollout counter stalled, too many failures. */
function healthProblems(f: Frame): string[] {
  const { input, s, p, t0, tLast, now, step } = f;
  const W = s.window_minutes;
  const unhealthy: string[] = [];
  if (input.targetsUp === false) unhealthy.push('scrape targets are gone while the job runs');
  const stale = Math.max(s.stale_after_minutes, 3 * (Number.isFinite(step) ? step : 0));
  if (now - tLast > stale)
    unhealthy.push(`no samples for ${round(now - tLast, 1)} min (last at ${round(tLast - t0, 1)} min)`);
  const nLast = (p.n[p.n.length - 1] as Sample).v;
  const firstProduction = p.n.find((x) => x.v > 0)?.t;
  if (firstProduction !== undefined) {
    const stallAfter = stallMinutes(p, firstProduction, tLast, s);
    if (tLast - firstProduction >= stallAfter && nLast - (valueAt(p.n, tLast - stallAfter) ?? 0) <= 0)
      unhealthy.push(`rollouts stopped growing: ${nLast} for the last ${round(stallAfter, 1)} min`);
  }
  const failed = clean(input.failed).samples;
  if (failed.length && tLast - t0 >= W) {
    const dFailed = (valueAt(failed, tLast) ?? 0) - (valueAt(failed, tLast - W) ?? 0);
    const dAll = nLast - (valueAt(p.n, tLast - W) ?? 0);
    // at least three failures: one failed rollout among a slow run's few is not a failure rate
    if (dAll > 0 && dFailed >= 3 && dFailed / dAll > s.max_failure_rate)
      unhealthy.push(`${round((100 * dFailed) / dAll, 1)}% of the last ${W} min's rollouts failed`);
  }
  return unhealthy;
}

interface Warmup {
  /** End of the warm-up (run-minutes of the series), undefined while it has not settled. */
  end: number | undefined;
  floor: number;
  /** Had the warm-up settled by time t (a checkpoint's own data)? */
  settledAt: (t: number) => boolean;
}

/**
 * Warm-up: MSER truncation (the classical initial-transient rule of simulation output analysis) on
 * the per-block completion rate, never before the floor. Hysteresis from the data itself: when the
 * truncation point is unclear now but was clear a window or two ago, the transient had settled then
 * (a wave can make MSER hesitate; it does not restart it).
 */
function warmupOf(f: Frame, firstProduction: number): Warmup {
  const { s, p, t0, tLast, step } = f;
  const W = s.window_minutes;
  const floor = t0 + s.warmup_floor_minutes;
  const block = Math.max(W / 2, Number.isFinite(step) ? step : 0);
  let end = mserWarmupEnd(p.n, firstProduction, tLast, block, floor);
  for (let j = 1; end === undefined && j <= s.consecutive_windows - 1; j++)
    end = mserWarmupEnd(p.n, firstProduction, tLast - j * W, block, floor);
  return {
    end,
    floor,
    settledAt: (t) => mserWarmupEnd(p.n, firstProduction, t, block, floor) !== undefined,
  };
}

/** No settled warm-up: `drifting` when the latter half keeps moving one way, else `warming`. */
function unsettledVerdict(f: Frame, firstProduction: number, floor: number): Verdict {
  const { s, p, tLast } = f;
  const W = s.window_minutes;
  // MSER keeps hesitating on a rate that moves the whole time: test the latter half for a drift
  const half = firstProduction + (tLast - firstProduction) / 2;
  const trendOf = (from: number) =>
    tLast - from >= 4 * W ? driftOf(completionRate(p.n, from, tLast, W, null)?.perBatch ?? []) : undefined;
  const trend = trendOf(Math.max(half, floor));
  const drift = significantDrift(trend, s);
  const lateDrift = significantDrift(trendOf(Math.max(half, floor) + (tLast - Math.max(half, floor)) / 2), s);
  if (drift !== undefined && lateDrift !== undefined && Math.sign(drift) === Math.sign(lateDrift))
    return early(
      f,
      'drifting',
      ['no settled warm-up: the completion rate keeps moving', driftEvidence(trend as DriftFit)],
      { drift: { slope_relative_per_hour: round(drift, 4) }, estimator: 'completions' },
    );
  const minutes = f.now - f.t0;
  const why =
    minutes < s.warmup_floor_minutes
      ? `inside the warm-up floor (${round(minutes, 1)} of ${s.warmup_floor_minutes} min)`
      : 'the completion rate has not settled after the congestion yet (MSER truncation in the latter half)';
  return early(f, 'warming', [why]);
}

/** The rollouts in flight: the gauge when exported, else the topology's capacity. */
function inFlightOf(f: Frame, warmupEnd: number): InFlight | undefined {
  const W = f.s.window_minutes;
  const activeMean = meanInFlight(f.p.active, Math.max(warmupEnd, f.tLast - 2 * W), f.tLast);
  const cap = f.input.inFlightCapacity;
  return activeMean !== undefined && activeMean > 0
    ? { value: activeMean, source: 'active-rollouts' }
    : cap && cap > 0
      ? { value: cap, source: 'capacity' }
      : undefined;
}

/** Batches and windows of the steady fits, and a significant cycle of the completion rate. */
function fitPlan(f: Frame, warmupEnd: number): { plan: FitPlan; cycle: CycleTest | undefined } {
  const { s, p, tLast, step } = f;
  const W = s.window_minutes;
  const inFlight = inFlightOf(f, warmupEnd);
  // a rollout's duration: the histogram's recent mean, else in-flight ÷ rate
  const recentRate =
    increase(p.n, Math.max(warmupEnd, tLast - 2 * W), tLast) / Math.min(2 * W, tLast - warmupEnd);
  const dHat =
    meanDuration(p, Math.max(warmupEnd, tLast - 3 * W), tLast) ??
    (inFlight && recentRate > 0 ? inFlight.value / recentRate : undefined);
  const cycle = dHat !== undefined ? cycleOf(f, warmupEnd, dHat) : undefined;
  // batches: whole cycle periods; for counting also at least one wave (a rollout's duration)
  const cycleBlock = cycle ? Math.ceil(W / cycle.period - 1e-9) * cycle.period : W;
  const plan: FitPlan = {
    warmupEnd,
    // durations of rollouts that started after the congestion: those finishing a rollout's duration
    // after the completion rate settled (MSER); slow rollouts started in the congestion finish late
    littleFrom: warmupEnd + (dHat ?? 0),
    countBatch: cycle ? cycleBlock : Math.max(W, Math.ceil(((dHat ?? 0) - 1e-9) / W) * W),
    littleBatch: W / 2,
    // a batch holds at least about ten finished rollouts and four scrapes
    littleFloor: Math.max(
      4 * (Number.isFinite(step) ? step : 0),
      recentRate > 0 ? 10 / recentRate : W / 2,
      W / 10,
    ),
    ...(cycle ? { cycleBlock } : {}),
    inFlight,
  };
  return { plan, cycle };
}

/**
 * A cycle of the completion rate, reported only when significant, and never at the completion
 * waves' period (a rollout's duration `dHat`) or its harmonics (D/2, D/3): those are rollouts that
 * started together, not throughput.
 */
function cycleOf(f: Frame, warmupEnd: number, dHat: number): CycleTest | undefined {
  const W = f.s.window_minutes;
  const stepMin = Math.max(W / 5, Number.isFinite(f.step) ? f.step : 0);
  const excluded = (period: number) => [1, 1 / 2, 1 / 3].some((k) => Math.abs(period / (k * dHat) - 1) < 0.2);
  const test = harmonicCycle(rateSteps(f.p.n, warmupEnd, f.tLast, stepMin), W, excluded);
  return test && test.p < 1e-3 && test.amplitude >= f.s.min_cycle_amplitude ? test : undefined;
}

type Checkpoint = { t: number; unsettled?: boolean; fit?: Fit };

/**
 * Checkpoints half a window apart, newest first: with an interval that carries the waves and the
 * drift gate, `consecutive_windows` passing checkpoints span a window or more, not three. Enough
 * of them for a streak that ended up to `consecutive_windows` checkpoints ago (hysteresis).
 */
function checkpoints(f: Frame, plan: FitPlan, settledAt: (t: number) => boolean): Checkpoint[] {
  const H = f.s.window_minutes / 2;
  const checks: Checkpoint[] = [];
  for (let j = 0; j <= 2 * f.s.consecutive_windows; j++) {
    const t = f.tLast - j * H;
    // the warm-up must already have been settled at that window's end, not only now
    const settled = j === 0 || settledAt(t);
    const fit = settled ? fitAt(f.p, f.input, plan, t) : undefined;
    checks.push(fit ? { t, fit } : { t, unsettled: !settled });
  }
  return checks;
}

type SteadyFields = Omit<Verdict, 'state' | 'value' | 'evidence'>;

/** The projection and the steady value of the latest checkpoint (their evidence appended). */
function steadyFields(f: Frame, plan: FitPlan, latest: Fit): SteadyFields {
  const projected = interval(latest.proj.value, latest.lo, latest.hi);
  const r = latest.rate;
  const steady = interval(
    60 / r.rate,
    60 / (r.rate + 1.96 * r.se),
    60 / Math.max(r.rate - 1.96 * r.se, r.rate * 1e-3),
  );
  f.evidence.push(
    `steady rate ${round(r.rate, 2)} ± ${round(1.96 * r.se, 2)} rollouts/min (${r.method}, ${r.batches} × ${round(r.batchMinutes, 1)}-min batches) → ${steady.value} s/rollout at steady state`,
    ...r.notes,
    `projected full-run at ${round(latest.proj.horizon.end - f.t0, 0)} min (${latest.proj.horizon.reason}): ${projected.value} [${projected.low}, ${projected.high}]`,
  );
  // the drift ruled out so far, instead of waiting for `stable` to say it (one-sided 95% bound)
  const t = latest.trend;
  if (t && Number.isFinite(t.seRelPerHour))
    f.evidence.push(
      `no drift steeper than ${round(100 * (Math.abs(t.slopeRelPerHour) + 1.645 * t.seRelPerHour), 0)}%/h (one-sided 95% bound on the steady data's trend)`,
    );
  return {
    ...f.base,
    warmup_end_minutes: round(plan.warmupEnd - f.t0, 2),
    projected_full_run: projected,
    steady_seconds_per_rollout: steady,
    run_end_minutes: round(latest.proj.horizon.end - f.t0, 1),
    estimator: r.method,
  };
}

/**
 * A steady rate that keeps moving: drifting, with its slope, never stable or cyclic (a congestion
 * that recovers slowly also moves the rate, but flattens out: the latter half of the steady data
 * must keep moving the same way, over at least four windows). Undefined when it does not drift.
 */
function driftingVerdict(f: Frame, plan: FitPlan, latest: Fit, common: SteadyFields): Verdict | undefined {
  const { s, tLast } = f;
  const lateFrom = tLast - (tLast - plan.warmupEnd) / 2;
  const late =
    tLast - lateFrom >= 4 * s.window_minutes
      ? fitAt(f.p, f.input, { ...plan, warmupEnd: lateFrom, littleFrom: lateFrom }, tLast)
      : undefined;
  const lateDrift = significantDrift(late?.drift, s);
  const drift = significantDrift(latest.drift, s);
  if (drift === undefined || lateDrift === undefined || Math.sign(drift) !== Math.sign(lateDrift))
    return undefined;
  return {
    ...common,
    state: 'drifting',
    value: null,
    cycle: null,
    drift: { slope_relative_per_hour: round(drift, 4) },
    evidence: [...f.evidence, driftEvidence(latest.drift as DriftFit)],
  };
}

/**
 * The window rules, newest first (stop at the first failing window), with hysteresis: a verdict
 * reached a window or a few ago holds while the newer windows stay within 1.5× the thresholds, so a
 * wave does not toggle the label and the check run back and forth.
 */
function windowVerdict(
  f: Frame,
  checks: Checkpoint[],
  latest: Fit,
  cycle: CycleTest | undefined,
  common: SteadyFields,
): Verdict {
  const { s, evidence } = f;
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
    heldFrom
      ? `verdict reached ${heldFrom} window(s) ago holds: newer windows within 1.5× the thresholds (${firstFailure})`
      : `${streak} of ${s.consecutive_windows} consecutive windows pass${firstFailure ? ` (${firstFailure})` : ''}`,
  );
  if (latest.trend)
    evidence.push(
      `trend of the steady rate ${round(100 * latest.trend.slopeRelPerHour, 1)}%/h (±${round(100 * latest.trend.seRelPerHour, 1)} s.e.)`,
    );
  if (cycle)
    evidence.push(
      `cyclic completion rate: period ${round(cycle.period, 1)} min, amplitude ±${round(100 * cycle.amplitude, 1)}% (harmonic F test p ${cycle.p.toExponential(1)} over ${cycle.periodsTried} periods)`,
    );
  const done = streak >= s.consecutive_windows || heldFrom > 0;
  return {
    ...common,
    state: done ? (cycle ? 'cyclic' : 'stable') : 'stabilising',
    ...(done ? stableClaim(f, latest, common) : { value: null }),
    cycle: cycle
      ? { period_minutes: round(cycle.period, 2), amplitude_relative: round(cycle.amplitude, 3) }
      : null,
    evidence,
  };
}

/**
 * What a stable verdict promises (issue 38, item 6). The projection assumes the steady rate holds to
 * the run's end; a drift of g per hour would move the rollouts still to come by about g × the lever
 * (from the middle of the steady data to the middle of what is left), so the value's interval keeps
 * the trend's error × the lever. (Its centre stays the projection: on the traces the detector is
 * tested on, moving it by the measured slope, which still carries the start-up, read 4-9% off.)
 * Within ±max_ci_relative that way, it claims the full-run value; otherwise the weaker claim, named
 * as such: the steady rate within ±max_ci_relative, no drift beyond X%/h ruled out (the trend's
 * one-sided 95% bound), with the wider full-run interval as the value.
 */
function stableClaim(f: Frame, latest: Fit, common: SteadyFields): Pick<Verdict, 'value' | 'stable_claim'> {
  const p = common.projected_full_run as Interval;
  const t = latest.trend;
  const ff = latest.proj.total > 0 ? latest.proj.future / latest.proj.total : 0;
  const lever = Math.max(0, latest.proj.horizon.end - (f.t0 + (common.warmup_end_minutes ?? 0))) / 2 / 60;
  const g = t?.slopeRelPerHour ?? 0;
  const se = t && Number.isFinite(t.seRelPerHour) ? t.seRelPerHour : 1;
  const v = p.value;
  const sd = Math.hypot((Math.log(p.high) - Math.log(p.low)) / (2 * 1.96), ff * lever * se);
  const half = Math.sinh(1.96 * sd);
  const bound = round(Math.abs(g) + 1.645 * se, 4);
  const full = half <= f.s.max_ci_relative;
  const pc = (x: number) => `${round(100 * x, 1)}%`;
  const text = full
    ? `full-run value within ±${pc(half)}, the measured drift's error (${pc(g)}/h ± ${pc(se)} of the steady rate) over ${round(lever, 1)} h included`
    : `steady rate ±${pc(f.s.max_ci_relative)}; no drift beyond ${pc(bound)}/h ruled out (the full-run value, that drift's error over ${round(lever, 1)} h included, is ±${pc(half)})`;
  f.evidence.push(`stable: ${text}`);
  return {
    value: interval(v, v * Math.exp(-1.96 * sd), v * Math.exp(1.96 * sd)),
    stable_claim: { kind: full ? 'full-run' : 'steady-rate', drift_bound_per_hour: bound, text },
  };
}

/**
 * How long a flat rollout counter means a stall: `stall_minutes` at most, but sooner on a run whose
 * completions come often: after 20 expected completions, never under `stale_after_minutes`, 1.5× the
 * longest flat stretch it already had, or 1.2× a rollout's mean duration (in a closed loop every
 * slot finishes within about one duration: the gaps between synchronized waves). Without the
 * duration histogram, `stall_minutes`.
 */
function stallMinutes(p: Prepared, from: number, to: number, s: DetectorSettings): number {
  const n = p.n;
  const rate = increase(n, from, to) / Math.max(to - from, 1e-9);
  const duration = meanDuration(p, from, to);
  if (duration === undefined) return s.stall_minutes;
  let longest = 0;
  let since = from;
  for (let i = 1; i < n.length; i++) {
    const a = n[i - 1] as Sample;
    const b = n[i] as Sample;
    if (a.t < from) continue;
    if (b.v > a.v) {
      longest = Math.max(longest, a.t - since);
      since = b.t;
    }
  }
  if (!(rate > 0)) return s.stall_minutes;
  return Math.min(s.stall_minutes, Math.max(s.stale_after_minutes, 20 / rate, 1.5 * longest, 1.2 * duration));
}

/** The drift of seconds per rollout per hour (relative) when it is both large and significant. */
function significantDrift(d: DriftFit | undefined, s: DetectorSettings): number | undefined {
  if (!d || !Number.isFinite(d.seRelPerHour)) return undefined;
  const slope = Math.abs(d.slopeRelPerHour);
  if (slope - 2 * d.seRelPerHour > s.max_relative_slope_per_hour && slope > 4 * d.seRelPerHour)
    return -d.slopeRelPerHour; // seconds per rollout move against the rate
  return undefined;
}

function driftEvidence(d: DriftFit): string {
  return `steady rate drifts ${round(100 * d.slopeRelPerHour, 1)}%/h (±${round(100 * d.seRelPerHour, 1)} s.e.): seconds per rollout keep moving`;
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
  c: { unsettled?: boolean; fit?: Fit } | undefined,
  prev: { fit?: Fit } | undefined,
  s: DetectorSettings,
  factor = 1,
): string | undefined {
  if (c?.unsettled) return 'the warm-up was not settled yet at that window';
  const f = c?.fit;
  if (!f) return 'not enough steady data';
  const v = f.proj.value;
  const ci = (f.hi - f.lo) / 2 / v;
  if (!(ci <= factor * s.max_ci_relative))
    return `interval ±${round(100 * ci, 1)}% > ±${round(100 * s.max_ci_relative, 1)}%`;
  // a trend both larger than the limit and significant (2 s.e., autocorrelation-corrected) over all
  // the steady data: a drift or a congestion that has not ended bends the projection
  // (the most recent half too, at 3 s.e.: there a congestion's tail cannot mask a drift that started
  // early; the stricter bar keeps two tests at every checkpoint from flipping a plain run's verdict)
  for (const [d, z] of [
    [f.trend, 2],
    [f.drift, 3],
  ] as const) {
    const slope = Math.abs(d?.slopeRelPerHour ?? 0);
    if (d && slope > factor * s.max_relative_slope_per_hour && slope > z * d.seRelPerHour)
      return `steady rate drifts ${round(100 * d.slopeRelPerHour, 1)}%/h (±${round(100 * d.seRelPerHour, 1)})`;
  }
  // and while the one-sided 95% upper bound of the trend allows a steep drift (4× the limit), not stable yet
  const t = f.trend;
  if (t && Math.abs(t.slopeRelPerHour) + 1.645 * t.seRelPerHour > 4 * factor * s.max_relative_slope_per_hour)
    return `a drift up to ${round(100 * (Math.abs(t.slopeRelPerHour) + 1.645 * t.seRelPerHour), 0)}%/h not ruled out yet`;
  // the first window with a fit has nothing to have moved from
  if (!prev?.fit) return undefined;
  const range = Math.abs(v - prev.fit.proj.value) / v;
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
