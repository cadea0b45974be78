// Decide, don't only measure: is a candidate better or worse than a reference (the baseline or the
// current best), or within the experiment's `min_improvement` of it? Pure.
//
// What is compared (src/analysis/contrast.ts): the two runs' start cohorts at equal run age, first
// wave included (src/analysis/cohorts.ts), so start-up, congestion, cycles, a shared drift and the
// scene order cancel. That is a claim about the runs *at the ages both have*; the promise a team acts
// on is about the whole run, so a `better` or `equivalent` stands only when the full-run guard settles
// it too: the drift of the candidate against its reference (the slope of the cohort differences on
// start age), the contrast extrapolated by it to the run's rollout-weighted mean age, widened by the
// lever × the slope's error, through the same boundary. Until then a candidate faster at equal age is
// the provisional winner (`better-at-equal-age`) and keeps running; closed with the guard still open
// it is `faster-drift-not-ruled-out`, a state of its own.
//
// The monitor looks every minute or few and stops a job on the first look that settles it, so a
// fixed-sample 95% interval would be wrong far more often than 5% of the time. Two boundaries are
// valid under repeated looks (`decision_boundary`, docs/monitor.md):
// - `alpha-spending` (default): each claim is one-sided, and spends its error α over the horizon
//   `max_decision_minutes` with Lan–DeMets Pocock-type spending (src/analysis/boundaries.ts): exact
//   for a Gaussian random walk, about 2.3–3.2 standard errors one-sided over a 120-minute horizon.
// - `always-valid`: Robbins' normal-mixture confidence sequence, two-sided over an unlimited
//   horizon, s · √((1 + 1/I) · ln((1 + I) ÷ α²)), I = (s₀ ÷ s)² (about 3.1 s over the useful range).
//   It spends about a seventh of α on the one-sided claims a decision makes: the price of no horizon.
import { TIMELINE } from '../catalog/alpasim.js';
import { EXPERIMENT_DEFAULTS, experimentSettings } from '../topology/settings.js';
import type { Decision, DecisionReference, Interval } from '../types/generated/metrics.js';
import { boundaryAt, lookIndex } from './boundaries.js';
import { upperTail } from './cohort-fit.js';
import { type Contrast, contrastOf } from './contrast.js';
import { defaultRunEndMinutes } from './detector.js';
import { decisionProjection, referenceAtAge, type VerdictLike } from './equal-age.js';
import { decisionReference, referenceText, sameReference } from './reference.js';
import { round } from './series.js';

export {
  AGE_GAP_DRIFT_PER_HOUR,
  AGE_GAP_MAX_MINUTES,
  decisionProjection,
  type ReferenceAtAge,
  referenceAtAge,
  type VerdictLike,
} from './equal-age.js';

export const CONFIDENCE_SEQUENCE = { alpha: 0.05, s0: 0.03 } as const;

export type DecisionBoundary = 'alpha-spending' | 'always-valid';

/** Defaults of the experiment's decision settings (experiment.yaml). */
export const DECISION_DEFAULTS = {
  boundary: EXPERIMENT_DEFAULTS.decisionBoundary as DecisionBoundary,
  maxDecisionMinutes: EXPERIMENT_DEFAULTS.maxDecisionMinutes,
  /** The small-sample guard: no claim on fewer run-minutes of data than this. */
  minSteadyMinutes: 5,
} as const;

/** What a candidate is decided against, as the decision reads it. */
export interface DecisionAgainst {
  name: string;
  verdict: VerdictLike;
  /** How the evidence names it (default: its name). */
  label?: string;
  /** How the decision names it (default: a run of that name). */
  reference?: DecisionReference;
  /**
   * Its data have ended: a recorded run, or a reference job that stopped, failed or was lost. A
   * candidate is closed once more of its own data cannot settle the comparison (issue 38 item 1).
   */
  ended?: boolean;
  /** A reference measured at another time (`reference: recorded`): the run-to-run term in the interval. */
  betweenRun?: BetweenRun | null;
}

/**
 * The spread of one topology's value between runs at different times (log-scale standard deviation):
 * estimated from repeated runs of one topology in the record, or the assumed default; `text` says which.
 */
export interface BetweenRun {
  logSd: number;
  text: string;
}

/** The between-run spread assumed while the record holds no repeated run of one topology to estimate it. */
export const ASSUMED_BETWEEN_RUN = 0.015;

/** Decisions that end a candidate: final, read back as they are on every later look. */
const FINAL: ReadonlySet<Decision['state']> = new Set([
  'better',
  'worse',
  'equivalent',
  'not-better',
  'faster-drift-not-ruled-out',
]);

/** A decision that is final (the provisional winner is not: its full-run guard is still open). */
export function isFinalDecision(d: Pick<Decision, 'state'> | null | undefined): boolean {
  return !!d && FINAL.has(d.state);
}

