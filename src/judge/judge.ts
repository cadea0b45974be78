// THE judge: one run (its job from the one job model, its series from the one telemetry read, the
// clock, its memory, the reference) → one Judgement: its state, observation, Decision, figure and
// who stopped it, returned as a new value (nothing it reads is written). The monitor, `topo
// analyze`, `topo status`, the record's re-observation and the demo all call it, through ./read.ts.
// Two halves, because a pass observes every run before it chooses the reference among them:
// observeRunOf (./observe.ts) then decideRunOf; judgeRun is both. Pure.
import { type GpuMinutesInput, withGpuMinutes } from '../analysis/decision.js';
import { explainFailure } from '../analysis/failure.js';
import {
  againstLiveRun,
  anchoredDecision,
  decisionFigure,
  type Figure,
  runFigure,
} from '../analysis/figure.js';
import { gpuMap } from '../topology/capacity.js';
import { experimentSettings } from '../topology/settings.js';
import type { CandidateObservation, Decision, Failure } from '../types/generated/metrics.js';
import { decisionOf, isDecided, type JudgedCandidate, type JudgeStanding, type Reference } from './decide.js';
import type { RunJob } from './job.js';
import { type ObservedRun, observeRunOf, type RunToJudge } from './observe.js';
import { leaderOf, REFERENCE_STOP, referenceOf } from './reference.js';
import { type CandidateState, candidateState, isStable, type StoppedBy } from './state.js';

export type { CandidateState, StoppedBy };

/** What a run is judged against: everything besides the run itself (its memory is the run's). */
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
}

/** A run judged: one value, like a frozen trial. `state` null: not asked to run and no job. */
export interface Judgement {
  state: CandidateState | null;
  /** The run's observation as judged: its verdict and metrics, its failure explained, its Decision. */
  observation: CandidateObservation;
  /** Its Decision against its reference (with GPU-minutes and, once settled, its figure). */
  decision: Decision | null;
  /** THE figure every surface shows for it (src/analysis/figure.ts). */
  figure: Figure | null;
  /** Who ended a cancelled job. */
  stoppedBy: StoppedBy;
  /** The run as observed (its analysis: series, chart, opportunities; when it ended). */
  observed: ObservedRun;
}

/** THE judge: the run observed, then decided against the reference. */
export function judgeRun(run: RunToJudge, context: JudgeContext): Judgement {
  return decideRunOf(run, observeRunOf(run), context);
}

/** One run of an experiment, with the candidate it stands for. */
export interface ExperimentRun {
  run: RunToJudge;
  candidate: JudgeContext['candidate'];
}

/** An experiment's runs judged at one moment: each one's judgement, the reference and the leader. */
export interface JudgedRuns {
  judgements: Judgement[];
  reference: Reference | null;
  leader: Reference | null;
}

/**
 * Every run of an experiment judged at one moment, as a monitor pass judges them: each observed,
 * then the reference and the leading candidate chosen among them (./reference.ts), then each decided.
 */
export function judgeRuns(
  runs: readonly ExperimentRun[],
  standing: JudgeStanding,
  chosen?: Chosen,
): JudgedRuns {
  const observed = runs.map((r) => observeRunOf(r.run));
  return decideRuns(runs, observed, standing, chosen);
}

/** A reference a person chose (`topo analyze --against`) instead of the one the standing gives. */
export interface Chosen {
  reference: Reference | null;
}

/** The decide half of judgeRuns, over runs already observed (in the same order). */
export function decideRuns(
  runs: readonly ExperimentRun[],
  observed: readonly ObservedRun[],
  standing: JudgeStanding,
  chosen?: Chosen,
): JudgedRuns {
  // a run with a job started (it runs, or ran); its data ended with its job
  const among = runs.map((r, i) => ({
    c: r.candidate,
    analysis: observed[i]?.analysis,
    started: !!r.run.job,
    ended: !!r.run.job && !!observed[i]?.ended,
    decision: previousDecision(r.run),
  }));
  const reference = chosen ? chosen.reference : referenceOf(standing, among);
  const leader = chosen ? null : leaderOf(standing, among, reference);
  const judgements = runs.map((r, i) =>
    decideRunOf(r.run, observed[i] as ObservedRun, { standing, candidate: r.candidate, reference, leader }),
  );
  return { judgements: onSettledLeader(judgements, runs, leader), reference, leader };
}

/**
 * The decisions against the leader re-anchored on its figure as judged in this same pass, once that
 * is its settled decision's (src/analysis/figure.ts anchoredDecision): a leader that settles in a pass
 * moves its losers' figures in that pass, not a pass later (there may be none).
 */
