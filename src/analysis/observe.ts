// One run's series (as the query catalog returns them) → the candidate observation: the detector's
// verdict, the stable metrics, the bottleneck, resources and opportunities. Pure.
import { type ServiceName, serviceFromMetricLabel, TIMELINE } from '../catalog/alpasim.js';
import { capacitySummary, gpuMap } from '../topology/capacity.js';
import type { CandidateObservation, StableMetrics, Verdict } from '../types/generated/metrics.js';
import type { Topology } from '../types/generated/topology.js';
import { analyseBottleneck } from './bottleneck.js';
import { type DetectorInput, type DetectorSettings, defaultRunEndMinutes, detect } from './detector.js';
import { decisionReading, type Reading } from './reading.js';
import { analyseResources, opportunities } from './resources.js';
import { perWorkerMinutes, reconstructRollouts } from './rollouts.js';
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
  /** Keep the decision estimate's per-minute trajectory (default true; a bench reading only verdicts skips it). */
  trajectory?: boolean;
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
  const t = timeLine(input);
  const series = runSeries(input, t);
  const dInput = detectorInput(input, t, series);
  const verdict = detect(dInput);
  const reading = decisionReadingOf(input, t, series, dInput, verdict);
  verdict.decision_estimate = reading?.estimate ?? null;
  verdict.cohorts = reading?.cohorts ?? null;
  rolloutDriftCheck(verdict, input.settings?.max_relative_slope_per_hour ?? 0.05);
  // steady window for aggregates: after the warm-up when one was found
  const fromTs =
    verdict.warmup_end_minutes != null
      ? t.ts0 + (verdict.warmup_end_minutes * 60) / input.timeScale
      : -Infinity;
  const read = steadyReader(input.series, fromTs);
  const cap = input.topology ? capacitySummary(input.topology) : undefined;
  const resources = resourcesOf(input, read);
  const bottleneck = bottleneckOf(input, read, cap);
  const stable_metrics: StableMetrics = {
    warmup_excluded_s: verdict.warmup_end_minutes != null ? round(verdict.warmup_end_minutes * 60, 0) : null,
    ...countsOf(series),
    rollout_duration_p95_s: read.mean(first(input.series, 'rolloutDurationP95')),
    rpc_queue_depth_at_start_latest_by_service: bottleneck.queue,
    rpc_duration_p95_s_by_method: rpcP95ByMethod(read),
    runtime_idle_fraction: bottleneck.idle,
    resource_usage: resources,
    bottleneck: bottleneck.bottleneck,
    telemetry_quality: {
      missing_metrics: input.missing ?? [],
      gaps: verdict.evidence.filter((e) => e.startsWith('scrape gap')),
      notes: null,
    },
  };
  return {
    observation: { run_name: input.runName, verdict, stable_metrics },
    startTs: t.startTs,
    lastTs: t.lastTs,
    chart: {
      fullRun: series.fullRun.filter((p) => Number.isFinite(p.v)),
      rate5m: series.rate5m.filter((p) => Number.isFinite(p.v)),
    },
    opportunities: opportunities(resources, bottleneck.bottleneck),
  };
}

/** The run's first and last samples (unix seconds) and run-minute 0. */
interface TimeLine {
  startTs: number | null;
  lastTs: number | null;
  ts0: number;
}

function timeLine(input: ObserveInput): TimeLine {
  const base = ['rolloutsTotal', 'secondsPerRolloutAvg', 'elapsed'].flatMap(
    (q) => first(input.series, q)?.points ?? [],
  );
  const startTs = base.length ? Math.min(...base.map((p) => p[0])) : null;
  const lastTs = base.length ? Math.max(...base.map((p) => p[0])) : null;
  return { startTs, lastTs, ts0: startTs ?? input.nowTs };
}

/** The detector's series in run-minutes; the duration histogram summed over workers. */
function runSeries(input: ObserveInput, t: TimeLine) {
  const S = input.timeScale;
  const mins = (q: string) => toRunMinutes(first(input.series, q)?.points ?? [], t.ts0, S);
  const perWorker = (q: string) => (input.series[q] ?? []).map((x) => toRunMinutes(x.points, t.ts0, S));
  return {
    fullRun: mins('secondsPerRolloutAvg'),
    rate5m: mins('secondsPerRolloutRate5m'),
    completed: mins('rolloutsTotal'),
    failed: mins('rolloutsFailed'),
    elapsed: mins('elapsed'),
    // Little's law inputs: the duration histogram per worker, the in-flight gauge
    durationSum: sumCounters(perWorker('rolloutDurationSum')),
    durationCount: sumCounters(perWorker('rolloutDurationCount')),
    activeRollouts: mins('activeRollouts'),
  };
}

