// One run's series (as the query catalog returns them) → the candidate observation: the detector's
// verdict, the stable metrics, the bottleneck, resources and opportunities. Pure.
import { type ServiceName, serviceFromMetricLabel, TIMELINE } from '../catalog/alpasim.js';
import { capacitySummary, gpuMap } from '../topology/capacity.js';
import type { CandidateObservation, StableMetrics } from '../types/generated/metrics.js';
import type { Topology } from '../types/generated/topology.js';
import { analyseBottleneck } from './bottleneck.js';
import { type DetectorSettings, defaultRunEndMinutes, detect } from './detector.js';
import { analyseResources, opportunities } from './resources.js';
import { type LabeledSeries, mean, median, round, type Sample, sumCounters, toRunMinutes } from './series.js';

/** Series of one run keyed by quantity name (see src/telemetry/queries.ts QUANTITIES). */
export type RunSeries = Partial<Record<string, LabeledSeries[]>>;

export interface ObserveInput {
  runName: string;
  series: RunSeries;
  /** 1 for real AlpaSim; the twin's compression factor otherwise. */
  timeScale: number;
  /** Unix seconds of this evaluation. */
  nowTs: number;
  /** Prometheus step of the series, seconds (for staleness of the targets). */
  stepSeconds: number;
  /** When the Slurm job started (unix seconds), to place the first sample on the run's time line. */
  jobStartTs?: number | null;
  /** The job's wall time in run-minutes (experiment fixed_inputs.slurm.time), default AlpaSim's. */
  wallMinutes?: number | null;
  /** Rollouts the run makes in all: scene_count × rollouts_per_scene. */
  expectedRollouts?: number | null;
  topology?: Topology;
  /** Rollouts in flight when no topology says it (`topo analyze --in-flight`). */
  inFlight?: number | null;
  settings?: Partial<DetectorSettings>;
  /** Quantities no query returned for the experiment. */
  missing?: string[];
  /** The run's job has ended: judge the data up to its last sample (no staleness, no target checks). */
  ended?: boolean;
}

export interface RunAnalysis {
  observation: CandidateObservation;
  /** Unix seconds of the run's first sample (run-minute 0); null without data. */
  startTs: number | null;
  /** Last sample (unix seconds). */
  lastTs: number | null;
  /** Seconds per rollout over run-minutes, for charts. */
  chart: { fullRun: Sample[]; rate5m: Sample[] };
  opportunities: string[];
}

function first(series: RunSeries, q: string): LabeledSeries | undefined {
  return series[q]?.[0];
}

