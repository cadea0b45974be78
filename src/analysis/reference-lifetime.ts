// How long a round's reference job runs beside its candidates (issue 43): as long as the round's
// decisions need it, and no longer. One rule, pure, called by every path that runs a reference
// beside candidates (the campaign bench, the autopilot, the monitor, the demo).
//
// Each candidate is decided against the reference as it was at the candidate's own run age, so the
// reference's data past the open candidates' age are never read, and its data stop mattering once no
// open decision would change with more of them. Dunnett's √K allocation, the rule this replaces, is a
// fixed design's: in a sequential round the pruner stops the other candidates early (run-minute
// 10-20), the share shrinks with them and the reference stopped while the leader still pointed at a
// gain. The leader was then read against a reference past its age and settled `not-better` at the
// horizon although its whole interval lay 16-39% below it.
import type { Decision } from '../types/generated/metrics.js';
import { decisionOpen, FORECAST_AFTER_MINUTES, pointsAtGain } from './decision.js';

export { pointsAtGain };

/** What the rule reads of one candidate's latest decision against the reference. */
export type LifetimeDecision = Pick<Decision, 'state' | 'relative_change'> & {
  expected_minutes_to_decision?: number | null;
};

/** One candidate of the round (those stopped, pruned or crashed are left out by the caller, or passed decided). */
export interface OpenCandidate {
  name: string;
  /** Its latest decision against the round's reference (null: none yet, e.g. still warming). */
  decision: LifetimeDecision | null;
}

export interface LifetimeOptions {
  /** The experiment's min_improvement. */
  minImprovement: number;
  /** Run-minute of this look (the round's candidates and reference started together). */
  minute: number;
  /** max_decision_minutes: every decision is closed there, so no data are needed past it. */
  horizonMinutes: number;
}

/**
 * Run-minutes before a candidate's estimate may rule out a gain: younger, it still carries the
 * start-up and its interval is wide, so the reference runs with it whatever it reads (the futility
 * stop by forecast waits as long: src/analysis/decision.ts futileByForecast).
 */
export const YOUNG_MINUTES = FORECAST_AFTER_MINUTES;

/** Why a candidate still needs the reference's data. */
export type NeedWhy = 'no-interval' | 'points-at-gain' | 'young';

export type ReferenceNeed =
  | { needed: true; by: string; why: NeedWhy; reason: string }
  | { needed: false; reason: string };

/**
 * Why this candidate's decision would still change with more reference data, or null: it has no
 * interval yet, its estimate points at a gain, or it is younger than YOUNG_MINUTES. A candidate that
 * only may settle `equivalent` or `not-better` does not keep the reference: that settlement changes
 * nothing the round decides (it is no winner either way), so it is closed when the reference ends.
 */
export function needOf(
  d: LifetimeDecision | null,
  o: Pick<LifetimeOptions, 'minImprovement' | 'minute'>,
): NeedWhy | null {
  // decided (or the reference itself); a provisional winner still reads it (its full-run guard)
  if (d && !decisionOpen(d)) return null;
  // no estimate, or no interval yet (the small-sample guard): its first claim reads the reference
  if (!d?.relative_change || d.expected_minutes_to_decision === undefined) return 'no-interval';
  if (pointsAtGain(d, o.minImprovement)) return 'points-at-gain';
  return o.minute < YOUNG_MINUTES ? 'young' : null;
}

const WHY: Record<NeedWhy, string> = {
  'no-interval': 'has no interval yet',
  'points-at-gain': 'points at a gain',
  young: `is younger than ${YOUNG_MINUTES} run-minutes`,
};

/**
 * Does the round's reference job still need to run at this look? Yes while an open candidate's
 * decision would change what the round decides with more reference data: it has no interval yet, its
 * estimate points at a gain (≤ −min_improvement ÷ 2: the decision the round exists for), or it is
 * younger than YOUNG_MINUTES. No once every open candidate is decided or, past that age, does not
 * point at a gain (those are closed with it: `closeWithReference`), and at the horizon, where every
 * decision closes.
 */
export function referenceNeeded(candidates: readonly OpenCandidate[], o: LifetimeOptions): ReferenceNeed {
  if (o.minute >= o.horizonMinutes)
    return { needed: false, reason: `the horizon (${o.horizonMinutes} run-minutes) closes every decision` };
  let found: { by: string; why: NeedWhy } | null = null;
  for (const c of candidates) {
    const why = needOf(c.decision, o);
    // the strongest reason first: a candidate pointing at a gain names the need
    if (why && (!found || (why === 'points-at-gain' && found.why !== 'points-at-gain')))
      found = { by: c.name, why };
  }
  if (found)
    return {
      needed: true,
      ...found,
      reason: `${found.by} ${WHY[found.why]}: its decision reads the reference at its age`,
    };
  return {
    needed: false,
    reason: candidates.length
      ? 'no open decision would change what the round decides with more reference data (each is decided, or past its first 30 run-minutes without pointing at a gain)'
      : 'no candidate is open',
  };
}

/**
 * A candidate still open when its reference job has ended: closed at once when it does not point at a
 * gain (more of its own data cannot settle anything the round decides), rather than run on against a
 * reference past its age. One that points at a gain is not closed: it is rerun (src/campaign/held.ts).
 */
export function closeWithReference(d: LifetimeDecision | null, minImprovement: number): boolean {
  return !!d && d.state === 'measuring' && !!d.relative_change && !pointsAtGain(d, minImprovement);
}
