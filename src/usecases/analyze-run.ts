// Runs judged from Prometheus (and Slurm when the cluster is known) as of a moment: the paths `topo
// analyze`, `topo status`, the record's re-observation and the verdict bench share, all through
// the judge's one read (src/judge/read.ts readRuns) and its one judgement. A run of an experiment
// of the checkout is judged within its experiment, as the monitor judges it (its job, its
// settings, wall time and rollouts, the record's references, the live baseline); any other
// run_name (a run launched by hand) is judged from its samples alone, by default as of now, or as
// of its last sample once it ended, so a finished run keeps the verdict its data supports.
import type { DetectorSettings } from '../analysis/detector.js';
import type { RunAnalysis } from '../analysis/observe.js';
import type { JudgedExperiment, JudgeStanding, RecordedReference, Reference } from '../judge/decide.js';
import type { RunJob } from '../judge/job.js';
import type { Judgement } from '../judge/judge.js';
import {
  type ExperimentToRead,
  judgeRead,
  type ReadExperiment,
  type RunToRead,
  readRuns,
} from '../judge/read.js';
import type { ExperimentTelemetry } from '../judge/telemetry.js';
import type { PrometheusClient } from '../telemetry/prometheus.js';
import type { Quantity } from '../telemetry/queries.js';
import { parseRunName } from '../topology/run-name.js';
import type { Experiment } from '../types/generated/experiment.js';
import type { Topology } from '../types/generated/topology.js';

/** An experiment of the checkout as the CLI reads it: its settings, the record's references, its jobs. */
export interface KnownExperiment {
  experiment: Experiment;
  baseline?: RecordedReference | null;
  best?: RecordedReference | null;
  /** The between-run term of the recorded reference (the record's repeated runs); null: assumed. */
  betweenRun?: JudgeStanding['betweenRun'];
  /** Every job of the experiment (src/judge/job.ts experimentJobs); none when Slurm was not read. */
  jobs: readonly RunJob[];
  /** The candidates' topologies by candidate name, when known. */
  topologies?: ReadonlyMap<string, Topology>;
}

/** How the metrics are read. */
export interface TelemetryClock {
  prometheus: PrometheusClient;
  timeScale: number;
  stepSeconds: number;
}

/** Each job of an experiment as a run to read: the candidate its run name names (no pull request). */
export function runsOfJobs(x: KnownExperiment): RunToRead[] {
  const id = x.experiment.experiment_id;
  return [...x.jobs]
    .sort((a, b) => Number(a.jobId) - Number(b.jobId))
    .map((job) => {
      const candidate = parseRunName(job.name, id)?.candidate ?? job.name;
      const topology = x.topologies?.get(candidate);
      return {
        runName: job.name,
        candidate: { candidate, pr: 0, requested: true },
        job,
        ...(topology ? { topology } : {}),
      };
    });
}

/** The experiment as the judge's read takes it (its runs: every job; `extra`: a run Slurm no longer lists). */
function experimentToRead(x: KnownExperiment, t: TelemetryClock, extra: RunToRead[] = []): ExperimentToRead {
  return {
    id: x.experiment.experiment_id,
    experiment: x.experiment,
    baseline: x.baseline ?? null,
    best: x.best ?? null,
    betweenRun: x.betweenRun ?? null,
    timeScale: t.timeScale,
    stepSeconds: t.stepSeconds,
    runs: [...runsOfJobs(x), ...extra],
  };
}

/** An experiment's runs judged at `at` as one monitor pass judges them (`topo status`, `topo watch`). */
export async function judgeExperiment(
  t: TelemetryClock,
  x: KnownExperiment,
  at: number,
): Promise<{ read: ReadExperiment; judgements: Judgement[]; reference: Reference | null }> {
  const read = await readRuns({ prometheus: t.prometheus }, experimentToRead(x, t), at);
  const { judgements, reference } = judgeRead(read);
  return { read, judgements, reference };
}