/** A candidate whose decision still reads its reference: measuring, or the provisional winner. */
export function decisionOpen(d: Pick<Decision, 'state'> | null | undefined): boolean {
  return !d || d.state === 'measuring' || d.state === 'better-at-equal-age';
}

/** Where the steady data the fallback path reads starts (the first wave's end, else the verdict's warm-up). */
function steadyFrom(v: VerdictLike): number | undefined {
  return v.decision_estimate?.first_wave_end_minutes ?? v.warmup_end_minutes ?? undefined;
}

export interface DecideOptions {
  /** The experiment's `min_improvement` (default EXPERIMENT_DEFAULTS.minImprovement). */
  minImprovement?: number;
  /** Error rate of each one-sided claim over all looks (default 0.05). */
  alpha?: number;
  /** The decision of the previous pass: a final decision stays; a provisional winner keeps its claim. */
  previous?: Decision | null;
  /** This candidate is the reference itself. */
  isReference?: boolean;
  /** Standard error where the sequence is tightest (default CONFIDENCE_SEQUENCE.s0). */
  s0?: number;
  /** `alpha-spending` (default) or `always-valid` (the experiment's `decision_boundary`). */
  boundary?: DecisionBoundary;
  /** The horizon the alpha-spending boundary spends α over (default 120). */
  maxDecisionMinutes?: number;
  /** Close a near-tie whose settlement is forecast beyond the horizon (default on; off for the pruner). */
  futility?: boolean;
  /** The full-run guard (default on; the verdict bench's same-knowledge bound reads without it). */
  fullRunGuard?: boolean;
  /**
   * The spread (log scale) of one topology's runs at different times, added to the contrast with a
   * reference that did not share the candidate's wall clock (a recorded one); default 0.
   */
  betweenRunSd?: number;
}

/** The experiment.yaml keys that set the decision (absent: the defaults). */
export interface DecisionSettings {
  min_improvement?: number;
  decision_boundary?: DecisionBoundary;
  max_decision_minutes?: number;
}

/** DecideOptions from an experiment's settings: the one mapping every path (monitor, CLI) uses. */
export function decisionOptions(x: DecisionSettings | null | undefined): DecideOptions {
  const s = experimentSettings(x);
  return {
    minImprovement: s.minImprovement,
    boundary: s.decisionBoundary,
    maxDecisionMinutes: s.maxDecisionMinutes,
  };
}

/**
 * The radius (on the log scale) a one-sided claim must clear at this look, or why none can be made
 * (the small-sample guard). Information is counted from run-minute `from` (0 for start cohorts: the
 * first wave is data). At and past the horizon it is the last look's (`final`: the closed design
 * settles what is still open there).
 */
export function claimRadius(
  candidate: VerdictLike,
  s: number,
  options: DecideOptions,
  from: number = steadyFrom(candidate) ?? 0,
): { radius: number; text: string; final?: boolean } | { radius: null; why: string } {
  const alpha = options.alpha ?? CONFIDENCE_SEQUENCE.alpha;
  const minutes = candidate.minutes_of_data ?? 0;
  const max = options.maxDecisionMinutes ?? DECISION_DEFAULTS.maxDecisionMinutes;
  const final = minutes >= max - 1e-9 ? { final: true } : {};
  if ((options.boundary ?? DECISION_DEFAULTS.boundary) === 'always-valid')
    return {
      radius: csRadius(s, alpha, options.s0 ?? CONFIDENCE_SEQUENCE.s0),
      text: `always-valid confidence sequence (normal mixture, α ${alpha})`,
      ...final,
    };
  if (minutes - from < DECISION_DEFAULTS.minSteadyMinutes)
    return {
      radius: null,
      why: `small-sample guard: ${round(Math.max(0, minutes - from), 1)} of ${DECISION_DEFAULTS.minSteadyMinutes} run-minutes of data`,
    };
  const at = { minutes: Math.min(minutes, max), warmupEnd: from, maxMinutes: max };
  const c = boundaryAt(at, alpha) as number;
  const look = lookIndex(at);
  return {
    radius: c * s,
    text: `one-sided boundary ${round(c, 2)} s.e. (Pocock-type α spending, α ${round(alpha, 4)} per claim, ${round(100 * (look?.tau ?? 0), 0)}% of the ${max}-minute horizon)`,
    ...final,
  };
}

/** Radius of the always-valid confidence sequence for a Gaussian estimate with standard error s. */
export function csRadius(
  s: number,
  alpha: number = CONFIDENCE_SEQUENCE.alpha,
  s0: number = CONFIDENCE_SEQUENCE.s0,
): number {
  if (!(s > 0)) return 0;
  const I = (s0 / s) ** 2;
  return s * Math.sqrt((1 + 1 / I) * Math.log((1 + I) / alpha ** 2));
}

