// Where a candidate stands against the reference (the current best, or the baseline while there
// is none): the one answer the comment's headline, the check run and the job summary all show.
// Pure. The sequential Decision (observation.decision) is authoritative; without one (older
// observations) the first comparison is read with the same min_improvement rule.
import {
  changeOutcome,
  comparisonChange,
  DEFAULT_MIN_IMPROVEMENT,
  decisionOutcome,
  parseAgainst,
} from '../analysis/outcome.js';
import type { Comparison, Decision, Interval } from '../types/generated/metrics.js';

export { DEFAULT_MIN_IMPROVEMENT };

export type Outcome =
  | 'better'
  | 'worse'
  | 'equivalent'
  | 'not-better'
  | 'better-at-equal-age'
  | 'faster-drift-not-ruled-out'
  | 'measuring'
  | 'failed'
  | 'reference'
  | 'undecided';

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

/** A comparison's icon, from the same table: faster 🟢, slower 🔴, anything else ⚪ (undecided). */
export function comparisonIcon(outcome: Comparison['outcome']): string {
  return OUTCOME_ICON[outcome === 'better' || outcome === 'worse' ? outcome : 'undecided'];
}

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

/**
 * "baseline 8gpu" → "the baseline `8gpu`"; "baseline baseline" → "the baseline";
 * "current best baseline" → "the baseline (the current best)"; "leading candidate a (#12)" → "the
 * leading candidate `a` (#12)" (GitHub links the pull request). Names are code-quoted, so a
 * candidate name cannot inject Markdown.
 */
export function describeReference(against: string): string {
  const { role, name, pr } = parseAgainst(against);
  const quoted = pr !== null ? `${code(name)} (#${pr})` : code(name);
  if (!role) return quoted;
  if (name === 'baseline') return role === 'baseline' ? 'the baseline' : 'the baseline (the current best)';
  return `the ${role} ${quoted}`;
}

/** Inline code that a backtick in user text cannot close. */
export function code(s: string): string {
  const clean = s.replace(/[\r\n]+/g, ' ');
  const fence = clean.includes('`') ? '``' : '`';
  return `${fence}${fence === '``' ? ' ' : ''}${clean}${fence === '``' ? ' ' : ''}${fence}`;
}

export interface StandingInput {
  state: string;
  failure?: { kind: string; message: string } | null;
  decision?: Decision | null;
  comparisons: readonly Comparison[];
  /** The run has a value of its own (verdict.value). */
  hasValue: boolean;
  minImprovement?: number;
  /** Run-minutes of data so far (the decision's forecast is a run-minute: the rest is what is left). */
  minutesOfData?: number | null;
}

const TERMINAL = new Set(['finished', 'stopped', 'failed']);

export function standingOf(i: StandingInput): Standing {
  const min = i.decision?.min_improvement ?? i.minImprovement ?? DEFAULT_MIN_IMPROVEMENT;
  if (i.state === 'failed' || i.failure)
    return {
      outcome: 'failed',
      minImprovement: min,
      reason: i.failure ? `${i.failure.kind}: ${i.failure.message}` : 'the job ended without a result',
    };
  const ended = TERMINAL.has(i.state);
  if (i.decision) return fromDecision(i.decision, min, ended, i.minutesOfData ?? null);
  const cmp = i.comparisons.find((c) => c.outcome !== 'not-comparable') ?? i.comparisons[0];
  if (!cmp) {
    if (i.hasValue) return { outcome: 'reference', minImprovement: min };
    return ended
      ? { outcome: 'undecided', minImprovement: min, reason: 'the run ended without a stable value' }
      : { outcome: 'measuring', minImprovement: min };
  }
  const against = describeReference(cmp.against);
  const change = comparisonChange(cmp);
  const outcome = changeOutcome(change, min);
  if (outcome === 'measuring' && ended)
    return {
      outcome: 'undecided',
      against,
      change,
      minImprovement: min,
      reason: 'the interval is still too wide',
    };
  return { outcome, against, change, minImprovement: min };
}

function fromDecision(d: Decision, min: number, ended: boolean, minutesOfData: number | null): Standing {
  const base = {
    against: describeReference(d.against),
    change: d.relative_change ?? null,
    minImprovement: min,
  };
  const outcome = decisionOutcome(d, min);
  if (outcome !== 'measuring') return { ...base, outcome };
  return ended
    ? { ...base, outcome: 'undecided', reason: 'the run ended before a decision' }
    : {
        ...base,
        outcome: 'measuring',
        expectedMinutes: minutesLeft(d.expected_minutes_to_decision, minutesOfData),
      };
}

/** The decision is forecast at a run-minute; what a reader wants is how long is left. */
function minutesLeft(expectedAt: number | null | undefined, now: number | null): number | null {
  if (expectedAt == null || now == null) return null;
  return Math.max(0, expectedAt - now);
}