/** The detector's input: the series, the targets, and the run's end on its own time line. */
function detectorInput(
  input: ObserveInput,
  t: TimeLine,
  series: ReturnType<typeof runSeries>,
): DetectorInput {
  const S = input.timeScale;
  const up = first(input.series, 'targetsUp')?.points ?? [];
  const lastUp = up.at(-1);
  const targetsUp =
    up.length === 0
      ? undefined
      : lastUp !== undefined && lastUp[1] > 0 && lastUp[0] >= input.nowTs - 3 * input.stepSeconds;
  const offset =
    input.jobStartTs != null && t.startTs !== null
      ? ((t.startTs - input.jobStartTs) * S) / 60
      : TIMELINE.startupMinutes;
  const wall = input.wallMinutes ?? defaultRunEndMinutes() + TIMELINE.startupMinutes;
  const cap = input.topology ? capacitySummary(input.topology) : undefined;
  return {
    ...series,
    targetsUp: input.ended ? undefined : targetsUp,
    now: input.ended ? undefined : ((input.nowTs - t.ts0) * S) / 60,
    runEndMinutes: wall - offset,
    expectedRollouts: input.expectedRollouts ?? null,
    inFlightCapacity: input.inFlight ?? cap?.inFlight ?? null,
    settings: input.settings,
  };
}

/**
 * `stable` also needs the rollout durations not to drift (src/analysis/rollout-error.ts rolloutDrift):
 * a trend beyond `max_relative_slope_per_hour` by 2 s.e. and over 4 s.e. (the detector's own rule) makes it `drifting`,
 * which the completion rate alone can miss while the waves still hide it.
 */
function rolloutDriftCheck(verdict: Verdict, limit = 0.05): void {
  const d = verdict.decision_estimate?.drift;
  const slope = Math.abs(d?.slope_relative_per_hour ?? 0);
  if (verdict.state !== 'stable' || !d || !(slope - 2 * d.se > limit && slope > 4 * d.se)) return;
  verdict.state = 'drifting';
  verdict.drift = { slope_relative_per_hour: d.slope_relative_per_hour };
  verdict.evidence.push(
    `rollout durations drift ${round(100 * d.slope_relative_per_hour, 1)}%/h ± ${round(100 * d.se, 1)}% (against their start, after run-minute ${d.from_minute}): beyond ${round(100 * limit, 1)}%/h, not stable`,
  );
}

/**
 * What decisions read of the run (src/analysis/reading.ts): its start cohorts and its own estimate
 * from the rollouts reconstructed from the per-worker duration histogram. Each worker is censored at
 * its own last reading (a counter gone when a job is cancelled ends that worker's data, not the run's).
 */
function decisionReadingOf(
  input: ObserveInput,
  t: TimeLine,
  series: ReturnType<typeof runSeries>,
  d: DetectorInput,
  verdict: Verdict,
): Reading | null {
  const S = input.timeScale;
  const toMin = (points: LabeledSeries['points']) => toRunMinutes(points, t.ts0, S);
  const counts = perWorkerMinutes(input.series.rolloutDurationCount, toMin);
  const batches = reconstructRollouts(perWorkerMinutes(input.series.rolloutDurationSum, toMin), counts, 60);
  const lastCount = series.durationCount.at(-1)?.v;
  const now = d.now ?? ((t.lastTs ?? input.nowTs) - t.ts0) * (S / 60);
  const active = series.activeRollouts.filter((p) => Number.isFinite(p.v) && p.t >= now - 5);
  const inFlight = active.length ? mean(active.map((p) => p.v)) : (d.inFlightCapacity ?? null);
  if (lastCount === undefined || !batches.length) return null;
  const key = (l: Record<string, string>) => l.worker_id ?? JSON.stringify(l);
  const lastSeen = new Map(counts.map((c) => [key(c.labels), c.points.at(-1)?.t ?? now]));
  return decisionReading({
    batches,
    now,
    runEnd: verdict.run_end_minutes ?? d.runEndMinutes ?? now,
    inFlight: inFlight ?? d.inFlightCapacity ?? null,
    completed: lastCount,
    step: (input.stepSeconds * S) / 60,
    lastSeen,
    active: series.activeRollouts,
    expectedRollouts: input.expectedRollouts ?? null,
    final: !!input.ended,
    startedAt: t.startTs,
    trajectory: input.trajectory !== false,
  });
}

/** Reads a series' values after the warm-up (all of them when none is after it). */
function steadyReader(series: RunSeries, fromTs: number) {
  const values = (s: LabeledSeries | undefined) => {
    const pts = (s?.points ?? []).filter(([, v]) => Number.isFinite(v));
    const after = pts.filter(([t]) => t >= fromTs);
    return (after.length ? after : pts).map(([, v]) => v);
  };
  const byLabel = (q: string, label: string) => {
    const m = new Map<string, LabeledSeries>();
    for (const s of series[q] ?? []) {
      const key = s.labels[label];
      if (key !== undefined) m.set(key, s);
    }
    return m;
  };
  return {
    series,
    values,
    byLabel,
    mean: (s: LabeledSeries | undefined) => {
      const v = values(s);
      return v.length ? round(mean(v)) : null;
    },
  };
}
type SteadyReader = ReturnType<typeof steadyReader>;

