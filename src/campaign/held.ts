// A candidate whose decision is held: what its outcome is, and when the campaign abandons its job and
// reruns it (issue 43). Pure. A decision held by the guards (a drift, a thin error basis) or closed at
// the horizon is no decision: the topology counts as tried only once decided (src/campaign/loop.ts),
// and a held candidate pointing at a gain gets one more job beside a reference that runs.
import { decisionOpen, type VerdictLike } from '../analysis/decision.js';
import { pointsAtGain } from '../analysis/reference-lifetime.js';
import type { Decision } from '../types/generated/metrics.js';
import type { RunOutcome } from './rounds.js';

type Decided = Pick<Decision, 'state' | 'relative_change' | 'decided_at_minutes'>;

/** Its whole interval lies below −min_improvement: the data say `better`, something holds the claim. */
export function heldBelow(d: Pick<Decision, 'relative_change'> | null | undefined, m: number): boolean {
  const high = d?.relative_change?.high;
  return high !== undefined && high < -m;
}

/**
 * Held now: open (measuring, or the provisional winner whose full-run guard is open) with its whole
 * equal-age interval below −min_improvement.
 */
export function isHeld(
  d: Pick<Decision, 'state' | 'relative_change'> | null | undefined,
  m: number,
): boolean {
  return !!d && decisionOpen(d) && heldBelow(d, m);
}

/**
 * A candidate's outcome in its round from its last decision (null: none). `better`, `worse`,
 * `equivalent` and `not-better` stand as decided, but a `not-better` whose whole interval lies below
 * −min_improvement is never one, nor is a `faster-drift-not-ruled-out` (a guard held the claim; it
 * is `undecided`, held, to be rerun), and a decision closed at the horizon is held too: not shown,
 * only settled.
 */
export function runOutcome(
  d: Decided | null,
  o: { minImprovement: number; horizonMinutes: number },
): { outcome: RunOutcome; held?: string; rerun?: boolean } {
  if (!d) return { outcome: 'undecided', held: 'no decision' };
  // closed with the full-run guard open: faster at equal age, not shown over the run
  if (
    d.state === 'faster-drift-not-ruled-out' ||
    (d.state === 'not-better' && heldBelow(d, o.minImprovement))
  )
    return {
      outcome: 'undecided',
      held: `its whole interval lies below −${pct(o.minImprovement)} and a guard held the claim`,
      rerun: true,
    };
  const decided = ['better', 'worse', 'equivalent', 'not-better'].includes(d.state);
  if (!decided) return { outcome: 'undecided', held: `still ${d.state}` };
  const outcome = d.state as RunOutcome;
  if ((d.decided_at_minutes ?? 0) >= o.horizonMinutes - 1e-9 && d.state !== 'worse')
    return { outcome, held: `closed at the horizon (${o.horizonMinutes} run-minutes), not shown` };
  return { outcome };
}

/**
 * Run-minutes a decision whose interval settles `better` at equal run age may be held (by the drift
 * guard, the error basis) before its jobs are abandoned for new ones. The guard holds a steady
 * candidate while the start-up transient reads as a drift: on the campaign bench's family, up to 50
 * run-minutes (cyclic shapes; 10-45 on the others, 60 seeds of the runtime-bound twin). A job with a
 * drift incident (the detector need not mark it: a reference drifting 25%/h read `stabilising` for 100
 * minutes) holds it 80-100 minutes, then the closed design settles it `not-better` at the horizon.
 */
export const HELD_LIMIT_MINUTES = 60;

export interface LookAtHeld {
  decision: Pick<Decision, 'state' | 'relative_change'> & Partial<Pick<Decision, 'full_run'>>;
  candidate: VerdictLike;
  /** The reference as the decision read it (null: none). */
  reference: VerdictLike | null;
  /** The reference's job ended (it crashed) before this look. */
  referenceEnded: boolean;
  /** Run-minutes its interval has lain wholly below −min_improvement without a decision (0: not held). */
  heldMinutes: number;
  minImprovement: number;
}

/**
 * Abandon this candidate's job now, to rerun it beside a reference that runs, rather than hold it
 * to the horizon: its reference ended while it pointed at a gain (a frozen reference past its age
 * cannot settle it); the detector marks its job or the reference's `drifting` while the guard is
 * what holds its decision (its interval settles `better` at equal run age); or that hold has lasted
 * HELD_LIMIT_MINUTES. The reason, or null.
 */
export function abandonReason(x: LookAtHeld): string | null {
  // settled only by its job's drift (worse or not-better over the run, better at equal age): the job
  // is not steady, the topology not shown slower
  if (x.decision.full_run?.guard === 'drifts' && heldBelow(x.decision, x.minImprovement))
    return 'its job drifts against the reference while its equal-age interval settles better: abandoned, rerun at once';
  if (!decisionOpen(x.decision)) return null;
  if (x.referenceEnded && pointsAtGain(x.decision, x.minImprovement))
    return 'its reference job ended while it pointed at a gain: rerun beside a new reference';
  if (!heldBelow(x.decision, x.minImprovement)) return null;
  const drifting = [
    x.candidate.state === 'drifting' ? 'its job' : null,
    x.reference?.state === 'drifting' ? "the reference's job" : null,
  ].filter(Boolean);
  if (drifting.length)
    return `${drifting.join(' and ')} drifts while the guard holds a decision its interval settles: abandoned, rerun at once`;
  return x.heldMinutes >= HELD_LIMIT_MINUTES
    ? `its interval has settled better at equal run age for ${x.heldMinutes} run-minutes while a guard holds the claim: one of the jobs is not steady, abandoned, rerun at once`
    : null;
}

const pct = (x: number) => `${Math.round(1000 * x) / 10}%`;
