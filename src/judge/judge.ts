// THE judge: one run (its job from the one job model, its series from the one telemetry read, the
// clock, the reference) → its observation, verdict, state, failure and Decision. The monitor, `topo
// analyze` (also --against), `topo status`, the record's re-observation and the demo all call it.
// Two halves, because a pass observes every run before it chooses the reference among them:
// observeRunOf (./observe.ts) then decideRunOf; judgeRun is both. Pure.
import type { GpuMinutesInput } from '../analysis/decision.js';
import { explainFailure } from '../analysis/failure.js';
import type { RunAnalysis } from '../analysis/observe.js';
import type { CandidateState, CandidateView } from '../report/pr-comment.js';
import { isLive, isWaiting } from '../slurm/types.js';
import { gpuMap } from '../topology/capacity.js';
import type { CandidateObservation, Comparison, Decision, Failure } from '../types/generated/metrics.js';
import {
  compareCandidate,
  isDecided,
  type JudgedCandidate,
  type JudgeStanding,
  type Reference,
} from './decide.js';
import type { RunJob } from './job.js';
import { type ObservedRun, observeRunOf, type RunToJudge } from './observe.js';
import { leaderOf, REFERENCE_STOP, referenceOf } from './reference.js';

/** Who ended a CANCELLED job: a person's control, the decision, the reference's stable verdict. */
export type StoppedBy = CandidateView['stoppedBy'];

/** What a run is judged against and remembers: everything besides the run itself. */
export interface JudgeContext {
  standing: JudgeStanding;
  candidate: JudgedCandidate & {
    /** Asked to run (a Request): queued while it has no job. */
    requested: boolean;
    /** Its Request's Outcome, when it has one (a person's stop is `stopped`). */
    outcome?: { kind: string };
  };
  reference?: Reference | null;
  leader?: Reference | null;
  /**
   * The observation the last look wrote (the monitor's comment): a decision once reached stays.
   * null: there is a memory and it is empty; undefined: a surface with no memory of looks (`topo
   * status`), where a cancelled run's stopper is read from the decision it has now.
   */
  previous?: CandidateObservation | null;
}

/** A run judged. `state` null: the candidate was not asked to run and has no job. */
export interface Judgement {
  state: CandidateState | null;
  observation: CandidateObservation;
  comparisons: Comparison[];
  decision: Decision | null;
  stoppedBy: StoppedBy;
  observed: ObservedRun;
}

const isStable = (v: string | undefined) => v === 'stable' || v === 'cyclic';

/** THE judge: the run observed, then decided against the reference. */
export function judgeRun(run: RunToJudge, context: JudgeContext): Judgement {
  return decideRunOf(run, observeRunOf(run), context);
}

/** One run of an experiment, with the candidate it stands for and the memory of its last look. */
export interface ExperimentRun {
  run: RunToJudge;
  candidate: JudgeContext['candidate'];
  previous?: CandidateObservation | null;
}

/**
 * Every run of an experiment judged at one moment, as a monitor pass judges them: each observed,
 * then the reference and the leading candidate chosen among them (./reference.ts), then each decided.
 */
export function judgeRuns(
  runs: readonly ExperimentRun[],
  standing: JudgeStanding,
): { judgements: Judgement[]; reference: Reference | null; leader: Reference | null } {
  const observed = runs.map((r) => observeRunOf(r.run));
  const chosen = runs.map((r, i) => ({ c: r.candidate, analysis: observed[i]?.analysis }));
  const reference = referenceOf(standing, chosen);
  const leader = leaderOf(standing, chosen, reference);
  const judgements = runs.map((r, i) =>
    decideRunOf(r.run, observed[i] as ObservedRun, {
      standing,
      candidate: r.candidate,
      reference,
      leader,
      ...(r.previous !== undefined ? { previous: r.previous } : {}),
    }),
  );
  return { judgements, reference, leader };
}

/** State, failure, comparisons and Decision of a run already observed (observeRunOf). */
export function decideRunOf(run: RunToJudge, observed: ObservedRun, context: JudgeContext): Judgement {
  const job = run.job ?? undefined;
  const { analysis } = observed;
  const x = context.standing.experiment;
  const stoppedBy = stoppedByOf(run, observed, context);
  const stoppedByUs = stoppedBy !== null || (job?.status === 'cancelled' && x.stop_when_stable === true);
  let state =
    run.job === undefined && analysis
      ? stateOfRun(analysis)
      : candidateState(job, context.candidate.requested, analysis, stoppedByUs);
  const observation: CandidateObservation = analysis?.observation ?? waiting(run.runName, job);
  if (state === null) return { state, observation, comparisons: [], decision: null, stoppedBy, observed };
  if (observation.failure?.kind === 'no-telemetry') state = 'failed';
  if (state === 'failed') observation.failure = failureOf(run, job, observation);
  const previous = context.previous?.run_name === run.runName ? (context.previous.decision ?? null) : null;
  const comparisons = compareCandidate(context.standing, context.candidate, observation, {
    reference: context.reference,
    leader: context.leader,
    previous,
    ended: observed.ended,
    gpu: gpuInput(run, observed, context.standing, stoppedBy === 'decision'),
  });
  return { state, observation, comparisons, decision: observation.decision ?? null, stoppedBy, observed };
}

