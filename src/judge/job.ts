// THE job model of a run: a Slurm job (src/slurm, live from the controller, ended from accounting)
// as the judge, the monitor, `topo status` and the demo read it (times in unix seconds), with one
// failure rule. The one place a Slurm job becomes a run's job.
import { claimed, isOwnedRun } from '../lifecycle/jobs.js';
import { classifyFailure } from '../slurm/classify.js';
import { slurmTimeToUnix } from '../slurm/parse.js';
import { isLive, isWaiting, type JobStatus, type SlurmClient, type SlurmJob } from '../slurm/types.js';
import { isRunOf, requestIdOfComment } from '../topology/run-name.js';
import type { Failure } from '../types/generated/metrics.js';

/** A Slurm job as a run's judge needs it (times in unix seconds; Slurm prints them in UTC). */
export interface RunJob {
  jobId: string;
  name: string;
  /** Slurm's state as it printed it (PENDING, RUNNING, CANCELLED, …): for people to read, never compared. */
  state: string;
  /** What the state means (src/slurm statusOf): what every path compares. */
  status: JobStatus;
  /**
   * The Request its comment names (written at submit: src/topology/run-name.ts requestComment); null
   * when it names none. Whose run it is, src/lifecycle/jobs.ts isOwnedRun decides.
   */
  requestId?: string | null;
  submitTs?: number | null;
  /** When its allocation started; null while it waits (a start Slurm prints then is a forecast). */
  startTs?: number | null;
  /** When it ended; null while it lives (an end Slurm prints then is start + time limit, a forecast). */
  endTs?: number | null;
  /**
   * What its allocations held so far (Slurm's elapsed × GPUs over every allocation, a requeued
   * job's earlier ones included where accounting keeps them): what a budget charges. Absent: none.
   */
  held?: { seconds: number; gpuMinutes: number | null };
  /** Why it failed (src/slurm/classify.ts), when it ended in failure. */
  failure?: Failure | null;
}

/** Lines of a failed job's log read to classify its failure. */
export const FAILURE_LOG_LINES = 200;

/**
 * The one failure rule: the job ended and Slurm's own classification calls its end a failure
 * (src/slurm/classify.ts: anything but COMPLETED with exit code 0 and no signal).
 */
export function endedInFailure(job: SlurmJob): boolean {
  return !isLive(job.status) && classifyFailure(job, []) !== null;
}

/** Why the job failed, its log tail read only when it ended in failure; null when it did not. */
export async function jobFailure(slurm: Pick<SlurmClient, 'tail'>, job: SlurmJob): Promise<Failure | null> {
  if (!endedInFailure(job)) return null;
  const log = await slurm.tail(job, FAILURE_LOG_LINES).catch(() => [] as string[]);
  return classifyFailure(job, log);
}

/** A Slurm job as a run's job, with the failure already classified (none: not read). */
export function runJob(job: SlurmJob, failure: Failure | null = null): RunJob {
  return {
    jobId: job.id,
    name: job.name,
    state: job.rawState ?? job.state,
    status: job.status,
    requestId: requestIdOfComment(job.comment),
    submitTs: slurmTimeToUnix(job.submitTime),
    startTs: isWaiting(job.status) ? null : slurmTimeToUnix(job.startTime),
    endTs: isLive(job.status) ? null : slurmTimeToUnix(job.endTime),
    ...(job.heldSeconds !== null ? { held: { seconds: job.heldSeconds, gpuMinutes: job.gpuMinutes } } : {}),
    failure,
  };
}

/** A Slurm job as a run's job; a failed one's log tail is read to classify its failure. */
export async function runJobOf(slurm: Pick<SlurmClient, 'tail'>, job: SlurmJob): Promise<RunJob> {
  return runJob(job, await jobFailure(slurm, job));
}

/**
 * Every job of the experiment (one prefix listing), its own only (names parsed exactly, never
 * those of an experiment whose id extends this one's; never a job whose comment names another
 * Request than its name: src/lifecycle/jobs.ts isOwnedRun), as run jobs. A reader with the bot's
 * state (the monitor) then keeps an unmarked job only when a Run record names it.
 */
export async function experimentJobs(
  slurm: Pick<SlurmClient, 'jobs' | 'tail'>,
  experimentId: string,
  knownExperimentIds: readonly string[] = [],
): Promise<RunJob[]> {
  const listed = await slurm.jobs(`topo-${experimentId}-`);
  const own = listed.filter(
    (j) => isRunOf(j.name, experimentId, knownExperimentIds) && isOwnedRun(claimed(j), experimentId),
  );
  return Promise.all(own.map((j) => runJobOf(slurm, j)));
}
