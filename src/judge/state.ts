// The candidate state machine of the architecture doc, computed (never stored), and who stopped a
// cancelled run. Pure.
import type { RunAnalysis } from '../analysis/observe.js';
import { isLive, isWaiting } from '../slurm/types.js';
import type { RunJob } from './job.js';

export const CANDIDATE_STATES = [
  'queued',
  'submitted',
  'starting',
  'warming',
  'stabilising',
  'stable',
  'finished',
  'stopped',
  'failed',
] as const;
export type CandidateState = (typeof CANDIDATE_STATES)[number];

/**
 * Who ended a cancelled job: a person's control, the decision, the reference's stable verdict, or
 * (a round's reference job) no open decision needing it any more.
 */
export type StoppedBy = 'user' | 'decision' | 'stable' | 'no-longer-needed' | null;

export const isStable = (v: string | undefined) => v === 'stable' || v === 'cyclic';

/**
 * The state of a run: from its job (none: queued while requested), or, for a run read from
 * Prometheus alone (`job` undefined and `ended` known), as a job live while its samples come and
 * ended once they stopped. One rule for a live run whatever read it: a live `unhealthy` verdict is
 * `stabilising` (its job, not its verdict, says when it failed).
 */
export function candidateState(
  job: RunJob | undefined,
  requested: boolean,
  analysis: RunAnalysis | undefined,
  stoppedByUs: boolean,
  jobless?: { ended: boolean },
): CandidateState | null {
  if (jobless && analysis) return joblessState(analysis, jobless.ended);
  if (!job) return requested ? 'queued' : null;
  const v = analysis?.observation.verdict.state;
  const stable = isStable(v);
  if (isWaiting(job.status)) return 'submitted';
  if (isLive(job.status)) return liveState(analysis);
  if (job.status === 'completed') return analysis ? 'finished' : 'failed';
  // cancelled before it ran (held by an interrupted submit, or waiting for nodes): nothing failed
  if (job.status === 'cancelled' && (stable || stoppedByUs || neverRan(job))) return 'stopped';
  if (job.status === 'timeout' && stable) return 'finished';
  return 'failed';
}

/**
 * A job that ended and never ran (cancelled while held or waiting for nodes): no run to judge or
 * record (`topo watch` leaves it to the next submit of its candidate).
 */
export function endedWithoutRunning(job: RunJob): boolean {
  return !isLive(job.status) && neverRan(job);
}

/** A job that ended without running: no start, or its start is its end (Slurm's mark of a job never given nodes). */
function neverRan(job: RunJob): boolean {
  return job.startTs == null || (job.endTs != null && job.startTs >= job.endTs);
}

function liveState(analysis: RunAnalysis | undefined): CandidateState {
  const v = analysis?.observation.verdict.state;
  if (!analysis || v === 'no-data') return 'starting';
  if (v === 'warming') return 'warming';
  if (isStable(v)) return 'stable';
  return 'stabilising';
}

/** A run without a job: live while its samples come; once they stopped, finished (failed when unhealthy). */
function joblessState(analysis: RunAnalysis, ended: boolean): CandidateState {
  if (!ended) return liveState(analysis);
  return analysis.observation.verdict.state === 'unhealthy' ? 'failed' : 'finished';
}
