// The campaign bench's world: one twin profile (the truth), and every run a method starts on it.
// A run of a topology is a trace of the trace family (bench/trace-family.ts) whose steady seconds
// per rollout is the twin's steady value for that topology, with the topology's rollouts in flight
// and runtime workers. The campaign's seed picks the family shape every run of the campaign shares
// (start-up and congestion, synchronized waves, a cycle, noisy workers: properties of the cluster and
// the scene set more than of a topology); each run then draws its own noise and, one in twenty each,
// an incident: a crash (20-60 run-minutes) or a drift (+25%/h). Every method sees the same run of the
// same topology in one seed (common random numbers). A topology the twin's memory model puts above a
// GPU's size runs out of memory at start-up. Verdicts are the monitor's (observeRun) on the run's
// series up to a look, in memory (see series.ts for how that relates to the Prometheus path).

import type { VerdictLike } from '../../src/analysis/decision.js';
import { observeRun } from '../../src/analysis/observe.js';
import { type SteadyState, steadyState } from '../../src/sim/model.js';
import { createRng } from '../../src/sim/rng.js';
import { oomLine } from '../../src/sim/run.js';
import type { TriedCandidate } from '../../src/suggest/types.js';
import { capacitySummary } from '../../src/topology/capacity.js';
import { topologyHash } from '../../src/topology/expand.js';
import type { Verdict } from '../../src/types/generated/metrics.js';
import type { Topology } from '../../src/types/generated/topology.js';
import type { TwinProfile } from '../../src/types/generated/twin-profile.js';
import { type RunSpec, SHAPES, type Shape } from '../trace-family.js';
import { stableMetrics } from './observation.js';
import { seriesAt, type TraceSeries, traceSeries } from './series.js';

/** GPUs of a run (a whole node). */
export const GPUS = 8;
/** Job minutes before the first metrics (AlpaSim's start-up). */
export const STARTUP = 5;
/** Run-minutes a run may take at most (max_decision_minutes; ASHA's and Hyperband's max_t too). */
export const MAX_MINUTES = 120;
export const SCRAPE_SECONDS = 15;
const START_UNIX = 1_800_000_000;

export interface SimRun {
  /** The topology's hash. */
  key: string;
  /** This job's id: the key, or the key and its attempt for a rerun (its own noise and incidents). */
  id: string;
  topology: Topology;
  truth: SteadyState;
  /** Runs out of GPU memory at start-up. */
  oom: boolean;
  shape: Shape;
  inFlight: number;
}

/**
 * FNV-1a, then MurmurHash3's finalizer: FNV alone mixes its last characters into the low bits so
 * poorly that a rerun's id (the key and `#1`) drew the first attempt's incident about 1 time in 5.
 */
export function hash32(s: string): number {
  let h = 2166136261;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619);
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** Incidents, one in twenty each: a crash (20-60 run-minutes) or a drift (+25%/h). */
export const INCIDENT_RATE = 0.05;

/** A job's incident, drawn from its own stream: a rerun's and a reference job's independent of any other job's. */
export function incidentOf(seed: number, id: string): { crashAtMinutes?: number; driftPerHour?: number } {
  const rng = createRng(hash32(`incident/${seed}/${id}`));
  const u = rng.next();
  if (u < INCIDENT_RATE) return { crashAtMinutes: 20 + Math.floor(rng.next() * 41) };
  if (u < 2 * INCIDENT_RATE) return { driftPerHour: 0.25 };
  return {};
}

/**
 * The steady rate of a family shape relative to its nominal one: each slot's rollouts last
 * exp(k·jitter·Z) (× 1.3, k = 3 on a noisy worker) × the cycle at their start, so a slot completes
 * 1 ÷ E[duration] per unit. `baseMinutes` (in flight × steady seconds ÷ 60) places a rollout against
 * the cycle: a slot whose rollouts last about a period starts them near one phase.
 */
export function rateFactor(shape: Shape, inFlight: number, workers: number, baseMinutes = 0): number {
  const noisyWorkers = Math.min(workers, shape.noisyWorkers ?? 0);
  let noisySlots = 0;
  for (let slot = 0; slot < inFlight; slot++) if (slot % workers < noisyWorkers) noisySlots++;
  const j = shape.jitter;
  const cycle = (k: number, slow: number) =>
    shape.cycle ? cycleMean(shape.cycle, baseMinutes * slow, k * j) : 1;
  const clean = (inFlight - noisySlots) / (Math.exp((j * j) / 2) * cycle(1, 1));
  const noisy = noisySlots / (1.3 * Math.exp((9 * j * j) / 2) * cycle(3, 1.3));
  return (clean + noisy) / inFlight;
}

const cycleMeans = new Map<string, number>();

/**
 * The mean of the cycle's factor at a slot's rollout starts, in the long run: rollouts lasting about
 * a period do not sample its phases evenly (they lock onto the slow one), so a cyclic world runs
 * slower than its nominal rate by a factor that depends on the rollout's length. Measured on one
 * slot's sequence of 20,000 rollouts (a fixed stream: the same figure for the same arguments).
 */