/** What the decision can read of a run: a contrast needs start cohorts or a projection. */
const usable = (v: VerdictLike | null | undefined) => {
  if (!v || ['unhealthy', 'no-data'].includes(v.state)) return false;
  if (v.cohorts) return true;
  const p = decisionProjection(v);
  // the verdict's warm-up rule does not hold back a decision that has its own estimate
  return (
    !!p && p.value > 0 && p.low > 0 && p.high >= p.low && (!!v.decision_estimate || v.state !== 'warming')
  );
};

/** The full-run guard's reading at this look. */
interface FullRun {
  full_run: NonNullable<Decision['full_run']>;
  /** Its claim (stateOf its interval), null without a slope. */
  state: Decision['state'] | null;
  drifts: boolean;
  text: string;
}

/**
 * The full-run guard: the contrast extrapolated along the drift (the slope of the cohort differences
 * on start age) from its own mean age to the run's rollout-weighted mean age (about half the run,
 * less a rollout), widened by the lever × the slope's error, read through the same boundary `c`.
 */
function fullRunGuard(k: Contrast, c: number, candidate: VerdictLike, m: number, shown: string): FullRun {
  const runEnd = candidate.run_end_minutes ?? defaultRunEndMinutes();
  const W = candidate.decision_estimate?.mean_duration_minutes ?? 0;
  const lever = Math.max(0, (runEnd - W) / 2 - k.meanAge);
  if (k.slope === null || k.slopeSe === null) {
    const text = `full-run guard: no drift measurable yet against ${shown} (a slope needs three start cohorts)`;
    return {
      full_run: {
        guard: 'not-measured',
        change: null,
        slope_relative_per_hour: null,
        slope_se: null,
        lever_minutes: round(lever, 1),
      },
      state: null,
      drifts: false,
      text,
    };
  }
  const d = k.logChange + k.slope * lever;
  const r = c * Math.hypot(k.se, lever * k.slopeSe) + k.widen;
  const change = {
    value: round(Math.exp(d) - 1, 4),
    low: round(Math.exp(d - r) - 1, 4),
    high: round(Math.exp(d + r) - 1, 4),
  };
  const drifts = Math.abs(k.slope) > c * k.slopeSe;
  const slope = `${k.slope > 0 ? '+' : ''}${pct(60 * k.slope)}/h ± ${pct(60 * k.slopeSe)}`;
  return {
    full_run: {
      guard: drifts ? 'drifts' : 'open',
      change,
      slope_relative_per_hour: round(60 * k.slope, 4),
      slope_se: round(60 * k.slopeSe, 4),
      lever_minutes: round(lever, 1),
    },
    // an untrusted slope (too few cohorts to show their own spread) shows its interval but settles nothing
    state: k.slopeTrusted ? stateOf(change.low, change.high, m) : null,
    drifts: drifts && k.slopeTrusted,
    text: `full-run guard: the candidate drifts ${slope} against ${shown} (${k.basis ? 'cohort differences on start age' : "the two runs' rollout drifts"}${drifts ? ', significant' : ''}); extrapolated ${round(lever, 0)} run-minutes to the run's rollout-weighted mean age: ${pct(change.value)} [${pct(change.low)}, ${pct(change.high)}]`,
  };
}

/**
 * The state both claims allow. A `better` at equal run age is the provisional winner until the
 * full-run interval settles `better` too; while that equal-age interval lies wholly below −m, a
 * guard that points the other way only holds it (it runs on, and is closed at the horizon as
 * faster-drift-not-ruled-out); once it no longer does, the guard's worse or not-better decides (a
 * provisional winner that drifted away). A slope read early, over cohorts
 * still carrying two topologies' different start-ups, extrapolated a hundred run-minutes, must never
 * turn an interval lying wholly below −m into `worse` or `not-better` (the demo's model-2: −12.5%
 * [−17.6%, −7.2%] at equal age was called worse on a +92%/h start-up slope). `equivalent` needs the
 * full-run interval within ±m as well, else it is `not-better` (its equal-age interval lies above
 * −m). `worse` and `not-better` are one-sided claims at equal run age; a full-run interval that
 * settles one of them while the equal-age one is open decides too (a drift against the candidate).
 */
function combine(
  eq: Decision['state'],
  full: Decision['state'] | null,
  provisional: boolean,
): Decision['state'] {
  // while its equal-age interval lies wholly below −m, the guard only holds it
  if (eq === 'better') return full === 'better' ? 'better' : 'better-at-equal-age';
  if (provisional) {
    if (full === 'better' || full === 'worse') return full;
    if (full === 'not-better' || full === 'equivalent') return 'not-better';
    return 'better-at-equal-age';
  }
  if (eq === 'equivalent') return full === 'equivalent' ? 'equivalent' : 'not-better';
  if (eq !== 'measuring') return eq;
  if (full === 'worse') return 'worse';
  return full === 'not-better' || full === 'equivalent' ? 'not-better' : 'measuring';
}

