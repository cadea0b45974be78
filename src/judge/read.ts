// THE "read a run" service: what the judge reads of an experiment's runs at one moment, built in
// this one place for every surface (the monitor's pass and its watch loop, `topo status`, `topo
// analyze`, `topo watch`, the record's re-observation, the demo, the benches): the window, the
// step, the selector, the clock (wall time and rollouts from the experiment), each run's job,
// topology, settings and memory. readRuns reads (one telemetry read for all the runs); judgeRead
// judges what it read (./judge.ts judgeRuns, pure). So every surface judges a run from the same
// inputs, and a surface cannot forget one of them.
import { COHORT_MINUTES } from '../analysis/cohorts.js';
import type { DetectorSettings } from '../analysis/detector.js';
import { SCRAPE_INTERVAL_S } from '../catalog/alpasim.js';
import type { PrometheusClient } from '../telemetry/prometheus.js';
import { anyRunSelector, experimentSelector, type Quantity } from '../telemetry/queries.js';
import type { CandidateObservation } from '../types/generated/metrics.js';
import type { Topology } from '../types/generated/topology.js';
import type { JudgedExperiment, JudgeStanding, RecordedReference } from './decide.js';
import type { RunJob } from './job.js';
import { type Chosen, type ExperimentRun, type JudgeContext, type JudgedRuns, judgeRuns } from './judge.js';
import { experimentLimits, type RunToJudge } from './observe.js';
import {
  type ExperimentTelemetry,
  type FetchWindow,
  jobsWindow,
  readTelemetry,
  seriesOf,
} from './telemetry.js';

/** A run to read: the candidate it stands for, its job, its topology. */
export interface RunToRead {
  runName: string;
  candidate: JudgeContext['candidate'];
  /** Its Slurm job (./job.ts); null: none yet (queued); absent: a run read from Prometheus alone. */
  job?: RunJob | null;
  topology?: Topology;
  /** Rollouts in flight when no topology says it (`topo analyze --in-flight`). */
  inFlight?: number | null;
}

/** An experiment as read: its settings, the record's references, how its metrics are read, its runs. */
export interface ExperimentToRead {
  /** Its id: every run is read with the experiment's selector. null: runs read by their run names. */
  id: string | null;
  /** Its settings (experiment.yaml, or `topo analyze`'s flags), stabilisation included. */
  experiment: JudgedExperiment & { stabilisation?: Partial<DetectorSettings> };
  baseline?: RecordedReference | null;
  best?: RecordedReference | null;
  /** The between-run term of the recorded reference (the record's repeated runs); null: assumed. */
  betweenRun?: JudgeStanding['betweenRun'];
  /** GPUs a job of the experiment holds (the cluster's gpus_per_node). */
  gpusPerNode?: number;
  /** 1 for real AlpaSim; the twin's compression factor otherwise. */
  timeScale: number;
  /** The Prometheus step (the scrape interval), seconds. */
  stepSeconds: number;
  runs: readonly RunToRead[];
  /** Read this many minutes back from `at` (`topo analyze --minutes`); default: from the first job's start. */
  lookbackMinutes?: number;
  /** Only these quantities (the verdict bench asks for the verdict's only). */
  quantities?: readonly Quantity[];
  /** Run-minutes of RUNNING without any metrics before a run fails with no-telemetry. */
  telemetryDeadlineMinutes?: number;
  /** Judge as of `at` exactly, never as of a run's last sample (`topo analyze --at`). */
  fixedTime?: boolean;
  /** Why nothing may be judged this time (a wrong runner clock): read as an outage. */
  held?: string | null;
}

/** The memory of a run's last look, as a surface keeps it (the monitor: its comment). */
export interface RunMemory {
  /** The observation the last look wrote; null: none. */
  observation: CandidateObservation | null;
  /** The comment as it stands (the monitor's publish compares with it). */
  text?: string;
}

export interface ReadPorts {
  prometheus: PrometheusClient;
  /** The memory of a run's last look; absent: a surface that keeps none (the CLI). */
  memory?: (run: RunToRead) => Promise<RunMemory>;
}

/** What readRuns read: the judge's input for every run, and how the metrics were read. */
export interface ReadExperiment {
  runs: ExperimentRun[];
  standing: JudgeStanding;
  telemetry?: ExperimentTelemetry;
  /** The comment text of each run's memory, by run name (when the surface keeps one). */
  comments: Map<string, string | undefined>;
  /** Why the metrics cannot be trusted now (an outage, a held clock): nothing is failed or stopped for it. */
  unavailable: string | null;
}

/**
 * The step a run is read at unless told: AlpaSim's scrape interval, or one start cohort of run time
 * when that is shorter (1 s at the twin's 60x).
 */
export function defaultStepSeconds(timeScale: number): number {
  return Math.min(SCRAPE_INTERVAL_S, (60 * COHORT_MINUTES) / timeScale);
}

/**
 * Why a step (`--step`) is too coarse to judge runs at this time scale, else null. The decisions
 * contrast start cohorts one run-minute wide, placed by the counters' samples: `--step 5` at the
 * twin's 60x (a sample every 5 run-minutes) put a pair of runs 24% apart in 49 cohorts at "mean start
 * age 0 min" and read the candidate 10.8% faster ± 0.6%.
 */
