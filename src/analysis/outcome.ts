// Where a decision (or, for an older observation, the fixed-sample comparison) leaves a candidate
// against its reference: the one reading behind the comment's headline, the check run, the label
// (src/report/standing.ts) and the record's current best (src/record/best.ts). Pure.
import type { Comparison, Decision, Interval } from '../types/generated/metrics.js';

export const DEFAULT_MIN_IMPROVEMENT = 0.02;

export type DecidedOutcome = Decision['state'];

/**
 * A sequential decision's outcome. Success is only ever "decided at least min_improvement faster":
 * a `better` decision whose own estimate is smaller than that reads (and is checked) as equivalent.
 */
export function decisionOutcome(d: Decision, min: number = d.min_improvement): DecidedOutcome {
  if (d.state === 'better' && d.relative_change && d.relative_change.value > -min) return 'equivalent';
  return d.state;
}

/** The fixed-sample reading of a relative-change interval against ±min_improvement. */
export function changeOutcome(change: Interval | null, min: number): DecidedOutcome {
  if (!change) return 'measuring';
  if (change.high <= -min) return 'better';
  if (change.low > 0) return 'worse';
  if (change.low >= -min && change.high <= min) return 'equivalent';
  return 'measuring';
}

/** A comparison's ratio (candidate ÷ reference) as a relative change; null when it has none. */
export function comparisonChange(c: Comparison): Interval | null {
  return c.ratio ? { value: c.ratio.value - 1, low: c.ratio.low - 1, high: c.ratio.high - 1 } : null;
}

export interface AgainstName {
  role: 'baseline' | 'current best' | 'leading candidate' | null;
  /** The reference candidate's name. */
  name: string;
  /** The leading candidate's pull request, when the decision names it. */
  pr: number | null;
}

/**
 * A decision's or comparison's `against`: "<role> <name>" ("baseline b", "current best a",
 * "leading candidate a (#12)"), or a bare name in older observations.
 */
export function parseAgainst(against: string): AgainstName {
  const m = /^(baseline|current best|leading candidate)\s+(.+)$/.exec(against.trim());
  const role = (m?.[1] ?? null) as AgainstName['role'];
  const full = (m?.[2] ?? against).trim();
  const pr = role === 'leading candidate' ? /^(.*\S) \(#(\d+)\)$/.exec(full) : null;
  return { role, name: pr?.[1] ?? full, pr: pr ? Number(pr[2]) : null };
}

/**
 * A candidate's seconds per rollout as its decision says: the reference's value × (1 + the
 * decision's relative change), its interval the decision's. Every surface shows this figure, so a
 * candidate decided `better` is always below its reference.
 */
export function decidedFigure(reference: number, change: Interval): Interval {
  const at = (x: number) => Math.round(reference * (1 + x) * 10000) / 10000;
  return { value: at(change.value), low: at(change.low), high: at(change.high) };
}
