// THE outcome of a run (one enum, one reader, outcomeOf): where its decision (src/judge) leaves it
// against its reference, or that it failed, or that it ended without a decision. The comment's
// headline, the check, the label (src/report/standing.ts), the record's best (src/record/best.ts),
// the autopilot's and the campaign's rounds and suggest's moves all read it here. Pure.
import { EXPERIMENT_DEFAULTS } from '../topology/settings.js';
import type { Decision } from '../types/generated/metrics.js';

export const DEFAULT_MIN_IMPROVEMENT = EXPERIMENT_DEFAULTS.minImprovement;

/** Every outcome a run can have. */
export const RUN_OUTCOMES = [
  'better',
  'worse',
  'equivalent',
  'not-better',
  'better-at-equal-age',
  'faster-drift-not-ruled-out',
  'reference',
  'measuring',
  'undecided',
  'failed',
] as const;
export type RunOutcome = (typeof RUN_OUTCOMES)[number];

/** The outcomes of a decision that settled a run (final). */
export type SettledOutcome = Extract<
  RunOutcome,
  'better' | 'worse' | 'equivalent' | 'not-better' | 'faster-drift-not-ruled-out'
>;
/** The outcomes a decision itself can read as (its states). */
export type DecidedOutcome = Decision['state'];

export const isSettled = (o: RunOutcome | null | undefined): o is SettledOutcome =>
  o === 'better' ||
  o === 'worse' ||
  o === 'equivalent' ||
  o === 'not-better' ||
  o === 'faster-drift-not-ruled-out';

/**
 * A sequential decision's outcome. Success is only ever "decided at least min_improvement faster":
 * a `better` decision whose own estimate is smaller than that reads (and is checked) as equivalent.
 */
export function decisionOutcome(d: Decision, min: number = d.min_improvement): DecidedOutcome {
  if (d.state === 'better' && d.relative_change && d.relative_change.value > -min) return 'equivalent';
  return d.state;
}

/** What the outcome of a run reads. */
export interface OutcomeInput {
  /** Its decision (the judge's, or the record's one stored decision). */
  decision?: Decision | null;
  /** It failed (a failure, or a failed state or status). */
  failed?: boolean;
  /** Its run ended: a decision still measuring is then `undecided`. */
  ended: boolean;
  /** Without a decision: it has a value of its own (it is a reference, not a candidate). */
  hasValue?: boolean;
  /** Without a decision: a person merged it (the record's `accepted`), their call that it is better. */
  merged?: boolean;
  /** The experiment's min_improvement, when its decision does not carry one. */
  minImprovement?: number;
}

/** THE outcome of a run. */
export function outcomeOf(x: OutcomeInput): RunOutcome {
  if (x.failed) return 'failed';
  const d = x.decision;
  if (d) {
    const o = decisionOutcome(d, d.min_improvement ?? x.minImprovement ?? DEFAULT_MIN_IMPROVEMENT);
    // a run that ended while still open (measuring, or the provisional winner) was never decided
    return (o === 'measuring' || o === 'better-at-equal-age') && x.ended ? 'undecided' : o;
  }
  if (x.merged) return 'better';
  if (x.hasValue) return 'reference';
  return x.ended ? 'undecided' : 'measuring';
}
