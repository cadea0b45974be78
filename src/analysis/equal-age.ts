// The reference as a candidate is compared with it: at the candidate's run age. What a decision
// reads from a verdict (`VerdictLike`), and, for a reference without start cohorts (a record written
// before they were kept), its projection as it was at the candidate's run-minute. Pure.
import type { Interval, Verdict } from '../types/generated/metrics.js';
import { round } from './series.js';

/** What the decision reads from a verdict. */
export type VerdictLike = Pick<Verdict, 'state' | 'projected_full_run' | 'minutes_of_data'> &
  Partial<
    Pick<Verdict, 'warmup_end_minutes' | 'drift' | 'decision_estimate' | 'cohorts' | 'run_end_minutes'>
  >;

/**
 * What a decision reads: the estimate from the rollouts (src/analysis/rollouts.ts: the first wave
 * dropped, rollouts in flight censored) when there is one, else the verdict's projection.
 */
export function decisionProjection(v: VerdictLike | null | undefined): Interval | null {
  return v?.decision_estimate?.projected_full_run ?? v?.projected_full_run ?? null;
}

/** Without a trajectory, an age difference can hide a drift of this much per hour (the detector's limit). */
export const AGE_GAP_DRIFT_PER_HOUR = 0.05;

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
 * the term never widens without bound as the candidate ages on (issue 38 item 1). (A candidate
 * younger than the reading keeps the whole gap: it shrinks as the candidate ages.)
 */
export const AGE_GAP_MAX_MINUTES = 30;

/** What an age difference can hide on the log scale. */
export const ageGapHide = (gapMinutes: number) => (AGE_GAP_DRIFT_PER_HOUR * gapMinutes) / 60;

const pct = (x: number) => `${round(100 * x, 1)}%`;

/** Standard error of log(value) from a 95% interval. */
export function logSe(i: Pick<Interval, 'low' | 'high'>): number {
  return (Math.log(i.high) - Math.log(i.low)) / (2 * 1.96);
}

/**
 * The two runs at equal run age, whichever is older: the reference as it was at the candidate's age
 * (its trajectory), or, when the candidate is older than the reference's last reading (a reference
 * that started later, or whose data ended), the candidate as it was at the reference's age (its own
 * trajectory; `agedTo` names that age). Without the candidate's trajectory, the reference's last
 * reading and the age gap (referenceAtAge).
 */
export function atEqualAge(
  candidate: VerdictLike,
  reference: VerdictLike,
): { subject: VerdictLike; at: ReferenceAtAge; agedTo: number | null } {
  const age = reference.minutes_of_data ?? null;
  const minutes = candidate.minutes_of_data ?? null;
  const est = candidate.decision_estimate;
  const plain = { subject: candidate, at: referenceAtAge(reference, minutes), agedTo: null };
  if (age === null || minutes === null || !(minutes > age + 0.5) || !est?.trajectory?.values.length)
    return plain;
  const mine = referenceAtAge(candidate, age);
  if (!mine.projection) return plain;
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
