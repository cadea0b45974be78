// One run judged from Prometheus as of a moment: the path `topo analyze` and the detector bench share.
// Any run_name (not only topo-… names); by default as of now, or as of its last sample when the run
// has ended, so a finished run keeps the verdict its data supports instead of turning stale.

import type { DetectorSettings } from '../analysis/detector.js';
import { observeRun, type RunAnalysis, type RunSeries } from '../analysis/observe.js';
import type { PrometheusClient } from '../telemetry/prometheus.js';
import {
  anyRunSelector,
  type ExperimentTelemetry,
  fetchTelemetry,
  type Quantity,
} from '../telemetry/queries.js';
import type { Topology } from '../types/generated/topology.js';

export interface AnalyzeRunInput {
  prometheus: PrometheusClient;
  runName: string;
  timeScale: number;
  stepSeconds: number;
  /** The clock (unix seconds). */
  nowTs: number;
  /** Judge as of this moment (unix seconds), as the monitor would have then; default: see `ended`. */
  atTs?: number | null;
  /** Look-back from the evaluation time, Prometheus minutes. */
  minutes: number;
  /** Rollouts in flight, when no topology is given. */
  inFlight?: number | null;
  topology?: Topology;
  settings?: Partial<DetectorSettings>;
  /** Only these quantities (the bench asks for the verdict's only). */
  quantities?: readonly Quantity[];
}

export interface AnalyzeRunResult {
  analysis: RunAnalysis;
  telemetry: ExperimentTelemetry;
  /** The moment judged (unix seconds). */
  atTs: number;
  /** No --at and no sample for a while: judged as of the run's last sample. */
  ended: boolean;
}

export async function analyzeRun(i: AnalyzeRunInput): Promise<AnalyzeRunResult> {
  const selector = anyRunSelector(i.runName);
  const at = Math.floor(i.atTs ?? i.nowTs);
  const start = Math.floor((at - i.minutes * 60) / i.stepSeconds) * i.stepSeconds;
  const telemetry = await fetchTelemetry(
    i.prometheus,
    selector,
    { start, end: at, stepSeconds: i.stepSeconds },
    {
      timeScale: i.timeScale,
      scrapeSeconds: i.stepSeconds,
      ...(i.quantities ? { quantities: i.quantities } : {}),
    },
  );
  const series = (telemetry.byRun.get(i.runName) ?? {}) as RunSeries;
  const observe = (nowTs: number, ended: boolean) =>
    observeRun({
      runName: i.runName,
      series,
      timeScale: i.timeScale,
      nowTs,
      stepSeconds: i.stepSeconds,
      missing: telemetry.missing,
      topology: i.topology,
      inFlight: i.inFlight ?? null,
      settings: i.settings,
      ended,
    });
  let analysis = observe(at, false);
  // no --at: a run whose samples stopped more than the detector's staleness ago has ended
  const staleS = Math.max(3 * i.stepSeconds, 180 / i.timeScale);
  const ended = i.atTs == null && analysis.lastTs !== null && at - analysis.lastTs > staleS;
  if (ended && analysis.lastTs !== null) analysis = observe(analysis.lastTs, true);
  return { analysis, telemetry, atTs: ended && analysis.lastTs !== null ? analysis.lastTs : at, ended };
}

/** `--at`: an ISO 8601 time or unix seconds (or milliseconds). */
export function parseAt(text: string): number | null {
  const t = text.trim();
  if (/^\d+(\.\d+)?$/.test(t)) {
    const n = Number(t);
    return n > 1e11 ? n / 1000 : n;
  }
  if (!/^\d{4}-\d{2}-\d{2}/.test(t)) return null;
  const ms = Date.parse(t);
  return Number.isFinite(ms) ? ms / 1000 : null;
}
