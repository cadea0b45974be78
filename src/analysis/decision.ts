// Decide, don't only measure: is a candidate better or worse than a reference (the baseline or the
// current best), or within the experiment's `min_improvement` of it? Pure.
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
import type { Decision, DecisionReference, Interval, Verdict } from '../types/generated/metrics.js';
import { boundaryAt, lookIndex } from './boundaries.js';
import { decisionReference, referenceText, sameReference } from './reference.js';
import { basisText } from './rollouts.js';
import { round } from './series.js';

export const CONFIDENCE_SEQUENCE = { alpha: 0.05, s0: 0.03 } as const;

export type DecisionBoundary = 'alpha-spending' | 'always-valid';

/** Defaults of the experiment's decision settings (experiment.yaml). */
export const DECISION_DEFAULTS = {
  boundary: EXPERIMENT_DEFAULTS.decisionBoundary as DecisionBoundary,
  maxDecisionMinutes: EXPERIMENT_DEFAULTS.maxDecisionMinutes,
  /** The small-sample guard: no claim on less steady data than this (the estimate's s.e. is itself noisy). */
  minSteadyMinutes: 5,
} as const;

/** What the decision reads from a verdict. */
export type VerdictLike = Pick<Verdict, 'state' | 'projected_full_run' | 'minutes_of_data'> &
  Partial<Pick<Verdict, 'warmup_end_minutes' | 'drift' | 'decision_estimate'>>;

/**
 * What a decision reads: the estimate from the rollouts (src/analysis/rollouts.ts: the first wave
 * dropped, rollouts in flight censored) when there is one, else the verdict's projection.
 */
export function decisionProjection(v: VerdictLike | null | undefined): Interval | null {
  return v?.decision_estimate?.projected_full_run ?? v?.projected_full_run ?? null;
}

/** The drift guard's limits, on the rollout durations' relative change per hour of start time. */
export const DRIFT_GUARD = {
  /** A difference in drift significant (2 s.e.) beyond this holds `better`/`equivalent` back… */
  limitPerHour: 0.05,
  /** …and so does one not ruled out (one-sided 95%) below this. */
  steepPerHour: 0.2,
} as const;

/** Without a trajectory, an age difference can hide a drift of this much per hour (the detector's limit). */
export const AGE_GAP_DRIFT_PER_HOUR = 0.05;

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
   * candidate older than its last reading is compared where they end and closed at once when more
   * of its own data cannot settle it (issue 38 item 3).
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

/** The reference as the candidate is compared with it: at the candidate's run-minute when it can be. */
export interface ReferenceAtAge {
  projection: Interval | null;
  /** Standard error of its log. */
  logSe: number;
  /** Run-minutes between the reference's reading and the candidate's (0 at equal run age). */
  gapMinutes: number;
  /** Its error basis was enough for a claim at that age (null: not known). */
  basisEnough: boolean | null;
  /** Its rollout-level drift at that age (null: not measurable or not known). */
  drift: { slope_relative_per_hour: number; se: number } | null;
  text: string;
}

/**
 * The reference as it was at the candidate's run-minute `minute`: from its trajectory when it is
 * older than the candidate (a recorded run, or a concurrent one that started earlier), so that
 * start-up, congestion and a drift they share cancel. Without one, the reading it has and the age
 * difference, which the decision widens its interval by (what a drift of AGE_GAP_DRIFT_PER_HOUR can
 * hide over it).
 */
