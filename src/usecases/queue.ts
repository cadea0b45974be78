// The max_parallel queue, derived (never stored): from the submit requests in first-come order and the
// experiment's jobs in Slurm, which requests to submit now and each waiting request's place.
import { claimed, compareJobIds, isOwnedRun, jobForRun, type NamedJob } from '../lifecycle/jobs.js';
import { isLive, type SlurmJob } from '../slurm/types.js';
import { isRunOf } from '../topology/run-name.js';
import { EXPERIMENT_DEFAULTS } from '../topology/settings.js';

/**
 * A duplicate retired by submitCandidate is renamed `retired-<name>` before it is cancelled: out of the
 * experiment's `topo-<experiment>-` prefix, so no listing of the experiment sees it again.
 */
export const RETIRED_PREFIX = 'retired-';
export function retiredName(jobName: string): string {
  return `${RETIRED_PREFIX}${jobName}`;
}
export function isRetiredDuplicate(name: string): boolean {
  return name.startsWith(RETIRED_PREFIX);
}

/** AlpaSim's seed runs at most three candidates of an experiment at once (experiment.schema.json's default). */
export const DEFAULT_MAX_PARALLEL = EXPERIMENT_DEFAULTS.maxParallel;

export interface QueueRequest {
  /** The candidate's Slurm job name (`topo-<experiment>-<candidate>-<hash8>`). */
  jobName: string;
}

export interface QueuePlan<R extends QueueRequest, J extends NamedJob = SlurmJob> {
  /** Requests that already have a job (live or finished): nothing to submit. */
  existing: Array<{ request: R; job: J }>;
  /** Requests to submit now, in order. */
  submitNow: R[];
  /** Requests that wait for a slot, with their 1-based place. */
  queued: Array<{ request: R; position: number }>;
  /** Live jobs of the experiment (each holds a slot). */
  live: number;
  slots: number;
}

/**
 * The job that stands for a job name: the oldest live one (duplicates are younger), else the newest
 * finished one. Null when Slurm has none.
 */
export function representativeJob<J extends NamedJob>(jobs: readonly J[], jobName: string): J | null {
  return jobForRun(jobs, jobName, (j) => j);
}

/** Numeric job id order (Slurm ids grow with submission). */
export function byJobId(a: SlurmJob, b: SlurmJob): number {
  return compareJobIds(a.id, b.id);
}

/**
 * The experiment's own jobs among a prefix listing: names parsed exactly (src/topology/run-name.ts),
 * never those of an experiment whose id extends this one's, and only jobs Slurm's record says are
 * the tool's (src/lifecycle/jobs.ts isOwnedRun: `recorded`, the job ids the caller's state records,
 * decides for a job whose comment names no Request).
 */
export function ownJobs<J extends { id: string; name: string; comment: string | null }>(
  jobs: readonly J[],
  experimentId: string,
  knownExperimentIds: readonly string[] = [],
  recorded?: ReadonlySet<string>,
): J[] {
  return jobs.filter(
    (j) =>
      isRunOf(j.name, experimentId, knownExperimentIds) && isOwnedRun(claimed(j), experimentId, recorded),
  );
}

/**
 * `requests` in first-come order; `jobs` = every job of the experiment (SlurmClient.jobs(prefix)).
 * A request with a job (any state) is existing; the others take the free slots in order.
 */
export function planQueue<R extends QueueRequest, J extends NamedJob = SlurmJob>(
  requests: readonly R[],
  jobs: readonly J[],
  maxParallel: number = DEFAULT_MAX_PARALLEL,
): QueuePlan<R, J> {
  if (!Number.isInteger(maxParallel) || maxParallel < 1)
    throw new Error(`max_parallel ${maxParallel} is not a whole number >= 1`);
  const liveNames = new Set(
    jobs.filter((j) => isLive(j.status) && !isRetiredDuplicate(j.name)).map((j) => j.name),
  );
  const live = liveNames.size;
  let free = Math.max(0, maxParallel - live);
  const plan: QueuePlan<R, J> = { existing: [], submitNow: [], queued: [], live, slots: maxParallel };
  const seen = new Set<string>();
  for (const request of requests) {
    if (seen.has(request.jobName)) continue; // the same candidate asked twice: first place counts
    seen.add(request.jobName);
    const job = representativeJob(jobs, request.jobName);
    if (job) plan.existing.push({ request, job });
    else if (free > 0) {
      plan.submitNow.push(request);
      free--;
    } else plan.queued.push({ request, position: plan.queued.length + 1 });
  }
  return plan;
}
