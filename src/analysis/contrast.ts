// What a decision compares: the candidate against its reference at equal run age, as one log change
// with its standard error, the drift between them (slope per run-minute of start age, with its error)
// and the age the contrast stands at. From the two runs' start cohorts (src/analysis/cohorts.ts)
// when both have them; else, for a reference recorded before cohorts were kept, from the two
// projections at equal run age (`referenceAtAge`) and the rollout-level drifts. Pure.
import { APART_BANDWIDTH_MINUTES, type CohortTable, cohortContrast } from './cohorts.js';
import {
  AGE_GAP_DRIFT_PER_HOUR,
  atEqualAge,
  decisionProjection,
  logSe,
  type VerdictLike,
} from './equal-age.js';
import { basisText } from './rollouts.js';
import { round } from './series.js';

/** Ended rollouts each run needs in the shared cohorts before a claim (the model's noise is itself estimated). */
export const MIN_CONTRAST_EVENTS = 24;

export interface Contrast {
  logChange: number;
  se: number;
  /** Drift of the candidate against the reference: log change per run-minute of start age (null: not measurable). */
  slope: number | null;
  slopeSe: number | null;
  /** The slope's error rests on enough cohorts (or on both runs' measured drifts) to settle a claim on. */
  slopeTrusted: boolean;
  /** The contrast's mean age (run-minutes of start) — where its equal-age claim stands. */
  meanAge: number;
  /** Added to the radius on the log scale (a reference read at another age, with no trajectory). */
  widen: number;
  basis: { cohorts: number; error: 'model' | 'robust' } | null;
  /** What the reference gives at this age, for the evidence. */
  text: string;
  /** The reference's data end (run-minutes) when they will not grow; null while it runs. */
  referenceEnd: number | null;
  /** No claim yet, and why. */
  thin: string | null;
}

const cohortsOf = (v: VerdictLike): CohortTable | null =>
  (v.cohorts as CohortTable | null | undefined) ?? null;

/** The contrast of the candidate against the reference, or why there is none yet. */
export function contrastOf(
  candidate: VerdictLike,
  reference: VerdictLike,
  shown: string,
  betweenRunSd = 0,
  /** The reference's data have ended (its job stopped, or a recorded run) even if its table does not say so. */
  ended = false,
): Contrast | { none: string } {
  const a = cohortsOf(candidate);
  const b = cohortsOf(reference);
  const k =
    a && b
      ? fromCohorts(a, b, candidate, shown, betweenRunSd)
      : fromProjections(candidate, reference, shown, betweenRunSd);
  if ('none' in k || k.referenceEnd !== null || !ended) return k;
  return { ...k, referenceEnd: b?.data_end_minutes ?? reference.minutes_of_data ?? null };
}

function fromCohorts(
  a: CohortTable,
  b: CohortTable,
  candidate: VerdictLike,
  shown: string,
  betweenRunSd: number,
): Contrast | { none: string } {
  const W = candidate.decision_estimate?.mean_duration_minutes ?? 2;
  const k = cohortContrast(a, b, { bandwidth: W, upTo: a.data_end_minutes });
  if (!k) return { none: `no start cohort ended in both runs yet` };
  const few = Math.min(k.events.candidate, k.events.reference);
  // a reference that ran at another time: its cluster's conditions then are not the candidate's now
  const apart = !k.concurrent;
  const slope = Number.isFinite(k.slopeSe) && k.cohorts >= 3;
  const error = k.error === 'robust' ? 'from the spread of the cohort differences' : "the censored model's";
  return {
    logChange: k.logChange,
    se: apart ? Math.hypot(k.se, betweenRunSd) : k.se,
    slope: slope ? k.slope : null,
    slopeSe: slope ? k.slopeSe : null,
    slopeTrusted: k.slopeTrusted,
    meanAge: k.meanAge,
    widen: 0,
    basis: { cohorts: k.cohorts, error: k.error },
    text: `${shown} at equal run age: ${k.cohorts} start cohort${k.cohorts === 1 ? '' : 's'} both runs share (mean start age ${round(k.meanAge, 1)} min; ${k.events.candidate} and ${k.events.reference} rollouts ended, the rest in flight censored; error ${error}${apart ? `; the runs did not share the cluster's wall clock: ±${round(100 * betweenRunSd, 1)}% between runs added, and the cohorts' own spread over ${APART_BANDWIDTH_MINUTES} run-minutes` : ''})`,
    referenceEnd: b.final ? b.data_end_minutes : null,
    thin:
      few < MIN_CONTRAST_EVENTS
        ? `no claim: ${few} of ${MIN_CONTRAST_EVENTS} rollouts ended in the cohorts both runs share`
        : apart && !k.slopeTrusted
          ? `no claim: ${shown} ran at another time, and the cohorts they share do not span ${2 * APART_BANDWIDTH_MINUTES} run-minutes to show how much the two runs' conditions differ`
          : null,
  };
}

