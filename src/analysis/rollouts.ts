// The decision's estimate, from the rollouts themselves. Pure.
//
// Each worker exports the sum and count of `alpasim_rollout_duration_seconds`. Between two scrapes
// the count rises by the rollouts that ended and the sum by their durations, so every increment is
// a batch of rollouts with its end (to scrape resolution), its mean duration, and its start
// (end − duration). In AlpaSim's closed loop every slot starts at once, so the warm-up *is* the
// first wave: the rollouts that started with the run, identified by their start. Dropped, they
// leave steady data; the rollouts still in flight are censored (they have lasted at least their
// age), not missing. The mean duration W is the Kaplan–Meier restricted mean over the steady
// rollouts, ended and in flight; Little's law gives the steady rate (in flight ÷ W), and the
// full-run projection follows as the detector's does. The verdict keeps its own warm-up rule
// (MSER): this estimate is the one decisions read.
import type { Interval } from '../types/generated/metrics.js';
import {
  durationError,
  type ErrorBasis,
  MIN_ERROR_BLOCKS,
  type RolloutDrift,
  rolloutDrift,
} from './rollout-error.js';
import { type LabeledSeries, round, type Sample } from './series.js';

/** Rollouts that ended between two scrapes of one worker (run-minutes; duration in minutes). */
export interface RolloutBatch {
  worker: string;
  end: number;
  n: number;
  /** Mean duration of the batch, run-minutes. */
  duration: number;
  start: number;
}

/**
 * Per-worker increments of the duration histogram's sum and count → batches of rollouts. A counter
 * reset (a restarted worker) starts the worker's counting again; a batch is kept whole (its
 * rollouts are not told apart).
 */
export function reconstructRollouts(
  sum: ReadonlyArray<{ labels: Record<string, string>; points: readonly Sample[] }>,
  count: ReadonlyArray<{ labels: Record<string, string>; points: readonly Sample[] }>,
  /** Seconds of duration per run-minute (60 for real AlpaSim; 60 ÷ timeScale for the twin). */
  secondsPerRunMinute = 60,
): RolloutBatch[] {
  const key = (l: Record<string, string>) => l.worker_id ?? JSON.stringify(l);
  const sums = new Map(sum.map((s) => [key(s.labels), s.points]));
  const out: RolloutBatch[] = [];
  for (const c of count) {
    const worker = key(c.labels);
    const sp = sums.get(worker);
    if (!sp) continue;
    const sAt = new Map(sp.map((p) => [p.t, p.v]));
    let prev: { n: number; s: number } | null = null;
    for (const p of c.points) {
      const s = sAt.get(p.t);
      if (s === undefined || !Number.isFinite(p.v) || !Number.isFinite(s)) continue;
      if (prev && p.v >= prev.n && s >= prev.s) {
        const dn = Math.round(p.v - prev.n);
        if (dn > 0) {
          const duration = (s - prev.s) / dn / secondsPerRunMinute;
          out.push({ worker, end: p.t, n: dn, duration, start: p.t - duration });
        }
      }
      prev = { n: p.v, s };
    }
  }
  return out.sort((a, b) => a.end - b.end);
}

export interface RolloutEstimateInput {
  batches: readonly RolloutBatch[];
  /** Run-minute now. */
  now: number;
  /** Run-minute the projection is made for (the job's end, as the verdict's). */
  runEnd: number;
  /** Rollouts in flight (the gauge, else the topology's capacity). */
  inFlight: number | null;
  /** Rollouts finished by now, all of them (the first wave's too). */
  completed: number;
  /** Scrape step in run-minutes (a start is known to this resolution). */
  step: number;
}

export interface RolloutEstimate {
  projected_full_run: Interval;
  /** Run-minute the steady data starts at: the first wave's last start (the run's start) plus a step. */
  first_wave_end_minutes: number;
  mean_duration_minutes: number;
  steady_rollouts: number;
  censored_rollouts: number;
  first_wave_rollouts: number;
  /** What the standard error rests on; `enough: false` → no claim on it. */
  error_basis: ErrorBasis;
  /** Durations against start time after the transient (the drift guard's input); null: too few blocks. */
  drift: RolloutDrift | null;
  evidence: string;
}

/** Fewer steady rollouts than this: no estimate (the small-sample guard of the estimate itself). */
export const MIN_STEADY_ROLLOUTS = 20;