/** The guard's field once the state is known: settled when it agrees with the decision. */
function guardOf(f: FullRun, state: Decision['state']): NonNullable<Decision['full_run']> {
  const agrees =
    f.state !== null &&
    (f.state === state ||
      (state === 'not-better' && (f.state === 'equivalent' || f.state === 'worse')) ||
      (state === 'worse' && f.state === 'worse'));
  return { ...f.full_run, guard: agrees && !f.drifts ? 'settled' : f.full_run.guard };
}

/**
 * One candidate against one reference at equal run age (src/analysis/contrast.ts). `measuring` until
 * the interval of the relative change (candidate − reference) ÷ reference of seconds per rollout,
 * valid under repeated looks, lies entirely above 0 (`worse`), below −min_improvement (`better`, or
 * the provisional `better-at-equal-age` while the full-run guard is open), inside ±min_improvement
 * (`equivalent`), or above −min_improvement (`not-better`: it cannot win, the futility stop of a
 * sequential trial). Every decision ends: at the horizon, once the reference's data have ended and
 * more of the candidate's cannot settle it, or when no settlement is forecast within the horizon for
 * a candidate that does not point at a gain (`close`).
 */
export function decideCandidate(
  candidate: VerdictLike,
  reference: DecisionAgainst | null,
  options: DecideOptions = {},
): Decision {
  const m = options.minImprovement ?? EXPERIMENT_DEFAULTS.minImprovement;
  const shown = reference?.label ?? reference?.name ?? 'none';
  const base = { reference: referenceOf(reference), min_improvement: m, method: methodText(options) };
  const read = comparable(candidate, reference, base, shown, options);
  if ('decision' in read) return read.decision;
  const k = contrastOf(candidate, read.verdict, shown, betweenRunOf(reference, options), reference?.ended);
  if ('none' in k) return { ...base, state: 'measuring', evidence: [k.none] };
  const claim = claimRadius(candidate, k.se, options, k.basis ? 0 : undefined);
  if (claim.radius === null)
    return unclaimed(
      base,
      k.logChange,
      `change vs ${shown}: ${pct(Math.exp(k.logChange) - 1)}; ${claim.why}`,
    );
  const r = claim.radius + k.widen;
  const d = k.logChange;
  const change: Interval = {
    value: round(Math.exp(d) - 1, 4),
    low: round(Math.exp(d - r) - 1, 4),
    high: round(Math.exp(d + r) - 1, 4),
  };
  const full = fullRunGuard(k, k.se > 0 ? claim.radius / k.se : 0, candidate, m, shown);
  const provisional =
    options.previous?.state === 'better-at-equal-age' &&
    sameReference(options.previous.reference, base.reference);
  const eq = stateOf(change.low, change.high, m);
  const fullState = options.fullRunGuard === false ? eq : full.state;
  const state = k.thin && !provisional ? 'measuring' : combine(eq, fullState, provisional);
  const evidence = [
    `change vs ${shown} at equal run age: ${pct(change.value)} [${pct(change.low)}, ${pct(change.high)}] (valid under repeated looks; ±${pct(r)} on the log scale: ${claim.text})`,
    k.text,
    ...betweenRunText(reference),
    full.text,
    ...(k.thin && !provisional ? [k.thin] : []),
  ];
  const contrast = k.basis ? { ...k.basis, mean_age_minutes: round(k.meanAge, 1) } : null;
  const x = { base, change, full, d, s: k.se, m, shown, evidence, candidate, contrast };
  const eta = expectedMinutes(candidate, d, k.se, m, options, k.basis ? 0 : undefined);
  if (state === 'measuring' || state === 'better-at-equal-age') {
    const why = closeWhy({ claim, k, candidate, change, m, eta, options, state });
    if (why) return settle(x, state, why);
    return state === 'measuring'
      ? stillMeasuring(x, eta)
      : decided(
          x,
          state,
          `${state}: faster by more than ${pct(m)} than ${shown} at equal run age at every look's confidence; the full-run guard is still open, so it keeps running`,
        );
  }
  return decided(
    x,
    state,
    `${state}: ${claimOf(state, m)} than ${shown} at every look's confidence${full.drifts && (state === 'worse' || state === 'not-better') ? ' (it drifts against it: a one-sided claim)' : ''}`,
  );
}

type DecisionBase = Pick<Decision, 'reference' | 'min_improvement' | 'method'>;