export function referenceAtAge(reference: VerdictLike, minute: number | null | undefined): ReferenceAtAge {
  const p = decisionProjection(reference);
  const age = reference.minutes_of_data ?? null;
  const traj = reference.decision_estimate?.trajectory;
  const enough = reference.decision_estimate?.error_basis?.enough ?? null;
  if (minute != null && age !== null && traj?.values.length && minute < age - 0.5) {
    const k = Math.min(traj.values.length - 1, Math.floor((minute - traj.from_minute) / traj.step_minutes));
    if (k < 0)
      return {
        projection: null,
        logSe: 0,
        gapMinutes: 0,
        basisEnough: null,
        drift: null,
        text: `no estimate of it yet at run-minute ${round(minute, 1)}`,
      };
    const at = traj.from_minute + k * traj.step_minutes;
    const [value, se] = [traj.values[k] as number, traj.log_se[k] as number];
    const [slope, slopeSe] = [traj.drift_slope?.[k] ?? null, traj.drift_se?.[k] ?? null];
    return {
      drift: slope === null || slopeSe === null ? null : { slope_relative_per_hour: slope, se: slopeSe },
      projection: { value, low: value * Math.exp(-1.96 * se), high: value * Math.exp(1.96 * se) },
      logSe: se,
      gapMinutes: 0,
      basisEnough: traj.basis_from_minute !== null && at >= traj.basis_from_minute,
      text: `as it was at run-minute ${round(at, 0)} (equal run age, from its trajectory)`,
    };
  }
  const gap = minute != null && age !== null ? Math.abs(age - minute) : 0;
  const bounded = minute != null && age !== null && minute > age && gap > AGE_GAP_MAX_MINUTES;
  return {
    projection: p,
    logSe: p ? logSe(p) : 0,
    gapMinutes: bounded ? AGE_GAP_MAX_MINUTES : gap,
    basisEnough: enough,
    drift: reference.decision_estimate?.drift ?? null,
    text:
      gap > 0.5
        ? `read at run-minute ${round(age as number, 0)}, ${round(gap, 0)} minutes from the candidate's age with no trajectory: ±${pct(ageGapHide(bounded ? AGE_GAP_MAX_MINUTES : gap))} added for what a drift of ${pct(AGE_GAP_DRIFT_PER_HOUR)}/h can hide${bounded ? ` over at most ${AGE_GAP_MAX_MINUTES} minutes` : ''}`
        : 'at equal run age',
  };
}

/**
 * A candidate older than its reference's last reading by more than this is read as this much older:
 * the term never widens without bound as the candidate ages on (issue 38 item 1), and a candidate
 * whose reference's data ended is closed once its own data cannot settle it. (A candidate younger
 * than the reading keeps the whole gap: it shrinks as the candidate ages.)
 */
export const AGE_GAP_MAX_MINUTES = 30;

/** What an age difference can hide on the log scale. */
const ageGapHide = (gapMinutes: number) => (AGE_GAP_DRIFT_PER_HOUR * gapMinutes) / 60;

/** Where the steady data the decision reads starts (the first wave's end, else the verdict's warm-up). */
function steadyFrom(v: VerdictLike): number | undefined {
  return v.decision_estimate?.first_wave_end_minutes ?? v.warmup_end_minutes ?? undefined;
}

/** What the estimate of one run used, for the evidence. */
function usedText(v: VerdictLike, who: string): string {
  const e = v.decision_estimate;
  return e
    ? `${who}: ${e.steady_rollouts} rollouts after the first wave (from run-minute ${round(e.first_wave_end_minutes, 1)}), ${e.censored_rollouts} in flight censored`
    : `${who}: the verdict's projection (no rollout estimate yet)`;
}

export interface DecideOptions {
  /** The experiment's `min_improvement` (default 0.02). */
  minImprovement?: number;
  /** Error rate of the confidence sequence over all looks (default 0.05). */
  alpha?: number;
  /** The decision of the previous pass: a decision once reached is final. */
  previous?: Decision | null;
  /** This candidate is the reference itself. */
  isReference?: boolean;
  /** Standard error where the sequence is tightest (default CONFIDENCE_SEQUENCE.s0). */
  s0?: number;
  /** `alpha-spending` (default) or `always-valid` (the experiment's `decision_boundary`). */
  boundary?: DecisionBoundary;
  /** The horizon the alpha-spending boundary spends α over (default 120). */
  maxDecisionMinutes?: number;
  /** The drift guard's limits (default DRIFT_GUARD). */
  driftGuard?: typeof DRIFT_GUARD;
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
 * (the small-sample guard). At and past the horizon it is the last look's (`final`: the closed
 * design settles what is still open there).
 */
