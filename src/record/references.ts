// The record's references as every surface judges against them (the monitor's action, `topo watch`,
// `topo status`, `topo analyze`, `topo record`): the baseline and the current best at the figure
// surfaces draw them at, what a reference job beside the candidates runs, and the between-run term
// from the record's repeated runs. One reader, so no surface judges without one of them. Pure.
import type { BetweenRun } from '../analysis/decision.js';
import type { ReferenceSource } from '../lifecycle/reference.js';
import type { ExperimentRecord } from '../types/generated/record.js';
import { bestSteps } from './best.js';
import { referenceWithFigure } from './figure.js';
import { baselineRun, bestRun, referenceSourceOf } from './model.js';
import { betweenRunOf } from './reference-runs.js';

export interface RecordedReferences {
  baseline: ReturnType<typeof referenceWithFigure>;
  best: ReturnType<typeof referenceWithFigure>;
  referenceSource: ReferenceSource | null;
  betweenRun: BetweenRun | null;
}

/**
 * The record's references; `without` a candidate: as they were before its entry (`topo record`
 * judges a run again against what it was decided against, never against its own entry).
 */
export function recordedReferences(record: ExperimentRecord, without?: string): RecordedReferences {
  const betweenRun = betweenRunOf(record);
  if (without === undefined)
    return {
      baseline: referenceWithFigure(baselineRun(record)),
      best: referenceWithFigure(bestRun(record)),
      referenceSource: referenceSourceOf(record),
      betweenRun,
    };
  const runs = record.runs.filter((r) => r.name !== without);
  return {
    baseline: referenceWithFigure(runs.find((r) => !r.parent) ?? runs[0]),
    best: referenceWithFigure(bestSteps(runs).at(-1)?.run),
    referenceSource: referenceSourceOf({ ...record, runs }),
    betweenRun,
  };
}
