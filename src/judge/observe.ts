// The observation half of the judge: one run (its job, its series, the clock) analysed as of now
// or as of its end (src/analysis/observe.ts observeRun), with the one rule for a run that never sent
// metrics and the one rule for when a run without a job (a run read from Prometheus alone) ended.
import type { DetectorSettings } from '../analysis/detector.js';
import { defaultRunEndMinutes } from '../analysis/detector.js';
import { observeRun, type RunAnalysis, type RunSeries, slurmTimeToMinutes } from '../analysis/observe.js';
import { TIMELINE } from '../catalog/alpasim.js';
import { isLive } from '../slurm/types.js';
import { experimentSettings, type SettingsSource } from '../topology/settings.js';
import type { CandidateObservation } from '../types/generated/metrics.js';
import type { Topology } from '../types/generated/topology.js';
import type { RunJob } from './job.js';

/** The clock a run is judged by. */
export interface RunClock {
  /** The evaluation time (unix seconds): Prometheus's now, or `--at`. */
  nowTs: number;
  /** 1 for real AlpaSim; the twin's compression factor otherwise. */
  timeScale: number;
  /** Prometheus step of the series, seconds. */
  stepSeconds: number;
  /** The job's wall time in run-minutes (experimentLimits). */
  wallMinutes?: number | null;
  /** Rollouts the run makes in all (experimentLimits). */
  expectedRollouts?: number | null;
}

/** A run as the judge reads it: every surface builds this, with the same fields. */
export interface RunToJudge {
  runName: string;
  /**
   * Its Slurm job (./job.ts); null: it has none yet (queued); absent: a run read from Prometheus
   * alone (`topo analyze`), judged by its samples.
   */
  job?: RunJob | null;
  series: RunSeries;
  /** Quantities no query returned. */
  missing?: string[];
  clock: RunClock;
  topology?: Topology;
  /** Rollouts in flight when no topology says it (`topo analyze --in-flight`). */
  inFlight?: number | null;
  settings?: Partial<DetectorSettings>;
  /** Metrics are unreadable (an outage): a run is never failed for their absence. */
  unavailable?: boolean;
  /** Run-minutes of RUNNING without any metrics before the run fails with no-telemetry. */
  telemetryDeadlineMinutes?: number;
  /**
   * Without a job: judge as of `clock.nowTs` exactly (`--at`), instead of as of the run's last
   * sample once its samples stopped.
   */
  fixedTime?: boolean;
  /**
   * The observation its last look wrote (the monitor's comment): a decision once reached stays, and
   * a run that ended keeps the verdict its last live look reached. null: there is a memory and it
   * is empty; absent: a surface with no memory of looks (`topo status`, `topo analyze`), where a
   * cancelled run's stopper is read from the decision it has now.
   */
  memory?: CandidateObservation | null;
}

/** A run observed: its analysis (none before its job started), whether it ended, and when it was judged. */
export interface ObservedRun {
  analysis?: RunAnalysis;
  ended: boolean;
  /** The moment judged (unix seconds). */
  atTs: number;
}

/** Wall minutes and rollouts of an experiment's runs (fixed_inputs): the clock's other half. */
export function experimentLimits(experiment: SettingsSource): {
  wallMinutes: number;
  expectedRollouts: number | null;
} {
  const s = experimentSettings(experiment);
  return {
    wallMinutes:
      (s.slurmTime ? slurmTimeToMinutes(s.slurmTime) : null) ??
      defaultRunEndMinutes() + TIMELINE.startupMinutes,
    expectedRollouts: s.expectedRollouts,
  };
}

function analyse(run: RunToJudge, nowTs: number, ended: boolean): RunAnalysis {
  const { clock } = run;
  return observeRun({
    runName: run.runName,
    series: run.series,
    timeScale: clock.timeScale,
    nowTs,
    stepSeconds: clock.stepSeconds,
    jobStartTs: run.job?.startTs ?? null,
    wallMinutes: clock.wallMinutes ?? null,
    expectedRollouts: clock.expectedRollouts ?? null,
    topology: run.topology,
    inFlight: run.inFlight ?? null,
    settings: run.settings,
    missing: run.missing,
    ended,
  });
}

