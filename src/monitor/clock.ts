// One clock (part of stage `observe`): a run's minutes are counted from Slurm's start time to
// Prometheus's own now (an instant `time()`), never from the runner's wall clock alone. The runner's
// clock is checked against both each pass: more than MAX_SKEW_SECONDS off Prometheus's now, or
// behind a time Slurm already printed, and the experiment is held (no verdict, failure, stop or
// Outcome is written from it; its pull requests keep their check and label) and the pass reports
// the skew. Prometheus unreadable: the runner's clock is used, checked against Slurm's alone (its
// metrics are then unreadable too, which holds the experiment anyway).
import { isLive, isWaiting } from '../slurm/types.js';
import type { PrometheusClient } from '../telemetry/prometheus.js';
import type { MonitorJob, MonitorPorts } from './ports.js';
import { clockOf } from './read.js';
import type { ExperimentPass, PassClock, PassOptions } from './state.js';

/** How far the runner's clock may be off Prometheus's or Slurm's before nothing is judged from it. */
export const MAX_SKEW_SECONDS = 60;

/** Prometheus's now (unix seconds), from an instant `time()` at the server's own time; null if unreadable. */
export async function prometheusNow(prometheus: PrometheusClient): Promise<number | null> {
  try {
    const r = await prometheus.instant('time()');
    const ts = r.resultType === 'scalar' ? r.series[0]?.points[0]?.[1] : undefined;
    return ts !== undefined && Number.isFinite(ts) && ts > 0 ? ts : null;
  } catch {
    return null;
  }
}

/**
 * The latest time Slurm printed as past for these jobs, or null: submit times, a start once the job
 * left PENDING, an end once it ended (a pending job's start and a live job's end are forecasts).
 */
export function slurmLatest(jobs: readonly MonitorJob[]): number | null {
  const times = jobs
    .flatMap((j) => [j.submitTs, isWaiting(j.status) ? null : j.startTs, isLive(j.status) ? null : j.endTs])
    .filter((t): t is number => !!t);
  return times.length ? Math.max(...times) : null;
}

function duration(seconds: number): string {
  const s = Math.round(Math.abs(seconds));
  if (s < 120) return `${s} s`;
  const m = Math.round(s / 60);
  return m < 120 ? `${m} min` : `${Math.floor(m / 60)} h ${m % 60} min`;
}

/**
 * Why the runner's clock cannot be trusted this pass, or null: `runner` off Prometheus's now by
 * more than MAX_SKEW_SECONDS, or behind a time Slurm printed by more than that.
 */
export function clockSkew(
  runner: number,
  ref: { prometheus: number | null; slurm: number | null },
): string | null {
  const iso = (ts: number) => `${new Date(ts * 1000).toISOString().slice(0, 19)}Z`;
  if (ref.prometheus !== null && Math.abs(runner - ref.prometheus) > MAX_SKEW_SECONDS)
    return `the runner's clock (${iso(runner)}) is ${duration(runner - ref.prometheus)} ${runner > ref.prometheus ? 'ahead of' : 'behind'} Prometheus's (${iso(ref.prometheus)}), more than ${MAX_SKEW_SECONDS} s: no verdict is written from it (fix the runner's time synchronisation)`;
  if (ref.slurm !== null && ref.slurm - runner > MAX_SKEW_SECONDS)
    return `the runner's clock (${iso(runner)}) is at least ${duration(ref.slurm - runner)} behind a time Slurm printed (${iso(ref.slurm)}), more than ${MAX_SKEW_SECONDS} s: no verdict is written from it (fix the runner's time synchronisation)`;
  return null;
}

/**
 * The experiment's clock from Prometheus's now when a run is to be counted in run-minutes, and the
 * runner's checked against it and Slurm's (`skew`). Nothing to count: the clock as read.
 */
export async function readClock(
  e: ExperimentPass,
  ports: MonitorPorts,
  options: PassOptions,
): Promise<PassClock> {
  if (!e.candidates.some((p) => p.inPass && p.job?.startTs)) return e.clock;
  const runner = ports.now();
  const prometheus = await prometheusNow(e.exp.prometheus ?? ports.prometheus);
  const skew = clockSkew(runner, { prometheus, slurm: slurmLatest(e.jobs) });
  return {
    ...clockOf(e.exp, options, prometheus ?? runner),
    source: prometheus !== null ? 'prometheus' : 'runner',
    ...(skew ? { skew } : {}),
  };
}