export function cycleMean(
  cycle: { periodMinutes: number; amplitude: number },
  baseMinutes: number,
  sigma: number,
): number {
  if (!(baseMinutes > 0)) return 1;
  const key = `${cycle.periodMinutes}/${cycle.amplitude}/${baseMinutes.toPrecision(6)}/${sigma}`;
  let mean = cycleMeans.get(key);
  if (mean === undefined) {
    const rng = createRng(hash32(`cycle/${key}`));
    const at = (t: number) => 1 + cycle.amplitude * Math.sin((2 * Math.PI * t) / cycle.periodMinutes);
    let t = 0;
    let sum = 0;
    const burn = 500;
    const n = 20_000;
    for (let i = 0; i < burn + n; i++) {
      const c = at(t);
      if (i >= burn) sum += c;
      t = (t + baseMinutes * c * Math.exp(sigma * rng.normal())) % (1000 * cycle.periodMinutes);
    }
    mean = sum / n;
    cycleMeans.set(key, mean);
  }
  return mean;
}

/**
 * A run's nominal steady seconds per rollout, so that its world's long-run rate is the truth's: the
 * cycle's factor depends on the rollout's length, which depends on the answer (a fixed point).
 */
export function nominalSeconds(truth: number, shape: Shape, inFlight: number, workers: number): number {
  let s = truth * rateFactor(shape, inFlight, workers);
  if (!shape.cycle) return s;
  for (let i = 0; i < 8; i++) s = truth * rateFactor(shape, inFlight, workers, (inFlight * s) / 60);
  return s;
}

export class World {
  private readonly truths = new Map<string, SteadyState>();
  private readonly traces = new Map<string, TraceSeries>();
  private readonly verdicts = new Map<string, Verdict>();
  readonly observeCalls = { n: 0, ms: 0 };

  /** The family shape of this campaign's runs. */
  readonly shape: Shape;

  constructor(
    readonly profile: TwinProfile,
    readonly seed: number,
  ) {
    const shared = SHAPES.filter((s) => s.crashAtMinutes === undefined && !s.driftPerHour);
    this.shape = shared[seed % shared.length]!;
  }

  steady(t: Topology): SteadyState {
    const key = topologyHash(t);
    let ss = this.truths.get(key);
    if (!ss) {
      ss = steadyState(t, this.profile);
      this.truths.set(key, ss);
    }
    return ss;
  }

  /** A job of a topology; `attempt` > 0 is a rerun of it: the same truth, its own noise and incidents. */
  run(t: Topology, attempt = 0): SimRun {
    const key = topologyHash(t);
    const id = attempt ? `${key}#${attempt}` : key;
    const truth = this.steady(t);
    const inFlight = Math.max(1, capacitySummary(t).inFlight);
    const incident = incidentOf(this.seed, id);
    const workers = Math.max(1, Math.min(inFlight, t.runtime?.nr_workers ?? 1));
    const shape: Shape = {
      ...this.shape,
      inFlight,
      workers,
      // the family's log-normal noise, noisy workers and cycle slow a run on average: scaled out, so
      // the run's steady rate is the twin's (they stay as scatter, as unequal workers, as the cycle)
      steadySeconds: nominalSeconds(truth.secondsPerRollout, this.shape, inFlight, workers),
      ...incident,
    };
    shape.name = `${this.shape.name}${incident.crashAtMinutes !== undefined ? `+crash@${shape.crashAtMinutes}` : incident.driftPerHour ? '+drift' : ''}`;
    return { key, id, topology: t, truth, oom: !!truth.oom, shape, inFlight };
  }

  /** The trace family's spec of a run (its seed is the world's and the topology's). */
  spec(r: SimRun): RunSpec {
    return {
      shape: r.shape,
      seed: hash32(`${this.seed}/${r.id}`),
      factor: 1,
      runName: `run-${r.id.slice(0, 12)}`,
      endMinutes: MAX_MINUTES + 1,
      scrapeSeconds: SCRAPE_SECONDS,
    };
  }

  trace(r: SimRun): TraceSeries {
    let tr = this.traces.get(r.id);
    if (!tr) {
      tr = traceSeries(this.spec(r), START_UNIX);
      this.traces.set(r.id, tr);
    }
    return tr;
  }

  /** The run crashes (a trace-family crash, not running out of memory). */
  crashes(r: SimRun): boolean {
    return !r.oom && r.shape.crashAtMinutes !== undefined;
  }

  /** The run crashed before this run-minute (its data ends). */
  crashedBy(r: SimRun, minute: number): boolean {
    return r.shape.crashAtMinutes !== undefined && minute > r.shape.crashAtMinutes;
  }

