// The candidates of a pass judged by the judge (src/judge: state machine, failure, Decision and
// figure, the same functions every surface calls), and the view every surface renders
// (src/report/pr-comment.ts CandidateView). Pure.
import type { GpuMinutesInput } from '../analysis/decision.js';
import { decisionReference, describeReference } from '../analysis/reference.js';
import type { JudgeStanding } from '../judge/decide.js';
import { decideRuns, gpuInput, type Judgement } from '../judge/judge.js';
import type { ObservedRun, RunToJudge } from '../judge/observe.js';
import { unreadRun, withJob } from '../judge/read.js';
import type { CandidateState } from '../judge/state.js';
import {
  type CandidateView,
  grafanaLink,
  type ReferenceJobLine,
  type TimelineEntry,
} from '../report/pr-comment.js';
import { experimentSettings } from '../topology/settings.js';
import type { Interval } from '../types/generated/metrics.js';
import { experimentToRead, runToRead } from './observe.js';
import type { MonitorJob } from './ports.js';
import type { CandidatePass, ExperimentPass, Reference, ReferenceJobPlan } from './state.js';

export const iso = (ts: number | null | undefined) =>
  ts ? `${new Date(ts * 1000).toISOString().slice(0, 19)}Z` : null;

/** The run of a candidate as the judge read it (observe's), with the job it has now. */
function runOf(e: ExperimentPass, p: CandidatePass): RunToJudge {
  const run = p.observed?.run ?? unreadRun(experimentToRead(e, [], {}), runToRead(p), e.clock.evalTs);
  return withJob(run, p.job ?? null);
}

function observedOf(e: ExperimentPass, p: CandidatePass): ObservedRun {
  return { analysis: p.observed?.analysis, ended: p.observed?.ended ?? false, atTs: e.clock.evalTs };
}

const standingOf = (e: ExperimentPass): JudgeStanding => ({
  experiment: e.exp.experiment,
  baseline: e.exp.baseline ?? null,
  best: e.exp.best ?? null,
  betweenRun: e.exp.betweenRun ?? null,
  ...(e.exp.gpusPerNode !== undefined ? { gpusPerNode: e.exp.gpusPerNode } : {}),
});

/** Every candidate in the pass judged (src/judge decideRuns): the reference, the leader, each one's judgement. */
export function judgeCandidates(e: ExperimentPass): {
  reference: Reference | null;
  leader: Reference | null;
  judgements: Map<CandidatePass, Judgement>;
} {
  const inPass = e.candidates.filter((p) => p.inPass);
  const runs = inPass.map((p) => ({ run: runOf(e, p), candidate: p.c }));
  const judged = decideRuns(
    runs,
    inPass.map((p) => observedOf(e, p)),
    standingOf(e),
  );
  const judgements = new Map(inPass.map((p, i) => [p, judged.judgements[i] as Judgement]));
  return { reference: judged.reference, leader: judged.leader, judgements };
}

/** One candidate judged again with the job it has now (act submitted it): its view. */
export function judgeCandidate(e: ExperimentPass, p: CandidatePass): CandidateView | null {
  const j = decideRuns([{ run: runOf(e, p), candidate: p.c }], [observedOf(e, p)], standingOf(e), {
    reference: e.reference,
  }).judgements[0] as Judgement;
  return viewOf(e, p, j);
}

/** GPU-minutes of the candidate's job so far (src/judge/judge.ts gpuInput). */
export function candidateGpu(e: ExperimentPass, p: CandidatePass, stopped: boolean): GpuMinutesInput | null {
  return gpuInput(runOf(e, p), observedOf(e, p), standingOf(e), stopped);
}

