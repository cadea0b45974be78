// Older records, read as the current schema has them (parseRecord calls this before validating):
// each run's decision names its reference as a structured value (src/analysis/stored.ts), a run
// with only a fixed-sample `comparison` has it as its decision, and a decision kept without the
// figure it implies gets it now, from its reference's figure in the record (as older versions drew
// it), so every reader takes a decided run's figure from its decision. Pure.
import { decidedFigure, isDecided, ownFigureOf } from '../analysis/figure.js';
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

/** The run with the figure its decision implies, when it was kept without one. */
function withFigure(run: RecordRun, runs: readonly RecordRun[], seen: Set<string>): RecordRun {
  const d = run.monitor_decision;
  if (!isDecided(d) || d.figure || !d.relative_change || run.status === 'failed') return run;
  const anchor = anchorOf(d, run, runs, seen);
  return anchor
    ? { ...run, monitor_decision: { ...d, figure: decidedFigure(anchor, d.relative_change) } }
    : run;
}

/** The figure of the run a decision names, in the record (its own decision's, else its own value). */
function anchorOf(d: Decision, run: RecordRun, runs: readonly RecordRun[], seen: Set<string>): number | null {
  const ref = runs.find((r) => r.name === d.reference.name && r.name !== run.name);
  if (!ref || seen.has(run.name)) return null;
  const migrated = withFigure(ref, runs, new Set([...seen, run.name]));
  const f = migrated.monitor_decision;
  if (isDecided(f) && f.figure && migrated.status !== 'failed') return f.figure.value;
  return ownFigureOf(ref.verdict, ref.stable_metrics?.seconds_per_rollout_full_run)?.value ?? null;
}