  /** The monitor's verdict at a look (observeRun on the series up to then), cached per run and minute. */
  verdict(r: SimRun, minute: number): Verdict {
    const m = r.shape.crashAtMinutes !== undefined ? Math.min(minute, r.shape.crashAtMinutes) : minute;
    const k = `${r.id}@${m}`;
    let v = this.verdicts.get(k);
    if (!v) {
      const tr = this.trace(r);
      const t0 = performance.now();
      v = observeRun({
        runName: 'run',
        series: seriesAt(tr, m),
        timeScale: 1,
        nowTs: tr.startUnix + m * 60,
        stepSeconds: SCRAPE_SECONDS,
        inFlight: r.inFlight,
        ended: false,
      }).observation.verdict;
      this.observeCalls.n++;
      this.observeCalls.ms += performance.now() - t0;
      this.verdicts.set(k, v);
    }
    return v;
  }

  /** AlpaSim's full-run value (max elapsed ÷ rollouts) at a run-minute: what a person or ASHA reads. */
  fullRun(r: SimRun, minute: number): number | undefined {
    const tr = this.trace(r);
    const at = tr.startUnix + minute * 60 + 1e-6;
    let v: number | undefined;
    for (const [ts, x] of tr.fullRun) {
      if (ts > at) break;
      v = x;
    }
    return v;
  }

  /** The run as suggest reads it from the record: the decided verdict and the steady metrics. */
  tried(
    name: string,
    r: SimRun,
    parent: string | null,
    verdict: VerdictLike | null,
    status: TriedCandidate['status'],
  ): TriedCandidate {
    if (r.oom)
      return {
        name,
        parent,
        topology: r.topology,
        status: 'failed',
        observation: {
          failure: {
            kind: 'gpu-oom',
            // the message a real run's log gives (the twin's own job writes the same line)
            message: oomLine(
              r.truth.oom?.gpu ?? 0,
              r.truth.oom?.triedGb ?? 0,
              r.truth.oom?.usedGb ?? 0,
              r.truth.oom?.totalGb ?? 0,
            ),
            gpu: r.truth.oom?.gpu ?? null,
          },
        },
      };
    const rng = createRng(hash32(`${this.seed}#${r.key}`));
    return {
      name,
      parent,
      topology: r.topology,
      status,
      observation: {
        ...(verdict
          ? { verdict: { ...(verdict as Verdict), evidence: (verdict as Verdict).evidence ?? [] } }
          : {}),
        stable_metrics: stableMetrics(r.topology, r.truth, rng),
      },
    };
  }
}

/** GPU-minutes a method spent, by wall clock: each run holds its node from its start to its stop. */
export class Ledger {
  /**
   * `baseline`: a job of the baseline (its first run or a rerun), not counted as a later run;
   * `horizon`: a candidate held to the decision horizon (MAX_MINUTES) without a decision before it.
   */
  readonly runs: Array<{ start: number; stop: number; oom: boolean; baseline: boolean; horizon: boolean }> =
    [];
  /** (wall minute, truth of the incumbent) each time the method's answer changed. */
  readonly incumbent: Array<{ at: number; seconds: number; name: string }> = [];

  add(start: number, jobMinutes: number, oom: boolean, baseline = false, horizon = false): void {
    this.runs.push({ start, stop: start + jobMinutes, oom, baseline, horizon });
  }

  /** GPU-hours of candidates held to the horizon. */
  horizonGpuHours(): number {
    return this.runs.filter((r) => r.horizon).reduce((a, r) => a + (GPUS * (r.stop - r.start)) / 60, 0);
  }

  /** GPU-hours spent by wall minute t (runs in flight counted up to t). */
  gpuHoursAt(t: number): number {
    return this.runs.reduce((a, r) => a + (GPUS * Math.max(0, Math.min(t, r.stop) - r.start)) / 60, 0);
  }

  total(): number {
    return this.runs.reduce((a, r) => a + (GPUS * (r.stop - r.start)) / 60, 0);
  }

  end(): number {
    return Math.max(0, ...this.runs.map((r) => r.stop));
  }

  setIncumbent(at: number, seconds: number, name: string): void {
    const last = this.incumbent.at(-1);
    if (last && last.name === name) return;
    this.incumbent.push({ at, seconds, name });
  }

  /** Wall minute and GPU-hours when the incumbent first came within `within` of the optimum. */
  reached(optimum: number, within: number): { at: number; gpuHours: number } | null {
    const hit = this.incumbent.find((i) => i.seconds <= optimum * (1 + within));
    return hit ? { at: hit.at, gpuHours: this.gpuHoursAt(hit.at) } : null;
  }

  final(): { seconds: number; name: string } | null {
    const last = this.incumbent.at(-1);
    return last ? { seconds: last.seconds, name: last.name } : null;
  }

  oomRuns(): number {
    return this.runs.filter((r) => r.oom).length;
  }

  /** Jobs that ran out of GPU memory, the baseline's own jobs (first run and rerun) left out. */
  oomAfterBaseline(): number {
    return this.runs.filter((r) => r.oom && !r.baseline).length;
  }
}
