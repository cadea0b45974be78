// Reading what older versions stored: a comment's observation block and a record run named the
// decision's reference as a string ("baseline b", "current best a", "leading candidate a (#12)", a
// bare name) and could carry a fixed-sample `comparison` beside (or instead of) the decision. Both
// are migrated here, on read, into the one decision (metrics.schema.json `decision`: a structured
// `reference`), so nothing past this file parses a reference or reads a comparison. Pure.
import type { Decision, DecisionReference, Interval } from '../types/generated/metrics.js';
import { decisionReference } from './reference.js';

type Raw = Record<string, unknown>;
const isObject = (x: unknown): x is Raw => !!x && typeof x === 'object' && !Array.isArray(x);

/** The min_improvement of decisions older observations carried none of (the schema's default). */
const OLD_MIN_IMPROVEMENT = 0.02;

/** An old `against` string as a structured reference (the one parser of that form). */
export function legacyReference(against: string): DecisionReference {
  const m = /^(baseline|current best|leading candidate)\s+(.+)$/.exec(against.trim());
  const role = (m?.[1] ?? 'run') as DecisionReference['role'];
  const full = (m?.[2] ?? against).trim();
  const pr = role === 'leading candidate' ? /^(.*\S) \(#(\d+)\)$/.exec(full) : null;
  return decisionReference(role, pr?.[1] ?? full, pr ? Number(pr[2]) : null);
}

/** A stored decision: its `against` string becomes its `reference`; a current one is returned as is. */
export function migrateDecision(raw: unknown): unknown {
  if (!isObject(raw) || typeof raw.against !== 'string') return raw;
  const { against, ...rest } = raw;
  return rest.reference ? rest : { ...rest, reference: legacyReference(against) };
}

/** The fixed-sample reading of a ratio interval against ±min_improvement (what older surfaces showed). */
function comparisonState(change: Interval | null, min: number): Decision['state'] {
  if (!change) return 'measuring';
  if (change.high <= -min) return 'better';
  if (change.low > 0) return 'worse';
  if (change.low >= -min && change.high <= min) return 'equivalent';
  return 'measuring';
}

/** An older fixed-sample comparison as the decision it stood for (the only claim such a run made). */
export function decisionOfComparison(raw: unknown): Decision | null {
  if (!isObject(raw) || typeof raw.against !== 'string') return null;
  const r = isObject(raw.ratio) ? (raw.ratio as unknown as Interval) : null;
  const change = r ? { value: r.value - 1, low: r.low - 1, high: r.high - 1 } : null;
  return {
    state: comparisonState(change, OLD_MIN_IMPROVEMENT),
    reference: legacyReference(raw.against),
    relative_change: change,
    min_improvement: OLD_MIN_IMPROVEMENT,
    method: 'fixed-sample comparison (an older observation)',
    evidence: [`fixed-sample comparison with ${raw.against}: ${String(raw.outcome)}`],
  };
}

/**
 * A stored observation (or a record run: `decisionKey` `monitor_decision`) as the current schema
 * has it: the decision's reference structured, and an older `comparison` dropped, kept as the
 * decision only when the run had no decision.
 */
export function migrateObservation(raw: unknown, decisionKey = 'decision'): unknown {
  if (!isObject(raw)) return raw;
  const { comparison, ...rest } = raw;
  const decision = rest[decisionKey] ? migrateDecision(rest[decisionKey]) : decisionOfComparison(comparison);
  return decision ? { ...rest, [decisionKey]: decision } : rest;
}