/** Queue depth min/max by service, idle fraction and CPU: the bottleneck's reading. */
function bottleneckOf(
  input: ObserveInput,
  read: SteadyReader,
  cap: ReturnType<typeof capacitySummary> | undefined,
) {
  const queue: NonNullable<StableMetrics['rpc_queue_depth_at_start_latest_by_service']> = {};
  const queueMax: Partial<Record<ServiceName, number | null>> = {};
  const queueMin: Partial<Record<ServiceName, number | null>> = {};
  const maxes = read.byLabel('queueDepthMax', 'service');
  const mins = read.byLabel('queueDepthMin', 'service');
  for (const label of new Set([...maxes.keys(), ...mins.keys()])) {
    const svc = serviceFromMetricLabel(label);
    const mx = read.mean(maxes.get(label));
    const mn = read.mean(mins.get(label));
    queue[svc ?? label] = { worker_min: mn, worker_max: mx };
    if (svc) {
      queueMax[svc] = mx;
      queueMin[svc] = mn;
    }
  }
  const idle = read.mean(first(input.series, 'idleFraction'));
  const cpuMean: Record<string, number | null> = {};
  for (const [g, v] of processCpu(read)) cpuMean[g] = v.length ? mean(v) : null;
  const bottleneck = analyseBottleneck({
    queueMax,
    queueMin,
    idleFraction: idle,
    processCpu: cpuMean,
    capacity: cap?.byService,
    inFlight: cap?.inFlight,
  });
  return { queue, idle, bottleneck };
}

function processCpu(read: SteadyReader): Map<string, number[]> {
  const cpu = new Map<string, number[]>();
  for (const [g, s] of read.byLabel('processCpu', 'groupname')) cpu.set(g, read.values(s));
  return cpu;
}

function rpcP95ByMethod(read: SteadyReader): Record<string, number | null> {
  const methods: Record<string, number | null> = {};
  for (const [m, s] of read.byLabel('rpcDurationP95', 'method')) {
    const v = read.values(s);
    methods[m] = v.length ? round(median(v)) : null;
  }
  return methods;
}

/** Per-GPU utilisation and memory, host memory and process CPU, with the topology's services per GPU. */
function resourcesOf(input: ObserveInput, read: SteadyReader) {
  type GpuFields = 'utilization' | 'memoryUsedGb' | 'memoryTotalGb' | 'memoryFreeGb' | 'pressurePercent';
  const gpus = new Map<string, Partial<Record<GpuFields, number[]>>>();
  const addGpu = (q: string, field: GpuFields) => {
    for (const s of input.series[q] ?? []) {
      const g = s.labels.gpu;
      if (g === undefined) continue;
      const rec = gpus.get(g) ?? {};
      rec[field] = [...(rec[field] ?? []), ...read.values(s)];
      gpus.set(g, rec);
    }
  };
  addGpu('gpuUtil', 'utilization');
  addGpu('gpuMemory', 'memoryUsedGb');
  addGpu('gpuMemoryFree', 'memoryFreeGb');
  addGpu('gpuMemoryTotal', 'memoryTotalGb');
  addGpu('gpuMemoryPressure', 'pressurePercent');
  return analyseResources({
    gpus,
    services: input.topology ? gpuMap(input.topology) : undefined,
    hostAvailableGb: read.values(first(input.series, 'hostMemAvailable')),
    hostTotalGb: read.values(first(input.series, 'hostMemTotal')),
    processCpu: processCpu(read),
  });
}

/** Completed and failed rollouts and the latest 5-minute and full-run values. */
function countsOf(series: ReturnType<typeof runSeries>) {
  const lastOf = (s: Sample[]) => {
    const f = s.filter((p) => Number.isFinite(p.v));
    return f.length ? round((f[f.length - 1] as Sample).v, 4) : null;
  };
  const total = lastOf(series.completed);
  const nFailed = lastOf(series.failed) ?? (total !== null ? 0 : null);
  return {
    completed_rollouts: total !== null ? total - (nFailed ?? 0) : null,
    failed_rollouts: nFailed,
    seconds_per_rollout_5m: lastOf(series.rate5m),
    seconds_per_rollout_full_run: lastOf(series.fullRun),
  };
}

/** Parses a Slurm time limit ([D-]HH:MM[:SS]) to minutes. */
export function slurmTimeToMinutes(time: string): number | null {
  const m = /^(?:(\d+)-)?(\d{1,2}):(\d{2})(?::(\d{2}))?$/.exec(time);
  if (!m) return null;
  return Number(m[1] ?? 0) * 1440 + Number(m[2]) * 60 + Number(m[3]) + Number(m[4] ?? 0) / 60;
}
