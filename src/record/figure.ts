// THE figure of a run: the seconds per rollout every surface shows for it (the record's Markdown and
// charts, the final report, the site, the autopilot) and the record's best is ranked by. Pure.
//
// A run decided against another run of the record shows what its decision says: that run's figure
// × (1 + the decision's relative change), with the decision's interval (src/analysis/outcome.ts
// decidedFigure). So a candidate decided `better` is below its reference on every surface, and the
// ratio any surface shows is the decision's. A run without such a decision (the baseline, a failed
// or undecided run) shows its own value as decisions read it when it is their reference.
import { decisionProjection, type VerdictLike } from '../analysis/decision.js';
import {
  type AgainstName,
  changeOutcome,
  comparisonChange,
  DEFAULT_MIN_IMPROVEMENT,
  decidedFigure,
  decisionOutcome,
  parseAgainst,
} from '../analysis/outcome.js';
import type { Interval } from '../types/generated/metrics.js';
import type { RecordRun } from '../types/generated/record.js';
import { comparisonText, decisionText } from './format.js';
import { referenceOf } from './model.js';

/** What a run was decided against: the reference, whether it was decided better, the change and its text. */
export interface DecidedAgainst {
  reference: string;
  /** How the decision named it: the leading candidate is compared live, while it still measures. */
  role: AgainstName['role'];
  better: boolean;
  /** (candidate − reference) ÷ reference, with the decision's interval. */
  change: Interval | null;
  text: string;
}

/** What a run was decided against (its monitor decision, else its comparison); null without a claim. */
export function decidedAgainst(run: RecordRun): DecidedAgainst | null {
  const d = run.monitor_decision;
  if (d?.against) {
    const outcome = decisionOutcome(d);
    if (outcome === 'measuring' || outcome === 'reference') return null;
    const { name: reference, role } = parseAgainst(d.against);
    return {
      reference,
      role,
      better: outcome === 'better',
      change: d.relative_change ?? null,
      text: decisionText(d)!,
    };
  }
  const c = run.comparison;
  if (!c) return null;
  const change = comparisonChange(c);
  const outcome = changeOutcome(change, DEFAULT_MIN_IMPROVEMENT);
  if (outcome === 'measuring') return null;
  const { name: reference, role } = parseAgainst(c.against);
  return {
    reference,
    role,
    better: outcome === 'better',
    change,
    text: comparisonText(c)!,
  };
}

export interface Figure extends Interval {
  /**
   * `decision`: from its decision against `against`; else its own value: `projection` (the
   * detector's, what decisions read of a reference), `estimate` (the decision estimate) or
   * `reading` (the last full-run reading, start-up included).
   */
  basis: 'decision' | 'projection' | 'estimate' | 'reading';
  /** The reference the decision read, with that reference's figure and the decided change. */
  against?: { name: string; value: number; change: Interval };
}

/**
 * A run's own value, from its verdict: as decisions read it when it is their reference (the
 * detector's projection, else its stable value), else its decision estimate, else the last reading.
 */
export function ownFigureOf(
  verdict: (VerdictLike & { value?: Interval | null }) | null | undefined,
  reading: number | null | undefined,
): Figure | null {
  const projected = verdict?.projected_full_run ?? verdict?.value ?? null;
  const i = projected ?? decisionProjection(verdict);
  if (i) return { value: i.value, low: i.low, high: i.high, basis: projected ? 'projection' : 'estimate' };
  return reading == null ? null : { value: reading, low: reading, high: reading, basis: 'reading' };
}

/** A record run's own value (ownFigureOf its verdict and its last full-run reading). */
export function ownFigure(run: RecordRun): Figure | null {
  return ownFigureOf(run.verdict, run.stable_metrics?.seconds_per_rollout_full_run);
}

/** The figure every surface shows for `run` (see the top of this file); null without any value. */
export function figureOf(run: RecordRun, runs: readonly RecordRun[]): Figure | null {
  return figureWithin(run, runs, new Set());
}

function figureWithin(run: RecordRun, runs: readonly RecordRun[], seen: Set<string>): Figure | null {
  // the pruner's leader is compared live while it still measures, not at the figure it ends with
  const decided = run.status === 'failed' ? null : decidedAgainst(run);
  const d = decided?.role === 'leading candidate' ? null : decided;
  const ref = d?.change ? runs.find((r) => r.name === d.reference && r.name !== run.name) : undefined;
  if (d?.change && ref && !seen.has(run.name)) {
    const anchor = figureWithin(ref, runs, new Set([...seen, run.name]));
    if (anchor)
      return {
        ...decidedFigure(anchor.value, d.change),
        basis: 'decision',
        against: { name: ref.name, value: anchor.value, change: d.change },
      };
  }
  return ownFigure(run);
}

/** A record run as the monitor's reference (src/record/model.ts referenceOf) with the figure surfaces draw it at. */
export function referenceWithFigure(
  run: RecordRun | undefined,
  runs: readonly RecordRun[],
): (NonNullable<ReturnType<typeof referenceOf>> & { figure?: Interval }) | null {
  const r = referenceOf(run);
  const f = run && r ? figureOf(run, runs) : null;
  return r && f ? { ...r, figure: { value: f.value, low: f.low, high: f.high } } : r;
}