function onSettledLeader(
  judgements: Judgement[],
  runs: readonly ExperimentRun[],
  leader: Reference | null,
): Judgement[] {
  const at = runs.findIndex(
    (r) => r.candidate.candidate === leader?.name && r.candidate.role !== 'reference',
  );
  const settled = at >= 0 ? decisionFigure(judgements[at]?.decision) : null;
  if (!settled) return judgements;
  return judgements.map((j) => {
    const d = j.decision;
    if (!d || !againstLiveRun(d) || d.reference.name !== leader?.name) return j;
    const decision = anchoredDecision(d, settled.value);
    if (decision === d) return j;
    const observation = { ...j.observation, decision };
    const reading = observation.stable_metrics.seconds_per_rollout_full_run;
    return {
      ...j,
      decision,
      observation,
      figure: runFigure({ decision, verdict: observation.verdict, reading }),
    };
  });
}

/** State, failure, Decision and figure of a run already observed (observeRunOf). */
export function decideRunOf(run: RunToJudge, observed: ObservedRun, context: JudgeContext): Judgement {
  const job = run.job ?? undefined;
  const { analysis } = observed;
  const stoppedBy = stoppedByOf(run, observed, context);
  const state = stateOf(run, observed, context, stoppedBy);
  const seen: CandidateObservation = analysis?.observation ?? waiting(run.runName, job);
  if (state === null) return { state, observation: seen, decision: null, figure: null, stoppedBy, observed };
  const failure = state === 'failed' ? failureOf(run, job, seen) : seen.failure;
  const { decision: _, failure: __, ...rest } = seen;
  const judged = { ...rest, ...(failure ? { failure } : {}) };
  const decided = decisionOf(context.standing, context.candidate, judged, {
    reference: context.reference,
    leader: context.leader,
    previous: previousDecision(run),
    ended: observed.ended,
  });
  const gpu = gpuInput(run, observed, context.standing, stoppedBy === 'decision');
  const decision = decided && gpu ? withGpuMinutes(decided, gpu) : decided;
  const observation: CandidateObservation = { ...judged, ...(decision ? { decision } : {}) };
  const figure = runFigure({
    decision,
    verdict: observation.verdict,
    reading: observation.stable_metrics.seconds_per_rollout_full_run,
  });
  return { state, observation, decision, figure, stoppedBy, observed };
}

/** The state machine (./state.ts), with a run that never sent metrics failed. */
function stateOf(run: RunToJudge, observed: ObservedRun, context: JudgeContext, stoppedBy: StoppedBy) {
  const { analysis } = observed;
  const stoppedByUs =
    stoppedBy !== null ||
    (run.job?.status === 'cancelled' && experimentSettings(context.standing.experiment).stopWhenStable);
  const jobless = run.job === undefined ? { ended: observed.ended } : undefined;
  const state = candidateState(
    run.job ?? undefined,
    context.candidate.requested,
    analysis,
    stoppedByUs,
    jobless,
  );
  return state !== null && analysis?.observation.failure?.kind === 'no-telemetry' ? 'failed' : state;
}

/** The decision its last look wrote, when that look was of this very run. */
function previousDecision(run: RunToJudge): Decision | null {
  return run.memory?.run_name === run.runName ? (run.memory.decision ?? null) : null;
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
      message: job ? `Slurm job ${job.jobId} ended ${job.state}` : `run ${run.runName} ended unhealthy`,
      ...(job ? { slurm_state: job.state } : {}),
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
    return previousDecision(run)?.evidence.some((e) => e.startsWith(REFERENCE_STOP))
      ? 'no-longer-needed'
      : null;
  const decision =
    run.memory === undefined
      ? lookNow(observed, context)
      : run.memory?.run_name === run.runName
        ? (run.memory.decision ?? null)
        : null;
  const x = experimentSettings(context.standing.experiment);
  if (x.stopWhenDecided && isDecided(decision)) return 'decision';
  const verdict =
    observed.analysis?.observation.verdict.state ??
    (run.memory?.run_name === run.runName ? run.memory.verdict.state : undefined);
  // only a reference is stopped as stable (src/monitor/decide.ts stopReason)
  if (x.stopWhenStable && isStable(verdict) && decision?.state === 'reference') return 'stable';
  return null;
}

/** The decision the run has now: the memory of a surface that keeps none. */
function lookNow(observed: ObservedRun, context: JudgeContext): Decision | null {
  const observation = observed.analysis?.observation;
  if (!observation || observation.failure) return null;
  return decisionOf(context.standing, context.candidate, observation, {
    reference: context.reference,
    leader: context.leader,
    ended: observed.ended,
  });
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