export function claimRadius(
  candidate: VerdictLike,
  s: number,
  options: DecideOptions,
): { radius: number; text: string; final?: boolean } | { radius: null; why: string } {
  const alpha = options.alpha ?? CONFIDENCE_SEQUENCE.alpha;
  if ((options.boundary ?? DECISION_DEFAULTS.boundary) === 'always-valid')
    return {
      radius: csRadius(s, alpha, options.s0 ?? CONFIDENCE_SEQUENCE.s0),
      text: `always-valid confidence sequence (normal mixture, α ${alpha})`,
    };
  const minutes = candidate.minutes_of_data ?? 0;
  const warmupEnd = steadyFrom(candidate) ?? 0;
  const max = options.maxDecisionMinutes ?? DECISION_DEFAULTS.maxDecisionMinutes;
  if (minutes - warmupEnd < DECISION_DEFAULTS.minSteadyMinutes)
    return {
      radius: null,
      why: `small-sample guard: ${round(Math.max(0, minutes - warmupEnd), 1)} of ${DECISION_DEFAULTS.minSteadyMinutes} steady minutes`,
    };
  const at = { minutes: Math.min(minutes, max), warmupEnd, maxMinutes: max };
  const c = boundaryAt(at, alpha) as number;
  const look = lookIndex(at);
  return {
    radius: c * s,
    text: `one-sided boundary ${round(c, 2)} s.e. (Pocock-type α spending, α ${round(alpha, 4)} per claim, ${round(100 * (look?.tau ?? 0), 0)}% of the ${max}-minute horizon)`,
    ...(minutes >= max - 1e-9 ? { final: true } : {}),
  };
}

