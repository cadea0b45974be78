// The one telemetry read of the judge: the query catalog's one range query per quantity
// (src/telemetry/queries.ts), over the window every surface computes the same way.
import type { RunSeries } from '../analysis/observe.js';
import type { PrometheusClient } from '../telemetry/prometheus.js';
import {
  type CatalogOptions,
  type ExperimentTelemetry,
  type FetchWindow,
  fetchTelemetry,
  type Quantity,
} from '../telemetry/queries.js';
import type { RunJob } from './job.js';

export type { ExperimentTelemetry, FetchWindow };

/** The series of every run the selector matches, one query per quantity. */
export function readTelemetry(
  prometheus: PrometheusClient,
  selector: string,
  window: FetchWindow,
  options: CatalogOptions & { quantities?: readonly Quantity[] } = {},
): Promise<ExperimentTelemetry> {
  return fetchTelemetry(prometheus, selector, window, options);
}

/** One run's series out of an experiment's telemetry (grouped by run_name). */
export function seriesOf(telemetry: ExperimentTelemetry | undefined, runName: string): RunSeries {
  return (telemetry?.byRun.get(runName) ?? {}) as RunSeries;
}

/**
 * The window an experiment's runs are read over: from the first start among the jobs (aligned to
 * the step) to `nowTs`; null when no job has started.
 */
export function jobsWindow(jobs: readonly RunJob[], nowTs: number, stepSeconds: number): FetchWindow | null {
  const starts = jobs.flatMap((j) => (j.startTs ? [j.startTs] : []));
  if (!starts.length) return null;
  const start = Math.floor(Math.min(...starts) / stepSeconds) * stepSeconds;
  return { start, end: Math.max(nowTs, start), stepSeconds };
}