/**
 * A reference without start cohorts (a record written before they were kept): the projections at
 * equal run age, the drift from each run's rollout durations against their start. Its error basis
 * must be enough (independent blocks of starts) on both sides.
 */
function fromProjections(
  candidate: VerdictLike,
  reference: VerdictLike,
  shown: string,
  betweenRunSd: number,
): Contrast | { none: string } {
  // the older of the two read at the younger's age (a candidate older than a stopped reference: as it was then)
  const { subject, at } = atEqualAge(candidate, reference);
  const cv = decisionProjection(subject);
  if (!cv || !at.projection) return { none: `${shown}: ${at.text}` };
  const est = subject.decision_estimate;
  const c = est?.drift;
  const r = at.drift;
  const from = est?.first_wave_end_minutes ?? candidate.warmup_end_minutes ?? 0;
  const basis = est?.error_basis;
  // verdicts' projections only (no rollout estimate): they are full-run projections already, guarded
  // by the detector's own drift test, so the full run reads as the equal age unless either drifts
  const plain = !est && !reference.decision_estimate;
  const drifting = candidate.state === 'drifting' || reference.state === 'drifting';
  const used = `estimates: ${usedText(candidate, 'the candidate')}; ${usedText(reference, shown)}`;
  const drifts = drifting
    ? `; ${candidate.state === 'drifting' ? 'the candidate' : shown} drifts (the detector's test): the full-run guard stays open`
    : '';
  if (plain)
    return {
      logChange: Math.log(cv.value / at.projection.value),
      se: Math.hypot(logSe(cv), at.logSe, betweenRunSd),
      slope: drifting ? null : 0,
      slopeSe: drifting ? null : 0,
      slopeTrusted: !drifting,
      meanAge: candidate.run_end_minutes ?? 0,
      widen: (AGE_GAP_DRIFT_PER_HOUR * at.gapMinutes) / 60,
      basis: null,
      text: `${shown} ${at.text}${drifts}; ${used}`,
      referenceEnd: null,
      thin: null,
    };
  return {
    logChange: Math.log(cv.value / at.projection.value),
    se: Math.hypot(logSe(cv), at.logSe, betweenRunSd),
    slope: c ? (c.slope_relative_per_hour - (r?.slope_relative_per_hour ?? 0)) / 60 : null,
    slopeSe: c ? Math.hypot(c.se, r?.se ?? 0) / 60 : null,
    slopeTrusted: !!c && !!r,
    meanAge: (from + (subject.minutes_of_data ?? from)) / 2,
    widen: (AGE_GAP_DRIFT_PER_HOUR * at.gapMinutes) / 60,
    basis: null,
    text: `${shown} ${at.text}; ${used}`,
    referenceEnd: null,
    thin:
      basis && !basis.enough
        ? `no claim: the candidate's ${basisText(basis)}`
        : at.basisEnough === false
          ? `no claim: ${shown}'s error basis was too thin at that age`
          : null,
  };
}

/** What the estimate of one run used, for the evidence. */
function usedText(v: VerdictLike, who: string): string {
  const e = v.decision_estimate;
  return e
    ? `${who}: ${e.steady_rollouts} rollouts after the first wave (from run-minute ${round(e.first_wave_end_minutes, 1)}), ${e.censored_rollouts} in flight censored`
    : `${who}: the verdict's projection (no rollout estimate yet)`;
}