/**
 * The decision's estimate, or null (no in-flight count, or too few steady rollouts yet). The
 * standard error is the independent rollouts' one plus the shared variation between blocks of starts
 * (src/analysis/rollout-error.ts), with its basis; the drift is the durations' trend over start time.
 */
export function rolloutEstimate(i: RolloutEstimateInput): RolloutEstimate | null {
  const I = i.inFlight;
  if (!I || !(I > 0) || !i.batches.length) return null;
  const { steady, firstWave, firstWaveEnd } = splitFirstWave(i.batches, i.now, i.step);
  const n = steady.reduce((a, b) => a + b.n, 0);
  if (n < MIN_STEADY_ROLLOUTS) return null;
  // the rollouts in flight started at the latest ends (each end restarts its slot): censored at their age
  const ends = i.batches.filter((b) => b.end <= i.now).flatMap((b) => Array<number>(b.n).fill(b.end));
  const inFlightStarts = ends.slice(-Math.min(I, ends.length)).filter((s) => s > firstWaveEnd);
  const W = kaplanMeierMean(
    steady.map((b) => ({ t: b.duration, n: b.n })),
    inFlightStarts.map((s) => i.now - s),
  );
  if (!(W > 0)) return null;
  const { se, basis } = durationError(steady, W, n, i.now, i.step);
  const drift = rolloutDrift(steady, W, i.now, i.step);
  const rate = I / W; // Little's law: rollouts per run-minute
  const future = rate * Math.max(0, i.runEnd - i.now);
  const value = (60 * i.runEnd) / (i.completed + future);
  const rel = (se / W) * (future / (i.completed + future));
  const projected: Interval = {
    value: round(value, 4),
    low: round(value * Math.exp(-1.96 * rel), 4),
    high: round(value * Math.exp(1.96 * rel), 4),
  };
  return {
    projected_full_run: projected,
    first_wave_end_minutes: round(firstWaveEnd, 2),
    mean_duration_minutes: round(W, 4),
    steady_rollouts: n,
    censored_rollouts: inFlightStarts.length,
    first_wave_rollouts: firstWave,
    error_basis: basis,
    drift,
    evidence: `decision estimate from rollouts: ${n} ended after the first wave (${firstWave} of the first wave dropped, started by run-minute ${round(firstWaveEnd, 1)}), ${inFlightStarts.length} in flight censored; mean duration ${round(60 * W, 1)} s ± ${round(100 * (se / W), 1)}% (${basisText(basis)}) → ${round(rate, 2)} rollouts/min with ${I} in flight; projected full-run ${projected.value} [${projected.low}, ${projected.high}] s/rollout`,
  };
}

/** "error from 9 blocks of 1.6 min of starts (independent rollouts)", or why it is not enough. */
export function basisText(b: ErrorBasis): string {
  const blocks = `${b.blocks} block${b.blocks === 1 ? '' : 's'} of ${b.block_minutes} min of starts`;
  return b.enough
    ? `error from ${b.rollouts} rollouts in ${blocks}, ${b.method}`
    : `error basis too thin: ${b.rollouts} rollouts in ${blocks}, fewer than ${MIN_ERROR_BLOCKS} independent blocks`;
}

/**
 * The first wave and the steady rollouts. A batch may mix both (a first-wave rollout and a later one
 * ending between the same scrapes of a worker): see `splitBatch`; the first wave's part is dropped.
 */
function splitFirstWave(batches: readonly RolloutBatch[], now: number, step: number) {
  const t0 = Math.min(...batches.map((b) => b.start));
  const firstEnd = Math.min(...batches.map((b) => b.end));
  const firstWaveEnd = t0 + step;
  const steady: RolloutBatch[] = [];
  let firstWave = 0;
  for (const b of batches) {
    if (b.end > now) continue;
    const x = splitBatch(b, t0, firstEnd, step);
    firstWave += x.firstWave;
    if (x.rest) steady.push(x.rest);
  }
  return { steady, firstWave, firstWaveEnd };
}

/**
 * A batch split into its first-wave rollouts and the rest: a first-wave rollout lasted end − t0, a
 * later one at most end − (the first end of the run), so the batch holds at least k first-wave
 * rollouts, the smallest k that leaves the others a possible mean.
 */