/** Standard error of log(value) from a 95% interval. */
function logSe(i: Interval): number {
  return (Math.log(i.high) - Math.log(i.low)) / (2 * 1.96);
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

/** A projection the decision can read: drifting runs included (see `driftGuard`). */
const usable = (v: VerdictLike | null | undefined) => {
  const p = decisionProjection(v);
  // the verdict's warm-up rule does not hold back a decision that has its own estimate
  const blocked = v?.decision_estimate ? ['unhealthy', 'no-data'] : ['unhealthy', 'no-data', 'warming'];
  return !!v && !!p && p.value > 0 && p.low > 0 && p.high >= p.low && !blocked.includes(v.state);
};

/** Usable and not drifting: what a leader, and a `better` or `equivalent` claim, needs. */
const steadyUsable = (v: VerdictLike | null | undefined) => usable(v) && v?.state !== 'drifting';

const slopeText = (v: VerdictLike) => {
  const s = v.drift?.slope_relative_per_hour;
  return s == null ? 'drifting' : `drifting ${s > 0 ? '+' : ''}${round(100 * s, 1)}%/h`;
};

/** The rollout-level drift of the candidate against the reference's, or why it cannot be ruled out. */
function rolloutDriftHold(
  candidate: VerdictLike,
  r: ReferenceAtAge['drift'],
  g: typeof DRIFT_GUARD,
): string | null {
  const est = candidate.decision_estimate;
  if (!est) return null; // the verdict's projection: its detector's drift state guards it
  const c = est.drift;
  if (!c)
    return 'the candidate’s rollout durations do not span enough blocks of starts to measure a drift yet';
  const diff = c.slope_relative_per_hour - (r?.slope_relative_per_hour ?? 0);
  const se = Math.hypot(c.se, r?.se ?? 0);
  const what = `the candidate’s rollout durations drift ${diff > 0 ? '+' : ''}${pct(diff)}/h ± ${pct(se)} against the reference’s`;
  if (Math.abs(diff) - 2 * se > g.limitPerHour) return `${what}, beyond ${pct(g.limitPerHour)}/h`;
  if (Math.abs(diff) + 1.645 * se > g.steepPerHour)
    return `${what}: a drift of ${pct(g.steepPerHour)}/h is not ruled out yet`;
  return null;
}

/**
 * The drift guard. A drift bends the projection, so a claim that a run is faster (`better`) or as
 * fast (`equivalent`) is held back while the candidate or the reference drifts (the detector's
 * verdict), or while the candidate's rollout durations drift against the reference's beyond
 * DRIFT_GUARD (durations against start time: no interval width stands in for it). `worse` and
 * `not-better` stay open: they end a candidate that cannot win. Returns the state allowed and the
 * evidence to add.
 */
function driftGuard(
  state: Decision['state'],
  lo: number,
  m: number,
  runs: { candidate: VerdictLike; reference: VerdictLike; shown: string; drift: ReferenceAtAge['drift'] },
  g: typeof DRIFT_GUARD,
): { state: Decision['state']; evidence: string[] } {
  if (state !== 'better' && state !== 'equivalent') return { state, evidence: [] };
  const { candidate, reference, shown } = runs;
  const who = [
    candidate.state === 'drifting' ? `the candidate (${slopeText(candidate)})` : null,
    reference.state === 'drifting' ? `${shown} (${slopeText(reference)})` : null,
  ].filter((x): x is string => !!x);
  const rollout = rolloutDriftHold(candidate, runs.drift, g);
  if (!who.length && !rollout)
    return {
      state,
      evidence: [
        'drift guard: neither run drifts (the detector and the rollout durations rule out a drift beyond the guard)',
      ],
    };
  const held = `drift guard: ${state} held back while ${[...(who.length ? [`${who.join(' and ')} drifts`] : []), ...(rollout ? [rollout] : [])].join('; ')}`;
  // `equivalent` implies `not-better` (its interval lies above −m), which a drift does not block
  return lo > -m ? { state: 'not-better', evidence: [held] } : { state: 'measuring', evidence: [held] };
}

/**
 * One candidate against one reference, at equal run age (the reference as it was at the candidate's
 * run-minute, `referenceAtAge`). `measuring` until the interval of the relative change (candidate −
 * reference) ÷ reference of the projected full-run seconds per rollout, valid under repeated looks,
 * lies entirely above 0 (`worse`: slower), entirely below −min_improvement (`better`), entirely inside
 * ±min_improvement (`equivalent`), or entirely above −min_improvement (`not-better`: it cannot win,
 * the futility stop of a sequential trial), checked in that order. No claim on an error basis too
 * thin for the error's own estimate; at the horizon every decision ends (`settleAtHorizon`).
 */
export function decideCandidate(
  candidate: VerdictLike,
  /** `label`: how the evidence names the reference (default: its name). */
  reference: DecisionAgainst | null,
  options: DecideOptions = {},
): Decision {
  const m = options.minImprovement ?? EXPERIMENT_DEFAULTS.minImprovement;
  const name = reference?.name ?? 'none';
  const shown = reference?.label ?? name;
  const base = {
    reference: reference?.reference ?? decisionReference('run', name),
    min_improvement: m,
    method: methodText(options),
  };
  const read = comparable(candidate, reference, base, shown, options);
  if ('decision' in read) return read.decision;
  const { cv, at, ref, subject } = read;
  const d = Math.log(cv.value / (at.projection as Interval).value);
  const between = ref.betweenRun?.logSd ?? 0;
  const s = Math.hypot(logSe(cv), at.logSe, between);
  const claim = claimRadius(subject, s, options);
  if (claim.radius === null)
    return unclaimed(base, d, `change vs ${shown}: ${pct(Math.exp(d) - 1)}; ${claim.why}`);
  const r = claim.radius + ageGapHide(at.gapMinutes);
  const [lo, hi] = [Math.exp(d - r) - 1, Math.exp(d + r) - 1];
  const change: Interval = { value: round(Math.exp(d) - 1, 4), low: round(lo, 4), high: round(hi, 4) };
  const thin = thinBasis(subject, at, shown);
  const runs = { candidate: subject, reference: ref.verdict, shown, drift: at.drift };
  const guard = thin
    ? { state: 'measuring' as const, evidence: [thin] }
    : driftGuard(stateOf(lo, hi, m), lo, m, runs, options.driftGuard ?? DRIFT_GUARD);
  const evidence = [
    `change vs ${shown}: ${pct(change.value)} [${pct(change.low)}, ${pct(change.high)}] (valid under repeated looks; ±${pct(r)} on the log scale: ${claim.text})`,
    `${shown} ${at.text}`,
    ...(ref.betweenRun ? [`between-run term ±${pct(between)} (log s.d.): ${ref.betweenRun.text}`] : []),
    ...guard.evidence,
    `estimates: ${usedText(subject, 'the candidate')}; ${usedText(ref.verdict, shown)}`,
  ];
  const held = !!thin || guard.evidence.length > 0;
  if (guard.state !== 'measuring')
    return decided(base, guard.state, change, candidate, [
      ...evidence,
      `${guard.state}: ${claimOf(guard.state, m)} than ${shown} at every look's confidence`,
    ]);
  const horizon = claimRadius(candidate, s, options);
  if ('final' in horizon && horizon.final)
    return settleAtHorizon({ base, change, d, s, m, shown, evidence, held, candidate });
  const open = stillMeasuring(base, change, evidence, expectedMinutes(candidate, d, s, m, options));
  // the narrowest interval the candidate's own data could give: its error gone, the reference's kept
  const bestRadius = ageGapHide(at.gapMinutes) + (claim.radius * Math.hypot(at.logSe, between)) / s;
  // a guard read against a reference whose data ended before the candidate's age reads a frozen slope
  // (issue 43 item 2): closed with the claim the data support, never run on to a horizon's not-better
  if (held && stateOf(lo, hi, m) === 'better' && outlived(candidate, read.ref))
    return heldFaster(base, change, candidate, evidence, `${shown}'s data ended while a guard held it`);
  const ended = frozenAt(read, { d, lo, hi, m, bestRadius });
  return ended === null ? open : closeOpen(open, candidate, ended);
}

/** The reference's data ended before the candidate's run age: nothing it measures later reaches it. */
function outlived(candidate: VerdictLike, ref: DecisionAgainst): boolean {
  const end = ref.verdict.minutes_of_data;
  return !!ref.ended && end != null && (candidate.minutes_of_data ?? 0) > end + 0.5;
}

/**
 * A decision closed while its whole interval lies below −min_improvement but a guard (a drift not
 * ruled out, a thin error basis) holds the claim: `faster-drift-not-ruled-out`, never `not-better`
 * (issue 43 item 2: the data say it is faster; what they cannot rule out is that a drift undoes it
 * over the full run). Neutral and final; a campaign reruns it beside a reference that runs.
 */
function heldFaster(
  base: DecisionBase,
  change: Interval,
  candidate: VerdictLike,
  evidence: string[],
  why: string,
): Decision {
  return decided(base, 'faster-drift-not-ruled-out', change, candidate, [
    ...evidence,
    `faster-drift-not-ruled-out: faster at equal run age at every look's confidence, closed because ${why}: a drift that could undo it over the full run is not ruled out`,
  ]);
}

/**
 * Why more of the candidate's own data cannot settle its comparison with a reference whose data have
 * ended (issue 38 item 3), or null. Compared where the reference's data end (the candidate as it was
 * then), nothing the candidate measures later moves the comparison; compared with the reference's
 * last reading (no trajectory), the narrowest interval its own data could give (its error gone) must
 * still settle. A `better` only the drift guard holds is not closed here: the data say it is faster.
 */
function frozenAt(
  read: { ref: DecisionAgainst; agedTo: number | null; subject: VerdictLike },
  x: { d: number; lo: number; hi: number; m: number; bestRadius: number },
): string | null {
  if (!read.ref.ended || stateOf(x.lo, x.hi, x.m) === 'better') return null;
  const end = round(read.ref.verdict.minutes_of_data ?? 0, 0);
  if (read.agedTo !== null)
    return `the reference's data end at run-minute ${end}: compared there, more of the candidate's own data cannot settle it`;
  const minutes = read.subject.minutes_of_data ?? 0;
  if (!(minutes > (read.ref.verdict.minutes_of_data ?? minutes) + 0.5)) return null; // it ages toward it
  const [lo, hi] = [Math.exp(x.d - x.bestRadius) - 1, Math.exp(x.d + x.bestRadius) - 1];
  if (stateOf(lo, hi, x.m) !== 'measuring') return null;
  return `the reference's data end at run-minute ${end}: even with no error of its own the candidate's interval [${pct(lo)}, ${pct(hi)}] would not settle it`;
}

/**
 * An open decision closed now (the futility rule): `not-better`, not shown min_improvement faster
 * than its reference, because more run-minutes cannot settle it (`why`: its reference's data ended,
 * or its forecast settles nothing within the horizon). Its interval stays the one measured.
 */
export function closeOpen(open: Decision, candidate: VerdictLike, why: string): Decision {
  const m = open.min_improvement;
  const minutes = candidate.minutes_of_data ?? null;
  return {
    ...open,
    state: 'not-better',
    decided_at_minutes: minutes === null ? null : round(minutes, 1),
    expected_minutes_to_decision: null,
    evidence: [
      ...open.evidence.filter(
        (e) => !e.startsWith('expected to settle') && !e.startsWith('the difference is too close'),
      ),
      `not-better: closed now, not shown ${pct(m)} faster than ${referenceText(open.reference)}: ${why} (the futility rule)`,
    ],
  };
}

type DecisionBase = Pick<Decision, 'reference' | 'min_improvement' | 'method'>;

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

function stillMeasuring(
  base: DecisionBase,
  change: Interval,
  evidence: string[],
  eta: number | null,
): Decision {
  const when =
    eta === null
      ? 'the difference is too close to a boundary to forecast when it settles'
      : `expected to settle near run-minute ${eta}`;
  return {
    ...base,
    state: 'measuring',
    relative_change: change,
    expected_minutes_to_decision: eta,
    evidence: [...evidence, when],
  };
}

function decided(
  base: Pick<Decision, 'reference' | 'min_improvement' | 'method'>,
  state: Decision['state'],
  change: Interval,
  candidate: VerdictLike,
  evidence: string[],
): Decision {
  const minutes = candidate.minutes_of_data ?? null;
  return {
    ...base,
    state,
    relative_change: change,
    decided_at_minutes: minutes === null ? null : round(minutes, 1),
    evidence,
  };
}

/** No claim on a standard error whose own estimate rests on too few independent blocks of starts. */
function thinBasis(candidate: VerdictLike, at: ReferenceAtAge, shown: string): string | null {
  const b = candidate.decision_estimate?.error_basis;
  if (b && !b.enough) return `no claim: the candidate's ${basisText(b)}`;
  if (at.basisEnough === false) return `no claim: ${shown}'s error basis was too thin at that age`;
  return null;
}

/**
 * The closed design: at `max_decision_minutes` a candidate still open is settled. Within
 * ±min_improvement (and no guard holding it) it is `equivalent`; its whole interval below
 * −min_improvement (a guard held it) `faster-drift-not-ruled-out`; otherwise `not-better` (it was not
 * shown min_improvement faster: the futility boundary); the evidence states the error this costs,
 * the chance that a candidate truly min_improvement faster reads as slow as this one or slower.
 */
function settleAtHorizon(x: {
  base: Pick<Decision, 'reference' | 'min_improvement' | 'method'>;
  change: Interval;
  d: number;
  s: number;
  m: number;
  shown: string;
  evidence: string[];
  held: boolean;
  candidate: VerdictLike;
}): Decision {
  if (x.change.high < -x.m)
    return heldFaster(
      x.base,
      x.change,
      x.candidate,
      x.evidence,
      'the horizon (max_decision_minutes) came while a guard held it',
    );
  const state = !x.held && Math.abs(x.change.value) < x.m ? 'equivalent' : 'not-better';
  const p = x.s > 0 ? upperTailZ((x.d - Math.log(1 - x.m)) / x.s) : 0;
  return decided(x.base, state, x.change, x.candidate, [
    ...x.evidence,
    `${state}: closed at the horizon (max_decision_minutes): not shown ${pct(x.m)} faster than ${x.shown}, settled by the futility rule; the error this costs: a candidate truly ${pct(x.m)} faster reads this slow or slower with probability ${pct(p)}`,
  ]);
}

/** P(Z > z) for a standard normal (Abramowitz–Stegun 26.2.17, error < 7.5e-8). */
function upperTailZ(z: number): number {
  const t = 1 / (1 + 0.2316419 * Math.abs(z));
  const poly =
    t * (0.31938153 + t * (-0.356563782 + t * (1.781477937 + t * (-1.821255978 + t * 1.330274429))));
  const q = (Math.exp(-0.5 * z * z) / Math.sqrt(2 * Math.PI)) * poly;
  return z >= 0 ? q : 1 - q;
}

/** How the decision reads the difference: the boundary and its error, as the evidence names it. */
function methodText(options: DecideOptions): string {
  const alpha = options.alpha ?? CONFIDENCE_SEQUENCE.alpha;
  const boundary = options.boundary ?? DECISION_DEFAULTS.boundary;
  return boundary === 'always-valid'
    ? `always-valid confidence sequence (normal mixture, α ${alpha}) on log(candidate ÷ reference) of the projected full-run s/rollout`
    : `one-sided group-sequential boundaries (Lan–DeMets Pocock-type α spending, α ${alpha} per claim over ${options.maxDecisionMinutes ?? DECISION_DEFAULTS.maxDecisionMinutes} min) on log(candidate ÷ reference) of the projected full-run s/rollout`;
}

/**
 * The two runs at equal run age, whichever is older: the reference as it was at the candidate's age
 * (its trajectory), or, when the candidate is older than the reference's last reading (a reference
 * that started later, or whose data ended), the candidate as it was at the reference's age (its own
 * trajectory; `agedTo` names that age). Without the candidate's trajectory, the reference's last
 * reading and the age gap (referenceAtAge).
 */
function atEqualAge(
  candidate: VerdictLike,
  reference: VerdictLike,
): { subject: VerdictLike; at: ReferenceAtAge; agedTo: number | null } {
  const age = reference.minutes_of_data ?? null;
  const minutes = candidate.minutes_of_data ?? null;
  const est = candidate.decision_estimate;
  if (age === null || minutes === null || !(minutes > age + 0.5) || !est?.trajectory?.values.length)
    return { subject: candidate, at: referenceAtAge(reference, minutes), agedTo: null };
  const mine = referenceAtAge(candidate, age);
  if (!mine.projection) return { subject: candidate, at: referenceAtAge(reference, minutes), agedTo: null };
  const basis = est.error_basis;
  const subject: VerdictLike = {
    ...candidate,
    minutes_of_data: age,
    projected_full_run: mine.projection,
    decision_estimate: {
      ...est,
      projected_full_run: mine.projection,
      drift: mine.drift
        ? { ...mine.drift, from_minute: est.drift?.from_minute ?? est.first_wave_end_minutes }
        : null,
      ...(basis ? { error_basis: { ...basis, enough: mine.basisEnough ?? basis.enough } } : {}),
    },
  };
  const text = `read at run-minute ${round(age, 0)}, its last reading; the candidate as it was then (equal run age, from the candidate's trajectory)`;
  return { subject, at: { ...referenceAtAge(reference, age), text }, agedTo: age };
}

/**
 * Both projections, or the decision when there is nothing to compare yet: the reference itself, a
 * decision already made against the same reference (final), no reference, or no usable projection.
 */
function comparable(
  candidate: VerdictLike,
  reference: DecisionAgainst | null,
  base: Pick<Decision, 'reference' | 'min_improvement' | 'method'>,
  shown: string,
  options: DecideOptions,
):
  | { decision: Decision }
  | {
      cv: Interval;
      at: ReferenceAtAge;
      ref: DecisionAgainst;
      subject: VerdictLike;
      agedTo: number | null;
    } {
  if (options.isReference)
    return { decision: { ...base, state: 'reference', evidence: ['this candidate is the reference'] } };
  const prev = options.previous;
  if (
    prev &&
    prev.state !== 'measuring' &&
    prev.state !== 'reference' &&
    sameReference(prev.reference, base.reference)
  )
    return { decision: prev };
  if (!reference)
    return {
      decision: { ...base, state: 'measuring', evidence: ['no reference with a projected value yet'] },
    };
  const { subject, at, agedTo } = atEqualAge(candidate, reference.verdict);
  const cv = decisionProjection(subject);
  if (usable(candidate) && usable(reference.verdict) && cv && at.projection)
    return { cv, at, ref: reference, subject, agedTo };
  if (usable(candidate) && usable(reference.verdict))
    return { decision: { ...base, state: 'measuring', evidence: [`${shown}: ${at.text}`] } };
  const who = !usable(candidate)
    ? `the candidate (${candidate.state})`
    : `${shown} (${reference.verdict.state})`;
  return { decision: { ...base, state: 'measuring', evidence: [`no usable projection for ${who} yet`] } };
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
 * standard error shrinks like 1 ÷ √(steady minutes) and the estimate stays where it is.
 */
function expectedMinutes(
  v: VerdictLike,
  d: number,
  s: number,
  m: number,
  options: DecideOptions,
): number | null {
  const now = v.minutes_of_data;
  if (now == null || !(s > 0)) return null;
  const warmupEnd = steadyFrom(v) ?? now / 3;
  const steady = Math.max(1, now - warmupEnd);
  const lm = Math.log(1 - m);
  // the largest radius that settles it, for each outcome the estimate points to
  // (not-better, d − lm, is never harder than equivalent, so equivalent's own need adds nothing)
  const need = Math.max(d, lm - d, d - lm);
  if (!(need > 0)) return null;
  // step forward a minute at a time: s shrinks like 1 ÷ √(steady minutes), the boundary moves
  const max = options.maxDecisionMinutes ?? DECISION_DEFAULTS.maxDecisionMinutes;
  const horizon = (options.boundary ?? DECISION_DEFAULTS.boundary) === 'always-valid' ? now + 600 : max;
  for (let t = Math.ceil(now); t <= horizon; t++) {
    const st = s * Math.sqrt(steady / Math.max(1, t - warmupEnd));
    const c = claimRadius({ ...v, minutes_of_data: t, warmup_end_minutes: warmupEnd }, st, options);
    if (c.radius !== null && c.radius <= need) return round(Math.max(t, now), 0);
  }
  return null;
}

/**
 * The pruner (a losing trial stops early, as Optuna's pruners stop one): a candidate that cannot be
 * min_improvement faster than the leading candidate of its experiment cannot win, even while its
 * comparison with the reference is still open. `not-better` against the leader once the confidence
 * sequence settles that (worse than it, within ±min_improvement of it, or not min_improvement
 * faster), else null. The leader is the best of a few projections, so it is optimistic: a candidate
 * looks worse against it than against the true best, and the pruner stops it earlier and more often
 * wrongly than one comparison's error rate says (see docs/monitor.md). So its error is split over
 * the possible leaders (`leaders`: the candidates that could lead, Bonferroni): whichever one leads,
 * the claim against it keeps α ÷ leaders, and the claims together α. A drifting run is never the
 * leader; a drifting candidate may be pruned (not-better is not held back by the drift guard).
 */
export function pruneByLeader(
  candidate: VerdictLike,
  leader: { name: string; verdict: VerdictLike; label?: string },
  options: Omit<DecideOptions, 'isReference'> & { leaders?: number } = {},
): Decision | null {
  const leaders = Math.max(1, Math.floor(options.leaders ?? 1));
  const alpha = (options.alpha ?? CONFIDENCE_SEQUENCE.alpha) / leaders;
  const d = decideCandidate(candidate, leader, { ...options, alpha });
  if (d.state !== 'worse' && d.state !== 'equivalent' && d.state !== 'not-better') return null;
  const m = options.minImprovement ?? EXPERIMENT_DEFAULTS.minImprovement;
  const shown = leader.label ?? leader.name;
  return {
    ...d,
    state: 'not-better',
    evidence: [
      ...d.evidence.slice(0, 1),
      `not-better: not ${round(100 * m, 1)}% faster than ${shown} at every look's confidence (α split over ${leaders} possible leader${leaders === 1 ? '' : 's'}): it cannot win`,
    ],
  };
}

/**
 * The leading candidate of an experiment: the one with the lowest (fastest) usable projection, when
 * it is lower than the reference's; null without one.
 */
export function leadingCandidate<T extends { name: string; verdict: VerdictLike }>(
  candidates: readonly T[],
  reference: VerdictLike | null,
): T | null {
  let best: T | null = null;
  for (const c of candidates)
    if (
      steadyUsable(c.verdict) &&
      (!best ||
        (decisionProjection(c.verdict)?.value as number) <
          (decisionProjection(best.verdict)?.value as number))
    )
      best = c;
  // the reference at the leader's run age (a recorded reference's full-run value would flatter it)
  const ref =
    reference && best ? referenceAtAge(reference, best.verdict.minutes_of_data).projection?.value : undefined;
  if (best && ref !== undefined && !((decisionProjection(best.verdict)?.value as number) < ref)) return null;
  return best;
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
 * than any reference (it cannot win), or decided against every reference it is compared with.
 * A reference itself is never stopped on a decision (others are measured against it).
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
  if (decisions.every((d) => d.state !== 'measuring'))
    return {
      stop: true,
      reason: `decided: ${decisions.map((d) => `${d.state} vs ${referenceText(d.reference)}`).join(', ')}`,
    };
  return { stop: false, reason: 'still measuring' };
}