export function coarseStep(stepSeconds: number, timeScale: number): string | null {
  const runMinutes = (stepSeconds * timeScale) / 60;
  if (runMinutes <= COHORT_MINUTES + 1e-9) return null;
  const r = (x: number) => Math.round(x * 1000) / 1000;
  return `--step ${stepSeconds} at time scale ${timeScale} is one sample every ${r(runMinutes)} run-minutes, too coarse: the decision's start cohorts are ${COHORT_MINUTES} run-minute wide and need a sample at least every run-minute; give --step ${r((60 * COHORT_MINUTES) / timeScale)} or less (60 ÷ the time scale), or leave it out (default ${r(defaultStepSeconds(timeScale))})`;
}

/** The window of the read: the look-back from `at`, else from the first job's start (none: nothing to read). */
export function readWindow(x: ExperimentToRead, at: number): FetchWindow | null {
  if (x.lookbackMinutes === undefined)
    return jobsWindow(
      x.runs.flatMap((r) => (r.job ? [r.job] : [])),
      at,
      x.stepSeconds,
    );
  const start = Math.floor((at - x.lookbackMinutes * 60) / x.stepSeconds) * x.stepSeconds;
  return { start, end: Math.max(at, start), stepSeconds: x.stepSeconds };
}

/** The selector: the experiment's, else the one run's (any run_name). */
export function readSelector(x: Pick<ExperimentToRead, 'id' | 'runs'>): string {
  if (x.id !== null) return experimentSelector(x.id);
  const names = [...new Set(x.runs.map((r) => r.runName))];
  if (names.length !== 1)
    throw new Error(`runs read without an experiment id are read one at a time (got ${names.length})`);
  return anyRunSelector(names[0] as string);
}

/** The experiment's runs as the judge reads them at `at` (unix seconds): one telemetry read. */
export async function readRuns(ports: ReadPorts, x: ExperimentToRead, at: number): Promise<ReadExperiment> {
  const window = readWindow(x, at);
  const telemetry = window
    ? await readTelemetry(ports.prometheus, readSelector(x), window, {
        timeScale: x.timeScale,
        scrapeSeconds: x.stepSeconds,
        ...(x.quantities ? { quantities: x.quantities } : {}),
      })
    : undefined;
  const error = telemetry?.errors[0];
  const unavailable = x.held ?? (error ? `Prometheus: ${error.quantity}: ${error.message}` : null);
  const comments = new Map<string, string | undefined>();
  const runs: ExperimentRun[] = [];
  for (const r of x.runs) {
    const memory = ports.memory ? await ports.memory(r) : undefined;
    if (memory) comments.set(r.runName, memory.text);
    runs.push({ run: runToJudge(x, r, at, { telemetry, unavailable, memory }), candidate: r.candidate });
  }
  const standing: JudgeStanding = {
    experiment: x.experiment,
    ...(x.baseline !== undefined ? { baseline: x.baseline } : {}),
    ...(x.best !== undefined ? { best: x.best } : {}),
    ...(x.betweenRun !== undefined ? { betweenRun: x.betweenRun } : {}),
    ...(x.gpusPerNode !== undefined ? { gpusPerNode: x.gpusPerNode } : {}),
  };
  return { runs, standing, telemetry, comments, unavailable };
}

/** THE judge's input for one run (the only place a RunToJudge is built). */
function runToJudge(
  x: ExperimentToRead,
  r: RunToRead,
  at: number,
  read: { telemetry?: ExperimentTelemetry; unavailable: string | null; memory?: RunMemory },
): RunToJudge {
  return {
    runName: r.runName,
    ...(r.job !== undefined ? { job: r.job } : {}),
    series: seriesOf(read.telemetry, r.runName),
    missing: read.telemetry?.missing,
    clock: {
      nowTs: at,
      timeScale: x.timeScale,
      stepSeconds: x.stepSeconds,
      ...experimentLimits(x.experiment),
    },
    topology: r.topology,
    inFlight: r.inFlight ?? null,
    settings: x.experiment.stabilisation,
    unavailable: read.unavailable !== null,
    ...(x.telemetryDeadlineMinutes !== undefined
      ? { telemetryDeadlineMinutes: x.telemetryDeadlineMinutes }
      : {}),
    ...(x.fixedTime ? { fixedTime: true } : {}),
    ...(read.memory ? { memory: read.memory.observation } : {}),
  };
}

/** A run not read (a pass's state built without its observe stage): no series, no memory. */
export function unreadRun(x: ExperimentToRead, r: RunToRead, at: number): RunToJudge {
  return runToJudge(x, r, at, { unavailable: null });
}

/** The run with the job it has now (submitted since it was read): no series yet. */
export function withJob(run: RunToJudge, job: RunJob | null): RunToJudge {
  return { ...run, job };
}

/** What readRuns read, judged (pure): each run's judgement, the reference and the leader. */
export function judgeRead(read: ReadExperiment, chosen?: Chosen): JudgedRuns {
  return judgeRuns(read.runs, read.standing, chosen);
}
