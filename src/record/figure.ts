// The figure of a record run (src/analysis/figure.ts: its decision's figure, else its own value),
// what the record's Markdown and charts, the final report, the site and the autopilot show, and the
// record's best is ranked by; and what a run was decided against. Pure. Older records get their
// decisions' figures on read (./migrate.ts).
import { type Figure, isDecided, ownFigureOf, runFigure } from '../analysis/figure.js';
import { decisionOutcome } from '../analysis/outcome.js';
import type { DecisionReference, Interval } from '../types/generated/metrics.js';
import type { RecordRun } from '../types/generated/record.js';
import { decisionText } from './format.js';
import { referenceOf } from './model.js';

export type { Figure };

/** What a run was decided against: the reference, whether it was decided better, the change and its text. */
export interface DecidedAgainst {
  reference: string;
  /** How the decision named it. */
  role: DecisionReference['role'];
  better: boolean;
  /** (candidate − reference) ÷ reference, with the decision's interval. */
  change: Interval | null;
  text: string;
}

/** What a run was decided against (its one decision); null without a settled claim. */
export function decidedAgainst(run: RecordRun): DecidedAgainst | null {
  const d = run.monitor_decision;
  if (!isDecided(d)) return null;
  return {
    reference: d.reference.name,
    role: d.reference.role,
    better: decisionOutcome(d) === 'better',
    change: d.relative_change ?? null,
    text: decisionText(d) as string,
  };
}

/** A record run's own value (ownFigureOf its verdict and its last full-run reading). */
export function ownFigure(run: RecordRun): Figure | null {
  return ownFigureOf(run.verdict, run.stable_metrics?.seconds_per_rollout_full_run);
}

/** THE figure every surface shows for a record run; null without any value. */
export function figureOf(run: RecordRun): Figure | null {
  if (run.status === 'failed') return ownFigure(run);
  return runFigure({
    decision: run.monitor_decision,
    verdict: run.verdict,
    reading: run.stable_metrics?.seconds_per_rollout_full_run,
  });
}

/** A record run as the monitor's reference (src/record/model.ts referenceOf) with the figure surfaces draw it at. */
export function referenceWithFigure(
  run: RecordRun | undefined,
): (NonNullable<ReturnType<typeof referenceOf>> & { figure?: Interval }) | null {
  const r = referenceOf(run);
  const f = run && r ? figureOf(run) : null;
  return r && f ? { ...r, figure: { value: f.value, low: f.low, high: f.high } } : r;
}