/** The candidate state machine of the architecture doc, computed (never stored). */
export function candidateState(
  job: RunJob | undefined,
  requested: boolean,
  analysis: RunAnalysis | undefined,
  stoppedByUs: boolean,
): CandidateState | null {
  if (!job) return requested ? 'queued' : null;
  const v = analysis?.observation.verdict.state;
  const stable = isStable(v);
  if (isWaiting(job.status)) return 'submitted';
  if (isLive(job.status)) {
    if (!analysis || v === 'no-data') return 'starting';
    if (v === 'warming') return 'warming';
    if (stable) return 'stable';
    return 'stabilising';
  }
  if (job.status === 'completed')
    return stable || analysis?.observation.verdict.value ? 'finished' : analysis ? 'finished' : 'failed';
  // cancelled before it ran (held by an interrupted submit, or waiting for nodes): nothing failed
  if (job.status === 'cancelled' && (stable || stoppedByUs || neverRan(job))) return 'stopped';
  if (job.status === 'timeout' && stable) return 'finished';
  return 'failed';
}

/** A job that ended without running: no start, or its start is its end (Slurm's mark of a job never given nodes). */
function neverRan(job: RunJob): boolean {
  return job.startTs == null || (job.endTs != null && job.startTs >= job.endTs);
}

/** The state of a run with no job (read from Prometheus alone): from its verdict. */
function stateOfRun(a: RunAnalysis): CandidateState {
  switch (a.observation.verdict.state) {
    case 'no-data':
      return 'starting';
    case 'warming':
      return 'warming';
    case 'stable':
    case 'cyclic':
      return 'stable';
    case 'unhealthy':
      return 'failed';
    default:
      return 'stabilising';
  }
}

/** The observation of a run with nothing to analyse yet. */
function waiting(runName: string, job: RunJob | undefined): CandidateObservation {
  return {
    run_name: runName,
    verdict: {
      state: 'no-data',
      evidence: [job ? `Slurm job ${job.jobId} is ${job.state}` : 'waiting for a free slot'],
    },
    stable_metrics: {},
  };
}

function failureOf(run: RunToJudge, job: RunJob | undefined, observation: CandidateObservation): Failure {
  const failure: Failure = job?.failure ??
    observation.failure ?? {
      kind: job?.status === 'cancelled' ? 'cancelled' : job?.status === 'timeout' ? 'time-limit' : 'crash',
      message: `Slurm job ${job?.jobId} ended ${job?.state}`,
      slurm_state: job?.state,
    };
  return explainFailure(failure, {
    topology: run.topology,
    gpus: observation.stable_metrics.resource_usage?.gpu_by_index,
  });
}

/**
 * Who ended a CANCELLED job. Nothing is stored for it: a job cancelled on the decision is known by
 * the decision its last look wrote (with no memory of looks, by the decision it has now).
 */
function stoppedByOf(run: RunToJudge, observed: ObservedRun, context: JudgeContext): StoppedBy {
  if (run.job?.status !== 'cancelled') return null;
  if (context.candidate.outcome?.kind === 'stopped') return 'user';
  if (context.candidate.role === 'reference')
    return context.previous?.decision?.evidence.some((e) => e.startsWith(REFERENCE_STOP))
      ? 'no-longer-needed'
      : null;
  const previous =
    context.previous === undefined
      ? lookNow(observed, context)
      : context.previous?.run_name === run.runName
        ? context.previous
        : undefined;
  const x = context.standing.experiment;
  if (x.stop_when_decided !== false && isDecided(previous?.decision)) return 'decision';
  const verdict = observed.analysis?.observation.verdict.state ?? previous?.verdict.state;
  // only a reference is stopped as stable (src/monitor/decide.ts stopReason)
  if (x.stop_when_stable && isStable(verdict) && previous?.decision?.state === 'reference') return 'stable';
  return null;
}

/** The run's observation with the decision it has now (on a copy): the memory of a surface that keeps none. */
function lookNow(observed: ObservedRun, context: JudgeContext): CandidateObservation | undefined {
  const observation = observed.analysis?.observation;
  if (!observation || observation.failure) return undefined;
  const copy = structuredClone(observation);
  compareCandidate(context.standing, context.candidate, copy, {
    reference: context.reference,
    leader: context.leader,
    ended: observed.ended,
  });
  return copy;
}

/**
 * GPU-minutes of the job (src/analysis/decision.ts gpuMinutes): the GPUs it holds (the
 * experiment's gpus_per_node, else the cluster's, else the topology's GPUs, else 8) over its
 * minutes so far; the run would have ended at its wall time, or sooner once its rollouts are done
 * (the projection's horizon).
 */
export function gpuInput(
  run: RunToJudge,
  observed: ObservedRun,
  standing: JudgeStanding,
  stopped: boolean,
): GpuMinutesInput | null {
  const { job, clock } = run;
  if (!job?.startTs) return null;
  const { analysis } = observed;
  const S = clock.timeScale;
  const wallMinutes = clock.wallMinutes ?? Number.POSITIVE_INFINITY;
  const until = observed.ended && job.endTs ? Math.min(clock.nowTs, job.endTs) : clock.nowTs;
  const minutesRunning = ((until - job.startTs) * S) / 60;
  const offset = analysis?.startTs != null ? ((analysis.startTs - job.startTs) * S) / 60 : null;
  const end = analysis?.observation.verdict.run_end_minutes;
  const runEndMinutes = offset !== null && end != null ? Math.min(wallMinutes, offset + end) : wallMinutes;
  const gpus =
    standing.experiment.fixed_inputs?.slurm?.gpus_per_node ??
    standing.gpusPerNode ??
    (run.topology ? gpuMap(run.topology).size : 0);
  return { gpus: gpus > 0 ? gpus : 8, minutesRunning, runEndMinutes, stopped };
}
