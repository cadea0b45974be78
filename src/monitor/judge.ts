// One candidate judged: the candidate state machine of the architecture doc (computed, never
// stored), its failure explained, its comparisons and Decision (./reference.ts), and the view every
// surface renders (src/report/pr-comment.ts CandidateView). Pure.
import type { GpuMinutesInput } from '../analysis/decision.js';
import { explainFailure } from '../analysis/failure.js';
import type { RunAnalysis } from '../analysis/observe.js';
import type { CandidateState, CandidateView, TimelineEntry } from '../report/pr-comment.js';
import { DEFAULT_MIN_IMPROVEMENT } from '../report/standing.js';
import { isLive } from '../slurm/types.js';
import { gpuMap } from '../topology/capacity.js';
import type { CandidateObservation, Comparison, Failure, Interval } from '../types/generated/metrics.js';
import type { MonitorCandidate, MonitorJob } from './ports.js';
import { compareCandidate, isDecided } from './reference.js';
import type { CandidatePass, ExperimentPass } from './state.js';

/** The experiment schema's default of comment_interval_minutes. */
export const DEFAULT_COMMENT_INTERVAL_MINUTES = 15;

const isStable = (v: string | undefined) => v === 'stable' || v === 'cyclic';
export const iso = (ts: number | null | undefined) =>
  ts ? `${new Date(ts * 1000).toISOString().slice(0, 19)}Z` : null;

/** The candidate state machine of the architecture doc, computed (never stored). */
export function candidateState(
  job: MonitorJob | undefined,
  requested: boolean,
  analysis: RunAnalysis | undefined,
  stoppedByUs: boolean,
): CandidateState | null {
  if (!job) return requested ? 'queued' : null;
  const v = analysis?.observation.verdict.state;
  const stable = isStable(v);
  if (job.state === 'PENDING' || job.state === 'REQUEUED' || job.state === 'CONFIGURING') return 'submitted';
  if (isLive(job.state)) {
    if (!analysis || v === 'no-data') return 'starting';
    if (v === 'warming') return 'warming';
    if (stable) return 'stable';
    return 'stabilising';
  }
  if (job.state === 'COMPLETED')
    return stable || analysis?.observation.verdict.value ? 'finished' : analysis ? 'finished' : 'failed';
  if (job.state === 'CANCELLED' && (stable || stoppedByUs)) return 'stopped';
  if (job.state === 'TIMEOUT' && stable) return 'finished';
  return 'failed';
}

/** State, failure, comparison and decision of one candidate: its view (null: not asked to run). */
export function judgeCandidate(e: ExperimentPass, p: CandidatePass): CandidateView | null {
  const { c, job } = p;
  const analysis = p.observed?.analysis;
  const stoppedBy = stoppedByOf(e, p);
  const stoppedByUs =
    stoppedBy !== null || (job?.state === 'CANCELLED' && e.exp.experiment.stop_when_stable === true);
  let state = candidateState(job, c.requested, analysis, stoppedByUs);
  if (state === null) return null;
  const observation: CandidateObservation = analysis?.observation ?? waiting(c, job);
  if (observation.failure?.kind === 'no-telemetry') state = 'failed';
  if (state === 'failed') observation.failure = failureOf(c, job, observation);
  const previous = p.observed?.previous;
  const comparisons = compareCandidate(e.exp, c, observation, {
    reference: e.reference,
    leader: e.leader,
    previous: previous?.run_name === c.runName ? (previous.decision ?? null) : null,
    ended: p.observed?.ended,
    gpu: gpuInput(e, p, stoppedBy === 'decision'),
  });
  return viewOf(e, p, { state, observation, comparisons, stoppedBy });
}

/** The observation of a candidate with no run to analyse yet. */
function waiting(c: MonitorCandidate, job: MonitorJob | undefined): CandidateObservation {
  return {
    run_name: c.runName,
    verdict: {
      state: 'no-data',
      evidence: [job ? `Slurm job ${job.jobId} is ${job.state}` : 'waiting for a free slot'],
    },
    stable_metrics: {},
  };
}

function failureOf(
  c: MonitorCandidate,
  job: MonitorJob | undefined,
  observation: CandidateObservation,
): Failure {
  const failure: Failure = job?.failure ??
    observation.failure ?? {
      kind: job?.state === 'CANCELLED' ? 'cancelled' : job?.state === 'TIMEOUT' ? 'time-limit' : 'crash',
      message: `Slurm job ${job?.jobId} ended ${job?.state}`,
      slurm_state: job?.state,
    };
  return explainFailure(failure, {
    topology: c.topology,
    gpus: observation.stable_metrics.resource_usage?.gpu_by_index,
  });
}

interface Judgement {
  state: CandidateState;
  observation: CandidateObservation;
  comparisons: Comparison[];
  stoppedBy: CandidateView['stoppedBy'];
}

function viewOf(e: ExperimentPass, p: CandidatePass, j: Judgement): CandidateView {
  const { exp, telemetry, reference } = e;
  const { c, job } = p;
  const { analysis, ended = false } = p.observed ?? {};
  const x = exp.experiment;
  const seconds = (r: { name: string; value: Interval } | null | undefined) =>
    r ? { name: r.name, secondsPerRollout: r.value.value } : null;
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
    notes: telemetry?.errors.map((err) => `Prometheus error for ${err.quantity}: ${err.message}`),
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
 * Who ended a CANCELLED job. The monitor keeps no state: a job cancelled on the decision is known
 * by the decision its last comment carries (the comment of the pass that cancelled it).
 */
function stoppedByOf(e: ExperimentPass, { job, c, observed }: CandidatePass): CandidateView['stoppedBy'] {
  if (job?.state !== 'CANCELLED') return null;
  if (c.outcome?.kind === 'stopped') return 'user';
  const previous = observed?.previous?.run_name === c.runName ? observed.previous : undefined;
  const x = e.exp.experiment;
  if (x.stop_when_decided !== false && isDecided(previous?.decision)) return 'decision';
  const verdict = observed?.analysis?.observation.verdict.state ?? previous?.verdict.state;
  // only a reference is stopped as stable (./decide.ts stopReason)
  if (x.stop_when_stable && isStable(verdict) && previous?.decision?.state === 'reference') return 'stable';
  return null;
}

/**
 * GPU-minutes of the job (src/analysis/decision.ts gpuMinutes): the GPUs it holds (the
 * experiment's gpus_per_node, else the cluster's, else the topology's GPUs, else 8) over its
 * minutes so far; the run would have ended at its wall time, or sooner once its rollouts are done
 * (the projection's horizon).
 */
export function gpuInput(
  e: ExperimentPass,
  { job, c, observed }: CandidatePass,
  stopped: boolean,
): GpuMinutesInput | null {
  if (!job?.startTs) return null;
  const { evalTs, S, wallMinutes } = e.clock;
  const analysis = observed?.analysis;
  const until = observed?.ended && job.endTs ? Math.min(evalTs, job.endTs) : evalTs;
  const minutesRunning = ((until - job.startTs) * S) / 60;
  const offset = analysis?.startTs != null ? ((analysis.startTs - job.startTs) * S) / 60 : null;
  const end = analysis?.observation.verdict.run_end_minutes;
  const runEndMinutes = offset !== null && end != null ? Math.min(wallMinutes, offset + end) : wallMinutes;
  const gpus =
    e.exp.experiment.fixed_inputs.slurm?.gpus_per_node ??
    e.exp.gpusPerNode ??
    (c.topology ? gpuMap(c.topology).size : 0);
  return { gpus: gpus > 0 ? gpus : 8, minutesRunning, runEndMinutes, stopped };
}
