// One candidate of a pass judged by the judge (src/judge: state machine, failure, comparisons and
// Decision, the same function every surface calls), and the view every surface renders
// (src/report/pr-comment.ts CandidateView). Pure.
import type { GpuMinutesInput } from '../analysis/decision.js';
import { decideRunOf, gpuInput, type Judgement } from '../judge/judge.js';
import type { RunToJudge } from '../judge/observe.js';
import {
  type CandidateState,
  type CandidateView,
  grafanaLink,
  type ReferenceJobLine,
  type TimelineEntry,
} from '../report/pr-comment.js';
import { DEFAULT_MIN_IMPROVEMENT, describeReference } from '../report/standing.js';
import type { Interval } from '../types/generated/metrics.js';
import type { MonitorJob } from './ports.js';
import type { CandidatePass, ExperimentPass, ReferenceJobPlan } from './state.js';

/** The experiment schema's default of comment_interval_minutes. */
export const DEFAULT_COMMENT_INTERVAL_MINUTES = 15;

export const iso = (ts: number | null | undefined) =>
  ts ? `${new Date(ts * 1000).toISOString().slice(0, 19)}Z` : null;

/** The run of a candidate as the judge reads it (observe's; a job submitted since has no series). */
function runOf(e: ExperimentPass, p: CandidatePass): RunToJudge {
  const { S, evalTs, scrape, wallMinutes, expectedRollouts } = e.clock;
  const run = p.observed?.run;
  return {
    ...(run ?? {
      series: {},
      clock: { nowTs: evalTs, timeScale: S, stepSeconds: scrape, wallMinutes, expectedRollouts },
      topology: p.c.topology,
    }),
    runName: p.c.runName,
    job: p.job ?? null,
  };
}

/** State, failure, comparison and decision of one candidate (the judge's): its view (null: not asked to run). */
export function judgeCandidate(e: ExperimentPass, p: CandidatePass): CandidateView | null {
  const run = runOf(e, p);
  const observed = {
    analysis: p.observed?.analysis,
    ended: p.observed?.ended ?? false,
    atTs: run.clock.nowTs,
  };
  const j = decideRunOf(run, observed, {
    standing: e.exp,
    candidate: p.c,
    reference: e.reference,
    leader: e.leader,
    previous: p.observed?.previous ?? null,
  });
  return j.state === null ? null : viewOf(e, p, { ...j, state: j.state });
}

/** GPU-minutes of the candidate's job so far (src/judge/judge.ts gpuInput). */
export function candidateGpu(e: ExperimentPass, p: CandidatePass, stopped: boolean): GpuMinutesInput | null {
  const observed = {
    analysis: p.observed?.analysis,
    ended: p.observed?.ended ?? false,
    atTs: e.clock.evalTs,
  };
  return gpuInput(runOf(e, p), observed, e.exp, stopped);
}

type Judged = Judgement & { state: CandidateState };

function viewOf(e: ExperimentPass, p: CandidatePass, j: Judged): CandidateView {
  const { exp, telemetry, reference } = e;
  const { c, job } = p;
  const { analysis, ended = false } = p.observed ?? {};
  const x = exp.experiment;
  // drawn at the figure every surface shows it at (src/record/figure.ts), else what decisions read
  const seconds = (r: { name: string; value: Interval; figure?: Interval } | null | undefined) =>
    r ? { name: r.name, secondsPerRollout: (r.figure ?? r.value).value } : null;
  // a baseline running in this pass is drawn at its projection (it may not be stable yet)
  const projected = reference?.live ? reference.verdict.projected_full_run : null;
  const liveBaseline = reference && projected ? { name: reference.name, value: projected } : null;
  return {
    experimentId: e.id,
    candidate: c.candidate,
    runName: c.runName,
    state: j.state,
    jobId: job?.jobId ?? null,
    slurmState: job?.state ?? null,
    timeline: timelineOf(e, p, j.observation.verdict.warmup_end_minutes),
    observation: j.observation,
    comparisons: j.comparisons,
    chart: analysis?.chart,
    opportunities: analysis?.opportunities,
    queries: telemetry?.queries.map((q) => ({ quantity: q.quantity, query: q.query, source: q.source })),
    grafanaUrl: exp.grafanaUrl ?? null,
    timeRange: analysis?.startTs
      ? { fromMs: analysis.startTs * 1000, toMs: job?.endTs && ended ? job.endTs * 1000 : null }
      : null,
    notes: notesOf(telemetry?.errors, p.conflicts),
    minImprovement: x.min_improvement ?? DEFAULT_MIN_IMPROVEMENT,
    stopWhenDecided: x.stop_when_decided !== false,
    baseline: seconds(exp.baseline) ?? seconds(liveBaseline),
    best: seconds(exp.best),
    finalJobState: ended ? (job?.state ?? null) : null,
    stoppedBy: j.stoppedBy,
    commentIntervalMinutes: x.comment_interval_minutes ?? DEFAULT_COMMENT_INTERVAL_MINUTES,
    recordChartUrl: exp.recordChartUrl ?? null,
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
export function referenceJobLine(e: ExperimentPass, plan: ReferenceJobPlan): ReferenceJobLine | null {
  const ref = e.reference;
  if (!ref || ref.role === 'run' || ref.role === 'leading candidate') return null;
  const name = describeReference(`${ref.role} ${ref.name}`);
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