/** How a decision names what it is against: the reference's own, else a run of that name. */
export function referenceOf(
  r: { name: string; reference?: DecisionReference } | null | undefined,
): DecisionReference {
  return r?.reference ?? decisionReference('run', r?.name ?? 'none');
}

/** What a look built, for the decisions it ends in. */
interface Look {
  base: DecisionBase;
  change: Interval;
  full: FullRun;
  d: number;
  s: number;
  m: number;
  shown: string;
  evidence: string[];
  candidate: VerdictLike;
  contrast: Decision['contrast'];
}

/** Run-minutes after the reference's data ended by which the candidate's shared cohorts have ended too (× its rollout duration). */
const AFTER_REFERENCE_DURATIONS = 2;

/**
 * Run-minutes before a candidate's estimate may rule out a gain: younger, it still carries the
 * start-up and its interval is wide (the forecast's closing waits, and the reference runs with it:
 * src/analysis/reference-lifetime.ts YOUNG_MINUTES).
 */
export const FORECAST_AFTER_MINUTES = 30;

/**
 * A decision's estimate points at a gain: its relative change is at most −min_improvement ÷ 2 (closer
 * to a gain than to no change). A candidate that does is never left without a reference, nor stopped
 * by a forecast.
 */
export function pointsAtGain(
  d: Pick<Decision, 'relative_change'> | null | undefined,
  minImprovement: number,
): boolean {
  const v = d?.relative_change?.value;
  return v !== undefined && v <= -minImprovement / 2;
}

/**
 * Futility by forecast: a candidate still `measuring` whose estimate does not point at a gain and
 * whose decision forecasts no settlement within the horizon (expected_minutes_to_decision null, too
 * close to a boundary, or beyond `horizon`) is closed once it has FORECAST_AFTER_MINUTES of data: its
 * difference from the reference is within the decisions' noise, so more run-minutes buy no
 * conclusion. decideCandidate closes by it (`closeWhy`); the campaign bench reads it too.
 */
export function futileByForecast(
  decision: Pick<Decision, 'state' | 'relative_change'> & { expected_minutes_to_decision?: number | null },
  minute: number,
  horizon: number,
  minImprovement: number,
): boolean {
  if (decision.state !== 'measuring' || minute < FORECAST_AFTER_MINUTES) return false;
  if (decision.relative_change?.value === undefined || pointsAtGain(decision, minImprovement)) return false;
  const eta = decision.expected_minutes_to_decision;
  // undefined: no interval yet (too little steady data), nothing is forecast
  if (eta === undefined) return false;
  return eta === null || eta > horizon;
}

/**
 * Why an open decision is closed at this look, or null: the horizon; the reference's data ended
 * (its job stopped) and the candidate's rollouts in the cohorts they share have ended too, so more of
 * its data cannot settle it; or a near-tie (not pointing at a gain: change above −m ÷ 2) whose
 * settlement is forecast beyond the horizon after FORECAST_AFTER_MINUTES.
 */
function closeWhy(x: {
  claim: { final?: boolean };
  k: Contrast;
  candidate: VerdictLike;
  change: Interval;
  m: number;
  eta: number | null;
  options: DecideOptions;
  state: Decision['state'];
}): string | null {
  const now = x.candidate.minutes_of_data ?? 0;
  if (x.claim.final) return 'closed at the horizon (max_decision_minutes)';
  if (x.candidate.cohorts?.final) return "closed now: the candidate's job ended, so its data will not grow";
  const W = x.candidate.decision_estimate?.mean_duration_minutes ?? 5;
  if (x.k.referenceEnd !== null && now >= x.k.referenceEnd + AFTER_REFERENCE_DURATIONS * W)
    return `closed now: the reference's data end at run-minute ${round(x.k.referenceEnd, 0)}; compared there, the candidate's rollouts of the ages they share have ended, so more of its data cannot settle it`;
  const horizon = x.options.maxDecisionMinutes ?? DECISION_DEFAULTS.maxDecisionMinutes;
  const open = { state: x.state, relative_change: x.change, expected_minutes_to_decision: x.eta };
  const futile = x.options.futility !== false && futileByForecast(open, now, horizon, x.m);
  return futile
    ? 'closed by the forecast: no settlement is forecast within the horizon and the change does not point at a gain'
    : null;
}

/**
 * Settles an open decision (`closeWhy`): a provisional winner, or one whose equal-age interval lies
 * below −min_improvement but was held (a claim its error could not yet make), closes
 * `faster-drift-not-ruled-out` (faster at equal run age, a drift not ruled out), any other `not-better` (not shown min_improvement
 * faster: the futility boundary; `equivalent` is only ever the sequence's own claim). The evidence
 * states the error this costs: the chance that a candidate truly min_improvement faster reads as slow
 * as this one or slower.
 */
