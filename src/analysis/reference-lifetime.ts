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

/** Why a candidate still needs the reference's data. */
export type NeedWhy = 'no-interval' | 'points-at-gain' | 'forecast-to-settle';

export type ReferenceNeed =
  | { needed: true; by: string; why: NeedWhy; reason: string }
  | { needed: false; reason: string };

/**
 * A decision's estimate points at a gain: its relative change is at most −min_improvement ÷ 2 (closer
 * to a gain than to no change). A candidate that does is never left without a reference, nor stopped
 * by a forecast.
 */
export function pointsAtGain(d: LifetimeDecision | null | undefined, minImprovement: number): boolean {
  const v = d?.relative_change?.value;
  return v !== undefined && v <= -minImprovement / 2;
}

/** Why this candidate's decision would still change with more reference data, or null. */
export function needOf(
  d: LifetimeDecision | null,
  o: Pick<LifetimeOptions, 'minImprovement' | 'horizonMinutes'>,
): NeedWhy | null {
  if (d && d.state !== 'measuring') return null; // decided (or the reference itself)
  // no estimate, or no interval yet (the small-sample guard): its first claim reads the reference
  if (!d?.relative_change || d.expected_minutes_to_decision === undefined) return 'no-interval';
  if (pointsAtGain(d, o.minImprovement)) return 'points-at-gain';
  const eta = d.expected_minutes_to_decision;
  return eta !== null && eta <= o.horizonMinutes ? 'forecast-to-settle' : null;
}

const WHY: Record<NeedWhy, string> = {
  'no-interval': 'has no interval yet',
  'points-at-gain': 'points at a gain',
  'forecast-to-settle': 'is forecast to settle within the horizon',
};

/**
 * Does the round's reference job still need to run at this look? Yes while an open candidate's
 * decision would change with more reference data: it has no interval yet, its estimate points at a
 * gain (≤ −min_improvement ÷ 2: the decision the round exists for), or it is forecast to settle
 * within the horizon. No once every open candidate is decided or forecast to stay unsettled without
 * pointing at a gain (the futility stop ends those), and at the horizon, where every decision closes.
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
      ? 'no open decision would change with more reference data (each is decided, or forecast to stay unsettled without pointing at a gain)'
      : 'no candidate is open',
  };
}
