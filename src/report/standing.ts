// Where a candidate stands against the reference (the current best, or the baseline while there
// is none): the one answer the comment's headline, the check run and the job summary all show, read
// from the run's one outcome (src/analysis/outcome.ts outcomeOf) and its Decision. Pure.
import { DEFAULT_MIN_IMPROVEMENT, outcomeOf, type RunOutcome } from '../analysis/outcome.js';
import { code, describeReference } from '../analysis/reference.js';
import type { Decision, Interval } from '../types/generated/metrics.js';

export { code, DEFAULT_MIN_IMPROVEMENT, describeReference };

/** A run's outcome (src/analysis/outcome.ts: the one enum). */
export type Outcome = RunOutcome;

/** The icon of each outcome: the comment's headline and the job summary's table. */
export const OUTCOME_ICON: Record<Outcome, string> = {
  better: '🟢',
  worse: '🔴',
  equivalent: '⚪',
  'not-better': '🟠',
  'better-at-equal-age': '🟡',
  'faster-drift-not-ruled-out': '🟡',
  undecided: '⚪',
  measuring: '⏳',
  failed: '❌',
  reference: '📏',
};

export interface Standing {
  outcome: Outcome;
  /** Display name of the reference, e.g. "the current best `scale-driver-2`". */
  against?: string;
  /** (candidate − reference) / reference of seconds per rollout; negative is faster. */
  change?: Interval | null;
  minImprovement: number;
  /** Run-minutes still to go until the decision is expected (measuring only). */
  expectedMinutes?: number | null;
  /** Why it failed (failed) or why no decision came (undecided). */
  reason?: string;
}

export interface StandingInput {
  state: string;
  failure?: { kind: string; message: string } | null;
  decision?: Decision | null;
  /** The run has a value of its own (verdict.value). */
  hasValue: boolean;
  minImprovement?: number;
  /** Run-minutes of data so far (the decision's forecast is a run-minute: the rest is what is left). */
  minutesOfData?: number | null;
}

const TERMINAL = new Set(['finished', 'stopped', 'failed']);

export function standingOf(i: StandingInput): Standing {
  const min = i.decision?.min_improvement ?? i.minImprovement ?? DEFAULT_MIN_IMPROVEMENT;
  const ended = TERMINAL.has(i.state);
  const failed = i.state === 'failed' || !!i.failure;
  const outcome = outcomeOf({
    decision: i.decision,
    failed,
    ended,
    hasValue: i.hasValue,
    minImprovement: min,
  });
  if (outcome === 'failed')
    return {
      outcome,
      minImprovement: min,
      reason: i.failure ? `${i.failure.kind}: ${i.failure.message}` : 'the job ended without a result',
    };
  const d = i.decision;
  if (!d)
    return outcome === 'undecided'
      ? { outcome, minImprovement: min, reason: 'the run ended without a stable value' }
      : { outcome, minImprovement: min };
  const base = {
    outcome,
    against: describeReference(d.reference),
    change: d.relative_change ?? null,
    minImprovement: min,
  };
  if (outcome === 'undecided') return { ...base, reason: 'the run ended before a decision' };
  if (outcome !== 'measuring') return base;
  return { ...base, expectedMinutes: minutesLeft(d.expected_minutes_to_decision, i.minutesOfData ?? null) };
}

/** The decision is forecast at a run-minute; what a reader wants is how long is left. */
function minutesLeft(expectedAt: number | null | undefined, now: number | null): number | null {
  if (expectedAt == null || now == null) return null;
  return Math.max(0, expectedAt - now);
}
