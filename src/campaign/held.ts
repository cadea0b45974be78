// A candidate whose decision is held: what its outcome is, and when the campaign abandons its job and
// reruns it (issue 43). Pure. A decision held by the guards (a drift, a thin error basis) or closed at
// the horizon is no decision: the topology counts as tried only once decided (src/campaign/loop.ts),
// and a held candidate pointing at a gain gets one more job beside a reference that runs.
import { decisionOpen, type VerdictLike } from '../analysis/decision.js';
import { pointsAtGain } from '../analysis/reference-lifetime.js';
import type { Decision } from '../types/generated/metrics.js';
import type { RunOutcome } from './rounds.js';

type Decided = Pick<Decision, 'state' | 'relative_change' | 'decided_at_minutes'> &
  Partial<Pick<Decision, 'full_run'>>;

/** What runOutcome reads beside the decision. */
export interface OutcomeContext {
  minImprovement: number;
  horizonMinutes: number;
  /** Its job of the candidate: 1 the first, 2 and on a rerun after a held decision (absent: 1). */
  attempt?: number;
  /** The detector marks its job or the reference's `drifting`: no rerun settles on it. */
  drifting?: boolean;
}

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
 * A rerun held again (issue 43): its second job, beside a new reference job, again has its whole
 * equal-age interval below −min_improvement while a guard holds the claim. Two independent jobs of
 * the candidate and two of the reference agree at equal run age, so the hold is the guard's reading
 * of the shape (sync waves, cycles), not a gain in doubt: settled `better`. Never when the detector
 * marks either job drifting, nor when the full-run guard's own extrapolation (the drift carried to
 * the run's rollout-weighted mean age) no longer lies below −min_improvement: a candidate that drifts
 * 5-10%/h against its reference keeps its hold. Null: not settled.
 */
export function heldAgain(d: Decided, o: OutcomeContext): { outcome: 'better' } | null {
  if ((o.attempt ?? 1) < 2 || o.drifting || !heldBelow(d, o.minImprovement)) return null;
  const full = d.full_run?.change?.value;
  if (full !== undefined && full !== null && !(full < -o.minImprovement)) return null;
  return { outcome: 'better' };
}

/**
 * A candidate's outcome in its round from its last decision (null: none). `better`, `worse`,
 * `equivalent` and `not-better` stand as decided, but a `not-better` whose whole interval lies below
 * −min_improvement is never one, nor is a `faster-drift-not-ruled-out` (a guard held the claim; it
 * is `undecided`, held, to be rerun), and a decision closed at the horizon is held too: not shown,
 * only settled. A rerun held again may settle `better` (heldAgain).
 */
export function runOutcome(
  d: Decided | null,
  o: OutcomeContext,
): { outcome: RunOutcome; held?: string; rerun?: boolean } {
  if (!d) return { outcome: 'undecided', held: 'no decision' };
  const decided = ['better', 'worse', 'equivalent', 'not-better'].includes(d.state);
  // closed with the full-run guard open (faster at equal age, not shown over the run), or ended while
  // a guard held an interval below −min_improvement (its job abandoned, or stopped): rerun
  const open = !decided && d.state !== 'faster-drift-not-ruled-out';
  if (
    d.state === 'faster-drift-not-ruled-out' ||
    ((d.state === 'not-better' || open) && heldBelow(d, o.minImprovement))
  ) {
    const ended = open ? `its job ended ${d.state}, ` : '';
    return (
      heldAgain(d, o) ?? {
        outcome: 'undecided',
        held: `${ended}its whole interval lies below −${pct(o.minImprovement)} and a guard held the claim`,
        rerun: true,
      }
    );
  }
  if (!decided) return { outcome: 'undecided', held: `still ${d.state}` };
  const outcome = d.state as RunOutcome;
  if ((d.decided_at_minutes ?? 0) >= o.horizonMinutes - 1e-9 && d.state !== 'worse')
    return {
      outcome,
      held: `closed at the horizon (${o.horizonMinutes} run-minutes), not shown`,
    };
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
  /** Its job of the candidate (absent: 1): a rerun is not abandoned on the guard's slope alone. */
  attempt?: number;
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
  // (a rerun runs on: settled at its abandonment by heldAgain, its slope must be measured, not the
  // start-up's, or a 5-10%/h drift and a steady job look the same at run-minute 10)
  const first = (x.attempt ?? 1) < 2;
  if (first && x.decision.full_run?.guard === 'drifts' && heldBelow(x.decision, x.minImprovement))
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