export interface AnalyzeRunInput extends TelemetryClock {
  runName: string;
  /** The clock (unix seconds). */
  nowTs: number;
  /** Judge as of this moment (unix seconds), as the monitor would have then; default: now, or the run's end. */
  atTs?: number | null;
  /** Look-back from the evaluation time, Prometheus minutes (a run judged from its samples alone). */
  minutes: number;
  /** Rollouts in flight, when no topology is given. */
  inFlight?: number | null;
  topology?: Topology;
  /** Only these quantities (the bench asks for the verdict's only). */
  quantities?: readonly Quantity[];
  /** The run's experiment in the checkout: the run is judged within it, as the monitor judges it. */
  known?: KnownExperiment;
  /** Without an experiment: the settings it is judged with (`--min-improvement`, the detector's). */
  settings?: JudgedExperiment & { stabilisation?: Partial<DetectorSettings> };
  /**
   * `--against`: decide against this run instead, judged as of the same moment (or as of its own
   * end when it ended before).
   */
  against?: string;
}

export interface AnalyzeRunResult {
  /** What was observed (none while its job has not started). */
  analysis?: RunAnalysis;
  /** The judge's judgement (state, observation, Decision, figure). */
  judgement: Judgement;
  telemetry: ExperimentTelemetry;
  /** The moment judged (unix seconds). */
  atTs: number;
  /** Judged as of the run's end (its job's, or its last sample's). */
  ended: boolean;
  /** The run `against` named, judged. */
  reference?: AnalyzeRunResult;
  /** Its Slurm job, when its experiment's jobs were read (null: none listed). */
  job: RunJob | null;
}

/** The run read: within its experiment, or alone by its run name. */
async function readOne(i: AnalyzeRunInput, at: number): Promise<ReadExperiment> {
  const t = { prometheus: i.prometheus, timeScale: i.timeScale, stepSeconds: i.stepSeconds };
  const alone: RunToRead = {
    runName: i.runName,
    candidate: { candidate: i.runName, pr: 0, requested: true },
    ...(i.topology ? { topology: i.topology } : {}),
    inFlight: i.inFlight ?? null,
  };
  if (i.known) {
    const listed = i.known.jobs.some((j) => j.name === i.runName);
    const x = experimentToRead(i.known, t, listed ? [] : [alone]);
    // a run Slurm no longer lists is read over the look-back; else over its jobs, as the monitor reads
    return readRuns({ prometheus: i.prometheus }, listed ? x : { ...x, lookbackMinutes: i.minutes }, at);
  }
  const x: ExperimentToRead = {
    id: null,
    experiment: i.settings ?? {},
    timeScale: i.timeScale,
    stepSeconds: i.stepSeconds,
    runs: [alone],
    lookbackMinutes: i.minutes,
    ...(i.quantities ? { quantities: i.quantities } : {}),
    fixedTime: i.atTs != null,
  };
  return readRuns({ prometheus: i.prometheus }, x, at);
}

export async function analyzeRun(i: AnalyzeRunInput): Promise<AnalyzeRunResult> {
  const at = Math.floor(i.atTs ?? i.nowTs);
  const read = await readOne(i, at);
  const index = read.runs.findIndex((r) => r.run.runName === i.runName);
  const first = judgeRead(read).judgements[index] as Judgement;
  const { observed } = first;
  // the reference as of the same moment asked (each run as of its own end once it ended), as status
  // and the monitor read a live baseline: not cut at the candidate's end, where the rollouts it had
  // in flight were still running and read as censored
  const reference = i.against
    ? await analyzeRun({
        ...i,
        runName: i.against,
        // as of the moment asked, read with its own end detection (a fixed --at would cut an ended
        // reference at a moment after its end, where it has no samples left to read)
        nowTs: i.atTs ?? i.nowTs,
        atTs: null,
        inFlight: null,
        against: undefined,
        topology: undefined,
      })
    : undefined;
  const judgement = reference
    ? (judgeRead(read, { reference: runReference(reference) }).judgements[index] as Judgement)
    : first;
  return {
    ...(judgement.observed.analysis ? { analysis: judgement.observed.analysis } : {}),
    judgement,
    telemetry: read.telemetry ?? { byRun: new Map(), queries: [], missing: [], errors: [] },
    atTs: observed.atTs,
    ended: observed.ended,
    ...(reference ? { reference } : {}),
    job: read.runs[index]?.run.job ?? null,
  };
}

/** A run named by a person as the reference (`--against`): its judgement's verdict and figure. */
function runReference(r: AnalyzeRunResult): Reference {
  const verdict = r.judgement.observation.verdict;
  return {
    role: 'run',
    name: r.judgement.observation.run_name,
    verdict,
    value: verdict.value ?? null,
    figure: r.judgement.figure?.value ?? null,
    live: true,
  };
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