function settle(x: Look, state: Decision['state'], why: string): Decision {
  if (state === 'better-at-equal-age' || x.change.high < -x.m)
    return decided(
      x,
      'faster-drift-not-ruled-out',
      `faster-drift-not-ruled-out: ${why}: faster than ${x.shown} at equal run age; a drift that could undo it over the full run is not ruled out`,
    );
  const p = x.s > 0 ? upperTail((x.d - Math.log(1 - x.m)) / x.s) : 0;
  return decided(
    x,
    'not-better',
    `not-better: ${why}: not shown ${pct(x.m)} faster than ${x.shown}, settled by the futility rule; the error this costs: a candidate truly ${pct(x.m)} faster reads this slow or slower with probability ${pct(p)}`,
  );
}

/** No claim can be made at this look (the small-sample guard): the change without an interval. */
function unclaimed(base: DecisionBase, d: number, text: string): Decision {
  const value = round(Math.exp(d) - 1, 4);
  return {
    ...base,
    state: 'measuring',
    relative_change: { value, low: value, high: value },
    evidence: [text],
  };
}

function stillMeasuring(x: Look, eta: number | null): Decision {
  const when =
    eta === null
      ? 'the difference is too close to a boundary to forecast when it settles'
      : `expected to settle near run-minute ${eta}`;
  return {
    ...x.base,
    state: 'measuring',
    relative_change: x.change,
    full_run: x.full.full_run,
    contrast: x.contrast,
    expected_minutes_to_decision: eta,
    evidence: [...x.evidence, when],
  };
}

function decided(x: Look, state: Decision['state'], last: string): Decision {
  const minutes = x.candidate.minutes_of_data ?? null;
  return {
    ...x.base,
    state,
    relative_change: x.change,
    full_run: guardOf(x.full, state),
    contrast: x.contrast,
    decided_at_minutes: minutes === null ? null : round(minutes, 1),
    evidence: [...x.evidence, last],
  };
}

/** How the decision reads the difference: the boundary and its error, as the evidence names it. */
function methodText(options: DecideOptions): string {
  const alpha = options.alpha ?? CONFIDENCE_SEQUENCE.alpha;
  const boundary = options.boundary ?? DECISION_DEFAULTS.boundary;
  const what =
    'on log(candidate ÷ reference) seconds per rollout of the start cohorts both runs share (equal run age), with a full-run guard';
  return boundary === 'always-valid'
    ? `always-valid confidence sequence (normal mixture, α ${alpha}) ${what}`
    : `one-sided group-sequential boundaries (Lan–DeMets Pocock-type α spending, α ${alpha} per claim over ${options.maxDecisionMinutes ?? DECISION_DEFAULTS.maxDecisionMinutes} min) ${what}`;
}

/** The between-run term as the evidence names it: its size and where it comes from. */
const betweenRunText = (r: DecisionAgainst | null) =>
  r?.betweenRun ? [`between-run term ±${pct(r.betweenRun.logSd)} (log s.d.): ${r.betweenRun.text}`] : [];

/** The between-run term (log s.d.) of a reference that did not share the candidate's wall clock. */
const betweenRunOf = (r: DecisionAgainst | null, o: DecideOptions) =>
  r?.betweenRun?.logSd ?? o.betweenRunSd ?? 0;

/**
 * The reference to read, or the decision when there is nothing to compare yet: the reference itself,
 * a final decision already made against the same reference, no reference, or nothing usable.
 */
function comparable(
  candidate: VerdictLike,
  reference: DecisionAgainst | null,
  base: DecisionBase,
  shown: string,
  options: DecideOptions,
): { decision: Decision } | { verdict: VerdictLike } {
  if (options.isReference)
    return { decision: { ...base, state: 'reference', evidence: ['this candidate is the reference'] } };
  const prev = options.previous;
  if (prev && isFinalDecision(prev) && sameReference(prev.reference, base.reference))
    return { decision: prev };
  if (!reference)
    return {
      decision: { ...base, state: 'measuring', evidence: ['no reference with a projected value yet'] },
    };
  if (usable(candidate) && usable(reference.verdict)) return { verdict: reference.verdict };
  const who = !usable(candidate)
    ? `the candidate (${candidate.state})`
    : `${shown} (${reference.verdict.state})`;
  return { decision: { ...base, state: 'measuring', evidence: [`no usable estimate for ${who} yet`] } };
}

const pct = (x: number) => `${round(100 * x, 1)}%`;

/**
 * The claim an interval [lo, hi] of the relative change settles, checked in this order: `worse`
 * above 0, `better` below −m, `equivalent` inside ±m, `not-better` above −m; else `measuring`.
 */
