// The committed text of a record: the JSON and the Markdown rendered from it, keyed by repository path.
// Pure: the callers write (CAS commit in the actions, the file system in `topo init`).
import type { Cluster } from '../types/generated/clusters.js';
import type { Experiment } from '../types/generated/experiment.js';
import type { ExperimentRecord } from '../types/generated/record.js';
import { createRecord, recordPaths } from './model.js';
import { recordChartSvg, renderRecordMarkdown } from './render.js';
import { serializeRecord } from './validate.js';

/** `{ 'experiments/<id>.json': …, 'experiments/<id>.md': … }`, and `<id>.svg` (the chart) once a run has a value. */
export function recordFiles(record: ExperimentRecord): Record<string, string> {
  const paths = recordPaths(record.experiment_id);
  const svg = recordChartSvg(record);
  return {
    [paths.json]: serializeRecord(record),
    [paths.markdown]: renderRecordMarkdown(record),
    ...(svg ? { [paths.chart]: svg } : {}),
  };
}

/** The files `topo init` writes for a new experiment (an empty record). */
export function initialRecordFiles(experiment: Experiment, cluster?: Cluster): Record<string, string> {
  return recordFiles(createRecord(experiment, cluster));
}