/** The view every surface renders of a judged candidate against `reference` (null: not asked to run). */
export function viewOf(
  e: ExperimentPass,
  p: CandidatePass,
  j: Judgement,
  reference: Reference | null = e.reference,
): CandidateView | null {
  if (j.state === null) return null;
  const { exp, telemetry } = e;
  const { c, job } = p;
  const { analysis, ended = false } = p.observed ?? {};
  const s = experimentSettings(exp.experiment);
  // drawn at the figure every surface shows it at (its figure in the record), else what decisions read
  const seconds = (r: { name: string; value: Interval; figure?: Interval } | null | undefined) =>
    r ? { name: r.name, secondsPerRollout: (r.figure ?? r.value).value } : null;
  // a baseline running in this pass is drawn at its figure (it may not be stable yet)
  const liveBaseline =
    reference?.live && reference.figure
      ? { name: reference.name, secondsPerRollout: reference.figure }
      : null;
  return {
    experimentId: e.id,
    candidate: c.candidate,
    runName: c.runName,
    state: j.state as CandidateState,
    jobId: job?.jobId ?? null,
    slurmState: job?.state ?? null,
    timeline: timelineOf(e, p, j.observation.verdict.warmup_end_minutes),
    observation: j.observation,
    chart: analysis?.chart,
    opportunities: analysis?.opportunities,
    queries: telemetry?.queries.map((q) => ({ quantity: q.quantity, query: q.query, source: q.source })),
    grafanaUrl: exp.grafanaUrl ?? null,
    timeRange: analysis?.startTs
      ? { fromMs: analysis.startTs * 1000, toMs: job?.endTs && ended ? job.endTs * 1000 : null }
      : null,
    notes: notesOf(telemetry?.errors, p.conflicts),
    minImprovement: s.minImprovement,
    stopWhenDecided: s.stopWhenDecided,
    baseline: seconds(exp.baseline) ?? liveBaseline,
    best: seconds(exp.best),
    finalJobState: ended ? (job?.state ?? null) : null,
    stoppedBy: j.stoppedBy,
    commentIntervalMinutes: s.commentIntervalMinutes,
    recordChartUrl: exp.recordChartUrl ?? null,
    ...(e.accountingUnreachable ? { accountingUnreachable: e.accountingUnreachable } : {}),
  };
}

/** Prometheus's errors, then the jobs under the run's name that are not its Request's (read.ts). */
function notesOf(
  errors: readonly { quantity: string; message: string }[] | undefined,
  conflicts: readonly MonitorJob[] = [],
): string[] | undefined {
  const prometheus = errors?.map((err) => `Prometheus error for ${err.quantity}: ${err.message}`);
  return conflicts.length ? [...(prometheus ?? []), ...conflicts.map(conflictNote)] : prometheus;
}

/** A job under the run's name that Slurm's record does not give to its Request (invariant 21). */
export function conflictNote(job: Pick<MonitorJob, 'jobId' | 'requestId'>): string {
  const says = job.requestId ? `names request ${job.requestId}` : 'names no request';
  return `Conflict: Slurm job ${job.jobId} carries this run's name, but its comment ${says}: it is not this run, and is never adopted, judged, cancelled or counted against a slot (cancel it by hand if it is a mistake).`;
}

function timelineOf(
  e: ExperimentPass,
  { job, observed }: CandidatePass,
  warmupEnd?: number | null,
): TimelineEntry[] {
  const firstTs = observed?.analysis?.startTs;
  return [
    { label: 'submitted', at: iso(job?.submitTs) },
    { label: 'started', at: iso(job?.startTs) },
    { label: 'first metrics', at: iso(firstTs) },
    {
      label: 'warm-up ended',
      at: firstTs && warmupEnd != null ? iso(Math.round(firstTs + (warmupEnd * 60) / e.clock.S)) : null,
    },
    { label: 'ended', at: observed?.ended ? iso(job?.endTs) : null },
  ];
}

/**
 * The reference as a candidate's comment shows it: the job beside it (its run, state, link and the
 * GPU-minutes it held so far), or the recorded run with why there is no job.
 */
export function referenceJobLine(
  e: ExperimentPass,
  plan: ReferenceJobPlan,
  ref: Reference | null,
): ReferenceJobLine | null {
  if (!ref || ref.role === 'run' || ref.role === 'leading candidate') return null;
  const name = describeReference(decisionReference(ref.role, ref.name));
  const p = plan.job;
  if (!p) {
    const note =
      plan.note ??
      (plan.mode === 'recorded'
        ? 'experiment.yaml says `reference: recorded`: no job beside the candidates'
        : 'no reference job beside the candidates yet');
    return { name, run: null, note };
  }
  const gpu = candidateGpu(e, p, false);
  const base = e.exp.grafanaUrl;
  const stop = plan.stops.find((s) => s.p === p)?.reason ?? null;
  return {
    name,
    run: {
      runName: p.c.runName,
      pr: p.c.pr,
      jobId: p.job?.jobId ?? null,
      state: p.job?.state ?? 'queued',
      grafanaUrl: base ? grafanaLink(base, p.c.runName) : null,
      gpuMinutes: gpu ? gpu.gpus * gpu.minutesRunning : null,
      stopping: stop,
    },
    note: null,
  };
}