function stateOf(lo: number, hi: number, m: number): Decision['state'] {
  return lo > 0
    ? 'worse'
    : hi < -m
      ? 'better'
      : lo > -m && hi < m
        ? 'equivalent'
        : lo > -m
          ? 'not-better'
          : 'measuring';
}

function claimOf(state: Decision['state'], m: number): string {
  return state === 'worse'
    ? 'slower'
    : state === 'better'
      ? `faster by more than ${pct(m)}`
      : state === 'equivalent'
        ? `within ±${pct(m)}`
        : `not faster by ${pct(m)} or more`;
}

/**
 * Run-minute at which the sequence is expected to exclude the undecided region, assuming the
 * standard error shrinks like 1 ÷ √(minutes of information) and the estimate stays where it is.
 */
function expectedMinutes(
  v: VerdictLike,
  d: number,
  s: number,
  m: number,
  options: DecideOptions,
  from: number = steadyFrom(v) ?? (v.minutes_of_data ?? 0) / 3,
): number | null {
  const now = v.minutes_of_data;
  if (now == null || !(s > 0)) return null;
  const info = Math.max(1, now - from);
  const lm = Math.log(1 - m);
  // the largest radius that settles it, for each outcome the estimate points to
  // (not-better, d − lm, is never harder than equivalent, so equivalent's own need adds nothing)
  const need = Math.max(d, lm - d, d - lm);
  if (!(need > 0)) return null;
  // step forward a minute at a time: s shrinks like 1 ÷ √(minutes of information), the boundary moves
  const max = options.maxDecisionMinutes ?? DECISION_DEFAULTS.maxDecisionMinutes;
  const horizon = (options.boundary ?? DECISION_DEFAULTS.boundary) === 'always-valid' ? now + 600 : max;
  for (let t = Math.ceil(now); t <= horizon; t++) {
    const st = s * Math.sqrt(info / Math.max(1, t - from));
    const c = claimRadius({ ...v, minutes_of_data: t }, st, options, from);
    if (c.radius !== null && c.radius <= need) return round(Math.max(t, now), 0);
  }
  return null;
}

/**
 * The pruner (a losing trial stops early, as Optuna's pruners stop one): a candidate that cannot be
 * min_improvement faster than the leading candidate of its experiment cannot win, even while its
 * comparison with the reference is still open. `not-better` against the leader once the sequence
 * settles that (worse than it, within ±min_improvement of it, or not min_improvement faster), else
 * null. The leader is the best of a few, so it is optimistic: a candidate looks worse against it than
 * against the true best, and the pruner stops it earlier and more often wrongly than one
 * comparison's error rate says (see docs/monitor.md). So its error is split over the possible leaders
 * (`leaders`, Bonferroni): whichever one leads, the claim against it keeps α ÷ leaders, and the claims
 * together α.
 */
export function pruneByLeader(
  candidate: VerdictLike,
  leader: { name: string; verdict: VerdictLike; label?: string; reference?: DecisionReference },
  options: Omit<DecideOptions, 'isReference'> & { leaders?: number } = {},
): Decision | null {
  const leaders = Math.max(1, Math.floor(options.leaders ?? 1));
  const alpha = (options.alpha ?? CONFIDENCE_SEQUENCE.alpha) / leaders;
  const previous = sameReference(options.previous?.reference, referenceOf(leader)) ? options.previous : null;
  const d = decideCandidate(candidate, leader, { ...options, alpha, previous, futility: false });
  if (d.state !== 'worse' && d.state !== 'equivalent' && d.state !== 'not-better') return null;
  if (d.evidence.at(-1)?.includes('closed')) return null; // only a claim the sequence settled prunes
  const m = options.minImprovement ?? EXPERIMENT_DEFAULTS.minImprovement;
  const shown = leader.label ?? leader.name;
  return {
    ...d,
    state: 'not-better',
    evidence: [
      ...d.evidence.slice(0, 2),
      `not-better: not ${round(100 * m, 1)}% faster than ${shown} at every look's confidence (α split over ${leaders} possible leader${leaders === 1 ? '' : 's'}): it cannot win`,
    ],
  };
}

/** A candidate's standing for the leader: its contrast against the reference, else its projection's ratio to it. */
function leadScore(v: VerdictLike, reference: VerdictLike | null): number | null {
  // a run the detector sees drift is never the leader: the pruner's claims against it would not hold
  if (!usable(v) || v.state === 'drifting') return null;
  if (reference && usable(reference)) {
    const k = contrastOf(v, reference, 'the reference');
    if (!('none' in k)) return k.logChange;
  }
  const p = decisionProjection(v)?.value;
  if (!p) return null;
  const ref = reference ? referenceAtAge(reference, v.minutes_of_data).projection?.value : undefined;
  return ref ? Math.log(p / ref) : Math.log(p);
}

