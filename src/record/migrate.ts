// Older records, read as the current schema has them (parseRecord calls this before validating):
// each run's decision names its reference as a structured value (src/analysis/stored.ts), a run
// with only a fixed-sample `comparison` has it as its decision, and a decision kept without the
// figure it implies gets it now, from its reference's figure in the record (as older versions drew
// it), and one decided against a live leading candidate is re-anchored on that run's settled figure
// once the record holds it (src/analysis/figure.ts anchoredDecision), so every reader takes a decided
// run's figure from its decision. Pure.
import { againstLiveRun, anchoredDecision, isDecided, ownFigureOf } from '../analysis/figure.js';
import { migrateObservation } from '../analysis/stored.js';
import type { Decision } from '../types/generated/metrics.js';
import type { RecordRun } from '../types/generated/record.js';

type Raw = Record<string, unknown>;
const isObject = (x: unknown): x is Raw => !!x && typeof x === 'object' && !Array.isArray(x);

/** The record with each run migrated; anything not shaped like a record is left to the validator. */
export function migrateRecord(raw: unknown): unknown {
  if (!isObject(raw) || !Array.isArray(raw.runs)) return raw;
  const runs = raw.runs.map((r) => migrateObservation(r, 'monitor_decision'));
  if (!runs.every(isObject)) return { ...raw, runs };
  return { ...raw, runs: withDecisionFigures(runs as unknown as RecordRun[]) };
}

/** Each run whose settled decision was kept without a figure, with the one it implies in the record. */
export function withDecisionFigures(runs: readonly RecordRun[]): RecordRun[] {
  return runs.map((r) => withFigure(r, runs, new Set()));
}

/**
 * The run with the figure its decision implies (src/analysis/figure.ts anchoredDecision): when it was
 * kept without one, and when it was decided against a live run (the leading candidate) that has
 * settled in the record since: its figure is that run's settled figure × (1 + the change).
 */
function withFigure(run: RecordRun, runs: readonly RecordRun[], seen: Set<string>): RecordRun {
  const d = run.monitor_decision;
  if (!isDecided(d) || !d.relative_change || run.status === 'failed') return run;
  if (d.figure && !againstLiveRun(d)) return run;
  const anchor = anchorOf(d, run, runs, seen);
  const next = anchoredDecision(d, anchor);
  return next === d ? run : { ...run, monitor_decision: next };
}

/**
 * The figure of the run a decision names, in the record: its own settled decision's; else, for a
 * decision kept without a figure, its own value (as older versions drew it). A live run not settled
 * in the record leaves the figure its decision was anchored at.
 */
function anchorOf(d: Decision, run: RecordRun, runs: readonly RecordRun[], seen: Set<string>): number | null {
  const ref = runs.find((r) => r.name === d.reference.name && r.name !== run.name);
  if (!ref || seen.has(run.name)) return null;
  const migrated = withFigure(ref, runs, new Set([...seen, run.name]));
  const f = migrated.monitor_decision;
  if (isDecided(f) && f.figure && migrated.status !== 'failed') return f.figure.value;
  if (d.figure) return null;
  return ownFigureOf(ref.verdict, ref.stable_metrics?.seconds_per_rollout_full_run)?.value ?? null;
}