export function splitBatch(
  b: RolloutBatch,
  t0: number,
  firstEnd: number,
  step: number,
): { firstWave: number; rest: RolloutBatch | null } {
  if (b.start <= t0 + step) return { firstWave: b.n, rest: null };
  const longest = b.end - firstEnd + step; // a later rollout started at the first end or after
  let k = 0;
  let rest = b.duration;
  while (k < b.n && rest > longest) {
    k++;
    rest = k < b.n ? (b.n * b.duration - k * (b.end - t0)) / (b.n - k) : 0;
  }
  return {
    firstWave: k,
    rest: k < b.n && rest > 0 ? { ...b, n: b.n - k, duration: rest, start: b.end - rest } : null,
  };
}

/**
 * Kaplan–Meier restricted mean: events (ended rollouts, weighted by count) and censored ages (in
 * flight). The mean is the area under the survival curve up to the last event.
 */
export function kaplanMeierMean(
  events: ReadonlyArray<{ t: number; n: number }>,
  censored: readonly number[],
): number {
  const all = [
    ...events.map((e) => ({ t: e.t, d: e.n, c: 0 })),
    ...censored.map((t) => ({ t, d: 0, c: 1 })),
  ].sort((a, b) => a.t - b.t || b.d - a.d);
  let atRisk = all.reduce((a, x) => a + x.d + x.c, 0);
  let S = 1;
  let area = 0;
  let last = 0;
  for (const x of all) {
    if (x.d > 0) {
      area += S * (x.t - last);
      last = x.t;
      S *= 1 - x.d / atRisk;
    }
    atRisk -= x.d + x.c;
  }
  return area;
}

/** The estimate per run-minute, compactly: what the record keeps so others compare at equal run age. */
export interface EstimateTrajectory {
  from_minute: number;
  step_minutes: number;
  /** Projected full-run seconds per rollout at from_minute + k × step_minutes. */
  values: number[];
  /** Its standard error on the log scale. */
  log_se: number[];
  /** First run-minute whose error basis was enough for a claim; null: none yet. */
  basis_from_minute: number | null;
  /** The rollout-level drift at that minute (relative per hour) and its s.e.; null: not measurable yet. */
  drift_slope: Array<number | null>;
  drift_se: Array<number | null>;
}

/**
 * The decision's estimate as it was at each whole run-minute up to now (the same data cut at that
 * minute), or null before the first one. The record keeps it, so a later candidate is compared with
 * this run as it was at the candidate's run-minute (src/analysis/decision.ts referenceAtAge).
 */
export function estimateTrajectory(i: RolloutEstimateInput, stepMinutes = 1): EstimateTrajectory | null {
  const values: number[] = [];
  const logSe: number[] = [];
  const slope: Array<number | null> = [];
  const slopeSe: Array<number | null> = [];
  let from: number | null = null;
  let basisFrom: number | null = null;
  const sorted = [...i.batches].sort((a, b) => a.end - b.end);
  for (let m = Math.ceil(sorted[0]?.end ?? i.now); m <= i.now + 1e-9; m += stepMinutes) {
    const later = sorted.filter((b) => b.end > m).reduce((a, b) => a + b.n, 0);
    const e = rolloutEstimate({ ...i, now: m, completed: Math.max(0, i.completed - later) });
    if (!e) {
      if (from === null) continue;
      values.push(values.at(-1) as number);
      logSe.push(logSe.at(-1) as number);
      slope.push(slope.at(-1) ?? null);
      slopeSe.push(slopeSe.at(-1) ?? null);
      continue;
    }
    from ??= m;
    const p = e.projected_full_run;
    values.push(p.value);
    logSe.push(round((Math.log(p.high) - Math.log(p.low)) / (2 * 1.96), 5));
    slope.push(e.drift?.slope_relative_per_hour ?? null);
    slopeSe.push(e.drift?.se ?? null);
    if (basisFrom === null && e.error_basis.enough) basisFrom = m;
  }
  return from === null
    ? null
    : {
        from_minute: from,
        step_minutes: stepMinutes,
        values,
        log_se: logSe,
        basis_from_minute: basisFrom,
        drift_slope: slope,
        drift_se: slopeSe,
      };
}

/** The per-worker sum and count series of one run, in run-minutes, for reconstructRollouts. */
export function perWorkerMinutes(
  series: readonly LabeledSeries[] | undefined,
  toMinutes: (points: LabeledSeries['points']) => Sample[],
): Array<{ labels: Record<string, string>; points: Sample[] }> {
  return (series ?? []).map((s) => ({ labels: s.labels, points: toMinutes(s.points) }));
}