/**
 * The leading candidate of an experiment: the one most ahead of the reference at equal run age (its
 * contrast, else its projection at the reference's matching age), when it is ahead; null without one.
 */
export function leadingCandidate<T extends { name: string; verdict: VerdictLike }>(
  candidates: readonly T[],
  reference: VerdictLike | null,
): T | null {
  let best: { c: T; score: number } | null = null;
  for (const c of candidates) {
    const score = leadScore(c.verdict, reference);
    if (score !== null && (!best || score < best.score)) best = { c, score };
  }
  // with a reference, only a candidate ahead of it leads (its score is then a log change)
  if (best && reference && usable(reference) && !(best.score < 0)) return null;
  return best?.c ?? null;
}

export interface GpuMinutesInput {
  gpus: number;
  /** Job minutes so far (start-up included). */
  minutesRunning: number;
  /** Job minutes at which the run would have ended: the wall time, or the last rollout if sooner. */
  runEndMinutes: number;
  /** The job is (or is being) stopped now. */
  stopped: boolean;
}

/** Job minutes of the seed's rule by hand: start-up, then the full-run value read at run-minute 45. */
export const SEED_RULE_JOB_MINUTES = TIMELINE.startupMinutes + TIMELINE.stabiliseMinutes[1];

/**
 * GPU-minutes held so far and, when stopped now, those saved: against the rest of the job's wall
 * time, and against the seed's rule (what a person reading at minute 45 would have spent; negative
 * when the decision took longer).
 */
export function gpuMinutes(i: GpuMinutesInput): {
  used: number;
  saved: number | null;
  savedVsSeed: number | null;
} {
  const used = round(i.gpus * Math.max(0, i.minutesRunning), 0);
  const saved = i.stopped ? round(i.gpus * Math.max(0, i.runEndMinutes - i.minutesRunning), 0) : null;
  const savedVsSeed = i.stopped ? round(i.gpus * SEED_RULE_JOB_MINUTES - used, 0) : null;
  return { used, saved, savedVsSeed };
}

/** The decision with its GPU-minutes filled in (pure; for the comment and the record). */
export function withGpuMinutes(d: Decision, i: GpuMinutesInput): Decision {
  const g = gpuMinutes(i);
  return {
    ...d,
    gpu_minutes_used: g.used,
    gpu_minutes_saved: g.saved,
    gpu_minutes_saved_vs_seed: g.savedVsSeed,
  };
}

/**
 * "192 GPU-minutes saved against the seed's 45-minute read (1,592 against the job's wall time)":
 * the one text every surface shows; null when the job was not stopped on the decision.
 */
export function savingsText(
  d: Pick<Decision, 'gpu_minutes_saved' | 'gpu_minutes_saved_vs_seed'>,
): string | null {
  if (d.gpu_minutes_saved == null) return null;
  const wall = `${Math.round(d.gpu_minutes_saved)} against the job's wall time`;
  const seed = d.gpu_minutes_saved_vs_seed;
  if (seed == null) return `${Math.round(d.gpu_minutes_saved)} GPU-minutes of wall time saved`;
  return seed >= 0
    ? `${Math.round(seed)} GPU-minutes saved against the seed's ${TIMELINE.stabiliseMinutes[1]}-minute read (${wall})`
    : `${Math.round(-seed)} GPU-minutes more than the seed's ${TIMELINE.stabiliseMinutes[1]}-minute read (${wall})`;
}

/**
 * Should the monitor cancel this candidate's job now? With `stop_when_decided`, when it is `worse`
 * than any reference (it cannot win), or finally decided against every reference it is compared
 * with. A reference itself is never stopped on a decision (others are measured against it), nor is
 * a provisional winner (its full-run guard is open: it runs on, as the next round's reference).
 */
export function shouldStopOnDecision(
  decisions: readonly Decision[],
  options: { stopWhenDecided?: boolean } = {},
): { stop: boolean; reason: string } {
  if (options.stopWhenDecided === false) return { stop: false, reason: 'stop_when_decided is off' };
  if (!decisions.length) return { stop: false, reason: 'no decision yet' };
  if (decisions.some((d) => d.state === 'reference'))
    return { stop: false, reason: 'a reference keeps running' };
  const worse = decisions.find((d) => d.state === 'worse');
  if (worse) return { stop: true, reason: `decided worse than ${referenceText(worse.reference)}` };
  if (decisions.every((d) => isFinalDecision(d)))
    return {
      stop: true,
      reason: `decided: ${decisions.map((d) => `${d.state} vs ${referenceText(d.reference)}`).join(', ')}`,
    };
  if (decisions.some((d) => d.state === 'better-at-equal-age'))
    return {
      stop: false,
      reason: 'better at equal run age: it keeps running until the full-run guard settles',
    };
  return { stop: false, reason: 'still measuring' };
}
