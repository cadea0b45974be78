// The monitor's job summary input for one pass (src/report/monitor-summary.ts renders it): every
// experiment of the pass, even one without candidates, with its candidates in queue order (request
// time, as the queue is served). Pure.

import type { MonitorSummaryInput, SummaryExperiment } from '../report/monitor-summary.js';
import { experimentSettings } from '../topology/settings.js';
import type { MonitorExperiment } from './ports.js';
import type { PassReport } from './report.js';

export function monitorSummaryInput(
  experiments: readonly MonitorExperiment[],
  report: PassReport,
  extra: Omit<MonitorSummaryInput, 'experiments' | 'errors'> = {},
): MonitorSummaryInput {
  const requestedAt = new Map<string, number>();
  for (const e of experiments)
    for (const c of e.candidates) requestedAt.set(c.runName, c.requestedAt ?? Number.POSITIVE_INFINITY);
  const at = (runName: string) => requestedAt.get(runName) ?? Number.POSITIVE_INFINITY;
  const sections: SummaryExperiment[] = experiments.map((e) => {
    const id = e.experiment.experiment_id;
    const candidates = report.candidates
      .filter((c) => c.experimentId === id)
      .sort((a, b) => at(a.runName) - at(b.runName) || a.pr - b.pr)
      .map((c) => ({ pr: c.pr, view: c.view }));
    return { id, maxParallel: experimentSettings(e.experiment).maxParallel, candidates };
  });
  return { ...extra, experiments: sections, errors: report.errors };
}