export function observeRun(input: ObserveInput): RunAnalysis {
  const S = input.timeScale;
  const base = ['rolloutsTotal', 'secondsPerRolloutAvg', 'elapsed'].flatMap(
    (q) => first(input.series, q)?.points ?? [],
  );
  const startTs = base.length ? Math.min(...base.map((p) => p[0])) : null;
  const lastTs = base.length ? Math.max(...base.map((p) => p[0])) : null;
  const ts0 = startTs ?? input.nowTs;
  const mins = (q: string) => toRunMinutes(first(input.series, q)?.points ?? [], ts0, S);
  const fullRun = mins('secondsPerRolloutAvg');
  const rate5m = mins('secondsPerRolloutRate5m');
  const completed = mins('rolloutsTotal');
  const failed = mins('rolloutsFailed');
  const elapsed = mins('elapsed');
  // Little's law inputs: the duration histogram per worker, the in-flight gauge, the capacity
  const perWorker = (q: string) => (input.series[q] ?? []).map((x) => toRunMinutes(x.points, ts0, S));
  const durationSum = sumCounters(perWorker('rolloutDurationSum'));
  const durationCount = sumCounters(perWorker('rolloutDurationCount'));
  const activeRollouts = mins('activeRollouts');
  const cap = input.topology ? capacitySummary(input.topology) : undefined;
  const up = first(input.series, 'targetsUp')?.points ?? [];
  const lastUp = up.at(-1);
  const targetsUp =
    up.length === 0
      ? undefined
      : lastUp !== undefined && lastUp[1] > 0 && lastUp[0] >= input.nowTs - 3 * input.stepSeconds;
  const offset =
    input.jobStartTs != null && startTs !== null
      ? ((startTs - input.jobStartTs) * S) / 60
      : TIMELINE.startupMinutes;
  const wall = input.wallMinutes ?? defaultRunEndMinutes() + TIMELINE.startupMinutes;
  const verdict = detect({
    fullRun,
    rate5m,
    completed,
    failed,
    elapsed,
    targetsUp: input.ended ? undefined : targetsUp,
    now: input.ended ? undefined : ((input.nowTs - ts0) * S) / 60,
    runEndMinutes: wall - offset,
    expectedRollouts: input.expectedRollouts ?? null,
    durationSum,
    durationCount,
    activeRollouts,
    inFlightCapacity: input.inFlight ?? cap?.inFlight ?? null,
    settings: input.settings,
  });

  // steady window for aggregates: after the warm-up when one was found
  const fromTs = verdict.warmup_end_minutes != null ? ts0 + (verdict.warmup_end_minutes * 60) / S : -Infinity;
  const steadyValues = (s: LabeledSeries | undefined) => {
    const pts = (s?.points ?? []).filter(([, v]) => Number.isFinite(v));
    const after = pts.filter(([t]) => t >= fromTs);
    return (after.length ? after : pts).map(([, v]) => v);
  };
  const steadyMean = (s: LabeledSeries | undefined) => {
    const v = steadyValues(s);
    return v.length ? round(mean(v)) : null;
  };
  const byLabel = (q: string, label: string) => {
    const m = new Map<string, LabeledSeries>();
    for (const s of input.series[q] ?? []) {
      const key = s.labels[label];
      if (key !== undefined) m.set(key, s);
    }
    return m;
  };

  const queue: NonNullable<StableMetrics['rpc_queue_depth_at_start_latest_by_service']> = {};
  const queueMax: Partial<Record<ServiceName, number | null>> = {};
  const queueMin: Partial<Record<ServiceName, number | null>> = {};
  const maxes = byLabel('queueDepthMax', 'service');
  const mins2 = byLabel('queueDepthMin', 'service');
  for (const label of new Set([...maxes.keys(), ...mins2.keys()])) {
    const svc = serviceFromMetricLabel(label);
    const key = svc ?? label;
    const mx = steadyMean(maxes.get(label));
    const mn = steadyMean(mins2.get(label));
    queue[key] = { worker_min: mn, worker_max: mx };
    if (svc) {
      queueMax[svc] = mx;
      queueMin[svc] = mn;
    }
  }
  const methods: Record<string, number | null> = {};
  for (const [m, s] of byLabel('rpcDurationP95', 'method')) {
    const v = steadyValues(s);
    methods[m] = v.length ? round(median(v)) : null;
  }
  const idle = steadyMean(first(input.series, 'idleFraction'));
  const cpu = new Map<string, number[]>();
  for (const [g, s] of byLabel('processCpu', 'groupname')) cpu.set(g, steadyValues(s));
  const cpuMean: Record<string, number | null> = {};
  for (const [g, v] of cpu) cpuMean[g] = v.length ? mean(v) : null;
  const gpus = new Map<
    string,
    { utilization?: number[]; memoryUsedGb?: number[]; memoryTotalGb?: number[]; pressurePercent?: number[] }
  >();
  const addGpu = (q: string, field: 'utilization' | 'memoryUsedGb' | 'memoryTotalGb' | 'pressurePercent') => {
    for (const s of input.series[q] ?? []) {
      const g = s.labels.gpu;
      if (g === undefined) continue;
      const rec = gpus.get(g) ?? {};
      rec[field] = [...(rec[field] ?? []), ...steadyValues(s)];
      gpus.set(g, rec);
    }
  };
  addGpu('gpuUtil', 'utilization');
  addGpu('gpuMemory', 'memoryUsedGb');
  addGpu('gpuMemoryTotal', 'memoryTotalGb');
  addGpu('gpuMemoryPressure', 'pressurePercent');
  const resources = analyseResources({
    gpus,
    services: input.topology ? gpuMap(input.topology) : undefined,
    hostAvailableGb: steadyValues(first(input.series, 'hostMemAvailable')),
    hostTotalGb: steadyValues(first(input.series, 'hostMemTotal')),
    processCpu: cpu,
  });
  const bottleneck = analyseBottleneck({
    queueMax,
    queueMin,
    idleFraction: idle,
    processCpu: cpuMean,
    capacity: cap?.byService,
    inFlight: cap?.inFlight,
  });
  const lastOf = (s: Sample[]) => {
    const f = s.filter((p) => Number.isFinite(p.v));
    return f.length ? round((f[f.length - 1] as Sample).v, 4) : null;
  };
  const total = lastOf(completed);
  const nFailed = lastOf(failed) ?? (total !== null ? 0 : null);
  const gaps = verdict.evidence.filter((e) => e.startsWith('scrape gap'));
  const stable_metrics: StableMetrics = {
    warmup_excluded_s: verdict.warmup_end_minutes != null ? round(verdict.warmup_end_minutes * 60, 0) : null,
    completed_rollouts: total !== null ? total - (nFailed ?? 0) : null,
    failed_rollouts: nFailed,
    seconds_per_rollout_5m: lastOf(rate5m),
    seconds_per_rollout_full_run: lastOf(fullRun),
    rollout_duration_p95_s: steadyMean(first(input.series, 'rolloutDurationP95')),
    rpc_queue_depth_at_start_latest_by_service: queue,
    rpc_duration_p95_s_by_method: methods,
    runtime_idle_fraction: idle,
    resource_usage: resources,
    bottleneck,
    telemetry_quality: { missing_metrics: input.missing ?? [], gaps, notes: null },
  };
  return {
    observation: { run_name: input.runName, verdict, stable_metrics },
    startTs,
    lastTs,
    chart: {
      fullRun: fullRun.filter((p) => Number.isFinite(p.v)),
      rate5m: rate5m.filter((p) => Number.isFinite(p.v)),
    },
    opportunities: opportunities(resources, bottleneck),
  };
}

/** Parses a Slurm time limit ([D-]HH:MM[:SS]) to minutes. */
export function slurmTimeToMinutes(time: string): number | null {
  const m = /^(?:(\d+)-)?(\d{1,2}):(\d{2})(?::(\d{2}))?$/.exec(time);
  if (!m) return null;
  return Number(m[1] ?? 0) * 1440 + Number(m[2]) * 60 + Number(m[3]) + Number(m[4] ?? 0) / 60;
}