/** The run observed as of now, or as of its end when its job ended (with the verdict it kept). */
export function observeRunOf(run: RunToJudge): ObservedRun {
  return keepLastLiveVerdict(run, observeNow(run));
}

function observeNow(run: RunToJudge): ObservedRun {
  const { job, clock } = run;
  if (job === undefined) return observeWithoutJob(run);
  if (job === null) return { ended: false, atTs: clock.nowTs };
  const ended = !isLive(job.status);
  if (!job.startTs) return { ended, atTs: clock.nowTs };
  const atTs = job.endTs && ended ? Math.min(clock.nowTs, job.endTs) : clock.nowTs;
  const analysis = analyse(run, atTs, ended);
  // no telemetry at all: starting for a while, then a failure of its own
  const minutesRunning = ((atTs - job.startTs) * clock.timeScale) / 60;
  if (
    !run.unavailable &&
    analysis.startTs === null &&
    (ended || pastTelemetryDeadline(run, atTs)) &&
    !job.failure
  )
    analysis.observation.failure = {
      kind: 'no-telemetry',
      message: `no metrics for run_name="${run.runName}" ${Math.round(minutesRunning)} run-minutes after the job started`,
    };
  return { analysis, ended, atTs };
}

/**
 * Wall seconds a live job may run without its first sample, whatever the run-minute deadline says.
 * The deadline is in run-minutes (3 × the start-up, 15): at the twin's 60× that is 15 s of wall
 * clock, which a healthy run that merely started slowly on a loaded machine overran (its first metrics
 * came later), and was failed and stopped. On a real cluster (time scale 1) the deadline is 900 s and
 * this floor never binds.
 */
export const NO_TELEMETRY_WALL_FLOOR_SECONDS = 120;

/**
 * A live job without any sample is failed once it ran past the deadline in run-minutes
 * (telemetryDeadlineMinutes, else 3 × the start-up) and past NO_TELEMETRY_WALL_FLOOR_SECONDS of wall.
 */
function pastTelemetryDeadline(run: RunToJudge, atTs: number): boolean {
  const { job, clock } = run;
  if (!job?.startTs) return false;
  const wallSeconds = atTs - job.startTs;
  const deadline = run.telemetryDeadlineMinutes ?? 3 * TIMELINE.startupMinutes;
  return (wallSeconds * clock.timeScale) / 60 >= deadline && wallSeconds >= NO_TELEMETRY_WALL_FLOOR_SECONDS;
}

const isStable = (v: string | undefined) => v === 'stable' || v === 'cyclic';

/**
 * A run that ended keeps the verdict its last live look reached (a window rule may flip at the cut):
 * the judge's rule, read from its memory.
 */
function keepLastLiveVerdict(run: RunToJudge, observed: ObservedRun): ObservedRun {
  const { analysis, ended } = observed;
  const previous = run.memory;
  if (
    !analysis ||
    !ended ||
    previous?.run_name !== run.runName ||
    !isStable(previous.verdict.state) ||
    isStable(analysis.observation.verdict.state)
  )
    return observed;
  const note = 'verdict of the last pass before the run ended';
  const evidence = previous.verdict.evidence.includes(note)
    ? previous.verdict.evidence
    : [...previous.verdict.evidence, note];
  const observation = { ...analysis.observation, verdict: { ...previous.verdict, evidence } };
  return { ...observed, analysis: { ...analysis, observation } };
}

/** A run with no job: as of now, or as of its last sample once its samples stopped (it ended). */
function observeWithoutJob(run: RunToJudge): ObservedRun {
  const { clock } = run;
  const at = Math.floor(clock.nowTs);
  const analysis = analyse(run, at, false);
  const staleS = Math.max(3 * clock.stepSeconds, 180 / clock.timeScale);
  const last = analysis.lastTs;
  if (run.fixedTime || last === null || at - last <= staleS) return { analysis, ended: false, atTs: at };
  return { analysis: analyse(run, last, true), ended: true, atTs: last };
}
